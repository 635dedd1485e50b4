"""Determinism of every public estimator on the CPU.

The same ``random_state`` gives bitwise-identical outputs across fits and
across a pickle round-trip; ``fit`` leaves the global torch, NumPy and Python
random states alone; ``random_state=None`` gives different fits. GPU results
are not bitwise reproducible (documented in the Notes of
``sklearn_pt._base.TorchEstimatorMixin``), which the ``non_deterministic`` tag
reports.
"""

import pickle
import random

import numpy as np
import pytest
import torch
from sklearn.base import clone

from tests.test_bad_input import (
    ESTIMATORS,
    estimator_id,
    fit_estimator,
    make_data,
    output_of,
)

all_estimators = pytest.mark.parametrize("estimator", ESTIMATORS, ids=estimator_id)
random_estimators = pytest.mark.parametrize(
    "estimator",
    [e for e in ESTIMATORS if "random_state" in e.get_params()],
    ids=estimator_id,
)


def assert_bitwise_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@all_estimators
def test_same_random_state_gives_bitwise_identical_outputs(estimator):
    X, y = make_data()
    X_new, _ = make_data(random_state=1)
    first = fit_estimator(clone(estimator), X, y)
    second = fit_estimator(clone(estimator), X, y)
    assert_bitwise_equal(output_of(first, X_new), output_of(second, X_new))
    # Refitting the same object gives the same model again.
    assert_bitwise_equal(
        output_of(fit_estimator(first, X, y), X_new), output_of(second, X_new)
    )


@all_estimators
def test_pickle_round_trip_gives_bitwise_identical_outputs(estimator):
    X, y = make_data()
    X_new, _ = make_data(random_state=1)
    fitted = fit_estimator(clone(estimator), X, y)
    restored = pickle.loads(pickle.dumps(fitted))
    assert_bitwise_equal(output_of(restored, X_new), output_of(fitted, X_new))


@all_estimators
@pytest.mark.parametrize("random_state", [0, None])
def test_fit_leaves_global_random_states_untouched(estimator, random_state):
    X, y = make_data()
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=random_state)
    torch_state = torch.random.get_rng_state().clone()
    numpy_state = np.random.get_state()
    python_state = random.getstate()
    fitted = fit_estimator(clone(estimator), X, y)
    output_of(fitted, X)
    assert torch.equal(torch.random.get_rng_state(), torch_state)
    after = np.random.get_state()
    assert after[0] == numpy_state[0]
    np.testing.assert_array_equal(after[1], numpy_state[1])
    assert after[2:] == numpy_state[2:]
    assert random.getstate() == python_state


@random_estimators
def test_random_state_none_gives_different_fits(estimator):
    X, y = make_data()
    unseeded = clone(estimator).set_params(random_state=None)
    outputs = [output_of(fit_estimator(clone(unseeded), X, y), X) for _ in range(2)]
    assert not np.array_equal(outputs[0], outputs[1])


def test_only_deterministic_algorithms_lack_a_random_state():
    # A dense eigendecomposition and an SVD need no seed; their repeated fits
    # are bitwise identical (checked above). Every other estimator draws
    # random numbers and must take a random_state.
    unseeded = {
        type(e).__name__ for e in ESTIMATORS if "random_state" not in e.get_params()
    }
    assert unseeded == {"SpectralEstimator", "WeightSpectrum"}


@all_estimators
def test_non_deterministic_tag_is_set_off_the_cpu(estimator):
    has_device = "device" in estimator.get_params()
    tags = clone(estimator).__sklearn_tags__()
    assert tags.non_deterministic is False
    if not has_device:
        # NumPy/SciPy-only estimators: always on the CPU.
        return
    for device in ["cuda", "cuda:0", "auto"]:
        tags = clone(estimator).set_params(device=device).__sklearn_tags__()
        assert tags.non_deterministic is True, device
