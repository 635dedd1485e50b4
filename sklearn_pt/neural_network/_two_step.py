"""TwoStepFeatureLearner: two gradient steps on the first layer of a
linear-width two-layer network, then a ridge readout on a held-out split."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge, RidgeCV
from sklearn.utils.validation import check_is_fitted

from .._base import (
    TorchEstimatorMixin,
    check_parameters,
    keep_state_on_error,
    validate_input,
)
from .._compat import (
    Interval,
    InvalidParameterError,
    StrOptions,
    _fit_context,
    validate_data,
)
from .._torch_bridge import TRAINING_PARAMETER_CONSTRAINTS, as_tensor, predict_numpy
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
from ..nn import StackedTwoLayerNetwork, TwoLayerNetwork
from ..nn._activations import activation_function
from ..spectral import WeightSpectrum

__all__ = ["TwoStepFeatureLearner"]


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
    order that splits the step rows into two fresh halves."""
    weight = torch.randn(width, n_features, generator=generator, dtype=dtype)
    weight /= math.sqrt(n_features)
    readout = torch.randn(width, generator=generator, dtype=dtype)
    order = torch.randperm(n_step_rows, generator=generator)
    return weight, readout, order


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


def check_step(weight, X_b, activation, *, where: str, step_sizes) -> None:
    """:func:`check_features_finite` on the weights after a gradient step,
    their pre-activations ``X_b W^T`` on the step's batch (computed once) and
    the features ``sigma`` of those."""
    with torch.no_grad():
        pre_activations = X_b @ weight.T
        features = activation_function(activation)(pre_activations)
    check_features_finite(
        weight, pre_activations, features, where=where, step_sizes=step_sizes
    )


RIDGE_ALPHAS = np.logspace(-2, 5, 15)
"""The penalties ``ridge_alpha="auto"`` chooses from (leave-one-out)."""

_TWO_STEP_CONSTRAINTS: dict = {
    "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
    "activation": [
        StrOptions(set(TWO_STEP_ACTIVATIONS)),
        callable,
    ],
    "n_steps": [Interval(Integral, 0, 2, closed="both")],
    "step_size_exponents": ["array-like"],
    "step_size_constants": ["array-like"],
    "batch": [StrOptions({"reuse", "fresh"})],
    "loss": [StrOptions(set(LOSSES))],
    "random_state": TRAINING_PARAMETER_CONSTRAINTS["random_state"],
    "verbose": TRAINING_PARAMETER_CONSTRAINTS["verbose"],
    "device": TRAINING_PARAMETER_CONSTRAINTS["device"],
    "dtype": TRAINING_PARAMETER_CONSTRAINTS["dtype"],
}
"""Parameters shared with :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`."""


