"""TwoStepFeatureLearner: two gradient steps on the first layer of a
linear-width two-layer network, then a ridge readout on a held-out split."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np
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
    StrOptions,
    _fit_context,
    validate_data,
)
from .._torch_bridge import predict_numpy
from .._training import FitPlan, warn_if_collapsed
from ..feature_extraction._two_step import TwoStepFeatures
from ..feature_extraction._two_step_plan import (
    RIDGE_ALPHAS,
    FinalSpectrum,
    _check_step_params,
    check_features_finite,
    collapse_fix,
)

__all__ = ["TwoStepFeatureLearner"]


class TwoStepFeatureLearner(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
    """Two gradient steps on the first layer, then a ridge readout.

    The network is ``f(x) = a^T sigma(W x) / sqrt(N)`` with ``W_0`` rows drawn
    from ``N(0, I_d / d)`` and a fixed second layer ``a ~ N(0, I_N)``. The
    first layer takes ``n_steps`` full-batch gradient steps
    ``W_{i} = W_{i-1} - eta_i grad L(W_{i-1})`` with
    ``eta_i = c_i * N ** alpha_i``
    (:class:`~sklearn_pt.feature_extraction.TwoStepFeatures`, fitted on one
    split of the data, is ``features_``); a ridge regression is then fitted
    on the learned features ``sigma(W x)`` of the held-out split (as in
    Ba et al., 2022). The spectrum of the final ``W`` is a bulk plus
    outliers whose number depends on ``(alpha1, alpha2)``
    (:func:`sklearn_pt.theory.spike_count`).

    Parameters
    ----------
    hidden_layer_sizes, activation, n_steps, step_size_exponents, \
step_size_constants, step_batches, loss, random_state, verbose, device, dtype
        The gradient steps' parameters: those of
        :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`, with its
        meanings and defaults (documented there once; the table of
        :ref:`vocabulary` lists them all). ``fit`` builds ``features_`` from
        them. ``random_state`` also draws the readout split.
    alpha : float or "auto", default="auto"
        Regularisation strength of the ridge readout, as
        :class:`~sklearn.linear_model.Ridge`'s ``alpha`` (the penalty
        ``alpha * ||coef||^2`` beside the sum of squared residuals; not the
        step-size exponents ``alpha_i``). ``"auto"``: chosen by efficient
        leave-one-out cross-validation on the readout split
        (:class:`~sklearn.linear_model.RidgeCV` over 15 penalties from
        ``1e-2`` to ``1e5``), so that the default scores on real data (see
        :ref:`defaults_two_step`); a float: a
        :class:`~sklearn.linear_model.Ridge` with that penalty, for a fixed
        readout across fits. With ``N`` features of order one and a readout
        split of comparable size, small values interpolate. ``alpha_`` holds
        the penalty used.
    readout_fraction : float, default=0.5
        Fraction of the samples held out from the gradient steps and used to
        fit the readout. Lower it to give the steps more samples, raise it
        for a better-determined readout.

    Attributes
    ----------
    features_ : TwoStepFeatures
        The learned features: the transformer built from the step
        parameters and fitted on the step split (``~readout_mask_``).
    first_layer_weights_ : list of ndarray of shape (N, n_features_in_)
        ``[W_0, W_1, ..., W_{n_steps}]``, on the CPU (those of
        ``features_``).
    second_layer_weights_ : ndarray of shape (N,)
        The fixed ``a``.
    readout_ : Ridge or RidgeCV
        The readout, fitted on the held-out split's features ``sigma(W x)``.
    alpha_ : float
        The readout's penalty (the one chosen with ``alpha="auto"``).
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

    At moderate ``N`` the second step of gelu adds at most one outlier, even
    where the count is 2 or more: gelu has no order 2 (``c_3 = 0``, the
    parity rule of :func:`~sklearn_pt.theory.spike_count` with
    ``activation``), and its order 3 (``4 c_4 = -0.06``) is small
    (:func:`~sklearn_pt.theory.two_step_signal` gives each order's size at a
    finite ``N``; the sizes this was observed at are in
    :ref:`defaults_finite_size`).

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

    spectrum_ = FinalSpectrum()

    _parameter_constraints: ClassVar[dict] = {
        **TwoStepFeatures._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
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
        step_batches="reuse",
        loss="correlation",
        alpha="auto",
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
        self.step_batches = step_batches
        self.loss = loss
        self.alpha = alpha
        self.readout_fraction = readout_fraction
        self.random_state = random_state
        self.verbose = verbose
        self.device = device
        self.dtype = dtype

    _stacked_parameters: ClassVar[frozenset] = TwoStepFeatures._stacked_parameters
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
        given = X, y  # features_ validates them too (and keeps feature names)
        X, y = validate_input(
            validate_data, self, X, y, y_numeric=True, dtype=[np.float64, np.float32]
        )
        features = self._features()
        _, step_sizes = _check_step_params(features)
        n_samples = X.shape[0]
        min_step_rows = 2 if self.step_batches == "fresh" else 1
        if n_samples < min_step_rows + 1:
            raise ValueError(
                f"{type(self).__name__} needs at least {min_step_rows + 1} samples "
                f"(gradient steps plus a held-out readout split) with "
                f"step_batches={self.step_batches!r}; got n_samples={n_samples}."
            )
        n_readout = round(self.readout_fraction * n_samples)
        n_readout = min(max(n_readout, 1), n_samples - min_step_rows)

        def fit_readout(network, readout_mask, steps):
            steps.set_on(self)
            features_X = predict_numpy(network.feature_map, X[readout_mask])
            features_X = features_X.astype(X.dtype, copy=False)
            check_features_finite(
                features_X, where="The readout split", step_sizes=step_sizes
            )
            y_readout = y[readout_mask]
            if self.alpha == "auto":
                readout = RidgeCV(alphas=RIDGE_ALPHAS).fit(features_X, y_readout)
                self.alpha_ = float(readout.alpha_)
            else:
                readout = Ridge(alpha=self.alpha).fit(features_X, y_readout)
                self.alpha_ = float(self.alpha)
            warn_if_collapsed(
                readout.predict(features_X),
                y_readout,
                fix=collapse_fix(self),
                data="readout split",
            )
            self.features_ = features
            self.module_ = network
            self.readout_ = readout
            self.readout_mask_ = readout_mask
            return self

        return features._plan_fit(*given, n_readout=n_readout, then=fit_readout)

    def _features(self) -> TwoStepFeatures:
        """The unfitted ``features_``: a
        :class:`~sklearn_pt.feature_extraction.TwoStepFeatures` with this
        learner's step parameters (its ``random_state`` object itself, so
        that the steps and the readout split draw from one generator)."""
        params = self.get_params(deep=False)
        return TwoStepFeatures(
            **{name: params[name] for name in TwoStepFeatures._get_param_names()}
        )

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
