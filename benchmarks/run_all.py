"""Run every benchmark quickly and print one summary table.

Runs each ``benchmarks/bench_*.py`` as a subprocess with ``--quick --device
DEVICE`` (capturing and echoing its output), then, with ``--device cuda``,
the GPU tests (``python -m pytest -m gpu -q``). The summary gives each one's
wall time and its key line: the last line of its output that starts with
``RESULT:`` (every benchmark prints one), or pytest's summary line. A
benchmark whose source has no ``--quick`` option is run without it (and
flagged). With ``--quick`` on a GPU machine the whole run is meant to take
under 5 minutes.

Run by hand (not in CI)::

    python benchmarks/run_all.py --device cuda [--quick] [--only bench_hessian]

The exit status is 1 when a benchmark or the GPU tests failed, timed out or
printed no ``RESULT:`` line, and 2 (before running anything) when
``--device cuda`` is asked for and torch sees no CUDA device.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPOSITORY = BENCHMARKS.parent
RESULT_PREFIX = "RESULT:"


@dataclass
class Outcome:
    """What one benchmark (or the GPU test run) gave."""

    name: str
    seconds: float
    ok: bool
    summary: str


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (asked in a subprocess, so that this
    script needs no torch import of its own)."""
    code = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def benchmark_scripts(only: list[str] | None = None) -> list[Path]:
    """The ``bench_*.py`` files next to this script, sorted (``only``: those
    whose stem is listed)."""
    scripts = sorted(BENCHMARKS.glob("bench_*.py"))
    if only:
        scripts = [s for s in scripts if s.stem in only]
    return scripts


def result_line(output: str) -> str | None:
    """The last line of ``output`` starting with ``RESULT:``, without it."""
    lines = [
        line[len(RESULT_PREFIX) :].strip()
        for line in output.splitlines()
        if line.startswith(RESULT_PREFIX)
    ]
    return lines[-1] if lines else None


def accepts_quick(script: Path) -> bool:
    """Whether the script defines a ``--quick`` option (read from its source,
    without importing it)."""
    return '"--quick"' in script.read_text()


def run_command(command: list[str], timeout: float) -> tuple[int | None, str, float]:
    """Run ``command`` from the repository root; return its exit status
    (``None`` on timeout), its stdout and stderr together, and the wall time."""
    start = time.perf_counter()
    # The benchmarks import sklearn_pt from this checkout, installed or not.
    path = os.pathsep.join(
        filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")])
    )
    try:
        completed = subprocess.run(
            command,
            cwd=REPOSITORY,
            env={**os.environ, "PYTHONPATH": path},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        status, output = completed.returncode, completed.stdout + completed.stderr
    except subprocess.TimeoutExpired as expired:
        status = None
        output = "".join(
            part.decode() if isinstance(part, bytes) else part or ""
            for part in (expired.stdout, expired.stderr)
        )
    return status, output, time.perf_counter() - start


def run_benchmark(script: Path, device: str, quick: bool, timeout: float) -> Outcome:
    command = [sys.executable, str(script), "--device", device]
    note = ""
    if quick and accepts_quick(script):
        command.append("--quick")
    elif quick:
        note = " [no --quick option: ran in full]"
    status, output, seconds = run_command(command, timeout)
    print(f"===== {script.name} ({seconds:.1f} s) =====\n{output}", flush=True)
    result = result_line(output)
    if status is None:
        return Outcome(script.stem, seconds, False, f"TIMED OUT after {timeout:g} s")
    if status != 0:
        last = output.strip().splitlines()[-1:] or [""]
        return Outcome(script.stem, seconds, False, f"FAILED ({status}): {last[0]}")
    if result is None:
        return Outcome(script.stem, seconds, False, f"no RESULT: line{note}")
    return Outcome(script.stem, seconds, True, result + note)


def run_gpu_tests(timeout: float) -> Outcome:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-m",
        "gpu",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    status, output, seconds = run_command(command, timeout)
    print(f"===== pytest -m gpu ({seconds:.1f} s) =====\n{output}", flush=True)
    lines = output.strip().splitlines() or [""]
    if status is None:
        return Outcome(
            "pytest -m gpu", seconds, False, f"TIMED OUT after {timeout:g} s"
        )
    # pytest exits 5 when every test was deselected: there is nothing to fail.
    ok = status in (0, 5)
    return Outcome("pytest -m gpu", seconds, ok, lines[-1].strip("= "))


def print_summary(outcomes: list[Outcome], device: str, total: float) -> None:
    width = max(len(o.name) for o in outcomes)
    print(f"\n===== summary (device={device}, {total:.0f} s in total) =====")
    print(f"{'benchmark':{width}s} {'wall s':>7s}  key result")
    for outcome in outcomes:
        flag = "" if outcome.ok else "!! "
        print(
            f"{outcome.name:{width}s} {outcome.seconds:7.1f}  {flag}{outcome.summary}"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument(
        "--quick", action="store_true", help="pass --quick to every benchmark"
    )
    parser.add_argument(
        "--only", nargs="*", default=None, help="benchmark names (file stems) to run"
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per benchmark"
    )
    args = parser.parse_args(argv)
    if args.device == "cuda" and not cuda_available():
        print(
            "--device cuda: no CUDA device is visible to torch here "
            "(torch.cuda.is_available() is False); run on a GPU machine, or "
            "use --device cpu."
        )
        return 2
    start = time.perf_counter()
    outcomes = [
        run_benchmark(script, args.device, args.quick, args.timeout)
        for script in benchmark_scripts(args.only)
    ]
    if args.device == "cuda":
        outcomes.append(run_gpu_tests(args.timeout))
    if not outcomes:
        print("No benchmark matched --only.")
        return 1
    print_summary(outcomes, args.device, time.perf_counter() - start)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
