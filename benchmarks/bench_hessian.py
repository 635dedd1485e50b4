"""Hessian spectrum: Lanczos on Hessian-vector products against dense ``eigh``.

For a :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor` of width
``m`` on phase-retrieval data in ``d = 100`` (``n = 1000`` samples, float64,
fitted for a few GD steps) with ``m * d`` trained parameters in
``{1000, 4000, 16000}``, this times
:func:`sklearn_pt.spectral.hessian_spectrum` with

* ``method="dense"``: the reference, the full Hessian (batched double
  backward) and :func:`scipy.linalg.eigh`;
* ``method="lanczos"``: ARPACK on Hessian-vector products,

both for the ``K`` extreme eigenvalues (``which="both"``, half from each end),
and measures their peak memory. Each measurement runs in a fresh Python
process: the peak resident set (``ru_maxrss``) above the resident set just
before the call (torch's CPU allocations are invisible to ``tracemalloc``),
and on CUDA also ``torch.cuda.max_memory_allocated``. It prints the median
time, the peak memory, the speed-up of Lanczos and the largest difference of
the eigenvalues, relative to the spectral norm.

Run by hand (not in CI)::

    python benchmarks/bench_hessian.py [--repeats 3] [--device cpu] [--quick] \
        [--params 1000 4000 16000] [--dense-max 4000]

The dense reference is skipped above ``--dense-max`` (default 4000: at 16000
parameters one copy of the Hessian is 2 GiB and ``eigh`` alone takes about
64 times as long as at 4000, over 10 minutes on one CPU thread).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import warnings

from _peak_memory import measure_call, run_worker

N_FEATURES, N_SAMPLES, FIT_ITERATIONS, K = 100, 1000, 10, 6
PARAMS, QUICK_PARAMS = (1000, 4000, 16000), (1000, 4000)
TARGET_SPEEDUP, TARGET_FROM = 10.0, 4000
DENSE_MAX = 4000
METHODS = ("dense", "lanczos")


def measure(n_params: int, method: str, device: str) -> dict:
    """Fit the network, then time one ``hessian_spectrum`` call (in this process)."""
    from sklearn_pt.datasets import make_phase_retrieval
    from sklearn_pt.neural_network import FirstLayerGDRegressor
    from sklearn_pt.spectral import hessian_spectrum

    width = n_params // N_FEATURES
    X, y = make_phase_retrieval(N_SAMPLES, N_FEATURES, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        regressor = FirstLayerGDRegressor(
            hidden_layer_sizes=width,
            max_iter=FIT_ITERATIONS,
            random_state=0,
            device=device,
        ).fit(X, y)
    hessian_spectrum(regressor, X[:50], y[:50], k=2, method="lanczos")  # warm-up
    result, run = measure_call(
        lambda: hessian_spectrum(regressor, X, y, k=K, which="both", method=method),
        device,
    )
    return {
        **run,
        "n_params": int(result.n_params),
        "eigenvalues": result.eigenvalues.tolist(),
    }


def run_measurement(n_params: int, method: str, device: str) -> dict:
    """:func:`measure` in a fresh interpreter (so that its memory is its own)."""
    return run_worker(__file__, [f"{n_params}", method, "--device", device])


def max_relative_difference(values, reference) -> float:
    """``max |values - reference| / max |reference|``."""
    scale = max(abs(v) for v in reference)
    return max(abs(a - b) for a, b in zip(values, reference, strict=True)) / scale


def format_mib(run: dict) -> str:
    return f"{run['rss_mib']:.0f}" + ("" if run["rss_exact"] else "<=")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true", help="1e3, 4e3; 1 repeat")
    parser.add_argument("--params", type=int, nargs="*", default=None)
    parser.add_argument(
        "--dense-max",
        type=int,
        default=DENSE_MAX,
        help="largest #params for the dense reference (default %(default)s: at "
        "16000 it needs several 2 GiB copies of the Hessian and an eigh of "
        "about 64x the time of the one at 4000)",
    )
    parser.add_argument("--worker", nargs=2, metavar=("N_PARAMS", "METHOD"))
    args = parser.parse_args(argv)
    if args.worker is not None:
        n_params, method = int(args.worker[0]), args.worker[1]
        print(json.dumps(measure(n_params, method, args.device)))
        return

    sizes = args.params or (QUICK_PARAMS if args.quick else PARAMS)
    repeats = 1 if args.quick else args.repeats
    print(
        f"FirstLayerGDRegressor d={N_FEATURES} n={N_SAMPLES} float64, "
        f"k={K} (which='both'), device={args.device}, repeats={repeats}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )
    header = (
        f"{'#params':>8s} {'width':>5s} {'dense s':>8s} {'lanczos s':>9s} "
        f"{'speed-up':>8s} {'dense MiB':>9s} {'lanczos MiB':>11s} "
        f"{'max rel diff':>12s}"
    )
    if args.device.startswith("cuda"):
        header += f" {'dense GPU MiB':>13s} {'lanczos GPU MiB':>15s}"
    print(header)
    speedups = {}
    for n_params in sizes:
        runs = {method: [] for method in METHODS}
        for _ in range(repeats):
            for method in METHODS:
                if method == "dense" and n_params > args.dense_max:
                    continue
                runs[method].append(run_measurement(n_params, method, args.device))
        lanczos = runs["lanczos"]
        lanczos_s = statistics.median(r["seconds"] for r in lanczos)
        line = f"{n_params:8d} {n_params // N_FEATURES:5d} "
        if runs["dense"]:
            dense = runs["dense"]
            dense_s = statistics.median(r["seconds"] for r in dense)
            speedups[n_params] = dense_s / lanczos_s
            difference = max_relative_difference(
                lanczos[0]["eigenvalues"], dense[0]["eigenvalues"]
            )
            line += (
                f"{dense_s:8.2f} {lanczos_s:9.2f} {speedups[n_params]:7.1f}x "
                f"{format_mib(dense[0]):>9s} {format_mib(lanczos[0]):>11s} "
                f"{difference:12.1e}"
            )
        else:
            line += (
                f"{'skipped':>8s} {lanczos_s:9.2f} {'':>8s} {'':>9s} "
                f"{format_mib(lanczos[0]):>11s} {'':>12s}"
            )
        if args.device.startswith("cuda"):
            dense_gpu = f"{runs['dense'][0]['gpu_mib']:.0f}" if runs["dense"] else ""
            line += f" {dense_gpu:>13s} {lanczos[0]['gpu_mib']:15.0f}"
        print(line)
    print(
        "MiB: peak resident set above the resident set before the call "
        "('<=': an upper bound, the call set no new high-water mark)"
    )
    if not speedups:
        print(f"RESULT: no dense reference at or below --dense-max={args.dense_max}")
        return
    measured = {p: s for p, s in speedups.items() if p >= TARGET_FROM} or speedups
    worst = min(measured, key=measured.get)
    verdict = "meets" if measured[worst] >= TARGET_SPEEDUP else "misses"
    print(
        f"RESULT: lanczos {measured[worst]:.1f}x faster than dense at {worst} "
        f"params ({args.device}; {verdict} the {TARGET_SPEEDUP:g}x target at "
        f">= {TARGET_FROM})"
    )


if __name__ == "__main__":
    main()
