"""The spectral estimator of the latent directions of an index model."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from .._base import keep_state_on_error, validate_input
from .._compat import Interval, StrOptions, _fit_context, validate_data
from ..metrics import subspace_overlap

__all__ = [
    "PREPROCESSINGS",
    "SpectralEstimator",
    "max_overlap_preprocessing",
    "optimal_preprocessing",
    "spectral_matrix",
]

WEAK_RECOVERY_THRESHOLD = 0.5
"""``delta_u``: below it no estimator correlates with ``theta*`` in noiseless
real phase retrieval; above it the optimal spectral method does (Mondelli and
Montanari, 2018)."""

PREPROCESSINGS = ("optimal", "max-overlap", "trimming", "identity")

_DENOMINATOR_FLOOR = 1e-8
"""At ``delta <= delta_u``, ``T(y) = 1 - 1/y``; the denominator is floored so
that ``T(0)`` is ``-1e8`` rather than ``-inf``."""


def optimal_preprocessing(y: np.ndarray, delta: float) -> np.ndarray:
    """Mondelli--Montanari preprocessing of phase-retrieval responses.

    ``T(y) = (y_+ - 1) / (y_+ + sqrt(delta / delta_u) - 1)`` with
    ``y_+ = max(y, 0)``, ``y`` normalised to mean one, and
    ``delta_u = 1/2``, the weak-recovery threshold of real phase retrieval.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Responses, normalised to mean one (``E[<theta, x>^2] = 1`` for a unit
        ``theta``).
    delta : float
        The sample ratio ``n / d``.

    Returns
    -------
    ndarray of shape (n_samples,)
        Values in ``[-1 / (c - 1), 1)``, ``c = sqrt(delta / delta_u)``.

    Notes
    -----
    Mondelli and Montanari (2018) give ``T*_delta(y) = (y_+ - 1) /
    (y_+ + sqrt(delta) - 1)`` for *complex* phase retrieval, where
    ``delta_u = 1``; this is also the form used by PhasePack. Written for any
    ``delta_u`` the constant is ``sqrt(delta / delta_u)``, which is what this
    function uses with the real model's ``delta_u = 1/2``: ``T`` is then
    bounded above (needed for the top eigenvector to be informative) for
    every ``delta >= delta_u``, and equals ``1 - 1/y`` at ``delta = delta_u``.
    (The complex-case constant ``sqrt(delta)`` would make ``T`` unbounded
    for ``1/2 < delta < 1``.) Below ``delta_u`` the constant is held at 1,
    and the denominator is floored at ``1e-8`` so that ``T(0)`` stays finite.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.decomposition import optimal_preprocessing
    >>> optimal_preprocessing(np.array([0.0, 1.0, 3.0]), delta=2.0).tolist()
    [-1.0, 0.0, 0.5]
    """
    constant = math.sqrt(max(delta, WEAK_RECOVERY_THRESHOLD) / WEAK_RECOVERY_THRESHOLD)
    y_plus = np.maximum(y, 0.0)
    return (y_plus - 1.0) / np.maximum(y_plus + constant - 1.0, _DENOMINATOR_FLOOR)


def max_overlap_preprocessing(y: np.ndarray) -> np.ndarray:
    """Luo--Alghamdi--Lu preprocessing of phase-retrieval responses.

    ``T(y) = 1 - 1/y_+`` with ``y_+ = max(y, 0)`` and ``y`` normalised to
    mean one: the preprocessing that maximises the limiting overlap of the
    spectral estimate with ``theta*`` at every ``delta`` in noiseless real
    phase retrieval (Luo, Alghamdi and Lu, 2019), where
    :func:`optimal_preprocessing` (Mondelli--Montanari) is optimal for the
    weak-recovery *threshold*. It is :func:`optimal_preprocessing` with its
    constant ``sqrt(delta / delta_u)`` held at 1, and the same floor of the
    denominator, so that ``T(0) = -1e8`` rather than ``-inf``.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Responses, normalised to mean one.

    Returns
    -------
    ndarray of shape (n_samples,)
        Values below 1.

    References
    ----------
    Luo, Alghamdi, Lu (2019), "Optimal spectral initialization for signal
    recovery with applications to phase retrieval", IEEE Transactions on
    Signal Processing 67(9), 2347--2356.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.decomposition import max_overlap_preprocessing
    >>> max_overlap_preprocessing(np.array([0.5, 1.0, 4.0])).tolist()
    [-1.0, 0.0, 0.75]
    """
    y_plus = np.maximum(y, 0.0)
    return (y_plus - 1.0) / np.maximum(y_plus, _DENOMINATOR_FLOOR)


def _preprocess(y, preprocessing, delta, trimming_threshold) -> np.ndarray:
    if callable(preprocessing):
        values = np.asarray(preprocessing(y), dtype=np.float64)
        if values.shape != y.shape:
            raise ValueError(
                f"preprocessing returned shape {values.shape}; expected {y.shape}, "
                "one value per response."
            )
        return values
    if preprocessing == "identity":
        return y
    if preprocessing == "trimming":
        level = trimming_threshold * np.mean(np.abs(y))
        return np.where(np.abs(y) <= level, y, 0.0)
    mean = np.mean(y)
    if not mean > 0:
        raise ValueError(
            f"preprocessing={preprocessing!r} is a phase-retrieval preprocessing "
            f"and needs responses with a positive mean (got mean {mean:.3g}). Use "
            "preprocessing='identity' or 'trimming', or a callable, for other "
            "targets."
        )
    if preprocessing == "max-overlap":
        return max_overlap_preprocessing(y / mean)
    return optimal_preprocessing(y / mean, delta)


def spectral_matrix(X: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``D = (1/n) sum_i values_i x_i x_i^T``, of shape (n_features, n_features).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.decomposition import spectral_matrix
    >>> spectral_matrix(np.eye(2), np.array([2.0, 4.0]))
    array([[1., 0.],
           [0., 2.]])
    """
    X = np.asarray(X, dtype=np.float64)
    return (X * np.asarray(values, dtype=np.float64)[:, None]).T @ X / X.shape[0]


