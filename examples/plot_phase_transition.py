"""
The phase transition in the trainable proportion P, for two init scales
=======================================================================

Training (and test) error of
:class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` against the
proportion ``P`` of trainable hidden neurons, for ``init_scale`` (tau) 1 and
10, averaged over three seeds (bands: one standard deviation).

What it shows (measured, width 256, Adam, 200 epochs): for ``tau = 1`` the
error falls fast for small ``P`` and then saturates (90% of the training-error
drop by ``P = 0.1``). With ``tau = 10`` most random neurons are always on or
always off on the sphere, so the random-features end (``P = 0``) is much worse,
as the paper says. But here the fall in ``P`` is *not* sharper for ``tau = 10``
(90% of the drop only at ``P = 1``), unlike the theory bound of He, Lao, Lu and
Zhang (2026) (see ``plot_kernel_baseline.py``): trainable neurons that start
always off receive no gradient and never move, so at this training budget a
large ``tau`` wastes trainable neurons too.

Run with ``python examples/plot_phase_transition.py [--out DIR]`` (a few
minutes on a laptop CPU; ``SKLEARN_PT_EXAMPLE_SCALE=small`` runs a reduced
version, width 64 and two seeds, in seconds); it writes
``phase_transition.png`` and prints, for
each tau, the smallest P on the grid that captures 90% of the training-error
drop from P=0 to P=1.
"""

import argparse
import os
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from sklearn_pt.model_selection import PhaseTransitionDisplay
from sklearn_pt.neural_network import PartiallyTrainableRegressor

SMALL = os.environ.get("SKLEARN_PT_EXAMPLE_SCALE") == "small"
parser = argparse.ArgumentParser(description=__doc__.strip().split("\n")[0])
parser.add_argument("--out", default=".", help="folder for the figure")
parser.add_argument("--width", type=int, default=64 if SMALL else 256)
args = parser.parse_args()
warnings.simplefilter("ignore", ConvergenceWarning)

if SMALL:
    proportions = np.array([0.0, 0.05, 0.2, 1.0])
    seeds, n_samples, max_iter = (0, 1), 600, 100
else:
    proportions = np.array([0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0])
    seeds, n_samples, max_iter = (0, 1, 2), 1200, 200


def data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]) + X[:, 2] ** 2
    return train_test_split(X, y, random_state=seed)


fig, ax = plt.subplots(figsize=(7, 4.5))
for init_scale in (1.0, 10.0):
    train = np.empty((len(proportions), len(seeds)))
    test = np.empty_like(train)
    for j, seed in enumerate(seeds):
        X_train, X_test, y_train, y_test = data(seed)
        for i, proportion in enumerate(proportions):
            reg = PartiallyTrainableRegressor(
                hidden_layer_sizes=(args.width,),
                trainable_proportion=proportion,
                init_scale=init_scale,
                learning_rate_init=1e-2,
                max_iter=max_iter,
                alpha=0.0,
                random_state=seed,
            ).fit(X_train, y_train)
            train[i, j] = np.mean((reg.predict(X_train) - y_train) ** 2)
            test[i, j] = np.mean((reg.predict(X_test) - y_test) ** 2)
    mean = train.mean(axis=1)
    captured = (mean[0] - mean) / (mean[0] - mean[-1])
    p90 = proportions[np.argmax(captured >= 0.9)]
    print(
        f"tau={init_scale:g}: train MSE at P=0 {mean[0]:.4f}, at P=1 {mean[-1]:.5f}; "
        f"90% of the drop captured by P={p90:g}"
    )
    PhaseTransitionDisplay.from_results(
        proportions, train, test, label=f"tau={init_scale:g}", ax=ax, log_x=True
    )
ax.set_title(
    f"Phase transition in P (width {args.width}, {len(seeds)} seeds; dashed: test)"
)
fig.tight_layout()
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "phase_transition.png", dpi=120)
print(f"wrote {out / 'phase_transition.png'}")
