"""Estimators of latent directions, shaped like scikit-learn's decomposition.

- :class:`SpectralEstimator` -- the spectral method for phase retrieval and
  index models (top eigenvectors of a preprocessed second-moment matrix), a
  transformer with ``directions_`` as PCA has ``components_``;
- :func:`optimal_preprocessing` -- Mondelli--Montanari's preprocessing
  (optimal for the weak-recovery threshold);
- :func:`max_overlap_preprocessing` -- Luo--Alghamdi--Lu's ``1 - 1/y``
  (the largest overlap at every ``delta``);
- :func:`spectral_matrix` -- the matrix ``(1/n) sum_i T(y_i) x_i x_i^T``.
"""

from ._spectral import (
    SpectralEstimator,
    max_overlap_preprocessing,
    optimal_preprocessing,
    spectral_matrix,
)

__all__ = [
    "SpectralEstimator",
    "max_overlap_preprocessing",
    "optimal_preprocessing",
    "spectral_matrix",
]
