"""Feature learning by first-layer gradient descent on phase retrieval.

Montanari and Wang (2026) show that full-batch GD on the first layer of a
small two-layer network ``f(x) = (1/m) sum_j a_j sigma(<w_j, x>)`` learns the
direction ``theta*`` of noiseless phase retrieval ``y = <theta*, x>^2`` only
above a sample ratio ``delta_NN = n/d`` (about 3.6 for the quadratic
activation and 6.0 for GeLU), well above the threshold ``1/2`` of the optimal
spectral method; and that the mechanism is a negative outlier of the Hessian
whose eigenvector points towards ``theta*``. This script draws

1. the success rate (overlap ``max_j |<w_j, theta*>| / |w_j| > 0.5``) against
   ``delta`` for the quadratic and GeLU activations (GeLU also from the
   spectral initialisation) and for the spectral estimator;
2. train and test loss along GD below and above the threshold: the training
   loss falls at once, the test loss stays on a plateau and, above the
   threshold only, then drops;
3. the smallest Hessian eigenvalue along the same runs, coloured by the
   overlap of its eigenvector with ``theta*``;

and prints where each success curve crosses 1/2, next to the values of the
paper. The sizes are small (``d = 150`` for the sweep, ``d = 300`` for the
trajectories) so that it runs in about a minute on two CPU cores; at these
sizes the transitions are smooth and sit below the asymptotic values (they
move up with ``d``: ``--n-features 400`` shows it), while their order,
spectral < quadratic < GeLU, is the paper's.

Run with ``python examples/plot_feature_learning.py [--out DIR]``; it writes
``feature_learning.png``.
"""

import argparse
import time
from functools import partial
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.linear_model import SpectralEstimator
from sklearn_pt.model_selection import sample_ratio_curve
from sklearn_pt.neural_network import FirstLayerGDRegressor

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--out", default=".", help="folder for the figure")
parser.add_argument("--n-features", type=int, default=150, help="d of the sweep")
parser.add_argument("--n-repeats", type=int, default=4, help="seeds per delta")
parser.add_argument("--n-jobs", type=int, default=2)
args = parser.parse_args()

PAPER = {"quadratic": 3.6, "GeLU": 6.0, "spectral": 0.5}
DELTAS = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0]
WIDTH = 4
estimators = {
    "quadratic": FirstLayerGDRegressor(
        WIDTH, activation="quadratic", learning_rate=0.15, max_iter=500
    ),
    "GeLU": FirstLayerGDRegressor(
        WIDTH, activation="gelu", learning_rate=1.0, max_iter=500
    ),
    "GeLU, spectral init": FirstLayerGDRegressor(
        WIDTH, activation="gelu", init="spectral", learning_rate=1.0, max_iter=500
    ),
    "spectral": SpectralEstimator(),
}


def crossing(deltas, rates, level=0.5):
    """The delta at which the success rate first reaches ``level`` (linear
    interpolation between grid points; NaN if it never does)."""
    for i in range(1, len(deltas)):
        if rates[i] >= level > rates[i - 1]:
            t = (level - rates[i - 1]) / (rates[i] - rates[i - 1])
            return deltas[i - 1] + t * (deltas[i] - deltas[i - 1])
    return deltas[0] if rates[0] >= level else float("nan")


start = time.perf_counter()
data = partial(make_phase_retrieval, return_directions=True)
curves = {}
for name, estimator in estimators.items():
    curves[name] = sample_ratio_curve(
        estimator,
        data,
        deltas=DELTAS,
        n_features=args.n_features,
        n_repeats=args.n_repeats,
        n_jobs=args.n_jobs,
    )
print(f"success-rate sweep: {time.perf_counter() - start:.0f} s")
print(f"\nd = {args.n_features}, {args.n_repeats} seeds, width {WIDTH}")
print(f"{'method':>20} {'delta at rate 1/2':>18} {'paper':>6}")
for name, curve in curves.items():
    paper = PAPER.get(name.split(",")[0], float("nan"))
    print(f"{name:>20} {crossing(DELTAS, curve.success_rate):18.2f} {paper:6.1f}")

