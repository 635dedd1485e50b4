"""A claim as data: its statistic, its test, its verdict line."""

import pandas as pd
import pytest

from sklearn_pt.experiments import (
    VERDICTS,
    Claim,
    Estimate,
    IntervalTest,
    SignTest,
    Verdict,
    verdict_word,
)
from sklearn_pt.experiments._claims import (
    CONTRADICTED,
    MIXED,
    NOT_AT_THIS_SIZE,
    REPRODUCED,
)
from sklearn_pt.experiments._stats import HOLDS, NEITHER, OPPOSITE


def test_verdict_word_the_four_words():
    assert verdict_word({"a": HOLDS, "b": HOLDS}) == (REPRODUCED, "")
    assert verdict_word({"a": HOLDS, "b": NEITHER}) == (MIXED, "holds at a")
    assert verdict_word({"a": HOLDS, "b": OPPOSITE, "c": OPPOSITE}) == (
        MIXED,
        "holds at a; opposite at b, c",
    )
    assert verdict_word({"a": NEITHER}) == (NOT_AT_THIS_SIZE, "")
    assert verdict_word({"a": NEITHER, "b": OPPOSITE}) == (
        CONTRADICTED,
        "opposite at b",
    )
    with pytest.raises(ValueError, match="at least one point"):
        verdict_word({})
    with pytest.raises(ValueError, match="Outcomes"):
        verdict_word({"a": "maybe"})
    assert set(VERDICTS) == {REPRODUCED, MIXED, NOT_AT_THIS_SIZE, CONTRADICTED}


def test_verdict_line_names_word_test_and_numbers():
    verdict = Verdict("c", MIXED, "t", "m", "p", where="holds at a", reason="r.")
    assert (
        verdict.line()
        == "**Mixed**: c (holds at a). Test: t. Measured: m. Paper: p. r."
    )
    with pytest.raises(ValueError, match="word must be one of"):
        Verdict("c", "reproduced qualitatively", "t", "m", "p")


def test_sign_test_and_interval_test_describe_their_level_and_resamples():
    assert "level 0.05" in SignTest().describe()
    assert "level 0.2" in SignTest(0.2).describe()
    text = IntervalTest(above=0.5, of="the mean share").describe()
    assert "95% percentile bootstrap" in text and "2000 resamples" in text
    assert text.endswith("of the mean share, above 0.5")
    outcome, text = SignTest()([1.0] * 5 + [float("nan")], None)
    assert outcome == HOLDS and "5 of 5 seeds ahead" in text
    assert SignTest()([], None) == (NEITHER, "no seed")
    assert IntervalTest(contains=0.0)([1.0], None) == (NEITHER, "too few seeds")
    outcome, text = IntervalTest(below=lambda point: point)(
        Estimate(1.0, 0.5, 1.5), 2.0
    )
    assert outcome == HOLDS and text == "1 [0.5, 1.5]"


def test_claim_judges_every_point_of_its_range_from_the_table():
    table = pd.DataFrame(
        {
            "d": [100] * 6 + [200] * 6,
            "gain": [1, 2, 1, 3, 1, 2, -1, -2, -1, -3, -1, -2],
        }
    )
    claim = Claim(
        lambda t: f"a gain at every d up to {t.d.max()}",
        lambda t: dict(iter(t.groupby("d").gain)),
        SignTest(),
        paper="a gain",
        label="d={}",
        reason=lambda t, outcomes: f"{len(outcomes)} points.",
        measured="gain",
    )
    verdict = claim.verdict(table)
    assert verdict.word == MIXED
    assert verdict.where == "holds at d=100; opposite at d=200"
    assert verdict.claim == "a gain at every d up to 200"
    assert verdict.measured.startswith("gain: d=100: +1.667 (6 of 6 seeds ahead)")
    assert verdict.reason == "2 points."


def _error_claim(errors_by_size: dict) -> Claim:
    """A count error below 0.5 at every N, read along N."""
    table = pd.DataFrame(
        [{"N": n, "error": e} for n, errors in errors_by_size.items() for e in errors]
    )
    claim = Claim(
        "the prediction gives the count",
        lambda t: {n: g.to_numpy() for n, g in t.groupby("N").error},
        IntervalTest(below=0.5),
        paper="exact",
        label="N={:g}",
        size_trend=True,
    )
    return claim.verdict(table)


def test_an_opposite_that_shrinks_with_size_is_not_a_contradiction():
    # Errors well above 0.5 at every N, falling like N^-1: a size effect.
    falling = {n: [400 / n * (1 + 0.01 * k) for k in range(8)] for n in (200, 400, 800)}
    verdict = _error_claim(falling)
    assert verdict.word == NOT_AT_THIS_SIZE
    assert verdict.where.startswith("converging: mean error ~ size^b, b = -1.00")
    assert "opposite at N=200, N=400, N=800" in verdict.where


