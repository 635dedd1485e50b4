"""Peak memory of ``fit`` and ``predict`` on a large ``X``, as a multiple of its size.

A :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` (width 256,
``P = 0.5``, Adam, mini-batches of 4096, one epoch) is fitted on
``n = 1,000,000`` samples in ``d = 50`` (float32, ``X.nbytes`` = 200 MB), and
``predict`` is called on the same ``X``. Each measurement runs in a fresh
Python process, after the imports and the data are made: its peak resident
set (``ru_maxrss``) above the resident set just before the call, reported in
MiB and as a multiple of ``X.nbytes``. (The ``predict`` process fits on the
first 8192 rows only, so that the fit's own peak does not hide the predict's;
the memory of ``predict`` does not depend on the training set.) With
``--device cuda`` it also reports ``torch.cuda.max_memory_allocated``.

The target is a fit peak of at most about ``3 * X.nbytes``; ``predict``
evaluates the network in chunks of rows
(:func:`sklearn_pt._torch_bridge.predict_numpy`), so its peak should be a fraction
of ``X.nbytes``.

Run by hand (not in CI)::

    python benchmarks/bench_memory.py [--n-samples 1000000] [--device cpu] \
        [--quick]

``predict`` is also measured on ``n / 5`` rows: a chunked ``predict`` has
the same peak at both sizes. ``--quick`` changes nothing (the run takes
seconds). The peak includes what glibc's ``malloc`` keeps of freed torch
buffers: with ``MALLOC_MMAP_THRESHOLD_=1048576`` in the environment, the
fit's peak was about 130 MiB lower.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import numpy as np
from _peak_memory import measure_call, run_worker

N_SAMPLES, N_FEATURES, SMALL_FRACTION = 1_000_000, 50, 5
WIDTH, BATCH, EPOCHS, PREDICT_FIT_ROWS = 256, 4096, 1, 8192
TARGET_FIT_MULTIPLE = 3.0


def make_data(n_samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian ``X`` drawn directly in float32 (no float64 temporary) and a
    smooth target of three coordinates."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, N_FEATURES), dtype=np.float32)
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    return X, y


def make_regressor(device: str):
    from sklearn_pt.neural_network import PartiallyTrainableRegressor

    return PartiallyTrainableRegressor(
        hidden_layer_sizes=(WIDTH,),
        trainable_proportion=0.5,
        solver="adam",
        batch_size=BATCH,
        max_iter=EPOCHS,
        alpha=1e-4,
        project_to_sphere=True,
        random_state=0,
        device=device,
    )


def measure(phase: str, n_samples: int, device: str) -> dict:
    """Make the data, then measure one ``fit`` or ``predict`` in this process."""
    X, y = make_data(n_samples)
    regressor = make_regressor(device)
    warnings.simplefilter("ignore")  # one epoch does not converge
    if phase == "predict":
        regressor.fit(X[:PREDICT_FIT_ROWS], y[:PREDICT_FIT_ROWS])

    def call():
        if phase == "fit":
            regressor.fit(X, y)
        else:
            assert regressor.predict(X).shape == (n_samples,)

    _, run = measure_call(call, device)
    return {**run, "x_mib": X.nbytes / 2**20}


def run_measurement(phase: str, n_samples: int, device: str) -> dict:
    """:func:`measure` in a fresh interpreter (so that its memory is its own)."""
    return run_worker(
        __file__, [phase, "--n-samples", f"{n_samples}", "--device", device]
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-samples", type=int, default=N_SAMPLES)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="accepted for run_all.py; the full run already takes seconds",
    )
    parser.add_argument("--worker", choices=("fit", "predict"))
    args = parser.parse_args(argv)
    n_samples = args.n_samples
    if args.worker is not None:
        print(json.dumps(measure(args.worker, n_samples, args.device)))
        return

    small = n_samples // SMALL_FRACTION
    runs = {
        "fit": run_measurement("fit", n_samples, args.device),
        "predict": run_measurement("predict", n_samples, args.device),
        f"predict, n/{SMALL_FRACTION}": run_measurement("predict", small, args.device),
    }
    x_mib = runs["fit"]["x_mib"]
    cuda = args.device.startswith("cuda")
    print(
        f"PartiallyTrainableRegressor width={WIDTH} P=0.5 adam batch={BATCH} "
        f"epochs={EPOCHS}; X: n={n_samples:,} d={N_FEATURES} float32 = "
        f"{x_mib:.0f} MiB; device={args.device}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )
    header = f"{'':12s} {'s':>7s} {'baseline MiB':>12s} {'peak MiB':>9s} {'x X':>6s}"
    if cuda:
        header += f" {'GPU MiB':>8s} {'GPU x X':>7s}"
    print(header)
    for phase, run in runs.items():
        bound = "" if run["rss_exact"] else "<="
        line = (
            f"{phase:12s} {run['seconds']:7.2f} {run['baseline_mib']:12.0f} "
            f"{bound + format(run['rss_mib'], '.0f'):>9s} "
            f"{run['rss_mib'] / run['x_mib']:6.2f}"
        )
        if cuda:
            line += f" {run['gpu_mib']:8.0f} {run['gpu_mib'] / run['x_mib']:7.2f}"
        print(line)
    print(
        "peak MiB: peak resident set above the resident set before the call "
        "('<=': an upper bound, the call set no new high-water mark); x X: "
        "as a multiple of that row's X.nbytes"
    )
    fit_multiple = runs["fit"]["rss_mib"] / x_mib
    predict_multiple = runs["predict"]["rss_mib"] / x_mib
    small_mib = runs[f"predict, n/{SMALL_FRACTION}"]["rss_mib"]
    verdict = "meets" if fit_multiple <= TARGET_FIT_MULTIPLE else "misses"
    print(
        f"RESULT: fit peak {fit_multiple:.2f}x X.nbytes ({verdict} the "
        f"<= {TARGET_FIT_MULTIPLE:g}x target), predict {predict_multiple:.2f}x "
        f"({runs['predict']['rss_mib']:.0f} MiB; {small_mib:.0f} MiB at "
        f"n/{SMALL_FRACTION}), n={n_samples:,} ({args.device})"
    )


if __name__ == "__main__":
    main()
