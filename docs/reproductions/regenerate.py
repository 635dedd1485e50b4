"""The reproduction pages: one per paper, from a committed ``--scale medium`` run.

Runs every experiment at ``--scale medium`` (its CSV, figure and Markdown go
to ``docs/reproductions/medium/``, its wall time, the machine and the commit
to ``medium/run.json``), then writes one page per paper from those files::

    python docs/reproductions/regenerate.py           # the run, then the pages
    python docs/reproductions/regenerate.py --pages   # the pages from the committed run
    python docs/reproductions/regenerate.py --only two-step  # one experiment again

A page's verdicts are :func:`~sklearn_pt.experiments.judge` of the
committed CSV, never copied from a run's output: ``--pages`` after a change
to a claim's rule re-judges the same measurements, and
``tests/experiments/test_pages.py`` fails when a committed page is not what
this script writes from the committed CSVs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import time
from pathlib import Path

from sklearn_pt._cli import default_n_jobs
from sklearn_pt.experiments import EXPERIMENTS, judge, run
from sklearn_pt.experiments._runner import read_table

HERE = Path(__file__).resolve().parent
SCALE = "medium"
OUTPUTS = HERE / SCALE
COMMAND = "python docs/reproductions/regenerate.py"

PAPERS = {
    "partially_trainable": (
        "Partially trainable networks",
        ("partial", "partial-approximation", "deep"),
    ),
    "feature_learning": (
        "Feature learning by gradient descent",
        ("feature-learning",),
    ),
    "two_steps": ("Two steps of gradient descent", ("two-step",)),
}
"""Page stem -> (title, the experiments of its paper)."""

_INLINE = re.compile(r"(\*\*[^*]+\*\*|\*[^*\s][^*]*\*|`[^`]+`)")
_SPECIAL = re.compile(r"([\\*_`|])")


def _escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)


def to_rst(markdown: str) -> str:
    """One line of the runner's Markdown as reStructuredText: bold, emphasis
    and code kept, every other character that reST reads as markup
    (``* _ ` | \\``) escaped."""
    parts = []
    for k, part in enumerate(_INLINE.split(markdown)):
        if k % 2 == 0:
            parts.append(_escape(part))
        elif part.startswith("`"):
            parts.append(f"``{part[1:-1]}``")
        else:
            mark = "**" if part.startswith("**") else "*"
            parts.append(mark + _escape(part[len(mark) : -len(mark)]) + mark)
    return "".join(parts)


def verdict_lines(name: str, outputs: Path = OUTPUTS) -> list[str]:
    """The verdict lines of the committed CSV of ``name``, re-judged, in reST."""
    verdicts = judge(EXPERIMENTS[name], outputs / f"{name}.csv")
    return [to_rst(verdict.line()) for verdict in verdicts]


def _machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        model = re.search(r"model name\s*:\s*(.+)", cpuinfo).group(1).strip()
    except (OSError, AttributeError):
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()}"


def _commit() -> str:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=HERE,
        check=False,
    ).stdout.strip()
    return commit or "unknown"


_PER_EXPERIMENT = (("commits", "commit"), ("machines", "machine"), ("dates", "date"))
"""What a partial run notes per experiment (key), and the run's field it
stands in for."""


def run_medium(
    n_jobs: int | None = None,
    outputs: Path = OUTPUTS,
    names: list[str] | None = None,
) -> dict:
    """Run the experiments ``names`` (None: every one) at :data:`SCALE` into
    ``outputs``, over ``n_jobs`` joblib workers (None: the CLI's default,
    :func:`~sklearn_pt._cli.default_n_jobs`); the record of the run
    (``run.json``). A partial run keeps the record of the others and notes
    its own commit, machine and date per experiment."""
    import torch

    n_jobs = default_n_jobs() if n_jobs is None else n_jobs

    record = {
        "command": COMMAND,
        "scale": SCALE,
        "commit": _commit(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": _machine(),
        "torch": torch.__version__,
        "device": "cpu",
        "n_jobs": n_jobs,
        "seconds": {},
    }
    if names is not None:
        previous = json.loads((outputs / "run.json").read_text())
        notes = {
            key: previous.get(key, {}) | dict.fromkeys(names, record[field])
            for key, field in _PER_EXPERIMENT
        }
        record = record | previous | notes
    for name in EXPERIMENTS if names is None else names:
        result = run(EXPERIMENTS[name], scale=SCALE, n_jobs=n_jobs)
        result.write(outputs)
        record["seconds"][name] = round(result.seconds, 1)
        print(f"{name}: {result.seconds:.1f} s", flush=True)
    (outputs / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def render(page: str, outputs: Path = OUTPUTS) -> str:
    """The reST text of ``page`` (a key of :data:`PAPERS`) from the committed
    run in ``outputs``."""
    title, names = PAPERS[page]
    record = json.loads((outputs / "run.json").read_text())
    relative = outputs.relative_to(HERE).as_posix()
    total = sum(record["seconds"][name] for name in names)
    commits, machines, dates = (
        sorted({record.get(key, {}).get(n, record[field]) for n in names})
        for key, field in _PER_EXPERIMENT
    )
    lines = [
        f".. This page is written by {COMMAND}; do not edit it.",
        "",
        f".. _reproduction_{page}:",
        "",
        title,
        "=" * len(title),
        "",
        f"``--scale {record['scale']}``, every verdict re-judged from the "
        "committed CSV by the rule its line states. Measured on "
        + "; ".join(_escape(machine) for machine in machines)
        + f" (device {record['device']}, torch "
        f"{record['torch']}, joblib jobs: {record['n_jobs']}) at commit "
        + ", ".join(f"``{commit}``" for commit in commits)
        + f" on {', '.join(dates)} by ``{record['command']}``: "
        f"{_minutes(total)} of wall time for this page's {len(names)} experiment"
        + ("s" if len(names) > 1 else "")
        + ". Regenerate the run and every page with ``"
        + COMMAND
        + "`` (``--pages`` re-judges the committed CSVs only).",
    ]
    for name in names:
        experiment = EXPERIMENTS[name]
        heading = f"``{name}``: {_escape(experiment.title)}"
        lines += ["", heading, "-" * len(heading), ""]
        lines += [f"- {line}" for line in verdict_lines(name, outputs)]
        lines += [
            "",
            f".. image:: {relative}/{name}.png",
            f"   :alt: {experiment.title}",
            "",
        ]
        if experiment.describe is not None:
            table = read_table(outputs / f"{name}.csv")
            for paragraph in experiment.describe(table).split("\n\n"):
                lines += [to_rst(" ".join(paragraph.split())), ""]
        lines += [
            f"Wall time {_minutes(record['seconds'][name])}; the table: "
            f":download:`{name}.csv <{relative}/{name}.csv>`. "
            f"Reference: {_escape(experiment.reference)}",
        ]
    return "\n".join(lines) + "\n"


def write_pages(outputs: Path = OUTPUTS) -> list[Path]:
    """Write every page of :data:`PAPERS` next to this script."""
    paths = []
    for page in PAPERS:
        path = HERE / f"{page}.rst"
        path.write_text(render(page, outputs))
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pages",
        action="store_true",
        help="write the pages from the committed run only (no fits)",
    )
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="joblib workers (default: the CLI's, the available cores, at most 8)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(EXPERIMENTS),
        help="run these experiments only, keeping the committed run of the others",
    )
    args = parser.parse_args(argv)
    if not args.pages:
        OUTPUTS.mkdir(parents=True, exist_ok=True)
        run_medium(args.n_jobs, names=args.only)
    for path in write_pages():
        print(f"wrote {path.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    main()
