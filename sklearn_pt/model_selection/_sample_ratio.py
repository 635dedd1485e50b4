"""Success rate of feature learning against the sample ratio delta = n / d."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch

from .._parallel import delayed, run_tasks
from .._progress import progress_bar
from ..exceptions import DivergenceError
from ..metrics import estimator_overlap
from ..neural_network._first_layer import FirstLayerGDRegressor, width_and_learning_rate
from ._proportion_curve import STRATEGIES, random_state_name
from ._stacked import fit_stacked_datasets, stacked_fit_unsupported

__all__ = [
    "rate_crossing",
    "sample_ratio_curve",
    "sample_ratio_threshold",
]

CRITERIA = ("overlap", "test_loss")
"""Success criteria of :func:`sample_ratio_curve`: the overlap of the learned
directions with the true ones above ``success`` (weak recovery), or the test
loss below ``success`` times the trivial predictor's."""
DEFAULT_N_TEST = 1000
CONDITION_PARAMS = (
    "activation",
    "max_iter",
    "learning_rate_init",
    "init",
    "preprocessing",
)
"""Estimator parameters that set the conditions a threshold holds under
(with the width ``m`` from ``hidden_layer_sizes``, as ``"width"``)."""


def held_out_loss_ratio(estimator, X_test, y_test, y_train) -> float:
    """Test MSE of a fitted regressor over that of the trivial predictor.

    The trivial predictor is the training targets' mean, the best constant:
    a ratio near 1 means nothing was learned, near 0 the target was.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from sklearn_pt.model_selection._sample_ratio import held_out_loss_ratio
    >>> X, y = np.zeros((4, 1)), np.array([0.0, 1.0, 2.0, 3.0])
    >>> held_out_loss_ratio(DummyRegressor().fit(X, y), X, y, y)
    1.0
    """
    y_test = np.asarray(y_test, dtype=float)
    trivial = np.mean((y_test - np.mean(y_train)) ** 2)
    predicted = np.asarray(estimator.predict(X_test), dtype=float).reshape(y_test.shape)
    return float(np.mean((y_test - predicted) ** 2) / trivial)


def _draw(make_data, n_samples, n_features, seed, n_test):
    """One run's training set, held-out set and true directions."""
    X, y, directions = make_data(n_samples + n_test, n_features, random_state=seed)
    train = X[:n_samples], y[:n_samples]
    return train, (X[n_samples:], y[n_samples:]), directions


def _seeded(estimator, seed):
    model = clone(estimator)
    name = random_state_name(model)
    if name is not None:
        model.set_params(**{name: seed})
    return model


def _score(model, train, test, directions, overlap, success, error_score):
    """``(overlap, test-loss ratio, succeeded, diverged)`` of one fit (a
    fitted estimator or its DivergenceError); the ratio is NaN without
    held-out samples."""
    if isinstance(model, DivergenceError):
        if error_score == "raise":
            raise model
        return float(error_score), np.inf, False, True
    value = float(overlap(model, directions))
    ratio = held_out_loss_ratio(model, *test, train[1]) if len(test[1]) else np.nan
    succeeded = bool(success(model, directions)) if callable(success) else None
    return value, ratio, succeeded, False


def _one_run(estimator, make_data, n_samples, n_features, seed, n_test, *scoring):
    """:func:`_score` of one fit."""
    train, test, directions = _draw(make_data, n_samples, n_features, seed, n_test)
    model = _seeded(estimator, seed)
    try:
        model.fit(*train)
    except DivergenceError as exc:
        model = exc
    return _score(model, train, test, directions, *scoring)


def _stacked_runs(estimator, make_data, n_samples, n_features, seeds, n_test, *scoring):
    """:func:`_score` of the fits of every seed at one delta, stacked."""
    draws = [_draw(make_data, n_samples, n_features, s, n_test) for s in seeds]
    models = fit_stacked_datasets(
        [_seeded(estimator, seed) for seed in seeds], [draw[0] for draw in draws]
    )
    pairs = zip(models, draws, strict=True)
    return [_score(model, *draw, *scoring) for model, draw in pairs]


