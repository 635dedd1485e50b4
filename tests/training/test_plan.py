"""The estimator protocol: fit is plan_fit, run, complete."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_pt._training import FitPlan
from sklearn_pt.exceptions import ConvergenceWarning
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.model_selection import fit_stacked
from sklearn_pt.model_selection._stacked import stacked_fit_unsupported
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)

ESTIMATORS = [
    PartiallyTrainableRegressor((8,), trainable_proportion=0.5, max_iter=5),
    PartiallyTrainableRegressor((8,), trainable_proportion=0.0, readout="ridge"),
    PartiallyTrainableRegressor((8,), solver="lbfgs", max_iter=5),
    FirstLayerGDRegressor(hidden_layer_sizes=3, max_iter=5),
    TwoStepFeatureLearner(hidden_layer_sizes=8),
    TwoStepFeatures(hidden_layer_sizes=8),
]


def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    return X, X[:, 0] ** 2 + 0.1 * rng.normal(size=60)


def weights(module):
    return [p.detach().clone() for p in module.parameters()]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e))
def test_fit_is_plan_run_complete(estimator):
    """Running the plan trains its module, and completing it gives the fit."""
    X, y = data()
    estimator = clone(estimator).set_params(random_state=0, dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = clone(estimator).fit(X, y)
        plan = clone(estimator).plan_fit(X, y)
        assert isinstance(plan, FitPlan)
        start = weights(plan.module)
        assert plan.X.shape[0] <= len(X) and plan.max_iter >= 0
        result = plan.run()
    trained = weights(plan.module)
    if plan.trains and plan.max_iter:
        assert any(not torch.equal(a, b) for a, b in zip(start, trained, strict=True))
    again = plan.complete(result)
    for name in ("coefs_", "first_layer_weights_"):
        if hasattr(fitted, name):
            for a, b in zip(getattr(fitted, name), getattr(again, name), strict=True):
                np.testing.assert_array_equal(a, b)
    output = "predict" if hasattr(fitted, "predict") else "transform"
    np.testing.assert_array_equal(getattr(again, output)(X), getattr(fitted, output)(X))


class Subclassed(PartiallyTrainableRegressor):
    """A subclass keeps the protocol, so the sweep stacks its fits."""


def test_the_stacked_fit_needs_the_protocol_not_a_class():
    X, y = data()
    estimators = [
        Subclassed(
            (8,), trainable_proportion=p, max_iter=5, random_state=0, dtype="float64"
        )
        for p in (0.0, 0.5)
    ]
    assert stacked_fit_unsupported(estimators[0], "trainable_proportion") is None
    reason = stacked_fit_unsupported(FirstLayerGDRegressor(), "trainable_proportion")
    assert "has no parameter 'trainable_proportion'" in reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        stacked = fit_stacked(estimators, X, y)
        alone = clone(estimators[1]).fit(X, y)
    np.testing.assert_allclose(stacked[1].predict(X), alone.predict(X), rtol=1e-10)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e))
def test_coefs_0_is_the_first_layer_of_every_network_estimator(estimator):
    """One attribute for the first-layer weights: coefs_[0], (n_features,
    width), as MLPRegressor's, equal to the weights the network uses."""
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = clone(estimator).set_params(random_state=0).fit(X, y)
    first = fitted.coefs_[0]
    assert first.shape[0] == X.shape[1]
    assert fitted.intercepts_[0].shape == (first.shape[1],)
    module = getattr(fitted.module_, "feature_map", fitted.module_)
    if hasattr(module, "hidden_layers"):
        weight = module.hidden_layers[0].weight
    else:
        weight = module.weight
    np.testing.assert_array_equal(first, weight.detach().numpy().T)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e))
def test_parameters_are_validated_once_per_fit(estimator, monkeypatch):
    """``fit`` validates the parameters (``_fit_context``) and its
    ``plan_fit`` does not again; ``plan_fit`` called alone validates them."""
    X, y = data()
    calls = []
    validate = type(estimator)._validate_params

    def counted(self):
        calls.append(self)
        return validate(self)

    monkeypatch.setattr(type(estimator), "_validate_params", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clone(estimator).fit(X, y)
    assert len(calls) == 1
    bad = clone(estimator).set_params(random_state="not a seed")
    with pytest.raises(ValueError, match="random_state"):
        bad.plan_fit(X, y)
    assert len(calls) == 2
