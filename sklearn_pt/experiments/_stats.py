"""The statistics every verdict uses, backed by :mod:`scipy.stats`.

One level for every sign test (:data:`SIGN_LEVEL`), one confidence and one
resample count for every bootstrap interval (:data:`CONFIDENCE`,
:data:`N_RESAMPLES`); a verdict line names the ones it used. The curve
statistics of the sweeps over P (:func:`captured_fraction`,
:func:`crossing`) live here too, so that no experiment imports another.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

import numpy as np
from scipy import stats

__all__ = [
    "CONFIDENCE",
    "HOLDS",
    "NEITHER",
    "N_RESAMPLES",
    "OPPOSITE",
    "SIGN_LEVEL",
    "Estimate",
    "bootstrap_interval",
    "captured_fraction",
    "crossing",
    "fit_exponent",
    "geometric_estimate",
    "geometric_mean",
    "interval_test",
    "seed_curves",
    "sign_test",
    "sign_test_p_value",
    "small_proportions",
]

SIGN_LEVEL = 0.05
"""One-sided level of every paired sign test over seeds."""
CONFIDENCE = 0.95
"""Two-sided coverage of every bootstrap interval."""
N_RESAMPLES = 2000
"""Resamples of every bootstrap interval."""

HOLDS, OPPOSITE, NEITHER = "holds", "opposite", "neither"
Outcome = Literal["holds", "opposite", "neither"]
"""What a test says at one point of a claim's range."""


class Estimate(NamedTuple):
    """A statistic and its bootstrap interval."""

    value: float
    low: float
    high: float


def sign_test_p_value(differences: Sequence[float] | np.ndarray) -> float:
    """One-sided exact sign test of ``median(differences) > 0``
    (:func:`scipy.stats.binomtest`; ties dropped; 1.0 when all are ties).

    Examples
    --------
    >>> from sklearn_pt.experiments import sign_test_p_value
    >>> sign_test_p_value([0.1, 0.2, 0.3, 0.1, 0.2, 0.4])  # 6 of 6: 1/64
    0.015625
    """
    values = np.asarray(differences, dtype=float)
    if np.isnan(values).any():
        raise ValueError("differences must not contain NaN; drop the failed seeds.")
    nonzero = values[values != 0]
    if not nonzero.size:
        return 1.0
    positive = int((nonzero > 0).sum())
    return float(stats.binomtest(positive, nonzero.size, alternative="greater").pvalue)


def sign_test(
    differences: Sequence[float] | np.ndarray, level: float = SIGN_LEVEL
) -> Outcome:
    """Does ``difference > 0`` hold by a paired sign test at ``level``?

    ``"holds"`` when it does, ``"opposite"`` when ``difference < 0`` does at
    the same level, else ``"neither"``. With 6 seeds only 6 of 6 reaches
    0.05 (p = 1/64).

    Examples
    --------
    >>> from sklearn_pt.experiments import sign_test
    >>> sign_test([1, 2, 3, 4, 5, 6]), sign_test([-1] * 6), sign_test([1, -1] * 3)
    ('holds', 'opposite', 'neither')
    """
    values = np.asarray(differences, dtype=float)
    if sign_test_p_value(values) <= level:
        return HOLDS
    if sign_test_p_value(-values) <= level:
        return OPPOSITE
    return NEITHER


