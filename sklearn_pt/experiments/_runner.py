"""One runner for every reproduction: an :class:`Experiment` declares its
presets, its measurement, its claims and its panels; :func:`run` fits, times,
tabulates and judges; :func:`judge` gives the verdicts of a table (or of a
written CSV) alone."""

from __future__ import annotations

import io
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from .._parallel import delayed, run_tasks
from .._plotting import import_matplotlib
from .._progress import progress_bar
from .._torch_bridge import resolve_device
from ._claims import Claim, Verdict

__all__ = ["SCALES", "Experiment", "ExperimentResult", "judge", "run"]

SCALES = ("small", "medium", "paper")
"""Public scale names, in increasing cost: ``"small"`` runs every experiment
on a laptop CPU in about a minute, ``"paper"`` is meant for a GPU."""

TEST_SCALE = "tiny"
"""A hidden scale, smaller than ``"small"``, for the test suite: it shows
that the pipeline works, not the papers' claims."""

Rows = list[dict[str, Any]]
Panel = Callable[[Any, pd.DataFrame], None]


@dataclass(frozen=True)
class Experiment:
    """A reproduction, declared as data.

    Parameters
    ----------
    name : str
        The command-line name, also the stem of the output files.
    title : str
        One line saying what is reproduced.
    reference : str
        The paper.
    presets : mapping of str to dict
        Per scale (:data:`SCALES` and the hidden ``"tiny"``), the sizes:
        ``"seeds"`` (repetitions per cell), ``"grid"`` (a list of cells, each
        a dict of the settings that vary; a cell may set its own
        ``"seeds"``), and any settings shared by every cell.
    measure : callable
        ``measure(config, seed) -> list of dict``: fits for one cell and one
        seed and returns the rows it measured. ``config`` holds the shared
        settings, the cell's and ``"device"``; ``seed`` seeds the data and
        the ``random_state`` of every fit.
    claims : sequence of Claim, or callable
        The paper's claims, or ``claims(table) -> sequence of Claim`` where
        the claims depend on the grid (one per init scale, say).
    panels : sequence of callable, default=()
        ``panel(ax, table)``: each draws one axes of the figure from the
        table.
    describe : callable, default=None
        ``describe(table) -> str``: Markdown shown under the verdicts.
    cost : callable, default=None
        ``cost(config) -> float``: a task's expected run time, in any unit
        (say, its products). :func:`run` starts the costliest tasks first, so
        the last ones to finish are short and no worker waits long on
        another; the table keeps the grid's order. None runs the tasks in
        the grid's order.

    Examples
    --------
    >>> from sklearn_pt.experiments import Claim, Experiment, SignTest, judge, run
    >>> def measure(config, seed):
    ...     return [{"x": x, "gain": 1.0 + seed} for x in config["xs"]]
    >>> gain = Claim("a gain at every x", lambda t: dict(iter(t.groupby("x").gain)),
    ...              SignTest(), paper="a gain", label="x={}")
    >>> demo = Experiment("demo", "A demo", "Nobody (2026)",
    ...                   {"small": {"seeds": 5, "grid": [{}], "xs": [1, 2]}},
    ...                   measure, [gain])
    >>> result = run(demo, progress=False)
    >>> result.table.shape, result.verdicts[0].word
    ((10, 3), 'reproduced')
    >>> judge(demo, result.table) == result.verdicts
    True
    """

    name: str
    title: str
    reference: str
    presets: Mapping[str, Mapping[str, Any]]
    measure: Callable[[dict, int], Rows]
    claims: Sequence[Claim] | Callable[[pd.DataFrame], Sequence[Claim]]
    panels: Sequence[Panel] = ()
    describe: Callable[[pd.DataFrame], str] | None = None
    cost: Callable[[dict], float] | None = None

    def preset(self, scale: str) -> Mapping[str, Any]:
        """The preset of ``scale``, or an error naming the scales."""
        if scale not in self.presets:
            raise ValueError(
                f"scale must be one of {', '.join(map(repr, SCALES))}; got "
                f"{scale!r}. Pass scale='small' for a run of a minute on a CPU."
            )
        return self.presets[scale]


