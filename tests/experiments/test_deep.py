"""The deep reproduction: its verdicts follow from its CSV, and the claims
judge synthetic curves as they should."""

import numpy as np
import pandas as pd

from sklearn_pt.experiments import DEEP, judge, run


def test_verdicts_follow_from_the_written_csv(tmp_path):
    result = run(DEEP, scale="tiny", progress=False)
    files = result.write(tmp_path)
    assert list(result.table.columns) == [
        "depth",
        "seed",
        "trainable_proportion",
        "train_mse",
        "test_mse",
    ]
    assert judge(DEEP, files["csv"]) == result.verdicts
    assert files["md"].read_text().index("## Verdict") >= 0


def _table(curves: dict, proportions, n_seeds: int, rng) -> pd.DataFrame:
    rows = [
        {
            "depth": depth,
            "seed": s,
            "trainable_proportion": p,
            "train_mse": float(curve[i] * (1 + 0.01 * rng.standard_normal())),
        }
        for depth, curve in curves.items()
        for s in range(n_seeds)
        for i, p in enumerate(proportions)
    ]
    return pd.DataFrame(rows).assign(test_mse=lambda t: t.train_mse)


def test_judge_on_synthetic_curves():
    """Depth 2 and 4 share a sharp transition; depth 8's error falls slower
    than linearly in P: the shape holds at 2 and 4, the opposite at 8
    (mixed), and depth 8's P90 differs from depth 2's."""
    proportions = np.array([0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0])
    sharp = 0.01 + 0.99 * np.exp(-40 * proportions)
    slow = 1.0 - 0.99 * proportions**2
    curves = {2: sharp, 4: sharp, 8: slow}
    rng = np.random.default_rng(0)
    shape, p90 = judge(DEEP, _table(curves, proportions, 6, rng))
    assert shape.word == "mixed"
    assert "holds at depth 2, depth 4" in shape.where
    assert "opposite at depth 8" in shape.where
    assert p90.word == "mixed" and "holds at depth 4" in p90.where
