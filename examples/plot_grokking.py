"""
Plateau, drop and the negative Hessian outlier ("grokking")
===========================================================

Montanari and Wang (2026) explain the threshold ``delta_NN`` of feature
learning by first-layer gradient descent (see
``plot_feature_learning_threshold.py``) through the training dynamics: GD
first fits the training data with "easy" directions and overfits (the
training loss falls, the test loss stays on a plateau); above the threshold
the Hessian of the empirical risk has a *negative outlier eigenvalue* whose
eigenvector correlates with the hidden direction ``theta*``, GD escapes along
it and the test loss drops suddenly.

This script trains :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`
(quadratic activation, width 4, full-batch GD) on noiseless phase retrieval
``y = <theta*, x>^2`` in ``d = 300`` dimensions, for a sample ratio
``delta = n / d`` just above the paper's threshold for this activation
(``delta = 4``, threshold 3.6) and far above it (``delta = 12``). Along GD it
records, on the training set and on 2,000 held-out samples, the loss
(``0.5 * mean squared error``), the overlap ``max_j |<w_j, theta*>| / |w_j|``
and, every 15 steps, the smallest Hessian eigenvalue and the overlap of its
eigenvector with ``theta*``
(:class:`~sklearn_pt.spectral.HessianMonitor`, through ``hessian_every``).

What it shows (measured, seed 0): at both ratios the smallest eigenvalue is
negative at initialisation (about -2.1 at ``delta = 4`` and -1.2 at
``delta = 12``), with an eigenvector that overlaps ``theta*`` (0.6 and 0.9),
and it shrinks towards 0 as GD follows it. Just above the threshold the
training loss falls 15-fold within 40 steps while the test loss has fallen
by only 40%: a long overfitting phase before the drop. Far above it, train
and test loss fall together and the overlap passes 0.8 in about 20 steps.

Here the outlier is there from initialisation and GD follows it at once: at
``d = 100 .. 400`` the first phase and the escape overlap in time. ``sklearn-pt
reproduce feature-learning`` measures the paper's quantity instead (the
Hessian at the end of a first phase run with ``theta*``'s component held at
0, ``delta_H`` by ``d`` and width) and the plateau length against ``delta -
delta_H`` over seeds: with the quadratic activation at width 4 the plateau
before the test loss halves shortens from about 150-250 steps near
``delta_H`` to about 40 steps 1.5-3 above it.

Run with ``python examples/plot_grokking.py [--out DIR]`` (about half a
minute on one CPU core; ``SKLEARN_PT_EXAMPLE_SCALE=small`` runs ``d = 100``
in seconds). It writes ``grokking.png`` and prints the trajectories.
"""

import argparse
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.neural_network import FirstLayerGDRegressor

SMALL = os.environ.get("SKLEARN_PT_EXAMPLE_SCALE") == "small"
DELTAS = {"just above": 4.0, "far above": 12.0}  # paper's threshold: 3.6
N_TEST, WIDTH, SEED = 2000, 4, 0

parser = argparse.ArgumentParser(description=__doc__.strip().split("\n")[0])
parser.add_argument("--out", default=".", help="folder for the figure")
parser.add_argument("--n-features", type=int, default=100 if SMALL else 300)
parser.add_argument("--max-iter", type=int, default=200 if SMALL else 300)
args = parser.parse_args()


def trajectory(delta: float, n_features: int) -> dict:
    """``history_`` of one GD run at sample ratio ``delta``."""
    n_train = round(delta * n_features)
    X, y, theta = make_phase_retrieval(
        n_train + N_TEST, n_features, random_state=SEED, return_directions=True
    )
    reg = FirstLayerGDRegressor(
        WIDTH,
        activation="quadratic",
        learning_rate_init=0.15,
        max_iter=args.max_iter,
        hessian_every=15,
        hessian_k=3,
        random_state=SEED,
    )
    reg.fit(
        X[:n_train],
        y[:n_train],
        eval_set=(X[n_train:], y[n_train:]),
        true_directions=theta,
    )
    return reg.history_


