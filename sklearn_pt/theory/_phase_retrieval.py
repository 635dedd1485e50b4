"""Asymptotic overlap of the spectral estimator in noiseless phase retrieval.

The high-dimensional limit (``n, d -> inf``, ``n / d = delta``) of the squared
overlap ``<theta_hat, theta*>^2`` between ``theta*`` and the top eigenvector
of ``D = (1/n) sum_i T(y_i) x_i x_i^T``, for real, noiseless phase retrieval
``y = <theta*, x>^2``, ``x ~ N(0, I_d)``, and for the preprocessings ``T`` of
:class:`~sklearn_pt.decomposition.SpectralEstimator`: the fixed-point equations
of Lu and Li (2020), the weak-recovery threshold of Mondelli and Montanari
(2019). The Gaussian expectations are computed by composite Gauss--Legendre
quadrature.

Both functions accept a scalar or an array-like ``delta`` where they take one;
the result is a Python ``float`` for a scalar and an ``ndarray`` otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq

__all__ = ["spectral_overlap", "spectral_ratio_for_overlap", "spectral_threshold"]

FloatOrArray = float | NDArray[np.float64]

PREPROCESSINGS = ("optimal", "max-overlap", "trimming", "identity")
"""The named preprocessings of ``SpectralEstimator`` (same order)."""


def _gaussian_moment(order: int) -> float:
    """``E[s^order]`` for ``s ~ N(0, 1)``: ``(order - 1)!!`` for even orders."""
    if order % 2:
        return 0.0
    return float(math.prod(range(order - 1, 0, -2)))


_WEAK_RECOVERY_THRESHOLD = 1.0 / (_gaussian_moment(4) - 2.0 * _gaussian_moment(2) + 1.0)
"""Mondelli--Montanari's ``delta_u = 1 / E[(E[s^2 | y] - 1)^2]``; noiseless
``y = s^2`` gives ``1 / Var(s^2) = 1/2``."""

_DENOMINATOR_FLOOR = 1e-8
"""The floor of the optimal preprocessing's denominator in ``SpectralEstimator``
(it only acts for ``delta <= 1/2``, where the overlap is 0 anyway)."""

_S_MAX = 16.0
"""Upper limit of the integrals over ``s = |<theta*, x>|``: the Gaussian weight
beyond it is below ``1e-55``."""

_LAMBDA_OFFSET = 1e-12
"""Relative distance above ``tau = sup T`` at which ``psi'`` is probed."""

_EDGE_DECADES = 24
"""Panels at geometric distances below the edge ``s = sqrt(tau)`` where
``lambda - z`` is smallest (trimming), so that quadrature resolves the peak."""

_BASE_PANELS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.5, 8.0, 10.0, 13.0, _S_MAX)
"""Panel ends for the Gaussian weight ``exp(-s^2 / 2)``."""

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(32)
"""32-point Gauss--Legendre rule on ``[-1, 1]``, applied on every panel."""

_DELTA_GRID = np.geomspace(1e-3, 1e4, 57)
"""Grid on which :func:`spectral_threshold` looks for the first sign change of
the weak-recovery margin before bisecting it."""


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _check_delta(delta: ArrayLike) -> NDArray[np.float64]:
    try:
        arr = np.asarray(delta, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "delta must be a positive real number or an array of them (the "
            f"sample ratio n / d); got {delta!r}."
        ) from exc
    bad = ~np.isfinite(arr) | (arr <= 0)
    if np.any(bad):
        first = float(arr[bad].flat[0]) if arr.ndim else float(arr)
        raise ValueError(
            f"delta must be positive and finite (the sample ratio n / d); got "
            f"{first!r}. Pass n_samples / n_features, e.g. 2.0."
        )
    return arr


def _check_preprocessing(preprocessing) -> str:
    if callable(preprocessing) and not isinstance(preprocessing, str):
        raise ValueError(
            "preprocessing must be one of 'optimal', 'max-overlap', 'trimming' or "
            "'identity'; a callable T has no closed description here (the "
            "formulas need the supremum of T(y) and its behaviour there). Pass "
            "the name of one of "
            "SpectralEstimator's preprocessings."
        )
    if preprocessing not in PREPROCESSINGS:
        raise ValueError(
            "preprocessing must be one of 'optimal', 'max-overlap', 'trimming' or "
            f"'identity', as in SpectralEstimator; got {preprocessing!r}."
        )
    return preprocessing


