"""Many two-step fits of one shape as one stacked computation.

A grid over step-size exponents (and constants) and seeds fits
:class:`TwoStepFeatureLearner` (or
:class:`~sklearn_pt.feature_extraction.TwoStepFeatures`) clones on the same
data. Each fit's gradient steps are two large products with the data; here
the ``K`` first layers live in one ``(K, N, d)`` tensor and each step is one
batched product for all of them, each model with its own batches (its own
readout split and fresh halves) and its own step size: the same arithmetic
as ``K`` separate fits, equal to rounding (tested). What follows the steps
(the spectrum, the ridge readout) runs per fit, as in ``fit``. On a CPU the
products dominate either way; the gain is on a GPU, where one stacked
product keeps the device busy.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .._base import fit_keeping_states
from .._training import (
    Callback,
    DivergenceCheck,
    PrintLog,
    StackedStepper,
    fit_loop,
)
from ..exceptions import DivergenceError
from ..nn._two_layer import StackedTwoLayerNetwork
from ._two_step import _check_step_params, _StepRecorder, check_step

__all__ = [
    "PER_FIT",
    "STACKED_LOSSES",
    "fit_two_steps_stacked",
    "stacked_is_faster",
]

PER_FIT = ("step_size_exponents", "step_size_constants", "random_state")
"""Parameters in which the stacked estimators may differ."""

STACKED_LOSSES = {
    "correlation": lambda outputs, y: -(outputs * y).mean(1),
    "squared": lambda outputs, y: 0.5 * ((outputs - y) ** 2).mean(1),
}
"""The two-step losses, one value per stacked network: ``(K, n) -> (K,)``."""


CPU_STACKED_MAX_WEIGHTS = 200 * 200
"""On a CPU, the largest first layer (``N * d`` weights) whose fits are
stacked (see :func:`stacked_is_faster`)."""


def stacked_is_faster(device, width: int, n_features: int) -> bool:
    """Whether a grid of two-step fits should take its gradient steps stacked
    (else :func:`fit_two_steps_stacked` fits the cells one by one).

    On a CPU the stacked steps win while each first layer is small (the
    per-fit overhead dominates) and lose a little once the products with the
    data dominate: one thread, 4 x 4 grid of ``TwoStepFeatureLearner`` at
    ``N = n/2 = d``, float32, medians of 3-5 interleaved runs (issue 32,
    2026-12, a shared machine at load 4-5): stacked over sequential 1.31x at
    N = 50, 1.21x at 100, 1.03x at 200, 0.95x at 400, 1.01x at 600, 0.96x at
    800. So a CPU stacks up to ``N * d = 200 * 200`` weights. On a GPU the
    steps are always stacked: one batched product keeps the device busy (not
    yet measured: no GPU lent).

    Parameters
    ----------
    device : str or torch.device
        Where the fits run.
    width : int
        ``N``, the hidden neurons.
    n_features : int
        ``d``.

    Returns
    -------
    bool

    Examples
    --------
    >>> from sklearn_pt.neural_network._two_step_stacked import stacked_is_faster
    >>> stacked_is_faster("cpu", 100, 100), stacked_is_faster("cpu", 400, 400)
    (True, False)
    >>> stacked_is_faster("cuda", 400, 400)
    True
    """
    if torch.device(device).type != "cpu":
        return True
    return width * n_features <= CPU_STACKED_MAX_WEIGHTS


def _run(plan):
    """``plan.run()``, or the DivergenceError that ended it."""
    try:
        return plan.run()
    except DivergenceError as error:
        return error


class _StackedStepRecorder(Callback):
    """After each step, model by model: the overflow check of
    :class:`_StepRecorder` (a failing model stops with its error) and a copy
    of its ``W``."""

    def __init__(self, module, activation, step_sizes):
        self.module, self.activation = module, activation
        self.step_sizes = step_sizes
        self.weights = [[] for _ in step_sizes]

    def on_iteration_end(self, loop, k, loss):
        current = self.module.weight.detach()[k]
        try:
            check_step(
                current,
                loop.stepper.schedule[loop.iteration - 1][0][k],
                self.activation,
                where=f"Gradient step {loop.iteration} of {loop.max_iter}",
                step_sizes=self.step_sizes[k],
            )
        except DivergenceError as error:
            return error
        self.weights[k].append(current.cpu().clone())
        return None


def fit_two_steps_stacked(estimators: Sequence, X, y) -> list:
    """Fit every estimator on ``(X, y)``, the gradient steps of all at once.

    Where stacking is not expected to be faster (:func:`stacked_is_faster`:
    large fits on a CPU) the cells are fitted one by one instead. Each
    estimator ends fitted as its own ``fit`` would leave it (the same
    initialisation, readout split and fresh halves from its
    ``random_state``, the same steps, ``first_layer_weights_``,
    ``spectrum_``, the readout), to rounding.

    Parameters
    ----------
    estimators : sequence of TwoStepFeatureLearner or TwoStepFeatures
        Of one class, equal in every parameter but ``step_size_exponents``,
        ``step_size_constants`` and ``random_state``.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)

    Returns
    -------
    list
        Per estimator: the fitted estimator, or the
        :class:`~sklearn_pt.exceptions.DivergenceError` its own fit would have
        raised (that estimator is then left as it was; the others train on).

    References
    ----------
    Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
    Networks: Two vs. One Step of Gradient Descent".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.datasets import make_single_index
    >>> from sklearn_pt.neural_network import TwoStepFeatureLearner
    >>> from sklearn_pt.neural_network._two_step_stacked import (
    ...     fit_two_steps_stacked)
    >>> X, y = make_single_index(200, 20, random_state=0)
    >>> grid = [TwoStepFeatureLearner(hidden_layer_sizes=30, random_state=seed,
    ...                               step_size_exponents=(a, a), dtype="float64")
    ...         for a in (0.0, 0.3) for seed in (0, 1)]
    >>> fitted = fit_two_steps_stacked(grid, X, y)
    >>> alone = TwoStepFeatureLearner(hidden_layer_sizes=30, random_state=1,
    ...     step_size_exponents=(0.3, 0.3), dtype="float64").fit(X, y)
    >>> bool(np.allclose(fitted[3].predict(X), alone.predict(X), rtol=1e-9))
    True
    """
    estimators = list(estimators)
    _check_stackable(estimators)
    return fit_keeping_states(estimators, lambda cells: _fit(cells, X, y))


def _check_stackable(estimators) -> None:
    if not estimators:
        raise ValueError("fit_two_steps_stacked needs at least one estimator.")
    template = estimators[0]
    shared = {k: v for k, v in template.get_params().items() if k not in PER_FIT}
    for estimator in estimators:
        params = estimator.get_params()
        if type(estimator) is not type(template) or any(
            params[k] != v for k, v in shared.items()
        ):
            raise ValueError(
                "Cannot stack these fits: the estimators differ in their class or "
                f"in a parameter other than {', '.join(PER_FIT)}."
            )


def _fit(estimators, X, y) -> list:
    plans = [estimator.plan_fit(X, y) for estimator in estimators]
    template = estimators[0]
    n_models, n_steps = len(plans), template.n_steps
    weight = plans[0].module.feature_map.weight
    stacked = n_steps > 0 and stacked_is_faster(weight.device, *weight.shape)
    outcomes = None if stacked else [_run(plan) for plan in plans]
    if outcomes is None:
        schedules = [plan.stepper_params["schedule"] for plan in plans]
        schedule = [
            (
                torch.stack([s[i][0] for s in schedules]),
                torch.stack([s[i][1] for s in schedules]),
                [s[i][2] for s in schedules],
            )
            for i in range(n_steps)
        ]
        feature_maps = [plan.module.feature_map for plan in plans]
        activation = feature_maps[0].activation
        module = StackedTwoLayerNetwork(
            torch.stack([f.weight.detach() for f in feature_maps]),
            torch.stack([plan.module.readout for plan in plans]),
            activation,
            STACKED_LOSSES[template.loss],
        )
        stepper = StackedStepper(
            module,
            *schedule[0][:2],
            solver="gd",
            generators=[None] * n_models,  # full batches: no row order
            per_model_data=True,
            schedule=schedule,
        )
        recorder = _StackedStepRecorder(
            module,
            activation,
            [_check_step_params(estimator)[1] for estimator in estimators],
        )
        check = DivergenceCheck("step_size_constants", relative=False, final=False)
        log = [PrintLog()] if template.verbose else []
        outcomes = fit_loop(
            stepper, max_iter=n_steps, callbacks=[check, *log, recorder]
        )
        for k, plan in enumerate(plans):
            with torch.no_grad():
                plan.module.feature_map.weight.copy_(module.weight[k])
            steps = next(c for c in plan.callbacks if isinstance(c, _StepRecorder))
            steps.weights = recorder.weights[k]
    fitted = []
    for plan, outcome in zip(plans, outcomes, strict=True):
        if not isinstance(outcome, DivergenceError):
            try:
                outcome = plan.complete(outcome)
            except DivergenceError as error:  # the readout split overflowed
                outcome = error
        fitted.append(outcome)
    return fitted
