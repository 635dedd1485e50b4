"""Stacked sample-ratio sweep against one fit per run.

One finite-size sweep of Montanari and Wang's phase retrieval: d=200,
``FirstLayerGDRegressor`` of width 4 (quadratic activation, step size
``0.0375 * width`` as in ``reproduce feature-learning``), 8 seeds x 8 sample
ratios delta in [1, 6] (the quadratic method's grid), ``--max-iter``
full-batch GD steps. Timed, in one process and interleaved repeat by repeat:

* ``sequential``: ``sample_ratio_curve(strategy="sequential")``, the
  reference (one ``fit`` per delta and seed);
* ``stacked``: ``sample_ratio_curve(strategy="stacked")`` (one stacked
  gradient descent per delta, its seeds together).

It checks first that the two give the same overlaps (float64, to rounding),
then prints the median wall time of each and the speed-up, then the roofline
of both (``_roofline.py``: products and operand bytes counted in one more
run, this machine's limits for them measured now). On CPU both are
bound by the two products with the inputs per step (``X W^T`` and
``(dL/dZ)^T X``, about 0.13 ms per model and step at the mean n = 700): the
stacked sweep removes the per-step overhead of autograd and the optimiser,
not that arithmetic, so its speed-up is at most about
``sequential / (compute alone)``. Stacking the deltas too (rows padded to the
largest n) would add arithmetic on a CPU; it is left for GPU runs.

Run by hand (not in CI)::

    OMP_NUM_THREADS=1 python benchmarks/bench_sample_ratio.py [--device cpu]
        [--repeats 3] [--max-iter 200] [--quick]
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import torch
from _roofline import report
from _timing import interleaved_medians, print_table

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.model_selection import sample_ratio_curve
from sklearn_pt.neural_network import FirstLayerGDRegressor

DELTAS = np.linspace(1.0, 6.0, 8)
AGREEMENT_ATOL = 1e-8


def sweep(strategy, *, d, width, max_iter, n_repeats, device, dtype):
    estimator = FirstLayerGDRegressor(
        hidden_layer_sizes=width,
        activation="quadratic",
        learning_rate_init=0.0375 * width,
        max_iter=max_iter,
        device=device,
        dtype=dtype,
    )
    return sample_ratio_curve(
        estimator,
        partial(make_phase_retrieval, return_directions=True),
        deltas=DELTAS,
        n_features=d,
        n_repeats=n_repeats,
        strategy=strategy,
        random_state=0,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--d", type=int, default=200)
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--max-iter", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.max_iter, args.repeats = 50, 1
    common = dict(
        d=args.d,
        width=args.width,
        max_iter=args.max_iter,
        n_repeats=args.seeds,
        device=args.device,
    )
    print(
        f"{len(DELTAS)} deltas x {args.seeds} seeds, d={args.d}, width "
        f"{args.width}, {args.max_iter} GD steps, device={args.device}, torch "
        f"threads={torch.get_num_threads()}"
    )
    checks = {s: sweep(s, dtype="float64", **common) for s in ("sequential", "stacked")}
    gap = np.abs(checks["stacked"].overlaps - checks["sequential"].overlaps).max()
    print(f"max |overlap stacked - sequential| (float64) = {gap:.2e}")
    if not gap <= AGREEMENT_ATOL:
        raise SystemExit("the stacked and sequential sweeps disagree")
    runs = {
        strategy: partial(sweep, strategy, dtype="float32", **common)
        for strategy in ("sequential", "stacked")
    }
    medians = interleaved_medians(runs, repeats=args.repeats, device=args.device)
    speedup = print_table(medians, "sequential") / medians["stacked"]
    fractions = report(
        runs, medians, args.device, steps={"stacked": len(DELTAS) * args.max_iter}
    )
    print(
        f"RESULT: stacked sample_ratio_curve {speedup:.2f}x faster than sequential "
        f"({args.device}, float32); roofline fraction stacked "
        f"{fractions['stacked']:.0%}, sequential {fractions['sequential']:.0%}"
    )


if __name__ == "__main__":
    main()
