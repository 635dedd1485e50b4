"""delta_NN computed from the plateau law, beside the measured delta_H.

For each activation, width ``m``, dimension ``d``, sample ratio ``delta`` and
seed, one run of first-layer GD with ``theta*``'s component of ``W`` held at 0
up to the end of its first phase (the feature-learning experiment's rule),
then on the *same* plateau:

* theory: :func:`sklearn_pt.theory.weighted_lower_edge` and
  :func:`sklearn_pt.theory.aligned_outlier` of the training set's law of
  ``(G, M)`` at ratio ``delta``;
* measured: the Hessian's ``m + 1`` smallest eigenpairs and the experiment's
  rule (:func:`~sklearn_pt.experiments._feature_learning.outlier_found`:
  eigenvalue < 0, overlap with ``theta*`` > 0.5, separated from the bulk
  edge by the margin).

Per ``(activation, m, d)`` it prints the crossing at 1/2 of the rate over
seeds of each (theory "outlier appears", measured delta_H); with
``--pooled K`` also
:func:`sklearn_pt.theory.hessian_threshold` on the law pooled over ``K``
seeds (``d_eff = K d``). Rows go to ``--out`` (CSV).

Run by hand (one thread)::

    OMP_NUM_THREADS=1 python benchmarks/delta_nn.py --activation quadratic \
        --widths 2 4 6 8 --dims 100 200 400 --seeds 3 --out delta_nn.csv
    OMP_NUM_THREADS=1 python benchmarks/delta_nn.py --activation quadratic \
        --widths 2 4 6 8 --dims 800 --pooled 4 --seeds 0
    OMP_NUM_THREADS=1 python benchmarks/delta_nn.py --resampled --widths 4 \
        --dims 200 --grid 4 --seeds 2
"""

from __future__ import annotations

import argparse
import csv
import math
import time

import numpy as np
import torch

from sklearn_pt.experiments._feature_learning import _hessian_outlier, outlier_found
from sklearn_pt.model_selection import rate_crossing
from sklearn_pt.theory import aligned_outlier, hessian_threshold, weighted_lower_edge
from sklearn_pt.theory._hessian_threshold import _plateau_run

GRIDS = {
    "quadratic": (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0),
    "gelu": (2.0, 4.0, 6.0, 8.0, 10.0, 14.0, 20.0),
}


def one_run(activation, width, d, delta, seed):
    start = time.perf_counter()
    run = _plateau_run(activation, width, delta, d, seed, None, None)
    trained = time.perf_counter()
    edge = weighted_lower_edge(run.weights, delta)
    outlier = aligned_outlier(run.weights, run.signal, delta)
    theory = time.perf_counter()
    eigenvalue, overlap, bulk_edge = _hessian_outlier(
        run.fitted.module_, run.weight, run.X, run.y, run.theta, width
    )
    measured = time.perf_counter()
    return {
        "activation": activation,
        "width": width,
        "d": d,
        "delta": delta,
        "seed": seed,
        "first_phase_step": run.step,
        "theory_edge": edge,
        "theory_outlier": math.nan if outlier is None else outlier,
        "theory_found": int(outlier is not None),
        "hessian_eigenvalue": eigenvalue,
        "hessian_overlap": overlap,
        "hessian_edge": bulk_edge,
        "outlier_found": int(outlier_found(eigenvalue, overlap, bulk_edge, d)),
        "train_s": trained - start,
        "theory_s": theory - trained,
        "hessian_s": measured - theory,
    }


def resampled_check(activation, width, d, delta, seed):
    """The theory's premise on one plateau: the training set's ``(G, M)``
    with the design's part orthogonal to ``theta*`` drawn afresh (Gaussian,
    independent of ``M``) against the real design; dense spectra of ``(1/n)
    sum_j M_j (x) x_j x_j^T``, the ``m + 2`` smallest eigenvalues and their
    eigenvectors' overlaps with ``theta*``."""
    run = _plateau_run(activation, width, delta, d, seed, None, None)
    theta, M, G = np.ravel(run.theta), run.weights, run.signal
    n = len(G)

    def spectrum(X):
        H = np.einsum("jik,ja,jb->iakb", M, X, X, optimize=True) / n
        values, vectors = np.linalg.eigh(H.reshape(width * d, width * d))
        blocks = vectors.reshape(width, d, -1).transpose(2, 0, 1)
        overlaps = np.linalg.norm(blocks @ theta, axis=1)
        return values[: width + 2], overlaps[: width + 2]

    rng = np.random.default_rng(seed)
    fresh = rng.normal(size=run.X.shape)
    fresh = np.outer(G, theta) + fresh - np.outer(fresh @ theta, theta)
    outlier = aligned_outlier(M, G, delta)
    print(
        f"{activation} m={width} d={d} delta={delta} seed={seed}: theory edge "
        f"{weighted_lower_edge(M, delta):.4f}, outlier {outlier}",
        flush=True,
    )
    for name, X in (("real design", run.X), ("fresh xi", fresh)):
        values, overlaps = spectrum(X)
        print(f"  {name}: {np.round(values, 4)} overlaps {np.round(overlaps, 2)}")


def crossing(rows, key, grid):
    rates = [np.mean([r[key] for r in rows if r["delta"] == delta]) for delta in grid]
    value = rate_crossing(grid, rates)
    return value, rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--activation", default="quadratic", choices=sorted(GRIDS))
    parser.add_argument("--widths", type=int, nargs="+", default=[4])
    parser.add_argument("--dims", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--grid", type=float, nargs="+", default=None)
    parser.add_argument("--pooled", type=int, default=0)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--resampled", action="store_true", help="only resampled_check per cell"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    grid = tuple(args.grid or GRIDS[args.activation])
    if args.resampled:
        for width in args.widths:
            for d in args.dims:
                for delta in grid:
                    for seed in range(args.seeds):
                        resampled_check(args.activation, width, d, delta, seed)
        return
    rows = []
    for width in args.widths:
        for d in args.dims:
            start = time.perf_counter()
            cell = [
                one_run(args.activation, width, d, delta, seed)
                for delta in grid
                for seed in range(args.seeds)
            ]
            rows += cell
            if cell:
                theory, theory_rates = crossing(cell, "theory_found", grid)
                measured, measured_rates = crossing(cell, "outlier_found", grid)
                seconds = time.perf_counter() - start
                print(
                    f"{args.activation} m={width} d={d}: theory appears {theory:.2f}, "
                    f"measured delta_H {measured:.2f} "
                    f"({seconds:.0f} s; theory rates {np.round(theory_rates, 2)}, "
                    f"measured {np.round(measured_rates, 2)})",
                    flush=True,
                )
            if args.pooled:
                start = time.perf_counter()
                value = hessian_threshold(
                    args.activation,
                    width,
                    deltas=grid,
                    n_bisections=3,
                    n_features=d,
                    n_seeds=args.pooled,
                    random_state=args.first_seed,
                )
                seconds = time.perf_counter() - start
                print(
                    f"{args.activation} m={width} d={d} pooled x{args.pooled} "
                    f"seeds {args.first_seed}+ "
                    f"(d_eff={d * args.pooled}): hessian_threshold {value:.3f} "
                    f"({seconds:.0f} s)",
                    flush=True,
                )
    if args.out and rows:
        with open(args.out, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    print("RESULT: done")


if __name__ == "__main__":
    main()
