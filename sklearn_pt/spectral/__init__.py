"""Spectral analysis of trained networks.

- :class:`WeightSpectrum` -- singular values of a weight matrix, its bulk
  edge (Marchenko--Pastur, fitted, or from a null reference), outliers and
  their alignment with target directions;
- :func:`fitted_bulk_edge` -- the bulk edge and outlier count of a spectrum;
- :func:`soft_edge_test` -- a sequential Tracy--Widom outlier test above a
  fitted soft edge, with a known false-positive rate;
- :func:`tracy_widom_quantile` -- quantiles of the ``TW1`` law;
- :func:`null_weights` -- the weights of the same run on permuted targets;
- :func:`hessian_spectrum` -- extreme eigenpairs of the empirical-risk
  Hessian by Hessian-vector products and Lanczos;
- :class:`HessianMonitor` -- the smallest Hessian eigenvalues along training.

"""

from ._hessian import HessianMonitor, hessian_spectrum
from ._weights import (
    WeightSpectrum,
    fitted_bulk_edge,
    null_weights,
    soft_edge_test,
    tracy_widom_quantile,
)

__all__ = [
    "HessianMonitor",
    "WeightSpectrum",
    "fitted_bulk_edge",
    "hessian_spectrum",
    "null_weights",
    "soft_edge_test",
    "tracy_widom_quantile",
]
