"""Real tabular data: 5-fold CV R^2 and fit time of every model, at defaults.

Data sets (all bundled or generated, no download):

* ``diabetes``: :func:`sklearn.datasets.load_diabetes` (442 x 10);
* ``friedman1``: :func:`sklearn.datasets.make_friedman1` (1000 x 10,
  ``noise=1``, ``random_state=0``);
* ``friedman2``: :func:`sklearn.datasets.make_friedman2` (1000 x 4,
  ``noise=0``, ``random_state=0``): a target with a large mean (about 480,
  standard deviation about 380), where a readout initialised at zero has a
  long way to go.

Every model runs inside ``Pipeline(StandardScaler(), model)`` (the kernel
ridge rows add a ``Normalizer`` after the scaler where named), evaluated by
:func:`sklearn.model_selection.cross_validate` with ``KFold(5, shuffle=True,
random_state=0)``; each cell is the mean R^2 over the folds +- its standard
deviation, and the mean fit time of one fold (tuned rows: the whole inner grid
search). Models:

* ``PartiallyTrainableRegressor()``, ``TwoStepFeatureLearner()`` and
  ``FirstLayerGDRegressor()`` at their defaults (``random_state=0``);
* ``PartiallyTrainableRegressor`` tuned: ``GridSearchCV`` (3 inner folds) over
  ``trainable_proportion``;
* ``KernelRidge`` with :class:`~sklearn_pt.kernels.BiasedReLUKernel` after
  ``Normalizer`` (the paper's sphere) and after ``StandardScaler`` alone
  (points outside the unit ball), and with ``kernel="rbf"``; ``alpha`` (and
  for RBF ``gamma``) tuned by ``GridSearchCV`` (3 inner folds);
* ``MLPRegressor(hidden_layer_sizes=(256,), max_iter=500)``;
* ``skorch.NeuralNetRegressor`` on ``Linear(d, 256) - ReLU - Linear(256, 1)``
  (Adam, learning rate 1e-3, batch 64, 200 epochs, no validation split).

The reference for the ratios is ``MLPRegressor`` in the same run: the table
gives each model's R^2 minus MLP's and its fit time over MLP's.

Run by hand (not in CI)::

    OMP_NUM_THREADS=1 python benchmarks/bench_real_data.py [--quick] \
        [--only diabetes friedman1] [--threads 1]

``--quick`` uses at most 200 samples per data set, smaller grids and 50
skorch epochs (about 2-3 minutes on one thread). Torch runs on
``--threads`` threads (default 1: on a small or busy machine one thread is
much faster than torch's default).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import torch
from sklearn.datasets import load_diabetes, make_friedman1, make_friedman2
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler
from skorch import NeuralNetRegressor

from sklearn_pt.kernels import BiasedReLUKernel
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)

QUICK_SAMPLES = 200
REFERENCE = "MLPRegressor(256)"
OURS = (
    "PartiallyTrainable()",
    "PartiallyTrainable, GridSearchCV(P)",
    "TwoStepFeatureLearner()",
    "FirstLayerGDRegressor()",
)


def datasets(quick: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The three data sets (``quick``: a random subset of at most 200 rows)."""
    data = {
        "diabetes": load_diabetes(return_X_y=True),
        "friedman1": make_friedman1(n_samples=1000, noise=1.0, random_state=0),
        "friedman2": make_friedman2(n_samples=1000, noise=0.0, random_state=0),
    }
    if quick:
        rng = np.random.default_rng(0)
        for name, (X, y) in data.items():
            keep = rng.permutation(len(X))[:QUICK_SAMPLES]
            data[name] = (X[keep], y[keep])
    return data


class FlatNeuralNetRegressor(NeuralNetRegressor):
    """skorch's regressor taking 1-d float64 ``y`` as sklearn's estimators do
    (skorch wants a float32 column) and returning 1-d predictions."""

    def fit(self, X, y=None, **fit_params):
        y = np.asarray(y, dtype=np.float32).reshape(-1, 1)
        return super().fit(np.asarray(X, dtype=np.float32), y, **fit_params)

    def predict(self, X):
        return super().predict(np.asarray(X, dtype=np.float32)).ravel()


def skorch_module(n_features: int) -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(n_features, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)
    )


