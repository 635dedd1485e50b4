"""Where the two-step count's predictions fail: a table by ``(alpha1,
alpha2, N)`` from a written two-step CSV.

Per cell and ``N``, over its seeds: the measured outliers added by step 2
(Tracy--Widom test on ``W_1`` and ``W_2``), the finite-``N`` prediction
and ``Lambda``, the mean ``|measured - finite-N|``, the share of runs where
step 2 *removes* outliers (a negative count), and the sign of the
finite-``N`` error (``+``: more outliers measured than predicted).

Run by hand on the committed medium run (or any ``two-step.csv``)::

    python benchmarks/two_step_count_cells.py [docs/reproductions/medium/two-step.csv]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

DEFAULT = (
    Path(__file__).parents[1] / "docs" / "reproductions" / "medium" / "two-step.csv"
)


def cell_table(csv: Path) -> pd.DataFrame:
    """One row per ``(alpha1, alpha2, N)`` of the count part."""
    table = pd.read_csv(csv)
    count = table[table.part == "count"].copy()
    count["error"] = count.added_outliers - count.finite_n
    count["abs_error"] = count.error.abs()
    count["negative"] = count.added_outliers < 0
    grouped = count.groupby(["alpha1", "alpha2", "width"])
    return grouped.agg(
        measured=("added_outliers", "mean"),
        finite_n=("finite_n", "mean"),
        lambda_paper=("lambda_paper", "first"),
        mean_abs_error=("abs_error", "mean"),
        signed_error=("error", "mean"),
        removes=("negative", "mean"),
        runs=("seed", "size"),
    )


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    csv = Path(argv[0]) if argv else DEFAULT
    cells = cell_table(csv)
    with pd.option_context("display.max_rows", None, "display.width", 120):
        print(cells.round(2).to_string())
        by_n = cells.groupby("width")[["mean_abs_error", "signed_error", "removes"]]
        print("\nper N (mean over the cells):")
        print(by_n.mean().round(3).to_string())
        worst = cells[
            cells.index.get_level_values("width") == cells.index.levels[2].max()
        ]
        print("\nat the largest N, the cells by error:")
        print(worst.sort_values("mean_abs_error", ascending=False).round(2).to_string())


if __name__ == "__main__":
    main()
