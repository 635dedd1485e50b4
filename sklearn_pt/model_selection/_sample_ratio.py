"""Success rate of feature learning against the sample ratio delta = n / d."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import Bunch

from ..exceptions import DivergenceError
from ._proportion_curve import random_state_name

__all__ = ["estimator_overlap", "sample_ratio_curve"]


def estimator_overlap(estimator, directions) -> float:
    """Overlap of a fitted estimator's learned directions with the true ones.

    Uses the estimator's ``overlap(directions)`` method when it has one (as
    :class:`~sklearn_pt.linear_model.SpectralEstimator`), else its first-layer
    weights ``coefs_`` (as
    :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`) through
    :func:`~sklearn_pt.neural_network.neuron_overlap`. The last step of a
    pipeline is used.

    Parameters
    ----------
    estimator : fitted estimator
    directions : ndarray of shape (n_features,) or (n_features, k)

    Returns
    -------
    float in [0, 1]
    """
    from ..neural_network import neuron_overlap

    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    if hasattr(final, "overlap"):
        return float(final.overlap(directions))
    if hasattr(final, "coefs_") and np.ndim(final.coefs_) == 2:
        return neuron_overlap(final.coefs_, directions)
    raise TypeError(
        f"Cannot measure the overlap of a {type(final).__name__}: it has neither an "
        "overlap(directions) method nor a 2-D coefs_ attribute. Pass "
        "overlap=callable(estimator, directions) to sample_ratio_curve."
    )


def _one_run(
    estimator, make_data, n_samples, n_features, seed, overlap, success, error_score
):
    """``(overlap, succeeded, diverged)`` of one fit."""
    X, y, directions = make_data(n_samples, n_features, random_state=seed)
    model = clone(estimator)
    name = random_state_name(model)
    if name is not None:
        model.set_params(**{name: seed})
    try:
        model.fit(X, y)
    except DivergenceError:
        if error_score == "raise":
            raise
        return float(error_score), False, True
    value = float(overlap(model, directions))
    succeeded = bool(success(model, directions)) if callable(success) else None
    return value, succeeded, False


def sample_ratio_curve(
    estimator,
    make_data: Callable,
    *,
    deltas: Sequence[float],
    n_features: int,
    n_repeats: int = 5,
    success: float | Callable = 0.5,
    overlap: Callable | None = None,
    n_jobs: int | None = None,
    random_state: int | None = 0,
    error_score: str | float = "raise",
    verbose: int = 0,
) -> Bunch:
    """Success rate (and mean overlap) of feature learning against delta = n/d.

    For every ``delta`` and every repetition, draws ``n = round(delta * d)``
    samples with ``make_data``, fits a clone of ``estimator`` and measures
    the overlap of what it learned with the true directions. The fits run in
    parallel with joblib.

    Parameters
    ----------
    estimator : estimator
        For example :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`
        or :class:`~sklearn_pt.linear_model.SpectralEstimator` (or a pipeline
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
    success : float or callable, default=0.5
        A float: a run succeeds when its overlap exceeds it (weak recovery).
        A callable: ``success(fitted_estimator, directions) -> bool``.
    overlap : callable, default=None
        ``overlap(fitted_estimator, directions) -> float``; None uses
        :func:`estimator_overlap`.
    n_jobs : int, default=None
        Parallel fits (joblib; ``-1`` for all cores).
    random_state : int or None, default=0
        Seeds the data and estimator of every repetition: repetition ``r``
        uses the same seed at every ``delta`` (common random numbers, for
        smoother curves). None draws fresh seeds.
    verbose : int, default=0
        Passed to joblib.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``deltas`` (n_deltas,), ``n_samples`` (n_deltas,), ``overlaps``
        (n_deltas, n_repeats), ``successes`` (n_deltas, n_repeats) of bool,
        ``success_rate`` (n_deltas,), ``mean_overlap`` (n_deltas,),
        ``diverged`` (n_deltas, n_repeats) of bool and ``seeds``
        (n_repeats,).

    See Also
    --------
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
    >>> from sklearn_pt.linear_model import SpectralEstimator
    >>> from sklearn_pt.model_selection import sample_ratio_curve
    >>> curve = sample_ratio_curve(
    ...     SpectralEstimator(),
    ...     partial(make_phase_retrieval, return_directions=True),
    ...     deltas=[0.2, 4.0], n_features=200, n_repeats=3)
    >>> curve.success_rate.tolist()
    [0.0, 1.0]
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
    runs = Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(_one_run)(
            estimator,
            make_data,
            int(n),
            n_features,
            seed,
            overlap,
            success,
            error_score,
        )
        for n in n_samples
        for seed in seeds
    )
    shape = (len(deltas), n_repeats)
    overlaps = np.array([run[0] for run in runs]).reshape(shape)
    diverged = np.array([run[2] for run in runs]).reshape(shape)
    if callable(success):
        successes = np.array([bool(run[1]) for run in runs]).reshape(shape)
    else:
        successes = (overlaps > success) & ~diverged
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
        successes=successes,
        success_rate=successes.mean(axis=1),
        mean_overlap=overlaps.mean(axis=1),
        diverged=diverged,
        seeds=np.array(seeds),
    )
