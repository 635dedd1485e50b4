"""Overlaps of learned directions with the true ones, in [0, 1].

One module for the overlap metrics of the feature-learning studies:

* :func:`subspace_overlap` -- of two sets of directions (spans);
* :func:`neuron_overlap` -- of first-layer weights with the latent
  directions;
* :func:`eigenvector_overlap` -- of Hessian eigenvectors with them;
* :func:`estimator_overlap` -- of a fitted estimator's learned directions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "eigenvector_overlap",
    "estimator_overlap",
    "neuron_overlap",
    "subspace_overlap",
]


def subspace_overlap(A, B) -> float:
    """Overlap of the column spans of ``A`` and ``B``, in [0, 1].

    ``||Q_A^T Q_B||_F / sqrt(min(k_A, k_B))`` with ``Q`` orthonormal bases of
    the spans: the root mean squared cosine of the principal angles. For two
    vectors it is ``|<a, b>| / (|a| |b|)``.

    Parameters
    ----------
    A : array-like of shape (n_features,) or (n_features, k_A)
    B : array-like of shape (n_features,) or (n_features, k_B)

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.metrics import subspace_overlap
    >>> round(subspace_overlap(np.array([1.0, 1.0]), np.array([1.0, 0.0])), 4)
    0.7071
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    A = A.reshape(A.shape[0], -1)
    B = B.reshape(B.shape[0], -1)
    if A.shape[0] != B.shape[0]:
        raise ValueError(
            f"The two sets of directions live in different dimensions: {A.shape[0]} "
            f"and {B.shape[0]} rows."
        )
    qa, _ = np.linalg.qr(A)
    qb, _ = np.linalg.qr(B)
    k = min(qa.shape[1], qb.shape[1])
    return float(min(np.linalg.norm(qa.T @ qb) / math.sqrt(k), 1.0))


def neuron_overlap(weight, directions) -> float:
    """How well the first-layer weights have learned the latent directions.

    For one direction (``k = 1``): ``max_j |<w_j, theta>| / (|w_j| |theta|)``,
    the best neuron's cosine with ``theta``. For ``k > 1``: the
    :func:`subspace_overlap` of the span of the
    ``min(k, m)`` top right singular vectors of ``W`` with ``span(Theta)``.

    Parameters
    ----------
    weight : array-like of shape (width, n_features)
    directions : array-like of shape (n_features,) or (n_features, k)

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.metrics import neuron_overlap
    >>> W = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    >>> round(neuron_overlap(W, np.array([0.0, 1.0, 0.0])), 4)
    0.7071
    """
    W = np.asarray(weight, dtype=np.float64)
    Theta = np.asarray(directions, dtype=np.float64).reshape(W.shape[1], -1)
    if Theta.shape[1] == 1:
        return float(best_neuron_cosine(W, Theta[:, 0]))
    _, _, vt = np.linalg.svd(W, full_matrices=False)
    return subspace_overlap(vt[: min(Theta.shape[1], W.shape[0])].T, Theta)


def best_neuron_cosine(weights: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``max_j |<w_j, theta>| / (|w_j| |theta|)`` of first layers ``weights``
    of shape ``(..., width, d)`` (one or stacked): :func:`neuron_overlap` for
    one direction, of shape ``weights.shape[:-2]``."""
    theta = theta / np.linalg.norm(theta)
    norms = np.linalg.norm(weights, axis=-1)
    cosines = np.abs(weights @ theta) / np.where(norms > 0, norms, 1.0)
    return cosines.max(axis=-1)


def eigenvector_overlap(
    eigenvectors: np.ndarray,
    directions: np.ndarray,
    blocks: Sequence[tuple[int, int, int]],
) -> np.ndarray:
    """Fraction of each eigenvector that lies along the latent directions.

    An eigenvector ``v`` of the Hessian is a perturbation of all trained
    weights. Its first-layer part ``V`` (each block reshaped to
    ``(n_rows, n_features)``) moves neuron ``j`` along ``V[j]``; the overlap
    is ``||V Theta||_F / ||v||``, the norm of the part of ``v`` that moves
    first-layer weights inside ``span(Theta)``, relative to the whole of
    ``v``. It is 1 for a perturbation ``V = c theta^T`` (all neurons moved
    along ``theta``) and about ``sqrt(k / d)`` for a random direction.

    Parameters
    ----------
    eigenvectors : ndarray of shape (n_params, n_vectors)
    directions : ndarray of shape (n_features, k)
        Orthonormal columns (they are orthonormalised if they are not).
    blocks : sequence of (offset, n_rows, n_features)
        Where the first-layer weights sit in the flattened parameter vector.

    Returns
    -------
    ndarray of shape (n_vectors,)
    """
    basis, _ = np.linalg.qr(np.asarray(directions, dtype=float))
    vectors = np.asarray(eigenvectors, dtype=float)
    squared = np.zeros(vectors.shape[1])
    for offset, n_rows, n_features in blocks:
        part = vectors[offset : offset + n_rows * n_features]
        part = part.T.reshape(vectors.shape[1], n_rows, n_features)
        squared += np.square(part @ basis).sum(axis=(1, 2))
    norms = np.linalg.norm(vectors, axis=0)
    return np.sqrt(squared) / np.where(norms > 0, norms, 1.0)


def estimator_overlap(estimator, directions) -> float:
    """Overlap of a fitted estimator's learned directions with the true ones.

    Uses the estimator's ``overlap(directions)`` method when it has one (as
    :class:`~sklearn_pt.decomposition.SpectralEstimator`), else its first-layer
    weights ``first_layer_weights_`` (as
    :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`) through
    :func:`neuron_overlap`. The last step of a
    pipeline is used.

    Parameters
    ----------
    estimator : fitted estimator
    directions : ndarray of shape (n_features,) or (n_features, k)

    Returns
    -------
    float in [0, 1]
    """
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    if hasattr(final, "overlap"):
        return float(final.overlap(directions))
    weights = getattr(final, "first_layer_weights_", None)
    if weights is not None and np.ndim(weights) == 2:
        return neuron_overlap(weights, directions)
    raise TypeError(
        f"Cannot measure the overlap of a {type(final).__name__}: it has neither an "
        "overlap(directions) method nor a 2-D first_layer_weights_ attribute. Pass "
        "overlap=callable(estimator, directions) to sample_ratio_curve."
    )
