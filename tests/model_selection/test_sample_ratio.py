from functools import partial

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.base import BaseEstimator
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.decomposition import SpectralEstimator
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.metrics import estimator_overlap, neuron_overlap
from sklearn_pt.model_selection import sample_ratio_curve, sample_ratio_threshold
from sklearn_pt.neural_network import FirstLayerGDRegressor

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
                neuron_overlap(fitted.first_layer_weights_, theta)
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
    diverging = FirstLayerGDRegressor(
        2, activation="quadratic", learning_rate_init=50.0
    )
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
    stable = FirstLayerGDRegressor(2, activation="quadratic", learning_rate_init=0.05)
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


def test_test_loss_criterion_thresholds_the_loss_over_the_trivial_predictors():
    reg = FirstLayerGDRegressor(
        4, activation="quadratic", learning_rate_init=0.15, max_iter=300
    )
    curve = sample_ratio_curve(
        reg,
        phase_retrieval,
        deltas=[1.0, 8.0],
        n_features=40,
        n_repeats=3,
        criterion="test_loss",
        success=0.5,
        n_test=400,
    )
    ratios = curve.test_loss_ratios
    assert ratios.shape == (2, 3) and np.isfinite(ratios).all()
    # Below the threshold the network does not beat the mean much; far above
    # it, it fits the target.
    assert ratios[0].min() > 0.5 > 0.1 > ratios[1].max()
    np.testing.assert_array_equal(curve.successes, ratios < 0.5)
    assert curve.conditions == {
        "estimator": "FirstLayerGDRegressor",
        "n_features": 40,
        "width": 4,
        "activation": "quadratic",
        "max_iter": 300,
        "learning_rate_init": 0.15,
        "init": "random",
        "criterion": "test_loss",
        "success": 0.5,
    }
    # The overlap criterion measures no test loss, and the same fits (the
    # training samples are the first n of the same draw) give the same
    # overlaps.
    by_overlap = sample_ratio_curve(
        reg, phase_retrieval, deltas=[1.0, 8.0], n_features=40, n_repeats=3
    )
    assert np.isnan(by_overlap.test_loss_ratios).all()
    np.testing.assert_allclose(by_overlap.overlaps, curve.overlaps)