def models(n_features: int, quick: bool) -> dict[str, object]:
    """Name -> estimator (before the ``StandardScaler``)."""
    proportions = (0.1, 1.0) if quick else (0.0, 0.1, 0.3, 1.0)
    alphas = (1e-2, 1e-1, 1.0) if quick else (1e-3, 1e-2, 1e-1, 1.0)
    gammas = (0.03, 0.1) if quick else (0.01, 0.03, 0.1, 0.3)
    inner = 3

    def biased_relu_ridge():
        return GridSearchCV(
            KernelRidge(kernel=BiasedReLUKernel()), {"alpha": alphas}, cv=inner
        )

    return {
        "PartiallyTrainable()": PartiallyTrainableRegressor(random_state=0),
        "PartiallyTrainable, GridSearchCV(P)": GridSearchCV(
            PartiallyTrainableRegressor(random_state=0),
            {"trainable_proportion": proportions},
            cv=inner,
        ),
        "TwoStepFeatureLearner()": TwoStepFeatureLearner(random_state=0),
        "FirstLayerGDRegressor()": FirstLayerGDRegressor(random_state=0),
        "KernelRidge(BiasedReLU), Normalizer": make_pipeline(
            Normalizer(), biased_relu_ridge()
        ),
        "KernelRidge(BiasedReLU), standardized": biased_relu_ridge(),
        "KernelRidge(rbf)": GridSearchCV(
            KernelRidge(kernel="rbf"), {"alpha": alphas, "gamma": gammas}, cv=inner
        ),
        REFERENCE: MLPRegressor(
            hidden_layer_sizes=(256,), max_iter=500, random_state=0
        ),
        "skorch NeuralNetRegressor(256)": FlatNeuralNetRegressor(
            skorch_module(n_features),
            max_epochs=50 if quick else 200,
            lr=1e-3,
            batch_size=64,
            optimizer=torch.optim.Adam,
            train_split=None,
            verbose=0,
        ),
    }


def evaluate(model, X, y) -> dict[str, float]:
    """5-fold CV of ``Pipeline(StandardScaler(), model)``."""
    folds = KFold(5, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarnings at defaults
        torch.manual_seed(0)  # skorch's initialisation (the others are seeded)
        scores = cross_validate(
            make_pipeline(StandardScaler(), model), X, y, cv=folds, scoring="r2"
        )
    return {
        "r2": float(np.mean(scores["test_score"])),
        "sd": float(np.std(scores["test_score"])),
        "fit_s": float(np.mean(scores["fit_time"])),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", help="unused: CPU models only")
    parser.add_argument("--quick", action="store_true", help="<= 200 rows per set")
    parser.add_argument("--only", nargs="*", default=None, help="data set names")
    parser.add_argument("--models", nargs="*", default=None, help="model names")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = datasets(args.quick)
    if args.only:
        data = {k: v for k, v in data.items() if k in args.only}
    print(
        f"5-fold CV R^2 (mean +- sd over folds) and mean fit time per fold; "
        f"Pipeline(StandardScaler(), model); quick={args.quick}; torch "
        f"threads={torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
        f"reference: {REFERENCE} in the same run"
    )
    best = {}
    for set_name, (X, y) in data.items():
        print(
            f"\n{set_name}: n={X.shape[0]}, d={X.shape[1]}, "
            f"target mean {y.mean():.3g}, sd {y.std():.3g}"
        )
        print(
            f"{'model':40s} {'R^2':>15s} {'fit s':>8s} {'R^2 - ref':>9s} "
            f"{'time/ref':>8s}"
        )
        rows = {}
        for name, model in models(X.shape[1], args.quick).items():
            if args.models and name not in args.models:
                continue
            start = time.perf_counter()
            rows[name] = evaluate(model, X, y)
            rows[name]["wall_s"] = time.perf_counter() - start
        ref = rows.get(REFERENCE)
        for name, row in rows.items():
            delta = f"{row['r2'] - ref['r2']:+9.3f}" if ref else f"{'':>9s}"
            ratio = f"{row['fit_s'] / ref['fit_s']:7.2f}x" if ref else f"{'':>8s}"
            print(
                f"{name:40s} {row['r2']:7.3f} +- {row['sd']:5.3f} "
                f"{row['fit_s']:8.2f} {delta} {ratio}"
            )
        ours = {k: v for k, v in rows.items() if k in OURS}
        if ours:
            name = max(ours, key=lambda k: ours[k]["r2"])
            best[set_name] = (name, ours[name]["r2"], ref["r2"] if ref else None)
    parts = []
    for set_name, (name, r2, ref) in best.items():
        against = f" vs MLP {ref:.3f}" if ref is not None else ""
        parts.append(f"{set_name} {r2:.3f} ({name}){against}")
    print("RESULT: best of ours: " + "; ".join(parts))


if __name__ == "__main__":
    main()
