"""The statistics of the verdicts, on inputs whose answer is known."""

import math

import numpy as np
import pandas as pd
import pytest

from sklearn_pt.experiments import (
    CONFIDENCE,
    bootstrap_interval,
    captured_fraction,
    crossing,
    fit_exponent,
    interval_test,
    seed_curves,
    sign_test,
    sign_test_p_value,
    small_proportions,
)
from sklearn_pt.experiments._stats import HOLDS, NEITHER, OPPOSITE


@pytest.mark.parametrize("n", [1, 4, 6, 9])
def test_sign_test_p_value_is_the_binomial_tail(n):
    # Against a direct enumeration of every sign pattern.
    rng = np.random.default_rng(n)
    for _ in range(5):
        differences = rng.normal(size=n)
        positives = int((differences > 0).sum())
        patterns = np.array(np.meshgrid(*[[0, 1]] * n)).reshape(n, -1)
        expected = np.mean(patterns.sum(axis=0) >= positives)
        assert sign_test_p_value(differences) == pytest.approx(expected, rel=1e-12)


def test_sign_test_drops_ties_and_rejects_nan():
    assert sign_test_p_value([0.0, 0.0]) == 1.0
    assert sign_test_p_value([0.0, 1.0, 1.0]) == 0.25
    with pytest.raises(ValueError, match="NaN"):
        sign_test_p_value([1.0, math.nan])


def test_sign_test_needs_six_of_six_at_six_seeds():
    assert sign_test([1.0] * 6) == HOLDS
    assert sign_test([1.0] * 5 + [-1.0]) == NEITHER  # p = 7/64 > 0.05
    assert sign_test([-1.0] * 6) == OPPOSITE
    assert sign_test([1.0] * 5 + [-1.0], level=0.2) == HOLDS


def test_interval_test_each_kind_of_claim():
    assert interval_test((1.0, 2.0), contains=1.5) == HOLDS
    assert interval_test((1.0, 2.0), contains=2.5) == NEITHER
    assert interval_test((1.0, 2.0), above=0.5) == HOLDS
    assert interval_test((1.0, 2.0), above=1.5) == NEITHER
    assert interval_test((1.0, 2.0), above=2.5) == OPPOSITE
    assert interval_test((1.0, 2.0), below=2.5) == HOLDS
    assert interval_test((1.0, 2.0), below=0.5) == OPPOSITE
    assert interval_test((math.nan, math.nan), above=0.0) == NEITHER
    with pytest.raises(ValueError, match="exactly one"):
        interval_test((1.0, 2.0), contains=1.0, above=0.0)


def test_bootstrap_interval_covers_the_mean_at_its_rate():
    # 200 samples of 20 normals: the 95% interval covers the true mean in
    # about 95% of them (the percentile bootstrap undercovers a little at 20).
    rng = np.random.default_rng(0)
    covered = []
    for _ in range(200):
        _, low, high = bootstrap_interval(rng.normal(size=20))
        covered.append(low <= 0.0 <= high)
    assert CONFIDENCE - 0.08 <= np.mean(covered) <= CONFIDENCE + 0.04


def test_bootstrap_interval_is_reproducible_and_leaves_global_state():
    state = np.random.get_state()[1].copy()
    first = bootstrap_interval([1.0, 2.0, 3.0, 4.0], random_state=3)
    assert first == bootstrap_interval([1.0, 2.0, 3.0, 4.0], random_state=3)
    assert first.value == 2.5 and first.low < 2.5 < first.high
    assert np.array_equal(state, np.random.get_state()[1])
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_interval([])


def test_fit_exponent_recovers_a_power_law_and_its_spread():
    sizes = [100, 200, 400, 800]
    rng = np.random.default_rng(0)
    values = [size**-0.5 * (1 + 0.05 * rng.normal(size=8)) for size in sizes]
    estimate = fit_exponent(sizes, values)
    assert estimate.low < -0.5 < estimate.high and estimate.high - estimate.low < 0.2
    assert math.isnan(fit_exponent([1, 2], [[-1.0, -1.0], [1.0, 1.0]]).value)


def test_captured_fraction_crossing_and_small_proportions():
    assert captured_fraction([1.0, 0.2, 0.0]).tolist() == [0.0, 0.8, 1.0]
    assert np.isnan(captured_fraction([0.1, 0.2, 0.3])).all()
    # log-interpolated between 0.01 (0.25) and 0.1 (0.75): halfway in log P
    assert crossing([0, 0.01, 0.1, 1], [0, 0.25, 0.75, 1], 0.5) == pytest.approx(
        10**-1.5
    )
    assert crossing([0, 0.1, 1], [0, 0.9, 1], 0.5) == 0.1  # after P = 0: on the grid
    assert math.isnan(crossing([0, 0.5, 1], [0, 0.2, 0.4], 0.5))
    assert small_proportions([0, 0.02, 0.1, 0.2, 1], 0.1) == [0.02, 0.1]


def test_seed_curves_pivots_a_long_table_per_group():
    table = pd.DataFrame(
        {
            "depth": [2, 2, 2, 2, 4, 4],
            "P": [1, 0, 1, 0, 0, 1],
            "seed": [0, 0, 1, 1, 0, 0],
            "mse": [0.2, 1.0, 0.1, 0.9, 0.5, 0.4],
        }
    )
    curves = seed_curves(table, "mse", along="P", by="depth")
    assert list(curves) == [2, 4]
    assert curves[2].to_numpy().tolist() == [[1.0, 0.9], [0.2, 0.1]]
    assert list(seed_curves(table[table.depth == 4], "mse", along="P")) == [None]


def test_geometric_mean_and_estimate_skip_non_finite_and_non_positive():
    from sklearn_pt.experiments import geometric_estimate, geometric_mean

    assert geometric_mean([2.0, 8.0, np.nan, 0.0]) == pytest.approx(4.0)
    assert np.isnan(geometric_mean([np.nan, -1.0]))
    estimate = geometric_estimate([1.0, 2.0, 4.0, 8.0, 16.0])
    assert estimate.value == pytest.approx(4.0)
    assert estimate.low < estimate.value < estimate.high
    assert len(geometric_estimate([3.0, np.nan])) == 1  # too few: the logs


def test_one_seed_has_no_interval_and_its_test_shows_neither():
    value, low, high = bootstrap_interval([0.7])
    assert value == 0.7 and math.isnan(low) and math.isnan(high)
    slope = fit_exponent([100, 200], [[0.2], [0.1]])
    assert slope.value == pytest.approx(-1.0) and math.isnan(slope.high)
    assert interval_test((low, high), above=0.5) == NEITHER