def _check_trimming_threshold(trimming_threshold) -> float:
    if (
        isinstance(trimming_threshold, bool)
        or not isinstance(trimming_threshold, Real)
        or not math.isfinite(trimming_threshold)
        or trimming_threshold <= 0
    ):
        raise ValueError(
            "trimming_threshold must be a positive finite real number (the cut of "
            "preprocessing='trimming' in units of mean|y|, as in "
            f"SpectralEstimator); got {trimming_threshold!r}. The default is 9.0."
        )
    return float(trimming_threshold)


def _as_output(values: NDArray[np.float64], scalar: bool) -> FloatOrArray:
    return float(values) if scalar else values


# --------------------------------------------------------------------------
# the preprocessings, as functions of u = s^2 (responses normalised to mean 1)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Preprocessing:
    transform: Callable[[NDArray[np.float64]], NDArray[np.float64]]
    supremum: float
    """``tau``, the essential supremum of ``z = T(s^2)``."""
    edge: float | None
    """``s`` at which ``z`` reaches ``tau`` with positive density (the
    integrands peak there as ``lambda -> tau``), or None."""
    breakpoints: tuple[float, ...]


def _optimal_transform(u: NDArray[np.float64], delta: float) -> NDArray[np.float64]:
    """``SpectralEstimator``'s optimal ``T`` (``optimal_preprocessing``)."""
    constant = math.sqrt(
        max(delta, _WEAK_RECOVERY_THRESHOLD) / _WEAK_RECOVERY_THRESHOLD
    )
    u_plus = np.maximum(u, 0.0)
    return (u_plus - 1.0) / np.maximum(u_plus + constant - 1.0, _DENOMINATOR_FLOOR)


def _max_overlap_transform(u: NDArray[np.float64]) -> NDArray[np.float64]:
    """``SpectralEstimator``'s max-overlap ``T`` (``max_overlap_preprocessing``):
    the optimal ``T`` with its constant held at 1."""
    u_plus = np.maximum(u, 0.0)
    return (u_plus - 1.0) / np.maximum(u_plus, _DENOMINATOR_FLOOR)


def _preprocessing(name: str, delta: float, trimming_threshold: float):
    if name == "max-overlap":
        return _Preprocessing(
            transform=_max_overlap_transform,
            supremum=1.0,
            edge=None,
            breakpoints=(math.sqrt(_DENOMINATOR_FLOOR),),
        )
    if name == "optimal":
        return _Preprocessing(
            transform=lambda u: _optimal_transform(u, delta),
            supremum=1.0,
            edge=None,
            # the denominator floor acts below u = 1e-8, s = 1e-4
            breakpoints=(math.sqrt(_DENOMINATOR_FLOOR),),
        )
    if name == "trimming":
        level = trimming_threshold
        return _Preprocessing(
            transform=lambda u: np.where(u <= level, u, 0.0),
            supremum=level,
            edge=math.sqrt(level),
            breakpoints=(),
        )
    return None  # identity: T unbounded


def _panels(lam: float, prep: _Preprocessing) -> NDArray[np.float64]:
    """Panel ends on ``[0, S_MAX]`` for composite Gauss--Legendre quadrature."""
    ends = [0.0, *prep.breakpoints, *_BASE_PANELS]
    if prep.edge is not None:
        # 1 / (lambda - z) peaks in a layer of width ~ (lambda - tau) / (2 s)
        # below the edge: panels at geometric distances resolve it.
        width = (lam - prep.supremum) / (2.0 * prep.edge)
        distances = width * 10.0 ** np.arange(_EDGE_DECADES)
        ends += [prep.edge, *(prep.edge - distances[distances < prep.edge])]
    ends = np.unique(np.clip(ends, 0.0, _S_MAX))
    return ends