class TwoStepFeatureLearner(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
    """Two gradient steps on the first layer, then a ridge readout.

    The network is ``f(x) = a^T sigma(W x) / sqrt(N)`` with ``W_0`` rows drawn
    from ``N(0, I_d / d)`` and a fixed second layer ``a ~ N(0, I_N)``. The
    first layer takes ``n_steps`` full-batch gradient steps
    ``W_{i} = W_{i-1} - eta_i grad L(W_{i-1})`` with
    ``eta_i = c_i * N ** alpha_i``; a ridge regression is then fitted on the
    learned features ``sigma(W x)`` of a held-out split of the data (as in
    Ba et al., 2022). The spectrum of the final ``W`` is a bulk plus
    outliers whose number depends on ``(alpha1, alpha2)``
    (:func:`sklearn_pt.theory.spike_count`).

    Parameters
    ----------
    hidden_layer_sizes : int or tuple of one int, default=(512,)
        The width ``N``.
    activation : {"gelu", "relu", "tanh", "softplus", "hermite2", "hermite3", \
"sincos"} or callable, default="gelu"
        ``sigma`` (:data:`sklearn_pt.nn.ACTIVATIONS`); a callable maps a tensor
        to a tensor elementwise (checked on a small tensor in ``fit``) and
        must be picklable (a module-level function) for the estimator to be.
        Which orders of the second step exist depends on ``sigma``'s Hermite
        coefficients (:func:`~sklearn_pt.theory.hermite_coefficients`):
        ``"gelu"``, ``"relu"`` and ``"softplus"`` have no ``c_3, c_5, ...``,
        ``"tanh"`` no ``c_2, c_4, ...``, and ``"sincos"``
        (``sin z + cos z``) has them all. ``"hermite2"`` is
        ``He_1 + He_2 / 2`` and ``"hermite3"``
        ``He_1 + He_2 / 2 + He_3 / 6``, polynomials of degree ``L = 2, 3``
        (the ``degree`` of :func:`~sklearn_pt.theory.spike_count`); the others
        have infinite Hermite expansions (``degree=None``). The polynomial
        ones have heavy-tailed derivatives: at moderate sizes they broaden
        the bulk much more than ``"gelu"``.
    n_steps : {0, 1, 2}, default=2
        Number of gradient steps; 0 is a random-features model.
    step_size_exponents : tuple of two floats, default=(0.25, 0.375)
        ``(alpha1, alpha2)``, each in ``[0, 1/2)``, the range the theory
        covers (others raise ``InvalidParameterError``).
    step_size_constants : tuple of two positive floats, default=(1.0, 1.0)
        ``(c1, c2)``.
    batch : {"reuse", "fresh"}, default="reuse"
        ``"reuse"``: both steps use the same samples; ``"fresh"``: the step
        samples are split into two disjoint halves, one per step.
    loss : {"correlation", "squared"}, default="correlation"
        ``"correlation"``: ``L(W) = -(1/n) sum_i y_i f(x_i)``, the paper's
        loss, whose gradient does not depend on ``f``; ``"squared"``:
        ``L(W) = (1/2n) sum_i (f(x_i) - y_i)^2``.
    ridge_alpha : float or "auto", default="auto"
        Regularisation of the ridge readout. ``"auto"``: chosen by efficient
        leave-one-out cross-validation on the readout split
        (:class:`~sklearn.linear_model.RidgeCV` over 15 penalties from
        ``1e-2`` to ``1e5``), so that the default scores on real data (5-fold
        CV R^2 in a ``StandardScaler`` pipeline: 0.482 on diabetes, 0.868 on
        friedman1, against 0.223 and 0.842 with the former default 1.0); a
        float: a :class:`~sklearn.linear_model.Ridge` with that penalty. With
        ``N`` features of order one and a readout split of comparable size,
        small values interpolate.
    readout_fraction : float, default=0.5
        Fraction of the samples held out from the gradient steps and used to
        fit the readout.
    random_state : int, RandomState instance or None, default=None
        Controls ``W_0``, ``a`` and the splits through a local
        ``torch.Generator``; no global random state is used.
    verbose : int, default=0
        Print the loss at the start of each gradient step when positive
        (``"Iteration 1, loss = ..."``).
    device : {"cpu", "auto", "cuda"} or "cuda:N", default="cpu"
        Where the gradient steps run.
    dtype : {"float32", "float64"}, default="float32"
        Precision of the network.

    Attributes
    ----------
    first_layer_weights_ : list of ndarray of shape (N, n_features_in_)
        ``[W_0, W_1, ..., W_{n_steps}]``, on the CPU.
    second_layer_weights_ : ndarray of shape (N,)
        The fixed ``a``.
    readout_ : Ridge or RidgeCV
        The readout, fitted on the held-out split's features ``sigma(W x)``.
    ridge_alpha_ : float
        The readout's penalty (the one chosen with ``ridge_alpha="auto"``).
    coefs_ : list of two ndarray
        The predictive map as :class:`~sklearn.neural_network.MLPRegressor`'s
        lists: ``[W_n.T, readout_.coef_[:, None]]`` of shapes
        ``(n_features, N)`` and ``(N, 1)`` (the ridge readout, not the fixed
        ``a`` of the gradient steps).
    intercepts_ : list of two ndarray
        ``[zeros(N), [readout_.intercept_]]``: the features have no bias.
    readout_mask_ : ndarray of bool of shape (n_samples,)
        True for the samples of the readout split (the others took the
        gradient steps).
    spectrum_ : WeightSpectrum
        Spectrum of the final first-layer weights (default parameters: the
        fitted bulk edge).
    step_sizes_ : tuple of float
        ``(eta_1, eta_2)``.
    module_ : torch.nn.Module
        The network with the final ``W``, on ``device_``.
    device_ : torch.device
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column names.

    See Also
    --------
    sklearn_pt.feature_extraction.TwoStepFeatures : The learned features as a
        transformer.
    sklearn_pt.spectral.WeightSpectrum : Bulk, outliers and alignment.
    sklearn_pt.theory.spike_count : Predicted number of outliers.

    Notes
    -----
    *Divergence.* With the correlation loss the gradient does not depend on
    ``f``, so a step of size ``eta`` moves ``W`` by exactly ``eta`` times a
    fixed matrix: huge step sizes give huge weights, and nothing in the loss
    stops them. The library accepts any weights and features that are
    representable (finite, with a finite sum of squares, so that the ridge
    readout can be computed), however large, and raises
    :class:`~sklearn_pt.exceptions.DivergenceError`, naming
    ``step_size_constants``, when a step or the readout split's features
    overflow; predictions are never silently NaN.

    *Normalisation (the library's convention).* The inputs are expected to
    be roughly isotropic with unit-variance features (``x ~ N(0, I_d)`` in
    the theory; use a :class:`~sklearn.preprocessing.StandardScaler`). The
    gradient steps use the targets centred and scaled to unit variance on the
    step split: the correlation loss is linear in ``y``, so a step size is
    only meaningful relative to the scale of ``y``. The readout is fitted to
    the raw targets. The step is the plain gradient, ``eta_i = c_i N^alpha_i``,
    with no further factor of ``N``.

    *Why this gives the predicted count.* Row ``j`` of the gradient of the
    correlation loss is
    ``-(a_j / sqrt(N)) (1/n) sum_i y_i sigma'(<w_j, x_i>) x_i``: its norm is
    of order ``N^(-1/2)`` because ``a_j = O(1)``, and its mean part
    ``(a / sqrt(N)) E[sigma'] (X^T y / n)^T`` is a rank-one matrix of operator
    norm ``O(1)``. Step 1 therefore adds a spike of size ``~ c_1 N^alpha1``
    (Ba et al., 2022) and moves each pre-activation ``<w_j, x>`` by
    ``Delta = O(N^(alpha1 - 1/2))``, which vanishes for ``alpha1 < 1/2``.
    Expanding ``sigma'(<w_j, x> + Delta)`` in the second gradient, the
    order-``k`` term is multiplied by ``Delta^k`` and gives a rank-one term of
    size ``N^(alpha2 - k (1/2 - alpha1))``; it exceeds the ``O(1)`` bulk (the
    initialisation's singular values lie in ``[|1 - sqrt(N/d)|,
    1 + sqrt(N/d)]``) iff ``k < alpha2 / (1/2 - alpha1)``, for
    ``k <= L - 1``. That is the count
    ``min(L - 1, floor(alpha2 / (1/2 - alpha1)))``. With a reused batch the
    order-``k`` term carries ``y_i^(k+1)`` (each sample's first-step move
    contains its own label), so its right singular vector is
    ``X^T (y^(k+1) - E y^(k+1)) / n``, which has a component along the
    target direction when ``E[(g^(k+1))']`` is nonzero; for ``g = He_3`` this
    first happens at ``k = 2``, hence alignment needs ``Lambda >= 2`` and an
    activation with ``c_3 != 0`` (``tanh``, ``"sincos"``; not ``gelu``,
    ``relu`` or ``softplus``), since the order-``k`` term carries
    ``E[sigma^(k+1)] = (k+1)! c_{k+1}``.
    With a fresh batch these self-terms are absent.

    The remainder of each step is full rank and of operator norm
    ``O(N^(alpha - 1/2))``: it vanishes asymptotically but slowly, and at
    moderate ``N`` it broadens the bulk past ``1 + sqrt(N/d)``; see
    :class:`~sklearn_pt.spectral.WeightSpectrum` for edges that account for
    it.

    *Measured at finite size* (gelu, ``c = (2, 2)``, a tanh single-index
    target, ``N = n = d`` from 400 to 2000, fitted bulk edge): the first step
    gives one outlier; the second adds none well inside
    ``alpha1 + alpha2 < 1/2`` and one, aligned with ``X^T (y^2 - 1)``, where
    the count is 1. Where the count is 2 or more it still adds one: gelu has
    no order 2 at all (``c_3 = 0``; the parity rule of
    :func:`~sklearn_pt.theory.spike_count` with ``activation``), and its
    order 3 (``4 c_4 = -0.06``) does not separate from the bulk at these
    sizes (:func:`~sklearn_pt.theory.two_step_signal` gives each order's
    size at a finite ``N``).

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".
    .. [2] Ba, Erdogdu, Suzuki, Wang, Wu, Yang (2022), "High-dimensional
       Asymptotics of Feature Learning: How One Gradient Step Improves the
       Representation", NeurIPS.

    Examples
    --------
    >>> from sklearn_pt.datasets import make_single_index
    >>> from sklearn_pt.neural_network import TwoStepFeatureLearner
    >>> X, y = make_single_index(400, 50, link="he3", random_state=0)
    >>> est = TwoStepFeatureLearner(hidden_layer_sizes=64, random_state=0)
    >>> est.fit(X, y).first_layer_weights_[2].shape
    (64, 50)
    >>> len(est.first_layer_weights_), int(est.readout_mask_.sum())
    (3, 200)
    >>> est.predict(X[:3]).shape
    (3,)
    """

    _module_is_not_the_predictor: ClassVar[str] = (
        "it is the two-layer network of the gradient steps (with the fixed "
        "second layer a), while a ridge readout on its features sigma(W x) "
        "makes the predictions. Pass estimator.module_ for the Hessian of that "
        "network's squared loss."
    )
    """Why :func:`~sklearn_pt.spectral.hessian_spectrum` refuses it."""

    _parameter_constraints: ClassVar[dict] = {
        **_TWO_STEP_CONSTRAINTS,
        "ridge_alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "readout_fraction": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        hidden_layer_sizes=(512,),
        *,
        activation="gelu",
        n_steps=2,
        step_size_exponents=(0.25, 0.375),
        step_size_constants=(1.0, 1.0),
        batch="reuse",
        loss="correlation",
        ridge_alpha="auto",
        readout_fraction=0.5,
        random_state=None,
        verbose=0,
        device="cpu",
        dtype="float32",
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.n_steps = n_steps
        self.step_size_exponents = step_size_exponents
        self.step_size_constants = step_size_constants
        self.batch = batch
        self.loss = loss
        self.ridge_alpha = ridge_alpha
        self.readout_fraction = readout_fraction
        self.random_state = random_state
        self.verbose = verbose
        self.device = device
        self.dtype = dtype

    _stacked_parameters: ClassVar[frozenset] = frozenset(
        {"step_size_exponents", "step_size_constants", "random_state"}
    )
    """The parameters in which fits stacked by
    :func:`~sklearn_pt.model_selection.fit_stacked` may differ."""

    @keep_state_on_error
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Take the gradient steps on one split and fit the readout on the other.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs, roughly isotropic with unit-variance features.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : TwoStepFeatureLearner
            The fitted estimator.
        """
        plan = self.plan_fit(X, y)
        return plan.complete(plan.run())

    def plan_fit(self, X, y) -> FitPlan:
        """Validate ``(X, y)`` and build what :meth:`fit` trains, untrained.

        The protocol of every torch-backed estimator (``fit`` is
        ``plan.complete(plan.run())``).

        Parameters
        ----------
        X, y
            As for :meth:`fit`.

        Returns
        -------
        FitPlan
            The network at initialisation, the schedule of the gradient
            steps, the callbacks, and the completion that sets the fitted
            attributes and fits the ridge readout on the held-out split.
        """
        check_parameters(self)
        X, y = validate_input(
            validate_data, self, X, y, y_numeric=True, dtype=[np.float64, np.float32]
        )
        _, step_sizes = _check_step_params(self)
        n_samples = X.shape[0]
        min_step_rows = 2 if self.batch == "fresh" else 1
        if n_samples < min_step_rows + 1:
            raise ValueError(
                f"{type(self).__name__} needs at least {min_step_rows + 1} samples "
                f"(gradient steps plus a held-out readout split) with "
                f"batch={self.batch!r}; got n_samples={n_samples}."
            )
        n_readout = round(self.readout_fraction * n_samples)
        n_readout = min(max(n_readout, 1), n_samples - min_step_rows)

        def fit_readout(network, readout_mask):
            features = predict_numpy(network.feature_map, X[readout_mask])
            features = features.astype(X.dtype, copy=False)
            check_features_finite(
                features, where="The readout split", step_sizes=step_sizes
            )
            if self.ridge_alpha == "auto":
                readout = RidgeCV(alphas=RIDGE_ALPHAS).fit(features, y[readout_mask])
                self.ridge_alpha_ = float(readout.alpha_)
            else:
                readout = Ridge(alpha=self.ridge_alpha).fit(features, y[readout_mask])
                self.ridge_alpha_ = float(self.ridge_alpha)
            self.module_ = network
            self.readout_ = readout
            self.readout_mask_ = readout_mask

        return plan_two_steps(self, X, y, n_readout=n_readout, then=fit_readout)

    @property
    def coefs_(self) -> list[np.ndarray]:
        check_is_fitted(self)
        weight = np.asarray(self.first_layer_weights_[-1])
        return [weight.T.copy(), np.asarray(self.readout_.coef_).reshape(-1, 1)]

    @property
    def intercepts_(self) -> list[np.ndarray]:
        check_is_fitted(self)
        width = np.shape(self.first_layer_weights_[-1])[0]
        return [np.zeros(width), np.atleast_1d(self.readout_.intercept_).copy()]

    def predict(self, X):
        """Predict with the ridge readout on the learned features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            In the floating dtype of ``X``.
        """
        check_is_fitted(self)
        X = validate_input(
            validate_data, self, X, reset=False, dtype=[np.float64, np.float32]
        )
        features = predict_numpy(self.module_.feature_map, X).astype(X.dtype)
        return self.readout_.predict(features).astype(X.dtype, copy=False)


def plan_two_steps(estimator, X, y, *, n_readout: int = 0, then=None) -> FitPlan:
    """The fit plan shared by :class:`TwoStepFeatureLearner` and
    :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`.

    Draws the initialisation from the estimator's ``random_state``, then (when
    ``n_readout > 0``) the ``n_readout`` held-out rows of the readout, and
    plans ``n_steps`` full-batch GD steps on ``W`` over the other rows, one
    :func:`~sklearn_pt._training.fit_loop` through a schedule of batches
    (the same twice with ``batch="reuse"``, the two halves of a random order
    with ``"fresh"``) and step sizes. With the same parameters both estimators
    draw the same random numbers in the same order.

    Completing the plan sets the fitted attributes the two share,
    ``first_layer_weights_`` (``[W_0, ..., W_n]``), ``second_layer_weights_``,
    ``spectrum_``, ``step_sizes_`` and ``device_``, then calls
    ``then(network, readout_mask)`` (the held-out rows, all False when
    ``n_readout == 0``) for the rest.

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
    if estimator.batch == "reuse":
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
        estimator.first_layer_weights_ = weights
        estimator.second_layer_weights_ = readout.numpy()
        estimator.spectrum_ = WeightSpectrum(device=estimator.device).fit(weights[-1])
        estimator.step_sizes_ = step_sizes
        estimator.device_ = device
        if then is not None:
            then(plan.module, readout_mask)
        return estimator

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
        stack=lambda plans: _stack_plans(plans, estimator.loss, estimator.verbose),
    )


STACKED_LOSSES = {
    "correlation": lambda outputs, y: -(outputs * y).mean(1),
    "squared": lambda outputs, y: 0.5 * ((outputs - y) ** 2).mean(1),
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
