"""Where the reproductions spend their time: wall time per experiment, and a profile.

Without ``--profile``, runs each experiment of ``sklearn-pt reproduce`` at
``--scale`` over ``--n-jobs`` workers (the CLI's default: the available
cores, at most 8), each in a fresh
process, and prints one row per experiment: wall seconds, peak resident
memory of the main process, the peaks of its process tree's (main process
and joblib workers) summed resident and proportional sets (``/proc``,
sampled every second; the proportional set splits each shared page
between the processes mapping it, so its sum is the memory the run holds)
and the verdict words. With ``--profile``, runs
them in one process with ``n_jobs=1`` under :mod:`cProfile` and prints, per
experiment, the cumulative seconds of the parts issue 41 names (fits, exact
two-step steps, singular values, edge tests, Hessian eigenpairs, kernel
solves, the statistics, writing and drawing). The parts nest (a fit may
compute a Hessian), so they do not sum to the total.

Run by hand (not in CI), with torch on one thread per worker::

    python benchmarks/profile_reproductions.py --scale medium
    python benchmarks/profile_reproductions.py --scale small --profile --only two-step
    python benchmarks/profile_reproductions.py --only two-step --vs 476f088

With ``--vs COMMIT``, each experiment runs at that commit (a temporary git
worktree, imported through ``PYTHONPATH``) and then at the working tree,
one after the other in the same session, and the table gives both wall
times, their ratio and whether the verdict words agree.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sklearn_pt._cli import default_n_jobs

CHECKOUT = Path(__file__).resolve().parent.parent
"""The checkout this script belongs to: the "working tree" side of ``--vs``."""

PARTS = {
    "fits (training loop)": ("sklearn_pt/_training/_loop.py", "fit_loop"),
    "stacked fits": ("sklearn_pt/_training/_plan.py", "run_stacked"),
    "two-step steps": (
        "sklearn_pt/feature_extraction/_two_step_plan.py",
        "plan_two_steps",
    ),
    "singular values": ("sklearn_pt/spectral/_weights.py", "fit"),
    "edge tests": ("sklearn_pt/spectral/_weights.py", "soft_edge_test"),
    "Hessian eigenpairs": ("sklearn_pt/spectral/_hessian.py", "hessian_spectrum"),
    "kernel solves": ("sklearn_pt/kernels/", ""),
    "statistics": ("sklearn_pt/experiments/_stats.py", ""),
    "judging": ("sklearn_pt/experiments/_runner.py", "judge"),
    "writing and drawing": ("sklearn_pt/experiments/_runner.py", "write"),
}
"""Part name -> (file suffix, function name; "" for every function of the file)."""


def _experiment_names(only: list[str] | None) -> list[str]:
    from sklearn_pt.experiments import EXPERIMENTS

    return [name for name in EXPERIMENTS if not only or name in only]


def _time_one(
    name: str, scale: str, n_jobs: int | None, out: Path, root: Path | None = None
) -> dict:
    """Run one experiment in a fresh process (importing the library from
    ``root`` when given, else from this checkout); its wall time, the peak
    resident memory of that process (its joblib workers not included) and
    its verdict words.

    The process starts in the tree it measures: ``python -c`` puts the
    current directory first on ``sys.path``, before ``PYTHONPATH``, so a
    process started in this checkout imports this checkout's library
    whatever ``PYTHONPATH`` says. It prints the file it imported, and the
    run fails unless that file lies in the tree measured."""
    code = (
        "import json, sys, torch\n"
        "from sklearn_pt import config_context\n"
        "from sklearn_pt.experiments import EXPERIMENTS, run\n"
        f"with config_context(torch_threads=1):\n"
        f"    result = run(EXPERIMENTS[{name!r}], scale={scale!r}, n_jobs={n_jobs!r},"
        " progress=False)\n"
        f"result.write({str(out)!r})\n"
        "import resource\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "import sklearn_pt\n"
        "print(json.dumps([peak, [v.word for v in result.verdicts], "
        "sklearn_pt.__file__]))\n"
    )
    start = time.perf_counter()
    tree = Path(root) if root is not None else CHECKOUT
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=stdout,
            stderr=err,
            text=True,
            env=env,
            cwd=tree,
        )
        memory = _peak_tree_memory(process)
        seconds = time.perf_counter() - start
        stdout.seek(0), err.seek(0)
        done = subprocess.CompletedProcess(
            process.args, process.returncode, stdout.read(), err.read()
        )
    if done.returncode:
        error = done.stderr.strip().splitlines()[-1:]
        return {
            "name": name,
            "seconds": seconds,
            "rss_mib": 0.0,
            "words": None,
            "error": error,
            **memory,
        }
    peak, words, imported = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(imported).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(
            f"{name}: the run imported {imported}, not the library of {tree}"
        )
    return {
        "name": name,
        "seconds": seconds,
        "rss_mib": peak,
        "words": words,
        **memory,
    }


def _tree_pids(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux ``/proc``), the joblib workers
    among them."""
    pids, stack = [], [pid]
    while stack:
        current = stack.pop()
        pids.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as children:
                    stack.extend(int(child) for child in children.read().split())
            except OSError:
                continue
    return pids


