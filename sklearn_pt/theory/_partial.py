"""Approximation theory of partially trainable two-layer networks.

Pure, vectorised functions for the formulas of He, Lao, Lu and Zhang (2026):
the harmonic interpolation ``kappa_P`` of the initialization mismatches, the
spherical biased-ReLU constants, the high-probability approximation bound,
the trainable proportion that captures a given fraction of its reduction, and
the bound's shape in ``P`` with a least-squares fit of the mismatch ratio
``kappa_0 / kappa_1`` to a measured error curve.

Every function accepts scalars or array-likes and broadcasts them with NumPy's
rules; the result is a Python ``float`` when every argument is a scalar and an
``ndarray`` otherwise.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq
from scipy.special import lambertw

__all__ = [
    "approximation_bound",
    "biased_relu_alpha",
    "biased_relu_kappa0",
    "bound_shape",
    "fit_mismatch_ratio",
    "kappa_p",
    "proportion_for_reduction",
]

FloatOrArray = float | NDArray[np.float64]


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _as_float(value: ArrayLike, name: str) -> NDArray[np.float64]:
    """Convert ``value`` to a finite float64 array or raise a ValueError."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be a real number or an array of real numbers; got {value!r}."
        ) from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"{name} must be finite; got {value!r}. Remove NaN and infinite values."
        )
    return arr


def _first_bad(arr: NDArray[np.float64], bad: NDArray[np.bool_]) -> float:
    return float(arr[bad].flat[0]) if arr.ndim else float(arr)


def _check_range(
    arr: NDArray[np.float64],
    name: str,
    *,
    low: float,
    high: float = np.inf,
    low_open: bool = False,
    high_open: bool = False,
    fix: str,
) -> None:
    """Raise a ValueError naming ``name`` if ``arr`` leaves the range."""
    bad = (arr <= low if low_open else arr < low) | (
        arr >= high if high_open else arr > high
    )
    if np.any(bad):
        lo = "(" if low_open else "["
        hi = "inf)" if high == np.inf else f"{high:g}" + (")" if high_open else "]")
        raise ValueError(
            f"{name} must lie in {lo}{low:g}, {hi}; got {_first_bad(arr, bad)!r}. {fix}"
        )


def _check_dimension(d: ArrayLike) -> NDArray[np.float64]:
    arr = _as_float(d, "d")
    bad = (arr < 2) | (arr != np.round(arr))
    if np.any(bad):
        raise ValueError(
            f"d must be an integer >= 2 (the input dimension of features on "
            f"the sphere S^(d-1)); got {_first_bad(arr, bad)!r}. Pass the number "
            "of input features, at least 2."
        )
    return arr


