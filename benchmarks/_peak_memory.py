"""Time and peak memory of one call, measured in a fresh Python process.

Shared by the benchmarks that report memory (``bench_hessian.py``,
``bench_memory.py``). torch's CPU allocations are invisible to
``tracemalloc``, so the peak is the resident set's high-water mark
(``ru_maxrss``) above the resident set just before the call; it is exact
when the call sets a new high-water mark and an upper bound otherwise, hence
one fresh process per measurement. On CUDA the peak of
``torch.cuda.max_memory_allocated`` is reported too.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence


def current_rss_mib() -> float:
    """Resident set size of this process now, from ``/proc/self/statm``."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mib() -> float:
    """High-water mark of the resident set (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_call(call: Callable[[], object], device: str) -> tuple[object, dict]:
    """Run ``call()`` once; its result and ``seconds``, ``baseline_mib`` (the
    resident set before), ``rss_mib`` (peak above it), ``rss_exact`` and
    ``gpu_mib`` (None off CUDA)."""
    import torch

    cuda = device.startswith("cuda")
    if cuda:  # create the CUDA context (hundreds of MiB of RSS) before the baseline
        torch.zeros(1, device=device)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        gpu_before = torch.cuda.memory_allocated()
    rss_before, peak_before = current_rss_mib(), peak_rss_mib()
    start = time.perf_counter()
    result = call()
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak_after = peak_rss_mib()
    return result, {
        "seconds": seconds,
        "baseline_mib": rss_before,
        "rss_mib": peak_after - rss_before,
        "rss_exact": peak_after > peak_before,
        "gpu_mib": (torch.cuda.max_memory_allocated() - gpu_before) / 2**20
        if cuda
        else None,
    }


def run_worker(script: str, arguments: Sequence[str]) -> dict:
    """Run ``script --worker <arguments>`` in a fresh interpreter and parse the
    JSON object its last output line holds."""
    command = [sys.executable, script, "--worker", *arguments]
    output = subprocess.run(command, capture_output=True, text=True, check=False)
    if output.returncode != 0:
        raise RuntimeError(
            f"worker {' '.join(arguments)} failed:\n{output.stdout}\n{output.stderr}"
        )
    return json.loads(output.stdout.strip().splitlines()[-1])
