from functools import partial

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.linear_model import SpectralEstimator
from sklearn_pt.model_selection import estimator_overlap, sample_ratio_curve
from sklearn_pt.neural_network import FirstLayerGDRegressor, neuron_overlap

phase_retrieval = partial(make_phase_retrieval, return_directions=True)


def test_spectral_success_rate_jumps_between_low_and_high_delta():
    curve = sample_ratio_curve(
        SpectralEstimator(),
        phase_retrieval,
        deltas=[0.2, 3.0],
        n_features=300,
        n_repeats=4,
    )
    np.testing.assert_array_equal(curve.success_rate, [0.0, 1.0])
    assert curve.overlaps.shape == curve.successes.shape == (2, 4)
    np.testing.assert_array_equal(curve.n_samples, [60, 900])
    np.testing.assert_allclose(curve.mean_overlap, curve.overlaps.mean(axis=1))
    assert curve.mean_overlap[0] < 0.3 < 0.7 < curve.mean_overlap[1]


def test_each_run_is_an_independent_fit_with_its_seed():
    reg = FirstLayerGDRegressor(2, max_iter=3)
    curve = sample_ratio_curve(
        reg, phase_retrieval, deltas=[2.0, 4.0], n_features=10, n_repeats=2
    )
    for i, n in enumerate(curve.n_samples):
        for r, seed in enumerate(curve.seeds):
            X, y, theta = phase_retrieval(int(n), 10, random_state=int(seed))
            fitted = FirstLayerGDRegressor(2, max_iter=3, random_state=int(seed)).fit(
                X, y
            )
            assert curve.overlaps[i, r] == pytest.approx(
                neuron_overlap(fitted.coefs_, theta)
            )
    # Parallel fits give the same results (threads: loky workers take seconds
    # to start and import torch).
    with parallel_config(backend="threading"):
        parallel = sample_ratio_curve(
            reg,
            phase_retrieval,
            deltas=[2.0, 4.0],
            n_features=10,
            n_repeats=2,
            n_jobs=2,
        )
    np.testing.assert_array_equal(parallel.overlaps, curve.overlaps)


def test_callable_success_and_overlap_and_pipelines():
    pipeline = make_pipeline(FunctionTransformer(), SpectralEstimator())
    curve = sample_ratio_curve(
        pipeline,
        phase_retrieval,
        deltas=[3.0],
        n_features=50,
        n_repeats=2,
        success=lambda est, theta: est[-1].eigenvalues_[0] > 0,
        overlap=lambda est, theta: 0.25,
    )
    np.testing.assert_array_equal(curve.overlaps, [[0.25, 0.25]])
    np.testing.assert_array_equal(curve.successes, [[True, True]])
    X, y, theta = phase_retrieval(150, 50, random_state=0)
    spectral = SpectralEstimator().fit(X, y)
    assert estimator_overlap(make_pipeline(spectral), theta) == spectral.overlap(theta)


def test_errors_say_what_to_do():
    with pytest.raises(TypeError, match="overlap=callable"):
        estimator_overlap(FunctionTransformer().fit(np.ones((2, 2))), np.ones(2))
    for bad, match in [
        (dict(deltas=[]), "deltas must be"),
        (dict(deltas=[-1.0]), "deltas must be"),
        (dict(n_features=0), "n_features must be"),
        (dict(n_repeats=0), "n_repeats must be"),
        (dict(success="yes"), "success must be"),
        (dict(random_state=np.random.RandomState(0)), "random_state must be"),
    ]:
        kwargs = dict(deltas=[1.0], n_features=5, n_repeats=1) | bad
        with pytest.raises(ValueError, match=match):
            sample_ratio_curve(SpectralEstimator(), phase_retrieval, **kwargs)


def test_diverged_fits_raise_or_count_as_failures():
    # A step far above the stable ~0.04 * width of the quadratic activation.
    diverging = FirstLayerGDRegressor(2, activation="quadratic", learning_rate=50.0)
    kwargs = dict(deltas=[1.0, 4.0], n_features=20, n_repeats=2)
    with pytest.raises(DivergenceError, match="learning_rate"):
        sample_ratio_curve(diverging, phase_retrieval, **kwargs)
    with pytest.warns(UserWarning, match="4 of 4 fits diverged"):
        curve = sample_ratio_curve(
            diverging, phase_retrieval, error_score=0.0, **kwargs
        )
    assert curve.diverged.all()
    np.testing.assert_array_equal(curve.overlaps, 0.0)
    np.testing.assert_array_equal(curve.success_rate, [0.0, 0.0])
    stable = FirstLayerGDRegressor(2, activation="quadratic", learning_rate=0.05)
    curve = sample_ratio_curve(stable, phase_retrieval, error_score=0.0, **kwargs)
    assert not curve.diverged.any()


def test_error_score_is_checked():
    with pytest.raises(ValueError, match="error_score must be 'raise' or a number"):
        sample_ratio_curve(
            SpectralEstimator(),
            phase_retrieval,
            deltas=[1.0],
            n_features=5,
            error_score="ignore",
        )
