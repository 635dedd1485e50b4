"""Linear-algebra estimators of latent directions.

- :class:`SpectralEstimator` -- the spectral method for phase retrieval and
  index models (top eigenvectors of a preprocessed second-moment matrix);
- :func:`optimal_preprocessing` -- Mondelli--Montanari's preprocessing;
- :func:`spectral_matrix` -- the matrix ``(1/n) sum_i T(y_i) x_i x_i^T``;
- :func:`subspace_overlap` -- overlap of two sets of directions.
"""

from ._spectral import (
    SpectralEstimator,
    optimal_preprocessing,
    spectral_matrix,
    subspace_overlap,
)

__all__ = [
    "SpectralEstimator",
    "optimal_preprocessing",
    "spectral_matrix",
    "subspace_overlap",
]
