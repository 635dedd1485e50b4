import matplotlib
import numpy as np
import pytest
from sklearn.model_selection import KFold, validation_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_pt.model_selection import PhaseTransitionDisplay, proportion_curve
from sklearn_pt.neural_network import PartiallyTrainableRegressor
from tests.conftest import make_sphere_regression

matplotlib.use("Agg")
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
FAST = dict(hidden_layer_sizes=(16,), max_iter=5, learning_rate_init=1e-2)


def test_matches_validation_curve_per_seed():
    X, y = make_sphere_regression(n_samples=120)
    reg = PartiallyTrainableRegressor(**FAST)
    cv = KFold(3)
    curve = proportion_curve(
        reg,
        X,
        y,
        proportions=[0.0, 0.5, 1.0],
        cv=cv,
        random_states=[0, 7],
        strategy="sequential",
    )
    train, test = curve.train_scores, curve.test_scores
    assert train.shape == test.shape == (3, 2, 3)
    for j, seed in enumerate([0, 7]):
        expected_train, expected_test = validation_curve(
            reg.set_params(random_state=seed),
            X,
            y,
            param_name="trainable_proportion",
            param_range=[0.0, 0.5, 1.0],
            cv=cv,
        )
        np.testing.assert_array_equal(train[:, j], expected_train)
        np.testing.assert_array_equal(test[:, j], expected_test)
    assert not np.array_equal(train[:, 0], train[:, 1])


def test_any_parameter_pipelines_and_parallel_jobs():
    X, y = make_sphere_regression(n_samples=90)
    pipe = make_pipeline(StandardScaler(), PartiallyTrainableRegressor(**FAST))
    kwargs = dict(
        param_name="partiallytrainableregressor__init_scale",
        proportions=[1.0, 5.0],
        cv=3,
        random_states=[0],
    )
    serial = proportion_curve(pipe, X, y, **kwargs)
    parallel = proportion_curve(pipe, X, y, n_jobs=2, **kwargs)
    np.testing.assert_array_equal(serial.test_scores, parallel.test_scores)
    assert serial.train_scores.shape == (2, 1, 3)


def test_bad_arguments():
    X, y = make_sphere_regression(n_samples=30)
    reg = PartiallyTrainableRegressor(**FAST)
    with pytest.raises(ValueError, match="strategy must be"):
        proportion_curve(reg, X, y, strategy="parallel")
    with pytest.raises(ValueError, match="at least one seed"):
        proportion_curve(reg, X, y, random_states=[])
    from sklearn.kernel_ridge import KernelRidge

    with pytest.raises(ValueError, match="no random_state parameter"):
        proportion_curve(KernelRidge(), X, y, param_name="alpha", proportions=[1.0])


def test_display_from_estimator_and_results():
    X, y = make_sphere_regression(n_samples=90)
    reg = PartiallyTrainableRegressor(**FAST)
    display = PhaseTransitionDisplay.from_estimator(
        reg, X, y, proportions=[0.0, 1.0], cv=3, random_states=[0, 1], label="tau=1"
    )
    assert display.train_errors.shape == (2, 2, 3)
    assert (display.train_errors > 0).all()
    assert [line.get_label() for line in display.lines_] == [
        "tau=1 (train)",
        "tau=1 (test)",
    ]
    np.testing.assert_allclose(
        display.lines_[0].get_ydata(), display.train_errors.reshape(2, -1).mean(1)
    )
    again = PhaseTransitionDisplay.from_results(
        [0, 1], [[1.0, 2.0], [0.5, 0.5]], ax=display.ax_, label="other", log_x=True
    )
    assert again.ax_ is display.ax_ and len(display.ax_.get_lines()) == 3
    assert display.ax_.get_xscale() == "symlog"
    with pytest.raises(ValueError, match="neg_"):
        PhaseTransitionDisplay.from_estimator(reg, X, y, scoring="r2")


def test_result_is_a_bunch_whose_seeds_fold_into_splits_and_pickles():
    # validation_curve's (n_params, n_splits) by folding the seeds into the
    # splits, seed-major.
    import pickle

    from sklearn.utils import Bunch

    X, y = make_sphere_regression(n_samples=90)
    reg = PartiallyTrainableRegressor(**FAST)
    result = proportion_curve(
        reg, X, y, proportions=[0.0, 1.0], cv=3, random_states=[0, 7]
    )
    assert isinstance(result, Bunch)
    assert result.test_scores.shape == (2, 2, 3)
    folded_test = result.test_scores.reshape(2, -1)
    np.testing.assert_array_equal(folded_test[:, 3:], result.test_scores[:, 1])
    np.testing.assert_array_equal(result.proportions, [0.0, 1.0])
    assert result.random_states == [0, 7]
    copy = pickle.loads(pickle.dumps(result))
    np.testing.assert_array_equal(copy.train_scores, result.train_scores)
    assert copy.random_states == [0, 7]
