"""Why the two-step count's finite-``N`` prediction misses: the signal's
top singular values against ``W_2``'s, and the outliers of ``W_2`` that
are heavy rows rather than spikes.

Per count cell ``(alpha1, alpha2)`` and seed, at ``N = n = d``: the top
singular values of ``W_2`` and of the predicted signal ``S_2``
(:func:`~sklearn_pt.theory.two_step_signal`), the Tracy--Widom outlier
counts of ``W_1`` and ``W_2``, the count of ``W_2`` without its
``--drop`` rows of largest ``|a_j|`` (the rows the steps move most), the
largest and the median row norm of ``W_2 - S_2`` and the finite-``N``
prediction. Run by hand::

    python benchmarks/two_step_heavy_rows.py [--width 400] [--seeds 3] [--drop 10]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from sklearn_pt.experiments._two_step import (
    LEVEL,
    TWO_STEP,
    _count_parts,
    _predicted,
)
from sklearn_pt.spectral import soft_edge_test

CELLS = ((0.1, 0.2), (0.25, 0.35), (0.25, 0.45), (0.375, 0.35), (0.375, 0.45))


def cell_row(alpha1: float, alpha2: float, width: int, seed: int, drop: int) -> dict:
    config = {**TWO_STEP.presets["medium"], **TWO_STEP.presets["medium"]["grid"][0]}
    config |= {"d": width, "alpha1": alpha1, "alpha2": (alpha2,), "device": "cpu"}
    (parts,) = _count_parts(config, seed)
    first, second = parts.tests
    signal = parts.signal
    W2 = parts.weights[2]
    kept = np.argsort(-np.abs(parts.second_layer))[drop:]
    rows = np.linalg.norm(W2 - signal.second, axis=1)
    top = lambda values: " ".join(f"{v:.2f}" for v in values[:4])  # noqa: E731
    return {
        "alpha1": alpha1,
        "alpha2": alpha2,
        "seed": seed,
        "W2_top": top(second.singular_values),
        "S2_top": top(np.linalg.svd(signal.second, compute_uv=False)),
        "outliers_W1": first.n_outliers,
        "outliers_W2": second.n_outliers,
        f"W2_without_{drop}_rows": soft_edge_test(
            np.linalg.svd(W2[kept], compute_uv=False), level=LEVEL
        ).n_outliers,
        "edge_W2": round(second.threshold, 2),
        "residual_row_max": round(rows.max(), 2),
        "residual_row_median": round(float(np.median(rows)), 2),
        "measured": second.n_outliers - first.n_outliers,
        "finite_n": _predicted(parts, 1) - _predicted(parts, 0),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=400)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--drop", type=int, default=10)
    args = parser.parse_args(argv)
    table = pd.DataFrame(
        [
            cell_row(alpha1, alpha2, args.width, seed, args.drop)
            for alpha1, alpha2 in CELLS
            for seed in range(args.seeds)
        ]
    )
    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
