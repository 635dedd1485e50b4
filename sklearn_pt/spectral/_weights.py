"""Singular-value spectra of weight matrices: bulk edges, outliers, alignment.

A first-layer weight matrix ``W`` of shape ``(N, d)`` initialised with i.i.d.
``N(0, 1/d)`` entries has singular values filling the Marchenko--Pastur (MP)
bulk ``[|1 - sqrt(N/d)|, 1 + sqrt(N/d)]``. Training adds low-rank spikes,
whose singular values leave the bulk (outliers), and a full-rank part that
broadens the bulk. :class:`WeightSpectrum` separates the two.
"""

from __future__ import annotations

import functools
import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import torch
from scipy.integrate import quad, solve_ivp
from scipy.linalg import eigh
from scipy.linalg.blas import dsyrk
from scipy.optimize import brentq
from scipy.special import airy
from sklearn.base import BaseEstimator, clone
from sklearn.utils import Bunch, check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._base import keep_state_on_error, validate_input
from .._compat import Interval, StrOptions, _fit_context
from .._plotting import import_matplotlib
from .._torch_bridge import TORCH_PARAMETER_CONSTRAINTS, as_tensor, resolve_device

__all__ = [
    "WeightSpectrum",
    "fitted_bulk_edge",
    "null_weights",
    "soft_edge_test",
    "tracy_widom_quantile",
]

_EDGE_FIT_POINTS = 5
"""Eigenvalues used in each soft-edge regression (Onatski, 2010)."""
_EDGE_FIT_ITERATIONS = 20

_TW_WINDOW = 10
"""Bulk eigenvalues in each Tracy--Widom edge fit of :func:`soft_edge_test`:
few enough that the square-root law holds over them, enough to fit it (see
:ref:`defaults_spectra` for how it was chosen)."""
_TW_INDEX_OFFSET = 0.75
"""The ``i``-th largest eigenvalue of a real (beta = 1) soft edge sits, in
Tracy--Widom units, at about ``-(3 pi (i - 3/4) / 2) ** (2/3)``: the edge
density ``sqrt(-x) / pi`` counts ``(2 / (3 pi)) (-x) ** (3/2)`` eigenvalues
above ``x``, and the offset 3/4 matches the mean locations of the top
eigenvalues of white Wishart matrices (:ref:`defaults_spectra`)."""
_PAINLEVE_START = 8.0
"""Where the Hastings--McLeod solution is started from the Airy function
(``q(s) - Ai(s) = O(Ai(s) ** 3)``, about 1e-25 there)."""
_PAINLEVE_END = -8.0
"""Where the table of ``F1`` stops (``F1(-8)`` is about 1e-12)."""


def _mp_edges(n_rows: int, n_cols: int, scale: float) -> tuple[float, float]:
    """Singular-value support ``scale * |sqrt(n_rows) -+ sqrt(n_cols)|``."""
    low = scale * abs(math.sqrt(n_rows) - math.sqrt(n_cols))
    high = scale * (math.sqrt(n_rows) + math.sqrt(n_cols))
    return low, high


def _mp_singular_value_density(s, n_rows: int, n_cols: int, scale: float):
    """Density of the singular values of an ``n_rows x n_cols`` matrix with
    i.i.d. centred entries of standard deviation ``scale`` (MP law).

    The ``min(n_rows, n_cols)`` nonzero squared singular values follow the MP
    law of ratio ``gamma = min/max`` and scale ``t = scale**2 * max``; the
    density of ``s`` is ``2 s`` times the MP density at ``s**2``.
    """
    s = np.asarray(s, dtype=float)
    p, q = min(n_rows, n_cols), max(n_rows, n_cols)
    gamma, t = p / q, scale**2 * q
    lam = s**2
    lam_minus, lam_plus = (
        t * (1 - math.sqrt(gamma)) ** 2,
        t * (1 + math.sqrt(gamma)) ** 2,
    )
    inside = (lam > lam_minus) & (lam < lam_plus)
    density = np.zeros_like(s)
    li = lam[inside]
    density[inside] = np.sqrt((lam_plus - li) * (li - lam_minus)) / (
        2 * math.pi * gamma * t * li
    )
    return 2 * s * density


