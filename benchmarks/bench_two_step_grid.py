"""A grid of two-step fits, stacked, against one fit per cell.

A 4 x 4 grid (step-size exponents ``(a, a)`` for ``a`` in 0, 0.15, 0.3,
0.45, times 4 seeds) of ``TwoStepFeatureLearner`` at ``N = n = d``
(``--size``, default 400; float32, gelu, reused batch, ``alpha=1``),
timed in one process and interleaved repeat by repeat:

* ``sequential``: ``fit`` of every cell, the reference;
* ``stacked``: ``fit_stacked`` with its steps stacked at every size
  (the gradient steps of all cells as one stacked computation; the spectra
  and readouts per cell, as in ``fit``);
* ``auto``: ``fit_stacked`` as it is, choosing by its size rule
  (``stacked_is_faster``: on a CPU, stacked up to ``N * d = 200 * 200``,
  else one fit per cell), so never much slower than ``sequential``.

It checks first (float64, a smaller size) that both give the same weights.
On a CPU both are bound by the products with the data, so expect a ratio
near 1 there; the stacked steps are meant for a GPU (``--device cuda``). It
then prints the roofline of both (``_roofline.py``).

Run by hand (not in CI)::

    OMP_NUM_THREADS=1 python benchmarks/bench_two_step_grid.py [--size 400] \
        [--repeats 3] [--device cpu] [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from _roofline import report
from _timing import interleaved_medians, print_table
from sklearn.base import clone

from sklearn_pt.datasets import make_single_index
from sklearn_pt.feature_extraction import _two_step_plan
from sklearn_pt.model_selection import fit_stacked
from sklearn_pt.neural_network import TwoStepFeatureLearner

EXPONENTS = (0.0, 0.15, 0.3, 0.45)
SEEDS = (0, 1, 2, 3)


def cells(size, device, dtype):
    template = TwoStepFeatureLearner(
        hidden_layer_sizes=size, alpha=1.0, device=device, dtype=dtype
    )
    return [
        clone(template).set_params(step_size_exponents=(a, a), random_state=s)
        for a in EXPONENTS
        for s in SEEDS
    ]


def sequential(grid, X, y):
    return [cell.fit(X, y) for cell in grid]


def always_stacked(grid, X, y):
    """``fit_stacked`` with its steps stacked at every size (its
    size rule, ``stacked_is_faster``, switched off)."""
    rule = _two_step_plan.CPU_STACKED_MAX_WEIGHTS
    _two_step_plan.CPU_STACKED_MAX_WEIGHTS = float("inf")
    try:
        return fit_stacked(grid, X, y)
    finally:
        _two_step_plan.CPU_STACKED_MAX_WEIGHTS = rule


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.repeats = 150, 1
    print(
        f"{len(EXPONENTS)} x {len(SEEDS)} grid, N = n = d = {args.size}, "
        f"device={args.device}, torch threads={torch.get_num_threads()}"
    )
    X, y = make_single_index(2 * 60, 60, random_state=0)
    stacked = always_stacked(cells(60, args.device, "float64"), X, y)
    alone = sequential(cells(60, args.device, "float64"), X, y)
    gap = max(
        np.abs(a.first_layer_weights_[-1] - b.first_layer_weights_[-1]).max()
        for a, b in zip(stacked, alone, strict=True)
    )
    print(f"max |W stacked - W sequential| (float64, N = 60) = {gap:.1e}")
    if not gap <= 1e-10:
        raise SystemExit("the stacked and sequential fits disagree")

    X, y = make_single_index(2 * args.size, args.size, random_state=0)
    X, y = X.astype(np.float32), y.astype(np.float32)
    runs = {
        name: lambda fit=fit: fit(cells(args.size, args.device, "float32"), X, y)
        for name, fit in (
            ("sequential", sequential),
            ("stacked", always_stacked),
            ("auto", fit_stacked),
        )
    }
    stacks = _two_step_plan.stacked_is_faster(args.device, args.size, args.size)
    print(f"fit_stacked's rule at this size: stacked={stacks}")
    medians = interleaved_medians(runs, repeats=args.repeats, device=args.device)
    base = print_table(medians, "sequential")
    fractions = report(
        {name: runs[name] for name in ("sequential", "stacked")}, medians, args.device
    )
    print(
        f"RESULT: two-step grid: stacked steps {base / medians['stacked']:.2f}x, "
        f"fit_stacked (its size rule chose stacked={stacks}) "
        f"{base / medians['auto']:.2f}x faster than sequential ({args.device}); "
        f"roofline fraction stacked {fractions['stacked']:.0%}, sequential "
        f"{fractions['sequential']:.0%}"
    )


if __name__ == "__main__":
    main()
