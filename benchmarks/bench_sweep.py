"""Stacked proportion sweep against sequential fits.

One phase-transition sweep: a 16-point grid of trainable proportions P in
[0, 1], one seed, ``PartiallyTrainableRegressor`` of width 512 on d=20,
n=4000 (float32, Adam, batch 200), 2-fold cross-validation, every fit running
exactly ``--max-iter`` epochs (``tol=0``, ``n_iter_no_change`` above
``max_iter``). Timed, in one process and interleaved repeat by repeat:

* ``sequential``: ``proportion_curve(strategy="sequential")``, the reference
  (one fit per P and split, through ``validation_curve``);
* ``GridSearchCV``: the same fits through
  :class:`~sklearn.model_selection.GridSearchCV` over ``trainable_proportion``
  with the same cv;
* ``stacked``: ``proportion_curve(strategy="stacked")`` (one stacked model of
  16 networks per split).

It checks first that the stacked and sequential test scores agree, then prints
the median wall time of each and its speed-up over the sequential reference,
then the roofline of the stacked and sequential sweeps (``_roofline.py``: the
product flops and operand bytes counted in one more run of each, this
machine's product rate for the same shapes and its bandwidth measured now,
and the fraction of that limit each reaches), and that of one training step
of the stacked sweep alone (``stacked, 1 epoch`` is timed and counted too,
and subtracted: building the models, scoring them and the first epoch
cancel).

Run by hand (not in CI)::

    python benchmarks/bench_sweep.py [--device cpu|cuda] [--repeats 3]
        [--max-iter 10] [--width 512] [--quick]

Set ``OMP_NUM_THREADS=1`` to compare on one thread.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch
from _roofline import count, limit_seconds, measured_limits, report
from _timing import interleaved_medians, print_table
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold

from sklearn_pt.model_selection import proportion_curve
from sklearn_pt.neural_network import PartiallyTrainableRegressor

N_SAMPLES, N_FEATURES, N_PROPORTIONS = 4000, 20, 16


def make_data(n_samples: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, N_FEATURES)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    return X, y.astype(np.float32)


def make_estimator(
    max_iter: int, device: str, width: int
) -> PartiallyTrainableRegressor:
    return PartiallyTrainableRegressor(
        (width,),
        learning_rate_init=1e-3,
        max_iter=max_iter,
        tol=0.0,
        n_iter_no_change=max_iter + 1,
        alpha=1e-4,
        project_to_sphere=True,
        random_state=0,
        device=device,
    )


def sweep(strategy, X, y, proportions, cv, max_iter, device, width):
    return proportion_curve(
        make_estimator(max_iter, device, width),
        X,
        y,
        proportions=proportions,
        cv=cv,
        random_states=[0],
        strategy=strategy,
    )


def grid_search(X, y, proportions, cv, max_iter, device, width):
    search = GridSearchCV(
        make_estimator(max_iter, device, width),
        {"trainable_proportion": list(proportions)},
        cv=cv,
        refit=False,
    )
    return search.fit(X, y)


def training_step_roofline(full, one_epoch, seconds, steps, device) -> float:
    """The roofline of one training step of the stacked sweep alone: the
    counts and the time of ``full`` minus those of ``one_epoch`` (the same
    sweep with one epoch: model building, scoring and the first epoch
    cancel), over the ``steps`` optimiser steps between them; return the
    fraction."""
    counts_full, _ = count(full)
    counts_one, _ = count(one_epoch)
    per_step = counts_full
    per_step.flops = (counts_full.flops - counts_one.flops) / steps
    per_step.bytes = (counts_full.bytes - counts_one.bytes) / steps
    limits = measured_limits(counts_full, device)
    limit = limit_seconds(per_step, limits)
    measured = seconds / steps
    print(
        f"one training step of the stacked sweep (counted and timed as the "
        f"difference with a 1-epoch sweep, over {steps} steps): "
        f"{per_step.flops / 1e6:.1f} MFLOP, {per_step.bytes / 1e6:.1f} MB of "
        f"operands; {limits.source}; limit {limit * 1e3:.2f} ms, measured "
        f"{measured * 1e3:.2f} ms: {limit / measured:.0%} of the roofline"
    )
    return limit / measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-iter", type=int, default=10)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument(
        "--quick", action="store_true", help="3 epochs, one repeat (a smoke run)"
    )
    args = parser.parse_args()
    repeats, max_iter = (1, 3) if args.quick else (args.repeats, args.max_iter)
    if max_iter < 2:
        parser.error(
            "--max-iter must be at least 2 (a training step is timed as the "
            "difference with a 1-epoch sweep)"
        )
    warnings.simplefilter("ignore", ConvergenceWarning)

    X, y = make_data(N_SAMPLES)
    proportions = np.linspace(0.0, 1.0, N_PROPORTIONS)
    cv = KFold(2, shuffle=True, random_state=0)
    common = (X, y, proportions, cv, max_iter, args.device, args.width)
    one_epoch = (X, y, proportions, cv, 1, args.device, args.width)
    print(
        f"{N_PROPORTIONS} proportions x 1 seed x {cv.get_n_splits()} splits, "
        f"width {args.width}, d={N_FEATURES}, n={N_SAMPLES}, "
        f"{max_iter} epochs of Adam, "
        f"device={args.device}, torch threads={torch.get_num_threads()}"
    )

    stacked_test = sweep("stacked", *common).test_scores  # also warms up
    sequential_test = sweep("sequential", *common).test_scores
    difference = np.abs(stacked_test - sequential_test).max()
    print(f"max |test score stacked - sequential| = {difference:.2e}")

    runs = {
        "sequential": lambda: sweep("sequential", *common),
        "GridSearchCV": lambda: grid_search(*common),
        "stacked": lambda: sweep("stacked", *common),
        "stacked, 1 epoch": lambda: sweep("stacked", *one_epoch),
    }
    medians = interleaved_medians(runs, repeats=repeats, device=args.device)
    ratio = print_table(medians, "sequential") / medians["stacked"]
    steps_per_epoch = cv.get_n_splits() * -(-N_SAMPLES // cv.get_n_splits() // 200)
    fractions = report(
        {name: runs[name] for name in ("stacked", "sequential")},
        medians,
        args.device,
        steps={"stacked": max_iter * steps_per_epoch},
    )
    training = training_step_roofline(
        runs["stacked"],
        runs["stacked, 1 epoch"],
        medians["stacked"] - medians["stacked, 1 epoch"],
        (max_iter - 1) * steps_per_epoch,
        args.device,
    )
    print(
        f"RESULT: stacked {ratio:.2f}x faster than sequential ({args.device}); "
        f"roofline fraction stacked {fractions['stacked']:.0%} (a training step "
        f"alone {training:.0%}), sequential {fractions['sequential']:.0%}"
    )


if __name__ == "__main__":
    main()
