"""Phase-transition sweeps over the trainable proportion P (or any parameter)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import Bunch, indexable

from .._compat import _safe_indexing
from .._parallel import delayed, run_tasks
from .._progress import progress_bar, quiet_fit, warn_convergence
from ._stacked import stacked_fit_unsupported
from ._stacked_curves import stacked_validation_curves

__all__ = ["proportion_curve"]

STRATEGIES = ("auto", "stacked", "sequential")


def proportion_curve(
    estimator,
    X,
    y,
    *,
    proportions: Sequence[float] = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0),
    param_name: str = "trainable_proportion",
    cv=None,
    scoring=None,
    n_jobs: int | None = None,
    random_states: Sequence[int] = (0,),
    strategy: str = "auto",
    verbose: int = 0,
) -> Bunch:
    """Train and test scores against the trainable proportion, over seeds.

    :func:`sklearn.model_selection.validation_curve` repeated for each
    ``random_state``: for every seed the estimator is cloned with that
    ``random_state`` and fitted for every value of ``param_name`` on every
    cross-validation split, in parallel with joblib.

    Parameters
    ----------
    estimator : estimator
        Any estimator with a ``param_name`` parameter (for example
        :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor`), or a
        pipeline ending in one (``param_name="step__trainable_proportion"``).
        It must have a ``random_state`` parameter when ``random_states`` is
        not None.
    X, y : array-like
        Data.
    proportions : sequence of float, default=(0, 0.05, 0.1, 0.25, 0.5, 1)
        Values of ``param_name``.
    param_name : str, default="trainable_proportion"
        The parameter to sweep (any parameter works, e.g. ``"init_scale"``).
    cv : int, cross-validation generator or iterable, default=None
        As in ``validation_curve`` (5-fold by default).
    scoring : str or callable, default=None
        As in ``validation_curve`` (the estimator's ``score`` by default).
    n_jobs : int, default=None
        Parallel fits (joblib; works with any joblib backend).
    random_states : sequence of int or None, default=(0,)
        One seed per repetition; None keeps the estimator's own
        ``random_state`` and gives a single repetition.
    strategy : {"auto", "stacked", "sequential"}, default="auto"
        ``"sequential"``: independent fits of clones through joblib.
        ``"stacked"``: for each cross-validation split, the
        ``n_proportions * n_seeds`` networks are trained together as one
        stacked model on the estimator's device (one batched matrix product
        per layer, one optimiser step per mini-batch for all of them; see
        Notes). Needs a stackable estimator (not a pipeline), e.g. a
        :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` (or
        a subclass), with ``param_name`` one of its class's
        ``_stacked_parameters`` (there: the parameters that only choose the
        initial network, ``trainable_proportion``, ``random_state``,
        ``init_scale``, ``trainable_selection``, ``leverage_pool_size``) and
        ``solver`` in ``{"adam", "sgd", "gd"}`` (either
        ``trainable_selection``, either ``readout``); otherwise a ValueError
        says which rule fails (see
        :func:`~sklearn_pt.model_selection.fit_stacked`).
        ``"auto"``: stacked when all these rules hold, sequential otherwise.
    verbose : int, default=0
        Show a progress bar over the fits (the stacked strategy: over the
        splits) on stderr when positive.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``train_scores`` and ``test_scores``, each of shape
        ``(n_proportions, n_seeds, n_splits)`` (scores: higher is better, as
        everywhere in scikit-learn), ``proportions`` (ndarray of shape
        (n_proportions,), the values of ``param_name``) and
        ``random_states`` (the list of seeds, ``[None]`` for the estimator's
        own). Code written for
        :func:`~sklearn.model_selection.validation_curve`'s
        ``(n_params, n_splits)`` arrays takes
        ``scores.reshape(len(scores), -1)``: the seeds folded into the
        splits, seed-major (the splits of seed 0, then of seed 1, ...).

    Notes
    -----
    Both strategies return the same arrays: the stacked one reproduces each
    network's sequential fit (initial weights, trainable neurons and
    mini-batch order from its own ``random_state``, the same optimiser, its own
    early stopping, loss curve and divergence checks), up to the rounding of
    the batched matrix products (about 1e-12 relative in float64, 1e-6 in
    float32: ``strategy="sequential"`` gives bitwise the scores of
    ``validation_curve``). A fit that
    diverges scores NaN in both, with a
    :class:`~sklearn.exceptions.FitFailedWarning`. The stacked strategy
    computes the splits once for all seeds (as the sequential one does for a
    deterministic splitter, e.g. an int ``cv``), ignores ``n_jobs`` (one
    process; torch threads the products) and keeps all ``K`` networks of a
    split on the device together, so it needs ``K`` times the memory of one
    fit. Networks that stop early keep being evaluated (their weights are
    held fixed) until the last one stops. The estimator's ``verbose`` is not
    used by the stacked strategy (no per-iteration printing). With the
    default ``scoring`` (the R^2 of ``score``) or ``"r2"``, the stacked
    strategy also scores all the networks of a split from one stacked
    prediction. The speed-up is largest where one fit is dominated by
    per-step overhead (narrow networks, GPUs); see :ref:`defaults_stacked`
    for the measured gains.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn_pt.model_selection import proportion_curve
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> X, y = make_regression(n_samples=60, n_features=3, random_state=0)
    >>> reg = PartiallyTrainableRegressor(hidden_layer_sizes=(8,), max_iter=2)
    >>> result = proportion_curve(reg, X, y / y.std(), proportions=[0, 1],
    ...                           cv=2, random_states=[0, 1])
    >>> result.train_scores.shape, result.proportions
    ((2, 2, 2), array([0, 1]))
    >>> result.test_scores.reshape(2, -1).shape  # validation_curve's layout
    (2, 4)
    """
    if strategy not in STRATEGIES:
        raise ValueError(
            f"strategy must be one of {', '.join(map(repr, STRATEGIES))}; got "
            f"{strategy!r}."
        )
    seeds = [None] if random_states is None else list(random_states)
    if not seeds:
        raise ValueError("random_states must hold at least one seed, or be None.")
    reason = stacked_fit_unsupported(estimator, param_name)
    if strategy == "stacked" and reason is not None:
        raise ValueError(
            f"strategy='stacked' cannot run this sweep: {reason}. Use "
            "strategy='auto' to fall back to sequential fits when batching is "
            "not possible."
        )
    if strategy != "sequential" and reason is None:
        train, test = stacked_validation_curves(
            estimator,
            X,
            y,
            param_name=param_name,
            param_range=list(proportions),
            random_states=seeds,
            cv=cv,
            scoring=scoring,
            verbose=verbose,
        )
    else:
        train, test = _sequential_curves(
            estimator,
            X,
            y,
            param_name,
            list(proportions),
            seeds,
            cv,
            scoring,
            n_jobs,
            verbose,
        )
    return Bunch(
        train_scores=train,
        test_scores=test,
        proportions=np.asarray(proportions),
        random_states=seeds,
    )


def _sequential_curves(
    estimator, X, y, param_name, values, seeds, cv, scoring, n_jobs, verbose
):
    """What :func:`~sklearn.model_selection.validation_curve` computes for
    each seed (the same splits, fits and scores), as one joblib run with a
    progress bar, one summarising ``ConvergenceWarning`` and one
    ``FitFailedWarning``."""
    X, y = indexable(X, y)
    splitter = check_cv(cv, y, classifier=is_classifier(estimator))
    scorer = check_scoring(estimator, scoring=scoring)
    models = []
    for seed in seeds:
        model = clone(estimator)
        if seed is not None:
            model.set_params(**{_random_state_name(model): seed})
        models.append(model)
    # Splits drawn once per seed, as validation_curve (called per seed) did.
    splits = [list(splitter.split(X, y)) for _ in models]
    tasks = [
        delayed(_fit_and_score)(model, X, y, scorer, train, test, {param_name: v})
        for model, model_splits in zip(models, splits, strict=True)
        for train, test in model_splits
        for v in values
    ]
    with progress_bar(len(tasks), desc="proportion_curve", enabled=verbose) as bar:
        results = run_tasks(tasks, n_jobs=n_jobs, bar=bar)
    warn_convergence([r[3] for r in results], stacklevel=4)
    failures = [r[2] for r in results if r[2] is not None]
    if failures:
        warnings.warn(
            f"{len(failures)} fits failed out of a total of {len(results)}; their "
            f"scores are NaN. First error: {failures[0]}",
            FitFailedWarning,
            stacklevel=3,
        )
    n_splits = len(splits[0])
    shape = (len(seeds), n_splits, len(values))
    train = np.array([r[0] for r in results]).reshape(shape).transpose(2, 0, 1)
    test = np.array([r[1] for r in results]).reshape(shape).transpose(2, 0, 1)
    return train, test


def _fit_and_score(estimator, X, y, scorer, train, test, parameters):
    """Fit a clone with ``parameters`` on ``train``; its train and test scores
    (NaN when the fit fails), the error and its convergence warnings."""
    model = clone(estimator).set_params(**parameters)
    X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
    try:
        _, messages = quiet_fit(lambda: model.fit(X_train, y_train))
    except Exception as exc:  # scored NaN, as validation_curve does
        return np.nan, np.nan, f"{type(exc).__name__}: {exc}", []
    test_score = scorer(model, _safe_indexing(X, test), _safe_indexing(y, test))
    return scorer(model, X_train, y_train), test_score, None, messages


def random_state_name(estimator) -> str | None:
    """``random_state`` or, in a pipeline, ``step__random_state`` of its
    deepest step; None when the estimator has none."""
    names = [n for n in estimator.get_params() if n.split("__")[-1] == "random_state"]
    return max(names, key=lambda n: n.count("__")) if names else None


def _random_state_name(estimator) -> str:
    """:func:`random_state_name`, required."""
    name = random_state_name(estimator)
    if name is None:
        raise ValueError(
            f"{type(estimator).__name__} has no random_state parameter; pass "
            "random_states=None to sweep without seeds."
        )
    return name
