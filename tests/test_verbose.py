"""``verbose``: every estimator with iterative training prints its loss per
iteration as :class:`~sklearn.neural_network.MLPRegressor` does
("Iteration 1, loss = 0.12345678"), and prints nothing at ``verbose=0``."""

import math
import re

import numpy as np
import pytest
from scipy.special import erf
from sklearn.base import clone

from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.feature_extraction._two_step_plan import standardise_targets
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)
from tests.test_bad_input import ESTIMATORS, estimator_id, fit_estimator, make_data

ITERATIVE = (
    PartiallyTrainableRegressor,
    FirstLayerGDRegressor,
    TwoStepFeatureLearner,
    TwoStepFeatures,
)
LINE = re.compile(r"Iteration (\d+), loss = (-?\d+\.\d{8})")

iterative_estimators = pytest.mark.parametrize(
    "estimator",
    [e for e in ESTIMATORS if isinstance(e, ITERATIVE)],
    ids=estimator_id,
)


def printed_losses(output: str) -> tuple[list[int], list[float]]:
    matches = [LINE.fullmatch(line) for line in output.splitlines()]
    matches = [m for m in matches if m is not None]
    return [int(m[1]) for m in matches], [float(m[2]) for m in matches]


def test_every_iterative_estimator_has_a_verbose_parameter():
    for estimator in ESTIMATORS:
        if isinstance(estimator, ITERATIVE):
            assert type(estimator)._parameter_constraints["verbose"] == ["verbose"]
            assert estimator.get_params()["verbose"] == 0


@iterative_estimators
def test_verbose_zero_prints_nothing(estimator, capsys):
    X, y = make_data()
    fit_estimator(clone(estimator).set_params(verbose=0), X, y)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ""


@pytest.mark.parametrize(
    "estimator",
    [
        e
        for e in ESTIMATORS
        if isinstance(e, PartiallyTrainableRegressor | FirstLayerGDRegressor)
    ],
    ids=estimator_id,
)
def test_verbose_prints_every_iteration_of_the_loss_curve(estimator, capsys):
    X, y = make_data()
    fitted = fit_estimator(clone(estimator).set_params(verbose=1), X, y)
    iterations, losses = printed_losses(capsys.readouterr().out)
    assert iterations == list(range(1, fitted.n_iter_ + 1))
    assert losses == [float(f"{loss:.8f}") for loss in fitted.loss_curve_]


def correlation_loss(W, a, X, y_std):
    """``-mean(y * a^T gelu(W x) / sqrt(N))`` in float64, from the formula."""
    z = X @ W.T
    gelu = z * 0.5 * (1.0 + erf(z / math.sqrt(2.0)))
    return -np.mean(y_std * (gelu @ a) / math.sqrt(len(a)))


@pytest.mark.parametrize("estimator_class", [TwoStepFeatureLearner, TwoStepFeatures])
def test_two_step_verbose_prints_the_loss_before_each_step(estimator_class, capsys):
    # Reused batch: both steps run on the step split; the printed loss is the
    # correlation loss at the start of each step, W_0 then W_1.
    X, y = make_data()
    fitted = estimator_class(
        hidden_layer_sizes=16, random_state=0, dtype="float64", verbose=1
    ).fit(X, y)
    iterations, losses = printed_losses(capsys.readouterr().out)
    assert iterations == [1, 2]
    steps = ~getattr(fitted, "readout_mask_", np.zeros(len(X), dtype=bool))
    y_std = standardise_targets(y[steps])
    a = fitted.second_layer_weights_
    for printed, W in zip(losses, fitted.first_layer_weights_[:2], strict=True):
        assert printed == pytest.approx(
            correlation_loss(W, a, X[steps], y_std), abs=1e-8
        )


def test_two_step_verbose_prints_no_step_for_zero_steps(capsys):
    X, y = make_data()
    TwoStepFeatures(hidden_layer_sizes=16, n_steps=0, verbose=1).fit(X, y)
    assert capsys.readouterr().out == ""