def _memory_mib(pid: int) -> tuple[float, float]:
    """``(Rss, Pss)`` of one process in MiB (``/proc/PID/smaps_rollup``);
    zeros once it has ended."""
    values = {"Rss:": 0.0, "Pss:": 0.0}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                key, *rest = line.split()
                if key in values:
                    values[key] = int(rest[0]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return values["Rss:"], values["Pss:"]


def _peak_tree_memory(process: subprocess.Popen, every: float = 1.0) -> dict:
    """Wait for ``process``, sampling its process tree every ``every``
    seconds: the peaks of the summed resident sets (``tree_rss_mib``, shared
    pages counted once per process) and of the summed proportional sets
    (``tree_pss_mib``, each shared page split between the processes mapping
    it: the memory the run holds). Linux only; zeros elsewhere."""
    peak_rss = peak_pss = 0.0
    while process.poll() is None:
        sizes = [_memory_mib(pid) for pid in _tree_pids(process.pid)]
        peak_rss = max(peak_rss, sum(rss for rss, _ in sizes))
        peak_pss = max(peak_pss, sum(pss for _, pss in sizes))
        time.sleep(every)
    return {"tree_rss_mib": peak_rss, "tree_pss_mib": peak_pss}


def _parts(stats: pstats.Stats) -> dict[str, float]:
    """Cumulative seconds per part: the largest cumulative time among the
    functions of the part (a function and its recursive calls counted once)."""
    seconds = dict.fromkeys(PARTS, 0.0)
    for (filename, _, function), (_, _, _, cumulative, _) in stats.stats.items():
        path = filename.replace("\\", "/")
        for part, (suffix, name) in PARTS.items():
            if suffix in path and (not name or function == name):
                seconds[part] = max(seconds[part], cumulative)
    return seconds


def _hot_functions(stats: pstats.Stats, count: int = 8) -> list[tuple[str, float]]:
    """The library's functions with the largest cumulative time below
    :func:`run` (the runner's own frames left out): where to look next."""
    rows = []
    for (filename, line, function), (_, _, _, cumulative, _) in stats.stats.items():
        path = filename.replace("\\", "/")
        if "sklearn_pt/" in path and "/experiments/_runner.py" not in path:
            where = path.split("sklearn_pt/", 1)[1]
            rows.append((f"{where}:{line} {function}", cumulative))
    return sorted(rows, key=lambda row: -row[1])[:count]


def _profile_one(name: str, scale: str, out: Path) -> tuple[float, dict, list]:
    from sklearn_pt import config_context
    from sklearn_pt.experiments import EXPERIMENTS, run

    profiler = cProfile.Profile()
    start = time.perf_counter()
    with config_context(torch_threads=1):
        profiler.enable()
        result = run(EXPERIMENTS[name], scale=scale, n_jobs=1, progress=False)
        result.write(out)
        profiler.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(profiler)
    return total, _parts(stats), _hot_functions(stats)


@contextlib.contextmanager
def _worktree(commit: str):
    """A temporary detached git worktree of ``commit``, removed on exit."""
    with tempfile.TemporaryDirectory() as parent:
        path = Path(parent) / "worktree"
        git = ["git", "-C", str(Path(__file__).resolve().parent)]
        add = ["worktree", "add", "-q", "--detach", str(path), commit]
        subprocess.run([*git, *add], check=True)
        try:
            yield path
        finally:
            remove = ["worktree", "remove", "--force", str(path)]
            subprocess.run([*git, *remove], check=False)


def _compare(names, scale: str, n_jobs: int | None, commit: str, out: Path) -> int:
    """Time each experiment at ``commit``, then at the working tree."""
    with _worktree(commit) as root:
        pairs = [
            (_time_one(n, scale, n_jobs, out, root), _time_one(n, scale, n_jobs, out))
            for n in names
        ]
    print(
        f"{'experiment':<24} {commit[:10]:>10} {'now':>8} {'ratio':>6} "
        f"{'PSS MiB':>13}  verdicts"
    )
    for old, new in pairs:
        same = old["words"] == new["words"] and new["words"] is not None
        ratio = old["seconds"] / new["seconds"]
        pss = f"{old['tree_pss_mib']:.0f}->{new['tree_pss_mib']:.0f}"
        print(
            f"{new['name']:<24} {old['seconds']:9.1f}s {new['seconds']:7.1f}s "
            f"{ratio:6.2f} {pss:>13}  {'equal' if same else 'DIFFER'}: "
            f"{old['words']} -> {new['words']}"
        )
    old, new = (sum(pair[i]["seconds"] for pair in pairs) for i in (0, 1))
    print(f"RESULT: {scale} total {old:.1f} s -> {new:.1f} s ({old / new:.2f}x)")
    return 0 if all(new["words"] for _, new in pairs) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="medium")
    parser.add_argument("--only", nargs="*", help="experiment names")
    parser.add_argument("--n-jobs", type=int, default=default_n_jobs())
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--vs", metavar="COMMIT", help="time this commit too")
    args = parser.parse_args(argv)
    names = _experiment_names(args.only)
    with tempfile.TemporaryDirectory() as out:
        if args.vs:
            return _compare(names, args.scale, args.n_jobs, args.vs, Path(out))
        if args.profile:
            for name in names:
                total, parts, hot = _profile_one(name, args.scale, Path(out))
                print(f"\n{name} at {args.scale}, n_jobs=1: {total:.1f} s")
                for part, seconds in sorted(parts.items(), key=lambda p: -p[1]):
                    if seconds:
                        print(f"  {part:<22} {seconds:8.1f} s  {seconds / total:6.1%}")
                print("  largest cumulative times in the library:")
                for where, seconds in hot:
                    print(f"    {seconds:8.1f} s  {where}")
            print(f"RESULT: profiled {len(names)} experiments at {args.scale}")
            return 0
        rows = [_time_one(n, args.scale, args.n_jobs, Path(out)) for n in names]
    print(
        f"{'experiment':<24} {'wall s':>8} {'main MiB':>9} {'tree RSS':>9} "
        f"{'tree PSS':>9}  verdicts"
    )
    for row in rows:
        words = ", ".join(row["words"]) if row["words"] else f"FAILED {row['error']}"
        print(
            f"{row['name']:<24} {row['seconds']:8.1f} {row['rss_mib']:9.0f} "
            f"{row['tree_rss_mib']:9.0f} {row['tree_pss_mib']:9.0f}  {words}"
        )
    total = sum(row["seconds"] for row in rows)
    print(f"RESULT: {args.scale} total {total:.1f} s over {len(rows)} experiments")
    return 0 if all(row["words"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
