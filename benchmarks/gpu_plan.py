"""The H200 roofline on paper, for the three stacked benchmarks.

Counts (on this machine, without timing) the product flops, the operand
bytes and the aten ops of the stacked and the sequential strategy of
``bench_sweep``, ``bench_sample_ratio`` and ``bench_two_step_grid`` at their
default sizes (``_roofline.count``), then gives each strategy's limit on one
H200 SXM from its published figures (NVIDIA H200 datasheet: FP32 67 TFLOPS
without tensor cores, HBM3e 4.8 TB/s) and from a launch floor: eager PyTorch
issues one kernel per aten op, and each costs at least ``--launch-us``
microseconds of host time (an assumption, not a published figure: 5 us is a
typical eager dispatch-plus-launch cost on a fast host). The expected
speed-up of stacking on the GPU is the ratio of the two strategies' limits.
``run_all.py --device cuda --quick`` measures what these predict.

Run by hand (not in CI; about a minute on one CPU thread)::

    OMP_NUM_THREADS=1 python benchmarks/gpu_plan.py [--launch-us 5] [--quick]
"""

from __future__ import annotations

import argparse
import warnings
from functools import partial

import numpy as np
from _roofline import H200, count

import sklearn_pt.nn._stacked as stacked_modules

# Count the stacked step as it runs on a GPU: all networks at once, not in the
# cache-sized blocks of a CPU (which take more, smaller ops).
stacked_modules.CACHE_BLOCK_BYTES = None


def sweep_runs(quick: bool):
    from bench_sweep import N_PROPORTIONS, N_SAMPLES, make_data, sweep
    from sklearn.model_selection import KFold

    X, y = make_data(N_SAMPLES)
    proportions = np.linspace(0.0, 1.0, N_PROPORTIONS)
    cv = KFold(2, shuffle=True, random_state=0)
    common = (X, y, proportions, cv, 3 if quick else 10, "cpu", 512)
    return partial(sweep, "stacked", *common), partial(sweep, "sequential", *common)


def sample_ratio_runs(quick: bool):
    from bench_sample_ratio import sweep

    common = dict(
        d=200,
        width=4,
        max_iter=50 if quick else 200,
        n_repeats=8,
        device="cpu",
        dtype="float32",
    )
    return partial(sweep, "stacked", **common), partial(sweep, "sequential", **common)


def two_step_runs(quick: bool):
    from bench_two_step_grid import always_stacked, cells, sequential

    from sklearn_pt.datasets import make_single_index

    size = 150 if quick else 400
    X, y = make_single_index(2 * size, size, random_state=0)
    X, y = X.astype(np.float32), y.astype(np.float32)
    return (
        lambda: always_stacked(cells(size, "cpu", "float32"), X, y),
        lambda: sequential(cells(size, "cpu", "float32"), X, y),
    )


BENCHMARKS = {
    "bench_sweep": sweep_runs,
    "bench_sample_ratio": sample_ratio_runs,
    "bench_two_step_grid": two_step_runs,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launch-us", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    limits = H200["fp32"]
    launch = args.launch_us * 1e-6
    print(
        f"H200 SXM on paper: {limits.flops_per_s / 1e12:.0f} TFLOP/s FP32, "
        f"{limits.bytes_per_s / 1e12:.1f} TB/s, {args.launch_us:g} us per aten op"
    )
    print(
        f"{'benchmark':20s} {'strategy':10s} {'GFLOP':>7s} {'GB':>6s} {'ops':>7s} "
        f"{'flop ms':>8s} {'byte ms':>8s} {'launch ms':>9s} {'limit ms':>8s}"
    )
    ratios = {}
    for name, make in BENCHMARKS.items():
        stacked, sequential = make(args.quick)
        limit = {}
        for strategy, fn in (("stacked", stacked), ("sequential", sequential)):
            fn()  # warm-up: first-call costs are not counted twice
            counts, _ = count(fn)
            times = (
                counts.flops / limits.flops_per_s,
                counts.bytes / limits.bytes_per_s,
                counts.n_ops * launch,
            )
            limit[strategy] = max(times)
            print(
                f"{name:20s} {strategy:10s} {counts.flops / 1e9:7.2f} "
                f"{counts.bytes / 1e9:6.2f} {counts.n_ops:7d} "
                + " ".join(f"{t * 1e3:8.2f}" for t in times)
                + f" {limit[strategy] * 1e3:9.2f}"
            )
        ratios[name] = limit["sequential"] / limit["stacked"]
    text = ", ".join(f"{name} {ratio:.1f}x" for name, ratio in ratios.items())
    print(f"RESULT: expected stacked speed-up on one H200 (on paper): {text}")


if __name__ == "__main__":
    main()
