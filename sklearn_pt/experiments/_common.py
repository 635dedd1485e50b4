"""What every reproduction shares: the result type, scale presets, output
files (CSV, Markdown, PNG) and the progress bar."""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .._plotting import PlotDependencyError, import_matplotlib
from .._progress import progress_bar
from .._torch_bridge import resolve_device
from ._verdicts import Verdict

__all__ = [
    "SCALES",
    "ExperimentResult",
    "PlotDependencyError",
    "Stopwatch",
    "as_table",
    "format_values",
    "new_figure",
    "plural",
    "progress_bar",
    "read_csv_table",
    "resolve_run_device",
    "resolve_seeds",
    "select_preset",
]

SCALES = ("small", "medium", "paper")
"""Public scale names, in increasing cost. ``"small"`` runs every experiment
on a two-core CPU in a little over a minute (estimated from CPU time; 117.6 s
measured with two workers of one torch thread before the partial sweep's
small scale went from 1000 to 400 epochs); ``"paper"`` is the
largest (depths up to 15, widths up to 2000; not timed, meant for a GPU)."""

TEST_SCALE = "tiny"
"""A hidden scale, smaller than ``"small"``, for the test suite only: its
numbers show that the pipeline works, not the papers' claims."""

PresetT = TypeVar("PresetT")


def select_preset(presets: Mapping[str, PresetT], scale: str) -> PresetT:
    """The preset of an experiment at a given scale.

    Parameters
    ----------
    presets : mapping of str to preset
        One preset per scale name (``SCALES`` and the hidden ``"tiny"``).
    scale : str
        The scale asked for.

    Returns
    -------
    preset
        ``presets[scale]``.

    Raises
    ------
    ValueError
        If ``scale`` is not one of the scales.

    Examples
    --------
    >>> from sklearn_pt.experiments._common import select_preset
    >>> select_preset({"small": 1, "medium": 2, "paper": 3}, "medium")
    2
    """
    if scale not in presets:
        raise ValueError(
            f"scale must be one of {', '.join(map(repr, SCALES))}; got {scale!r}. "
            "Pass scale='small' for a run of a minute or two on a CPU."
        )
    return presets[scale]


def resolve_seeds(seeds: int | None, default: int) -> tuple[int, ...]:
    """The seeds ``0, ..., n - 1`` of the repetitions.

    Parameters
    ----------
    seeds : int or None
        Number of repetitions; None uses ``default``.
    default : int
        The preset's number of repetitions.

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> from sklearn_pt.experiments._common import resolve_seeds
    >>> resolve_seeds(None, 3), resolve_seeds(2, 3)
    ((0, 1, 2), (0, 1))
    """
    n_seeds = default if seeds is None else seeds
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 1:
        raise ValueError(
            f"seeds must be a positive int (the number of repetitions); got "
            f"{seeds!r}. Pass seeds=None for the preset's number."
        )
    return tuple(range(n_seeds))


def resolve_run_device(device: str) -> str:
    """The concrete device of a run (``"auto"`` resolved), checked early.

    Parameters
    ----------
    device : {"cpu", "cuda", "auto"} or "cuda:N"

    Returns
    -------
    str
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    Examples
    --------
    >>> from sklearn_pt.experiments._common import resolve_run_device
    >>> resolve_run_device("cpu")
    'cpu'
    """
    return str(resolve_device(device))


def new_figure(
    n_columns: int,
    *,
    n_rows: int = 1,
    width_per_panel: float = 5.2,
    height_per_panel: float = 4.3,
):
    """A matplotlib figure with a grid of axes, made without pyplot.

    The figure is not registered with pyplot, so it needs no GUI backend and
    is freed with its last reference.

    Parameters
    ----------
    n_columns : int
    n_rows : int, default=1
    width_per_panel, height_per_panel : float, default=5.2, 4.3
        In inches.

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : list of matplotlib Axes
        Row by row.

    Raises
    ------
    PlotDependencyError
        If matplotlib is not installed.

    Examples
    --------
    >>> from sklearn_pt.experiments._common import new_figure
    >>> figure, axes = new_figure(3, n_rows=2)
    >>> len(axes)
    6
    """
    Figure = import_matplotlib("The reproductions", "matplotlib.figure").Figure
    figure = Figure(
        figsize=(width_per_panel * n_columns, height_per_panel * n_rows),
        layout="constrained",
    )
    axes = figure.subplots(n_rows, n_columns, squeeze=False)
    return figure, list(axes.flat)


class Stopwatch:
    """Wall time since construction, in seconds (``time.perf_counter``)."""

    def __init__(self) -> None:
        self._start = time.perf_counter()

    def seconds(self) -> float:
        """Seconds elapsed."""
        return time.perf_counter() - self._start


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


