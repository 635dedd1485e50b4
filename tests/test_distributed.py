"""Sweeps and grid searches run unchanged on a dask.distributed cluster.

Every sweep in :mod:`sklearn_pt.model_selection` dispatches its fits through
joblib, so ``joblib.parallel_backend("dask")`` sends them to dask workers
(separate processes here: estimators, data generators and scoring callables
are pickled). Each test compares the distributed result with the same sweep
run serially in this process, value for value.
"""

import logging
import os
from contextlib import contextmanager
from functools import partial

import numpy as np
import pytest
import torch
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.decomposition import SpectralEstimator
from sklearn_pt.model_selection import proportion_curve, sample_ratio_curve
from sklearn_pt.neural_network import FirstLayerGDRegressor, PartiallyTrainableRegressor
from tests.conftest import make_sphere_regression

distributed = pytest.importorskip("distributed")
# The fits are short on purpose; their convergence is not what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def dask_client():
    """Two single-threaded worker processes, closed after the module's tests."""
    cluster = distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@contextmanager
def single_torch_thread():
    """Run the serial reference with one torch thread, as each dask worker does.

    The distributed nanny starts its workers with ``OMP_NUM_THREADS=1``; a
    different thread count in this process could change the order of float
    reductions and so the last bits of a result.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def small_regressor(**params):
    return PartiallyTrainableRegressor(
        hidden_layer_sizes=(16,), max_iter=15, learning_rate_init=1e-2, **params
    )


def test_workers_are_separate_processes(dask_client):
    """The other tests would prove little if the fits ran in this process."""
    worker_pids = set(dask_client.run(os.getpid).values())
    assert len(worker_pids) == 2
    assert os.getpid() not in worker_pids


def test_proportion_curve_matches_serial(dask_client):
    X, y = make_sphere_regression(n_samples=150)
    sweep = partial(
        proportion_curve,
        small_regressor(),
        X,
        y,
        proportions=[0.0, 0.25, 1.0],
        cv=3,
        random_states=[0, 1],
        strategy="sequential",
    )
    with single_torch_thread():
        serial = sweep(n_jobs=1)
    with parallel_backend("dask"):
        dask = sweep(n_jobs=-1)
    for key in ("train_scores", "test_scores"):
        serial_scores, dask_scores = serial[key], dask[key]
        assert serial_scores.shape == (3, 2, 3)
        assert np.all(np.isfinite(serial_scores))
        np.testing.assert_array_equal(dask_scores, serial_scores)


def test_sample_ratio_curve_matches_serial(dask_client):
    make_data = partial(make_phase_retrieval, return_directions=True)
    for estimator in (
        FirstLayerGDRegressor(
            4, activation="quadratic", learning_rate_init=0.15, max_iter=30
        ),
        SpectralEstimator(),
    ):
        sweep = partial(
            sample_ratio_curve,
            estimator,
            make_data,
            deltas=[0.5, 3.0],
            n_features=40,
            n_repeats=3,
        )
        with single_torch_thread():
            serial = sweep(n_jobs=1)
        with parallel_backend("dask"):
            dask = sweep(n_jobs=-1)
        assert serial.overlaps.shape == (2, 3)
        assert np.all((serial.overlaps >= 0) & (serial.overlaps <= 1))
        for key in ("overlaps", "successes", "success_rate", "seeds", "n_samples"):
            np.testing.assert_array_equal(dask[key], serial[key], err_msg=key)


def test_grid_search_matches_serial(dask_client):
    X, y = make_sphere_regression(n_samples=150)
    grid = {"trainable_proportion": [0.0, 0.5, 1.0], "alpha": [1e-4, 1e-1]}

    def search(n_jobs):
        model = GridSearchCV(small_regressor(random_state=0), grid, cv=3, n_jobs=n_jobs)
        return model.fit(X, y)

    with single_torch_thread():
        serial = search(n_jobs=1)
    with parallel_backend("dask"):
        dask = search(n_jobs=-1)
    assert dask.best_params_ == serial.best_params_
    for key in ("mean_test_score", "std_test_score", "rank_test_score"):
        np.testing.assert_array_equal(
            dask.cv_results_[key], serial.cv_results_[key], err_msg=key
        )
    np.testing.assert_array_equal(dask.predict(X), serial.predict(X))