def gram_matrix(W: torch.Tensor) -> torch.Tensor | None:
    """``W^T W`` when ``N >= d`` (the spectrum is computed from it), else None.

    A float64 ``W`` on a CPU goes through BLAS's ``syrk``, which forms one
    triangle (half the products of a matrix product); the other is mirrored.
    """
    if W.shape[0] < W.shape[1]:
        return None
    if W.device.type != "cpu" or W.dtype != torch.float64:
        return W.T @ W
    # W^T of a C-ordered W is Fortran-ordered: syrk reads it without a copy
    upper = dsyrk(1.0, W.detach().numpy().T)
    return torch.from_numpy(upper + np.triu(upper, 1).T)


def singular_values(W: torch.Tensor, gram: torch.Tensor | None = None) -> np.ndarray:
    """Singular values of ``W``, in decreasing order.

    For ``N >= d`` the square roots of the eigenvalues of the ``d x d`` Gram
    matrix ``W^T W`` (``gram``, :func:`gram_matrix`; no vectors: a third of
    the work of ``eigh``); they agree with an SVD's to about ``eps *
    s_max^2 / s``, 3e-14 of the largest at ``N = d = 2000``, far below any
    bulk-edge resolution. For ``N < d``, the SVD's.
    """
    if W.shape[0] < W.shape[1]:
        return torch.linalg.svdvals(W).cpu().numpy()
    gram = gram_matrix(W) if gram is None else gram
    if gram.device.type == "cpu":
        eigenvalues = eigh(gram.numpy(), eigvals_only=True)[::-1]
    else:
        eigenvalues = torch.linalg.eigvalsh(gram).flip(0).cpu().numpy()
    return np.sqrt(np.clip(eigenvalues, 0.0, None))


def top_right_singular_vectors(
    W: torch.Tensor, k: int, gram: torch.Tensor | None = None
) -> np.ndarray:
    """The right singular vectors of ``W``'s ``k`` largest singular values,
    as the rows of a ``(k, d)`` array, largest first.

    On a CPU with ``N >= d``, only these ``k`` eigenvectors of the Gram
    matrix ``W^T W`` (``gram``, :func:`gram_matrix`) are computed (LAPACK's
    ``syevr`` on an index range, by :func:`scipy.linalg.eigh`), which skips
    the other ``d - k``; elsewhere the full ``eigh`` (or, for ``N < d``,
    the thin SVD) and its top ``k``. Each vector's sign is LAPACK's.
    """
    n_rows, n_cols = W.shape
    k = min(int(k), n_rows, n_cols)
    if k == 0:
        return np.zeros((0, n_cols))
    if n_rows < n_cols:
        return torch.linalg.svd(W, full_matrices=False)[2][:k].cpu().numpy()
    gram = gram_matrix(W) if gram is None else gram
    if gram.device.type == "cpu":
        _, vectors = eigh(gram.numpy(), subset_by_index=(n_cols - k, n_cols - 1))
        return vectors[:, ::-1].T.copy()
    return torch.linalg.eigh(gram)[1].flip(1)[:, :k].T.cpu().numpy()


def fitted_bulk_edge(singular_values, *, max_outliers: int = 20) -> tuple[float, int]:
    """Locate the upper edge of the bulk of a spectrum and count the outliers.

    The edge-spacing estimator of Onatski (2010): near a square-root
    (Tracy--Widom) soft edge the eigenvalues ``lam_j = s_j**2`` of the bulk
    decrease like ``E - b * j**(2/3)``. The slope ``b`` is fitted by least
    squares to the 5 largest eigenvalues below the candidate outliers, and the
    outliers are the eigenvalues above the last gap ``lam_i - lam_{i+1}``
    of at least ``2 b`` (among the first ``max_outliers``); the two steps are
    iterated until the count is stable.

    Parameters
    ----------
    singular_values : array-like of shape (p,)
        The spectrum, in any order.
    max_outliers : int, default=20
        Largest number of outliers considered (clipped to ``p - 6``).

    Returns
    -------
    edge : float
        The largest singular value of the bulk (the ``n_outliers + 1``-th).
    n_outliers : int
        Number of singular values above the bulk.

    References
    ----------
    .. [1] Onatski (2010), "Determining the Number of Factors from Empirical
       Distribution of Eigenvalues", The Review of Economics and Statistics
       92(4).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.spectral import fitted_bulk_edge
    >>> rng = np.random.default_rng(0)
    >>> W = rng.standard_normal((300, 300)) / np.sqrt(300)
    >>> W += 3.0 * np.outer(rng.standard_normal(300), rng.standard_normal(300)) / 300
    >>> edge, count = fitted_bulk_edge(np.linalg.svd(W, compute_uv=False))
    >>> count, round(edge, 1)
    (1, 2.0)
    """
    s = np.sort(np.asarray(singular_values, dtype=float).ravel())[::-1]
    lam = s**2
    r_max = min(int(max_outliers), lam.size - _EDGE_FIT_POINTS - 1)
    if r_max < 1:
        return float(s[0]), 0
    gaps = lam[:r_max] - lam[1 : r_max + 1]  # gaps[i - 1] = lam_i - lam_{i+1}
    j = r_max + 1  # 1-based index of the first eigenvalue of the fit
    count = 0
    for _ in range(_EDGE_FIT_ITERATIONS):
        window = lam[j - 1 : j - 1 + _EDGE_FIT_POINTS]
        x = (j - 1 + np.arange(_EDGE_FIT_POINTS)) ** (2 / 3)
        slope = np.polyfit(x, window, 1)[0]
        delta = 2 * abs(slope)
        big = np.flatnonzero(gaps >= delta)
        count = int(big[-1] + 1) if big.size else 0
        if count + 1 == j:
            break
        j = count + 1
    return float(s[count]), count


