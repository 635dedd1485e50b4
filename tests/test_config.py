"""``sklearn_pt.config_context(torch_threads=...)``: the library's fits run
with the configured torch threads, and torch's setting is restored after
every call, after the block and after an exception."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import sklearn_pt
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)


@pytest.fixture
def two_threads():
    """torch set to two threads for the test (one would hide a change to 1)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    yield 2
    torch.set_num_threads(previous)


def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    return X, X[:, 0] ** 2 + X[:, 1]


def recording_activation(seen):
    def activation(z):
        seen.append(torch.get_num_threads())
        return torch.tanh(z)

    return activation


def test_defaults_and_set_config_round_trip():
    assert sklearn_pt.get_config() == {"torch_threads": None}
    sklearn_pt.set_config(torch_threads=3)
    try:
        assert sklearn_pt.get_config() == {"torch_threads": 3}
    finally:
        sklearn_pt.set_config(torch_threads=None)
    assert sklearn_pt.get_config() == {"torch_threads": None}


def test_get_config_returns_a_copy():
    config = sklearn_pt.get_config()
    config["torch_threads"] = 5
    assert sklearn_pt.get_config()["torch_threads"] is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, "1", True])
def test_bad_torch_threads_names_it_and_the_fix(bad):
    with pytest.raises(
        ValueError, match=r"torch_threads must be None .*torch_threads=1"
    ):
        with sklearn_pt.config_context(torch_threads=bad):
            pass
    with pytest.raises(ValueError, match="torch_threads must be"):
        sklearn_pt.set_config(torch_threads=bad)
    assert sklearn_pt.get_config()["torch_threads"] is None


def test_fit_runs_with_one_thread_inside_and_torch_is_untouched(two_threads):
    X, y = data()
    seen = []
    reg = FirstLayerGDRegressor(
        hidden_layer_sizes=2,
        activation=recording_activation(seen),
        max_iter=3,
        random_state=0,
    )
    with sklearn_pt.config_context(torch_threads=1):
        assert sklearn_pt.get_config()["torch_threads"] == 1
        # torch itself is changed only while a call of the library runs
        assert torch.get_num_threads() == two_threads
        reg.fit(X, y)
        assert torch.get_num_threads() == two_threads
        reg.predict(X)
    assert seen and set(seen) == {1}
    assert torch.get_num_threads() == two_threads
    assert sklearn_pt.get_config()["torch_threads"] is None
    seen.clear()
    reg.fit(X, y)  # outside the block: torch's own setting
    assert set(seen) == {two_threads}


def test_restored_after_an_exception(two_threads):
    X, y = data()
    with pytest.raises(ValueError, match="Input y contains NaN"):
        with sklearn_pt.config_context(torch_threads=1):
            PartiallyTrainableRegressor(max_iter=2).fit(X, np.full_like(y, np.nan))
    assert torch.get_num_threads() == two_threads
    assert sklearn_pt.get_config()["torch_threads"] is None

    with pytest.raises(RuntimeError, match="inside"):
        with sklearn_pt.config_context(torch_threads=1):
            raise RuntimeError("inside")
    assert sklearn_pt.get_config()["torch_threads"] is None


def test_nested_contexts_restore_the_outer_value():
    with sklearn_pt.config_context(torch_threads=1):
        with sklearn_pt.config_context(torch_threads=3):
            assert sklearn_pt.get_config()["torch_threads"] == 3
        with sklearn_pt.config_context():  # None keeps the current value
            assert sklearn_pt.get_config()["torch_threads"] == 1
        assert sklearn_pt.get_config()["torch_threads"] == 1
    assert sklearn_pt.get_config()["torch_threads"] is None


def test_settings_are_per_python_thread():
    seen = {}

    def read():
        seen["other"] = sklearn_pt.get_config()["torch_threads"]

    with sklearn_pt.config_context(torch_threads=1):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    assert seen["other"] is None


@pytest.mark.parametrize(
    "estimator",
    [
        PartiallyTrainableRegressor(hidden_layer_sizes=4, max_iter=2),
        FirstLayerGDRegressor(hidden_layer_sizes=2, max_iter=2),
        TwoStepFeatureLearner(hidden_layer_sizes=4),
        TwoStepFeatures(hidden_layer_sizes=4),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_every_torch_estimator_applies_the_setting(estimator, two_threads, monkeypatch):
    X, y = data()
    calls = []
    original = torch.set_num_threads

    def spy(n):
        calls.append(n)
        original(n)

    monkeypatch.setattr(torch, "set_num_threads", spy)
    with sklearn_pt.config_context(torch_threads=1):
        estimator.fit(X, y)
    assert calls[:1] == [1] and calls[-1] == two_threads
    assert torch.get_num_threads() == two_threads