class SpectralEstimator(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Spectral estimator of the latent directions of an index model.

    For data ``y = g(Theta*^T x)`` with ``x ~ N(0, I_d)``, the directions
    are estimated by the top eigenvectors of the preprocessed second-moment
    matrix ``D = (1/n) sum_i T(y_i) x_i x_i^T``. For noiseless phase retrieval
    (``y = <theta*, x>^2``) the optimal preprocessing correlates with
    ``theta*`` as soon as ``delta = n/d > 1/2``, the threshold ``delta_alg``
    below which no polynomial-time method does (Mondelli and Montanari, 2018).
    It is the baseline, and the initialisation ``init="spectral"``, of
    :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`.

    Parameters
    ----------
    n_components : int, default=1
        Number of directions ``k`` (eigenvectors of the ``k`` largest
        eigenvalues): 1 for phase retrieval and single-index models, the
        number of latent directions for a multi-index model.
    preprocessing : {"optimal", "max-overlap", "trimming", "identity"} or \
callable, default="optimal"
        The map ``T``:

        - ``"optimal"``: Mondelli--Montanari's
          ``T(y) = (y_+ - 1) / (y_+ + sqrt(delta / delta_u) - 1)``, ``y``
          normalised to mean one, ``delta_u = 1/2`` (see
          :func:`optimal_preprocessing` for this convention): optimal for the
          weak-recovery threshold. Needs responses with a positive mean;
          meant for phase retrieval.
        - ``"max-overlap"``: Luo, Alghamdi and Lu's ``T(y) = 1 - 1/y_+``,
          ``y`` normalised to mean one
          (:func:`max_overlap_preprocessing`): the largest limiting overlap
          at every ``delta`` (squared overlap 0.231, 0.639, 0.925 at
          ``delta = 1, 2, 4``, against 0.206, 0.486, 0.705 for
          ``"optimal"``; :func:`~sklearn_pt.theory.spectral_overlap`). Same
          conditions as ``"optimal"``.
        - ``"trimming"``: ``T(y) = y 1{|y| <= trimming_threshold * mean|y|}``,
          the truncated spectral initialisation of Chen and Candès (2015).
        - ``"identity"``: ``T(y) = y``; asymptotically uninformative for
          phase retrieval (the top eigenvector localises on the largest
          responses), informative at moderate sizes.
        - a callable mapping the ``(n_samples,)`` responses to the
          ``(n_samples,)`` values ``T(y)``.
    trimming_threshold : float, default=9.0
        The cut of ``"trimming"``, in units of ``mean|y|`` (Chen and Candès'
        ``alpha_y^2`` with ``alpha_y = 3``).

    Attributes
    ----------
    directions_ : ndarray of shape (n_features, n_components)
        Orthonormal estimated directions, by decreasing eigenvalue; the sign
        of each column makes its largest-magnitude entry positive.
    components_ : ndarray of shape (n_components, n_features)
        ``directions_.T``, as in :class:`~sklearn.decomposition.PCA`.
    eigenvalues_ : ndarray of shape (n_components,)
        The corresponding eigenvalues of ``D``, decreasing.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    sklearn_pt.neural_network.FirstLayerGDRegressor : Gradient descent on a
        two-layer network, initialised randomly or by this estimator.
    sklearn.decomposition.PCA : The unsupervised counterpart (``T = 1``).

    Notes
    -----
    ``transform`` projects onto the directions, ``X @ directions_``. The
    matrix ``D`` is formed and diagonalised densely (``O(n d^2 + d^3)``).

    References
    ----------
    Mondelli, Montanari (2018), "Fundamental Limits of Weak Recovery with
    Applications to Phase Retrieval", Foundations of Computational
    Mathematics.

    Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural
    Networks".

    Chen, Candès (2015), "Solving Random Quadratic Systems of Equations Is
    Nearly as Easy as Solving Linear Systems".

    Luo, Alghamdi, Lu (2019), "Optimal Spectral Initialization for Signal
    Recovery with Applications to Phase Retrieval", IEEE Transactions on
    Signal Processing.

    Examples
    --------
    >>> from sklearn_pt.datasets import make_phase_retrieval
    >>> from sklearn_pt.decomposition import SpectralEstimator
    >>> X, y, theta = make_phase_retrieval(600, 100, random_state=0,
    ...                                    return_directions=True)
    >>> spectral = SpectralEstimator().fit(X, y)
    >>> spectral.directions_.shape
    (100, 1)
    >>> bool(spectral.overlap(theta) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "preprocessing": [StrOptions(set(PREPROCESSINGS)), callable],
        "trimming_threshold": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self, n_components=1, *, preprocessing="optimal", trimming_threshold=9.0
    ):
        self.n_components = n_components
        self.preprocessing = preprocessing
        self.trimming_threshold = trimming_threshold

    @keep_state_on_error
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Estimate the directions from ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs, assumed isotropic (``E[x x^T] = I``).
        y : array-like of shape (n_samples,)
            Responses.

        Returns
        -------
        self : SpectralEstimator
            The fitted estimator.
        """
        X, y = validate_input(
            validate_data, self, X, y, y_numeric=True, dtype=[np.float64, np.float32]
        )
        n_samples, n_features = X.shape
        if self.n_components > n_features:
            raise ValueError(
                f"n_components={self.n_components} must be at most n_features="
                f"{n_features}."
            )
        values = _preprocess(
            np.asarray(y, dtype=np.float64),
            self.preprocessing,
            n_samples / n_features,
            self.trimming_threshold,
        )
        matrix = spectral_matrix(X, values)
        eigenvalues, eigenvectors = scipy.linalg.eigh(
            matrix, subset_by_index=[n_features - self.n_components, n_features - 1]
        )
        eigenvalues, eigenvectors = eigenvalues[::-1], eigenvectors[:, ::-1]
        rows = np.argmax(np.abs(eigenvectors), axis=0)
        signs = np.sign(eigenvectors[rows, np.arange(eigenvectors.shape[1])])
        self.directions_ = eigenvectors * np.where(signs == 0, 1.0, signs)
        self.components_ = self.directions_.T
        self.eigenvalues_ = eigenvalues
        self._n_features_out = self.n_components
        return self

    def transform(self, X):
        """Project ``X`` onto the estimated directions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            ``X @ directions_``, in the floating dtype of ``X``.
        """
        check_is_fitted(self)
        X = validate_input(
            validate_data, self, X, reset=False, dtype=[np.float64, np.float32]
        )
        return (X @ self.directions_.astype(X.dtype, copy=False)).astype(
            X.dtype, copy=False
        )

    def overlap(self, theta) -> float:
        """Overlap of the estimated directions with the true ones.

        Parameters
        ----------
        theta : array-like of shape (n_features,) or (n_features, k)
            The true direction(s) ``Theta*``.

        Returns
        -------
        float
            ``|<v, theta>| / |theta|`` for one direction on each side; in
            general :func:`~sklearn_pt.metrics.subspace_overlap` of
            ``directions_`` and ``theta``.
        """
        check_is_fitted(self)
        theta = check_array(theta, ensure_2d=False, dtype=np.float64)
        return subspace_overlap(self.directions_, theta.reshape(len(theta), -1))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