@functools.lru_cache(maxsize=1)
def _tracy_widom_cdf_table() -> tuple[np.ndarray, np.ndarray]:
    """``F1`` on a grid of ``s``, from the Hastings--McLeod solution.

    ``q'' = s q + 2 q^3`` with ``q(s) ~ Ai(s)`` as ``s -> inf``, integrated
    from ``s = 8`` downwards (the direction in which the Airy solution is the
    growing one, so the integration is stable), together with
    ``I(s) = int_s^inf q``, ``U(s) = int_s^inf q^2`` and
    ``V(s) = int_s^inf (x - s) q(x)^2 dx`` (``V' = -U``); then
    ``F2 = exp(-V)`` and ``F1 = exp(-(I + V) / 2)`` (Tracy, Widom 1996).
    """
    s0 = _PAINLEVE_START
    ai, aip, _, _ = airy(s0)
    start = [
        ai,
        aip,
        # int_s^inf Ai by quadrature: scipy.special.itairy(8)[0] returns
        # 0.238, not the 1/3 - 1e-8 that int_0^8 Ai is, which shifted F1.
        quad(lambda x: airy(x)[0], s0, np.inf, epsabs=1e-20)[0],
        aip**2 - s0 * ai**2,  # int_s^inf Ai^2 = Ai'(s)^2 - s Ai(s)^2
        0.0,  # int_s^inf (x - s) Ai(x)^2 dx < 1e-16 at s = 8
    ]

    def rhs(s, state):
        q, dq, _, u, _ = state
        return [dq, s * q + 2 * q**3, -q, -(q**2), -u]

    # Below s = -8 the numerical solution leaves Hastings--McLeod (any error
    # excites the unstable Ablowitz--Segur directions), but F1(-8) ~ 1e-12,
    # so the table stops there.
    grid = np.linspace(s0, _PAINLEVE_END, 3201)
    solution = solve_ivp(
        rhs,
        (s0, grid[-1]),
        start,
        t_eval=grid,
        method="DOP853",
        rtol=1e-12,
        atol=1e-15,
    )
    integral, v = solution.y[2], solution.y[4]
    return grid[::-1], np.exp(-(integral + v) / 2)[::-1]


def tracy_widom_quantile(probability) -> float:
    """Quantile of the Tracy--Widom law of order 1 (``TW1``).

    ``TW1`` is the limit law of the largest eigenvalue of a real white
    Wishart (or GOE) matrix, centred at the spectral edge and scaled by its
    fluctuation, of order ``N ** (-2/3)`` relative to the edge. Its
    distribution function ``F1`` is computed here from the Hastings--McLeod
    solution of the Painlevé II equation (Tracy, Widom 1996), integrated
    numerically once and cached; the quantile is the root of
    ``F1(s) = probability``.

    Parameters
    ----------
    probability : float
        In ``(0, 1)``, at most ``1 - 1e-12``.

    Returns
    -------
    float
        ``F1^{-1}(probability)``.

    References
    ----------
    .. [1] Tracy, Widom (1996), "On orthogonal and symplectic matrix
       ensembles", Communications in Mathematical Physics 177.
    .. [2] Chiani (2014), "Distribution of the largest eigenvalue for real
       Wishart and Gaussian random matrices and a simple approximation for
       the Tracy-Widom distribution", Journal of Multivariate Analysis 129:
       the Gamma approximation that the tests compare with.

    Examples
    --------
    >>> from sklearn_pt.spectral import tracy_widom_quantile
    >>> round(tracy_widom_quantile(0.95), 2), round(tracy_widom_quantile(0.5), 2)
    (0.98, -1.27)
    """
    p = float(probability)
    grid, cdf = _tracy_widom_cdf_table()
    if not cdf[0] < p < cdf[-1]:
        raise ValueError(
            f"probability must lie in ({cdf[0]:.1e}, 1 - {1 - cdf[-1]:.1e}) "
            f"(the range of the tabulated TW1 distribution function); got "
            f"{probability!r}. For an outlier test at level alpha pass "
            "1 - alpha, e.g. 0.95."
        )
    return float(brentq(lambda s: np.interp(s, grid, cdf) - p, grid[0], grid[-1]))


