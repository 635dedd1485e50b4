"""Shared fixtures, the ``gpu`` marker and thread limits for parallel runs."""

import os

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits


def pytest_configure(config):
    """Share the cores between pytest-xdist workers.

    Each worker would otherwise start one torch and one BLAS thread per core:
    with ``-n 2`` on two cores that oversubscribes the machine and made
    LAPACK-heavy tests 10-50x slower. The limit is set once per worker
    process (test infrastructure, not library behaviour: the library never
    changes thread settings).
    """
    n_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if n_workers > 1:
        threads = max(1, (os.cpu_count() or 1) // n_workers)
        torch.set_num_threads(threads)
        threadpool_limits(limits=threads)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def make_sphere_regression(n_samples=400, n_features=5, random_state=0):
    """Inputs on the unit sphere and a smooth, non-linear target."""
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]) + X[:, 2] ** 2
    return X, y


@pytest.fixture(scope="module")
def one_torch_thread():
    """Run a module's SVDs and matrix products on one torch thread, then
    restore the count (opt in with ``pytestmark``).

    On a shared, oversubscribed machine multi-threaded LAPACK calls were
    measured 10-50 times slower than single-threaded ones; the results do not
    depend on the thread count beyond rounding.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def sphere_regression():
    return make_sphere_regression()


@pytest.fixture
def no_cuda(monkeypatch):
    """Pretend that this machine has no CUDA device."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