def _moments(lam: float, prep: _Preprocessing) -> NDArray[np.float64]:
    """``E[z/(lam-z)], E[z s^2/(lam-z)], E[z^2/(lam-z)^2], E[s^2 z^2/(lam-z)^2]``.

    Over ``s ~ N(0, 1)``, ``z = T(s^2)``, for ``lam`` above ``sup z``, by
    composite Gauss--Legendre quadrature over ``s >= 0`` (the integrands are
    even in ``s``).
    """
    ends = _panels(lam, prep)
    left, right = ends[:-1, None], ends[1:, None]
    half = 0.5 * (right - left)
    s = (left + right) * 0.5 + half * _GL_NODES
    weights = (half * _GL_WEIGHTS).ravel()
    s = s.ravel()
    u = s * s
    z = prep.transform(u)
    ratio = z / (lam - z)
    density = weights * np.exp(-0.5 * u) * math.sqrt(2.0 / math.pi)
    terms = np.stack([ratio, u * ratio, ratio * ratio, u * ratio * ratio])
    return terms @ density


@dataclass(frozen=True)
class _Limit:
    overlap: float
    """Limit of ``<theta_hat, theta*>^2``."""
    eigenvalue: float
    """Limit of the top eigenvalue of ``D``, ``zeta_delta(lambda*)``."""
    margin: float
    """``phi(lambda_bar) - psi_delta(lambda_bar)``: positive iff weak recovery."""
    lambda_bar: float
    lambda_star: float | None


def _psi(lam: float, m: NDArray[np.float64], delta: float) -> float:
    return lam * (1.0 / delta + m[0])


def _phi(lam: float, m: NDArray[np.float64]) -> float:
    return lam * m[1]


def _dpsi(m: NDArray[np.float64], delta: float) -> float:
    return 1.0 / delta - m[2]


def _edge(delta: float, prep: _Preprocessing, moments=_moments):
    """``lambda_bar = argmin_{lambda >= tau} psi_delta``, its moments and margin.

    ``moments(lam, prep)`` gives the four expectations of :func:`_moments`
    (another law of ``(s, z)`` with ``supremum`` and ``edge`` attributes may
    come with its own, as :mod:`._hessian_threshold`'s sample laws do)."""
    tau = prep.supremum
    # psi is convex: lambda_bar is tau where psi' is already non-negative
    # there, else the root of psi' = 0 above tau (searched in log(lambda - tau)).
    low = tau + _LAMBDA_OFFSET * max(abs(tau), 1.0)
    if _dpsi(moments(low, prep), delta) >= 0:
        lambda_bar = tau if prep.edge is None else low
    else:
        step = max(abs(tau), 1.0)
        while _dpsi(moments(tau + step, prep), delta) < 0:
            step *= 2.0

        def slope(x):
            return _dpsi(moments(tau + math.exp(x), prep), delta)

        root = brentq(slope, math.log(low - tau), math.log(step), xtol=1e-13)
        lambda_bar = tau + math.exp(root)
    m_bar = moments(lambda_bar, prep)
    margin = _phi(lambda_bar, m_bar) - _psi(lambda_bar, m_bar, delta)
    return lambda_bar, m_bar, margin


def _limit(delta: float, prep: _Preprocessing, moments=_moments) -> _Limit:
    """Solve Lu and Li's fixed-point equations at one ``delta`` (``moments``
    as for :func:`_edge`)."""
    lambda_bar, m_bar, margin = _edge(delta, prep, moments)
    if margin <= 0:
        return _Limit(0.0, _psi(lambda_bar, m_bar, delta), margin, lambda_bar, None)

    # lambda* > lambda_bar solves psi = phi (psi increasing, phi decreasing).
    def gap(lam):
        m = moments(lam, prep)
        return _psi(lam, m, delta) - _phi(lam, m)

    step = lambda_bar - prep.supremum + 1.0
    while gap(lambda_bar + step) < 0:
        step *= 2.0
    lambda_star = brentq(gap, lambda_bar, lambda_bar + step, xtol=1e-13, rtol=1e-13)
    m_star = moments(lambda_star, prep)
    dpsi_star = _dpsi(m_star, delta)
    dphi_star = -m_star[3]
    overlap = dpsi_star / (dpsi_star - dphi_star)
    return _Limit(
        float(min(max(overlap, 0.0), 1.0)),
        _psi(lambda_star, m_star, delta),
        margin,
        lambda_bar,
        lambda_star,
    )


def _margin(delta: float, name: str, trimming_threshold: float) -> float:
    return _edge(delta, _preprocessing(name, delta, trimming_threshold))[2]


