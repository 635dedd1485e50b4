"""The library's configuration reaches joblib workers (processes and threads)."""

import pytest
import torch
from joblib import Parallel, parallel_config
from sklearn.datasets import make_regression
from tqdm import tqdm

import sklearn_pt
from sklearn_pt._parallel import delayed, run_tasks
from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.model_selection import proportion_curve, sample_ratio_curve
from sklearn_pt.neural_network import FirstLayerGDRegressor, PartiallyTrainableRegressor


def _threads_seen(*args):
    """What a worker sees: the library's setting and torch's thread count."""
    return float(sklearn_pt.get_config()["torch_threads"] or 0) + 100 * (
        torch.get_num_threads() == 1
    )


def _phase_retrieval(n_samples, n_features, random_state):
    return make_phase_retrieval(
        n_samples, n_features, random_state=random_state, return_directions=True
    )


BACKENDS = ["loky", "threading"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_delayed_carries_the_library_config_and_applies_it_to_torch(backend):
    with parallel_config(backend=backend), sklearn_pt.config_context(torch_threads=1):
        seen = Parallel(n_jobs=2)(delayed(_threads_seen)() for _ in range(2))
    assert seen == [101.0, 101.0]
    # Outside the context the worker sees the default again.
    with parallel_config(backend=backend):
        seen = Parallel(n_jobs=2)(delayed(sklearn_pt.get_config)() for _ in range(2))
    assert [c["torch_threads"] for c in seen] == [None, None]


@pytest.mark.parametrize("backend", BACKENDS)
def test_proportion_curve_workers_see_torch_threads(backend):
    X, y = make_regression(n_samples=30, n_features=3, random_state=0)
    reg = PartiallyTrainableRegressor(hidden_layer_sizes=(4,), max_iter=1)
    with parallel_config(backend=backend), sklearn_pt.config_context(torch_threads=1):
        curve = proportion_curve(
            reg,
            X,
            y / y.std(),
            proportions=[0.0, 1.0],
            cv=2,
            scoring=_threads_seen,
            strategy="sequential",
            n_jobs=2,
        )
        train, test = curve.train_scores, curve.test_scores
    assert (test == 101.0).all() and (train == 101.0).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_sample_ratio_curve_workers_see_torch_threads(backend):
    reg = FirstLayerGDRegressor(2, max_iter=1)
    with parallel_config(backend=backend), sklearn_pt.config_context(torch_threads=1):
        curve = sample_ratio_curve(
            reg,
            _phase_retrieval,
            deltas=[2.0, 3.0],
            n_features=5,
            n_repeats=2,
            overlap=_threads_seen,
            n_jobs=2,
        )
    assert (curve.overlaps == 101.0).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_tasks_carries_the_config_past_the_first_batch(backend):
    # joblib makes the tasks after its first batch in a thread of its own,
    # where the thread-local settings are the defaults.
    bar = tqdm(disable=True)
    with parallel_config(backend=backend), sklearn_pt.config_context(torch_threads=1):
        seen = run_tasks(
            (delayed(_threads_seen)() for _ in range(40)), n_jobs=2, bar=bar
        )
    assert seen == [101.0] * 40
