"""Spike count of two gradient steps on a linear-width two-layer network.

The formula of Moniri and Hassani (2026) for the number of outliers that the
second of two gradient steps adds to the spectrum of the first-layer weights,
with step sizes ``eta_i = c_i * N ** alpha_i``.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral

import numpy as np
from numpy.polynomial import hermite_e
from numpy.typing import ArrayLike, NDArray

__all__ = ["cross_covariance_overlap", "order_strength", "spike_count"]

_FLOOR_TOLERANCE = 1e-9
"""Ratios within this of an integer count as that integer (``0.3 / 0.15``)."""


def _check_exponent(value: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be a real number or an array of real numbers; got {value!r}."
        ) from exc
    bad = ~np.isfinite(arr) | (arr < 0) | (arr >= 0.5)
    if np.any(bad):
        first = float(arr[bad].flat[0]) if arr.ndim else float(arr)
        raise ValueError(
            f"{name} must lie in [0, 0.5); got {first!r}. The step size is "
            f"eta = c * N ** {name} and the theory needs the pre-activation move "
            f"N ** ({name} - 1/2) to vanish: pass an exponent between 0 and 0.5, "
            "e.g. 0.25."
        )
    return arr


def _check_degree(degree) -> float:
    if degree is None:
        return np.inf
    if isinstance(degree, bool) or not isinstance(degree, Integral) or degree < 1:
        raise ValueError(
            "degree must be a positive int (the degree L of a polynomial "
            "activation) or None for an activation whose Hermite expansion does "
            f"not terminate (gelu, tanh, ...); got {degree!r}."
        )
    return float(degree)


def spike_count(
    alpha1: ArrayLike,
    alpha2: ArrayLike | None = None,
    degree: int | None = None,
    *,
    total: bool = False,
) -> int | NDArray[np.int64]:
    """Number of outliers added to the weight spectrum by the second GD step.

    With step sizes ``eta_i = c_i * N ** alpha_i``, the second step adds

    ``Lambda(alpha1, alpha2) = min(L - 1, floor(alpha2 / (1/2 - alpha1)))``

    outliers beyond the rank-one spike of the first step, ``L`` being the
    degree of the activation's (Hermite) polynomial expansion.

    Parameters
    ----------
    alpha1 : float or array-like
        Exponent of the first step size, in ``[0, 1/2)``.
    alpha2 : float, array-like or None, default=None
        Exponent of the second step size, in ``[0, 1/2)``. ``None`` is the
        one-step case (Ba et al., 2022): a single step adds only its rank-one
        spike, so ``Lambda = 0``.
    degree : int or None, default=None
        Degree ``L`` of a polynomial activation; ``None`` for activations
        with an infinite expansion (no cap).
    total : bool, default=False
        Count the first step's rank-one spike too, i.e. return
        ``1 + Lambda``: the number of outliers of ``W_2`` when the first
        step's spike exists (the target correlates with ``sigma'``'s mean).

    Returns
    -------
    count : int or ndarray of int
        Broadcast over ``alpha1`` and ``alpha2``; an int for scalars.

    Notes
    -----
    A step of size ``eta = c * N ** alpha`` moves each pre-activation by about
    ``N ** (alpha1 - 1/2)``; the order-``k`` term of the expansion of
    ``sigma'(W_1 x)`` in that move enters the second gradient with size about
    ``N ** (alpha2 - k (1/2 - alpha1))``, for ``k = 1, ..., L - 1``. With
    the ratio ``rho = alpha2 / (1/2 - alpha1)``, that term grows with ``N``
    for ``k < rho``, is of order one (``N ** 0``) for ``k = rho`` and
    vanishes for ``k > rho``; ``Lambda`` counts the terms that give an
    outlier. For a ratio that is not an integer, ``floor(rho)`` is the
    number of growing terms. At an integer ratio ``rho = K`` the floor gives
    ``Lambda = K``: the formula counts the boundary term ``k = K``, whose
    size neither grows nor vanishes with ``N``, as an outlier. So the count
    is ``K`` for ``K <= rho < K + 1`` (each region includes its lower
    boundary line ``alpha2 = K (1/2 - alpha1)``); e.g.
    ``alpha1 + alpha2 < 1/2`` gives ``Lambda = 0``, where the second step
    acts like one step of size ``eta_1 + eta_2``, and
    ``alpha1 + alpha2 = 1/2`` gives ``Lambda = 1``. Whether a boundary
    term's spike separates from the bulk at a finite ``N`` depends on the
    constants ``c_1, c_2`` rather than on ``N``; the count there is the
    formula's. Ratios within ``1e-9`` of an integer count as that integer,
    so that rounding (``0.3 / (0.5 - 0.35) == 1.9999999999999996`` in
    floating point) does not lower the count.

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".
    .. [2] Ba, Erdogdu, Suzuki, Wang, Wu, Yang (2022), "High-dimensional
       Asymptotics of Feature Learning: How One Gradient Step Improves the
       Representation", NeurIPS.

    Examples
    --------
    >>> from sklearn_pt.theory import spike_count
    >>> spike_count(0.25, 0.1)
    0
    >>> spike_count(0.375, 0.3)
    2
    >>> spike_count(0.375, 0.3, degree=2)
    1
    >>> spike_count(0.25, None, total=True)
    1
    >>> spike_count(0.4, [0.05, 0.15, 0.25, 0.45]).tolist()
    [0, 1, 2, 4]
    """
    a1 = _check_exponent(alpha1, "alpha1")
    cap = _check_degree(degree)
    if alpha2 is None:
        a2 = np.zeros_like(a1)
    else:
        a2 = _check_exponent(alpha2, "alpha2")
    ratio = a2 / (0.5 - a1)
    count = np.floor(ratio + _FLOOR_TOLERANCE)
    count = np.minimum(count, cap - 1.0).astype(np.int64)
    if total:
        count = count + 1
    return int(count) if count.ndim == 0 else count


def order_strength(
    n_neurons: ArrayLike, alpha1: ArrayLike, alpha2: ArrayLike, order: ArrayLike
) -> float | NDArray[np.float64]:
    """Size of the order-``k`` term of the second step at width ``N``.

    ``N ** (alpha2 - k (1/2 - alpha1))``: the heuristic of :func:`spike_count`
    (the order-``k`` term of the expansion of ``sigma'(W_1 x)`` in the first
    step's pre-activation move ``N ** (alpha1 - 1/2)``, times the second step
    size ``N ** alpha2``). ``spike_count`` counts the orders whose exponent is
    nonnegative; at a finite ``N`` an order with a slightly negative exponent
    still has a strength near one and may well give an outlier (a
    finite-size crossover), and an order with a small positive exponent may
    not yet separate from the bulk.

    Parameters
    ----------
    n_neurons : float or array-like
        The width ``N`` (positive).
    alpha1, alpha2 : float or array-like
        Step-size exponents, in ``[0, 1/2)``.
    order : int or array-like
        The order ``k >= 1`` of the term.

    Returns
    -------
    strength : float or ndarray
        Broadcast over the arguments; a float for scalars.

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".

    Examples
    --------
    >>> from sklearn_pt.theory import order_strength
    >>> round(order_strength(500, 0.25, 0.2, 1), 2)  # Lambda = 0, yet near 1
    0.73
    >>> order_strength([250, 2000], 0.25, 0.25, 1).tolist()  # on the line
    [1.0, 1.0]
    """
    a1 = _check_exponent(alpha1, "alpha1")
    a2 = _check_exponent(alpha2, "alpha2")
    n = np.asarray(n_neurons, dtype=np.float64)
    k = np.asarray(order, dtype=np.float64)
    if np.any(~np.isfinite(n) | (n <= 0)):
        raise ValueError(f"n_neurons must be positive; got {n_neurons!r}.")
    if np.any((k < 1) | (k != np.floor(k))):
        raise ValueError(f"order must be an integer >= 1; got {order!r}.")
    strength = n ** (a2 - k * (0.5 - a1))
    return float(strength) if strength.ndim == 0 else strength


_GAUSS_HERMITE_NODES = 100
"""Nodes of the Gauss--Hermite rule for the link's Gaussian moments (exact
for polynomial links of degree up to about 99)."""


def cross_covariance_overlap(
    n_samples: int, n_features: int, link: str | Callable = "he3"
) -> float:
    """Typical ``|cos|`` between ``theta`` and the direction ``X^T y / n``.

    Every plain gradient step on the first layer contains the rank-one term
    ``X^T y / n`` (the first Hermite coefficient of the activation times the
    sample cross-covariance). For ``y = g(<theta, x>)`` with
    ``x ~ N(0, I_d)``, ``y`` standardised to mean 0 and variance 1 and
    ``z = <theta, x>``, the coordinate of ``X^T y / n`` along ``theta`` has
    mean ``c_1 = E[y z]`` and variance ``(E[y^2 z^2] - c_1^2) / n``, every
    orthogonal coordinate mean 0 and variance ``E[y^2] / n = 1 / n``. So

    ``cos^2 = (c_1^2 + (kappa - c_1^2) / n) / (c_1^2 + (kappa - c_1^2) / n
    + (d - 1) / n)``, with ``kappa = E[y^2 z^2]``,

    to leading order. For a target without a linear part (``c_1 = 0``, e.g.
    ``He_3``) the direction carries no signal, yet it is tilted towards
    ``theta`` because the noise is heteroscedastic: ``kappa = 7`` for
    ``He_3`` (``E[He_3^2 z^2] / E[He_3^2] = 42 / 6``), so
    ``|cos| = sqrt(7 / (d + 6))``, independent of ``n``. This is the level a
    fresh batch's second step reaches by chance on an ``He_3`` target.

    Parameters
    ----------
    n_samples : int
        ``n``, the samples of the step.
    n_features : int
        ``d``.
    link : {"he1", "he2", "he3", "relu", "tanh", "square"} or callable, \
