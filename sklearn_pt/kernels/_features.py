"""Spherical biased-ReLU random features as a scikit-learn transformer."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import torch
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted

from .._base import keep_state_on_error, validate_input
from .._compat import Interval, _fit_context, validate_data
from .._torch_bridge import make_generator
from ..nn import spherical_biased_relu_init

__all__ = ["BiasedReLUFeatures"]


class BiasedReLUFeatures(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Random features ``relu(<w_j, x> - b_j)`` of the spherical biased-ReLU kernel.

    Like :class:`~sklearn.kernel_approximation.RBFSampler` for
    :class:`BiasedReLUKernel`: ``w_j ~ Uniform(S^{d-1})``,
    ``b_j ~ Uniform[-init_scale, init_scale]``, and the inner product of two
    feature vectors divided by ``n_components`` converges to the kernel.
    ``Pipeline([BiasedReLUFeatures(...), Ridge(alpha)])`` is the random-features
    model, the same as ``PartiallyTrainableRegressor(trainable_proportion=0,
    readout="ridge", alpha=alpha, dtype="float64")`` with the same
    ``random_state``.

    Parameters
    ----------
    n_components : int, default=256
        Number of features ``m``. More features approximate the kernel
        better (the Monte-Carlo error falls like ``1 / sqrt(m)``) and cost
        proportionally more.
    init_scale : float, default=1.0
        ``tau``, the range of the thresholds ``b_j``; 1 is the well-matched
        case for inputs on the unit sphere.
    project_to_sphere : bool, default=True
        Project each input row onto the unit sphere first (the paper's
        setting, where :class:`BiasedReLUKernel` has its closed form). Set it
        to False to keep the inputs' norms, as
        :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` does
        by default.
    random_state : int, RandomState instance or None, default=None
        Seeds a local ``torch.Generator``; the features are drawn in float64.

    Attributes
    ----------
    weights_ : ndarray of shape (n_components, n_features_in_)
        Directions ``w_j``, unit rows.
    biases_ : ndarray of shape (n_components,)
        Additive biases ``-b_j``: the features are
        ``relu(X @ weights_.T + biases_)``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names.

    See Also
    --------
    BiasedReLUKernel : The limit kernel of these features.
    sklearn_pt.neural_network.PartiallyTrainableRegressor : Trains part of them.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.kernels import BiasedReLUFeatures
    >>> X = np.random.default_rng(0).normal(size=(4, 3))
    >>> BiasedReLUFeatures(n_components=8, random_state=0).fit_transform(X).shape
    (4, 8)
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "init_scale": [Interval(Real, 0, None, closed="neither")],
        "project_to_sphere": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=256,
        *,
        init_scale=1.0,
        project_to_sphere=True,
        random_state=None,
    ):
        self.n_components = n_components
        self.init_scale = init_scale
        self.project_to_sphere = project_to_sphere
        self.random_state = random_state

    @keep_state_on_error
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the features; only the number of columns of ``X`` is used.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : BiasedReLUFeatures
        """
        X = validate_input(validate_data, self, X)
        weight, bias = spherical_biased_relu_init(
            X.shape[1],
            self.n_components,
            init_scale=self.init_scale,
            generator=make_generator(self.random_state),
            dtype=torch.float64,
        )
        self.weights_ = weight.numpy()
        self.biases_ = bias.numpy()
        return self

    def transform(self, X):
        """Map ``X`` to the features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        features : ndarray of shape (n_samples, n_components)
            In the floating dtype of ``X`` (float32 stays float32).
        """
        check_is_fitted(self)
        X = validate_input(
            validate_data, self, X, reset=False, dtype=[np.float64, np.float32]
        )
        if self.project_to_sphere:
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            X = X / np.maximum(norms, np.finfo(X.dtype).tiny)
        weights = self.weights_.astype(X.dtype, copy=False)
        biases = self.biases_.astype(X.dtype, copy=False)
        return np.maximum(X @ weights.T + biases, 0)

    @property
    def _n_features_out(self):
        return self.n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