def test_an_opposite_that_does_not_shrink_stays_a_contradiction():
    flat = {n: [2.0 + 0.1 * k for k in range(8)] for n in (200, 400, 800)}
    verdict = _error_claim(flat)
    assert verdict.word == CONTRADICTED
    assert verdict.where.startswith("no trend shown: mean error ~ size^b, b = ")
    growing = {n: [n / 100 + 0.1 * k for k in range(8)] for n in (200, 400, 800)}
    assert _error_claim(growing).where.startswith("growing")


def test_a_reproduced_trend_claim_says_nothing_of_its_trend():
    small = {n: [0.1, 0.0, 0.2, 0.1] for n in (200, 400)}
    verdict = _error_claim(small)
    assert (verdict.word, verdict.where) == (REPRODUCED, "")


def test_an_error_claim_at_one_size_is_not_contradicted():
    verdict = _error_claim({400: [2.0 + 0.1 * k for k in range(8)]})
    assert verdict.word == NOT_AT_THIS_SIZE
    assert verdict.where == "opposite at N=400; one size, so not shown to persist"


def _gain_claim(gains: dict, shrink=None, **options) -> Claim:
    """A paired gain at each point of ``gains``; ``shrink``: the paired move
    from a smaller size (or one size); ``options``: more of :class:`Claim`."""
    table = pd.DataFrame(
        [{"point": p, "gain": g} for p, values in gains.items() for g in values]
    )
    return Claim(
        "a gain",
        lambda t: {p: g.to_numpy() for p, g in t.groupby("point").gain},
        SignTest(),
        paper="a gain",
        shrink=shrink,
        shrink_text="from 100 to 400 epochs",
        **options,
    ).verdict(table)


def test_a_claim_measured_at_one_size_names_its_opposite_without_contradicting():
    verdict = _gain_claim({"a": [-1.0] * 6, "b": [0.1, -0.1] * 3})
    assert verdict.word == NOT_AT_THIS_SIZE
    assert verdict.where == "opposite at a; one size, so not shown to persist"
    # a shrink statistic with no point (the table has one budget) is one size
    assert _gain_claim({"a": [-1.0] * 6}, shrink=lambda t: {}).word == NOT_AT_THIS_SIZE


def test_an_opposite_shrinking_towards_a_larger_size_is_not_a_contradiction():
    gains = {"a": [-1.0] * 6, "b": [-2.0] * 6}
    towards = {"a": [0.5] * 6, "b": [0.2, 0.3, 0.1, 0.4, 0.2, 0.3]}
    verdict = _gain_claim(gains, shrink=lambda t: towards)
    assert verdict.word == NOT_AT_THIS_SIZE
    assert verdict.where == (
        "opposite at a, b; shrinking from 100 to 400 epochs: a +0.500 (6 of 6 "
        "seeds ahead), b +0.250 (6 of 6 seeds ahead)"
    )
    # shrinking at one opposite point only: not shown, so contradicted
    partly = {"a": [0.5] * 6, "b": [-0.2, 0.3] * 3}
    verdict = _gain_claim(gains, shrink=lambda t: partly)
    assert verdict.word == CONTRADICTED
    assert "not shown to shrink from 100 to 400 epochs" in verdict.where
    # a point the smaller size did not measure is not shown to shrink
    verdict = _gain_claim(gains, shrink=lambda t: {"a": [0.5] * 6})
    assert verdict.word == CONTRADICTED and "b not measured" in verdict.where


def test_a_shrink_statistic_leaves_a_mixed_or_reproduced_claim_alone():
    growing = {"a": [-1.0] * 6}
    verdict = _gain_claim({"a": [1.0] * 6, "b": [-1.0] * 6}, lambda t: growing)
    assert (verdict.word, verdict.where) == (MIXED, "holds at a; opposite at b")


def _per_size_claim(gains_by_d: dict) -> Claim:
    """A paired gain at every d, read along d."""
    return _gain_claim(gains_by_d, label="d={:g}", along_size=True)


def test_a_per_size_opposite_moving_towards_the_claim_is_a_size_effect():
    jitter = [0.01 * k for k in range(8)]
    shrinking = {100: [-1.0 + j for j in jitter], 200: [-0.6 + j for j in jitter]}
    shrinking[400] = [-0.2 + j for j in jitter]
    verdict = _per_size_claim(shrinking)
    assert verdict.word == NOT_AT_THIS_SIZE
    assert verdict.where.startswith(
        "opposite at d=100, d=200, d=400; shrinking with size: the mean's slope "
        "per e-fold of size +0.577"
    )
    flat = {d: [-0.5 + j for j in jitter] for d in (100, 200, 400)}
    verdict = _per_size_claim(flat)
    assert verdict.word == CONTRADICTED
    assert "not shown to shrink with size" in verdict.where
    assert _per_size_claim({100: flat[100]}).word == NOT_AT_THIS_SIZE
