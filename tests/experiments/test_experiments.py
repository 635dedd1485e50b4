"""The reproductions' pure helpers, result type, and what they report.

The experiments run at the hidden ``tiny`` scale: the tests check that the
summaries and metrics agree with the raw table, recomputed independently,
not the papers' claims (those need ``--scale small`` or larger).
"""

import math
import re

import numpy as np
import pytest

from sklearn_pt.experiments import (
    APPROXIMATION,
    DEEP,
    EXPERIMENTS,
    FEATURE_LEARNING,
    PARTIAL,
    SCALES,
    TWO_STEP,
    VERDICTS,
    captured_fraction,
    run,
)
from sklearn_pt.experiments import _partial as partial
from sklearn_pt.experiments import crossing as first_crossing
from sklearn_pt.experiments._feature_learning import extrapolate_crossing
from sklearn_pt.model_selection import rate_crossing as crossing


@pytest.fixture(scope="module")
def partial_tiny():
    return run(PARTIAL, scale="tiny", progress=False)


def test_every_experiment_has_every_public_scale():
    for presets in (
        PARTIAL.presets,
        APPROXIMATION.presets,
        DEEP.presets,
        TWO_STEP.presets,
        FEATURE_LEARNING.presets,
    ):
        assert set(SCALES) <= set(presets)
    assert list(EXPERIMENTS) == [
        "partial",
        "partial-approximation",
        "deep",
        "two-step",
        "feature-learning",
    ]


def test_deep_paper_scale_goes_from_depth_2_to_15():
    depths = [cell["depth"] for cell in DEEP.presets["paper"]["grid"]]
    assert min(depths) == 2 and max(depths) == 15


def test_a_bad_scale_or_seed_count_names_the_fix():
    with pytest.raises(ValueError, match=r"scale must be one of 'small'.*got 'big'"):
        PARTIAL.preset("big")
    with pytest.raises(ValueError, match="seeds must be a positive int"):
        run(DEEP, scale="tiny", seeds=0, progress=False)


def test_captured_fraction_and_p90_against_a_loop():
    """P90 (the first P capturing 90% of the drop, log-interpolated from the
    grid point before) lies between the grid points a loop finds."""
    rng = np.random.default_rng(0)
    proportions = np.array([0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0])
    for _ in range(20):
        errors = np.sort(rng.uniform(0.1, 1.0, size=proportions.size))[::-1]
        errors = errors + rng.uniform(0, 0.05, size=errors.size)  # not monotone
        drop = errors[0] - errors[-1]
        reached = None
        for i, e in enumerate(errors):
            if drop > 0 and (errors[0] - e) >= 0.9 * drop:
                reached = i
                break
        got = first_crossing(proportions, captured_fraction(errors), 0.9)
        if reached is None:
            assert math.isnan(got)
        elif reached == 0 or proportions[reached - 1] == 0:
            assert got == proportions[reached]
        else:
            assert proportions[reached - 1] < got <= proportions[reached]
    assert np.isnan(captured_fraction([0.1, 0.2, 0.3])).all()


def test_crossing_interpolates_between_grid_points():
    assert crossing([1.0, 2.0, 3.0], [0.0, 0.0, 1.0]) == pytest.approx(2.5)
    assert crossing([1.0, 2.0], [0.5, 1.0]) == 1.0
    # a dip after the first crossing does not move it
    assert crossing([1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 0.25, 1.0]) == 1.5
    assert math.isnan(crossing([1.0, 2.0], [0.0, 0.25]))


def _first_crossing(deltas, rates, level=0.5):
    """The definition, one curve at a time: the first grid interval the
    rate crosses the level in, from below."""
    if rates[0] >= level:
        return deltas[0]
    for i in range(1, len(deltas)):
        if rates[i] >= level > rates[i - 1]:
            t = (level - rates[i - 1]) / (rates[i] - rates[i - 1])
            return deltas[i - 1] + t * (deltas[i] - deltas[i - 1])
    return math.nan