def bootstrap_interval(
    samples: Sequence[float] | np.ndarray | Sequence[np.ndarray],
    statistic: Callable[..., float] | None = None,
    *,
    vectorized: bool = False,
    random_state: int = 0,
) -> Estimate:
    """A statistic of seeds' values and its percentile bootstrap interval
    (:func:`scipy.stats.bootstrap`, :data:`CONFIDENCE`, :data:`N_RESAMPLES`).

    Parameters
    ----------
    samples : array-like of float, or sequence of them
        One value per seed; or several such arrays (one per point of a
        grid), each resampled on its own.
    statistic : callable, default=None
        Of one resampled array per sample (``statistic(*arrays)``); None is
        the mean of a single sample.
    vectorized : bool, default=False
        Whether ``statistic(*arrays, axis=-1)`` takes a batch of resamples
        at once (arrays of shape ``(n_resamples, n_seeds)``) and returns one
        value per resample; the resamples drawn are the same either way.
    random_state : int, default=0
        Seed of the local generator.

    Returns
    -------
    Estimate
        The statistic of the data and the interval's ends (NaN replicates,
        e.g. of an undefined fit, are dropped; NaN ends when a sample has a
        single value, as with one seed).

    Examples
    --------
    >>> from sklearn_pt.experiments import bootstrap_interval
    >>> value, low, high = bootstrap_interval([1.0, 1.2, 0.9, 1.1, 1.0, 1.05])
    >>> bool(0.9 < low < value < high < 1.2)
    True
    """
    if statistic is None:
        data = (np.asarray(samples, dtype=float),)

        def statistic(values, axis=-1):
            return np.mean(values, axis=axis)

        vectorized = True
    else:
        data = tuple(np.asarray(sample, dtype=float) for sample in samples)
    if any(sample.size == 0 for sample in data):
        raise ValueError("bootstrap_interval needs at least one value per sample.")
    value = float(statistic(*data))
    if any(sample.size < 2 for sample in data):  # one seed: nothing to resample
        return Estimate(value, math.nan, math.nan)
    with warnings.catch_warnings():
        # NaN replicates (an undefined statistic) are dropped below.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            data,
            statistic,
            n_resamples=N_RESAMPLES,
            confidence_level=CONFIDENCE,
            method="percentile",
            vectorized=vectorized,
            rng=np.random.default_rng(random_state),
        )
    replicates = np.asarray(result.bootstrap_distribution, dtype=float)
    tail = (1.0 - CONFIDENCE) / 2.0
    if not np.isfinite(replicates).any():
        return Estimate(value, math.nan, math.nan)
    low, high = np.nanquantile(replicates, [tail, 1.0 - tail])
    return Estimate(value, float(low), float(high))


def interval_test(
    interval: tuple[float, float],
    *,
    contains: float | None = None,
    above: float | None = None,
    below: float | None = None,
) -> Outcome:
    """Outcome of comparing an interval with a value; give exactly one.

    ``contains``: holds when the interval contains the value; a finite-size
    interval that misses it is ``"neither"``, never ``"opposite"`` (one size
    does not refute an asymptotic value). ``above`` / ``below``: holds when
    the whole interval is on that side, the opposite when it is wholly on
    the other.

    Examples
    --------
    >>> from sklearn_pt.experiments import interval_test
    >>> interval_test((1.5, 2.1), contains=1.75)
    'holds'
    >>> interval_test((2.2, 2.6), contains=1.75)
    'neither'
    >>> interval_test((0.2, 0.4), above=0.1), interval_test((0.02, 0.05), above=0.1)
    ('holds', 'opposite')
    """
    given = [value is not None for value in (contains, above, below)]
    if sum(given) != 1:
        raise ValueError("Give exactly one of contains, above or below.")
    low, high = float(interval[0]), float(interval[1])
    if not low <= high:  # also NaN
        return NEITHER
    if contains is not None:
        return HOLDS if low <= contains <= high else NEITHER
    if above is not None:
        return HOLDS if low > above else OPPOSITE if high < above else NEITHER
    return HOLDS if high < below else OPPOSITE if low > below else NEITHER


def fit_exponent(
    sizes: Sequence[float], values: Sequence[Sequence[float]], *, log_mean=True
) -> Estimate:
    """Exponent ``b`` of ``mean value ~ C size^b`` (least squares in log-log),
    with the interval from resampling the seeds at each size on their own.

    Parameters
    ----------
    sizes : sequence of float
    values : sequence of array-like
        The seeds' values at each size.
    log_mean : bool, default=True
        Fit the log of the mean at each size (True) or the mean of the logs.

    Examples
    --------
    >>> from sklearn_pt.experiments import fit_exponent
    >>> round(fit_exponent([100, 400], [[0.2, 0.2], [0.1, 0.1]]).value, 3)
    -0.5
    """
    x = np.log(np.asarray(sizes, dtype=float))

    def slope(*samples):
        if log_mean:
            means = np.array([np.mean(s) for s in samples])
            if np.any(means <= 0):
                return math.nan
            y = np.log(means)
        else:
            y = np.array([np.mean(np.log(s)) for s in samples])
        return float(np.polyfit(x, y, 1)[0]) if np.isfinite(y).all() else math.nan

    return bootstrap_interval(values, slope)


def _finite_logs(values) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):  # <= 0 is dropped
        logs = np.log(np.asarray(values, dtype=float).ravel())
    return logs[np.isfinite(logs)]


