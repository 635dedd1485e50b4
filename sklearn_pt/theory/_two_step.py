"""Spike count of two gradient steps on a linear-width two-layer network.

The formula of Moniri and Hassani (2026) for the number of outliers that the
second of two gradient steps adds to the spectrum of the first-layer weights,
with step sizes ``eta_i = c_i * N ** alpha_i``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from numbers import Integral

import numpy as np
from numpy.polynomial import hermite_e
from numpy.typing import ArrayLike, NDArray
from scipy.sparse.linalg import svds
from sklearn.utils import Bunch

__all__ = [
    "bbp_threshold",
    "count_signal_outliers",
    "cross_covariance_overlap",
    "hermite_coefficients",
    "order_strength",
    "predict_outlier_count",
    "smoothed_derivative",
    "spike_count",
    "two_step_signal",
]

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


_QUADRATURE_HALF_WIDTH = 20.0
_QUADRATURE_PANELS = 80
_QUADRATURE_ORDER = 20
_MAX_HERMITE_DEGREE = 100

ZERO_COEFFICIENT_RTOL = 1e-12
"""A Hermite coefficient counts as zero when ``|c_k| sqrt(k!)`` (its share
of ``sigma``'s norm, ``E[sigma^2] = sum_k c_k^2 k!``) is at most this times
``sqrt(E[sigma^2])``. The quadrature leaves at most ``1.4e-16`` in the exact
zeros of the registry's activations (orders up to 60); the smallest true
coefficients up to order 30 of gelu, relu, softplus and tanh have shares
above ``6e-8``. ``"sincos"``'s shares ``e^(-1/2) / sqrt(k!)`` fall below
the tolerance from ``k = 24`` on: orders that small add nothing at any
reachable width, and count as absent."""


def _gaussian_rule(
    panels: int = _QUADRATURE_PANELS,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights of ``E[f(z)]``, ``z ~ N(0, 1)``: Gauss--Legendre
    panels (``panels`` a side) on ``[-20, 20]`` with a panel edge at 0 (a kink
    there, as ReLU's, costs no accuracy), against the Gaussian density."""
    x, w = np.polynomial.legendre.leggauss(_QUADRATURE_ORDER)
    edges = np.linspace(-_QUADRATURE_HALF_WIDTH, _QUADRATURE_HALF_WIDTH, 2 * panels + 1)
    half = np.diff(edges)[:, None] / 2
    mid = (edges[:-1] + edges[1:])[:, None] / 2
    z = (half * x + mid).ravel()
    weights = (half * w).ravel() * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
    return z, weights


def _evaluate_activation(activation, z: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sigma(z)`` for a registry name or a callable on tensors (or arrays)."""
    import torch

    from ..nn import ACTIVATIONS

    if isinstance(activation, str):
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {sorted(ACTIVATIONS)} or a callable; "
                f"got {activation!r}."
            )
        activation = ACTIVATIONS[activation]
    if not callable(activation):
        raise ValueError(
            "activation must be a name of sklearn_pt.nn.ACTIVATIONS or a callable "
            f"mapping a tensor to a tensor elementwise; got {activation!r}."
        )
    try:
        values = activation(torch.as_tensor(z, dtype=torch.float64))
        values = values.detach().cpu().numpy() if torch.is_tensor(values) else values
    except (TypeError, AttributeError):  # a NumPy function
        values = activation(z)
    values = np.asarray(values, dtype=np.float64)
    if values.shape != z.shape or not np.all(np.isfinite(values)):
        raise ValueError(
            "activation must map z elementwise to finite values of the same "
            f"shape on [-{_QUADRATURE_HALF_WIDTH:g}, {_QUADRATURE_HALF_WIDTH:g}]; "
            f"got shape {values.shape} for {z.shape} inputs, or non-finite values."
        )
    return values


def hermite_coefficients(
    activation: str | Callable, degree: int
) -> NDArray[np.float64]:
    """Hermite coefficients ``c_0, ..., c_degree`` of an activation.

    ``c_k = E[sigma(z) He_k(z)] / k!`` for ``z ~ N(0, 1)`` and the
    probabilists' Hermite polynomials ``He_k``, so that
    ``sigma = sum_k c_k He_k`` in ``L^2(N(0, 1))`` and
    ``E[sigma^(k)(z)] = k! c_k`` (Stein's lemma). The order-``k`` term of the
    second gradient step carries ``E[sigma^(k+1)] = (k+1)! c_{k+1}``, so an
    activation whose ``c_{k+1}`` vanishes has no order ``k``
    (:func:`spike_count` with ``activation``).

    Parameters
    ----------
    activation : str or callable
        A name of :data:`sklearn_pt.nn.ACTIVATIONS` or an elementwise
        function of a tensor (as the estimators take) or of an array.
    degree : int
        The largest ``k``, at most 100.

    Returns
    -------
    ndarray of shape (degree + 1,)

    Notes
    -----
    The expectation is a Gauss--Legendre rule on ``[-20, 20]`` (160 panels
    of 20 nodes, one panel edge at 0) against the Gaussian density, and
    ``He_k / sqrt(k!)`` comes from its stable three-term recurrence. A plain
    Gauss--Hermite rule is spectrally accurate only for smooth functions:
    with 200 nodes it errs by ``8e-4`` on ReLU's coefficients (the kink at
    0), this rule by about ``1e-16``. Parity shows in the result:
    ``gelu``, ``relu``, ``softplus`` and ``silu`` are ``z/2`` plus an even
    function (their odd coefficients beyond ``c_1`` vanish), ``tanh`` is
    odd (its even ones vanish).

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".
    .. [2] O'Donnell (2014), "Analysis of Boolean Functions", ch. 11
       (Hermite expansions in Gaussian space).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory import hermite_coefficients
    >>> (hermite_coefficients("hermite3", 4).round(12) + 0.0).tolist()  # He_3's own
    [0.0, 1.0, 0.5, 0.166666666667, 0.0]
    >>> c = hermite_coefficients("relu", 3)  # 1/sqrt(2 pi), 1/2, phi(0)/2, 0
    >>> bool(np.allclose(c, [0.398942, 0.5, 0.199471, 0.0], atol=1e-6))
    True
    >>> bool(abs(hermite_coefficients("gelu", 3)[3]) < 1e-15)  # z/2 + even
    True
    """
    if (
        isinstance(degree, bool)
        or not isinstance(degree, Integral)
        or not 0 <= degree <= _MAX_HERMITE_DEGREE
    ):
        raise ValueError(
            f"degree must be an int in [0, {_MAX_HERMITE_DEGREE}] (the largest "
            f"Hermite order wanted); got {degree!r}."
        )
    z, weights = _gaussian_rule()
    weighted = weights * _evaluate_activation(activation, z)
    coefficients = np.empty(degree + 1)
    previous, current = np.zeros_like(z), np.ones_like(z)  # He_k / sqrt(k!)
    log_factorial = 0.0
    for k in range(degree + 1):
        if k:
            log_factorial += np.log(k)
            previous, current = (
                current,
                (z * current - np.sqrt(k - 1) * previous) / np.sqrt(k),
            )
        coefficients[k] = (weighted @ current) * np.exp(-0.5 * log_factorial)
    return coefficients


def _zero_coefficients(activation, degree: int) -> NDArray[np.bool_]:
    """``zero[k]`` for ``k = 0 .. degree``: is ``c_k`` zero, by
    :data:`ZERO_COEFFICIENT_RTOL`? (Cached for the registry's names.)"""
    if isinstance(activation, str):
        return _named_zero_coefficients(activation, degree).copy()
    return _compute_zero_coefficients(activation, degree)


@functools.lru_cache(maxsize=64)
def _named_zero_coefficients(name: str, degree: int) -> NDArray[np.bool_]:
    return _compute_zero_coefficients(name, degree)


def _compute_zero_coefficients(activation, degree: int) -> NDArray[np.bool_]:
    c = hermite_coefficients(activation, degree)
    log_factorials = np.cumsum(np.log(np.maximum(np.arange(c.size), 1)))
    share = np.abs(c) * np.exp(0.5 * log_factorials)
    z, weights = _gaussian_rule()
    norm = np.sqrt(weights @ _evaluate_activation(activation, z) ** 2)
    return share <= ZERO_COEFFICIENT_RTOL * norm


def _vanishing_orders(activation, max_order: int) -> NDArray[np.bool_]:
    """``vanish[k - 1]`` for ``k = 1 .. max_order``: is ``c_{k+1}`` zero?"""
    return _zero_coefficients(activation, max_order + 1)[2:]


def spike_count(
    alpha1: ArrayLike,
    alpha2: ArrayLike | None = None,
    degree: int | None = None,
    *,
    activation: str | Callable | None = None,
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
    >>> spike_count(0.375, 0.45, activation="gelu")  # k = 1, 3: k = 2 absent
    2
    >>> spike_count(0.375, 0.45, activation="tanh")  # k = 2 only
    1
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
    if activation is not None:
        count = _count_present_orders(count, activation)
    if total:
        count = count + 1
    return int(count) if count.ndim == 0 else count


def _count_present_orders(count: NDArray[np.int64], activation) -> NDArray[np.int64]:
    """Of the orders ``1 .. count``, those whose ``c_{k+1}`` does not vanish."""
    highest = int(count.max(initial=0))
    if highest > _MAX_HERMITE_DEGREE - 1:
        raise ValueError(
            f"spike_count with an activation checks the Hermite coefficients up "
            f"to order {_MAX_HERMITE_DEGREE}; these exponents give Lambda = "
            f"{highest}. Pass activation=None for the formula alone."
        )
    present = np.concatenate([[0], np.cumsum(~_vanishing_orders(activation, highest))])
    return present[count].astype(np.int64)


def order_strength(
    width: ArrayLike, alpha1: ArrayLike, alpha2: ArrayLike, order: ArrayLike
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
    width : float or array-like
        The width ``N`` (positive), as ``width`` of
        :func:`~sklearn_pt.theory.approximation_bound`.
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
    n = np.asarray(width, dtype=np.float64)
    k = np.asarray(order, dtype=np.float64)
    if np.any(~np.isfinite(n) | (n <= 0)):
        raise ValueError(f"width must be positive; got {width!r}.")
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


def bbp_threshold(n_rows: int, n_cols: int, scale: float = 1.0) -> float:
    """Smallest rank-one signal that leaves the bulk of an ``n_rows x n_cols``
    noise matrix with entries of variance ``scale**2 / n_cols``.

    For ``W = theta u v^T + Z`` (unit ``u, v``) the top singular value
    separates from the bulk edge ``scale (1 + sqrt(c))``, ``c = n_rows /
    n_cols``, iff ``theta > scale c^(1/4)`` (Benaych-Georges, Nadakuditi,
    2012); it then sits at ``sqrt((1 + t^2)(c + t^2)) / t`` times ``scale``,
    ``t = theta / scale``. With the initialisation ``W_0`` (rows
    ``N(0, I_d / d)``) ``scale = 1``.

    Parameters
    ----------
    n_rows, n_cols : int
        ``N`` and ``d``.
    scale : float, default=1.0
        Entry standard deviation times ``sqrt(n_cols)``.

    Returns
    -------
    float

    References
    ----------
    .. [1] Benaych-Georges, Nadakuditi (2012), "The singular values and
       vectors of low rank perturbations of large rectangular random
       matrices", J. Multivariate Anal. 111.

    Examples
    --------
    >>> from sklearn_pt.theory import bbp_threshold
    >>> round(bbp_threshold(1600, 400), 4)  # 4 ** (1/4)
    1.4142
    """
    if min(n_rows, n_cols) < 1 or not scale > 0:
        raise ValueError(
            f"n_rows and n_cols must be >= 1 and scale > 0; got {n_rows}, "
            f"{n_cols}, {scale}."
        )
    return float(scale * (n_rows / n_cols) ** 0.25)


def smoothed_derivative(
    activation: str | Callable, shifts: ArrayLike, scales: ArrayLike = 1.0
) -> NDArray[np.float64]:
    """``m(s, Delta) = E[sigma'(s z + Delta)] = E[z sigma(s z + Delta)] / s``,
    ``z ~ N(0, 1)``.

    The Gaussian smoothing of ``sigma'`` (Stein's lemma gives it without a
    derivative). At ``s = 1`` its Taylor coefficients in ``Delta`` are
    ``E[sigma^(k+1)] / k! = (k+1) c_{k+1}``, the weights of the second
    step's orders; a wider ``s`` smooths them away (for ``sin``,
    ``e^(-s^2/2)``). Tabulated on a grid (401 shifts, 9 scales; 400
    quadrature nodes) and interpolated linearly (relative error about
    ``1e-3`` for shifts spread over a range of 10 and scales over 1).

    Parameters
    ----------
    activation : str or callable
    shifts : array-like of shape (N, n) or (n,)
        ``Delta``.
    scales : float or array-like of shape (N,), default=1.0
        ``s``, one per row of ``shifts`` (positive).

    Returns
    -------
    ndarray of the shape of ``shifts``

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory._two_step import smoothed_derivative
    >>> m = smoothed_derivative("sincos", [0.0, 0.5])  # e^-1/2 (cos - sin)
    >>> bool(np.allclose(m, np.exp(-0.5) * (np.cos([0, .5]) - np.sin([0, .5]))))
    True
    >>> m = smoothed_derivative("sincos", [[0.0]], scales=[2.0])  # e^-2
    >>> bool(np.isclose(m[0, 0], np.exp(-2.0), rtol=1e-4))
    True
    """
    delta = np.asarray(shifts, dtype=np.float64)
    matrix = np.atleast_2d(delta)
    scale = np.broadcast_to(np.asarray(scales, dtype=np.float64), matrix.shape[:1])
    if not np.all(scale > 0):
        raise ValueError("scales must be positive (pre-activation widths).")
    table = _smoothing_table(
        activation, delta.min(initial=0.0), delta.max(initial=0.0), scale
    )
    return _look_up(table, matrix).reshape(delta.shape)


def _smoothing_table(activation, low: float, high: float, scales, size: int = 401):
    """``m(s_j, Delta)`` of :func:`smoothed_derivative` on ``size`` shifts
    spanning ``[low, high]``, one row per scale ``s_j``: ``(grid, rows)``."""
    z, weights = _gaussian_rule(panels=10)
    grid = np.linspace(low, high + 1e-12, size)
    widths = np.linspace(scales.min(), scales.max() + 1e-12, 9)
    points = widths[:, None, None] * z + grid[None, :, None]
    values = _evaluate_activation(activation, points.ravel()).reshape(points.shape)
    table = values @ (weights * z) / widths[:, None]  # (scales, shifts)
    position = np.interp(scales, widths, np.arange(widths.size))
    below = np.minimum(position.astype(int), widths.size - 2)
    frac = (position - below)[:, None]
    return grid, (1 - frac) * table[below] + frac * table[below + 1]


def _look_up(table, shifts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row ``j`` of ``shifts`` interpolated linearly in row ``j`` of the
    table of :func:`_smoothing_table`."""
    import torch

    grid, rows = table
    values, differences = _table_tensors(rows)
    position = torch.as_tensor((shifts - grid[0]) / (grid[1] - grid[0]))
    return _interpolate(values, differences, position).numpy()


def _table_tensors(rows):
    """The table's rows and their differences along the shifts, as tensors."""
    import torch

    values = torch.as_tensor(rows)
    return values, values[:, 1:] - values[:, :-1]


def _interpolate(values, differences, position):
    """Row ``j`` of ``values`` interpolated linearly at the (fractional)
    column indices in row ``j`` of ``position``, which is overwritten."""
    top = values.shape[1] - 1
    position.clamp_(0, top)
    left = position.floor().clamp_(max=top - 1)
    position.sub_(left)
    index = left.long()
    return values.gather(1, index).addcmul_(position, differences.gather(1, index))


def _derivative(activation, pre: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sigma'(pre)`` elementwise: the registry's closed form, else autograd."""
    import torch

    from ..nn import activation_function
    from ..nn._activations import activation_derivative

    function = activation_function(activation)
    z = torch.as_tensor(pre, dtype=torch.float64)
    closed_form = activation_derivative(function)
    if closed_form is not None:
        return closed_form(z).numpy()
    z.requires_grad_(True)
    function(z).sum().backward()
    return z.grad.numpy()


def _first_step(initial, X, y, a, eta, activation) -> NDArray[np.float64]:
    """``W_1 = W_0 + eta diag(a) sigma'(W_0 X^T) diag(y) X / (n sqrt(N))``,
    the correlation-loss step."""
    derivative = _derivative(activation, initial @ X.T)  # (N, n)
    step = (a[:, None] * derivative * y[None, :]) @ X / (X.shape[0] * np.sqrt(a.size))
    return initial + eta * step


_SELF_TERM_NODES = 16
"""Gauss--Hermite nodes of the average over the initial pre-activation in
the reused batch's self term (:func:`_reused_smoothed_derivative`)."""
_MIN_CROSS_WIDTH = 1e-3
"""Smallest width of the cross part of step 1 in that average (a narrower
one smooths nothing that matters)."""


def _reused_smoothed_derivative(activation, initial, residual, X, y, a, eta1, c1):
    """``E[sigma'(h_ij)]`` of step 2 on the batch of step 1, with the sample's
    own term of step 1 kept exact.

    ``h_ij = w_j . x_i`` after step 1 is ``u + kappa_ij sigma'(u) +
    Delta_ij^(-i) + xi``: ``u = w0_j . x_i ~ N(0, |w0_j|^2 |x|^2 / d)``
    (``|x|^2`` the batch's mean),
    the self term ``kappa_ij = eta_1 a_j y_i |x_i|^2 / (n sqrt(N))`` (sample
    ``i``'s own share of step 1, a function of ``u``), the mean move of the
    other samples ``Delta_ij^(-i) = eta_1 mu_1 a_j (beta_1 . x_i - y_i
    |x_i|^2 / n) / sqrt(N)`` and the rest of step 1's full-rank part
    ``xi ~ N(0, v_j)``, ``v_j = |W_1 - S_1 - W_0|_j^2 |x|^2 / d``
    (``residual`` is ``W_1 - S_1``). The mean over ``xi`` is
    :func:`smoothed_derivative`; the mean over ``u`` is a Gauss--Hermite
    rule."""
    n, d = X.shape
    root_width = np.sqrt(a.size)
    squared_norms = np.sum(X * X, axis=1)
    beta = X.T @ y / n
    others = X @ beta - y * squared_norms / n
    shift = np.outer(eta1 * c1 * a / root_width, others)
    self_term = np.outer(eta1 * a / root_width, y * squared_norms / n)
    input_scale = np.sqrt(squared_norms.mean() / d)
    cross_widths = np.maximum(
        np.linalg.norm(residual - initial, axis=1) * input_scale, _MIN_CROSS_WIDTH
    )
    spread = np.linalg.norm(initial, axis=1) * input_scale  # sd of u, per row
    nodes, weights = hermite_e.hermegauss(_SELF_TERM_NODES)
    weights = weights / weights.sum()
    u = np.outer(spread, nodes)  # (N, nodes)
    slopes = _derivative(activation, u)
    # every h below lies within |u| + |kappa| max |sigma'(u)| of the shift
    margin = np.abs(u).max() + np.abs(self_term).max() * np.abs(slopes).max()
    table = _smoothing_table(
        activation, shift.min() - margin, shift.max() + margin, cross_widths, 1001
    )
    return _average_look_up(table, shift, self_term, u, slopes, weights)


def _average_look_up(table, shift, self_term, u, slopes, weights):
    """``sum_k weights[k] * m(shift + u[:, k] + self_term * slopes[:, k])``,
    ``m`` interpolated in ``table`` as :func:`_look_up` does, the positions
    built in table-index units in place (the (N, n) passes are
    memory-bound)."""
    import torch

    grid, rows = table
    spacing = grid[1] - grid[0]
    values, differences = _table_tensors(rows)
    base = torch.as_tensor((shift - grid[0]) / spacing)
    kappa = torch.as_tensor(self_term / spacing)
    offsets = torch.as_tensor(u / spacing)
    slopes = torch.as_tensor(slopes)
    mean = torch.zeros_like(base)
    position = torch.empty_like(base)
    for k, weight in enumerate(weights):
        torch.addcmul(base, kappa, slopes[:, k : k + 1], out=position)
        position.add_(offsets[:, k : k + 1])
        mean.add_(_interpolate(values, differences, position), alpha=weight)
    return mean.numpy()


def two_step_signal(
    first_batch: tuple[ArrayLike, ArrayLike],
    second_batch: tuple[ArrayLike, ArrayLike],
    second_layer: ArrayLike,
    step_sizes: tuple[float, float],
    activation: str | Callable,
    *,
    initial_weights: ArrayLike | None = None,
    max_order: int = 6,
) -> Bunch:
    """The signal of two correlation-loss steps at a finite width: the mean
    terms of the steps, without and with the Hermite expansion.

    With ``f(x) = a^T sigma(W x) / sqrt(N)``, ``mu_m = E[sigma^(m)(z)] =
    m! c_m`` (:func:`hermite_coefficients`) and ``beta_1 = X_1^T y_1 / n_1``,
    step 1 adds the mean term ``S_1 = eta_1 mu_1 a beta_1^T / sqrt(N)`` and
    moves the pre-activation of neuron ``j`` at ``x`` by about
    ``Delta_j(x) = eta_1 mu_1 a_j (beta_1 . x) / sqrt(N)``. Step 2's
    gradient has ``sigma'(r_j . x + Delta_j)``, where ``r_j`` is row ``j`` of
    ``W_1 - S_1`` (the initialisation plus step 1's full-rank part);
    averaging over ``r_j . x ~ N(0, s_j^2)`` gives
    ``m(s_j, Delta) = E[sigma'(s_j z + Delta)]`` (:func:`smoothed_derivative`),
    so its mean term is

    ``S_2 - S_1 = eta_2 diag(a) m(s, Delta(X_2)) diag(y_2) X_2 / (n_2 sqrt(N))``,

    computed as it stands (``Delta`` need not be small at a finite ``N``).
    With ``initial_weights`` the widths ``s_j = |r_j|`` (times the rms of
    ``|x| / sqrt(d)``) come from the exact first step; step 1's full-rank
    part widens the rows with a large ``|a_j|`` most, which smooths away
    the higher orders exactly where their left vectors ``a^(k+1)`` live.
    Without, ``s_j = 1`` (the initialisation's width). With
    ``initial_weights`` and a reused batch, sample ``i``'s own term of
    step 1 is not independent of ``r_j . x_i``: it moves ``w_j . x_i`` by
    ``kappa_ij sigma'(w0_j . x_i)``, ``kappa_ij = eta_1 a_j y_i |x_i|^2 /
    (n sqrt(N))``, of the order of ``Delta`` where ``n ~ d``. That term is
    kept exact inside the average over ``w0_j . x_i ~ N(0, |w0_j|^2 |x|^2 /
    d)`` (a Gauss--Hermite rule), and the rest of step 1's full-rank part
    smooths it as above; replacing it by its mean ``mu_1`` overstates the
    top singular values of ``S_2`` (:ref:`defaults_two_step_signal`).
    Expanding ``m`` in ``Delta`` gives the orders of :func:`spike_count`:

    ``T_k = eta_2 (mu_{k+1} / k!) (eta_1 mu_1)^k N^(-(k+1)/2) a^(k+1) v_k^T``,
    ``v_k = X_2^T (y_2 * (X_2 beta_1)^k) / n_2``,

    whose norm carries ``(k+1) |c_{k+1}|``, ``|c_1|^k``, the constants and
    ``|v_k|`` and grows like ``N^(alpha2 - k (1/2 - alpha1))``. With a reused
    batch ``x_i . beta_1`` contains ``|x_i|^2 y_i / n ~ y_i / delta``, so the
    ``v_k`` of different orders differ. A singular value of ``S_2`` leaves
    the bulk when it exceeds :func:`bbp_threshold` of the bulk's scale.

    Parameters
    ----------
    first_batch, second_batch : tuple of (X, y)
        Each step's samples (the same for a reused batch) and standardised
        targets, as the estimators use them.
    second_layer : array-like of shape (N,)
        ``a``.
    step_sizes : tuple of two floats
        ``(eta_1, eta_2)``.
    activation : str or callable
        ``sigma``.
    initial_weights : array-like of shape (N, d), default=None
        ``W_0``: the pre-activation widths ``s_j`` of step 2 from the exact
        first step; None takes ``s_j = 1``.
    max_order : int, default=6
        Highest order ``k`` of ``orders`` (the expansion at ``s = 1``).

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``first`` (ndarray of shape (N, d), ``S_1``: the mean term of step 1,
        rank one), ``second`` (ndarray of shape (N, d), ``S_2``: ``S_1``
        plus step 2's mean term) and ``orders`` (ndarray of shape
        (max_order + 1,), ``||T_k||`` of the expansion's order
        ``k = 0 .. max_order``, 0 where ``c_{k+1} = 0``).

    References
    ----------
    .. [1] Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
       Networks: Two vs. One Step of Gradient Descent".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory import two_step_signal
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((400, 100)); y = np.tanh(X[:, 0])
    >>> y = (y - y.mean()) / y.std()
    >>> signal = two_step_signal(
    ...     (X, y), (X, y), rng.standard_normal(400), (8.0, 8.0), "tanh")
    >>> signal.second.shape, bool(signal.orders[1] == 0)  # tanh: c_2 = 0
    ((400, 100), True)
    """
    if isinstance(max_order, bool) or not isinstance(max_order, Integral):
        raise ValueError(f"max_order must be an int >= 0; got {max_order!r}.")
    if not 0 <= max_order < _MAX_HERMITE_DEGREE:
        raise ValueError(f"max_order must lie in [0, 99]; got {max_order}.")
    X1, y1 = (np.asarray(v, dtype=np.float64) for v in first_batch)
    X2, y2 = (np.asarray(v, dtype=np.float64) for v in second_batch)
    a = np.asarray(second_layer, dtype=np.float64).ravel()
    eta1, eta2 = (float(v) for v in step_sizes)
    root_width = np.sqrt(a.size)
    c = hermite_coefficients(activation, max_order + 1)
    beta = X1.T @ y1 / X1.shape[0]
    first = np.outer(eta1 * c[1] * a / root_width, beta)
    projection = X2 @ beta
    move = eta1 * c[1] / root_width
    if initial_weights is None:
        smoothed = smoothed_derivative(activation, np.outer(move * a, projection))
    else:
        W0 = np.asarray(initial_weights, dtype=np.float64)
        residual = _first_step(W0, X1, y1, a, eta1, activation) - first
        if X1.shape == X2.shape and np.array_equal(X1, X2):  # a reused batch
            smoothed = _reused_smoothed_derivative(
                activation, W0, residual, X1, y1, a, eta1, c[1]
            )
        else:
            input_scale = np.sqrt(np.mean(np.sum(X2 * X2, axis=1)) / X2.shape[1])
            widths = np.linalg.norm(residual, axis=1) * input_scale
            smoothed = smoothed_derivative(
                activation, np.outer(move * a, projection), widths
            )
    second = first + (eta2 / (X2.shape[0] * root_width)) * (
        (a[:, None] * smoothed) @ (y2[:, None] * X2)
    )
    orders = np.array(
        [
            abs(eta2 * (k + 1) * c[k + 1] * move**k / root_width)
            * np.linalg.norm(a ** (k + 1))
            * np.linalg.norm(X2.T @ (y2 * projection**k) / X2.shape[0])
            for k in range(max_order + 1)
        ]
    )
    orders[_zero_coefficients(activation, max_order + 1)[1:]] = 0.0
    return Bunch(first=first, second=second, orders=orders)


def count_signal_outliers(signal: ArrayLike, bulk_edge: float) -> int:
    """Singular values of a predicted signal that leave a bulk with this edge.

    The bulk is taken as white noise whose upper edge is ``bulk_edge``: its
    scale is ``bulk_edge / (1 + sqrt(c))``, ``c = N / d``, and a singular
    value of ``S`` counts when it exceeds :func:`bbp_threshold` at that
    scale (its outlier then lies above the edge). The steps broaden the bulk
    unevenly (rows with a large ``|a_j|`` move more), so the edge is best
    the measured one (``WeightSpectrum.bulk_edge_``): the library's
    convention for the finite-``N`` prediction.

    Parameters
    ----------
    signal : array-like of shape (N, d)
        ``S_1`` or ``S_2`` of :func:`two_step_signal`.
    bulk_edge : float
        Upper edge of the bulk of ``W_1`` or ``W_2``, in singular values
        (``1 + sqrt(N / d)`` for the initialisation).

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory import count_signal_outliers
    >>> S = np.outer(np.ones(400) / 20, np.eye(100)[0])  # one value, 1
    >>> count_signal_outliers(1.5 * S, 3.0), count_signal_outliers(1.3 * S, 3.0)
    (1, 0)
    """
    S = np.asarray(signal, dtype=np.float64)
    if S.ndim != 2 or not bulk_edge > 0:
        raise ValueError(
            f"signal must be a matrix and bulk_edge positive; got shape "
            f"{S.shape} and {bulk_edge!r}."
        )
    n_rows, n_cols = S.shape
    scale = bulk_edge / (1.0 + np.sqrt(n_rows / n_cols))
    gram = S.T @ S if n_rows >= n_cols else S @ S.T  # the smaller Gram matrix
    values = np.sqrt(np.clip(np.linalg.eigvalsh(gram), 0.0, None))
    return int(np.sum(values > bbp_threshold(n_rows, n_cols, scale)))


def _singular_values_above(S: np.ndarray, floor: float) -> np.ndarray:
    """Every singular value of ``S`` above ``floor``, largest first: the
    ``k`` largest by Lanczos (``scipy.sparse.linalg.svds``, to machine
    precision), ``k`` doubled until one of them is at or below ``floor``;
    dense where ``k`` would reach half the smaller side. A signal of two
    steps has a few values above a bulk's threshold and the rest far below:
    Lanczos needs a few dozen products with ``S``, not a decomposition."""
    smaller = min(S.shape)
    if not S.any():
        return np.zeros(0)
    # a fixed generic start: reproducible, and not orthogonal to any given vector
    start = np.random.default_rng(0).standard_normal(smaller)
    k = 8
    while 2 * k < smaller:
        values = svds(S, k=k, v0=start, return_singular_vectors=False)
        if values.min() <= floor:
            return np.sort(values[values > floor])[::-1]
        k *= 2
    values = np.linalg.svd(S, compute_uv=False)
    return values[values > floor]


def predict_outlier_count(
    signal: ArrayLike,
    weights: ArrayLike,
    *,
    edge: float,
    threshold: float,
    singular_values: ArrayLike | None = None,
) -> int:
    """Outliers of ``W = S + R`` above an edge test's threshold, predicted
    from the signal ``S`` and the bulk of ``W`` (not from its outliers).

    The steps leave two kinds of outlier, both counted:

    1. *Spikes of* ``S``. A singular value ``theta`` of ``S`` (its singular
       vectors generic for the noise ``R``) gives an outlier at the ``rho``
       above the bulk where ``theta^2 D(rho) = 1``, ``D`` the D-transform of
       the bulk (Benaych-Georges, Nadakuditi, 2012): ``D(z) = phi(z) (c
       phi(z) + (1 - c) / z)``, ``phi(z) = mean_i z / (z^2 - s_i^2)`` over
       the bulk's singular values ``s_i``, ``c = min(N, d) / max(N, d)``.
       ``D`` falls above the bulk, so that outlier passes the test iff
       ``theta^2 D(threshold) > 1``. For a white bulk this is
       :func:`bbp_threshold` (``theta > scale c^(1/4)``); the steps'
       bulk is far from white (rows with a large ``|a_j|`` move more), and
       its ``1 / sqrt(D(threshold))`` lies above the white bulk's
       (:func:`count_signal_outliers`; measured in :ref:`defaults_two_step_signal`).
    2. *Heavy rows* of ``R = W - S``. Row ``j`` (norm ``rho_j``, a generic
       direction) adds ``r r^T`` to the Gram matrix ``W^T W`` of the other
       rows, which gives an eigenvalue ``lambda`` with ``1 = rho_j^2
       g(lambda)``, ``g(lambda) = (1/d) tr (lambda - W^T W)^(-1)``: the row
       is an outlier of its own iff ``rho_j^2 g(threshold^2) > 1``. The
       neurons with the largest ``|a_j|`` give them; a signal matrix has
       none.

    The bulk is ``W``'s singular values below ``threshold``, those above
    the fitted ``edge`` taken at the edge (a deterministic bulk ends there;
    the values between are its Tracy--Widom fluctuation).

    Parameters
    ----------
    signal : array-like of shape (N, d)
        ``S``, e.g. ``S_1`` or ``S_2`` of :func:`two_step_signal`.
    weights : array-like of shape (N, d)
        ``W``, whose rows are the neurons.
    edge, threshold : float
        The fitted bulk edge and the test's threshold, in singular values
        (``edge`` and ``threshold`` of
        :func:`~sklearn_pt.spectral.soft_edge_test`).
    singular_values : array-like, default=None
        ``W``'s singular values, if already computed.

    Returns
    -------
    int

    References
    ----------
    .. [1] Benaych-Georges, Nadakuditi (2012), "The singular values and
       vectors of low rank perturbations of large rectangular random
       matrices", J. Multivariate Anal. 111.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.spectral import soft_edge_test
    >>> from sklearn_pt.theory import predict_outlier_count
    >>> rng = np.random.default_rng(0)
    >>> noise = rng.standard_normal((400, 400)) / 20  # white, edge 2
    >>> noise[7] *= 3  # one heavy row
    >>> u, v = np.ones(400) / 20, np.eye(400)[0]
    >>> for theta in (2.0, 0.8):
    ...     S = theta * np.outer(u, v)
    ...     test = soft_edge_test(np.linalg.svd(S + noise, compute_uv=False))
    ...     predicted = predict_outlier_count(
    ...         S, S + noise, edge=test.edge, threshold=test.threshold)
    ...     print(predicted, test.n_outliers)
    2 2
    1 1
    """
    S = np.asarray(signal, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    if S.ndim != 2 or S.shape != W.shape or not 0 < edge <= threshold:
        raise ValueError(
            f"signal and weights must be matrices of one shape and 0 < edge <= "
            f"threshold; got shapes {S.shape}, {W.shape}, edge {edge!r} and "
            f"threshold {threshold!r}."
        )
    n_rows, n_cols = W.shape
    p = min(n_rows, n_cols)
    ratio = p / max(n_rows, n_cols)
    if singular_values is None:
        singular_values = np.linalg.svd(W, compute_uv=False)
    values = np.asarray(singular_values, dtype=np.float64).ravel()
    bulk = np.minimum(values[values < threshold], edge)
    if bulk.size == 0:
        return 0
    inverse = 1.0 / (threshold**2 - bulk**2)  # (z^2 - s_i^2)^(-1) at the threshold
    phi = threshold * inverse.mean()
    transform = phi * (ratio * phi + (1.0 - ratio) / threshold)
    spikes = _singular_values_above(S, 1.0 / np.sqrt(transform)).size
    # (1/d) tr (z^2 - W^T W)^(-1): the p bulk values, and d - p zeros if N < d.
    g = (p * inverse.mean() + max(n_cols - n_rows, 0) / threshold**2) / n_cols
    rows = np.sum((W - S) ** 2, axis=1)
    return spikes + int(np.sum(rows * g > 1.0))