def test_crossing_of_many_curves_equals_the_definition_curve_by_curve():
    rng = np.random.default_rng(0)
    deltas = [1.0, 2.0, 3.0, 4.0, 6.0]
    # rates on a coarse grid, so that ties with the level, starts above it
    # and curves that never reach it all occur
    rates = rng.integers(0, 5, size=(3, 40, len(deltas))) / 4
    batched = crossing(deltas, rates)
    assert batched.shape == (3, 40)
    one_by_one = [[_first_crossing(deltas, row) for row in block] for block in rates]
    np.testing.assert_array_equal(batched, one_by_one)
    assert np.isnan(batched).any() and (batched == deltas[0]).any()


def test_partial_shares_and_theory_agree_with_the_table(partial_tiny):
    table = partial_tiny.table
    assert set(table.selection) == {"leverage", "random"}
    assert set(table.init_scale) == {1.0, 10.0}
    captured = partial._captured(table)  # at the full budget
    full = table[table.epochs == table.epochs.max()]
    for (selection, tau), group in full.groupby(["selection", "init_scale"]):
        train = group.pivot(
            index="trainable_proportion", columns="seed", values="train_mse"
        ).to_numpy()
        # captured share per seed, recomputed by hand
        drop = train[0] - train[-1]
        expected = (train[0] - train) / np.where(drop > 0, drop, np.nan)
        got = captured[selection, tau].to_numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    # theory: kappa_P^alpha = 0.1 kappa0^alpha + 0.9 kappa1^alpha, solved by hand
    d, tau = 5, 10.0
    alpha, kappa0 = (d + 2) / (d - 1), 4 * math.sqrt(2) * tau * (d + 1) / d
    kappa = (0.1 * kappa0**alpha + 0.9) ** (1 / alpha)
    p90 = (1 / kappa - 1 / kappa0) / (1 - 1 / kappa0)
    paper = partial_tiny.verdicts[3].paper
    assert f"{p90:.3g} (init_scale 10, kappa_0* {kappa0:.3g})" in paper


def test_partial_summary_opens_with_a_verdict_per_claim(partial_tiny):
    verdicts = partial_tiny.verdicts
    assert len(verdicts) == 4  # fast fall per init scale, sharper, P90
    for verdict in verdicts:
        assert verdict.word in VERDICTS
        assert verdict.test and re.search(r"\d", verdict.measured)
    page = partial_tiny.markdown()
    assert page.index("## Verdict") < page.index("## Measured")
    assert partial_tiny.verdict_lines()[0] in page
    assert "sign test" in verdicts[2].test and "log-midpoint" in verdicts[2].claim


def test_partial_figure_has_labelled_axes_and_legends(partial_tiny):
    for ax in partial_tiny.figure.axes:
        assert ax.get_xlabel() == "trainable proportion P"
        assert ax.get_ylabel()
        assert ax.get_legend() is not None
    labels = partial_tiny.figure.axes[0].get_legend_handles_labels()[1]
    assert any("(train)" in label for label in labels)
    assert any("(test)" in label for label in labels)


def test_extrapolation_recovers_a_known_finite_size_law():
    # (The crossings against the CSV: tests/experiments/test_feature_learning.py.)
    dims = [100, 200, 400, 800]
    exact = [3.6 - 12.0 / d**0.5 for d in dims]
    c_inf, slope = extrapolate_crossing(dims, exact)
    assert c_inf == pytest.approx(3.6) and slope == pytest.approx(-12.0)
    # a law in 1/d extrapolates lower with nu = 1/2 than with nu = 1
    in_d = [3.0 - 150.0 / d for d in dims]
    assert extrapolate_crossing(dims, in_d, exponent=1.0)[0] == pytest.approx(3.0)
    assert extrapolate_crossing(dims, in_d)[0] > 3.0
    # non-finite crossings are left out; one finite crossing is not enough
    assert extrapolate_crossing(dims, [np.inf, *exact[1:]])[0] == pytest.approx(3.6)
    assert math.isnan(extrapolate_crossing(dims, [np.nan, np.nan, np.nan, 2.0])[0])
