"""TwoStepFeatures: the features sigma(W x) learned by two gradient steps."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted

from .._base import (
    TorchEstimatorMixin,
    check_parameters,
    keep_state_on_error,
    validate_input,
)
from .._compat import _fit_context, validate_data
from .._torch_bridge import predict_numpy
from .._training import FitPlan, warn_if_constant_features
from ._two_step_plan import (
    _TWO_STEP_CONSTRAINTS,
    FinalSpectrum,
    _check_step_params,
    collapse_fix,
    plan_two_steps,
)

__all__ = ["TwoStepFeatures"]


class TwoStepFeatures(
    TorchEstimatorMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Hidden features ``sigma(W x)`` after gradient steps on the first layer.

    ``fit`` takes the gradient steps of
    :class:`~sklearn_pt.neural_network.TwoStepFeatureLearner` on all the
    samples it is given (no readout split); ``transform`` returns the learned
    features. The learner is made of this transformer (its ``features_``)
    fitted on its step split and a ridge readout fitted on its readout split:
    with the same parameters and an int ``random_state``,
    ``Pipeline([FrozenEstimator(TwoStepFeatures(...).fit(X[~m], y[~m])),
    Ridge(alpha=alpha)]).fit(X[m], y[m])``, with
    ``m = learner.readout_mask_``, predicts exactly as the learner.

    The network of the steps is ``f(x) = a^T sigma(W x) / sqrt(N)`` with
    ``W_0`` rows drawn from ``N(0, I_d / d)`` and a fixed second layer
    ``a ~ N(0, I_N)``. The first layer takes ``n_steps`` full-batch gradient
    steps ``W_{i} = W_{i-1} - eta_i grad L(W_{i-1})`` with
    ``eta_i = c_i * N ** alpha_i``.

    These parameters are also the learner's, with one meaning (see
    :ref:`vocabulary`).

    Parameters
    ----------
    hidden_layer_sizes : int or tuple of one int, default=(512,)
        The width ``N``, the number of learned features (columns of
        ``transform``). The theory takes ``N``, ``n`` and ``d`` proportional;
        larger ``N`` separates the outliers from the bulk more clearly and
        costs more per step.
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
        Number of gradient steps; 0 is a random-features model and 1 the
        one-step model of Ba et al. (2022), the baselines of the paper.
    step_size_exponents : tuple of two floats, default=(0.25, 0.375)
        ``(alpha1, alpha2)``, each in ``[0, 1/2)``, the range the theory
        covers (others raise ``InvalidParameterError``). The default is a
        point where the second step is predicted to add one outlier
        (``spike_count(0.25, 0.375) == 1``); change it to move across the
        phase diagram.
    step_size_constants : tuple of two positive floats, default=(1.0, 1.0)
        ``(c1, c2)``. Larger constants give larger spikes at a finite ``N``;
        a :class:`~sklearn_pt.exceptions.DivergenceError` names them when the
        steps overflow.
    step_batches : {"reuse", "fresh"}, default="reuse"
        Which samples each gradient step uses (each step is full-batch: this
        is not a mini-batch size). ``"reuse"``: both steps use the same
        samples (the setting in which the learned directions can align with
        a target of information exponent above 1); ``"fresh"``: the step
        samples are split into two disjoint halves, one per step.
    loss : {"correlation", "squared"}, default="correlation"
        ``"correlation"``: ``L(W) = -(1/n) sum_i y_i f(x_i)``, the paper's
        loss, whose gradient does not depend on ``f``; ``"squared"``:
        ``L(W) = (1/2n) sum_i (f(x_i) - y_i)^2``.
    random_state : int, RandomState instance or None, default=None
        Controls ``W_0``, ``a`` and the fresh-batch split (and the learner's
        readout split) through a local ``torch.Generator``; no global random
        state is used.
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
        ``[W_0, ..., W_{n_steps}]``.
    coefs_ : list of one ndarray of shape (n_features_in_, N)
        ``[W.T]`` for the final ``W``: the first-layer weights in the layout
        of :class:`~sklearn.neural_network.MLPRegressor`'s ``coefs_[0]``, the
        attribute every network estimator of the library has.
    intercepts_ : list of one ndarray of shape (N,)
        Zeros (the feature map has no bias).
    second_layer_weights_ : ndarray of shape (N,)
        The fixed second layer ``a`` used by the gradient steps.
    spectrum_ : WeightSpectrum
        Spectrum of the final first-layer weights.
    step_sizes_ : tuple of float
        ``(eta_1, eta_2)``.
    module_ : torch.nn.Module
        The feature map ``x -> sigma(W x)``, on ``device_``.
    device_ : torch.device
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column names.

    See Also
    --------
    sklearn_pt.neural_network.TwoStepFeatureLearner : Steps plus readout, with
        the normalisation convention and the handling of huge step sizes
        (a :class:`~sklearn_pt.exceptions.DivergenceError` on overflow) in
        its Notes.

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".
    .. [2] Ba, Erdogdu, Suzuki, Wang, Wu, Yang (2022), "High-dimensional
       Asymptotics of Feature Learning: How One Gradient Step Improves the
       Representation", NeurIPS.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_pt.datasets import make_single_index
    >>> from sklearn_pt.feature_extraction import TwoStepFeatures
    >>> X, y = make_single_index(300, 40, link="relu", random_state=0)
    >>> features = TwoStepFeatures(hidden_layer_sizes=32, random_state=0)
    >>> features.fit_transform(X, y).shape
    (300, 32)
    >>> pipe = make_pipeline(TwoStepFeatures(hidden_layer_sizes=32, random_state=0),
    ...                      Ridge(alpha=1e-3)).fit(X, y)
    >>> pipe.predict(X[:2]).shape
    (2,)
    """

    spectrum_ = FinalSpectrum()

    _parameter_constraints: ClassVar[dict] = dict(_TWO_STEP_CONSTRAINTS)
    _module_is_not_the_predictor: ClassVar[str] = (
        "it is the feature map x -> sigma(W x) of a transformer (N outputs, no "
        "target), with no prediction to differentiate."
    )
    """Why :func:`~sklearn_pt.spectral.hessian_spectrum` refuses it."""

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
        """Take the gradient steps on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Targets of the gradient steps (standardised internally).

        Returns
        -------
        self : TwoStepFeatures
        """
        plan = self.plan_fit(X, y)
        return plan.complete(plan.run())

    def plan_fit(self, X, y) -> FitPlan:
        """Validate ``(X, y)`` and plan :meth:`fit`'s gradient steps, the
        protocol of :meth:`TwoStepFeatureLearner.plan_fit
        <sklearn_pt.neural_network.TwoStepFeatureLearner.plan_fit>`;
        completing the plan keeps the learned feature map."""
        return self._plan_fit(X, y)

    def _plan_fit(self, X, y, *, n_readout: int = 0, then=None) -> FitPlan:
        """:meth:`plan_fit`, the steps taken on all but ``n_readout`` rows
        drawn at random (the learner's readout split). Completing the plan
        sets the fitted attributes, then returns ``then(network, readout_mask,
        steps)`` (see :func:`plan_two_steps`) when ``then`` is given, else
        ``self``."""
        check_parameters(self)
        X, y = validate_input(
            validate_data, self, X, y, y_numeric=True, dtype=[np.float64, np.float32]
        )
        width, _ = _check_step_params(self)
        if self.step_batches == "fresh" and X.shape[0] - n_readout < 2:
            raise ValueError(
                "step_batches='fresh' splits the samples into two halves and "
                f"needs at least 2 samples; got n_samples={X.shape[0]}."
            )

        def keep_features(network, readout_mask, steps):
            steps.set_on(self)
            self.module_ = network.feature_map
            self._n_features_out = width
            if then is not None:
                return then(network, readout_mask, steps)
            warn_if_constant_features(
                lambda rows: predict_numpy(network.feature_map, X[rows]),
                fix=collapse_fix(self),
            )
            return self

        return plan_two_steps(self, X, y, n_readout=n_readout, then=keep_features)

    @property
    def coefs_(self) -> list[np.ndarray]:
        check_is_fitted(self)
        return [np.asarray(self.first_layer_weights_[-1]).T.copy()]

    @property
    def intercepts_(self) -> list[np.ndarray]:
        check_is_fitted(self)
        return [np.zeros(np.shape(self.first_layer_weights_[-1])[0])]

    def transform(self, X):
        """The learned features ``sigma(W x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        features : ndarray of shape (n_samples, N)
            In the floating dtype of ``X``.
        """
        check_is_fitted(self)
        X = validate_input(
            validate_data, self, X, reset=False, dtype=[np.float64, np.float32]
        )
        return predict_numpy(self.module_, X).astype(X.dtype, copy=False)