def soft_edge_test(
    singular_values, *, level: float = 0.05, max_outliers: int = 20
) -> Bunch:
    """Count the outliers above a fitted bulk edge, at a known error rate.

    A sequential test on the eigenvalues ``lam_1 >= lam_2 >= ...`` (the
    squared singular values). Near a square-root (soft) edge ``mu`` with
    Tracy--Widom scale ``sigma`` the ``i``-th largest eigenvalue of the bulk
    sits at about ``mu - sigma * (3 pi (i - 3/4) / 2) ** (2/3)``, and the
    largest one is ``mu + sigma * TW1``. For ``k = 0, 1, ...``: ``mu`` and
    ``sigma`` are fitted by least squares to the 10 eigenvalues
    ``lam_{k+2}, ..., lam_{k+11}`` taken as the bulk's 2nd to 11th (so the
    value tested takes no part in its own threshold), and ``lam_{k+1}`` is
    an outlier when it exceeds ``mu + sigma * q``, ``q`` the
    ``1 - level`` quantile of ``TW1`` (:func:`tracy_widom_quantile`); the
    test stops at the first value that is not. On a bulk without outliers
    it finds one with probability about ``level``. The fit adapts to a bulk
    broadened or deformed by training, as long as its edge is a soft one.

    Parameters
    ----------
    singular_values : array-like of shape (p,)
        The spectrum, in any order.
    level : float, default=0.05
        The false-positive rate on a bulk without outliers, in ``(0, 1)``.
    max_outliers : int, default=20
        Largest count returned.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        In singular-value units: ``edge`` (float, the fitted soft edge
        ``sqrt(mu)`` of the bulk), ``threshold`` (float,
        ``sqrt(mu + sigma * q)``: values above it are outliers), ``tw_scale``
        (float, ``sigma``, the Tracy--Widom scale of the squared singular
        values) and ``n_outliers`` (int). Spectra of fewer than 12 values
        cannot be fitted: their edge and threshold are the largest value,
        with no outlier.

    Notes
    -----
    The statistic ``(lam_1 - mu) / sigma`` is affine-invariant, so its law
    does not depend on the edge's location and scale, and fitting ``mu``
    and ``sigma`` costs little: at moderate sizes the false-positive rate is
    close to ``level``, a little above it at small ``N`` (the finite-size
    shape of the edge). The measured rates, on white matrices and on a
    gradient step with a target independent of ``X``, are in
    :ref:`defaults_spectra`.

    References
    ----------
    .. [1] Onatski (2009), "Testing hypotheses about the number of factors
       in large factor models", Econometrica 77(5): the edge-fitting idea.
    .. [2] Johnstone (2001), "On the distribution of the largest eigenvalue
       in principal components analysis", The Annals of Statistics 29(2).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.spectral import soft_edge_test
    >>> rng = np.random.default_rng(0)
    >>> W = rng.standard_normal((300, 300)) / np.sqrt(300)
    >>> W += 3.0 * np.outer(rng.standard_normal(300), rng.standard_normal(300)) / 300
    >>> result = soft_edge_test(np.linalg.svd(W, compute_uv=False))
    >>> result.n_outliers, round(result.edge, 1)
    (1, 2.0)
    """
    s = np.sort(np.asarray(singular_values, dtype=float).ravel())[::-1]
    lam = s**2
    if lam.size < _TW_WINDOW + 2:
        return _soft_edge(float(s[0]), float(s[0]), 0.0, 0)
    q = tracy_widom_quantile(1 - level)
    index = np.arange(2, _TW_WINDOW + 2)
    design = np.c_[
        np.ones(_TW_WINDOW), -((1.5 * math.pi * (index - _TW_INDEX_OFFSET)) ** (2 / 3))
    ]
    k_max = min(int(max_outliers), lam.size - _TW_WINDOW - 1)
    k = 0
    while True:
        window = lam[k + 1 : k + 1 + _TW_WINDOW]
        (mu, sigma), *_ = np.linalg.lstsq(design, window, rcond=None)
        sigma = max(float(sigma), 0.0)
        cut = mu + sigma * q
        if k >= k_max or not lam[k] > cut:
            break
        k += 1
    return _soft_edge(
        float(math.sqrt(max(mu, 0.0))), float(math.sqrt(max(cut, 0.0))), sigma, k
    )