@dataclass
class ExperimentResult:
    """What a reproduction measured: a table, a figure and a summary.

    Parameters
    ----------
    name : str
        The experiment's name (``"partial"``, ...), used for the file names.
    title : str
        One line saying what the experiment reproduces.
    columns : tuple of str
        Names of the table's columns.
    rows : list of tuple
        The raw numbers, one tuple per row, in the order of ``columns``.
    figure : matplotlib.figure.Figure
        The figure of the claim.
    summary : str
        The measured claim in words and numbers (Markdown).
    metrics : dict of str to float
        The headline numbers of ``summary``, by name.
    settings : dict
        Sizes, seeds, device and scale of the run.
    seconds : float
        Wall time of the run.
    reference : str, default=""
        The paper whose claim is reproduced.
    verdicts : tuple of Verdict or str, default=()
        One per claim of the paper, judged by the shared rules of
        :mod:`sklearn_pt.experiments._verdicts` (a :class:`Verdict`; a
        ``str`` is taken as its line); the Markdown page opens with them.

    Examples
    --------
    >>> from sklearn_pt.experiments import ExperimentResult
    >>> result = ExperimentResult("demo", "A demo", ("x", "y"), [(0, 1.5)],
    ...                           None, "y is 1.5", {"y": 1.5}, {}, 0.1)
    >>> result.column("y")
    [1.5]
    """

    name: str
    title: str
    columns: tuple[str, ...]
    rows: list[tuple]
    figure: Any
    summary: str
    metrics: dict[str, float]
    settings: dict[str, Any]
    seconds: float
    reference: str = ""
    verdicts: tuple[Verdict | str, ...] = ()
    files: dict[str, Path] = field(default_factory=dict)

    def column(self, name: str) -> list:
        """The values of one column, in row order."""
        index = self.columns.index(name)
        return [row[index] for row in self.rows]

    def verdict_lines(self) -> list[str]:
        """The verdicts as the Markdown lines the summary opens with."""
        return [v if isinstance(v, str) else v.line() for v in self.verdicts]

    def write_csv(self, path: Path) -> Path:
        """Write the table as CSV (header row, ``nan`` for missing numbers)."""
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.columns)
            writer.writerows([_csv_cell(v) for v in row] for row in self.rows)
        return path

    def markdown(self) -> str:
        """The summary as a short Markdown page."""
        settings = ", ".join(f"{key} {value}" for key, value in self.settings.items())
        lines = [f"# {self.title}", ""]
        if self.verdicts:
            lines += ["## Verdict", ""]
            lines += [f"- {line}" for line in self.verdict_lines()]
            lines += ["", "## Measured", ""]
        lines += [
            self.summary,
            "",
            f"*Settings:* {settings}; wall time {self.seconds:.1f} s.",
            "",
            f"*Files:* `{self.name}.png` (figure), `{self.name}.csv` (raw numbers, "
            f"columns {', '.join(self.columns)}).",
        ]
        if self.reference:
            lines += ["", f"*Reference:* {self.reference}"]
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | Path, *, dpi: int = 110) -> dict[str, Path]:
        """Write ``<name>.png``, ``<name>.csv`` and ``<name>.md`` into ``out_dir``.

        Parameters
        ----------
        out_dir : str or Path
            Created when missing.
        dpi : int, default=110
            Resolution of the PNG.

        Returns
        -------
        files : dict of str to Path
            ``{"png": ..., "csv": ..., "md": ...}``; also stored in ``files``.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        png, md = out / f"{self.name}.png", out / f"{self.name}.md"
        self.figure.savefig(png, dpi=dpi)
        md.write_text(self.markdown())
        self.files = {"png": png, "csv": self.write_csv(out / f"{self.name}.csv")}
        self.files["md"] = md
        return self.files


def _table_cell(value: Any) -> Any:
    """A cell as :func:`read_csv_table` gives it: numbers (and text that
    reads as one) as ``float``, missing ones as ``nan``, other text as
    ``str``."""
    if value is None or value == "":
        return math.nan
    if isinstance(value, bool | np.bool_):
        return str(bool(value))  # as csv writes it
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return float(value)


def read_csv_table(path: str | Path) -> dict[str, list]:
    """Read a table written by :meth:`ExperimentResult.write_csv` back, by
    column: numbers as ``float`` (``nan`` for missing ones), other cells as
    ``str``. A summary's verdicts are judged from this, so a test can check
    that they follow from the CSV alone.

    Parameters
    ----------
    path : str or Path
        The CSV file.

    Returns
    -------
    table : dict of str to list
        One list per column, in row order.
    """
    with open(path, newline="") as handle:
        reader = csv.reader(handle)
        columns = next(reader)
        rows = list(reader)
    return as_table(columns, rows)


def as_table(columns: Sequence[str], rows: Sequence[Sequence]) -> dict[str, list]:
    """Rows as the by-column table :func:`read_csv_table` returns for their
    CSV, with the same cell types, so that a reproduction judges its verdicts
    from its rows exactly as from its written CSV.

    Examples
    --------
    >>> from sklearn_pt.experiments._common import as_table
    >>> as_table(("name", "value"), [("a", 1), ("b", None)])
    {'name': ['a', 'b'], 'value': [1.0, nan]}
    """
    return {
        name: [_table_cell(row[i]) for row in rows] for i, name in enumerate(columns)
    }


def format_values(values: Sequence[float], labels: Sequence[str]) -> str:
    """``"0.1 (label a), 0.5 (label b)"``: numbers with what they belong to.

    Examples
    --------
    >>> from sklearn_pt.experiments._common import format_values
    >>> format_values([0.1, 0.52], ["init_scale 1", "init_scale 10"])
    '0.1 (init_scale 1), 0.52 (init_scale 10)'
    """
    return ", ".join(
        f"{value:.3g} ({label})" for value, label in zip(values, labels, strict=True)
    )


def plural(count: int, noun: str) -> str:
    """``"1 seed"``, ``"2 seeds"``.

    Examples
    --------
    >>> from sklearn_pt.experiments._common import plural
    >>> plural(1, "seed"), plural(4, "seed")
    ('1 seed', '4 seeds')
    """
    return f"{count} {noun}{'' if count == 1 else 's'}"
