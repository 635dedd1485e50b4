"""Fit many estimators of one kind as one stacked computation."""

from __future__ import annotations

from collections.abc import Sequence

from ..exceptions import DivergenceError
from ..feature_extraction import TwoStepFeatures
from ..neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
    _first_layer_stacked,
    _two_step_stacked,
)
from ._batched import BATCHED_PARAMETERS, fit_batched

__all__ = ["STACKED_PARAMETERS", "fit_stacked"]

STACKED_PARAMETERS = {
    PartiallyTrainableRegressor: BATCHED_PARAMETERS,
    FirstLayerGDRegressor: _first_layer_stacked.PER_FIT,
    TwoStepFeatureLearner: _two_step_stacked.PER_FIT,
    TwoStepFeatures: _two_step_stacked.PER_FIT,
}
"""Per estimator class, the parameters in which the estimators stacked by
:func:`fit_stacked` may differ."""


def fit_stacked(
    estimators: Sequence, X, y
) -> list[PartiallyTrainableRegressor | FirstLayerGDRegressor | DivergenceError]:
    """Fit estimators that differ only in their seeds, initial networks or
    step sizes on ``(X, y)``, all at once.

    A sweep of one of the papers fits the same estimator many times, changing
    only what :data:`STACKED_PARAMETERS` lists for its class: the trainable
    proportion and seed of a :class:`PartiallyTrainableRegressor`, the seed of
    a :class:`FirstLayerGDRegressor`, the step-size exponents, constants and
    seed of a :class:`TwoStepFeatureLearner` or
    :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`. Here their
    networks live in stacked tensors and each training step is one batched
    computation for all of them; each estimator ends fitted as its own
    ``fit(X, y)`` would leave it (equal to rounding: about ``1e-10``
    relative in float64).

    This is what :func:`proportion_curve` and :func:`sample_ratio_curve` do
    with ``strategy="batched"``; call it for any other grid, e.g. a grid over
    step-size exponents and seeds, with a list of configured clones.

    Parameters
    ----------
    estimators : sequence of estimators
        Of one class among :data:`STACKED_PARAMETERS`, equal in every
        parameter but those it lists for that class. Fitted in place.
    X : array-like of shape (n_samples, n_features)
        Training inputs, the same for every estimator.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets.

    Returns
    -------
    list
        Per estimator, the estimator itself, fitted, or the
        :class:`~sklearn_pt.exceptions.DivergenceError` its own ``fit`` would
        have raised (that estimator is then left as it was; the others train
        on).

    Raises
    ------
    ValueError
        If the estimators are of another class, of different classes, or
        differ in another parameter (the message names what to change).

    See Also
    --------
    proportion_curve : The trainable-proportion sweep, batched by default.
    sample_ratio_curve : The sample-ratio sweep, batched by default.

    Notes
    -----
    On a CPU the stacked step does the arithmetic of the ``K`` separate fits
    and saves their per-call overhead: on two cores
    ``benchmarks/bench_sweep.py`` measures 4.5 to 6 times (a proportion
    sweep at width 512), ``benchmarks/bench_sample_ratio.py`` 2.6 to 2.8
    times (first-layer GD at width 4) and a two-step grid about 1 time (its
    steps are two large products either way). On a GPU one stacked product
    keeps the device busy where ``K`` small ones do not.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Montanari, Wang (2026), "Feature Learning by Gradient Descent".

    Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
    Networks: Two vs. One Step of Gradient Descent".

    Examples
    --------
    A grid over step-size exponents and seeds:

    >>> import numpy as np
    >>> from sklearn_pt.datasets import make_single_index
    >>> from sklearn_pt.model_selection import fit_stacked
    >>> from sklearn_pt.neural_network import TwoStepFeatureLearner
    >>> X, y = make_single_index(200, 20, random_state=0)
    >>> grid = [TwoStepFeatureLearner(hidden_layer_sizes=30, random_state=seed,
    ...                               step_size_exponents=(a, a), dtype="float64")
    ...         for a in (0.0, 0.3) for seed in (0, 1)]
    >>> fitted = fit_stacked(grid, X, y)
    >>> fitted[3] is grid[3]
    True
    >>> alone = TwoStepFeatureLearner(hidden_layer_sizes=30, random_state=1,
    ...     step_size_exponents=(0.3, 0.3), dtype="float64").fit(X, y)
    >>> bool(np.allclose(fitted[3].predict(X), alone.predict(X), rtol=1e-9))
    True
    """
    estimators = list(estimators)
    if not estimators:
        raise ValueError("fit_stacked needs at least one estimator.")
    kinds = {type(estimator) for estimator in estimators}
    if len(kinds) != 1:
        names = sorted(kind.__name__ for kind in kinds)
        raise ValueError(
            f"fit_stacked fits estimators of one class; got {', '.join(names)}. "
            "Call it once per class."
        )
    (kind,) = kinds
    for stacked_class, fit in _STACKED_FITS.items():
        if issubclass(kind, stacked_class):
            return fit(estimators, X, y)
    supported = ", ".join(cls.__name__ for cls in STACKED_PARAMETERS)
    raise ValueError(
        f"fit_stacked cannot stack {kind.__name__} fits (it stacks {supported}); "
        "fit each estimator on its own."
    )


def _fit_first_layers(estimators, X, y) -> list:
    datasets = [(X, y)] * len(estimators)
    return _first_layer_stacked.fit_stacked(estimators, datasets)


_STACKED_FITS = {
    PartiallyTrainableRegressor: fit_batched,
    FirstLayerGDRegressor: _fit_first_layers,
    TwoStepFeatureLearner: _two_step_stacked.fit_two_steps_stacked,
    TwoStepFeatures: _two_step_stacked.fit_two_steps_stacked,
}
"""Per class of :data:`STACKED_PARAMETERS`, its stacked fit."""
