"""The medium reproductions on one H100, on paper: what each kind of cell
should take there, from its work counted here.

For one cell of each kind of ``--scale medium`` (two-step: a count cell at
every ``N``, an alignment cell at every ``d``; feature learning: the widest
GD cell at the middle ``delta`` of each activation and ``d``), this script
times the cell on this CPU (one thread) and counts, in the same run, its
matrix-product flops, operand bytes and aten ops (``_roofline.count``) and
the sizes of its symmetric eigendecompositions and SVDs (recorded by
wrapping ``torch.linalg`` and ``scipy.linalg.eigh``; their flops from the
textbook counts, Golub and Van Loan,
*Matrix Computations*, 4th ed., Sec. 8.3: ``4/3 n^3`` for eigenvalues alone,
``9 n^3`` with every eigenvector; an SVD as the eigendecomposition of its
Gram matrix plus the Gram's product). Work neither sees
(other NumPy and SciPy calls: the readout's RidgeCV, the Tracy--Widom fit, the
Hessian's ARPACK iterations outside its products) is in the CPU time and
not in the H100 limit.

The H100 limit of a cell is the largest of: its product flops over the
published FP64 or FP32 peak (the cell's precision), its bytes over the
published memory bandwidth, its aten ops times a launch floor
(``--launch-us``, an assumption, not a published figure), plus its
decompositions' flops at the FP64/FP32 peak. Published figures: NVIDIA
H100 Tensor Core GPU datasheet (SXM5): FP64 34 TFLOPS (67 with tensor
cores), FP32 67 TFLOPS, HBM3 3.35 TB/s. Eigensolvers run far below peak at
these sizes (the tridiagonal reduction is memory-bound and the solver's
host-side steps serialise), so the decomposition term is a floor: the
expected speed-up it gives is an upper bound.

Each cell's figures are multiplied by the number of medium tasks of its kind
(the same part and size) for the experiment's total. Run by hand (not in
CI; about two minutes on one CPU thread)::

    python benchmarks/gpu_reproductions_plan.py [--launch-us 5]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import Counter
from contextlib import contextmanager

import numpy as np
import torch
from _roofline import count

H100 = {
    "float64": 34e12,
    "float32": 67e12,
    "bandwidth": 3.35e12,
    "source": "NVIDIA H100 SXM5 datasheet: FP64 34, FP32 67 TFLOPS, 3.35 TB/s",
}
DECOMPOSITIONS = {
    "eigvalsh": 4.0 / 3.0,
    "eigh": 9.0,
    "svdvals": 4.0 / 3.0,
    "svd": 9.0,
    "scipy eigh": 4.0 / 3.0,  # an index range of eigenvectors: the reduction
    "numpy eigvalsh": 4.0 / 3.0,
}
"""Decomposition -> flops per ``n^3`` of its matrix's smaller dimension."""


@contextmanager
def recorded_decompositions():
    """Within it, every ``torch.linalg`` eigendecomposition or SVD and every
    ``scipy.linalg.eigh`` of the weight spectra and ``numpy.linalg.eigvalsh``
    is recorded, as ``(name, m,
    n)`` in the Counter it yields (wrappers around the functions; a dispatch
    mode cannot tell ``eigvalsh`` from ``eigh``, and never sees SciPy)."""
    from sklearn_pt.spectral import _weights

    seen: Counter = Counter()

    def wrap(owner, attribute, name):
        function = getattr(owner, attribute)

        def recorded(matrix, *args, **kwargs):
            seen[(name, *matrix.shape[-2:])] += 1
            return function(matrix, *args, **kwargs)

        return owner, attribute, function, recorded

    names = ("eigvalsh", "eigh", "svdvals", "svd")
    patches = [wrap(torch.linalg, name, name) for name in names]
    patches.append(wrap(_weights, "eigh", "scipy eigh"))
    patches.append(wrap(np.linalg, "eigvalsh", "numpy eigvalsh"))
    for owner, attribute, _, recorded in patches:
        setattr(owner, attribute, recorded)
    try:
        yield seen
    finally:
        for owner, attribute, function, _ in patches:
            setattr(owner, attribute, function)


