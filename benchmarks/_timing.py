"""Interleaved wall-clock timing and the result table of the benchmarks.

Every benchmark compares methods measured in one process: repeat by repeat,
each method runs once in turn (so a slower phase of a shared machine hits all
of them), and the table reports each method's median against a reference
measured in the same run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch


def synchronize(device: str) -> None:
    """Wait for the queued GPU work of ``device`` (nothing on a CPU)."""
    if str(device).startswith("cuda") and torch.cuda.is_available():
        torch.cuda.synchronize()


def interleaved_medians(
    runs: dict[str, Callable[[], object]], *, repeats: int, device: str = "cpu"
) -> dict[str, float]:
    """The median wall time in seconds of each of ``runs``, run in turn
    ``repeats`` times (GPU work included)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            synchronize(device)
            start = time.perf_counter()
            run()
            synchronize(device)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(samples) for name, samples in times.items()}


def print_table(
    medians: dict[str, float], reference: str, *, speed_up: bool = True
) -> float:
    """Print each median and its speed-up over ``reference`` (``speed_up``)
    or its time as a multiple of the reference's; return the reference's."""
    width = max(len(name) for name in medians) + 2
    label = "speed-up" if speed_up else "ratio"
    print(f"{'method':{width}s} {'median s':>9s} {label:>9s}")
    base = medians[reference]
    for name, median in medians.items():
        ratio = base / median if speed_up else median / base
        print(f"{name:{width}s} {median:9.3f} {ratio:8.2f}x")
    return base
