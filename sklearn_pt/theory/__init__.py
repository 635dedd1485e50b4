"""Pure functions for the formulas of the papers.

Partially trainable networks (He, Lao, Lu, Zhang, 2026):

- :func:`kappa_p` -- harmonic interpolation of the two mismatches;
- :func:`biased_relu_alpha`, :func:`biased_relu_kappa0` -- spherical
  biased-ReLU constants;
- :func:`approximation_bound` -- the high-probability approximation bound;
- :func:`proportion_for_reduction` -- the trainable proportion that captures
  a given fraction of the bound's reduction;
- :func:`bound_shape` -- the bound relative to its value at ``P = 0``;
- :func:`fit_mismatch_ratio` -- the mismatch ratio ``kappa_0 / kappa_1``
  whose bound shape fits a measured error curve;
- :func:`zonal_eigenvalues`, :func:`harmonic_multiplicity` -- Mercer
  eigenvalues of a zonal kernel on the sphere (Funk–Hecke);
- :func:`kolmogorov_width` -- the best approximation of the RKHS ball by
  ``m`` functions, the floor that the bound's ``m^-alpha`` tends to.

Two gradient steps (Moniri, Hassani, 2026):

- :func:`spike_count` -- outliers added to the weight spectrum by the second
  step (with ``activation``: only the orders whose Hermite coefficient is
  nonzero);
- :func:`hermite_coefficients` -- an activation's Hermite coefficients;
- :func:`two_step_signal` -- the low-rank signal of the two steps at
  a finite width, order by order, and :func:`bbp_threshold`, the size a
  signal needs to leave the bulk; :func:`predict_outlier_count`, the
  outliers of the signal plus a measured bulk (its spikes by the bulk's
  D-transform, and the bulk's heavy rows);
- :func:`cross_covariance_overlap` -- the chance-level overlap of a gradient
  step's rank-one term ``X^T y / n`` with ``theta``;
- :func:`order_strength` -- the size ``N ** (alpha2 - k (1/2 - alpha1))`` of
  the second step's order-``k`` term at a finite width.

Spectral method for phase retrieval (Lu, Li, 2020; Mondelli, Montanari, 2019):

- :func:`spectral_overlap` -- asymptotic squared overlap of
  :class:`~sklearn_pt.decomposition.SpectralEstimator` with ``theta*``
  (``preprocessing="max-overlap"``: Luo, Alghamdi, Lu 2019, the largest);
- :func:`spectral_threshold` -- the sample ratio above which it is positive;
- :func:`spectral_ratio_for_overlap` -- the sample ratio at which it reaches a
  given ``|cosine|``.

The Hessian's outlier of first-layer GD (Montanari, Wang, 2026), as a
matrix-weighted spectral method:

- :func:`weighted_resolvent`, :func:`weighted_lower_edge` -- the bulk of
  ``(1/n) sum_j M_j (x) x_j x_j^T``;
- :func:`aligned_outlier` -- its outlier along ``theta* (x) v``, and
  :func:`scalar_aligned_outlier`, :func:`scalar_outlier_threshold`, the
  ``m = 1`` case in Lu and Li's closed form;
- :func:`plateau_law`, :func:`plateau_weights` -- the weights ``M_j`` at the
  plateau of first-layer GD;
- :func:`hessian_threshold` -- ``delta_NN``, where the outlier appears.
"""

from ._hessian_threshold import (
    aligned_outlier,
    hessian_threshold,
    plateau_law,
    plateau_weights,
    scalar_aligned_outlier,
    scalar_outlier_threshold,
    weighted_lower_edge,
    weighted_resolvent,
)
from ._partial import (
    approximation_bound,
    biased_relu_alpha,
    biased_relu_kappa0,
    bound_shape,
    fit_mismatch_ratio,
    kappa_p,
    proportion_for_reduction,
)
from ._phase_retrieval import (
    spectral_overlap,
    spectral_ratio_for_overlap,
    spectral_threshold,
)
from ._two_step import (
    bbp_threshold,
    count_signal_outliers,
    cross_covariance_overlap,
    hermite_coefficients,
    order_strength,
    predict_outlier_count,
    spike_count,
    two_step_signal,
)
from ._zonal import harmonic_multiplicity, kolmogorov_width, zonal_eigenvalues

__all__ = [
    "aligned_outlier",
    "approximation_bound",
    "bbp_threshold",
    "biased_relu_alpha",
    "biased_relu_kappa0",
    "bound_shape",
    "count_signal_outliers",
    "cross_covariance_overlap",
    "fit_mismatch_ratio",
    "harmonic_multiplicity",
    "hermite_coefficients",
    "hessian_threshold",
    "kappa_p",
    "kolmogorov_width",
    "order_strength",
    "plateau_law",
    "plateau_weights",
    "predict_outlier_count",
    "proportion_for_reduction",
    "scalar_aligned_outlier",
    "scalar_outlier_threshold",
    "spectral_overlap",
    "spectral_ratio_for_overlap",
    "spectral_threshold",
    "spike_count",
    "two_step_signal",
    "weighted_lower_edge",
    "weighted_resolvent",
    "zonal_eigenvalues",
]
