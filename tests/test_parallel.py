"""The library's configuration reaches joblib workers (processes and threads)."""

import os

import numpy as np
import pytest
import torch
from joblib import Parallel, parallel_config
from sklearn.datasets import make_regression
from tqdm import tqdm

import sklearn_pt
from sklearn_pt._parallel import delayed, release_freed_memory, run_tasks
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


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _fragment_the_heap(n_blocks: int = 4000, block_bytes: int = 64 * 1024):
    """Allocate ``n_blocks`` heap blocks (below glibc's mmap threshold) and
    free all but every tenth: the freed pages lie between live ones, where
    ``free`` cannot return them to the system."""
    blocks = [np.ones(block_bytes // 8) for _ in range(n_blocks)]
    return blocks[::10]


@pytest.mark.skipif(
    not release_freed_memory(), reason="no glibc malloc_trim on this platform"
)
def test_release_freed_memory_returns_a_fragmented_heap():
    kept = _fragment_the_heap()
    before = _resident_bytes()
    assert release_freed_memory()
    released = before - _resident_bytes()
    # About 0.9 * 4000 * 64 KiB = 225 MiB lie freed between the kept blocks.
    assert released > 100 * 2**20, released
    assert len(kept) == 400


_LIVE = []


def _fragmenting_task() -> int:
    """Resident bytes at the start; leaves the heap's top block alive, so
    that only a trim can return the freed pages below it."""
    before = _resident_bytes()
    _LIVE.append(_fragment_the_heap()[-1])
    return before


@pytest.mark.skipif(
    not release_freed_memory(), reason="no glibc malloc_trim on this platform"
)
def test_a_task_returns_the_memory_it_freed():
    # Without the release after each task, the second task would see the
    # first one's high-water mark (about 225 MiB more).
    before, after = Parallel(n_jobs=1)(
        [delayed(_fragmenting_task)(), delayed(_resident_bytes)()]
    )
    assert after - before < 100 * 2**20, (before, after)
