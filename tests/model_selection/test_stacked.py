"""fit_stacked: one entry point that stacks the fits of every paper's sweep."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge

from sklearn_pt.datasets import make_single_index
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.model_selection import STACKED_PARAMETERS, fit_stacked
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)

RTOL = 1e-9  # float64: the same arithmetic in another order
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

GRIDS = {
    "partial": (
        PartiallyTrainableRegressor((16,), max_iter=15, dtype="float64"),
        [
            {"trainable_proportion": p, "random_state": s}
            for p in (0.0, 0.5)
            for s in (0, 1)
        ],
    ),
    "first_layer": (
        FirstLayerGDRegressor(
            hidden_layer_sizes=4, activation="quadratic", max_iter=30, dtype="float64"
        ),
        [{"random_state": s} for s in (0, 1, 2)],
    ),
    "two_step": (
        TwoStepFeatureLearner(hidden_layer_sizes=24, dtype="float64"),
        [
            {"step_size_exponents": e, "random_state": s}
            for e in ((0.0, 0.0), (0.3, 0.45))
            for s in (0, 1)
        ],
    ),
    "two_step_features": (
        TwoStepFeatures(hidden_layer_sizes=24, dtype="float64"),
        [{"step_size_exponents": (0.2, 0.3), "random_state": s} for s in (0, 1)],
    ),
}


def outputs(estimator, X):
    if hasattr(estimator, "predict"):
        return estimator.predict(X)
    return estimator.transform(X)


@pytest.mark.parametrize("name", GRIDS)
def test_fit_stacked_equals_each_fit(name):
    template, grid = GRIDS[name]
    X, y = make_single_index(160, 12, random_state=0)
    estimators = [clone(template).set_params(**params) for params in grid]
    fitted = fit_stacked(estimators, X, y)
    assert all(f is e for f, e in zip(fitted, estimators, strict=True))
    results = []
    for estimator, params in zip(fitted, grid, strict=True):
        alone = clone(template).set_params(**params).fit(X, y)
        result = outputs(estimator, X)
        np.testing.assert_allclose(result, outputs(alone, X), rtol=RTOL, atol=1e-10)
        results.append(result)
    # The grid's fits differ (else nothing was compared).
    assert not np.allclose(results[0], results[-1])


def test_each_stacked_class_names_its_parameters():
    from sklearn_pt.model_selection._stacked import _STACKED_FITS

    assert set(_STACKED_FITS) == set(STACKED_PARAMETERS)
    for kind, names in STACKED_PARAMETERS.items():
        assert "random_state" in names
        assert set(names) <= set(kind().get_params()), kind


def test_a_diverging_fit_is_left_as_it_was_and_the_others_fit():
    X, y = make_single_index(120, 10, random_state=1)
    estimators = [
        TwoStepFeatureLearner(hidden_layer_sizes=12, random_state=s, dtype="float32")
        for s in (0, 1)
    ]
    estimators[1].set_params(step_size_constants=(1e300, 1e300))  # inf in float32
    fitted = fit_stacked(estimators, X, y)
    assert isinstance(fitted[1], DivergenceError)
    assert not hasattr(estimators[1], "module_")
    assert fitted[0] is estimators[0] and hasattr(estimators[0], "module_")


@pytest.mark.parametrize(
    "estimators, match",
    [
        ([], "at least one estimator"),
        (
            [TwoStepFeatureLearner(), FirstLayerGDRegressor()],
            "one class; got FirstLayerGDRegressor, TwoStepFeatureLearner",
        ),
        (
            [Ridge(), Ridge()],
            "cannot stack Ridge fits .* fit each estimator on its own",
        ),
        (
            [
                TwoStepFeatureLearner(hidden_layer_sizes=8),
                TwoStepFeatureLearner(hidden_layer_sizes=9),
            ],
            "in a parameter other than",
        ),
        (
            [
                PartiallyTrainableRegressor(alpha=0.0),
                PartiallyTrainableRegressor(alpha=1.0),
            ],
            "may differ only in",
        ),
    ],
)
def test_bad_groups_get_a_clear_error(estimators, match):
    X, y = make_single_index(40, 5, random_state=0)
    with pytest.raises(ValueError, match=match):
        fit_stacked(estimators, X, y)
