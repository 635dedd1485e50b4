"""Many :class:`FirstLayerGDRegressor` fits of one shape as one stacked GD.

A sweep over seeds (:func:`~sklearn_pt.model_selection.sample_ratio_curve`)
fits the same estimator on ``K`` data sets of the same shape. At the sizes of
the feature-learning studies one full-batch step costs a fraction of a
millisecond, most of it per-call overhead of autograd and the optimiser; here
the ``K`` first layers live in one ``(K, width, d)`` tensor and every step is
one batched forward and backward pass, the same arithmetic as ``K`` separate
fits (equal to rounding, tested).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .._base import fit_keeping_states
from .._training import DivergenceCheck, LossHistory, StackedStepper, fit_loop
from ..exceptions import DivergenceError
from ..nn._first_layer import StackedFirstLayerNetwork
from ._first_layer import FirstLayerGDRegressor

__all__ = ["PER_FIT", "fit_stacked", "stacked_fit_unsupported_reason"]

PER_FIT = ("random_state",)
"""Parameters in which the stacked estimators may differ."""


def stacked_fit_unsupported_reason(estimator) -> str | None:
    """Why ``estimator``'s fits cannot be stacked by :func:`fit_stacked`, or
    None when they can."""
    if not isinstance(estimator, FirstLayerGDRegressor):
        return f"{type(estimator).__name__} is not a FirstLayerGDRegressor"
    if not (isinstance(estimator.init, str) and estimator.init == "random"):
        return "init is not 'random'"
    if estimator.hessian_every is not None:
        return "hessian_every records Hessian spectra during the fit"
    if estimator.verbose:
        return "verbose prints every iteration of each fit"
    if not isinstance(estimator.activation, str):
        return "a callable activation"
    return None


def fit_stacked(
    estimators: Sequence[FirstLayerGDRegressor],
    datasets: Sequence[tuple[np.ndarray, np.ndarray]],
) -> list[FirstLayerGDRegressor | DivergenceError]:
    """Fit ``estimators[k]`` on ``datasets[k]`` for every ``k``, as one GD.

    Each estimator ends fitted as its own ``fit`` would leave it (the same
    initial weights from its ``random_state``, the same full-batch steps and
    divergence checks, ``first_layer_weights_``, ``coefs_``, ``module_``,
    ``loss_curve_``, ``n_iter_``, and ``history_`` with the iterations and
    training losses), to rounding.

    Parameters
    ----------
    estimators : sequence of FirstLayerGDRegressor
        Equal in every parameter but ``random_state``, each one
        accepted by :func:`stacked_fit_unsupported_reason`.
    datasets : sequence of (X, y)
        One training set per estimator, all of the same shape.

    Returns
    -------
    list
        Per estimator: the fitted estimator, or the
        :class:`~sklearn_pt.exceptions.DivergenceError` its own fit would
        have raised (that estimator is then left as it was; the others train
        on). If the fit raises (e.g. on bad data), every estimator is left
        as it was.
    """
    template = estimators[0]
    shared = {k: v for k, v in template.get_params().items() if k not in PER_FIT}
    for estimator in estimators:
        reason = stacked_fit_unsupported_reason(estimator)
        if reason is not None:
            raise ValueError(f"Cannot stack these fits: {reason}.")
        params = estimator.get_params()
        if any(params[k] != v for k, v in shared.items()):
            raise ValueError(
                "Cannot stack these fits: the estimators differ in a parameter "
                f"other than {', '.join(PER_FIT)}."
            )
    if len(datasets) != len(estimators):
        raise ValueError("Pass one (X, y) per estimator.")

    return fit_keeping_states(list(estimators), lambda models: _fit(models, datasets))


def _fit(estimators, datasets) -> list:
    plans = [
        estimator.plan_fit(X, y)
        for estimator, (X, y) in zip(estimators, datasets, strict=True)
    ]
    if len({plan.X.shape for plan in plans}) != 1:
        raise ValueError("Cannot stack these fits: the data sets differ in shape.")
    first = plans[0].module
    module = StackedFirstLayerNetwork(
        torch.stack([plan.module.weight.detach() for plan in plans]),
        first.second_layer,
        first.activation,
    )
    stepper = StackedStepper(
        module,
        torch.stack([plan.X for plan in plans]),
        torch.stack([plan.y for plan in plans]),
        generators=[None] * len(plans),  # full batch: no row order
        per_model_data=True,
        **plans[0].stepper_params,
    )
    history = LossHistory()
    outcomes = fit_loop(
        stepper, max_iter=plans[0].max_iter, callbacks=[DivergenceCheck(), history]
    )
    fitted = []
    for k, (plan, outcome) in enumerate(zip(plans, outcomes, strict=True)):
        if isinstance(outcome, DivergenceError):
            fitted.append(outcome)
            continue
        with torch.no_grad():
            plan.module.weight.copy_(module.weight[k])
        for callback in plan.callbacks:
            if isinstance(callback, LossHistory):
                callback.adopt(history, k)
        fitted.append(plan.complete(outcome))
    return fitted