def _soft_edge(edge, threshold, tw_scale, n_outliers) -> Bunch:
    """The result of :func:`soft_edge_test`."""
    return Bunch(
        edge=edge, threshold=threshold, tw_scale=tw_scale, n_outliers=n_outliers
    )


def _white_edge_threshold(n_rows: int, n_cols: int, scale: float, level: float):
    """``sqrt(mu + sigma * q)`` of a white ``n_rows x n_cols`` matrix with
    entries of standard deviation ``scale`` (Johnstone 2001, with the
    ``n - 1/2`` corrections of Ma 2012 that make the TW1 approximation
    accurate at moderate sizes)."""
    a, b = math.sqrt(n_rows - 0.5), math.sqrt(n_cols - 0.5)
    mu = (a + b) ** 2
    sigma = (a + b) * (1 / a + 1 / b) ** (1 / 3)
    q = tracy_widom_quantile(1 - level)
    return scale * math.sqrt(mu + sigma * q)


class WeightSpectrum(BaseEstimator):
    """Singular-value spectrum of a weight matrix: bulk edge, outliers, alignment.

    Parameters
    ----------
    edge : {"fitted", "tracy-widom", "mp", "max"}, default="fitted"
        How the upper edge of the bulk is found.

        - ``"mp"``: the Marchenko--Pastur edge of the *initialisation*,
          ``scale * (sqrt(N) + sqrt(d))`` (``1 + sqrt(N/d)`` for
          ``N(0, 1/d)`` entries). Training broadens the bulk past it at
          moderate sizes, so this overcounts there.
        - ``"fitted"``: the edge of the *actual* bulk, located by
          :func:`fitted_bulk_edge` (a square-root soft-edge law fitted to the
          top of the bulk, Onatski 2010) on the spectrum of ``W``, or of
          ``reference`` when given.
        - ``"tracy-widom"``: the sequential test :func:`soft_edge_test` at
          ``level``: a soft edge and its Tracy--Widom scale are fitted to the
          values below each candidate, which is an outlier when it exceeds
          the ``1 - level`` quantile of ``TW1`` there. Its false-positive
          rate on a bulk without outliers is about ``level``
          (:ref:`defaults_spectra`). With ``reference``, the
          threshold is the one the test reaches on the reference spectrum.
          ``margin`` applies only with ``reference``.
        - ``"max"``: the largest singular value of ``reference`` (needs one):
          everything the reference produced counts as bulk.
    level : float, default=0.05
        False-positive rate of ``edge="tracy-widom"`` (ignored otherwise).
        Lower it to count fewer spurious outliers, at the cost of missing
        weak ones.
    reference : array-like of shape (N', d'), default=None
        A null weight matrix whose spectrum stands for the bulk: for example
        the same training run on a target independent of ``X`` (see
        :func:`null_weights`). With ``edge="fitted"`` the edge is fitted to
        its spectrum; with ``edge="max"`` it is its largest singular value.
    scale : float, default=None
        Standard deviation of the initial entries, for the MP edge and
        density; ``None`` is ``1 / sqrt(d)``, the library's initialisation.
    margin : float, default=0.0
        A singular value is an outlier when it exceeds
        ``(1 + margin) * bulk_edge_``; a small margin (e.g. 0.02) absorbs the
        finite-size fluctuations of the edge for ``edge="mp"``.
    max_outliers : int, default=20
        Largest number of outliers ``edge="fitted"`` considers.
    n_components : int, default=10
        Number of top right singular vectors kept in ``components_`` (at least
        all the outliers are kept).
    device : {"cpu", "auto", "cuda"} or "cuda:N", default="cpu"
        Where the singular value decomposition runs (in float64).

    Attributes
    ----------
    singular_values_ : ndarray of shape (min(N, d),)
        In decreasing order.
    bulk_edge_ : float
        Upper edge of the bulk; for ``edge="tracy-widom"`` the test's
        threshold (the fitted edge plus the ``TW1`` margin).
    mp_edge_ : float
        Marchenko--Pastur edge of the initialisation (whatever ``edge`` is).
    n_outliers_ : int
        Number of singular values above ``(1 + margin) * bulk_edge_``; for
        ``edge="tracy-widom"`` without ``reference``, the count of
        :func:`soft_edge_test`.
    outlier_values_ : ndarray of shape (n_outliers_,)
    outlier_vectors_ : ndarray of shape (n_outliers_, d)
        Right singular vectors (rows, unit norm) of the outliers: the learned
        input directions.
    components_ : ndarray of shape (n_kept, d)
        The top ``max(n_components, n_outliers_)`` right singular vectors.
    reference_singular_values_ : ndarray or None
        Spectrum of ``reference`` when one is given.
    shape_ : tuple of int
        ``(N, d)``.
    n_features_in_ : int
        ``d``, the number of columns of the fitted ``W`` (one per input
        feature of the layer), as scikit-learn's estimators record it.

    See Also
    --------
    sklearn_pt.neural_network.TwoStepFeatureLearner : Its ``spectrum_`` is a
        ``WeightSpectrum`` of the final first-layer weights.
    null_weights : Weights of the same steps run on permuted targets.

    Notes
    -----
    At testable sizes the full-rank part of a gradient update broadens the
    bulk far past the initialisation's MP edge (it decays only like
    ``N ** (alpha1 - 1/2)``), which is why ``"fitted"`` is the default and
    a null ``reference`` is offered. Beware that a null run with a *reused*
    batch carries spikes of its own (the second step correlates each sample's
    label with its own first-step update, whatever the labels): with
    ``edge="max"`` those count as bulk, so the outliers left are the ones the
    target's structure adds.

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".
    .. [2] Ba, Erdogdu, Suzuki, Wang, Wu, Yang (2022), "High-dimensional
       Asymptotics of Feature Learning: How One Gradient Step Improves the
       Representation", NeurIPS.
    .. [3] Onatski (2010), "Determining the Number of Factors from Empirical
       Distribution of Eigenvalues", The Review of Economics and Statistics.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.spectral import WeightSpectrum
    >>> rng = np.random.default_rng(0)
    >>> W0 = rng.standard_normal((200, 400)) / np.sqrt(400)
    >>> u, v = rng.standard_normal(200), np.eye(400)[0]
    >>> W = W0 + 3.0 * np.outer(u / np.linalg.norm(u), v)
    >>> spectrum = WeightSpectrum().fit(W)
    >>> spectrum.n_outliers_, round(spectrum.mp_edge_, 3)
    (1, 1.707)
    >>> spectrum.alignment(v, n_vectors=1).round(2)
    array([[0.95]])
    """

    _parameter_constraints: ClassVar[dict] = {
        "edge": [StrOptions({"fitted", "tracy-widom", "mp", "max"})],
        "level": [Interval(Real, 0, 1, closed="neither")],
        "reference": [None, "array-like"],
        "scale": [None, Interval(Real, 0, None, closed="neither")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "max_outliers": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "device": TORCH_PARAMETER_CONSTRAINTS["device"],
    }

    def __init__(
        self,
        *,
        edge="fitted",
        level=0.05,
        reference=None,
        scale=None,
        margin=0.0,
        max_outliers=20,
        n_components=10,
        device="cpu",
    ):
        self.edge = edge
        self.level = level
        self.reference = reference
        self.scale = scale
        self.margin = margin
        self.max_outliers = max_outliers
        self.n_components = n_components
        self.device = device

    @classmethod
    def from_estimator(cls, estimator, *, step: int = -1, **params) -> WeightSpectrum:
        """Fit the spectrum of a fitted network's first-layer weights.

        Parameters
        ----------
        estimator : fitted estimator
            One with ``first_layer_weights_`` (a list of ``(N, d)`` arrays, as
            :class:`~sklearn_pt.neural_network.TwoStepFeatureLearner`, or one
            ``(N, d)`` array, as
            :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`), or a
            :class:`~sklearn.neural_network.MLPRegressor`-like one with
            ``coefs_`` (its ``coefs_[0].T`` is used).
        step : int, default=-1
            Which entry of a list ``first_layer_weights_``: ``0`` for the
            initialisation, ``-1`` for the final weights.
        **params
            Parameters of the ``WeightSpectrum``.

        Returns
        -------
        spectrum : WeightSpectrum
            Fitted.
        """
        if hasattr(estimator, "first_layer_weights_"):
            weights = estimator.first_layer_weights_
            W = weights if np.ndim(weights) == 2 else weights[step]
        elif hasattr(estimator, "coefs_"):
            W = estimator.coefs_[0].T
        else:
            raise TypeError(
                f"{type(estimator).__name__} has neither first_layer_weights_ nor "
                "coefs_: fit it first, or pass its (N, d) weight matrix to "
                "WeightSpectrum().fit(W)."
            )
        return cls(**params).fit(W)

    @keep_state_on_error
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, W, y=None):
        """Compute the spectrum of ``W`` and separate the bulk from the outliers.

        Parameters
        ----------
        W : array-like of shape (N, d)
            A weight matrix, one row per hidden neuron.
        y : None
            Ignored.

        Returns
        -------
        self : WeightSpectrum
        """
        W = validate_input(check_array, W, dtype=np.float64, input_name="W", name="W")
        n_rows, n_cols = W.shape
        scale = 1 / math.sqrt(n_cols) if self.scale is None else float(self.scale)
        device = resolve_device(self.device)
        W_t = as_tensor(W, device=device, dtype=torch.float64)
        gram = gram_matrix(W_t)
        s = singular_values(W_t, gram)

        reference_s = None
        if self.reference is not None:
            if self.edge == "mp":
                raise ValueError(
                    "edge='mp' uses the initialisation's Marchenko-Pastur edge, "
                    "not a reference; pass edge='fitted' or edge='max' to use "
                    "reference, or drop reference."
                )
            reference = validate_input(
                check_array,
                self.reference,
                dtype=np.float64,
                input_name="reference",
                name="reference",
            )
            reference_t = as_tensor(reference, device=device, dtype=torch.float64)
            reference_s = singular_values(reference_t)
        elif self.edge == "max":
            raise ValueError(
                "edge='max' takes the largest singular value of a null reference "
                "as the bulk edge, but reference=None. Pass reference=W_null (e.g. "
                "from sklearn_pt.spectral.null_weights) or use edge='fitted'."
            )

        mp_edge = _mp_edges(n_rows, n_cols, scale)[1]
        n_outliers = None
        if self.edge == "mp":
            bulk_edge = mp_edge
        elif self.edge == "tracy-widom":
            source = s if reference_s is None else reference_s
            test = soft_edge_test(
                source, level=self.level, max_outliers=self.max_outliers
            )
            bulk_edge = test.threshold
            if reference_s is None:
                # the sequential count: it stops at the first value that is
                # not an outlier, whatever lies above later thresholds
                n_outliers = test.n_outliers
        elif self.edge == "max":
            bulk_edge = float(reference_s[0])
        else:
            source = s if reference_s is None else reference_s
            bulk_edge, _ = fitted_bulk_edge(source, max_outliers=self.max_outliers)

        if n_outliers is None:
            n_outliers = int(np.sum(s > (1 + self.margin) * bulk_edge))
        n_kept = min(max(self.n_components, n_outliers), s.size)
        self.singular_values_ = s
        self.bulk_edge_ = float(bulk_edge)
        self.mp_edge_ = float(mp_edge)
        self.n_outliers_ = n_outliers
        self.outlier_values_ = s[:n_outliers].copy()
        self.components_ = top_right_singular_vectors(W_t, n_kept, gram)
        self.outlier_vectors_ = self.components_[:n_outliers].copy()
        self.reference_singular_values_ = reference_s
        self.shape_ = (n_rows, n_cols)
        self.n_features_in_ = n_cols
        self._scale = scale
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # GPU singular value decompositions are not bitwise reproducible; see
        # the Notes of sklearn_pt._base.TorchEstimatorMixin.
        tags.non_deterministic = self.device != "cpu"
        return tags

    def alignment(self, directions, *, n_vectors: int | None = None) -> np.ndarray:
        """Absolute cosines between the top right singular vectors and directions.

        Parameters
        ----------
        directions : array-like of shape (d,) or (d, k)
            Target directions, one per column (as returned by
            :func:`~sklearn_pt.datasets.make_single_index` with
            ``return_directions=True``); normalised here.
        n_vectors : int, default=None
            Number of top singular vectors; ``None`` uses the outliers'.

        Returns
        -------
        cosines : ndarray of shape (n_vectors, k)
            ``|<v_i, theta_j>| / |theta_j|``, in ``[0, 1]``.
        """
        check_is_fitted(self)
        d = self.shape_[1]
        theta = np.asarray(directions, dtype=float)
        if theta.ndim == 1:
            theta = theta[:, None]
        if theta.ndim != 2 or theta.shape[0] != d:
            raise ValueError(
                f"directions must have shape ({d},) or ({d}, k), one direction per "
                f"column in the input space of W; got shape {theta.shape}."
            )
        norms = np.linalg.norm(theta, axis=0)
        if np.any(norms == 0):
            raise ValueError("directions must be nonzero vectors.")
        n = self.n_outliers_ if n_vectors is None else int(n_vectors)
        if not 0 <= n <= self.singular_values_.size:
            raise ValueError(
                f"n_vectors must lie in [0, {self.singular_values_.size}]; got {n}."
            )
        if n > self.components_.shape[0]:
            raise ValueError(
                f"Only the top {self.components_.shape[0]} singular vectors were "
                f"kept; refit with n_components >= {n}."
            )
        return np.abs(self.components_[:n] @ (theta / norms))

    def plot(self, ax=None, *, bins: int = 60, show_reference: bool = True):
        """Histogram of the singular values with the MP density, edges and outliers.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes when ``None``.
        bins : int, default=60
        show_reference : bool, default=True
            Also draw the reference spectrum's histogram, when there is one.

        Returns
        -------
        ax : matplotlib Axes
        """
        check_is_fitted(self)
        plt = import_matplotlib("WeightSpectrum.plot")
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        s = self.singular_values_
        bulk = s[self.n_outliers_ :]
        top = max(float(s[0]), self.bulk_edge_, self.mp_edge_) * 1.02
        edges = np.linspace(0, top, bins + 1)
        ax.hist(bulk, bins=edges, density=False, color="C0", alpha=0.7, label="bulk")
        if show_reference and self.reference_singular_values_ is not None:
            ax.hist(
                self.reference_singular_values_,
                bins=edges,
                histtype="step",
                color="0.3",
                label="reference",
            )
        grid = np.linspace(0, self.mp_edge_, 400)
        width = edges[1] - edges[0]
        density = _mp_singular_value_density(grid, *self.shape_, self._scale)
        ax.plot(grid, density * s.size * width, color="C1", label="MP law (init)")
        ax.axvline(self.mp_edge_, color="C1", ls="--", label="MP edge")
        if self.bulk_edge_ != self.mp_edge_:
            ax.axvline(self.bulk_edge_, color="C2", ls=":", label=f"{self.edge} edge")
        if self.n_outliers_:
            ax.plot(
                self.outlier_values_,
                np.zeros(self.n_outliers_),
                "x",
                color="C3",
                ms=9,
                mew=2,
                clip_on=False,
                label=f"{self.n_outliers_} outlier(s)",
            )
        ax.set_xlabel("singular value")
        ax.set_ylabel("count")
        ax.legend(fontsize="small")
        return ax


def null_weights(estimator, X, y, *, random_state=None) -> np.ndarray:
    """Final first-layer weights of the same training run on permuted targets.

    The estimator is cloned (same parameters, so with an int ``random_state``
    the same initialisation and splits) and fitted on ``(X, y[perm])``: a
    target with the same marginal distribution but independent of ``X``. Its
    spectrum is the null reference of :class:`WeightSpectrum`.

    Parameters
    ----------
    estimator : estimator with ``first_layer_weights_`` once fitted
        E.g. :class:`~sklearn_pt.neural_network.TwoStepFeatureLearner`; it
        need not be fitted.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    random_state : int, RandomState instance or None, default=None
        Draws the permutation.

    Returns
    -------
    W_null : ndarray of shape (N, d)
    """
    y = np.asarray(y)
    # None draws fresh entropy rather than from NumPy's global random state.
    if random_state is None:
        permutation = np.random.default_rng().permutation(len(y))
    else:
        permutation = check_random_state(random_state).permutation(len(y))
    null = clone(estimator).fit(X, y[permutation])
    return null.first_layer_weights_[-1]
