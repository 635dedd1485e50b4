"""Fit many estimators of one kind as one stacked computation.

One generic stacked fit for every stackable estimator: each estimator plans
its fit (``plan_fit``), the first plan's ``stack`` stacks the plans, one
:func:`~sklearn_pt._training.fit_loop` trains them, and each plan is
completed with its model's outcome (:func:`~sklearn_pt._training.run_stacked`).
What may differ between the estimators is their class's
``_stacked_parameters``; :func:`stacked_fit_unsupported` says why a
configuration cannot be stacked.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._base import fit_keeping_states
from .._training import run_stacked

__all__ = ["fit_stacked", "stacked_fit_unsupported"]


def stacked_fit_unsupported(estimator, param_name: str | None = None) -> str | None:
    """Why fits of ``estimator`` (differing in ``param_name``) cannot be
    stacked by :func:`fit_stacked`, or None when they can.

    Parameters
    ----------
    estimator : estimator
    param_name : str, optional
        The parameter a sweep varies.

    Returns
    -------
    str or None

    Examples
    --------
    >>> from sklearn_pt.model_selection._stacked import stacked_fit_unsupported
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> print(stacked_fit_unsupported(PartiallyTrainableRegressor(),
    ...                               "trainable_proportion"))
    None
    >>> stacked_fit_unsupported(PartiallyTrainableRegressor(solver="lbfgs"))
    "solver='lbfgs' is not elementwise (stacked solvers: 'adam', 'sgd', 'gd')"
    """
    name = type(estimator).__name__
    stacked = getattr(estimator, "_stacked_parameters", None)
    if stacked is None or not hasattr(estimator, "plan_fit"):
        return (
            f"{name} fits cannot be stacked (its class declares no "
            "_stacked_parameters and no fit plan that stacks; pipelines are "
            "not stacked)"
        )
    if param_name is not None and param_name not in stacked:
        if param_name not in estimator.get_params(deep=False):
            return f"a {name} has no parameter {param_name!r}"
        return (
            f"param_name={param_name!r} is not one of the parameters in which "
            f"stacked {name} fits may differ ({_quoted(sorted(stacked))})"
        )
    unsupported = getattr(estimator, "_stacked_fit_unsupported", None)
    return None if unsupported is None else unsupported()


def _quoted(names) -> str:
    return ", ".join(repr(name) for name in names)


def check_stackable(estimators) -> None:
    """Raise a ValueError naming the parameter and the fix unless
    ``estimators`` are of one stackable class and differ only in its
    ``_stacked_parameters``."""
    if not estimators:
        raise ValueError("fit_stacked needs at least one estimator.")
    kinds = {type(estimator) for estimator in estimators}
    if len(kinds) != 1:
        names = sorted(kind.__name__ for kind in kinds)
        raise ValueError(
            f"fit_stacked fits estimators of one class; got {', '.join(names)}. "
            "Call it once per class."
        )
    template = estimators[0]
    reason = stacked_fit_unsupported(template)
    if reason is not None:
        raise ValueError(f"Cannot stack these fits: {reason}. Fit each on its own.")
    stacked = template._stacked_parameters
    reference = template.get_params(deep=False)
    for estimator in estimators[1:]:
        params = estimator.get_params(deep=False)
        different = sorted(
            name
            for name, value in reference.items()
            if name not in stacked and not _same_value(params[name], value)
        )
        if different:
            raise ValueError(
                f"Stacked {type(template).__name__} fits may differ only in "
                f"{_quoted(sorted(stacked))}; these differ too: "
                f"{_quoted(different)}. Set them equal, or stack each group of "
                "equal values apart."
            )


def _same_value(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return False


def fit_stacked(estimators: Sequence, X, y, *, callbacks: Sequence = ()) -> list:
    """Fit estimators that differ only in their seeds, initial networks or
    step sizes on ``(X, y)``, all at once.

    A sweep of one of the papers fits the same estimator many times, changing
    only what its class's ``_stacked_parameters`` attribute lists: the trainable
    proportion and seed of a :class:`PartiallyTrainableRegressor`, the seed of
    a :class:`FirstLayerGDRegressor`, the step-size exponents, constants and
    seed of a :class:`TwoStepFeatureLearner` or
    :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`. Here their
    networks live in stacked tensors and each training step is one stacked
    computation for all of them; each estimator ends fitted as its own
    ``fit(X, y)`` would leave it (equal to rounding: about ``1e-10``
    relative in float64).

    This is what :func:`proportion_curve` and :func:`sample_ratio_curve` do
    with ``strategy="stacked"``; call it for any other grid, e.g. a grid over
    step-size exponents and seeds, with a list of configured clones.

    Parameters
    ----------
    estimators : sequence of estimators
        Of one stackable class (one with a ``_stacked_parameters``
        attribute), equal in every parameter but those it lists. Fitted in
        place.
    X : array-like of shape (n_samples, n_features)
        Training inputs, the same for every estimator.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets.
    callbacks : sequence of Callback, default=()
        More callbacks of the stacked training (the
        ``sklearn_pt._training.Callback`` protocol), after the estimators'
        own: each sees the loop after every iteration, with the stacked
        networks as ``loop.stepper.module`` (e.g. to keep a copy of them at
        an epoch). Only the estimators that train by gradient are stacked.

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
    proportion_curve : The trainable-proportion sweep, stacked by default.
    sample_ratio_curve : The sample-ratio sweep, stacked by default.

    Notes
    -----
    An estimator is stackable when its class declares
    ``_stacked_parameters`` (a frozenset of parameter names) and its
    ``plan_fit`` returns a :class:`~sklearn_pt._training.FitPlan` whose
    ``stack`` stacks such plans (a
    :class:`~sklearn_pt._training.StackedFit`); it may define
    ``_stacked_fit_unsupported()``, the reason (or None) a configuration
    cannot be stacked, and the class method ``_plan_stacked(models,
    datasets)``, which makes the plans of one stacked fit (e.g. to draw once
    what several plans share).

    On a CPU the stacked step does the arithmetic of the ``K`` separate fits
    and saves their per-call overhead, so it gains most where that overhead
    is a large part of a step; a two-step grid stacks its steps only up to
    ``N * d = 200 * 200`` first-layer weights and fits larger cells one by
    one. On a GPU one stacked product keeps the device busy where ``K``
    small ones do not. See :ref:`defaults_stacked` for the measured gains.

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
    datasets = [(X, y)] * len(estimators)
    return fit_stacked_datasets(estimators, datasets, callbacks=callbacks)


def fit_stacked_datasets(
    estimators: Sequence, datasets: Sequence, *, callbacks: Sequence = ()
) -> list:
    """:func:`fit_stacked` with one training set ``(X, y)`` per estimator
    (the estimator's stacking must take it: e.g. first-layer GD on data sets
    of one shape)."""
    estimators = list(estimators)
    check_stackable(estimators)
    if len(datasets) != len(estimators):
        raise ValueError("Pass one (X, y) per estimator.")

    def fit(models) -> list:
        plan_stacked = getattr(type(models[0]), "_plan_stacked", None)
        if plan_stacked is not None:  # e.g. draws shared by the plans, made once
            plans = plan_stacked(models, datasets)
        else:
            plans = [
                model.plan_fit(X, y)
                for model, (X, y) in zip(models, datasets, strict=True)
            ]
        return run_stacked(plans, callbacks=callbacks)

    return fit_keeping_states(estimators, fit)