def _check_proportion(value: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = _as_float(value, name)
    _check_range(
        arr,
        name,
        low=0.0,
        high=1.0,
        fix=(
            f"Pass {name} between 0 (random features, nothing trained) and "
            "1 (fully trained)."
            if name == "trainable_proportion"
            else f"Pass {name} between 0 and 1, e.g. 0.9 for 90%."
        ),
    )
    return arr


def _check_positive(value: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = _as_float(value, name)
    _check_range(
        arr, name, low=0.0, low_open=True, fix=f"Pass a positive value for {name}."
    )
    return arr


def _check_init_scale(value: ArrayLike) -> NDArray[np.float64]:
    arr = _as_float(value, "init_scale")
    _check_range(
        arr,
        "init_scale",
        low=1.0,
        fix=(
            "The bound kappa0* = 4*sqrt(2)*tau*(d+1)/d is proved only for a bias "
            "range tau = init_scale >= 1 (tau = 1 is the well-matched case); "
            "pass init_scale >= 1."
        ),
    )
    return arr


def _finish(out: NDArray[np.float64]) -> FloatOrArray:
    """Return a Python float for 0-d results, the array otherwise."""
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------
# formulas (no validation; arrays in, arrays out)
# --------------------------------------------------------------------------
def _kappa_p(p, kappa0, kappa1):
    return 1.0 / (p / kappa1 + (1.0 - p) / kappa0)


def _alpha(d):
    return (d + 2.0) / (d - 1.0)


def _kappa0(d, tau):
    return 4.0 * np.sqrt(2.0) * tau * (d + 1.0) / d


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def kappa_p(
    trainable_proportion: ArrayLike,
    kappa0: ArrayLike,
    kappa1: ArrayLike = 1.0,
) -> FloatOrArray:
    """Mismatch constant of a partially trainable network.

    Harmonic interpolation between the mismatch ``kappa0`` of the frozen
    (random-feature) neurons and the mismatch ``kappa1`` of the trained ones.

    Parameters
    ----------
    trainable_proportion : float or array-like
        Proportion ``P`` of trainable hidden neurons, in ``[0, 1]``.
    kappa0 : float or array-like
        Mismatch ``kappa_0`` of the initialization distribution, positive.
    kappa1 : float or array-like, default=1.0
        Mismatch ``kappa_1`` of the trained neurons, positive. ``1`` is the
        value reached by ridge leverage score sampling.

    Returns
    -------
    kappa : float or ndarray
        ``(P / kappa1 + (1 - P) / kappa0) ** -1``, broadcast over the
        arguments. A float when every argument is a scalar.

    Notes
    -----
    ``kappa_P`` is the weighted harmonic mean of ``kappa0`` and ``kappa1``
    with weights ``1 - P`` and ``P``, so ``kappa_P(0) = kappa0``,
    ``kappa_P(1) = kappa1`` and ``kappa_P`` is monotone in ``P``.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.theory import kappa_p
    >>> kappa_p(0.0, kappa0=8.0)
    8.0
    >>> kappa_p(1.0, kappa0=8.0)
    1.0
    >>> round(kappa_p(0.5, kappa0=8.0, kappa1=1.0), 6)
    1.777778
    >>> kappa_p([0.0, 0.5, 1.0], kappa0=3.0).round(3)
    array([3. , 1.5, 1. ])
    """
    p = _check_proportion(trainable_proportion, "trainable_proportion")
    k0 = _check_positive(kappa0, "kappa0")
    k1 = _check_positive(kappa1, "kappa1")
    return _finish(_kappa_p(p, k0, k1))


def biased_relu_alpha(d: ArrayLike) -> FloatOrArray:
    """Spectral decay exponent of the spherical biased-ReLU kernel.

    Parameters
    ----------
    d : int or array-like of int
        Input dimension, ``d >= 2`` (features live on ``S^(d-1)``).

    Returns
    -------
    alpha : float or ndarray
        ``(d + 2) / (d - 1)``; always ``> 1``.

    Notes
    -----
    The eigenvalues of the biased-ReLU limit kernel on ``S^(d-1)`` decay
    polynomially; ``alpha`` is the exponent that enters the approximation
    bound, see :func:`approximation_bound`. ``d = 1`` is excluded: the
    exponent is infinite there.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.theory import biased_relu_alpha
    >>> biased_relu_alpha(5)
    1.75
    >>> biased_relu_alpha([2, 3, 11]).round(3)
    array([4. , 2.5, 1.3])
    """
    return _finish(_alpha(_check_dimension(d)))


def biased_relu_kappa0(d: ArrayLike, init_scale: ArrayLike) -> FloatOrArray:
    """Initialization mismatch ``kappa_0*`` of spherical biased-ReLU features.

    Parameters
    ----------
    d : int or array-like of int
        Input dimension, ``d >= 2``.
    init_scale : float or array-like
        Bias range ``tau``: biases are drawn from ``Uniform[-tau, tau]``.
        Must be ``>= 1``.

    Returns
    -------
    kappa0 : float or ndarray
        ``4 * sqrt(2) * tau * (d + 1) / d``.

    Raises
    ------
    ValueError
        If ``init_scale < 1``: the bound is proved only for ``tau >= 1``.

    Notes
    -----
    On the unit sphere ``|<w, x>| <= 1``, so biases beyond ``[-1, 1]`` make a
    neuron always on or always off; ``kappa_0*`` grows linearly in ``tau``,
    which measures this waste. ``tau = 1`` is the well-matched case.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.theory import biased_relu_kappa0
    >>> round(biased_relu_kappa0(5, init_scale=10.0), 4)
    67.8823
    >>> round(biased_relu_kappa0(2, init_scale=1.0), 4)
    8.4853
    """
    dim = _check_dimension(d)
    tau = _check_init_scale(init_scale)
    return _finish(_kappa0(dim, tau))


def approximation_bound(
    trainable_proportion: ArrayLike,
    width: ArrayLike,
    *,
    d: ArrayLike,
    init_scale: ArrayLike,
    delta: ArrayLike = 0.05,
    kappa1: ArrayLike = 1.0,
    constant: ArrayLike = 1.0,
) -> FloatOrArray:
    """High-probability squared-L2 approximation bound of a partially trainable net.

    Parameters
    ----------
    trainable_proportion : float or array-like
        Proportion ``P`` of trainable hidden neurons, in ``[0, 1]``.
    width : float or array-like
        Number ``m`` of hidden neurons; must exceed ``delta``.
    d : int or array-like of int
        Input dimension, ``d >= 2``.
    init_scale : float or array-like
        Bias range ``tau >= 1`` of the initialization.
    delta : float or array-like, default=0.05
        Failure probability, in ``(0, 1)``.
    kappa1 : float or array-like, default=1.0
        Mismatch of the trained neurons (``1`` under ridge leverage sampling).
    constant : float or array-like, default=1.0
        The unspecified positive constant ``C`` of the bound.

    Returns
    -------
    bound : float or ndarray
        ``C * (kappa_P * log(m / delta) / m) ** alpha`` with
        ``kappa_P = kappa_p(P, biased_relu_kappa0(d, init_scale), kappa1)`` and
        ``alpha = biased_relu_alpha(d)``.

    Warns
    -----
    UserWarning
        When ``kappa_P * log(m / delta) / m > 1`` for some of the arguments:
        the bound then exceeds its constant ``C`` and says nothing about the
        approximation error. The message names the arguments and the width
        from which the bound is informative; pass a larger width, or use
        :func:`bound_shape` for the bound's shape in ``P``, which does not
        depend on the width.

    See Also
    --------
    bound_shape : The bound relative to its value at ``P = 0``.

    Notes
    -----
    With probability at least ``1 - delta`` over the frozen features, every
    target in the unit ball of the biased-ReLU RKHS is approximated within
    this squared L2 error. The bound decreases in ``P`` whenever
    ``kappa1 < kappa0`` and decreases in ``m`` for ``m > e * delta``.

    The bound is informative only where ``kappa_P * log(m / delta) < m``:
    elsewhere it exceeds ``C``, which for a constant of order one is no
    better than approximating by zero (its squared L2 error over the unit
    ball is at most ``sup_x k(x, x)``). The smallest informative
    width solves ``m = kappa_P * log(m / delta)``, i.e.
    ``m = -kappa_P * W_{-1}(-delta / kappa_P)`` with the lower branch of
    Lambert's ``W``: 643 neurons for ``d = 5``, ``init_scale = 10``,
    ``P = 0``, ``delta = 0.05`` (``kappa_0* = 67.9``).

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.theory import approximation_bound
    >>> b0 = approximation_bound(0.0, 1000, d=5, init_scale=10.0)
    >>> b1 = approximation_bound(1.0, 1000, d=5, init_scale=10.0)
    >>> round(b0 / b1, 2)  # kappa0 ** alpha with kappa1 = 1
    1605.36
    """
    p = _check_proportion(trainable_proportion, "trainable_proportion")
    m = _check_positive(width, "width")
    dim = _check_dimension(d)
    tau = _check_init_scale(init_scale)
    dlt = _as_float(delta, "delta")
    _check_range(
        dlt,
        "delta",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
        fix="Pass a failure probability strictly between 0 and 1, e.g. 0.05.",
    )
    k1 = _check_positive(kappa1, "kappa1")
    c = _check_positive(constant, "constant")
    bad = np.broadcast_to(m <= dlt, np.broadcast_shapes(m.shape, dlt.shape))
    if np.any(bad):
        raise ValueError(
            "width must exceed delta so that log(width / delta) > 0; got "
            f"width={_first_bad(np.broadcast_to(m, bad.shape), bad)!r}. "
            "Pass a width of at least 1 neuron."
        )
    kp = _kappa_p(p, _kappa0(dim, tau), k1)
    rate = kp * np.log(m / dlt) / m
    if np.any(rate > 1.0):
        _warn_uninformative(rate, kp, p, m, dlt)
    return _finish(c * rate ** _alpha(dim))


def _informative_width(kappa: float, delta: float) -> float:
    """Smallest width ``m`` with ``kappa * log(m / delta) <= m``."""
    # m = delta * exp(u) with u * exp(-u) = delta / kappa on the branch u > 1.
    return float(-kappa * lambertw(-delta / kappa, -1).real)


def _warn_uninformative(rate, kp, p, m, dlt) -> None:
    """Warn that ``rate = kappa_P * log(m / delta) / m`` exceeds 1 somewhere."""
    rate, kp, p, m, dlt = np.broadcast_arrays(rate, kp, p, m, dlt)
    bad = rate > 1.0
    first = tuple(np.argwhere(bad)[0]) if rate.ndim else ()
    count = "" if rate.ndim == 0 else f" ({int(bad.sum())} of {rate.size} values)"
    warnings.warn(
        "approximation_bound is outside the regime where it is informative"
        f"{count}: kappa_P * log(width / delta) / width = {rate[first]:.3g} > 1 "
        f"at trainable_proportion={p[first]:g}, width={m[first]:g} "
        f"(kappa_P={kp[first]:.3g}, delta={dlt[first]:g}), so the bound "
        "exceeds its constant C and says nothing about the approximation "
        "error there. Pass a larger width: at least "
        f"{np.ceil(_informative_width(kp[first], dlt[first])):.0f} neurons for "
        "these arguments; or use bound_shape for the bound's shape in P, which "
        "does not depend on the width.",
        UserWarning,
        stacklevel=3,
    )


def proportion_for_reduction(
    fraction: ArrayLike,
    *,
    d: ArrayLike,
    init_scale: ArrayLike,
    kappa1: ArrayLike = 1.0,
) -> FloatOrArray:
    r"""Trainable proportion that captures a fraction of the bound's reduction.

    Solves ``bound(0) - bound(P) = fraction * (bound(0) - bound(1))`` for
    ``P`` exactly, where ``bound`` is :func:`approximation_bound`.

    Parameters
    ----------
    fraction : float or array-like
        Fraction ``q`` of the reduction from ``P = 0`` (random features) to
        ``P = 1`` (fully trained), in ``[0, 1]``.
    d : int or array-like of int
        Input dimension, ``d >= 2``.
    init_scale : float or array-like
        Bias range ``tau >= 1`` of the initialization.
    kappa1 : float or array-like, default=1.0
        Mismatch of the trained neurons; must be smaller than
        ``kappa0 = biased_relu_kappa0(d, init_scale)``, so that training
        reduces the bound.

    Returns
    -------
    proportion : float or ndarray
        The unique ``P`` in ``[0, 1]``; it does not depend on the width, on
        ``delta`` or on the constant of the bound.

    Raises
    ------
    ValueError
        If ``kappa1 >= kappa0``: with ``kappa1 == kappa0`` the bound does not
        depend on ``P``, with ``kappa1 > kappa0`` it grows with ``P``; in
        neither case is there a reduction from ``P = 0`` to ``P = 1``.

    Notes
    -----
    The bound is ``B(P) = K * kappa_P ** alpha`` with
    ``K = C * (log(m / delta) / m) ** alpha > 0`` independent of ``P``, so
    ``K`` cancels from the defining equation, which becomes

    .. math::

        \kappa_P^\alpha = (1 - q)\, \kappa_0^\alpha + q\, \kappa_1^\alpha .

    The right side lies in ``[kappa1 ** alpha, kappa0 ** alpha]``, so the
    target ``kappa_P = ((1 - q) kappa0^alpha + q kappa1^alpha)^(1/alpha)``
    lies in ``[kappa1, kappa0]``. Inverting the harmonic
    interpolation ``1 / kappa_P = 1 / kappa0 + P (1 / kappa1 - 1 / kappa0)``
    gives the closed form

    .. math::

        P = \frac{1/\kappa_P - 1/\kappa_0}{1/\kappa_1 - 1/\kappa_0}
          = \frac{\kappa_1 (\kappa_0 - \kappa_P)}{\kappa_P (\kappa_0 - \kappa_1)},

    which is in ``[0, 1]`` and unique because ``kappa_P`` is strictly
    monotone in ``P``. With large mismatch (large ``tau``) most of the gain
    is captured at a small ``P``: the phase transition of the paper.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.theory import proportion_for_reduction
    >>> round(proportion_for_reduction(0.9, d=5, init_scale=10.0), 4)
    0.0406
    >>> proportion_for_reduction([0.0, 1.0], d=5, init_scale=10.0).round(12)
    array([0., 1.])
    """
    q = _check_proportion(fraction, "fraction")
    dim = _check_dimension(d)
    tau = _check_init_scale(init_scale)
    k1 = _check_positive(kappa1, "kappa1")
    k0 = _kappa0(dim, tau)
    k0_b, k1_b = np.broadcast_arrays(k0, k1)
    no_gain = k1_b >= k0_b
    if np.any(no_gain):
        got_k1, got_k0 = _first_bad(k1_b, no_gain), _first_bad(k0_b, no_gain)
        effect = (
            "does not depend on the trainable proportion"
            if got_k1 == got_k0
            else "grows with the trainable proportion"
        )
        raise ValueError(
            "kappa1 must be smaller than kappa0 = biased_relu_kappa0(d, "
            f"init_scale) = {got_k0!r}; got kappa1={got_k1!r}. The bound then "
            f"{effect}, so there is no reduction from P=0 to P=1 to capture. "
            f"Pass kappa1 < {got_k0:.6g}, e.g. the default 1.0 (ridge leverage "
            "sampling)."
        )
    alpha = _alpha(dim)
    target = ((1.0 - q) * k0**alpha + q * k1**alpha) ** (1.0 / alpha)
    p = (1.0 / target - 1.0 / k0) / (1.0 / k1 - 1.0 / k0)
    return _finish(np.clip(p, 0.0, 1.0))


def bound_shape(
    trainable_proportion: ArrayLike,
    mismatch_ratio: ArrayLike,
    *,
    alpha: ArrayLike,
) -> FloatOrArray:
    r"""Shape in ``P`` of the approximation bound: ``B(P) / B(0)``.

    Parameters
    ----------
    trainable_proportion : float or array-like
        Proportion ``P`` of trainable hidden neurons, in ``[0, 1]``.
    mismatch_ratio : float or array-like
        Ratio ``r = kappa0 / kappa1`` of the two mismatches, positive;
        ``r > 1`` when training reduces the mismatch.
    alpha : float or array-like
        Exponent of the bound, positive, e.g. ``biased_relu_alpha(d)``.

    Returns
    -------
    shape : float or ndarray
        ``(1 + P * (r - 1)) ** -alpha``, broadcast over the arguments; ``1``
        at ``P = 0`` and ``r ** -alpha`` at ``P = 1``.

    See Also
    --------
    approximation_bound : The bound itself.
    fit_mismatch_ratio : The ratio ``r`` that fits a measured curve.

    Notes
    -----
    In :func:`approximation_bound` only ``kappa_P`` depends on ``P``, so

    .. math::

        \frac{B(P)}{B(0)} = \Big(\frac{\kappa_P}{\kappa_0}\Big)^\alpha
        = \big(1 + P (r - 1)\big)^{-\alpha}, \qquad r = \kappa_0 / \kappa_1,

    which depends on the two mismatches only through their ratio, and not on
    the width, ``delta`` or the constant ``C``.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.theory import bound_shape
    >>> bound_shape(0.0, 10.0, alpha=1.75)
    1.0
    >>> round(bound_shape(1.0, 10.0, alpha=1.75), 6)  # 10 ** -1.75
    0.017783
    >>> bound_shape([0.0, 0.5, 1.0], 3.0, alpha=1.0).round(3)
    array([1.   , 0.5  , 0.333])
    """
    p = _check_proportion(trainable_proportion, "trainable_proportion")
    r = _check_positive(mismatch_ratio, "mismatch_ratio")
    a = _check_positive(alpha, "alpha")
    return _finish((1.0 + p * (r - 1.0)) ** -a)


_FIT_GRID_SIZE = 401
"""Points of the grid in ``log r`` that brackets the fit's minimum."""


def fit_mismatch_ratio(
    proportions: ArrayLike,
    error_ratios: ArrayLike,
    *,
    alpha: float,
    max_ratio: float = 1e4,
) -> tuple[float, float]:
    r"""Mismatch ratio ``kappa0 / kappa1`` whose bound shape fits measured errors.

    Least squares on the logarithms: the ``r`` in ``[1, max_ratio]`` that
    minimises ``sum_i (log e_i - log bound_shape(P_i, r, alpha=alpha)) ** 2``.

    Parameters
    ----------
    proportions : array-like of shape (n_points,)
        Trainable proportions ``P_i`` in ``[0, 1]``; at least one positive.
        Repeat a proportion to fit several seeds at once.
    error_ratios : array-like of shape (n_points,)
        Measured errors relative to the error at ``P = 0``, ``E(P_i) / E(0)``,
        positive.
    alpha : float
        Exponent of the bound's shape, positive, e.g. ``biased_relu_alpha(d)``.
    max_ratio : float, default=1e4
        Upper end of the search interval, greater than 1.

    Returns
    -------
    mismatch_ratio : float
        The fitted ``r``. ``1.0`` when the errors do not fall with ``P``
        (training does not help); ``max_ratio`` when they fall faster than
        any ratio in the interval allows.
    rms_residual : float
        Root mean square of the residuals ``log e_i - log bound_shape(...)``
        at the fit, over all points (points at ``P = 0`` contribute
        ``log e_i``, which no ``r`` changes): ``0`` for an exact fit,
        ``0.1`` for errors about 10% off the fitted shape.

    See Also
    --------
    bound_shape : The fitted shape.

    Notes
    -----
    The residual of point ``i`` is
    ``log e_i + alpha * log(1 + P_i (exp(u) - 1))`` in ``u = log r``, which
    increases with ``u``, so the sum of squares is smooth but need not be
    unimodal. The minimum is bracketed on a grid of 401 points of ``u``
    over ``[0, log(max_ratio)]`` and refined by Brent's method
    (:func:`scipy.optimize.brentq`) on the derivative of the cost between
    the best grid point and the neighbour where the derivative changes sign;
    it is an end of the interval when the derivative does not change sign
    there. Logarithms weight every point by
    its relative error, so the small errors at large ``P`` count as much as
    the large ones near ``P = 0``. With measured errors, ``E(1) / E(0)`` pins
    ``r`` at about ``(E(0) / E(1)) ** (1 / alpha)``; the fit depends on
    ``alpha`` in that way.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory import bound_shape, fit_mismatch_ratio
    >>> p = np.array([0.0, 0.05, 0.1, 0.5, 1.0])
    >>> errors = bound_shape(p, 10.0, alpha=1.75)
    >>> ratio, rms = fit_mismatch_ratio(p, errors, alpha=1.75)
    >>> round(ratio, 6), rms < 1e-8
    (10.0, True)
    """
    p = _check_proportion(proportions, "proportions").ravel()
    e = _check_positive(error_ratios, "error_ratios").ravel()
    if p.size != e.size:
        raise ValueError(
            "proportions and error_ratios must have one value per point; got "
            f"{p.size} proportions and {e.size} error ratios. Pass arrays of the "
            "same length (repeat a proportion once per seed)."
        )
    if not np.any(p > 0):
        raise ValueError(
            "proportions must contain a positive value: the error at P=0 does "
            f"not depend on the mismatch ratio; got {proportions!r}. Pass errors "
            "measured at some P > 0."
        )
    a = float(_check_positive(alpha, "alpha"))
    top = _as_float(max_ratio, "max_ratio")
    _check_range(
        top,
        "max_ratio",
        low=1.0,
        low_open=True,
        fix="Pass an upper end of the search interval above 1, e.g. 1e4.",
    )
    log_e = np.log(e)

    def residuals(u):
        return log_e + a * np.log1p(p * np.expm1(u))

    def cost(u):
        residual = residuals(u)
        return float(residual @ residual)

    def slope(u):  # half the derivative of the cost in u
        gain = a * p * np.exp(u) / (1.0 + p * np.expm1(u))
        return float(residuals(u) @ gain)

    top_u = float(np.log(top))
    grid = np.linspace(0.0, top_u, _FIT_GRID_SIZE)
    on_grid = log_e + a * np.log1p(p * np.expm1(grid)[:, None])
    costs = np.einsum("ij,ij->i", on_grid, on_grid)
    best = int(np.argmin(costs))
    # The minimum lies next to the best grid point: where the slope changes
    # sign on one side of it, or at an end of the interval.
    u = grid[best]
    if slope(u) > 0 and best > 0:
        low, high = grid[best - 1], u
    elif slope(u) < 0 and best < grid.size - 1:
        low, high = u, grid[best + 1]
    else:
        low = high = u
    if low < high and slope(low) < 0 < slope(high):
        root = brentq(slope, low, high, xtol=1e-14, rtol=4 * np.finfo(float).eps)
        u = root if cost(root) <= costs[best] else u
    ratio = 1.0 if u == 0.0 else float(top) if u == top_u else float(np.exp(u))
    return ratio, float(np.sqrt(cost(u) / p.size))