# --------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------
def spectral_overlap(
    delta: ArrayLike,
    preprocessing: str = "optimal",
    *,
    trimming_threshold: float = 9.0,
) -> FloatOrArray:
    """Asymptotic squared overlap of the spectral estimator in phase retrieval.

    The limit, as ``n, d -> inf`` with ``n / d = delta``, of
    ``<theta_hat, theta*>^2`` for the top eigenvector ``theta_hat`` of
    ``D = (1/n) sum_i T(y_i) x_i x_i^T`` in real, noiseless phase retrieval
    ``y = <theta*, x>^2``, ``x ~ N(0, I_d)``, ``|theta*| = 1``: the estimator
    :class:`~sklearn_pt.decomposition.SpectralEstimator` with the same
    ``preprocessing`` (its :meth:`~sklearn_pt.decomposition.SpectralEstimator.overlap`
    is the unsquared ``|<theta_hat, theta*>|``).

    Parameters
    ----------
    delta : float or array-like of float
        The sample ratio ``n / d``, positive.
    preprocessing : {"optimal", "max-overlap", "trimming", "identity"}, \
default="optimal"
        The map ``T``, as in ``SpectralEstimator``: Mondelli--Montanari's
        ``T(y) = (y_+ - 1) / (y_+ + sqrt(delta / delta_u) - 1)``
        (:func:`~sklearn_pt.decomposition.optimal_preprocessing`, optimal for
        the threshold); Luo--Alghamdi--Lu's ``T(y) = 1 - 1/y_+``
        (:func:`~sklearn_pt.decomposition.max_overlap_preprocessing`, the
        largest overlap at every ``delta``); ``T(y) = y 1{y <=
        trimming_threshold}``; or ``T(y) = y``, responses normalised to mean
        one.
    trimming_threshold : float, default=9.0
        The cut of ``"trimming"``, in units of ``mean|y|``; ignored otherwise.

    Returns
    -------
    overlap : float or ndarray of float
        The limit of ``<theta_hat, theta*>^2``, in ``[0, 1]``, of the shape of
        ``delta``; 0 at and below :func:`spectral_threshold`.

    See Also
    --------
    spectral_threshold : The ``delta`` above which the overlap is positive.
    sklearn_pt.decomposition.SpectralEstimator : The estimator described.

    Notes
    -----
    Let ``s = <theta*, x> ~ N(0, 1)``; the estimator divides ``y`` by its mean
    (which tends to ``E[s^2] = 1``), so ``z = T(s^2)``. For ``T`` bounded
    above, with ``tau = ess sup z``, Lu and Li (2020, Theorem 1; restated by
    Mondelli and Montanari, 2019, Lemma 2) define for ``lambda > tau``::

        psi_delta(lambda) = lambda (1/delta + E[z / (lambda - z)])
        phi(lambda)       = lambda E[z s^2 / (lambda - z)]

    ``psi_delta`` is convex, with ``psi_delta'(lambda) = 1/delta -
    E[z^2 / (lambda - z)^2]``, and ``phi`` is decreasing, ``phi'(lambda) =
    -E[s^2 z^2 / (lambda - z)^2]``. With ``lambda_bar = argmin_{lambda >= tau}
    psi_delta(lambda)``, ``zeta_delta(lambda) = psi_delta(max(lambda,
    lambda_bar))`` and ``lambda*`` the solution of ``zeta_delta(lambda) =
    phi(lambda)``::

        <theta_hat, theta*>^2 -> psi_delta'(lambda*)
                                 / (psi_delta'(lambda*) - phi'(lambda*))

    if ``psi_delta'(lambda*) > 0``, i.e. if ``phi(lambda_bar) >
    psi_delta(lambda_bar)`` (weak recovery), and ``-> 0`` otherwise; the top
    eigenvalue of ``D`` tends to ``zeta_delta(lambda*)`` (the bulk edge
    ``psi_delta(lambda_bar)`` without weak recovery). ``lambda_bar`` and
    ``lambda*`` are found by bracketing and ``brentq``; the four expectations
    by composite Gauss--Legendre quadrature over ``s`` (panels refined
    geometrically where ``lambda - z`` is small), with ``T`` exactly as the
    estimator applies it.

    *Optimal*: ``z = (y - 1) / (y + c - 1)``, ``c = sqrt(delta / delta_u)``
    with ``delta_u = 1 / E[(s^2 - 1)^2] = 1/2`` (``c = 1`` for ``delta <=
    1/2``); ``tau = 1``, approached as ``y -> inf``. At ``lambda = 1``,
    ``z / (1 - z) = (y - 1) / c``, so ``psi_delta(1) = 1/delta``,
    ``psi_delta'(1) = 1/delta - E[(y - 1)^2] / c^2 = 1/delta - 2/c^2 = 0``
    and ``phi(1) = E[y (y - 1)] / c = 2/c``: ``lambda_bar = 1``, and weak
    recovery holds iff ``2/c > 1/delta``, i.e. ``delta > 1/2``, Mondelli and
    Montanari's ``delta_u`` (no estimator does better). As ``delta -> inf``,
    ``lambda* ~ c`` and ``1 - <theta_hat, theta*>^2 ~ 5 / (2 delta)``.
    This ``T`` is optimal for the *threshold*, not for the overlap above it:
    the same equations give a larger overlap for smaller ``c >= 1``.

    *Max-overlap* (Luo, Alghamdi and Lu, 2019): ``c = 1`` at every
    ``delta``, ``z = 1 - 1/y``, the preprocessing that maximises the
    limiting overlap; ``tau = 1`` and ``psi_delta'(1) = 1/delta - 2 < 0``
    above ``1/2``, so ``lambda_bar > 1``. Squared overlap 0.231, 0.639,
    0.925 at ``delta = 1, 2, 4`` (against 0.206, 0.486, 0.705 for
    ``"optimal"``); the same threshold ``1/2``.

    *Trimming* (Chen and Candès, 2015): ``z = y 1{y <= t}``, ``tau = t``;
    ``E[z^2 / (lambda - z)^2]`` diverges as ``lambda -> t``, so
    ``lambda_bar > t`` solves ``E[z^2 / (lambda - z)^2] = 1/delta``.

    *Identity*: ``T(y) = y`` is unbounded and the formulas do not apply: the
    top eigenvalue grows like ``max_i y_i / delta ~ 2 log(n) / delta`` and its
    eigenvector localises on the largest responses, so the limit is 0 at
    every ``delta`` (the threshold is infinite). The approach is logarithmic
    in ``n``: at moderate ``d`` the squared overlap of
    :class:`~sklearn_pt.decomposition.SpectralEstimator` is not 0
    (:ref:`defaults_finite_size`).

    References
    ----------
    .. [1] Lu, Li (2020), "Phase transitions of spectral initialization for
       high-dimensional non-convex estimation", Information and Inference
       9(3), 507--541 (arXiv:1702.06435, 2017).
    .. [2] Mondelli, Montanari (2019), "Fundamental limits of weak recovery
       with applications to phase retrieval", Foundations of Computational
       Mathematics 19, 703--773 (arXiv:1708.05932, 2017).
    .. [3] Luo, Alghamdi, Lu (2019), "Optimal spectral initialization for
       signal recovery with applications to phase retrieval", IEEE
       Transactions on Signal Processing 67(9), 2347--2356.
    .. [4] Chen, Candès (2015), "Solving random quadratic systems of equations
       is nearly as easy as solving linear systems", NeurIPS.

    Examples
    --------
    >>> from sklearn_pt.theory import spectral_overlap
    >>> spectral_overlap(0.4)
    0.0
    >>> round(spectral_overlap(2.0), 3)
    0.486
    >>> spectral_overlap([1.0, 4.0], "trimming").round(3).tolist()
    [0.0, 0.397]
    >>> spectral_overlap([1.0, 2.0, 4.0], "max-overlap").round(4).tolist()
    [0.2307, 0.6389, 0.9245]
    """
    arr = _check_delta(delta)
    name = _check_preprocessing(preprocessing)
    threshold = _check_trimming_threshold(trimming_threshold)
    flat = arr.reshape(-1)
    out = np.zeros(flat.shape, dtype=np.float64)
    if name != "identity":
        unique, inverse = np.unique(flat, return_inverse=True)
        values = np.array(
            [
                _limit(float(d), _preprocessing(name, float(d), threshold)).overlap
                for d in unique
            ]
        )
        out = values[inverse.reshape(-1)]
    return _as_output(out.reshape(arr.shape), arr.ndim == 0)