def _seed_count(seeds: int | None, default: int) -> int:
    count = default if seeds is None else seeds
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(
            f"seeds must be a positive int (the repetitions per cell); got "
            f"{seeds!r}. Pass seeds=None for the preset's number."
        )
    return count


def _measure_cell(measure, config: dict, cell: dict, seed: int) -> Rows:
    keys = {k: v for k, v in cell.items() if k != "seeds" and not _is_list(v)}
    # Experiments fit where training fails on purpose (below a threshold, a
    # few steps): the rows record the outcome, the warnings would repeat it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        rows = measure(config, seed)
    return [{**keys, "seed": seed, **row} for row in rows]


def _is_list(value) -> bool:
    return isinstance(value, list | tuple | dict)


def to_csv(table: pd.DataFrame) -> str:
    """The CSV text of a table: ``repr`` floats (they read back exactly), an
    empty cell for NaN, ``\\n`` line ends."""
    return table.to_csv(index=False, lineterminator="\n")


def read_table(source: pd.DataFrame | str | Path) -> pd.DataFrame:
    """A table as its CSV reads back (a path, CSV text, or a DataFrame)."""
    if isinstance(source, pd.DataFrame):
        source = to_csv(source)
    elif isinstance(source, Path) or "\n" not in source:
        source = Path(source).read_text()
    return pd.read_csv(io.StringIO(source))


