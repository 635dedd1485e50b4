import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import scale

from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.model_selection import stable_step_size
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
)


def _data():
    X, y = make_friedman1(120, n_features=6, random_state=0)
    return scale(X), scale(y)


@pytest.mark.parametrize(
    "estimator",
    [
        PartiallyTrainableRegressor((16,), learning_rate_init=1e6, random_state=0),
        PartiallyTrainableRegressor(
            (16,), solver="sgd", learning_rate_init=50.0, random_state=0
        ),
        FirstLayerGDRegressor(4, learning_rate_init=1e4, max_iter=20, random_state=0),
    ],
    ids=["adam", "sgd", "first-layer-gd"],
)
def test_the_step_size_found_fits_and_the_next_larger_diverged(estimator):
    X, y = _data()
    found = stable_step_size(estimator, X, y)
    assert found.parameter == "learning_rate_init"
    assert found.step_size < estimator.learning_rate_init
    assert found.diverged[0] == estimator.learning_rate_init
    np.testing.assert_allclose(found.diverged[-1], found.step_size * 10)
    assert found.estimator.learning_rate_init == found.step_size
    assert found.estimator.predict(X).shape == y.shape
    assert not hasattr(estimator, "n_features_in_")  # the estimator is unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.set_params(learning_rate_init=found.step_size).fit(X, y)
    with pytest.raises(DivergenceError):
        estimator.set_params(learning_rate_init=found.diverged[-1]).fit(X, y)


def test_a_fit_that_does_not_diverge_is_returned_as_it_is():
    X, y = _data()
    estimator = PartiallyTrainableRegressor((8,), max_iter=400, random_state=0)
    found = stable_step_size(estimator, X, y)
    assert found.parameter is None and found.step_size is None
    assert found.diverged == ()
    assert found.estimator.n_iter_ > 0


def test_when_every_try_diverges_the_error_says_what_was_tried():
    X, y = _data()
    estimator = PartiallyTrainableRegressor(
        (8,), learning_rate_init=1e7, random_state=0
    )
    with pytest.raises(DivergenceError) as info:
        stable_step_size(estimator, X, y, max_tries=2)
    message = str(info.value)
    assert re.search(
        r"from 1e\+07 down to 100000 \(2 values, each 10x smaller\)", message
    )
    assert "standardise X" in message


def test_factor_and_max_tries_are_validated():
    X, y = _data()
    with pytest.raises(ValueError, match="factor"):
        stable_step_size(PartiallyTrainableRegressor(), X, y, factor=1.0)
    with pytest.raises(ValueError, match="max_tries"):
        stable_step_size(PartiallyTrainableRegressor(), X, y, max_tries=0)
