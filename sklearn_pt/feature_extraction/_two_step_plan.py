"""The gradient steps of :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`
(and so of :class:`~sklearn_pt.neural_network.TwoStepFeatureLearner`, which
holds one as ``features_``): the parameter checks, the initialisation, the
step recorders, :func:`plan_two_steps` (the fit plan) and its stacking."""

from __future__ import annotations

import math
from numbers import Integral
from typing import NamedTuple

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted

from .._compat import (
    Interval,
    InvalidParameterError,
    StrOptions,
)
from .._torch_bridge import (
    TORCH_PARAMETER_CONSTRAINTS,
    TRAINING_PARAMETER_CONSTRAINTS,
    as_tensor,
)
from .._training import (
    Callback,
    DivergenceCheck,
    FitPlan,
    PrintLog,
    StackedFit,
    TrainingResult,
    half_squared_error,
)
from ..exceptions import DivergenceError
from ..nn import StackedTwoLayerNetwork, TwoLayerNetwork, activation_function
from ..spectral import WeightSpectrum

__all__ = ["FinalSpectrum", "TwoSteps", "plan_two_steps", "stacked_is_faster"]


class TwoSteps(NamedTuple):
    """What the gradient steps fit, named as the fitted attributes the two
    estimators share (:meth:`set_on` sets them)."""

    first_layer_weights_: list
    """``[W_0, ..., W_n]``."""
    second_layer_weights_: np.ndarray
    step_sizes_: tuple
    device_: torch.device

    def set_on(self, estimator) -> None:
        """Set these as ``estimator``'s fitted attributes (and forget the
        spectrum of a previous fit, :class:`FinalSpectrum`)."""
        for name, value in self._asdict().items():
            setattr(estimator, name, value)
        vars(estimator).pop(FinalSpectrum.cache, None)


class FinalSpectrum:
    """The ``spectrum_`` attribute: a :class:`~sklearn_pt.spectral.WeightSpectrum`
    of the final first-layer weights (default parameters), computed on first
    access and kept until the next fit. A fit that only needs the features
    never decomposes its ``N x d`` weights."""

    cache = "_final_spectrum"
    """Where the computed spectrum is kept on the estimator."""

    def __get__(self, estimator, owner=None):
        if estimator is None:
            return self
        check_is_fitted(estimator, "first_layer_weights_")
        spectrum = vars(estimator).get(self.cache)
        if spectrum is None:
            spectrum = WeightSpectrum(device=str(estimator.device_))
            spectrum.fit(estimator.first_layer_weights_[-1])
            setattr(estimator, self.cache, spectrum)
        return spectrum


TWO_STEP_ACTIVATIONS = (
    "gelu",
    "relu",
    "tanh",
    "softplus",
    "hermite2",
    "hermite3",
    "sincos",
)


def resolve_activation(estimator):
    """The registry name of ``estimator.activation``, or the callable itself
    after a check that it maps a tensor elementwise."""
    name = estimator.activation
    if callable(name):
        return check_activation_callable(name, type(estimator).__name__)
    return name


def check_activation_callable(function, owner: str):
    """``function`` if it maps a float64 tensor that requires grad to a
    tensor of its shape that autograd can differentiate (the gradient steps
    need it), else a ValueError naming the parameter and the fix."""
    probe = torch.linspace(-3.0, 3.0, 7, dtype=torch.float64).reshape(7, 1)
    probe.requires_grad_(True)
    try:
        values = function(probe)
    except Exception as error:
        raise ValueError(
            f"The activation callable of {owner} failed on a (7, 1) float64 "
            f"tensor ({type(error).__name__}: {error}). Pass a function that "
            "maps a tensor to a tensor elementwise (torch operations, e.g. "
            "torch.sin), or a name such as 'gelu'."
        ) from error
    if (
        not torch.is_tensor(values)
        or values.shape != probe.shape
        or not values.requires_grad
    ):
        got = tuple(values.shape) if torch.is_tensor(values) else type(values).__name__
        raise ValueError(
            f"The activation callable of {owner} must return a tensor of its "
            f"input's shape that autograd can differentiate (it is applied "
            f"elementwise to W x, and the steps take its gradient); got {got} "
            "for a (7, 1) tensor. Use torch operations, e.g. torch.sin."
        )
    return function


