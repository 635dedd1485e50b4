r"""Limit kernel of spherical biased-ReLU random features.

The kernel is

.. math::

    k(x, x') = \mathbb{E}_{w, b}\big[\mathrm{relu}(\langle w, x\rangle - b)\,
               \mathrm{relu}(\langle w, x'\rangle - b)\big],
    \qquad w \sim U(S^{d-1}),\ b \sim U[-\tau, \tau].

Derivation (used by the code below)
-----------------------------------
*Bias.* For fixed ``u = <w, x>``, ``v = <w, x'>`` the expectation over ``b``
is a piecewise cubic: with ``F(b) = u v b - (u + v) b^2 / 2 + b^3 / 3`` and
``l = clip(min(u, v), -tau, tau)``,
``g(u, v) = (F(l) - F(-tau)) / (2 tau)``.

*Polynomial part.* If ``|x|, |x'| <= tau`` no clipping happens and
``g = [u v tau + (u + v) tau^2 / 2 + tau^3 / 3 + h(u, v)] / (2 tau)`` with
``h = min^2 max / 2 - min^3 / 6 = (s^3 - 3 s t^2 + 2 t^3) / 24``,
``s = u + v``, ``t = |u - v|``. Odd moments of ``w`` vanish and
``E[w w^T] = I / d``, so

.. math::

    k_{\mathrm{poly}}(x, x') = \frac{\langle x, x'\rangle}{2d} + \frac{\tau^2}{6}
        + \frac{c_d\, \|x - x'\|^3}{24\,\tau},
    \qquad c_d = \mathbb{E}|w_1|^3
        = \frac{\Gamma(d/2)}{\sqrt{\pi}\,\Gamma((d+3)/2)} .

This is exact whenever ``|x|, |x'| <= tau``, in particular in the paper's
setting (``x`` on the unit sphere, ``tau >= 1``).

*Clipping correction.* Otherwise ``k = k_poly + correction``. Write the
projection of ``w`` on the plane of ``x, x'`` in polar coordinates
``rho (cos phi, sin phi)``: ``phi`` is uniform and ``rho^2 ~ Beta(1, (d-2)/2)``
(``rho = 1`` for ``d = 2``). Along a ray, ``u = rho a(phi)``,
``v = rho c(phi)`` with ``a = |x| cos phi``, ``c = |x'| cos(phi - theta)``;
clipping starts at ``rho* = tau / |min(a, c)|`` and the difference to the
polynomial part is a cubic in ``rho`` there, so the radial integral is exact
through the tail moments ``T_k(y) = E[rho^k; rho > y]`` (closed forms by a
recurrence, :func:`_tail_moments`). The remaining integral over ``phi`` is
split at the points where ``a = c``, ``a = +-tau`` or ``c = +-tau``; between
them the integrand is analytic, and a cubic change of variables smooths the
algebraic endpoint behaviour before Gauss-Legendre quadrature (this general
form computes the gradient).

*Kernel values, faster* (:func:`_fast_block`). By homogeneity take
``tau = 1``. The clipped part of ``min(u, v)`` is where both ``u, v > 1`` or
one of them is below ``-1``; by the symmetry ``w -> -w`` the correction is
``-J + (D(x, x') + D(x', x)) / 2`` with ``J`` the integral of
``H(u - 1, v - 1)`` (``H = min^2 max / 2 - min^3 / 6``) over the
intersection of the two caps ``u, v > 1``, and ``D(x, x')`` a cubic moment
of ``u`` over the cap ``u > 1`` alone, which the linearity of ``E[v | u]``
reduces to four one-dimensional moments of each point (incomplete beta
functions, once per point). Only ``J`` needs an angular quadrature, over
the intersection arc split once where ``a = c``, and only for the pairs whose
caps meet (``theta < arccos(1/|x|) + arccos(1/|x'|)``).

*Gradient.* ``d k / d log tau = -k + (kappa(tau) + kappa(-tau)) / 2`` with
``kappa(beta) = E_w[relu(u - beta) relu(v - beta)]``, evaluated by the same
decomposition.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import betainc, betaln, gammaln, roots_legendre
from sklearn.gaussian_process.kernels import Hyperparameter, Kernel
from sklearn.utils import check_array

from .._base import validate_input

__all__ = ["BiasedReLUKernel"]

_N_ARC_NODES = 32
"""Gauss-Legendre nodes per arc of the angular correction integral."""

_MAX_RECURRENCE = 48
"""Largest ``b + 1 = d / 2`` for which :func:`_tail_moments` uses its
recurrence (``d <= 96``); beyond, the incomplete beta function is cheaper."""

_PARALLEL_COSINE = 8 * np.finfo(np.float64).eps
"""Cosines within this of 1 are rounding: the directions count as parallel."""

_CAP_CHUNK = 256
"""Pairs per chunk of the cap-intersection integral: its temporaries (two
arcs of ``_N_ARC_NODES`` nodes per pair) then stay in the CPU cache (timings:
:ref:`defaults_kernel`)."""

_CHUNK_PAIRS = 1024
"""Pairs per chunk of the correction (about 50 MB of temporaries)."""

_BLOCK_PAIRS = 1 << 18
"""Pairs per block of the kernel matrix (about 30 MB of temporaries)."""


# --------------------------------------------------------------------------
# pure functions
# --------------------------------------------------------------------------
def _abs_moment3(d: int) -> float:
    """``E|w_1|^3`` for ``w`` uniform on ``S^(d-1)``."""
    return float(np.exp(gammaln(d / 2) - gammaln((d + 3) / 2)) / np.sqrt(np.pi))


def _tail_moments(y: np.ndarray, d: int) -> tuple[np.ndarray, ...]:
    """``T_k(y) = E[rho^k 1{rho > y}]``, ``k = 0..3``, for ``0 < y <= 1``.

    ``rho`` is the norm of the projection of ``w ~ U(S^(d-1))`` on a plane,
    ``rho^2 ~ Beta(1, b)`` with ``b = (d - 2) / 2``; ``rho = 1`` if ``d = 2``.
    With ``x = 1 - y^2``, ``T_0 = x^b`` and ``T_2 = x^b - b x^(b+1) / (b+1)``;
    by parts, ``T_1 = y x^b + A_b`` and ``T_3 = y^3 x^b + 3 (A_b - A_(b+1))``
    with ``A_c(y) = int_y^1 (1 - r^2)^c dr``, which the recurrence
    ``A_c = (2c A_(c-1) - y x^c) / (2c + 1)`` builds from ``A_0 = 1 - y``
    (``d`` even) or ``A_(1/2) = (arccos y - y sqrt(x)) / 2`` (``d`` odd): a
    few array
    operations per step instead of an incomplete beta function (whose
    continued fraction dominated the kernel's cost). The recurrence damps
    errors (factor ``2c / (2c + 1)``), so the moments are accurate to a few
    ulps in absolute terms. Above ``_MAX_RECURRENCE`` steps the incomplete
    beta function is used.
    """
    if d == 2:
        one = (y < 1.0).astype(np.float64)
        return one, one, one, one
    b = (d - 2) / 2
    x = (1.0 - y) * (1.0 + y)  # 1 - y^2 without cancellation
    xb = x**b
    t0 = xb
    t2 = xb - b * x * xb / (b + 1.0)
    if b + 1 <= _MAX_RECURRENCE:
        a_b, a_b1 = _tail_areas(y, x, d)
        return t0, y * xb + a_b, t2, y**3 * xb + 3.0 * (a_b - a_b1)
    # E[t^{k/2}; t > y^2] = b B(1 + k/2, b) I_{1-y^2}(b, 1 + k/2), and
    # I_x(b, 5/2) = I_x(b, 3/2) + x^b (1 - x)^{3/2} / (3/2 B(b, 3/2)).
    i15 = betainc(b, 1.5, x)
    i25 = i15 + xb * y**3 / (1.5 * np.exp(betaln(b, 1.5)))
    t1 = b * np.exp(betaln(1.5, b)) * i15
    t3 = b * np.exp(betaln(2.5, b)) * i25
    return t0, t1, t2, t3


def _tail_areas(y: np.ndarray, x: np.ndarray, d: int) -> tuple[np.ndarray, ...]:
    """``A_b(y)`` and ``A_(b+1)(y)``, ``A_c = int_y^1 (1 - r^2)^c dr``, by the
    recurrence of :func:`_tail_moments` (``x = 1 - y^2``, ``d >= 3``)."""
    b = (d - 2) / 2
    if d % 2 == 0:
        c, area, xc = 0.0, 1.0 - y, np.ones_like(x)
    else:
        c, xc = 0.5, np.sqrt(x)
        area = (np.arccos(y) - y * xc) / 2
    previous = area
    while c < b + 1:
        c += 1.0
        xc = xc * x
        previous, area = area, (2 * c * area - y * xc) / (2 * c + 1)
    return previous, area  # c = b + 1 here


def _arc_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes on [0, 1] composed with ``s^2 (3 - 2 s)``."""
    s, w = roots_legendre(n)
    s = (s + 1.0) / 2.0
    w = w / 2.0
    return s * s * (3.0 - 2.0 * s), w * 6.0 * s * (1.0 - s)


def _breakpoints(r1, r2, theta, tau):
    """Angles where ``a = c``, ``a = +-tau`` or ``c = +-tau``, shape (n, 10)."""
    psi = np.arctan2(-r2 * np.sin(theta), r1 - r2 * np.cos(theta))
    pts = [psi + np.pi / 2, psi - np.pi / 2]
    for r, shift in ((r1, 0.0), (r2, theta)):
        ratio = np.divide(tau, r, out=np.ones_like(r), where=r > tau)
        alpha = np.arccos(ratio)  # 0 (harmless extra split) when r <= tau
        pts += [shift + alpha, shift - alpha, shift + np.pi + alpha]
        pts += [shift + np.pi - alpha]
    return np.sort(np.mod(np.stack(pts, axis=-1), 2 * np.pi), axis=-1)


def _correction_chunk(r1, r2, theta, tau, d, nodes, weights, need_grad):
    """Clipping corrections to ``k`` and to ``dk/dlog tau`` for some pairs."""
    lo = _breakpoints(r1, r2, theta, tau)
    hi = np.concatenate([lo[:, 1:], lo[:, :1] + 2 * np.pi], axis=1)
    # Between breakpoints |min(a, c)| - tau keeps its sign: test the midpoint
    # and integrate only the arcs where clipping happens.
    mid = (lo + hi) / 2
    m_mid = np.minimum(
        r1[:, None] * np.cos(mid), r2[:, None] * np.cos(mid - theta[:, None])
    )
    pair, arc = np.nonzero((np.abs(m_mid) > tau) & (hi > lo))
    length = (hi - lo)[pair, arc][:, None]
    phi = lo[pair, arc][:, None] + length * nodes
    wts = length * weights / (2 * np.pi)
    a = r1[pair][:, None] * np.cos(phi)
    c = r2[pair][:, None] * np.cos(phi - theta[pair][:, None])
    m = np.minimum(a, c)
    big = a + c - m
    sgn = np.sign(m)
    # y < 1 inside the arc; the clip only guards rounding at its ends.
    t0, t1, t2, t3 = _tail_moments(np.minimum(tau / np.abs(m), 1.0), d)
    ac = a * c
    h = m * m * big / 2.0 - m**3 / 6.0
    corr_int = (
        sgn * (tau * tau / 6.0 * t0 + ac / 2.0 * t2)
        - tau * (a + c) / 4.0 * t1
        - h / (2.0 * tau) * t3
    )
    n = r1.shape[0]
    corr = np.bincount(pair, (wts * corr_int).sum(axis=1), minlength=n)
    if not need_grad:
        return corr, None
    grad_int = -corr_int + sgn * (tau * tau * t0 + ac * t2) / 2 - tau * (a + c) * t1 / 2
    grad = np.bincount(pair, (wts * grad_int).sum(axis=1), minlength=n)
    return corr, grad


def _pairs_d1(u, v, tau, need_grad):
    """Kernel for ``d = 1``, where ``w = +-1``: exact, no quadrature."""

    def g(p, q):
        lim = np.clip(np.minimum(p, q), -tau, tau)

        def big_f(b):
            return p * q * b - (p + q) * b * b / 2.0 + b**3 / 3.0

        return (big_f(lim) - big_f(-tau)) / (2.0 * tau)

    def kappa(beta):
        return (
            np.maximum(u - beta, 0) * np.maximum(v - beta, 0)
            + np.maximum(-u - beta, 0) * np.maximum(-v - beta, 0)
        ) / 2.0

    k = (g(u, v) + g(-u, -v)) / 2.0
    grad = -k + (kappa(tau) + kappa(-tau)) / 2.0 if need_grad else None
    return k, grad


def _biased_relu_pairs(sq1, sq2, dot, *, d, tau, need_grad=False):
    """Kernel (and ``dk/dlog tau``) for pairs given norms and inner products.

    Parameters
    ----------
    sq1, sq2, dot : ndarray of shape (n_pairs,)
        ``|x|^2``, ``|x'|^2`` and ``<x, x'>`` for each pair.
    d : int
        Input dimension, ``d >= 2`` (use :func:`_pairs_d1` for ``d = 1``).
    tau : float
        Bias range.
    need_grad : bool
        Also return ``dk / dlog tau``.
    """
    r1, r2 = np.sqrt(sq1), np.sqrt(sq2)
    sqdist = np.maximum(sq1 + sq2 - 2.0 * dot, 0.0)
    cubic = _abs_moment3(d) * sqdist**1.5 / (24.0 * tau)
    k = dot / (2.0 * d) + tau * tau / 6.0 + cubic
    grad = tau * tau / 3.0 - cubic if need_grad else None

    clipped = np.flatnonzero(np.maximum(r1, r2) > tau)
    if clipped.size:
        denom = r1[clipped] * r2[clipped]
        cos_t = np.divide(dot[clipped], denom, out=np.ones_like(denom), where=denom > 0)
        theta = np.arccos(np.clip(cos_t, -1.0, 1.0))
        nodes, weights = _arc_nodes(_N_ARC_NODES)
        for start in range(0, clipped.size, _CHUNK_PAIRS):
            idx = clipped[start : start + _CHUNK_PAIRS]
            sl = slice(start, start + idx.size)
            corr, dcorr = _correction_chunk(
                r1[idx], r2[idx], theta[sl], tau, d, nodes, weights, need_grad
            )
            k[idx] += corr
            if need_grad:
                grad[idx] += dcorr
    return k, grad


def _upper_moments(sq, d, tau):
    """``E[u^k; u > tau] / tau^k``, ``k = 0..3``, with ``u = <w, x>``, shape (4, n).

    ``u = |x| t`` with ``t = w_1``; ``t^2 ~ Beta(1/2, (d - 1)/2)``, so
    ``E[t^k; t > s] = B((k + 1)/2, (d - 1)/2) I_{1-s^2}((d - 1)/2, (k + 1)/2)
    / (2 B(1/2, (d - 1)/2))`` for ``0 < s < 1`` (and 0 for ``s >= 1``).
    """
    r = np.sqrt(sq) / tau
    out = np.zeros((4, r.size))
    big = r > 1.0
    if not big.any():
        return out
    rb = r[big]
    s = 1.0 / rb
    x = (1.0 - s) * (1.0 + s)  # 1 - s^2 without cancellation
    a = (d - 1) / 2
    norm = betaln(0.5, a)
    for k in range(4):
        scale = np.exp(betaln((k + 1) / 2, a) - norm) / 2.0
        out[k, big] = rb**k * scale * betainc(a, (k + 1) / 2, x)
    return out


def _cap_moments(r1, r2, theta, d, nodes, weights):
    """``J = E[1{u>1, v>1} H(u - 1, v - 1)]`` (bias range 1) for some pairs.

    ``H(p, q) = min^2 max / 2 - min^3 / 6`` of ``(p, q)``. In polar
    coordinates of the plane of ``x, x'`` the set ``u, v > 1`` is the arc
    ``|phi| < arccos(1/r1)``, ``|phi - theta| < arccos(1/r2)`` at radii
    ``rho > 1 / min(a, c)``; the radial integral is exact (tail moments), the
    arc is split where ``a = c`` and integrated by Gauss-Legendre.
    """
    alpha1, alpha2 = np.arccos(1.0 / r1), np.arccos(1.0 / r2)
    lo = np.maximum(-alpha1, theta - alpha2)
    hi = np.minimum(alpha1, theta + alpha2)
    # a = c at psi +- pi/2; the arc is shorter than pi, so at most one of the
    # two lies inside it: take the one nearest its middle.
    psi = np.arctan2(-r2 * np.sin(theta), r1 - r2 * np.cos(theta)) + np.pi / 2
    centre = (lo + hi) / 2
    split = psi + np.pi * np.round((centre - psi) / np.pi)
    split = np.clip(split, lo, hi)
    ends = np.stack([lo, split, split, hi], axis=1).reshape(-1, 2, 2)
    length = ends[:, :, 1] - ends[:, :, 0]  # (n, 2)
    phi = ends[:, :, :1] + length[:, :, None] * nodes  # (n, 2, q)
    a = r1[:, None, None] * np.cos(phi)
    c = r2[:, None, None] * np.cos(phi - theta[:, None, None])
    s = a + c
    m = np.minimum(a, c)
    big = s - m
    # m >= 1 inside the arc; the clip only guards rounding at its ends (where
    # y = 1 and every tail moment vanishes).
    y = 1.0 / np.maximum(m, 1.0)
    b = (d - 2) / 2
    if d == 2 or b + 1 > _MAX_RECURRENCE:
        t0, t1, t2, t3 = _tail_moments(y, d)
        h = m * m * (big / 2.0 - m / 6.0)
        integrand = h * t3 - a * c * t2 + s / 2.0 * t1 - t0 / 3.0
    else:
        # The same combination with the moments written out (see
        # _tail_moments) and h y^3 = big y / 2 - 1 / 6 (y = 1 / m).
        x = (1.0 - y) * (1.0 + y)
        xb = x**b
        a_b, a_b1 = _tail_areas(y, x, d)
        three_h = m * m * (1.5 * big - 0.5 * m)
        bracket = (big + s) * y / 2.0 - 0.5 - a * c * (1.0 - b / (b + 1.0) * x)
        integrand = xb * bracket + a_b * (three_h + s / 2.0) - three_h * a_b1
    return np.einsum("npq,q,np->n", integrand, weights, length) / (2 * np.pi)


def _single_cap_term(g, m0, m1, m2, m3):
    """``D(x, x') = E[1{u > 1} ((u - 1)^2 (g u - 1) / 2 - (u - 1)^3 / 6)]``
    (bias range 1) from the moments ``m_k`` of :func:`_upper_moments` of
    ``x``, with ``g = <x, x'> / |x|^2`` (``g = 1`` on the diagonal)."""
    return (g / 2.0 - 1.0 / 6.0) * m3 - g * m2 + (1.0 + g) / 2.0 * m1 - m0 / 3.0


def _fast_block(X, Y, tau):
    """Kernel matrix between the rows of X and Y (``d >= 2``), no quadrature
    beyond the cap intersection.

    With ``tau = 1`` (the kernel is homogeneous: ``k(x, x'; tau) = tau^2
    k(x / tau, x' / tau; 1)``), the difference to the polynomial part is
    ``-J + (D(x, x') + D(x', x)) / 2``: ``J`` from :func:`_cap_moments`, and
    ``D(x, x') = E[1{u > 1} ((u - 1)^2 (g u - 1) / 2 - (u - 1)^3 / 6)]`` with
    ``g = <x, x'> / |x|^2`` (``E[v | u] = g u``), a combination of the
    one-dimensional moments of :func:`_upper_moments`.
    """
    d = X.shape[1]
    sq1 = np.einsum("ij,ij->i", X, X)
    sq2 = np.einsum("ij,ij->i", Y, Y)
    dot = X @ Y.T
    sqdist = np.maximum(sq1[:, None] + sq2[None, :] - 2.0 * dot, 0.0)
    k = dot / (2.0 * d) + tau * tau / 6.0
    k += (_abs_moment3(d) / (24.0 * tau)) * sqdist**1.5
    mx, my = _upper_moments(sq1, d, tau), _upper_moments(sq2, d, tau)
    ix, iy = np.flatnonzero(mx[0] > 0), np.flatnonzero(my[0] > 0)
    if ix.size == 0 and iy.size == 0:
        return k
    t2 = tau * tau
    dots = dot / t2  # <x, x'> / tau^2
    corr = np.zeros_like(k)
    for mom, idx, sq, transpose in ((mx, ix, sq1, False), (my, iy, sq2, True)):
        if idx.size == 0:
            continue
        g = (dots.T if transpose else dots)[idx] / (sq[idx, None] / t2)
        m0, m1, m2, m3 = (mom[j, idx, None] for j in range(4))
        dterm = _single_cap_term(g, m0, m1, m2, m3)
        if transpose:
            corr[:, idx] += dterm.T / 2.0
        else:
            corr[idx] += dterm / 2.0
    if ix.size and iy.size:
        r1 = np.sqrt(sq1[ix]) / tau
        r2 = np.sqrt(sq2[iy]) / tau
        R1, R2 = np.broadcast_arrays(r1[:, None], r2[None, :])
        cos_t = dots[np.ix_(ix, iy)] / (R1 * R2)
        # A cosine rounded below 1 would give theta ~ 1e-8, where J has a
        # kink (the caps' overlap shrinks linearly): treat it as parallel,
        # so that the diagonal equals _fast_diagonal's theta = 0.
        theta = np.where(
            cos_t >= 1.0 - _PARALLEL_COSINE, 0.0, np.arccos(np.clip(cos_t, -1.0, 1.0))
        )
        reach = np.arccos(1.0 / R1) + np.arccos(1.0 / R2)
        ii, jj = np.nonzero(theta < reach)
        nodes, weights = _arc_nodes(_N_ARC_NODES)
        step = _CAP_CHUNK
        for start in range(0, ii.size, step):
            pi, pj = ii[start : start + step], jj[start : start + step]
            corr[ix[pi], iy[pj]] -= _cap_moments(
                R1[pi, pj], R2[pi, pj], theta[pi, pj], d, nodes, weights
            )
    return k + t2 * corr


def _fast_diagonal(X, tau):
    """``k(x, x)`` for the rows of X (``d >= 2``), by :func:`_fast_block`'s
    decomposition at ``x' = x`` (``g = 1``, ``theta = 0``)."""
    d = X.shape[1]
    sq = np.einsum("ij,ij->i", X, X)
    k = sq / (2.0 * d) + tau * tau / 6.0
    moments = _upper_moments(sq, d, tau)
    idx = np.flatnonzero(moments[0] > 0)
    if idx.size == 0:
        return k
    m0, m1, m2, m3 = moments[:, idx]
    r = np.sqrt(sq[idx]) / tau
    cap = _cap_moments(r, r, np.zeros_like(r), d, *_arc_nodes(_N_ARC_NODES))
    k[idx] += tau * tau * (_single_cap_term(1.0, m0, m1, m2, m3) - cap)
    return k


def _kernel_block(X, Y, tau, need_grad):
    """Kernel (and ``dk/dlog tau``) matrices between the rows of X and Y.

    For ``d >= 2`` the kernel comes from :func:`_fast_block`, with or without
    the gradient, so that ``k`` does not depend on ``eval_gradient``; the
    gradient from the angular quadrature of :func:`_biased_relu_pairs`.
    """
    shape = (X.shape[0], Y.shape[0])
    if X.shape[1] >= 2 and not need_grad:
        return _fast_block(X, Y, tau), None
    if X.shape[1] == 1:
        u, v = np.broadcast_arrays(X[:, :1], Y[:, 0])
        k, grad = _pairs_d1(u.ravel(), v.ravel(), tau, need_grad)
    else:
        sq1, sq2 = np.broadcast_arrays(
            np.einsum("ij,ij->i", X, X)[:, None], np.einsum("ij,ij->i", Y, Y)
        )
        k, grad = _biased_relu_pairs(
            sq1.ravel(),
            sq2.ravel(),
            (X @ Y.T).ravel(),
            d=X.shape[1],
            tau=tau,
            need_grad=need_grad,
        )
        k = _fast_block(X, Y, tau).ravel()
    return k.reshape(shape), None if grad is None else grad.reshape(shape)


def _symmetrize_upper(A):
    return np.triu(A) + np.triu(A, 1).T


def _kernel_matrix(X, Y, tau, need_grad):
    """Blocks of rows so that temporaries stay O(_BLOCK_PAIRS), not O(n m).

    With ``Y = None`` only the blocks on and above the diagonal are computed
    and mirrored, so the result is exactly symmetric.
    """
    sym = Y is None
    Y = X if sym else Y
    n, m = X.shape[0], Y.shape[0]
    K = np.empty((n, m))
    G = np.empty((n, m)) if need_grad else None
    step = max(1, _BLOCK_PAIRS // max(m, 1))
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        j0 = i0 if sym else 0
        kb, gb = _kernel_block(X[i0:i1], Y[j0:], tau, need_grad)
        for out, blk in ((K, kb), (G, gb)):
            if out is None:
                continue
            if sym:
                blk[:, : i1 - i0] = _symmetrize_upper(blk[:, : i1 - i0])
                out[j0:, i0:i1] = blk.T
            out[i0:i1, j0:] = blk
    return K, G


# --------------------------------------------------------------------------
# the kernel
# --------------------------------------------------------------------------
class BiasedReLUKernel(Kernel):
    r"""Limit kernel of spherical biased-ReLU random features.

    .. math::

        k(x, x') = \mathbb{E}\big[\mathrm{relu}(\langle w, x\rangle - b)\,
                   \mathrm{relu}(\langle w, x'\rangle - b)\big],

    with ``w`` uniform on the unit sphere ``S^(d-1)`` (``d`` the number of
    input features) and ``b`` uniform on ``[-init_scale, init_scale]``. It is
    the kernel whose RKHS the partially trainable networks of
    :mod:`sklearn_pt.neural_network` approximate, and the kernel of an
    infinitely wide random-features model (``trainable_proportion=0``).

    Parameters
    ----------
    init_scale : float, default=1.0
        Half-width ``tau`` of the bias distribution (the ``init_scale`` of
        the networks); 1 is the well-matched case for inputs on the unit
        sphere. Match it to the network the kernel stands for, or let
        :class:`~sklearn.gaussian_process.GaussianProcessRegressor` optimise
        it (in log space).
    init_scale_bounds : pair of floats > 0 or "fixed", default=(1e-2, 1e2)
        Bounds on ``init_scale`` (keyword-only); ``"fixed"`` excludes it
        from tuning.

    See Also
    --------
    sklearn_pt.kernels.ridge_leverage_scores : Leverage of random features.
    sklearn_pt.theory.approximation_bound : Approximation bound with these
        features.

    Notes
    -----
    The paper's setting is ``x`` on the unit sphere and ``init_scale >= 1``;
    there (more generally whenever ``|x|, |x'| <= init_scale``) the kernel
    has the closed form

    .. math::

        k(x, x') = \frac{\langle x, x'\rangle}{2d} + \frac{\tau^2}{6}
            + \frac{c_d \|x - x'\|^3}{24\tau},
        \qquad c_d = \frac{\Gamma(d/2)}{\sqrt\pi\,\Gamma((d+3)/2)} .

    Inputs of any norm are accepted and are **not** normalised: for points
    with ``|x| > init_scale`` a clipping correction is added. It splits into
    one-dimensional moments of each point (closed form) and, for each pair
    whose caps ``<w, x> > init_scale``, ``<w, x'> > init_scale`` intersect, a
    one-dimensional angular integral whose radial part is exact (closed-form
    tail moments) and whose two arcs are integrated by Gauss-Legendre
    quadrature; the relative error is below ``1e-9`` in the tests.
    ``d = 2`` (``w`` on the circle) uses the same integral with ``|w| = 1``;
    ``d = 1`` (``w = +-1``) is handled exactly. The gradient with respect to
    ``log(init_scale)`` is analytic. The kernel is not stationary and not a
    dot-product kernel.

    *When to normalise.* Inside the ball a pair costs a few vector
    operations, outside an angular integral per pair (memory is bounded by
    blocking), far slower (see :ref:`defaults_kernel` for the timings). Put
    a :class:`sklearn.preprocessing.Normalizer` after the
    ``StandardScaler`` (the paper's setting, and the fast closed form), or
    choose ``init_scale`` at least the largest input norm (no clipping at
    all), unless the behaviour of the biases outside the data's range is
    what you want to study.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.kernel_ridge import KernelRidge
    >>> from sklearn_pt.kernels import BiasedReLUKernel
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 3))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> kernel = BiasedReLUKernel(init_scale=1.0)
    >>> K = kernel(X)
    >>> K.shape
    (20, 20)
    >>> round(float(K[0, 0]), 6)  # 1 / (2 d) + 1 / 6 on the sphere
    0.333333
    >>> model = KernelRidge(alpha=1e-3, kernel=kernel).fit(X, X[:, 0] ** 2)
    >>> model.predict(X[:2]).shape
    (2,)
    """

    def __init__(
        self,
        init_scale: float = 1.0,
        *,
        init_scale_bounds: tuple[float, float] | str = (1e-2, 1e2),
    ):
        self.init_scale = init_scale
        self.init_scale_bounds = init_scale_bounds

    @property
    def hyperparameter_init_scale(self) -> Hyperparameter:
        return Hyperparameter("init_scale", "numeric", self.init_scale_bounds)

    def _tau(self) -> float:
        tau = self.init_scale
        if (
            not isinstance(tau, Real)
            or isinstance(tau, bool)
            or not np.isfinite(tau)
            or tau <= 0
        ):
            raise ValueError(
                "The 'init_scale' parameter of BiasedReLUKernel must be a positive "
                f"finite float; got {tau!r}. Pass e.g. init_scale=1.0."
            )
        return float(tau)

    def __call__(
        self,
        X: ArrayLike,
        Y: ArrayLike | None = None,
        eval_gradient: bool = False,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Return the kernel ``k(X, Y)`` and optionally its gradient.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Left argument.
        Y : array-like of shape (n_samples_Y, n_features), default=None
            Right argument; ``None`` means ``Y = X``.
        eval_gradient : bool, default=False
            Also return the gradient with respect to ``log(init_scale)``;
            only allowed when ``Y`` is None.

        Returns
        -------
        K : ndarray of shape (n_samples_X, n_samples_Y)
            Kernel matrix.
        K_gradient : ndarray of shape (n_samples_X, n_samples_X, n_dims)
            ``dK / dlog(init_scale)`` (``n_dims`` is 1, or 0 if the
            hyperparameter is fixed). Only returned if ``eval_gradient``.
        """
        tau = self._tau()
        X = validate_input(check_array, X, dtype=np.float64, input_name="X")
        if Y is not None:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated when Y is None.")
            Y = validate_input(
                check_array, Y, dtype=np.float64, input_name="Y", name="Y"
            )
            if Y.shape[1] != X.shape[1]:
                raise ValueError(
                    f"X has {X.shape[1]} features but Y has {Y.shape[1]}; both "
                    "arguments of BiasedReLUKernel need the same number of features."
                )
        need_grad = eval_gradient and not self.hyperparameter_init_scale.fixed
        K, G = _kernel_matrix(X, Y, tau, need_grad)
        if not eval_gradient:
            return K
        if not need_grad:
            return K, np.empty((X.shape[0], X.shape[0], 0))
        return K, G[..., None]

    def diag(self, X: ArrayLike) -> np.ndarray:
        """Return the diagonal ``k(x, x)`` of the kernel matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        K_diag : ndarray of shape (n_samples,)
            ``k(x_i, x_i)``; equals ``|x|^2 / (2 d) + init_scale^2 / 6`` when
            ``|x| <= init_scale``.
        """
        tau = self._tau()
        X = validate_input(check_array, X, dtype=np.float64, input_name="X")
        if X.shape[1] == 1:
            return _pairs_d1(X[:, 0], X[:, 0], tau, False)[0]
        return _fast_diagonal(X, tau)

    def is_stationary(self) -> bool:
        """Return False: the kernel depends on the inputs, not on ``x - x'``."""
        return False

    def __repr__(self) -> str:
        tau = self.init_scale
        value = f"{tau:.3g}" if isinstance(tau, Real) else repr(tau)
        return f"{type(self).__name__}(init_scale={value})"