def _stacked_sweep_unsupported(estimator) -> str | None:
    """Why the runs of a sample-ratio sweep (one data set per seed) cannot
    be stacked, or None."""
    reason = stacked_fit_unsupported(estimator, "random_state")
    if reason is None and not getattr(estimator, "_stacks_datasets", False):
        reason = (
            f"a {type(estimator).__name__} stacks fits on one training set, and "
            "each run draws its own"
        )
    return reason


def rate_crossing(
    deltas: Sequence[float], rates: Sequence[float] | np.ndarray, level: float = 0.5
) -> float | np.ndarray:
    """The delta at which a success rate first reaches ``level``.

    Linear interpolation between the two grid points around the first
    crossing from below.

    Parameters
    ----------
    deltas : sequence of float
        Increasing grid.
    rates : array-like of shape (n_deltas,) or (..., n_deltas)
        Success rate at each delta; several curves along the leading axes.
    level : float, default=0.5

    Returns
    -------
    float or ndarray of shape (...)
        ``deltas[0]`` if the rate starts at or above ``level``; NaN if it
        never reaches it. One value per curve.

    Examples
    --------
    >>> from sklearn_pt.model_selection import rate_crossing
    >>> rate_crossing([1.0, 2.0, 4.0], [0.0, 0.25, 0.75])
    3.0
    >>> rate_crossing([1.0, 2.0], [0.0, 0.25])
    nan
    >>> rate_crossing([1.0, 2.0], [[0.0, 0.5], [0.5, 1.0], [0.0, 0.0]])
    array([ 2.,  1., nan])
    """
    deltas, rates = np.asarray(deltas, dtype=float), np.asarray(rates, dtype=float)
    reached = rates >= level
    # The first delta at or above the level; the one before it is below.
    first = np.argmax(reached, axis=-1)
    before = np.maximum(first - 1, 0)
    low = np.take_along_axis(rates, before[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(rates, first[..., None], axis=-1)[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(first > 0, (level - low) / (high - low), 0.0)
    found = deltas[before] + t * (deltas[first] - deltas[before])
    found = np.where(reached.any(axis=-1), found, np.nan)
    return float(found) if found.ndim == 0 else found


def _conditions(estimator, n_features, criterion, success) -> dict:
    """What a threshold measured with ``estimator`` holds under."""
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    params = final.get_params(deep=False) if hasattr(final, "get_params") else {}
    conditions = {"estimator": type(final).__name__, "n_features": n_features}
    conditions |= {
        key: params[key]
        for key in CONDITION_PARAMS
        if key in params and isinstance(params[key], (str, Real))
    }
    if isinstance(final, FirstLayerGDRegressor):
        width, rate = width_and_learning_rate(final)
        conditions |= {"width": width, "learning_rate_init": rate}
    conditions["criterion"] = criterion
    conditions["success"] = success if isinstance(success, Real) else "callable"
    return conditions


def sample_ratio_curve(
    estimator,
    make_data: Callable,
    *,
    deltas: Sequence[float],
    n_features: int,
    n_repeats: int = 5,
    criterion: str = "overlap",
    success: float | Callable = 0.5,
    overlap: Callable | None = None,
    n_test: int | None = None,
    strategy: str = "auto",
    n_jobs: int | None = None,
    random_state: int | None = 0,
    error_score: str | float = "raise",
    verbose: int = 0,
) -> Bunch:
    """Success rate (and mean overlap) of feature learning against delta = n/d.

    For every ``delta`` and every repetition, draws ``n = round(delta * d)``
    samples with ``make_data``, fits a clone of ``estimator`` and measures
    the overlap of what it learned with the true directions (and, with
    ``criterion="test_loss"``, its loss on ``n_test`` further samples). The
    fits run in parallel with joblib.

    Parameters
    ----------
    estimator : estimator
        For example :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`
        or :class:`~sklearn_pt.decomposition.SpectralEstimator` (or a pipeline
        ending in one). Its ``random_state``, when it has one, is set to the
        repetition's seed.
    make_data : callable
        ``make_data(n_samples, n_features, random_state=seed)`` returning
        ``(X, y, directions)``, e.g.
        ``functools.partial(make_phase_retrieval, return_directions=True)``.
    deltas : sequence of float
        Sample ratios ``n / d``.
    n_features : int
        The dimension ``d``.
    n_repeats : int, default=5
        Repetitions per ``delta`` (independent data and initialisation).
    criterion : {"overlap", "test_loss"}, default="overlap"
        What a float ``success`` thresholds. ``"overlap"``: a run succeeds
        when its overlap exceeds ``success`` (weak recovery, the criterion of
        Montanari and Wang). ``"test_loss"``: when its test MSE is below
        ``success`` times that of the trivial predictor (the training
        targets' mean); needs an estimator with ``predict``.
    success : float or callable, default=0.5
        A float: the threshold of ``criterion``. A callable:
        ``success(fitted_estimator, directions) -> bool`` (``criterion`` then
        only decides whether test losses are measured).
    overlap : callable, default=None
        ``overlap(fitted_estimator, directions) -> float``; None uses
        :func:`~sklearn_pt.metrics.estimator_overlap`.
    n_test : int, default=None
        Held-out samples per run for the test loss, drawn by the same
        ``make_data`` call as the training samples (so with the same
        directions). None: 1000 with ``criterion="test_loss"``, else 0 (no
        test loss).
    strategy : {"auto", "stacked", "sequential"}, default="auto"
        ``"stacked"``: the fits of all repetitions at one delta run as one
        stacked gradient descent (for a
        :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor` with
        ``init="random"``, no Hessian monitoring and ``verbose=0``): the
        same fits to rounding, faster where a step costs little beside its
        per-step overhead (:ref:`defaults_stacked`). ``"sequential"``: one
        ``fit`` per run, to spread the runs over ``n_jobs`` workers.
        ``"auto"``: stacked when possible.
    n_jobs : int, default=None
        Parallel fits (joblib; ``-1`` for all cores): runs, or deltas when
        stacked.
    random_state : int or None, default=0
        Seeds the data and estimator of every repetition: repetition ``r``
        uses the same seed at every ``delta`` (common random numbers, for
        smoother curves). None draws fresh seeds.
    verbose : int, default=0
        Show a progress bar over the runs on stderr when positive.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``deltas`` (n_deltas,), ``n_samples`` (n_deltas,), ``overlaps``
        (n_deltas, n_repeats), ``test_loss_ratios`` (n_deltas, n_repeats;
        NaN without test samples, inf for a diverged fit), ``successes``
        (n_deltas, n_repeats) of bool, ``success_rate`` (n_deltas,),
        ``mean_overlap`` (n_deltas,), ``diverged`` (n_deltas, n_repeats) of
        bool, ``seeds`` (n_repeats,) and ``conditions``, a dict of what the
        rates hold under: the estimator's class and its width, activation,
        number of steps (``max_iter``), step size, initialisation or
        preprocessing where it has them, ``n_features``, the criterion and
        its threshold.

    See Also
    --------
    sample_ratio_threshold : The delta at which the success rate crosses a
        level, refined by bisection, with a bootstrap interval.
    sklearn_pt.model_selection.proportion_curve : The analogous sweep over
        the trainable proportion.

    References
    ----------
    Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural
    Networks".

    Examples
    --------
    >>> from functools import partial
    >>> from sklearn_pt.datasets import make_phase_retrieval
    >>> from sklearn_pt.decomposition import SpectralEstimator
    >>> from sklearn_pt.model_selection import sample_ratio_curve
    >>> curve = sample_ratio_curve(
    ...     SpectralEstimator(),
    ...     partial(make_phase_retrieval, return_directions=True),
    ...     deltas=[0.2, 4.0], n_features=200, n_repeats=3)
    >>> curve.success_rate.tolist()
    [0.0, 1.0]
    >>> curve.conditions["criterion"], curve.conditions["preprocessing"]
    ('overlap', 'optimal')
    """
    deltas = np.asarray(deltas, dtype=float)
    if deltas.ndim != 1 or deltas.size == 0 or not np.all(deltas > 0):
        raise ValueError(
            f"deltas must be a non-empty sequence of positive floats; got {deltas!r}."
        )
    if not isinstance(n_features, Integral) or n_features < 1:
        raise ValueError(f"n_features must be a positive int; got {n_features!r}.")
    if not isinstance(n_repeats, Integral) or n_repeats < 1:
        raise ValueError(f"n_repeats must be a positive int; got {n_repeats!r}.")
    if criterion not in CRITERIA:
        raise ValueError(
            f"criterion must be one of {', '.join(map(repr, CRITERIA))}; got "
            f"{criterion!r}. Use 'overlap' for weak recovery of the directions, "
            "'test_loss' for a test loss below success times the trivial one."
        )
    if n_test is None:
        n_test = DEFAULT_N_TEST if criterion == "test_loss" else 0
    if strategy not in STRATEGIES:
        raise ValueError(
            f"strategy must be one of {', '.join(map(repr, STRATEGIES))}; got "
            f"{strategy!r}."
        )
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    reason = _stacked_sweep_unsupported(final)
    if final is not estimator and reason is None:
        reason = "the estimator is a pipeline"
    if strategy == "stacked" and reason is not None:
        raise ValueError(
            f"strategy='stacked' cannot run this sweep: {reason}. Use "
            "strategy='auto' to fall back to one fit per run."
        )
    if not isinstance(n_test, Integral) or n_test < 0:
        raise ValueError(f"n_test must be an int >= 0; got {n_test!r}.")
    if criterion == "test_loss" and n_test == 0:
        raise ValueError(
            "criterion='test_loss' needs held-out samples; pass n_test >= 1 "
            "(e.g. 1000) or None."
        )
    if not (callable(success) or isinstance(success, Real)):
        raise ValueError(
            "success must be a float (an overlap threshold) or a callable "
            f"success(estimator, directions) -> bool; got {success!r}."
        )
    if not (error_score == "raise" or isinstance(error_score, Real)):
        raise ValueError(
            "error_score must be 'raise' or a number (the overlap recorded for a "
            f"diverged fit, e.g. 0.0); got {error_score!r}."
        )
    if random_state is not None and not isinstance(random_state, Integral):
        raise ValueError(f"random_state must be an int or None; got {random_state!r}.")
    overlap = estimator_overlap if overlap is None else overlap
    seeds = np.random.SeedSequence(random_state).generate_state(n_repeats) % (2**31 - 1)
    seeds = [int(s) for s in seeds]
    n_samples = np.maximum(np.round(deltas * n_features).astype(int), 1)
    scoring = (overlap, success, error_score)
    n_runs = len(n_samples) * len(seeds)
    with progress_bar(n_runs, desc="sample_ratio_curve", enabled=verbose) as bar:
        if strategy != "sequential" and reason is None:
            groups = run_tasks(
                (
                    delayed(_stacked_runs)(
                        estimator,
                        make_data,
                        int(n),
                        n_features,
                        seeds,
                        n_test,
                        *scoring,
                    )
                    for n in n_samples
                ),
                n_jobs=n_jobs,
                bar=bar,
                step=len(seeds),
            )
            runs = [run for group in groups for run in group]
        else:
            runs = run_tasks(
                (
                    delayed(_one_run)(
                        estimator, make_data, int(n), n_features, seed, n_test, *scoring
                    )
                    for n in n_samples
                    for seed in seeds
                ),
                n_jobs=n_jobs,
                bar=bar,
            )
    shape = (len(deltas), n_repeats)
    overlaps = np.array([run[0] for run in runs]).reshape(shape)
    ratios = np.array([run[1] for run in runs], dtype=float).reshape(shape)
    diverged = np.array([run[3] for run in runs]).reshape(shape)
    if callable(success):
        successes = np.array([bool(run[2]) for run in runs]).reshape(shape)
    elif criterion == "overlap":
        successes = (overlaps > success) & ~diverged
    else:
        successes = (ratios < success) & ~diverged
    if diverged.any():
        warnings.warn(
            f"{int(diverged.sum())} of {diverged.size} fits diverged and were "
            f"recorded as failures with overlap {error_score}; lower the "
            "estimator's learning rate to avoid it.",
            UserWarning,
            stacklevel=2,
        )
    return Bunch(
        deltas=deltas,
        n_samples=n_samples,
        overlaps=overlaps,
        test_loss_ratios=ratios,
        successes=successes,
        success_rate=successes.mean(axis=1),
        mean_overlap=overlaps.mean(axis=1),
        diverged=diverged,
        seeds=np.array(seeds),
        conditions=_conditions(estimator, int(n_features), criterion, success),
    )


def _bootstrap_crossings(deltas, successes, level, n_bootstrap, rng) -> np.ndarray:
    """Crossings of the success rate over seeds resampled with replacement."""
    n_repeats = successes.shape[1]
    picks = rng.integers(0, n_repeats, size=(n_bootstrap, n_repeats))
    rates = successes[:, picks].mean(axis=2).T  # (n_bootstrap, n_deltas)
    return rate_crossing(deltas, rates, level)


def sample_ratio_threshold(
    estimator,
    make_data: Callable,
    *,
    deltas: Sequence[float],
    n_features: int,
    n_repeats: int = 8,
    level: float = 0.5,
    n_refinements: int = 3,
    n_bootstrap: int = 1000,
    confidence: float = 0.9,
    criterion: str = "overlap",
    success: float | Callable = 0.5,
    overlap: Callable | None = None,
    n_test: int | None = None,
    strategy: str = "auto",
    n_jobs: int | None = None,
    random_state: int | None = 0,
    error_score: str | float = "raise",
) -> Bunch:
    """The sample ratio delta = n/d at which the success rate crosses
    ``level``, refined by bisection, with a bootstrap interval over seeds.

    Runs :func:`sample_ratio_curve` on the coarse grid ``deltas``, then
    bisects the grid interval where the rate first reaches ``level``:
    ``n_refinements`` times, the same seeds (common random numbers) are fitted
    at the interval's midpoint, which replaces the end on its side of
    ``level``. The threshold is the linear interpolation of the rate
    (:func:`rate_crossing`) over every delta evaluated. Its interval
    resamples the seeds with replacement (``n_bootstrap`` times) and takes the
    crossing of each resampled rate on the same deltas.

    Parameters
    ----------
    estimator, make_data, n_features, criterion, success, overlap, n_test, \
strategy, n_jobs, random_state, error_score
        As in :func:`sample_ratio_curve`.
    deltas : sequence of float
        Increasing coarse grid of sample ratios.
    n_repeats : int, default=8
        Seeds; each is fitted at every delta evaluated.
    level : float, default=0.5
        The success rate whose crossing is the threshold.
    n_refinements : int, default=3
        Bisection steps: the bracket shrinks ``2 ** n_refinements``-fold.
    n_bootstrap : int, default=1000
        Resamples of the seeds for the interval (0: no interval).
    confidence : float, default=0.9
        Coverage of the percentile interval.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``threshold`` (float: ``deltas[0]`` if the rate starts at ``level``,
        NaN if it never reaches it), ``interval`` ``(low, high)`` (``high``
        is inf when more than ``(1 - confidence) / 2`` of the resamples never
        reach ``level``), ``bootstrap`` (the resampled thresholds, inf where
        one never reaches ``level``), ``deltas`` and ``success_rate`` of every delta
        evaluated (sorted), ``successes`` ``(n_evaluated, n_repeats)``,
        ``overlaps`` and ``test_loss_ratios`` likewise, ``bracket`` (the last
        interval bisected, or None), ``seeds`` and ``conditions`` (see
        :func:`sample_ratio_curve`, plus ``level`` and ``n_repeats``).

    References
    ----------
    Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural
    Networks".

    Examples
    --------
    >>> from functools import partial
    >>> from sklearn_pt.datasets import make_phase_retrieval
    >>> from sklearn_pt.decomposition import SpectralEstimator
    >>> from sklearn_pt.model_selection import sample_ratio_threshold
    >>> found = sample_ratio_threshold(
    ...     SpectralEstimator(),
    ...     partial(make_phase_retrieval, return_directions=True),
    ...     deltas=[0.5, 1.0, 2.0, 4.0], n_features=200, n_repeats=4,
    ...     n_refinements=2)
    >>> bool(0.5 < found.threshold < 4.0)
    True
    >>> len(found.deltas)  # the grid and two midpoints
    6
    >>> bool(found.interval[0] <= found.threshold <= found.interval[1])
    True
    """
    if not isinstance(n_refinements, Integral) or n_refinements < 0:
        raise ValueError(f"n_refinements must be an int >= 0; got {n_refinements!r}.")
    if not isinstance(n_bootstrap, Integral) or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be an int >= 0; got {n_bootstrap!r}.")
    if not (isinstance(level, Real) and 0 < level <= 1):
        raise ValueError(f"level must be a success rate in (0, 1]; got {level!r}.")
    if not (isinstance(confidence, Real) and 0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), e.g. 0.9; got {confidence!r}.")
    grid = np.asarray(deltas, dtype=float)
    if grid.ndim == 1 and np.any(np.diff(grid) <= 0):
        raise ValueError(f"deltas must be strictly increasing; got {grid.tolist()}.")
    kwargs = dict(
        make_data=make_data,
        n_features=n_features,
        n_repeats=n_repeats,
        criterion=criterion,
        success=success,
        overlap=overlap,
        n_test=n_test,
        strategy=strategy,
        n_jobs=n_jobs,
        random_state=random_state,
        error_score=error_score,
    )
    curves = [sample_ratio_curve(estimator, deltas=grid, **kwargs)]

    def evaluated():
        order = np.argsort(np.concatenate([c.deltas for c in curves]))
        stack = {
            key: np.concatenate([c[key] for c in curves])[order]
            for key in ("deltas", "successes", "overlaps", "test_loss_ratios")
        }
        return stack

    rates = curves[0].success_rate
    above = np.flatnonzero(rates >= level)
    bracket = None
    if above.size and above[0] > 0:
        bracket = [grid[above[0] - 1], grid[above[0]]]
        for _ in range(n_refinements):
            middle = 0.5 * (bracket[0] + bracket[1])
            curve = sample_ratio_curve(estimator, deltas=[middle], **kwargs)
            curves.append(curve)
            bracket[0 if curve.success_rate[0] < level else 1] = middle
        bracket = tuple(float(b) for b in bracket)
    stack = evaluated()
    rate = stack["successes"].mean(axis=1)
    threshold = rate_crossing(stack["deltas"], rate, level)
    interval, bootstrap = (np.nan, np.nan), np.empty(0)
    if n_bootstrap:
        rng = np.random.default_rng(random_state)
        boot = _bootstrap_crossings(
            stack["deltas"], stack["successes"], level, n_bootstrap, rng
        )
        tail = (1 - confidence) / 2
        boot = np.where(np.isnan(boot), np.inf, boot)
        bootstrap = boot
        low, high = np.quantile(boot, [tail, 1 - tail], method="inverted_cdf")
        interval = (float(low), float(high))
    conditions = curves[0].conditions | {"level": level, "n_repeats": n_repeats}
    return Bunch(
        threshold=threshold,
        interval=interval,
        bootstrap=bootstrap,
        success_rate=rate,
        bracket=bracket,
        seeds=curves[0].seeds,
        conditions=conditions,
        **stack,
    )
