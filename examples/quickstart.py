"""
Quickstart: from random features (P=0) to a fully trainable network (P=1)
=========================================================================

Fits :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` for a few
trainable proportions ``P`` on a smooth target on the sphere and prints the
train and test mean squared errors. Training error falls fast for small ``P``
and then saturates: most of the gain of full training comes from training a
small fraction of the neurons.

Run with ``python examples/quickstart.py`` (about half a minute on a laptop
CPU; ``SKLEARN_PT_EXAMPLE_SCALE=small`` runs a reduced version, 600 samples
and width 64, in a few seconds).
"""

import os

import numpy as np
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split

from sklearn_pt.neural_network import PartiallyTrainableRegressor

SMALL = os.environ.get("SKLEARN_PT_EXAMPLE_SCALE") == "small"
n_samples, width = (600, 64) if SMALL else (2000, 256)
proportions = (0.0, 0.1, 0.5, 1.0) if SMALL else (0.0, 0.05, 0.1, 0.25, 0.5, 1.0)

rng = np.random.default_rng(0)
X = rng.normal(size=(n_samples, 5))
X /= np.linalg.norm(X, axis=1, keepdims=True)  # inputs on the sphere S^4
y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]) + X[:, 2] ** 2
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

print(f"{'P':>5} {'trainable':>9} {'train MSE':>10} {'test MSE':>10} {'epochs':>6}")
for proportion in proportions:
    reg = PartiallyTrainableRegressor(
        hidden_layer_sizes=(width,),
        trainable_proportion=proportion,
        learning_rate_init=1e-2,
        max_iter=100 if SMALL else 300,
        tol=1e-6,
        n_iter_no_change=20,
        alpha=1e-4,
        project_to_sphere=True,  # the paper's design on the sphere
        random_state=0,
    ).fit(X_train, y_train)
    train = mean_squared_error(y_train, reg.predict(X_train))
    test = mean_squared_error(y_test, reg.predict(X_test))
    n_trainable = int(reg.trainable_masks_[0].sum())
    row = f"{proportion:5.2f} {n_trainable:9d} {train:10.5f} {test:10.5f}"
    print(f"{row} {reg.n_iter_:6d}")