def correlation_loss(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The correlation loss ``-mean(y * f(x))`` (it can be negative)."""
    return -(prediction * target).mean()


LOSSES = {"correlation": correlation_loss, "squared": half_squared_error}


def check_width(hidden_layer_sizes, *, symbol: str = "N", example: int = 512) -> int:
    """The width from an int or a one-element sequence; the error names the
    estimator's own symbol for it and a typical value."""
    sizes = np.atleast_1d(np.asarray(hidden_layer_sizes))
    if (
        sizes.ndim != 1
        or sizes.size != 1
        or not np.issubdtype(sizes.dtype, np.integer)
        or sizes[0] < 1
    ):
        raise ValueError(
            "hidden_layer_sizes must be a positive int or a one-element tuple "
            f"(this network has a single hidden layer of width {symbol}), e.g. "
            f"({example},); got {hidden_layer_sizes!r}."
        )
    return int(sizes[0])


def check_pair(value, name: str, *, positive: bool) -> tuple[float, float]:
    """Two finite floats (``positive``: both > 0)."""
    try:
        pair = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        pair = None
    if pair is None or pair.shape != (2,) or not np.all(np.isfinite(pair)):
        raise ValueError(
            f"{name} must be a pair of finite floats, one per step, e.g. "
            f"(0.25, 0.375); got {value!r}."
        )
    if positive and np.any(pair <= 0):
        raise ValueError(
            f"{name} must be positive (eta_i = c_i * N ** alpha_i); got {value!r}. "
            "Use n_steps to take fewer steps."
        )
    return float(pair[0]), float(pair[1])


def _sum_of_squares_is_finite(values) -> bool:
    if isinstance(values, torch.Tensor):
        return bool(torch.isfinite(values.square().sum()))
    return bool(np.isfinite(np.square(values).sum()))


def check_features_finite(*arrays, where: str, step_sizes: tuple[float, float]) -> None:
    """Raise a :class:`~sklearn_pt.exceptions.DivergenceError` if an array of
    weights, pre-activations or features overflows.

    An array overflows when it has a non-finite entry or when its sum of
    squares is not finite in its own precision; the second condition keeps
    the features' Gram matrix, and hence the ridge readout, computable.
    Huge but representable values are accepted: with the correlation loss a
    step moves ``W`` by ``eta`` times a matrix that does not depend on ``f``,
    so nothing bounds the weights but the step size.

    Parameters
    ----------
    *arrays : Tensor or ndarray
        The arrays to check.
    where : str
        Start of the message, e.g. ``"Gradient step 2 of 2"``.
    step_sizes : tuple of float
        ``(eta_1, eta_2)``, quoted in the message.

    Raises
    ------
    DivergenceError
        Naming ``step_size_constants`` and the other fixes.
    """
    if all(_sum_of_squares_is_finite(a) for a in arrays):
        return
    etas = ", ".join(f"{eta:g}" for eta in step_sizes)
    raise DivergenceError(
        f"{where} gave weights or features sigma(W x) too large for their "
        f"precision (non-finite values, or an overflowing sum of squares) with "
        f"step sizes eta=({etas}). Lower step_size_constants or "
        "step_size_exponents, standardise X, or use dtype='float64'. The "
        "estimator keeps the state it had before fit."
    )


def draw_initialisation(width, n_features, n_step_rows, *, generator, dtype):
    """Draw, in this order, ``W_0`` (rows ``N(0, I/d)``), ``a ~ N(0, I)`` and the
    order that splits the step rows into two fresh halves.

    The draws are float64, rounded to ``dtype``: a float32 fit starts where
    the float64 fit of the same ``random_state`` starts, so the two differ by
    precision only."""
    weight = torch.randn(width, n_features, generator=generator, dtype=torch.float64)
    weight /= math.sqrt(n_features)
    readout = torch.randn(width, generator=generator, dtype=torch.float64)
    order = torch.randperm(n_step_rows, generator=generator)
    return weight.to(dtype), readout.to(dtype), order


def standardise_targets(y: np.ndarray) -> np.ndarray:
    """Centre ``y`` and scale it to unit variance (a constant ``y`` is only
    centred)."""
    std = y.std()
    return (y - y.mean()) / (std if std > 0 else 1.0)


class _StepRecorder(Callback):
    """After each gradient step: check that the weights, pre-activations and
    features on the step's batch are finite, and keep a copy of ``W``."""

    def __init__(self, network, step_sizes):
        self.network, self.step_sizes = network, step_sizes
        self.weights: list[torch.Tensor] = []

    def on_iteration_end(self, loop, k, loss):
        feature_map = self.network.feature_map
        current = feature_map.weight.detach()
        check_step(
            current,
            loop.stepper.schedule[loop.iteration - 1][0],
            feature_map.activation,
            where=f"Gradient step {loop.iteration} of {loop.max_iter}",
            step_sizes=self.step_sizes,
        )
        self.weights.append(current.cpu().clone())


_LINEAR_GROWTH = frozenset({"gelu", "relu", "tanh", "softplus", "sincos"})
"""Activations with ``|sigma(z)| <= |z| + 2``."""


def _features_surely_finite(weight, X_b, activation) -> bool:
    """Whether the pre-activations ``X_b W^T`` and features ``sigma`` of a
    finite ``W`` have finite sums of squares, from a bound alone.

    By Cauchy--Schwarz their sum of squares is at most ``||X_b||_F^2
    ||W||_F^2``, and for an activation of :data:`_LINEAR_GROWTH` the
    features' at most twice that plus ``8 n N``: when this bound is a
    quarter of the precision's largest value, the check cannot fail and the
    product need not be formed. Otherwise (or for another activation) the
    caller computes it.
    """
    if not isinstance(activation, str) or activation not in _LINEAR_GROWTH:
        return False
    norms = [float(torch.linalg.vector_norm(a.double())) ** 2 for a in (X_b, weight)]
    bound = 2.0 * norms[0] * norms[1] + 8.0 * X_b.shape[0] * weight.shape[0]
    return math.isfinite(bound) and bound < torch.finfo(weight.dtype).max / 4


def check_step(weight, X_b, activation, *, where: str, step_sizes) -> None:
    """:func:`check_features_finite` on the weights after a gradient step,
    their pre-activations ``X_b W^T`` on the step's batch (computed once) and
    the features ``sigma`` of those (skipped where
    :func:`_features_surely_finite` shows they pass)."""
    check_features_finite(weight, where=where, step_sizes=step_sizes)
    if _features_surely_finite(weight, X_b, activation):
        return
    with torch.no_grad():
        pre_activations = X_b @ weight.T
        features = activation_function(activation)(pre_activations)
    check_features_finite(
        weight, pre_activations, features, where=where, step_sizes=step_sizes
    )


def collapse_fix(estimator) -> str:
    """What to change when the steps left features that carry nothing of X."""
    return (
        "Lower step_size_constants (now "
        f"{tuple(float(c) for c in estimator.step_size_constants)}) or "
        "step_size_exponents, or use another random_state."
    )


RIDGE_ALPHAS = np.logspace(-2, 5, 15)
"""The penalties ``alpha="auto"`` chooses from (leave-one-out)."""

_TWO_STEP_CONSTRAINTS: dict = {
    "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
    "activation": [
        StrOptions(set(TWO_STEP_ACTIVATIONS)),
        callable,
    ],
    "n_steps": [Interval(Integral, 0, 2, closed="both")],
    "step_size_exponents": ["array-like"],
    "step_size_constants": ["array-like"],
    "step_batches": [StrOptions({"reuse", "fresh"})],
    "loss": [StrOptions(set(LOSSES))],
    "random_state": TRAINING_PARAMETER_CONSTRAINTS["random_state"],
    "verbose": TRAINING_PARAMETER_CONSTRAINTS["verbose"],
    **TORCH_PARAMETER_CONSTRAINTS,
}
"""The parameters of :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`
(the learner's are these and its readout's)."""


def plan_two_steps(estimator, X, y, *, then, n_readout: int = 0) -> FitPlan:
    """The fit plan of :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`
    (also the learner's, through its ``features_``).

    Draws the initialisation from the estimator's ``random_state``, then (when
    ``n_readout > 0``, for the learner) the ``n_readout`` held-out rows of the
    readout, and
    plans ``n_steps`` full-batch GD steps on ``W`` over the other rows, one
    :func:`~sklearn_pt._training.fit_loop` through a schedule of batches
    (the same twice with ``step_batches="reuse"``, the two halves of a random
    order with ``"fresh"``) and step sizes. With the same parameters the
    features and the learner draw the same random numbers in the same order.

    Completing the plan returns ``then(network, readout_mask, steps)``: the
    trained network, the held-out rows (all False when ``n_readout == 0``)
    and the :class:`TwoSteps` (the fitted attributes of the steps), from
    which the estimator sets its own attributes.

    With ``verbose``, the loop prints the loss at the start of each step
    (``"Iteration k, loss = ..."``). A step that gives weights,
    pre-activations or features that overflow raises a
    :class:`~sklearn_pt.exceptions.DivergenceError` (see
    :func:`check_features_finite`).
    """
    width, step_sizes = _check_step_params(estimator)
    n_samples = X.shape[0]
    device, dtype, generator = estimator._torch_context()
    weight, readout, order = draw_initialisation(
        width, X.shape[1], n_samples - n_readout, generator=generator, dtype=dtype
    )
    readout_mask = np.zeros(n_samples, dtype=bool)
    if n_readout:
        readout_rows = torch.randperm(n_samples, generator=generator)[:n_readout]
        readout_mask[readout_rows.numpy()] = True
        X, y = X[~readout_mask], y[~readout_mask]
    activation = resolve_activation(estimator)
    network = TwoLayerNetwork(weight.clone(), readout.clone(), activation).to(device)
    X_t = as_tensor(X, device=device, dtype=dtype)
    y_t = as_tensor(standardise_targets(y), device=device, dtype=dtype)
    if estimator.step_batches == "reuse":
        batches = [(X_t, y_t), (X_t, y_t)]
    else:
        half = X_t.shape[0] // 2
        first, second = order[:half].to(device), order[half:].to(device)
        batches = [(X_t[first], y_t[first]), (X_t[second], y_t[second])]
    n_steps = estimator.n_steps
    schedule = [(*batches[i], step_sizes[i]) for i in range(n_steps)]
    recorder = _StepRecorder(network, step_sizes)
    # Two large steps are meant to move far from the start: only a non-finite
    # loss diverges (overflowing features are the recorder's).
    check = DivergenceCheck("step_size_constants", relative=False, final=False)
    log = [PrintLog()] if estimator.verbose else []
    params = {"solver": "gd", "loss": LOSSES[estimator.loss], "schedule": schedule}

    def finish(plan, result):
        weights = [w.cpu().numpy() for w in (weight, *recorder.weights)]
        steps = TwoSteps(
            first_layer_weights_=weights,
            second_layer_weights_=readout.numpy(),
            step_sizes_=step_sizes,
            device_=device,
        )
        return then(plan.module, readout_mask, steps)

    return FitPlan(
        module=network,
        finish=finish,
        stepper_params=params,
        closed_form=None if n_steps else (lambda plan: TrainingResult(converged=True)),
        max_iter=n_steps,
        callbacks=[check, *log, recorder],
        X=X_t,
        y=y_t,
        generator=generator,
        stack=(
            (lambda plans: _stack_plans(plans, estimator.loss, estimator.verbose))
            if stacked_is_faster(device, *weight.shape)
            else None
        ),
    )


CPU_STACKED_MAX_WEIGHTS = 200 * 200
"""On a CPU, the largest first layer (``N * d`` weights) whose fits are
stacked (see :func:`stacked_is_faster`; measured in :ref:`defaults_stacked`)."""


def stacked_is_faster(device, width: int, n_features: int) -> bool:
    """Whether a grid of two-step fits should take its gradient steps stacked
    (else :func:`~sklearn_pt.model_selection.fit_stacked` fits the cells one
    by one: the plans get no ``stack``).

    On a CPU the stacked steps win while each first layer is small (the
    per-fit overhead dominates) and lose a little once the products with the
    data dominate, so a CPU stacks up to ``N * d = 200 * 200`` weights
    (:data:`CPU_STACKED_MAX_WEIGHTS`; the timings are in
    :ref:`defaults_stacked`). On a GPU the steps are always stacked: one
    batched product keeps the device busy.

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
    >>> from sklearn_pt.feature_extraction._two_step_plan import stacked_is_faster
    >>> stacked_is_faster("cpu", 100, 100), stacked_is_faster("cpu", 400, 400)
    (True, False)
    >>> stacked_is_faster("cuda", 400, 400)
    True
    """
    if torch.device(device).type != "cpu":
        return True
    return width * n_features <= CPU_STACKED_MAX_WEIGHTS


STACKED_LOSSES = {
    "correlation": lambda outputs, y: -(outputs * y).mean(1),
    "squared": lambda outputs, y: half_squared_error(outputs, y, dim=1),
}
"""The two-step losses, one value per stacked network: ``(K, n) -> (K,)``."""


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


def _stack_plans(plans, loss: str, verbose) -> StackedFit:
    """The stacking of two-step fit plans (:func:`plan_two_steps`): the ``K``
    first layers as one ``(K, N, d)`` tensor, each model with its own
    batches and step sizes, each plan's recorder handed its weights."""
    schedules = [plan.stepper_params["schedule"] for plan in plans]
    schedule = [
        (
            torch.stack([s[i][0] for s in schedules]),
            torch.stack([s[i][1] for s in schedules]),
            [s[i][2] for s in schedules],
        )
        for i in range(len(schedules[0]))
    ]
    feature_maps = [plan.module.feature_map for plan in plans]
    activation = feature_maps[0].activation
    module = StackedTwoLayerNetwork(
        torch.stack([f.weight.detach() for f in feature_maps]),
        torch.stack([plan.module.readout for plan in plans]),
        activation,
        STACKED_LOSSES[loss],
    )
    recorders = [plan.callbacks[-1] for plan in plans]  # their _StepRecorder
    recorder = _StackedStepRecorder(
        module, activation, [steps.step_sizes for steps in recorders]
    )

    def hand_back(outcomes) -> None:
        for k, (plan, steps) in enumerate(zip(plans, recorders, strict=True)):
            with torch.no_grad():
                plan.module.feature_map.weight.copy_(module.weight[k])
            steps.weights = recorder.weights[k]

    check = DivergenceCheck("step_size_constants", relative=False, final=False)
    return StackedFit(
        module=module,
        stepper_args={
            "X": schedule[0][0],
            "y": schedule[0][1],
            "solver": "gd",
            "generators": [None] * len(plans),  # full batches: no row order
            "per_model_data": True,
            "schedule": schedule,
        },
        max_iter=len(schedule),
        callbacks=[check, *([PrintLog()] if verbose else []), recorder],
        hand_back=hand_back,
    )


def _check_step_params(estimator) -> tuple[int, tuple[float, float]]:
    """Validate the width and step parameters; return ``N`` and the step sizes."""
    width = check_width(estimator.hidden_layer_sizes)
    exponents = check_pair(
        estimator.step_size_exponents, "step_size_exponents", positive=False
    )
    if not all(0 <= alpha < 0.5 for alpha in exponents):
        raise InvalidParameterError(
            f"The 'step_size_exponents' parameter of {type(estimator).__name__} "
            "must be a pair (alpha1, alpha2) in [0, 1/2), the range the theory "
            "covers (eta_i = c_i * N ** alpha_i); got "
            f"{estimator.step_size_exponents!r}. For larger steps at a fixed "
            "width, raise step_size_constants instead."
        )
    constants = check_pair(
        estimator.step_size_constants, "step_size_constants", positive=True
    )
    step_sizes = tuple(
        c * width**alpha for c, alpha in zip(constants, exponents, strict=True)
    )
    return width, step_sizes
