"""Spectral analysis of trained networks.

- :class:`WeightSpectrum` -- singular values of a weight matrix, its bulk
  edge (Marchenko--Pastur, fitted, or from a null reference), outliers and
  their alignment with target directions;
- :func:`fitted_bulk_edge` -- the bulk edge and outlier count of a spectrum;
- :func:`null_weights` -- the weights of the same run on permuted targets;
- :func:`hessian_spectrum` -- extreme eigenpairs of the empirical-risk
  Hessian by Hessian-vector products and Lanczos;
- :class:`HessianMonitor` -- the smallest Hessian eigenvalues along training;
- :func:`eigenvector_overlap` -- overlap of Hessian eigenvectors with latent
  directions.
"""

from ._hessian import HessianMonitor, eigenvector_overlap, hessian_spectrum
from ._weights import WeightSpectrum, fitted_bulk_edge, null_weights

__all__ = [
    "HessianMonitor",
    "WeightSpectrum",
    "eigenvector_overlap",
    "fitted_bulk_edge",
    "hessian_spectrum",
    "null_weights",
]
