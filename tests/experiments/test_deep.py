"""The deep reproduction's verdicts: judged from its table by the shared
rules, at the hidden ``tiny`` scale and on synthetic curves."""

import numpy as np

from sklearn_pt.experiments import run_deep
from sklearn_pt.experiments._common import read_csv_table
from sklearn_pt.experiments._deep import COLUMNS, judge


def test_verdicts_follow_from_the_written_csv(tmp_path):
    result = run_deep(scale="tiny", progress=False)
    assert result.columns == COLUMNS
    files = result.write(tmp_path)
    assert judge(read_csv_table(files["csv"])) == result.verdicts
    assert files["md"].read_text().index("## Verdict") >= 0


def _table(curves: dict, proportions, n_seeds: int, rng) -> dict:
    rows = [
        (depth, p, s, float(curve[i] * (1 + 0.01 * rng.standard_normal())))
        for depth, curve in curves.items()
        for i, p in enumerate(proportions)
        for s in range(n_seeds)
    ]
    table = {name: [row[k] for row in rows] for k, name in enumerate(COLUMNS[:4])}
    return table | {"test_mse": table["train_mse"]}


def test_judge_on_synthetic_curves():
    """Depth 2 and 4 share a sharp transition; depth 8's error falls slower
    than linearly in P: the shape holds at 2 and 4, the opposite at 8
    (mixed), and depth 8's P90 differs from depth 2's."""
    proportions = np.array([0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0])
    sharp = 0.01 + 0.99 * np.exp(-40 * proportions)
    slow = 1.0 - 0.99 * proportions**2
    curves = {2: sharp, 4: sharp, 8: slow}
    rng = np.random.default_rng(0)
    shape, p90 = judge(_table(curves, proportions, 6, rng))
    assert shape.word == "mixed"
    assert "holds at depth 2, depth 4" in shape.where
    assert "opposite at depth 8" in shape.where
    assert p90.word == "mixed" and "holds at depth 4" in p90.where
