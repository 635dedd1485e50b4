"""Shared fixtures and the ``gpu`` marker."""

import numpy as np
import pytest
import torch


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


@pytest.fixture
def sphere_regression():
    return make_sphere_regression()


@pytest.fixture
def no_cuda(monkeypatch):
    """Pretend that this machine has no CUDA device."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
