"""Mercer eigenvalues of zonal kernels on the sphere, and the best
approximation by ``m`` functions that they give."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import eval_gegenbauer, gammaln, roots_jacobi

__all__ = ["harmonic_multiplicity", "kolmogorov_width", "zonal_eigenvalues"]


def harmonic_multiplicity(degree: int, n_features: int) -> int:
    """Dimension of the spherical harmonics of ``degree`` on ``S^(d-1)``.

    Examples
    --------
    >>> from sklearn_pt.theory import harmonic_multiplicity
    >>> [harmonic_multiplicity(l, 3) for l in range(4)]
    [1, 3, 5, 7]
    >>> [harmonic_multiplicity(l, 5) for l in range(4)]
    [1, 5, 14, 30]
    """
    d, k = int(n_features), int(degree)
    if k == 0:
        return 1
    log_binomial = gammaln(k + d - 2) - gammaln(k) - gammaln(d - 1)
    return round((2 * k + d - 2) / k * np.exp(log_binomial))


def zonal_eigenvalues(
    profile: Callable[[np.ndarray], np.ndarray],
    n_features: int,
    max_degree: int,
    *,
    n_nodes: int = 2000,
) -> tuple[np.ndarray, np.ndarray]:
    """Mercer eigenvalues of ``k(x, y) = profile(<x, y>)`` on the unit sphere.

    By the Funk–Hecke formula, the integral operator ``f -> E_y[k(., y)
    f(y)]`` (``y`` uniform on ``S^(d-1)``) has the spherical harmonics of
    degree ``l`` as eigenfunctions, with eigenvalue
    ``mu_l = c_d int_{-1}^{1} profile(t) P_l(t) (1 - t^2)^((d-3)/2) dt``,
    ``P_l`` the Gegenbauer polynomial of index ``(d-2)/2`` normalised to
    ``P_l(1) = 1`` and ``c_d`` the constant that makes the weight a
    probability density. Computed by Gauss–Jacobi quadrature.

    Parameters
    ----------
    profile : callable
        ``t -> k`` for ``t`` in ``[-1, 1]`` (vectorised).
    n_features : int
        ``d``, at least 3.
    max_degree : int
        The last degree ``l``.
    n_nodes : int, default=2000
        Quadrature nodes.

    Returns
    -------
    eigenvalues : ndarray of shape (max_degree + 1,)
        ``mu_0, ..., mu_L``.
    multiplicities : ndarray of shape (max_degree + 1,)
        :func:`harmonic_multiplicity` of each degree.

    References
    ----------
    Bach (2017), "Breaking the curse of dimensionality with convex neural
    networks", JMLR 18(19), Appendix D (the Funk–Hecke formula for these
    kernels).

    Examples
    --------
    The linear kernel on ``S^2``: ``E[<x, y> y] = x / 3``, three times.

    >>> from sklearn_pt.theory import zonal_eigenvalues
    >>> mu, count = zonal_eigenvalues(lambda t: t, 3, 2)
    >>> (mu.round(12) + 0.0).tolist(), count.tolist()
    ([0.0, 0.333333333333, 0.0], [1, 3, 5])
    """
    d = int(n_features)
    if d < 3:
        raise ValueError(f"n_features must be at least 3; got {n_features!r}.")
    half = (d - 3) / 2
    nodes, weights = roots_jacobi(int(n_nodes), half, half)
    weights = weights / weights.sum()  # the probability density of <x, y>
    values = np.asarray(profile(nodes), dtype=float)
    index = (d - 2) / 2
    degrees = np.arange(int(max_degree) + 1)
    legendre = np.array(
        [
            eval_gegenbauer(k, index, nodes) / eval_gegenbauer(k, index, 1.0)
            for k in degrees
        ]
    )
    eigenvalues = legendre @ (weights * values)
    multiplicities = np.array([harmonic_multiplicity(k, d) for k in degrees])
    return eigenvalues, multiplicities


def kolmogorov_width(
    eigenvalues: np.ndarray, multiplicities: np.ndarray, widths
) -> np.ndarray:
    """The worst case over the RKHS unit ball of the best squared ``L2``
    approximation by any ``m`` functions: the ``(m + 1)``-th largest Mercer
    eigenvalue, counted with multiplicity (the squared Kolmogorov ``m``-width
    of the ball), for each ``m`` of ``widths``.

    No ``m`` features do better; random features reach it up to the
    mismatch and the logarithm of the approximation bound. With eigenvalues
    of equal degree in blocks, it falls in steps, so a power law fitted over
    a few octaves of ``m`` need not have the asymptotic exponent.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory import kolmogorov_width
    >>> kolmogorov_width(np.array([1.0, 0.5, 0.1]), np.array([1, 3, 5]), [0, 1, 3, 4])
    array([1. , 0.5, 0.5, 0.1])
    """
    eigenvalues = np.asarray(eigenvalues, dtype=float)
    order = np.argsort(-eigenvalues, kind="stable")
    ends = np.cumsum(np.asarray(multiplicities)[order])
    widths = np.asarray(widths)
    if np.any(widths >= ends[-1]):
        raise ValueError(
            f"widths must be below the {ends[-1]} eigenvalues given; got "
            f"{widths.max()}. Pass a larger max_degree to zonal_eigenvalues."
        )
    return eigenvalues[order][np.searchsorted(ends, widths, side="right")]
