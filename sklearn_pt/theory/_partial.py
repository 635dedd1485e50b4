"""Approximation theory of partially trainable two-layer networks.

Pure, vectorised functions for the formulas of He, Lao, Lu and Zhang (2026):
the harmonic interpolation ``kappa_P`` of the initialization mismatches, the
spherical biased-ReLU constants, the high-probability approximation bound, and
the trainable proportion that captures a given fraction of its reduction.

Every function accepts scalars or array-likes and broadcasts them with NumPy's
rules; the result is a Python ``float`` when every argument is a scalar and an
``ndarray`` otherwise.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "approximation_bound",
    "biased_relu_alpha",
    "biased_relu_kappa0",
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

    Notes
    -----
    With probability at least ``1 - delta`` over the frozen features, every
    target in the unit ball of the biased-ReLU RKHS is approximated within
    this squared L2 error. The bound decreases in ``P`` whenever
    ``kappa1 < kappa0`` and decreases in ``m`` for ``m > e * delta``.

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
    return _finish(c * (kp * np.log(m / dlt) / m) ** _alpha(dim))


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
        Mismatch of the trained neurons; must differ from
        ``kappa0 = biased_relu_kappa0(d, init_scale)``.

    Returns
    -------
    proportion : float or ndarray
        The unique ``P`` in ``[0, 1]``; it does not depend on the width, on
        ``delta`` or on the constant of the bound.

    Raises
    ------
    ValueError
        If ``kappa1 == kappa0``: the bound then does not depend on ``P``.

    Notes
    -----
    The bound is ``B(P) = K * kappa_P ** alpha`` with
    ``K = C * (log(m / delta) / m) ** alpha > 0`` independent of ``P``, so
    ``K`` cancels from the defining equation, which becomes

    .. math::

        \kappa_P^\alpha = (1 - q)\, \kappa_0^\alpha + q\, \kappa_1^\alpha .

    The right side lies between ``kappa1 ** alpha`` and ``kappa0 ** alpha``,
    so the target ``kappa_P = ((1 - q) kappa0^alpha + q kappa1^alpha)^(1/alpha)``
    lies between ``kappa1`` and ``kappa0``. Inverting the harmonic
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
    same = np.broadcast_to(k0 == k1, np.broadcast_shapes(k0.shape, k1.shape))
    if np.any(same):
        raise ValueError(
            "kappa1 equals kappa0 = biased_relu_kappa0(d, init_scale) = "
            f"{_first_bad(np.broadcast_to(k0, same.shape), same)!r}, so the bound "
            "does not depend on the trainable proportion. Pass a different kappa1."
        )
    alpha = _alpha(dim)
    target = ((1.0 - q) * k0**alpha + q * k1**alpha) ** (1.0 / alpha)
    p = (1.0 / target - 1.0 / k0) / (1.0 / k1 - 1.0 / k0)
    return _finish(np.clip(p, 0.0, 1.0))
