"""
Kernel baselines and the theory bound for partially trainable networks
======================================================================

Left: test error on one smooth target on the sphere of

* kernel ridge regression with the limit kernel
  :class:`~sklearn_pt.kernels.BiasedReLUKernel`,
* kernel ridge regression with an RBF kernel,
* random features + ridge (``P = 0``, closed form),
* :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` for a grid
  of trainable proportions P.

Right: the shape in P of the approximation bound
``(kappa_P log(m / delta) / m)^alpha``, ``B(P) / B(0) = (kappa_P /
kappa_0)^alpha`` (:func:`sklearn_pt.theory.bound_shape`; the width, ``delta``
and the constant cancel), for several init scales, with the proportion that
captures 90% of the bound's reduction marked
(:func:`sklearn_pt.theory.proportion_for_reduction`). The bound itself
(:func:`sklearn_pt.theory.approximation_bound`) says nothing at these widths
once ``kappa_P log(m / delta) / m > 1`` and warns so; its shape holds at every
width.

Run with ``python examples/plot_kernel_baseline.py [--out DIR]`` (about a
minute on a laptop CPU; ``SKLEARN_PT_EXAMPLE_SCALE=small`` runs a reduced
version, 400 samples and width 64, in seconds); it writes
``kernel_baseline.png``.
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
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import GridSearchCV, train_test_split

from sklearn_pt.kernels import BiasedReLUKernel
from sklearn_pt.neural_network import PartiallyTrainableRegressor
from sklearn_pt.theory import (
    biased_relu_alpha,
    biased_relu_kappa0,
    bound_shape,
    proportion_for_reduction,
)

SMALL = os.environ.get("SKLEARN_PT_EXAMPLE_SCALE") == "small"
parser = argparse.ArgumentParser(description=__doc__.strip().split("\n")[0])
parser.add_argument("--out", default=".", help="folder for the figure")
args = parser.parse_args()
warnings.simplefilter("ignore", ConvergenceWarning)

# --- data: a smooth target on the sphere S^4 -----------------------------------
rng = np.random.default_rng(0)
X = rng.normal(size=(400 if SMALL else 1000, 5))
X /= np.linalg.norm(X, axis=1, keepdims=True)
y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]) + X[:, 2] ** 2
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
width = 64 if SMALL else 256


def test_mse(model):
    return mean_squared_error(y_test, model.fit(X_train, y_train).predict(X_test))


alphas = {"alpha": np.logspace(-6, 0, 4)}
baselines = {
    "KernelRidge, biased-ReLU kernel": GridSearchCV(
        KernelRidge(kernel=BiasedReLUKernel()), alphas, cv=3
    ),
    "KernelRidge, RBF kernel": GridSearchCV(
        KernelRidge(kernel="rbf"), {**alphas, "gamma": [0.5, 2.0, 8.0]}, cv=3
    ),
    f"random features + ridge (m={width})": GridSearchCV(
        PartiallyTrainableRegressor(
            hidden_layer_sizes=(width,),
            trainable_proportion=0.0,
            readout="ridge",
            project_to_sphere=True,  # the paper's design on the sphere
            dtype="float64",
            random_state=0,
        ),
        alphas,
        cv=3,
    ),
}
errors = {name: test_mse(model) for name, model in baselines.items()}
for name, error in errors.items():
    print(f"{name:40s} test MSE {error:.5f}")

proportions = [0.0, 0.05, 0.2, 1.0] if SMALL else [0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
network_errors = []
for proportion in proportions:
    reg = PartiallyTrainableRegressor(
        hidden_layer_sizes=(width,),
        trainable_proportion=proportion,
        learning_rate_init=1e-2,
        max_iter=100 if SMALL else 300,
        tol=1e-6,
        n_iter_no_change=20,
        readout="ridge",
        alpha=1e-4,
        project_to_sphere=True,  # the paper's design on the sphere
        random_state=0,
    )
    network_errors.append(test_mse(reg))
    name = f"PartiallyTrainableRegressor P={proportion}"
    print(f"{name:40s} test MSE {network_errors[-1]:.5f}")

# --- figure ------------------------------------------------------------------
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
left.plot(
    proportions,
    network_errors,
    "o-",
    color="k",
    label=f"PartiallyTrainableRegressor (m={width}, Adam)",
)
for (name, error), style, color in zip(
    errors.items(), ["--", ":", "-."], ["C0", "C1", "C2"], strict=True
):
    left.axhline(error, linestyle=style, color=color, label=name)
left.set(
    xlabel="trainable proportion P",
    ylabel="test MSE",
    yscale="log",
    title="Test error: networks vs kernel baselines",
)
left.legend(fontsize=8)

grid = np.linspace(0, 1, 401)
alpha = biased_relu_alpha(5)
for init_scale in (1.0, 3.0, 10.0):
    mismatch_ratio = biased_relu_kappa0(5, init_scale)  # kappa_0 / kappa_1, kappa_1 = 1
    shape = bound_shape(grid, mismatch_ratio, alpha=alpha)
    (line,) = right.plot(grid, shape, label=f"init_scale (tau) = {init_scale:g}")
    p90 = proportion_for_reduction(0.9, d=5, init_scale=init_scale)
    at_p90 = bound_shape(p90, mismatch_ratio, alpha=alpha)
    right.plot(p90, at_p90, "o", color=line.get_color())
    right.annotate(
        f"P90={p90:.3f}",
        (p90, at_p90),
        textcoords="offset points",
        xytext=(6, 6),
        fontsize=8,
        color=line.get_color(),
    )
right.set(
    xlabel="trainable proportion P",
    ylabel="bound's shape B(P) / B(0)",
    yscale="log",
    title="Theory bound's shape, d=5 (any m); dot: 90% of the drop",
)
right.legend(fontsize=8)
fig.tight_layout()
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "kernel_baseline.png", dpi=120)
print(f"wrote {out / 'kernel_baseline.png'}")