default="he3"
        ``g``, as in :func:`~sklearn_pt.datasets.make_single_index`; a callable
        maps an array of ``z`` to ``g(z)`` elementwise.

    Returns
    -------
    float in [0, 1]

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".

    Examples
    --------
    >>> from sklearn_pt.theory import cross_covariance_overlap
    >>> round(cross_covariance_overlap(400, 100, "he3"), 4)  # sqrt(7 / 106)
    0.257
    >>> round(cross_covariance_overlap(400, 100, "he1"), 3)  # the signal
    0.896
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral):
        raise ValueError(f"n_samples must be an int >= 1; got {n_samples!r}.")
    if isinstance(n_features, bool) or not isinstance(n_features, Integral):
        raise ValueError(f"n_features must be an int >= 1; got {n_features!r}.")
    if n_samples < 1 or n_features < 1:
        raise ValueError(
            f"n_samples and n_features must be >= 1; got {n_samples}, {n_features}."
        )
    if isinstance(link, str):
        from ..datasets._index_models import LINKS

        if link not in LINKS:
            raise ValueError(f"link must be one of {sorted(LINKS)} or a callable.")
        link = LINKS[link]
    z, weights = hermite_e.hermegauss(_GAUSS_HERMITE_NODES)
    weights = weights / weights.sum()
    raw = np.asarray(link(z), dtype=np.float64)
    g = raw - weights @ raw
    variance = weights @ (g * g)
    if not variance > 1e-12 * (weights @ (raw * raw)):
        raise ValueError("link must not be constant under N(0, 1).")
    y = g / np.sqrt(variance)
    c1 = weights @ (y * z)
    kappa = weights @ (y * y * z * z)
    along = c1 * c1 + (kappa - c1 * c1) / n_samples
    return float(np.sqrt(along / (along + (n_features - 1) / n_samples)))