def geometric_mean(values: Sequence[float] | np.ndarray) -> float:
    """The geometric mean of the positive finite values; NaN when none.

    Examples
    --------
    >>> from sklearn_pt.experiments import geometric_mean
    >>> geometric_mean([1.0, 4.0, float("nan")])
    2.0
    """
    logs = _finite_logs(values)
    return float(np.exp(logs.mean())) if logs.size else math.nan


def geometric_estimate(values: Sequence[float] | np.ndarray) -> Estimate | np.ndarray:
    """The geometric mean of the positive finite values and its bootstrap
    interval (that of the mean log, exponentiated); the logs themselves
    when fewer than two, which an interval test reads as too few seeds.

    Examples
    --------
    >>> from sklearn_pt.experiments import geometric_estimate
    >>> estimate = geometric_estimate([1.0, 2.0, 4.0, 8.0])
    >>> round(estimate.value, 6), bool(estimate.low < estimate.value < estimate.high)
    (2.828427, True)
    """
    logs = _finite_logs(values)
    if logs.size < 2:
        return logs
    return Estimate(*(float(v) for v in np.exp(bootstrap_interval(logs))))


def captured_fraction(curve: Sequence[float] | np.ndarray) -> np.ndarray:
    """Fraction of the drop from a curve's first point to its last reached
    at each point (NaN everywhere when it does not drop).

    Examples
    --------
    >>> from sklearn_pt.experiments import captured_fraction
    >>> captured_fraction([1.0, 0.2, 0.0]).tolist()
    [0.0, 0.8, 1.0]
    """
    curve = np.asarray(curve, dtype=float)
    drop = curve[0] - curve[-1]
    if not drop > 0:
        return np.full(curve.shape, np.nan)
    return (curve[0] - curve) / drop


def crossing(
    grid: Sequence[float], curve: Sequence[float] | np.ndarray, level: float
) -> float:
    """The first grid value at which ``curve`` reaches ``level``,
    interpolated linearly in ``log grid`` from the point before (the grid
    point itself when the point before is at 0); NaN when never reached.

    Examples
    --------
    >>> from sklearn_pt.experiments import crossing
    >>> round(crossing([0, 0.01, 0.1, 1], [0.0, 0.25, 0.75, 1.0], 0.5), 4)
    0.0316
    """
    grid = np.asarray(grid, dtype=float)
    curve = np.asarray(curve, dtype=float)
    reached = np.flatnonzero(curve >= level)
    if not reached.size or not np.isfinite(curve[: reached[0] + 1]).all():
        return math.nan
    upper = int(reached[0])
    if upper == 0 or grid[upper - 1] <= 0:
        return float(grid[upper])
    x = np.log(grid[[upper - 1, upper]])
    y = curve[[upper - 1, upper]]
    return float(np.exp(x[0] + (level - y[0]) * (x[1] - x[0]) / (y[1] - y[0])))


def seed_curves(
    table, value: str, *, along: str, by: str | Sequence[str] | None = None
) -> dict:
    """``value`` of a long table as one curve per seed: for each group of
    ``by``, a DataFrame indexed by ``along`` (sorted) with one column per
    seed.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_pt.experiments import seed_curves
    >>> table = pd.DataFrame({"depth": [2, 2, 2, 2], "P": [0, 1, 0, 1],
    ...                       "seed": [0, 0, 1, 1], "mse": [1.0, 0.2, 0.9, 0.1]})
    >>> seed_curves(table, "mse", along="P", by="depth")[2].to_numpy().tolist()
    [[1.0, 0.9], [0.2, 0.1]]
    """
    if by is None:
        return {None: table.pivot(index=along, columns="seed", values=value)}
    return {
        key: group.pivot(index=along, columns="seed", values=value)
        for key, group in table.groupby(by, sort=True)
    }


def small_proportions(grid: Sequence[float], largest: float) -> list[float]:
    """The grid's P in ``(0, largest]``, strictly below 1 (the smallest P
    above 0 when there is none): the range of a "small P" claim.

    Examples
    --------
    >>> from sklearn_pt.experiments import small_proportions
    >>> small_proportions([0, 0.02, 0.05, 0.1, 0.5, 1], 0.1)
    [0.02, 0.05, 0.1]
    >>> small_proportions([0, 0.5, 1], 0.1)
    [0.5]
    """
    inner = sorted(float(p) for p in grid if 0 < p < 1) or sorted(
        float(p) for p in grid if p > 0
    )
    return [p for p in inner if p <= largest] or inner[:1]
