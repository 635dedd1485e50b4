"""Compositional regression on the sphere: an outer function of a few ReLU
features, the target of the structured three-layer example."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, validate_params
from ._index_models import _orthonormal_directions

__all__ = ["OUTER_FUNCTIONS", "make_compositional_regression"]


def _cosine_of_sum(inner: np.ndarray) -> np.ndarray:
    return np.cos(2.0 * inner.sum(axis=1))


def _product(inner: np.ndarray) -> np.ndarray:
    return inner.prod(axis=1)


OUTER_FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "cos": _cosine_of_sum,
    "product": _product,
}
"""Named outer functions ``g``; each maps the ``(n_samples, n_inner)`` inner
features ``h`` to ``(n_samples,)``: ``"cos"`` is ``cos(2 * sum_i h_i)``,
``"product"`` is ``prod_i h_i``."""


def _inner_features(X: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """``h_i(x) = relu(sqrt(d) <v_i, x>)`` for the columns ``v_i`` of ``directions``."""
    return np.maximum(np.sqrt(X.shape[1]) * (X @ directions), 0.0)


def _outer(outer) -> Callable[[np.ndarray], np.ndarray]:
    return OUTER_FUNCTIONS[outer] if isinstance(outer, str) else outer


def _uniform_on_sphere(n_samples, n_features, rng) -> np.ndarray:
    gaussian = rng.standard_normal((n_samples, n_features))
    return gaussian / np.linalg.norm(gaussian, axis=1, keepdims=True)


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_inner": [Interval(Integral, 1, None, closed="left")],
        "outer": [StrOptions(set(OUTER_FUNCTIONS)), callable],
        "noise": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "return_directions": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_compositional_regression(
    n_samples: int,
    n_features: int,
    *,
    n_inner: int = 2,
    outer="cos",
    noise: float = 0.0,
    random_state=None,
    return_directions: bool = False,
):
    """Compositional target ``y = g(h_1(x), ..., h_k(x)) + noise * eps`` on the sphere.

    ``x ~ Uniform(S^{d-1})``; the ``k = n_inner`` inner features are ReLU
    neurons ``h_i(x) = relu(sqrt(d) <v_i, x>)`` along a uniformly random
    orthonormal frame ``V = [v_1 ... v_k]`` (the factor ``sqrt(d)`` gives the
    projections unit variance at every ``d``), and the outer function ``g``
    combines them non-linearly.

    This is the library's convention for the structured three-layer example
    of He, Lao, Lu and Zhang (2026): each inner feature is exactly one neuron
    of the first layer of
    :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor`, so a few
    trainable first-layer neurons can learn them, while fixed random
    downstream layers and the trained readout build ``g`` on top. With every
    hidden neuron fixed (``P = 0``) the network is a random-features model in
    ``d`` dimensions, which leaves much of the target unexplained (about half
    of the variance of the default target at ``d = 10`` with two hidden layers
    of width 64 and 1,000 samples, against about a tenth with four trainable
    first-layer neurons; see ``examples/plot_three_layer_composition.py``).

    Parameters
    ----------
    n_samples : int
        ``n``, the number of samples.
    n_features : int
        ``d``, the input dimension.
    n_inner : int, default=2
        ``k``, the number of inner features; at most ``n_features``.
    outer : {"cos", "product"} or callable, default="cos"
        The outer function ``g``. ``"cos"``: ``cos(2 * sum_i h_i)``;
        ``"product"``: ``prod_i h_i``. A callable receives the
        ``(n_samples, n_inner)`` inner features and returns ``(n_samples,)``.
    noise : float, default=0.0
        Standard deviation of the Gaussian noise added to ``y``.
    random_state : int, RandomState instance or None, default=None
        Draws the directions, then the inputs, then the noise. Pass an int for
        reproducible output; no global random state is used.
    return_directions : bool, default=False
        Also return ``V``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Inputs, rows of unit norm.
    y : ndarray of shape (n_samples,)
        Targets.
    directions : ndarray of shape (n_features, n_inner)
        Only if ``return_directions``; orthonormal columns ``v_i``.

    See Also
    --------
    sklearn_pt.datasets.make_multi_index : Gaussian multi-index models.
    sklearn_pt.neural_network.PartiallyTrainableRegressor : With
        ``hidden_layer_sizes=(m, m)`` and ``trainable_proportion=(k / m, 0.0)``
        it is the three-layer network with ``k`` trainable first-layer neurons
        feeding a fixed second layer.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.datasets import make_compositional_regression
    >>> X, y, V = make_compositional_regression(100, 10, n_inner=2, random_state=0,
    ...                                         return_directions=True)
    >>> X.shape, y.shape, V.shape
    ((100, 10), (100,), (10, 2))
    >>> h = np.maximum(np.sqrt(10) * X @ V, 0)
    >>> bool(np.allclose(y, np.cos(2 * h.sum(axis=1))))
    True
    """
    rng = check_random_state(random_state)
    directions = _orthonormal_directions(n_features, n_inner, rng)
    X = _uniform_on_sphere(n_samples, n_features, rng)
    y = np.asarray(_outer(outer)(_inner_features(X, directions)), dtype=float)
    if y.shape != (n_samples,):
        raise ValueError(
            f"outer returned shape {y.shape}; it must map the ({n_samples}, "
            f"{n_inner}) inner features to shape ({n_samples},), e.g. "
            "lambda h: h.sum(axis=1)."
        )
    if noise:
        y = y + noise * rng.standard_normal(n_samples)
    return (X, y, directions) if return_directions else (X, y)
