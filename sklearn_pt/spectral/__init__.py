"""Spectral analysis of trained networks.

- :class:`WeightSpectrum` -- singular values of a weight matrix, its bulk
  edge (Marchenko--Pastur, fitted, or from a null reference), outliers and
  their alignment with target directions;
- :func:`fitted_bulk_edge` -- the bulk edge and outlier count of a spectrum;
- :func:`null_weights` -- the weights of the same run on permuted targets.
"""

from ._weights import WeightSpectrum, fitted_bulk_edge, null_weights

__all__ = ["WeightSpectrum", "fitted_bulk_edge", "null_weights"]