def canonical_order(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``table`` sorted by every column, taken in the order of
    the column names (NaN last), with a fresh index: the same rows in any
    order, with their columns in any order, give the same table.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_pt.experiments._runner import canonical_order
    >>> table = pd.DataFrame({"seed": [1, 0, 0], "N": [200, 400, 200]})
    >>> canonical_order(table).to_dict("list")
    {'seed': [0, 1, 0], 'N': [200, 200, 400]}
    """
    order = sorted(table.columns)
    ordered = table.sort_values(order, kind="stable", na_position="last")
    return ordered.reset_index(drop=True)


def judge(
    experiment: Experiment, table: pd.DataFrame | str | Path
) -> tuple[Verdict, ...]:
    """The verdicts of ``experiment``'s claims on a table, read as its CSV.

    Parameters
    ----------
    experiment : Experiment
    table : DataFrame, or str or Path
        The long table of a run, or the path of its written CSV: the
        verdicts follow from the CSV alone, and a table is judged as its
        CSV reads back, so both give the same lines.

    Returns
    -------
    tuple of Verdict

    Notes
    -----
    The verdicts depend on the rows, not on their order: a bootstrap draws
    its resamples by position, so the table is first put in one canonical
    order (:func:`canonical_order`), whatever order the run or a file gave
    it.
    """
    table = canonical_order(read_table(table))
    claims = experiment.claims
    claims = claims(table) if callable(claims) else claims
    return tuple(claim.verdict(table) for claim in claims)


def run(
    experiment: Experiment,
    *,
    scale: str = "small",
    device: str = "cpu",
    seeds: int | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ExperimentResult:
    """Run an experiment: every cell of its grid for every seed, in parallel.

    Each task (one cell, one seed) runs in a joblib worker under the
    caller's scikit-learn and library configurations
    (``sklearn_pt.config_context(torch_threads=1)`` reaches every worker),
    the costliest first when the experiment states a ``cost``.
    The rows form one long table, whose CSV is read back before judging,
    so the verdicts are those :func:`judge` gives the written file.

    Parameters
    ----------
    experiment : Experiment
    scale : {"small", "medium", "paper"}, default="small"
    device : {"cpu", "cuda", "auto"} or "cuda:N", default="cpu"
    seeds : int, default=None
        Repetitions per cell (seeds ``0 .. seeds - 1``); None uses the
        preset's.
    n_jobs : int, default=None
        joblib workers over the tasks.
    progress : bool, default=True
        A progress bar over the tasks on stderr.

    Returns
    -------
    ExperimentResult
    """
    start = time.perf_counter()
    preset = dict(experiment.preset(scale))
    device = str(resolve_device(device))
    grid = preset.pop("grid")
    default_seeds = preset.pop("seeds")
    shared = {**preset, "device": device}
    tasks = [
        (cell, seed)
        for cell in grid
        for seed in range(_seed_count(seeds, cell.get("seeds", default_seeds)))
    ]
    configs = [{**shared, **cell} for cell, _ in tasks]
    order = list(range(len(tasks)))
    if experiment.cost is not None:
        order.sort(key=lambda i: -experiment.cost(configs[i]))
    with progress_bar(len(tasks), desc=experiment.name, enabled=progress) as bar:
        done = run_tasks(
            (
                delayed(_measure_cell)(experiment.measure, configs[i], *tasks[i])
                for i in order
            ),
            n_jobs=n_jobs,
            bar=bar,
        )
    measured = [rows for _, rows in sorted(zip(order, done, strict=True))]
    table = read_table(pd.DataFrame([row for rows in measured for row in rows]))
    scalars = {k: v for k, v in preset.items() if not _is_list(v)}
    return ExperimentResult(
        experiment,
        table,
        judge(experiment, table),
        {"scale": scale, "seeds": seeds or default_seeds, "device": device, **scalars},
        time.perf_counter() - start,
    )


@dataclass
class ExperimentResult:
    """What a run measured: the long table, its verdicts and its figure.

    Attributes
    ----------
    experiment : Experiment
    table : pandas.DataFrame
        One row per measurement, as its CSV reads back.
    verdicts : tuple of Verdict
        :func:`judge` of the table.
    settings : dict
        Scale, seeds, device and the preset's shared sizes.
    seconds : float
        Wall time of the run.
    files : dict of str to Path
        What :meth:`write` wrote.
    """

    experiment: Experiment
    table: pd.DataFrame
    verdicts: tuple[Verdict, ...]
    settings: dict[str, Any]
    seconds: float
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.experiment.name

    @property
    def csv(self) -> str:
        """The table's CSV text, the same bytes for the same run."""
        return to_csv(self.table)

    def verdict_lines(self) -> list[str]:
        """The verdicts as the Markdown lines the page opens with."""
        return [verdict.line() for verdict in self.verdicts]

    @cached_property
    def figure(self):
        """A matplotlib figure, one axes per panel, drawn from the table."""
        Figure = import_matplotlib("The reproductions", "matplotlib.figure").Figure
        panels = self.experiment.panels
        columns = min(3, len(panels)) or 1
        rows = -(-len(panels) // columns) or 1
        figure = Figure(figsize=(5.2 * columns, 4.3 * rows), layout="constrained")
        axes = figure.subplots(rows, columns, squeeze=False).flat
        for ax, panel in zip(axes, panels, strict=False):
            panel(ax, self.table)
        for ax in list(axes)[len(panels) :]:
            ax.set_axis_off()
        return figure

    def markdown(self) -> str:
        """The result as a Markdown page: verdicts, description, settings."""
        settings = ", ".join(f"{k} {v}" for k, v in self.settings.items())
        describe = self.experiment.describe
        lines = [f"# {self.experiment.title}", "", "## Verdict", ""]
        lines += [f"- {line}" for line in self.verdict_lines()]
        if describe is not None:
            lines += ["", "## Measured", "", describe(self.table)]
        lines += [
            "",
            f"*Settings:* {settings}; wall time {self.seconds:.1f} s.",
            "",
            f"*Files:* `{self.name}.png` (figure), `{self.name}.csv` (the long "
            f"table, columns {', '.join(self.table.columns)}).",
            "",
            f"*Reference:* {self.experiment.reference}",
        ]
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | Path, *, dpi: int = 110) -> dict[str, Path]:
        """Write ``<name>.png``, ``<name>.csv`` and ``<name>.md`` into
        ``out_dir`` (created when missing); returns their paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.files = {
            kind: out / f"{self.name}.{kind}" for kind in ("png", "csv", "md")
        }
        self.figure.savefig(self.files["png"], dpi=dpi)
        self.files["csv"].write_text(self.csv)
        self.files["md"].write_text(self.markdown())
        return self.files