def spectral_threshold(
    preprocessing: str = "optimal", *, trimming_threshold: float = 9.0
) -> float:
    """Weak-recovery threshold of the spectral estimator in phase retrieval.

    The sample ratio ``delta`` above which :func:`spectral_overlap` is
    positive: the root of the margin ``phi(lambda_bar) -
    psi_delta(lambda_bar)`` of Lu and Li's equations (see
    :func:`spectral_overlap`).

    Parameters
    ----------
    preprocessing : {"optimal", "max-overlap", "trimming", "identity"}, \
default="optimal"
        The map ``T``, as in
        :class:`~sklearn_pt.decomposition.SpectralEstimator`.
    trimming_threshold : float, default=9.0
        The cut of ``"trimming"``, in units of ``mean|y|``; ignored otherwise.

    Returns
    -------
    threshold : float
        The threshold; ``inf`` for ``"identity"`` (never informative in the
        limit) and for a trimming cut with no sign change of the margin on
        ``[1e-3, 1e4]``.

    See Also
    --------
    spectral_overlap : The limiting squared overlap.

    Notes
    -----
    The margin is evaluated on a geometric grid of ``delta`` in ``[1e-3,
    1e4]`` and bisected (``brentq`` in ``log delta``) between the first two
    grid points where it turns positive. For ``"optimal"`` the margin is
    ``sqrt(2 / delta) - 1/delta`` above ``1/2`` and ``2 - 1/delta`` below,
    so the root is Mondelli and Montanari's ``delta_u = 1/2``; for the
    default trimming cut ``t = 9`` it is about 1.63.

    References
    ----------
    .. [1] Lu, Li (2020), "Phase transitions of spectral initialization for
       high-dimensional non-convex estimation", Information and Inference.
    .. [2] Mondelli, Montanari (2019), "Fundamental limits of weak recovery
       with applications to phase retrieval", Foundations of Computational
       Mathematics.

    Examples
    --------
    >>> from sklearn_pt.theory import spectral_threshold
    >>> round(spectral_threshold(), 6)
    0.5
    >>> spectral_threshold("identity")
    inf
    """
    name = _check_preprocessing(preprocessing)
    threshold = _check_trimming_threshold(trimming_threshold)
    if name == "identity":
        return math.inf
    return _first_positive_root(lambda delta: _margin(delta, name, threshold))


