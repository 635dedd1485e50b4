"""Every experiment's verdicts follow from its CSV alone: re-judging the CSV
that ``sklearn-pt reproduce all --scale small`` wrote gives the verdict lines
of the Markdown it wrote, byte for byte.

The files in ``data/`` are that command's CSV and Markdown outputs (the PNGs
left out); regenerate them with
``sklearn-pt reproduce all --scale small --out tests/experiments/data`` after
a change to an experiment, and delete the PNGs.
"""

from pathlib import Path

import pytest

from sklearn_pt.experiments import EXPERIMENTS, Experiment, judge

DATA = Path(__file__).parent / "data"


def _verdict_lines(markdown: str) -> list[str]:
    section = markdown.split("## Verdict\n\n", 1)[1].split("\n\n", 1)[0]
    return [line.removeprefix("- ") for line in section.splitlines()]


def test_every_experiment_has_its_small_outputs_here():
    assert all(isinstance(exp, Experiment) for exp in EXPERIMENTS.values())
    assert {path.stem for path in DATA.glob("*.csv")} == set(EXPERIMENTS)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_rejudging_the_small_csv_gives_the_written_verdict_lines(name):
    written = _verdict_lines((DATA / f"{name}.md").read_text())
    assert written, f"no verdict lines in data/{name}.md"
    rejudged = [
        verdict.line() for verdict in judge(EXPERIMENTS[name], DATA / f"{name}.csv")
    ]
    assert rejudged == written
