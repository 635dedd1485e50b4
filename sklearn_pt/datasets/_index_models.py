"""Single- and multi-index regression data: ``y = g(Theta^T x) + noise``."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np
from numpy.polynomial import hermite_e
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, validate_params

__all__ = [
    "hermite_e_polynomial",
    "make_multi_index",
    "make_phase_retrieval",
    "make_single_index",
]


def hermite_e_polynomial(degree: int, z: np.ndarray) -> np.ndarray:
    """Probabilists' Hermite polynomial ``He_k(z)``.

    ``He_0 = 1``, ``He_1 = z``, ``He_2 = z^2 - 1``, ``He_3 = z^3 - 3z``; they are
    orthogonal under the standard Gaussian, with ``E[He_j He_k] = k! [j = k]``.

    Examples
    --------
    >>> from sklearn_pt.datasets import hermite_e_polynomial
    >>> hermite_e_polynomial(3, [0.0, 1.0, 2.0]).tolist()
    [0.0, -2.0, 2.0]
    """
    if not isinstance(degree, Integral) or degree < 0:
        raise ValueError(f"degree must be a nonnegative int; got {degree!r}.")
    coefficients = np.zeros(degree + 1)
    coefficients[degree] = 1.0
    return hermite_e.hermeval(np.asarray(z, dtype=float), coefficients)


def _he(degree):
    return lambda z: hermite_e_polynomial(degree, z)


LINKS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "he1": _he(1),
    "he2": _he(2),
    "he3": _he(3),
    "relu": lambda z: np.maximum(z, 0.0),
    "tanh": np.tanh,
    "square": np.square,
}
"""Named link functions ``g`` (applied to each projection ``<theta_i, x>``)."""


def _link(link) -> Callable[[np.ndarray], np.ndarray]:
    return LINKS[link] if isinstance(link, str) else link


def _orthonormal_directions(n_features, n_directions, rng) -> np.ndarray:
    if n_directions > n_features:
        raise ValueError(
            f"n_directions={n_directions} cannot exceed n_features={n_features}: "
            "the directions must be orthonormal."
        )
    gaussian = rng.standard_normal((n_features, n_directions))
    q, r = np.linalg.qr(gaussian)
    return q * np.sign(np.diag(r))  # uniform (Haar) orthonormal frame


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_directions": [Interval(Integral, 1, None, closed="left")],
        "link": [StrOptions(set(LINKS)), callable],
        "noise": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "return_directions": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_multi_index(
    n_samples: int,
    n_features: int,
    *,
    n_directions: int = 2,
    link="he2",
    noise: float = 0.0,
    random_state=None,
    return_directions: bool = False,
):
    """Multi-index regression: ``y = mean_i g(<theta_i, x>) + noise * eps``.

    ``x ~ N(0, I_d)`` and ``Theta = [theta_1 ... theta_k]`` is a uniformly
    random orthonormal ``d x k`` frame.

    Parameters
    ----------
    n_samples, n_features : int
        ``n`` and ``d``.
    n_directions : int, default=2
        ``k``, the number of latent directions.
    link : {"he1", "he2", "he3", "relu", "tanh", "square"} or callable, \
default="he2"
        The link ``g``, applied elementwise to the projections; a callable
        receives the ``(n_samples, k)`` projections and may return either that
        shape (then averaged over directions) or ``(n_samples,)``.
    noise : float, default=0.0
        Standard deviation of the Gaussian noise added to ``y``.
    random_state : int, RandomState instance or None, default=None
    return_directions : bool, default=False
        Also return ``Theta``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    directions : ndarray of shape (n_features, n_directions)
        Only if ``return_directions``; orthonormal columns.

    Examples
    --------
    >>> from sklearn_pt.datasets import make_multi_index
    >>> X, y, theta = make_multi_index(50, 10, n_directions=3, random_state=0,
    ...                                return_directions=True)
    >>> X.shape, y.shape, theta.shape
    ((50, 10), (50,), (10, 3))
    """
    rng = check_random_state(random_state)
    directions = _orthonormal_directions(n_features, n_directions, rng)
    X = rng.standard_normal((n_samples, n_features))
    values = np.asarray(_link(link)(X @ directions), dtype=float)
    y = values.mean(axis=1) if values.ndim == 2 else values
    if y.shape != (n_samples,):
        raise ValueError(
            f"link returned shape {values.shape}; expected ({n_samples}, "
            f"{n_directions}) or ({n_samples},)."
        )
    if noise:
        y = y + noise * rng.standard_normal(n_samples)
    return (X, y, directions) if return_directions else (X, y)


def make_single_index(
    n_samples: int,
    n_features: int,
    *,
    link="he3",
    noise: float = 0.0,
    random_state=None,
    return_directions: bool = False,
):
    """Single-index regression: ``y = g(<theta, x>) + noise * eps``, ``|theta|=1``.

    The ``k = 1`` case of :func:`make_multi_index`; ``directions`` then has
    shape ``(n_features, 1)``. The default ``He_3`` link has no linear part
    (information exponent 3), the target of the two-step analysis of Moniri
    and Hassani (2026).

    Examples
    --------
    >>> from sklearn_pt.datasets import make_single_index
    >>> X, y = make_single_index(100, 20, link="relu", random_state=0)
    >>> X.shape, y.shape
    ((100, 20), (100,))
    """
    return make_multi_index(
        n_samples,
        n_features,
        n_directions=1,
        link=link,
        noise=noise,
        random_state=random_state,
        return_directions=return_directions,
    )


def make_phase_retrieval(
    n_samples: int,
    n_features: int,
    *,
    noise: float = 0.0,
    random_state=None,
    return_directions: bool = False,
):
    """Phase retrieval: ``y = <theta, x>^2 + noise * eps``, ``x ~ N(0, I_d)``.

    The noiseless case is the benchmark of Montanari and Wang (2026), "Phase
    Transitions for Feature Learning in Neural Networks".

    Examples
    --------
    >>> from sklearn_pt.datasets import make_phase_retrieval
    >>> X, y, theta = make_phase_retrieval(30, 5, random_state=0,
    ...                                    return_directions=True)
    >>> bool(abs((X @ theta[:, 0]) ** 2 - y).max() < 1e-12)
    True
    """
    return make_single_index(
        n_samples,
        n_features,
        link="square",
        noise=noise,
        random_state=random_state,
        return_directions=return_directions,
    )
