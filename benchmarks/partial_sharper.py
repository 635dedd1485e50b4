"""Why the larger init scale trails at small P in the partial reproduction.

The paper's claim: the error falls faster in ``P`` (a larger share of the
``P = 0 -> 1`` fall at small ``P``) for the larger init mismatch, since
random features are worse there (``kappa_0*`` grows with ``tau``). The
reproduction's design draws unit-norm ``w_j`` and biases ``b_j ~
U[-tau, tau]`` on inputs on the unit sphere, so a neuron's kink ``<w_j, x>
= b_j`` lies inside the data only when ``|b_j| < 1``: at ``tau = 10`` a
neuron is inactive on every input with probability 0.45 (``b_j > 1``,
zero gradient: it cannot train), linear on the data with probability 0.45
(``b_j < -1``) and bent inside it with probability 0.1.

For the theory's design at ``--scale`` (medium by default; width, samples, epochs and
step size of the preset, leverage selection), this prints per ``(tau, P)``
over seeds: the share of the ``P = 0 -> 1`` fall of the training error
reached, the trainable neurons' states before and after training (inactive
on every input, bent inside the data, linear on it), and how far their
biases moved against ``tau``. With ``--scaled-step`` it also refits with
the step size times ``tau`` (Adam moves each weight by about the step size
per step, whatever its scale: the same budget moves a bias drawn 10 times
wider a tenth as far in its own units).

Run by hand (not in CI; about 5 minutes per seed at one thread)::

    python benchmarks/partial_sharper.py [--seeds 2] [--scaled-step]
        [--scale small] [--max-iter 1500]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from sklearn_pt.datasets import make_sphere_regression
from sklearn_pt.experiments._partial import PARTIAL, theory_design_regressor
from sklearn_pt.model_selection import fit_stacked

PROPORTIONS = (0.0, 0.02, 0.05, 0.1, 1.0)
TAUS = (1.0, 10.0)


def _states(weight, bias, X) -> np.ndarray:
    """Per neuron: 0 inactive on every row of ``X``, 1 bent inside the
    data (active on some rows, not all), 2 active on every row (linear)."""
    active = (X @ weight.T + bias) > 0
    some, every = active.any(axis=0), active.all(axis=0)
    return np.where(every, 2, np.where(some, 1, 0))


def _initial(estimator, X, y):
    """The first layer at the start of the fit and the trainable mask."""
    plan = estimator.plan_fit(X, y)
    layer = plan.module.hidden_layers[0]
    weight = layer.weight.detach().numpy().astype(np.float64)
    bias = layer.bias.detach().numpy().astype(np.float64)
    return weight, bias


def run_seed(config: dict, seed: int, step_factor: dict) -> list[dict]:
    n, d = config["n_samples"], config["n_features"]
    X, y = make_sphere_regression(n, d, random_state=seed)
    n_train = n - max(1, round(config["test_fraction"] * n))
    X, y = X[:n_train], y[:n_train]
    X_sphere = X / np.linalg.norm(X, axis=1, keepdims=True)
    models = []
    for tau in TAUS:
        for p in PROPORTIONS:
            model = theory_design_regressor(
                config, init_scale=tau, selection="leverage"
            ).set_params(random_state=seed, trainable_proportion=p)
            lr = config["learning_rate_init"] * step_factor[tau]
            models.append(((tau, p), model.set_params(learning_rate_init=lr)))
    starts = {key: _initial(model, X, y) for key, model in models}
    fitted = []  # stacked per tau: stacked fits share their step size
    for tau in TAUS:
        group = [model for (t, _), model in models if t == tau]
        fitted += fit_stacked(group, X, y)
    rows = []
    for (key, _), fit in zip(models, fitted, strict=True):
        tau, p = key
        w0, b0 = starts[key]
        mask = fit.trainable_masks_[0]
        w1, b1 = fit.coefs_[0].T, fit.intercepts_[0]
        before = _states(w0[mask], b0[mask], X_sphere)
        after = _states(w1[mask], b1[mask], X_sphere)
        error = float(np.mean((fit.predict(X) - y) ** 2))
        row = {"tau": tau, "P": p, "seed": seed, "train_mse": error}
        row["n_trainable"] = int(mask.sum())
        for k, state in enumerate(("inactive", "bent", "linear")):
            row[f"{state}_before"] = float(np.mean(before == k)) if mask.any() else 0
            row[f"{state}_after"] = float(np.mean(after == k)) if mask.any() else 0
        row["bias_move_over_tau"] = (
            float(np.median(np.abs(b1[mask] - b0[mask])) / tau) if mask.any() else 0
        )
        rows.append(row)
    return rows


def _report(rows: list[dict], title: str) -> None:
    print(title)
    print(
        f"{'tau':>5s} {'P':>5s} {'share':>6s} {'inact->':>8s} {'bent->':>8s} "
        f"{'linear->':>9s} {'|db|/tau':>8s}"
    )
    for tau in TAUS:
        by_p = {
            p: [r for r in rows if r["tau"] == tau and r["P"] == p] for p in PROPORTIONS
        }
        errors = {p: np.array([r["train_mse"] for r in by_p[p]]) for p in PROPORTIONS}
        for p in PROPORTIONS[1:-1]:
            share = (errors[0.0] - errors[p]) / (errors[0.0] - errors[1.0])
            mean = {
                key: np.mean([r[key] for r in by_p[p]])
                for key in by_p[p][0]
                if key not in ("tau", "P", "seed")
            }
            print(
                f"{tau:5g} {p:5g} {np.mean(share):6.3f} "
                f"{mean['inactive_before']:.2f}>{mean['inactive_after']:.2f} "
                f"{mean['bent_before']:.2f}>{mean['bent_after']:.2f} "
                f"{mean['linear_before']:.2f}>{mean['linear_after']:.2f}  "
                f"{mean['bias_move_over_tau']:8.3f}"
            )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--scaled-step", action="store_true")
    parser.add_argument("--scale", default="medium", choices=["small", "medium"])
    parser.add_argument("--max-iter", type=int, help="epochs (default: the preset's)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    preset = dict(PARTIAL.presets[args.scale])
    config = {**preset, "device": "cpu"}
    if args.max_iter:
        config["max_iter"] = args.max_iter
    runs = {"step size as in the preset": dict.fromkeys(TAUS, 1.0)}
    if args.scaled_step:
        runs["step size times tau"] = {tau: tau for tau in TAUS}
    for title, factor in runs.items():
        start = time.perf_counter()
        rows = [r for seed in range(args.seeds) for r in run_seed(config, seed, factor)]
        _report(
            rows, f"{title} ({args.seeds} seeds, {time.perf_counter() - start:.0f} s)"
        )


if __name__ == "__main__":
    main()
