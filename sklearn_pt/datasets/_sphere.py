"""A smooth non-linear target of inputs on the unit sphere, the data of the
partially trainable reproductions."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._compat import Interval, validate_params

__all__ = ["make_sphere_regression"]


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 3, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def make_sphere_regression(
    n_samples: int = 100, n_features: int = 5, *, random_state: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs uniform on the unit sphere and ``y = sin(4 x_0) cos(3 x_1) + x_2^2``.

    A target of low degree in a few coordinates, which random ReLU features
    fit only partly and a few trained neurons improve: the data of the P
    sweeps of ``sklearn-pt reproduce partial`` and ``deep``.

    Parameters
    ----------
    n_samples : int, default=100
    n_features : int, default=5
        ``d``, at least 3.
    random_state : int or None, default=None
        Seed of a local :func:`numpy.random.default_rng` (no global state is
        used); None draws fresh entropy.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows of unit norm.
    y : ndarray of shape (n_samples,)

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.datasets import make_sphere_regression
    >>> X, y = make_sphere_regression(4, 5, random_state=0)
    >>> np.allclose(np.linalg.norm(X, axis=1), 1), y.shape
    (True, (4,))
    """
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]) + X[:, 2] ** 2
    return X, y