def decomposition_flops(seen: Counter) -> float:
    """Textbook flops of the recorded decompositions (an SVD of ``m x n``
    also forms its ``min(m, n)`` Gram matrix, ``2 m n min(m, n)``)."""
    total = 0.0
    for (name, m, n), times in seen.items():
        small, large = min(m, n), max(m, n)
        flops = DECOMPOSITIONS[name] * small**3
        if name.startswith("svd"):
            flops += 2.0 * large * small**2
        total += times * flops
    return total


def _cells():
    """``(experiment, label, config, tasks, dtype)`` per kind of medium cell."""
    from sklearn_pt.experiments import EXPERIMENTS

    two_step = EXPERIMENTS["two-step"]
    preset = dict(two_step.presets["medium"])
    grid, seeds = preset.pop("grid"), preset.pop("seeds")
    kinds = Counter()
    for cell in grid:
        kinds[(cell["part"], cell["d"])] += cell.get("seeds", seeds)
    for (part, d), tasks in sorted(kinds.items()):
        cell = next(
            c
            for c in grid
            if c["part"] == part
            and c["d"] == d
            and c.get("activation") in ("sincos", "tanh")
            and c["batch"] == "reuse"
        )
        dtype = "float64" if part == "count" else preset["alignment_dtype"]
        config = {**preset, **cell, "device": "cpu"}
        yield two_step, f"{part} d={d}", config, tasks, dtype

    learning = EXPERIMENTS["feature-learning"]
    preset = dict(learning.presets["medium"])
    grid, seeds = preset.pop("grid"), preset.pop("seeds")
    gd = [c for c in grid if c["init"] == "random"]
    kinds = Counter((c["method"], c["d"]) for c in gd)
    for (method, d), n_cells in sorted(kinds.items()):
        cells = [c for c in gd if c["method"] == method and c["d"] == d]
        width = max(c["width"] for c in cells)
        deltas = sorted({c["delta"] for c in cells})
        middle = deltas[len(deltas) // 2]
        cell = next(c for c in cells if c["width"] == width and c["delta"] == middle)
        config = {**preset, **cell, "device": "cpu"}
        label = f"{method} d={d} (m={width}, delta={middle:g})"
        yield learning, label, config, n_cells * seeds, "float64"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launch-us", type=float, default=5.0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    launch = args.launch_us * 1e-6
    print(f"H100 on paper: {H100['source']}; {args.launch_us:g} us per aten op")
    header = (
        f"{'cell':38s} {'tasks':>5s} {'CPU s':>7s} {'GFLOP':>8s} {'dec GFLOP':>9s} "
        f"{'GB':>7s} {'ops':>7s} {'H100 ms':>8s} {'speed-up':>8s}"
    )
    print(header)
    totals: dict[str, list[float]] = {}
    for experiment, label, config, tasks, dtype in _cells():
        experiment.measure(config, 0)  # warm-up
        start = time.perf_counter()
        experiment.measure(config, 0)
        cpu = time.perf_counter() - start
        with recorded_decompositions() as seen:
            counts, _ = count(lambda e=experiment, c=config: e.measure(c, 0))
        decomposition = decomposition_flops(seen)
        limit = max(
            counts.flops / H100[dtype],
            counts.bytes / H100["bandwidth"],
            counts.n_ops * launch,
        )
        limit += decomposition / H100[dtype]
        print(
            f"{label:38s} {tasks:5d} {cpu:7.2f} {counts.flops / 1e9:8.1f} "
            f"{decomposition / 1e9:9.1f} {counts.bytes / 1e9:7.2f} "
            f"{counts.n_ops:7d} {limit * 1e3:8.2f} {cpu / limit:7.0f}x"
        )
        total = totals.setdefault(experiment.name, [0.0, 0.0])
        total[0] += tasks * cpu
        total[1] += tasks * limit
    text = ", ".join(
        f"{name} {cpu:.0f} s of one CPU thread -> {gpu:.1f} s on paper "
        f"({cpu / gpu:.0f}x)"
        for name, (cpu, gpu) in totals.items()
    )
    print(f"RESULT: medium on one H100, the counted cells times their tasks: {text}")


if __name__ == "__main__":
    main()