# Trajectories below and above the threshold (quadratic activation).
d, n_test = 300, 2000
runs = {}
for delta in (1.0, 4.0):
    n = int(delta * d)
    X, y, theta = make_phase_retrieval(
        n + n_test, d, random_state=0, return_directions=True
    )
    reg = FirstLayerGDRegressor(
        WIDTH,
        activation="quadratic",
        learning_rate=0.15,
        max_iter=300,
        hessian_every=15,
        hessian_k=3,
        random_state=0,
    )
    reg.fit(X[:n], y[:n], eval_set=(X[n:], y[n:]), true_directions=theta)
    runs[delta] = h = reg.history_
    drop = h["iteration"][h["test_loss"] < 0.5 * h["test_loss"][0]]
    halved = drop[0] if len(drop) else "never"
    print(
        f"\nquadratic, d = {d}, delta = {delta:g}: test loss "
        f"{h['test_loss'][0]:.2f} -> {h['test_loss'][-1]:.3f} (halved at t = "
        f"{halved}), overlap {h['overlap'][0]:.2f} -> {h['overlap'][-1]:.2f}"
    )
    for t, values, overlaps in zip(
        h["hessian_iteration"][::5],
        h["hessian_eigenvalues"][::5],
        h["hessian_overlap"][::5],
        strict=True,
    ):
        print(
            f"  t = {t:3d}: smallest Hessian eigenvalues {np.round(values, 3)}, "
            f"eigenvector overlaps {np.round(overlaps, 2)}"
        )
print(f"total: {time.perf_counter() - start:.0f} s")

fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
ax = axes[0]
for name, curve in curves.items():
    style = "--" if "init" in name else "-"
    ax.plot(DELTAS, curve.success_rate, style, marker="o", label=name)
for name, value in PAPER.items():
    ax.axvline(value, color="grey", lw=0.8, ls=":")
    ax.text(value, 1.04, name, rotation=90, va="bottom", ha="center", fontsize=7)
ax.set(
    xlabel="delta = n / d",
    ylabel="success rate (overlap > 0.5)",
    title=f"Weak recovery, d = {args.n_features}, m = {WIDTH}",
    ylim=(-0.03, 1.25),
)
ax.legend(fontsize=8, loc="center right")

ax = axes[1]
for delta, color in zip(runs, ("tab:red", "tab:blue"), strict=True):
    h = runs[delta]
    t = h["iteration"] + 1
    ax.plot(t, h["train_loss"], color=color, ls="--", label=f"train, delta={delta:g}")
    ax.plot(t, h["test_loss"], color=color, label=f"test, delta={delta:g}")
ax.set(
    xscale="log",
    yscale="log",
    xlabel="iteration + 1",
    ylabel="0.5 * mean squared error",
    title=f"Plateau, then drop (quadratic, d = {d})",
)
ax.legend(fontsize=8)

ax = axes[2]
for delta, marker in zip(runs, ("s", "o"), strict=True):
    h = runs[delta]
    points = ax.scatter(
        h["hessian_iteration"],
        h["hessian_eigenvalues"][:, 0],
        c=h["hessian_overlap"][:, 0],
        cmap="viridis",
        vmin=0,
        vmax=1,
        marker=marker,
        label=f"delta={delta:g}",
    )
    ax.plot(
        h["hessian_iteration"], h["hessian_eigenvalues"][:, 0], color="grey", lw=0.5
    )
ax.axhline(0, color="black", lw=0.5)
ax.set_yscale("symlog", linthresh=1e-2)
ax.set_ylim(top=1e-3)
ax.set(
    xlabel="iteration",
    ylabel="smallest Hessian eigenvalue",
    title="Hessian along GD (colour: eigenvector overlap)",
)
fig.colorbar(points, ax=ax, label="overlap with theta*")
ax.legend(fontsize=8)
fig.tight_layout()
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "feature_learning.png", dpi=120)
print(f"wrote {out / 'feature_learning.png'}")