class _ThresholdedRegressor(BaseEstimator):
    """Succeeds exactly when n / d exceeds a per-seed threshold in [1, 4)."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        self.delta_ = X.shape[0] / X.shape[1]
        self.threshold_ = 1.0 + 3.0 * ((self.random_state * 0.618034) % 1.0)
        return self


def _passes(estimator, directions):
    return estimator.delta_ > estimator.threshold_


def test_bisection_finds_the_crossing_of_known_per_seed_thresholds():
    n_features = 400  # n = round(delta * d) resolves delta to 2.5e-3
    kwargs = dict(
        deltas=[0.5, 2.0, 3.0, 5.0],
        n_features=n_features,
        success=_passes,
        overlap=lambda est, theta: 0.0,
    )
    found = sample_ratio_threshold(
        _ThresholdedRegressor(), phase_retrieval, n_repeats=9, n_refinements=5, **kwargs
    )
    thresholds = np.sort(
        [
            _ThresholdedRegressor(int(s)).fit(np.ones((1, 1)), None).threshold_
            for s in found.seeds
        ]
    )
    median = thresholds[4]  # the rate first reaches 5/9 >= 1/2 just above it
    low, high = found.bracket
    grid = np.asarray(kwargs["deltas"])
    above = np.searchsorted(grid, median)  # the grid interval bisected
    assert high - low == pytest.approx((grid[above] - grid[above - 1]) / 2**5)
    assert low <= median <= high
    assert abs(found.threshold - median) <= high - low
    assert len(found.deltas) == 4 + 5 and np.all(np.diff(found.deltas) > 0)
    np.testing.assert_allclose(found.success_rate, found.successes.mean(axis=1))
    # The bootstrap interval covers the threshold and spans the spread of the
    # per-seed thresholds around the median, not the whole grid.
    assert found.interval[0] <= found.threshold <= found.interval[1]
    assert thresholds[0] - 0.1 <= found.interval[0] < found.interval[1]
    assert found.interval[1] <= thresholds[-1] + 0.1
    # More seeds give a narrower interval.
    many = sample_ratio_threshold(
        _ThresholdedRegressor(), phase_retrieval, n_repeats=64, **kwargs
    )
    assert np.ptp(many.interval) < np.ptp(found.interval)
    assert many.conditions["level"] == 0.5 and many.conditions["n_repeats"] == 64


def test_threshold_at_the_ends_of_the_grid():
    kwargs = dict(n_features=400, success=_passes, overlap=lambda e, t: 0.0)
    never = sample_ratio_threshold(
        _ThresholdedRegressor(), phase_retrieval, deltas=[0.2, 0.5], **kwargs
    )
    assert np.isnan(never.threshold) and never.bracket is None
    assert never.interval == (np.inf, np.inf)
    always = sample_ratio_threshold(
        _ThresholdedRegressor(), phase_retrieval, deltas=[4.5, 6.0], **kwargs
    )
    assert always.threshold == 4.5 and always.bracket is None


def test_threshold_and_criterion_errors_say_what_to_do():
    base = dict(deltas=[1.0, 2.0], n_features=5, n_repeats=1)
    for bad, match in [
        (dict(criterion="loss"), "criterion must be one of"),
        (dict(criterion="test_loss", n_test=0), "n_test >= 1"),
        (dict(n_test=-1), "n_test must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            sample_ratio_curve(SpectralEstimator(), phase_retrieval, **(base | bad))
    for bad, match in [
        (dict(deltas=[2.0, 1.0]), "strictly increasing"),
        (dict(n_refinements=-1), "n_refinements must be"),
        (dict(level=0.0), "level must be"),
        (dict(confidence=1.0), "confidence must be"),
        (dict(n_bootstrap=-1), "n_bootstrap must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            sample_ratio_threshold(SpectralEstimator(), phase_retrieval, **(base | bad))


def test_stacked_strategy_gives_the_sequential_fits():
    reg = FirstLayerGDRegressor(
        3, activation="quadratic", learning_rate_init=0.1, max_iter=60
    )
    kwargs = dict(
        deltas=[1.0, 3.0],
        n_features=25,
        n_repeats=3,
        criterion="test_loss",
        n_test=100,
    )
    stacked = sample_ratio_curve(reg, phase_retrieval, strategy="stacked", **kwargs)
    sequential = sample_ratio_curve(
        reg, phase_retrieval, strategy="sequential", **kwargs
    )
    np.testing.assert_allclose(stacked.overlaps, sequential.overlaps, rtol=1e-9)
    np.testing.assert_allclose(
        stacked.test_loss_ratios, sequential.test_loss_ratios, rtol=1e-9
    )
    np.testing.assert_array_equal(stacked.successes, sequential.successes)
    with pytest.raises(ValueError, match="the estimator is a pipeline"):
        sample_ratio_curve(
            make_pipeline(FunctionTransformer(), reg),
            phase_retrieval,
            strategy="stacked",
            deltas=[1.0],
            n_features=5,
        )
    with pytest.raises(ValueError, match="SpectralEstimator fits cannot be stacked"):
        sample_ratio_curve(
            SpectralEstimator(),
            phase_retrieval,
            strategy="stacked",
            deltas=[1.0],
            n_features=5,
        )
    with pytest.raises(ValueError, match="strategy must be one of"):
        sample_ratio_curve(
            reg, phase_retrieval, strategy="fast", deltas=[1.0], n_features=5
        )


def test_verbose_shows_a_progress_bar_over_the_runs(capsys):
    reg = FirstLayerGDRegressor(2, activation="quadratic", max_iter=3)
    kwargs = dict(deltas=[1.0, 2.0], n_features=10, n_repeats=2, strategy="sequential")
    sample_ratio_curve(reg, phase_retrieval, verbose=1, **kwargs)
    shown = capsys.readouterr()
    sample_ratio_curve(reg, phase_retrieval, verbose=0, **kwargs)
    quiet = capsys.readouterr()
    assert shown.out == "" and "sample_ratio_curve" in shown.err and "4/4" in shown.err
    assert quiet.out == quiet.err == ""