def first_iteration(history: dict, mask: np.ndarray) -> str:
    """The first iteration where ``mask`` holds, or "never"."""
    hits = history["iteration"][mask]
    return str(hits[0]) if len(hits) else "never"


histories = {
    label: trajectory(delta, args.n_features) for label, delta in DELTAS.items()
}
for label, h in histories.items():
    print(f"\ndelta = {DELTAS[label]:g} ({label} the threshold), d = {args.n_features}")
    print(
        f"  test loss {h['test_loss'][0]:.3f} -> {h['test_loss'][-1]:.4f}, halved "
        f"at t = {first_iteration(h, h['test_loss'] < 0.5 * h['test_loss'][0])}; "
        f"overlap {h['overlap'][0]:.2f} -> {h['overlap'][-1]:.2f}, above 0.5 at "
        f"t = {first_iteration(h, h['overlap'] > 0.5)}"
    )
    for t in (10, 40):
        if t < len(h["iteration"]):
            print(
                f"  t = {t:3d}: train loss {h['train_loss'][t]:.3f}, test loss "
                f"{h['test_loss'][t]:.3f}"
            )
    for t, values, overlaps in zip(
        h["hessian_iteration"][::4],
        h["hessian_eigenvalues"][::4],
        h["hessian_overlap"][::4],
        strict=True,
    ):
        print(
            f"  t = {t:3d}: smallest Hessian eigenvalues {np.round(values, 3)}, "
            f"eigenvector overlaps with theta* {np.round(overlaps, 2)}"
        )

# %%
# The figure
# ----------
# Top: losses (log scale). Bottom: the overlap of the best neuron with
# ``theta*`` (left axis) and the smallest Hessian eigenvalue (right axis,
# symmetric-log scale; markers coloured by its eigenvector's overlap). The
# iteration axis is logarithmic (``t + 1``), so that the plateau shows.

fig, axes = plt.subplots(2, 2, figsize=(12, 7.5), sharex=True, layout="constrained")
d = args.n_features
for column, (label, h) in enumerate(histories.items()):
    ax_loss, ax_overlap = axes[:, column]
    t = h["iteration"] + 1
    t_hessian = h["hessian_iteration"] + 1
    ax_loss.plot(t, h["train_loss"], color="tab:red", ls="--", label="train loss")
    ax_loss.plot(t, h["test_loss"], color="tab:red", label="test loss")
    ax_loss.set(
        xscale="log",
        yscale="log",
        ylabel="0.5 * mean squared error",
        title=f"delta = {DELTAS[label]:g} ({label} the threshold), d = {d}",
    )
    ax_loss.legend(fontsize=8)

    ax_overlap.plot(t, h["overlap"], color="tab:blue", label="overlap (left)")
    ax_overlap.set(
        xlabel="GD iteration + 1",
        ylabel="overlap with theta*",
        ylim=(0, 1.02),
    )
    ax_hessian = ax_overlap.twinx()
    eigenvalues = h["hessian_eigenvalues"][:, 0]
    ax_hessian.plot(t_hessian, eigenvalues, color="grey", lw=0.8)
    points = ax_hessian.scatter(
        t_hessian,
        eigenvalues,
        c=h["hessian_overlap"][:, 0],
        cmap="viridis",
        vmin=0,
        vmax=1,
        label="smallest Hessian eigenvalue (right)",
        zorder=3,
    )
    ax_hessian.axhline(0, color="black", lw=0.5)
    ax_hessian.set_yscale("symlog", linthresh=1e-2)
    ax_hessian.set_ylabel("smallest Hessian eigenvalue")
    handles = ax_overlap.get_legend_handles_labels()[0] + [points]
    ax_overlap.legend(
        handles=handles,
        labels=["overlap (left)", "smallest Hessian eigenvalue (right)"],
        fontsize=8,
        loc="center right",
    )
fig.colorbar(points, ax=axes[1, :].tolist(), label="eigenvector overlap with theta*")
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "grokking.png", dpi=120)
print(f"wrote {out / 'grokking.png'}")
