"""Parallel model selection and thread settings.

``GridSearchCV(n_jobs=2)`` must give the serial scores with joblib's process
(loky) and thread backends: every fit draws from its own local generator, so
neither worker order nor shared threads change a result. Fitting must leave
torch's global thread settings as they were.
"""

import warnings

import joblib
import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from sklearn_pt.neural_network import PartiallyTrainableRegressor, TwoStepFeatureLearner
from tests._numerics import assert_same_math
from tests.test_bad_input import ESTIMATORS, estimator_id, fit_estimator, make_data

SEARCHES = {
    "PartiallyTrainableRegressor": (
        PartiallyTrainableRegressor(
            hidden_layer_sizes=(16,),
            max_iter=15,
            learning_rate_init=1e-2,
            random_state=0,
            dtype="float64",
        ),
        {"trainable_proportion": [0.25, 1.0]},
    ),
    "TwoStepFeatureLearner": (
        TwoStepFeatureLearner(hidden_layer_sizes=16, random_state=0, dtype="float64"),
        {"alpha": [0.1, 10.0]},
    ),
}


def cv_scores(estimator, grid, n_jobs):
    X, y = make_data()
    search = GridSearchCV(
        estimator, grid, cv=KFold(3), n_jobs=n_jobs, error_score="raise"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at tiny max_iter
        search.fit(X, y)
    results = search.cv_results_
    return np.array([results[f"split{i}_test_score"] for i in range(3)])


@pytest.mark.parametrize("backend", ["loky", "threading"])
@pytest.mark.parametrize("name", list(SEARCHES))
def test_parallel_grid_search_gives_the_serial_scores(name, backend):
    estimator, grid = SEARCHES[name]
    serial = cv_scores(estimator, grid, n_jobs=None)
    with joblib.parallel_backend(backend, n_jobs=2):
        parallel = cv_scores(estimator, grid, n_jobs=2)
    assert np.all(np.isfinite(serial))
    # A worker's thread count may differ from this process's (loky gives
    # each one thread), and with it the BLAS summation order: the scores
    # agree to the estimator's precision, not bitwise.
    assert_same_math(parallel, serial, dtype=getattr(estimator, "dtype", "float64"))


def thread_settings():
    return torch.get_num_threads(), torch.get_num_interop_threads()


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=estimator_id)
def test_fit_and_predict_leave_torch_thread_settings_alone(estimator):
    X, y = make_data()
    before = thread_settings()
    fitted = fit_estimator(clone(estimator), X, y)
    for method in ("predict", "transform"):
        if hasattr(fitted, method):
            getattr(fitted, method)(X)
    assert thread_settings() == before


def test_threaded_search_leaves_torch_thread_settings_alone():
    estimator, grid = SEARCHES["PartiallyTrainableRegressor"]
    before = thread_settings()
    with joblib.parallel_backend("threading", n_jobs=2):
        cv_scores(estimator, grid, n_jobs=2)
    assert thread_settings() == before
