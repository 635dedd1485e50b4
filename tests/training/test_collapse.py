"""A fit that learned nothing from X warns (CollapseWarning); a fit that did
stays quiet. The collapsed cases are found, not constructed: the settings
below end with constant or no-better-than-the-mean predictions."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.datasets import make_friedman1
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from sklearn_pt._training import NO_FIT_R2, warn_if_collapsed, warn_if_constant_features
from sklearn_pt.exceptions import CollapseWarning, DivergenceError
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(n_samples=300, random_state=0)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def dead_beyond_the_data(z):
    """A ReLU whose kink lies far outside W x for standardised inputs."""
    return torch.relu(z - 100.0)


COLLAPSED = {
    # Plain GD with a step just under divergence: R^2 < 0 after 50 steps.
    "first-layer": FirstLayerGDRegressor(
        4, activation="relu", learning_rate_init=12, max_iter=50, random_state=0
    ),
    # Adam at learning rate 1 on a width-4 network: nearly constant outputs.
    "partial": PartiallyTrainableRegressor(
        4, learning_rate_init=1.0, max_iter=50, random_state=0
    ),
    "two-step learner": TwoStepFeatureLearner(
        16, activation=dead_beyond_the_data, random_state=0
    ),
    "two-step features": TwoStepFeatures(
        16, activation=dead_beyond_the_data, random_state=0
    ),
}


@pytest.mark.parametrize("name", COLLAPSED)
def test_a_fit_that_learned_nothing_warns_with_the_fix(name, friedman):
    with pytest.warns(CollapseWarning, match=r"(constant|mean of y|depend on X)") as w:
        COLLAPSED[name].fit(*friedman)
    message = str(w[0].message)
    assert any(fix in message for fix in ("Lower", "raise max_iter"))
    assert issubclass(CollapseWarning, ConvergenceWarning)


@pytest.mark.parametrize(
    "estimator",
    [
        FirstLayerGDRegressor(8, learning_rate_init=0.5, max_iter=200, random_state=0),
        PartiallyTrainableRegressor(32, max_iter=300, random_state=0),
        PartiallyTrainableRegressor(32, trainable_proportion=0, readout="ridge"),
        TwoStepFeatureLearner(64, random_state=0),
        TwoStepFeatures(64, random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_fit_that_learned_stays_quiet(estimator, friedman):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        estimator.fit(*friedman)


def test_the_issues_case_raises_instead_of_predicting_a_constant(friedman):
    # FirstLayerGDRegressor(4, learning_rate_init=100, max_iter=50) on
    # standardised friedman1: the loss blows up, a named error, not silence.
    reg = FirstLayerGDRegressor(4, learning_rate_init=100, max_iter=50, random_state=0)
    with pytest.raises(DivergenceError, match="learning_rate_init"):
        reg.fit(*friedman)


def test_warn_if_collapsed_rules():
    y = np.linspace(-1, 1, 50)
    quiet = {"fix": "x"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        assert not warn_if_collapsed(0.5 * y, y, **quiet)  # R^2 = 0.75
        assert not warn_if_collapsed(np.zeros(50), np.ones(50), **quiet)  # y constant
        assert not warn_if_collapsed(np.zeros((1, 1)), np.ones((1, 1)), **quiet)
    with pytest.warns(CollapseWarning, match="predicts a constant"):
        assert warn_if_collapsed(np.full(50, 3.0), y, **quiet)
    noise = np.random.default_rng(0).normal(size=50)
    r2 = 1 - np.sum((y - noise) ** 2) / np.sum((y - y.mean()) ** 2)
    assert r2 < NO_FIT_R2
    with pytest.warns(CollapseWarning, match="no better than predicting the mean"):
        assert warn_if_collapsed(noise, y, **quiet)
    # Two outputs: one well fitted, one constant: the average R^2 decides.
    Y = np.column_stack([y, y**2])
    good = np.column_stack([y, y**2 + 0.01])
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        assert not warn_if_collapsed(torch.as_tensor(good), torch.as_tensor(Y), **quiet)


def test_warn_if_constant_features():
    with pytest.warns(CollapseWarning, match="do not depend on X"):
        assert warn_if_constant_features(np.ones((5, 3)), fix="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        features = np.zeros((5, 3))
        features[0, 2] = 1.0
        assert not warn_if_constant_features(features, fix="x")


@pytest.mark.parametrize("seed", range(20))
def test_the_probed_check_decides_as_the_full_one(seed):
    """A function of the rows gives the array's decision, whatever rows vary
    (the probe's rows, later rows, none) and however large the values; the
    full features are computed only when the probe looks constant."""
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(2, 200)), int(rng.integers(1, 4))
    features = np.full((n, width), rng.normal() * 10.0 ** rng.integers(-3, 8))
    if seed % 4:  # one entry moved by about the tolerance, anywhere
        row, column = rng.integers(n), rng.integers(width)
        scale = np.abs(features).max() + 1
        features[row, column] += rng.choice([0.5, 1.5, 2.5, 1e3]) * 1e-6 * scale
    calls = []

    def compute(rows):
        calls.append(rows)
        return features[rows]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollapseWarning)
        expected = warn_if_constant_features(features, fix="x")
        assert warn_if_constant_features(compute, fix="x", n_probe=16) == expected
    if len(calls) == 1:  # decided on the probe: the features vary
        assert not expected and calls == [slice(0, 16)]
