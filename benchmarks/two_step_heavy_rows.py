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

from sklearn_pt.datasets import make_single_index
from sklearn_pt.experiments._two_step import LEVEL, TWO_STEP, _two_steps
from sklearn_pt.feature_extraction._two_step_plan import standardise_targets
from sklearn_pt.spectral import soft_edge_test
from sklearn_pt.theory import count_signal_outliers, two_step_signal

CELLS = ((0.1, 0.2), (0.25, 0.35), (0.25, 0.45), (0.375, 0.35), (0.375, 0.45))


def _singular_values(matrix):
    return np.linalg.svd(matrix, compute_uv=False)


def cell_row(alpha1: float, alpha2: float, width: int, seed: int, drop: int) -> dict:
    config = {**TWO_STEP.presets["medium"], **TWO_STEP.presets["medium"]["grid"][0]}
    config |= {"d": width, "alpha1": alpha1, "alpha2": alpha2, "device": "cpu"}
    X, y = make_single_index(width, width, link=config["link"], random_state=seed)
    features = _two_steps(config, seed, X, y)
    W0, W1, W2 = (np.asarray(w) for w in features.first_layer_weights_)
    a = features.second_layer_weights_
    targets = standardise_targets(y)
    signal = two_step_signal(
        (X, targets),
        (X, targets),
        a,
        features.step_sizes_,
        config["activation"],
        initial_weights=W0,
    )
    tests = [soft_edge_test(_singular_values(W), level=LEVEL) for W in (W1, W2)]
    kept = np.argsort(-np.abs(a))[drop:]
    rows = np.linalg.norm(W2 - signal.second, axis=1)
    predicted = count_signal_outliers(
        signal.second, tests[1].threshold
    ) - count_signal_outliers(signal.first, tests[0].threshold)
    top = lambda values: " ".join(f"{v:.2f}" for v in values[:4])  # noqa: E731
    return {
        "alpha1": alpha1,
        "alpha2": alpha2,
        "seed": seed,
        "W2_top": top(_singular_values(W2)),
        "S2_top": top(_singular_values(signal.second)),
        "outliers_W1": tests[0].n_outliers,
        "outliers_W2": tests[1].n_outliers,
        f"W2_without_{drop}_rows": soft_edge_test(
            _singular_values(W2[kept]), level=LEVEL
        ).n_outliers,
        "edge_W2": round(tests[1].threshold, 2),
        "residual_row_max": round(rows.max(), 2),
        "residual_row_median": round(float(np.median(rows)), 2),
        "measured": tests[1].n_outliers - tests[0].n_outliers,
        "finite_n": predicted,
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
