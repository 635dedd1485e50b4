"""The reproduction pages (``docs/reproductions/<paper>.rst``) show what their
committed ``--scale medium`` CSVs give: each verdict line is the re-judgement
of the CSV, and each page is what ``docs/reproductions/regenerate.py
--pages`` writes from the committed run."""

import importlib.util
import re
import time
from functools import cache
from pathlib import Path

import pytest

from sklearn_pt.experiments import EXPERIMENTS, judge

PAGES = Path(__file__).parents[2] / "docs" / "reproductions"


@cache
def _regenerate():
    spec = importlib.util.spec_from_file_location("regenerate", PAGES / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _rejudged(name: str) -> tuple[str, ...]:
    verdicts = judge(EXPERIMENTS[name], PAGES / "medium" / f"{name}.csv")
    return tuple(verdict.line() for verdict in verdicts)


def _unescape(rst: str) -> str:
    text = re.sub(r"``([^`]+)``", r"`\1`", rst)
    return re.sub(r"\\(.)", r"\1", text)


def _page_verdicts(page_text: str, name: str) -> list[str]:
    """The bullet lines under the ``name`` heading of a page, as Markdown."""
    section = page_text.split(f"``{name}``: ", 1)[1].split("\n\n", 2)[1]
    return [_unescape(line.removeprefix("- ")) for line in section.splitlines()]


def test_every_experiment_is_on_one_page_with_its_committed_run():
    pages = _regenerate().PAPERS
    names = [name for _, names in pages.values() for name in names]
    assert sorted(names) == sorted(EXPERIMENTS)
    for name in names:
        for kind in ("csv", "png"):
            assert (PAGES / "medium" / f"{name}.{kind}").is_file(), (name, kind)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_the_page_shows_the_rejudged_verdicts(name):
    page = next(p for p, (_, names) in _regenerate().PAPERS.items() if name in names)
    shown = _page_verdicts((PAGES / f"{page}.rst").read_text(), name)
    assert shown == list(_rejudged(name))


PAPERS = ["partially_trainable", "feature_learning", "two_steps"]


@pytest.mark.parametrize("page", PAPERS)
def test_the_committed_page_is_what_regenerate_writes(page):
    assert (PAGES / f"{page}.rst").read_text() == _regenerate().render(page)


def test_to_rst_keeps_emphasis_and_escapes_markup():
    to_rst = _regenerate().to_rst
    line = "**Mixed**: |P theta| on W_2, *d* = 4, `code` and 2 * 3 ~ x_"
    rst = to_rst(line)
    assert rst == (
        r"**Mixed**: \|P theta\| on W\_2, *d* = 4, ``code`` and 2 \* 3 ~ x\_"
    )
    assert _unescape(rst) == line


def test_a_partial_run_keeps_the_others_and_notes_its_commit(tmp_path, monkeypatch):
    """``--only NAME``: only NAME runs; the record keeps the other
    experiments' seconds, the run's commit and machine, and notes NAME's own
    commit and machine, which its page names beside the run's (no fit: the
    runner is replaced)."""
    import json

    regenerate = _regenerate()
    previous = {
        "commit": "aaaaaaa",
        "machine": "Machine A, 2 cores, Linux",
        "seconds": dict.fromkeys(EXPERIMENTS, 1.0),
    }
    (tmp_path / "run.json").write_text(json.dumps(previous))
    ran = []

    class Result:
        seconds = 2.5

        def write(self, outputs):
            assert outputs == tmp_path

    def fake_run(experiment, **kwargs):
        ran.append(experiment.name)
        return Result()

    monkeypatch.setattr(regenerate, "run", fake_run)
    monkeypatch.setattr(regenerate, "_commit", lambda: "bbbbbbb")
    monkeypatch.setattr(regenerate, "_machine", lambda: "Machine B, 2 cores, Linux")
    record = regenerate.run_medium(outputs=tmp_path, names=["two-step"])
    assert ran == ["two-step"]
    assert record["seconds"] == {**previous["seconds"], "two-step": 2.5}
    assert record["commit"] == "aaaaaaa"
    assert record["machine"] == "Machine A, 2 cores, Linux"
    assert record["commits"] == {"two-step": "bbbbbbb"}
    assert record["machines"] == {"two-step": "Machine B, 2 cores, Linux"}
    assert record["dates"] == {"two-step": time.strftime("%Y-%m-%d", time.gmtime())}
    assert json.loads((tmp_path / "run.json").read_text()) == record


def _committed_run_with(tmp_path, monkeypatch, **changes):
    """The regenerate module and a copy of the committed run whose
    ``run.json`` has ``changes``; the record before them."""
    import json
    import shutil

    regenerate = _regenerate()
    monkeypatch.setattr(regenerate, "HERE", tmp_path)
    outputs = tmp_path / "medium"
    shutil.copytree(PAGES / "medium", outputs)
    record = json.loads((outputs / "run.json").read_text())
    (outputs / "run.json").write_text(json.dumps(record | changes))
    return regenerate, outputs, record


def test_a_page_names_the_machine_of_each_of_its_experiments(tmp_path, monkeypatch):
    regenerate, outputs, record = _committed_run_with(
        tmp_path, monkeypatch, machines={"partial": "Machine B, 2 cores, Linux"}
    )
    header = regenerate.render("partially_trainable", outputs=outputs)
    header = header.split("Measured on ", 1)[1].split(" (device", 1)[0]
    assert header == "; ".join(
        sorted([regenerate._escape(record["machine"]), "Machine B, 2 cores, Linux"])
    )


def test_a_page_names_the_date_of_each_of_its_experiments(tmp_path, monkeypatch):
    """A rerun of one experiment dates its own page, not the others'."""
    regenerate, outputs, _ = _committed_run_with(
        tmp_path, monkeypatch, date="2026-01-01", dates={"two-step": "2026-02-02"}
    )
    assert " on 2026-02-02 by " in regenerate.render("two_steps", outputs=outputs)
    assert " on 2026-01-01 by " in regenerate.render(
        "feature_learning", outputs=outputs
    )
