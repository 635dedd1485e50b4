"""The shared verdict rules, on synthetic inputs whose answer is known."""

import math

import numpy as np
import pytest

from sklearn_pt.experiments._common import ExperimentResult, read_csv_table
from sklearn_pt.experiments._verdicts import (
    CONTRADICTED,
    HOLDS,
    MIXED,
    NEITHER,
    NOT_AT_THIS_SIZE,
    OPPOSITE,
    REPRODUCED,
    VERDICTS,
    Verdict,
    bootstrap_interval,
    interval_test,
    judge,
    sign_test,
    sign_test_p_value,
)


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
    assert interval_test((1.0, 2.0), predicted=1.5) == HOLDS
    assert interval_test((1.0, 2.0), predicted=2.5) == NEITHER
    assert interval_test((1.0, 2.0), above=0.5) == HOLDS
    assert interval_test((1.0, 2.0), above=1.5) == NEITHER
    assert interval_test((1.0, 2.0), above=2.5) == OPPOSITE
    assert interval_test((1.0, 2.0), below=2.5) == HOLDS
    assert interval_test((1.0, 2.0), below=0.5) == OPPOSITE
    with pytest.raises(ValueError, match="exactly one"):
        interval_test((1.0, 2.0), predicted=1.0, above=0.0)
    with pytest.raises(ValueError, match="low <= high"):
        interval_test((2.0, 1.0), predicted=1.5)


def test_bootstrap_interval_covers_the_mean_at_its_rate():
    # 200 samples of 20 normals: the 90% interval covers the true mean in
    # about 90% of them (percentile bootstrap undercovers slightly at n=20).
    rng = np.random.default_rng(0)
    covered = [
        low <= 0.0 <= high
        for low, high in (
            bootstrap_interval(rng.normal(size=20), confidence=0.9, n_resamples=400)
            for _ in range(200)
        )
    ]
    assert 0.8 <= np.mean(covered) <= 0.97


def test_bootstrap_interval_is_reproducible_and_leaves_global_state():
    state = np.random.get_state()[1].copy()
    first = bootstrap_interval([1.0, 2.0, 3.0, 4.0], random_state=3)
    assert first == bootstrap_interval([1.0, 2.0, 3.0, 4.0], random_state=3)
    assert np.array_equal(state, np.random.get_state()[1])


def test_judge_the_four_words():
    assert judge({"a": HOLDS, "b": HOLDS}) == (REPRODUCED, "")
    assert judge({"a": HOLDS, "b": NEITHER}) == (MIXED, "holds at a")
    assert judge({"a": HOLDS, "b": OPPOSITE, "c": OPPOSITE}) == (
        MIXED,
        "holds at a; opposite at b, c",
    )
    assert judge({"a": NEITHER}) == (NOT_AT_THIS_SIZE, "")
    assert judge({"a": NEITHER, "b": OPPOSITE}) == (CONTRADICTED, "opposite at b")
    with pytest.raises(ValueError, match="empty"):
        judge({})
    with pytest.raises(ValueError, match="Outcomes"):
        judge({"a": "maybe"})


def test_verdict_line_names_word_test_and_numbers():
    verdict = Verdict.from_outcomes(
        "sharper for init_scale 10 at P <= 0.1",
        {"P=0.02": OPPOSITE, "P=0.1": HOLDS},
        test="paired sign test, level 0.05",
        measured="0 of 6, 6 of 6",
        paper="sharper",
    )
    assert verdict.word == MIXED
    line = verdict.line()
    assert line.startswith(
        "**Mixed**: sharper for init_scale 10 at P <= 0.1 (holds at P=0.1;"
    )
    assert "Test: paired sign test, level 0.05." in line
    assert "Measured: 0 of 6, 6 of 6." in line
    with pytest.raises(ValueError, match="word must be one of"):
        Verdict("c", "reproduced qualitatively", "t", "m", "p")
    assert set(VERDICTS) == {REPRODUCED, MIXED, NOT_AT_THIS_SIZE, CONTRADICTED}


def test_summary_opens_with_verdict_lines_and_csv_reads_back(tmp_path):
    verdict = Verdict("c", REPRODUCED, "t", "m", "p")
    result = ExperimentResult(
        "demo",
        "Demo",
        ("x", "label", "y"),
        [(0, "a", 1.5), (1, "b", None)],
        None,
        "s",
        {},
        {},
        0.0,
        verdicts=(verdict, "plain line"),
    )
    markdown = result.markdown()
    assert f"- {verdict.line()}\n- plain line" in markdown
    result.write_csv(tmp_path / "demo.csv")
    table = read_csv_table(tmp_path / "demo.csv")
    assert table["x"] == [0.0, 1.0] and table["label"] == ["a", "b"]
    assert table["y"][0] == 1.5 and math.isnan(table["y"][1])