def _first_positive_root(margin) -> float:
    """The ``delta`` where ``margin(delta)`` first turns positive on
    :data:`_DELTA_GRID`, bisected in ``log delta`` (``inf``: never)."""
    previous = None
    for delta in _DELTA_GRID:
        if margin(float(delta)) > 0:
            if previous is None:  # recovery below 1e-3: not for these T
                return float(delta)
            root = brentq(
                lambda x: margin(math.exp(x)),
                math.log(previous),
                math.log(delta),
                xtol=1e-12,
            )
            return float(math.exp(root))
        previous = float(delta)
    return math.inf


def spectral_ratio_for_overlap(
    cosine: float = 0.5, preprocessing: str = "optimal"
) -> float:
    """The sample ratio ``delta`` at which the spectral estimator's limiting
    ``|cosine|`` with ``theta*`` reaches ``cosine``.

    The root of ``spectral_overlap(delta) = cosine ** 2`` above
    :func:`spectral_threshold` (where the overlap is still 0): the ``d ->
    infinity`` value of the crossing a success rate at ``|cosine| > cosine``
    measures for the spectral method.

    Parameters
    ----------
    cosine : float, default=0.5
        The ``|cosine|`` to reach, in ``(0, 1)``.
    preprocessing : {"optimal", "max-overlap", "trimming"}, default="optimal"
        The map ``T``, as in
        :class:`~sklearn_pt.decomposition.SpectralEstimator`.

    Returns
    -------
    delta : float

    See Also
    --------
    spectral_overlap : The limiting squared overlap.

    Examples
    --------
    >>> from sklearn_pt.theory import spectral_ratio_for_overlap
    >>> round(spectral_ratio_for_overlap(0.5), 2)
    1.12
    >>> round(spectral_ratio_for_overlap(0.5, "max-overlap"), 2)
    1.04
    """
    target = cosine**2
    low = spectral_threshold(preprocessing)
    high = 2 * low
    while spectral_overlap(high, preprocessing) < target:
        high *= 2
    return float(
        brentq(
            lambda delta: spectral_overlap(delta, preprocessing) - target,
            low,
            high,
            xtol=1e-8,
        )
    )
