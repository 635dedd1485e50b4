"""Stacked first-layer GD fits: the same fits as one ``fit`` each."""

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.model_selection._stacked import (
    fit_stacked,
    fit_stacked_datasets,
    stacked_fit_unsupported,
)
from sklearn_pt.neural_network import FirstLayerGDRegressor


def _data(seeds, n=120, d=30):
    return [make_phase_retrieval(n, d, random_state=s)[:2] for s in seeds]


@pytest.mark.parametrize("activation", ["quadratic", "gelu", "tanh"])
def test_stacked_fits_equal_one_fit_each(activation):
    base = FirstLayerGDRegressor(
        3,
        activation=activation,
        second_layer="signs",
        learning_rate_init=0.1,
        max_iter=40,
    )
    seeds = [0, 1, 2]
    data = _data(seeds)
    stacked = fit_stacked_datasets(
        [clone(base).set_params(random_state=s) for s in seeds], data
    )
    for seed, model, (X, y) in zip(seeds, stacked, data, strict=True):
        alone = clone(base).set_params(random_state=seed).fit(X, y)
        np.testing.assert_allclose(
            model.first_layer_weights_,
            alone.first_layer_weights_,
            rtol=1e-10,
            atol=1e-13,
        )
        np.testing.assert_allclose(model.loss_curve_, alone.loss_curve_, rtol=1e-10)
        assert model.n_iter_ == alone.n_iter_ == 40
        assert model.history_.keys() == alone.history_.keys()
        for key in alone.history_:
            np.testing.assert_allclose(model.history_[key], alone.history_[key])
        np.testing.assert_allclose(model.predict(X), alone.predict(X), rtol=1e-10)
        np.testing.assert_array_equal(model.second_layer_, alone.second_layer_)
        assert model.n_features_in_ == 30
    # the seeds gave different networks
    assert not np.allclose(
        stacked[0].first_layer_weights_, stacked[1].first_layer_weights_
    )


@pytest.mark.parametrize("init", ["random", "spectral"])
def test_widths_and_step_sizes_stack_on_one_shared_data_set(init, monkeypatch):
    """Fits of widths 1, 2 and 4, each with its own step size, on one data
    set: stacked (padded to width 4, one product with the data per step, on
    the shared set), each is the fit alone, to rounding."""
    from sklearn_pt.nn import StackedFirstLayerNetwork

    shared_steps = []
    step = StackedFirstLayerNetwork.squared_error_gradients_

    def spy(self, x, y, **keywords):
        shared_steps.append(x.stride(0) == 0)
        return step(self, x, y, **keywords)

    monkeypatch.setattr(StackedFirstLayerNetwork, "squared_error_gradients_", spy)
    X, y = _data([0])[0]
    models = [
        FirstLayerGDRegressor(
            m,
            activation="gelu",
            init=init,
            learning_rate_init=0.2 * m,
            max_iter=30,
            random_state=m,
        )
        for m in (1, 2, 4)
    ]
    stacked = fit_stacked(models, X, y)
    for model in models:
        alone = clone(model).fit(X, y)
        assert model.first_layer_weights_.shape == alone.first_layer_weights_.shape
        np.testing.assert_allclose(
            model.first_layer_weights_, alone.first_layer_weights_, rtol=1e-10
        )
        np.testing.assert_allclose(model.loss_curve_, alone.loss_curve_, rtol=1e-10)
    assert [m.first_layer_weights_.shape[0] for m in stacked] == [1, 2, 4]
    assert len(shared_steps) == 30 and all(shared_steps)


def test_stacked_plans_record_each_fits_trajectory_as_alone(monkeypatch):
    """run_stacked on plans with eval_set and true_directions (widths 2 and
    3 on one data set, trained stacked): each fitted estimator's history_
    (train and test loss, overlap) is that of its fit alone, to rounding."""
    from sklearn_pt._training import run_stacked
    from sklearn_pt.nn import StackedFirstLayerNetwork

    stacked_steps = []
    step = StackedFirstLayerNetwork.squared_error_gradients_

    def spy(self, x, y, **keywords):
        stacked_steps.append(self.n_models)
        return step(self, x, y, **keywords)

    monkeypatch.setattr(StackedFirstLayerNetwork, "squared_error_gradients_", spy)

    X, y, theta = make_phase_retrieval(160, 20, random_state=0, return_directions=True)
    (X, X_test), (y, y_test) = (X[:120], X[120:]), (y[:120], y[120:])
    models = [
        FirstLayerGDRegressor(
            m,
            activation="quadratic",
            learning_rate_init=0.05 * m,
            max_iter=25,
            random_state=m,
        )
        for m in (2, 3)
    ]
    keywords = {"eval_set": (X_test, y_test), "true_directions": theta}
    fitted = run_stacked([model.plan_fit(X, y, **keywords) for model in models])
    for model, stacked in zip(models, fitted, strict=True):
        alone = clone(model).fit(X, y, **keywords)
        assert (
            stacked.history_.keys()
            == alone.history_.keys()
            >= {"train_loss", "test_loss", "overlap"}
        )
        for key, values in alone.history_.items():
            assert stacked.history_[key].shape == values.shape == (26,), key
            np.testing.assert_allclose(stacked.history_[key], values, rtol=1e-10)
    assert stacked_steps == [2] * 25


def test_a_diverging_fit_is_reported_and_the_others_train_on():
    base = FirstLayerGDRegressor(
        2, activation="quadratic", learning_rate_init=0.1, max_iter=30
    )
    data = _data([0, 1])
    data[1] = (10.0 * data[1][0], data[1][1])  # 100x the curvature: diverges
    models = [clone(base).set_params(random_state=s) for s in (0, 1)]
    ok, failed = fit_stacked_datasets(models, data)
    with pytest.raises(DivergenceError) as alone:
        clone(base).set_params(random_state=1).fit(*data[1])
    assert isinstance(failed, DivergenceError)
    # The same error as the fit alone, with the same advice.
    assert str(alone.value) == str(failed)
    assert "Lower learning_rate_init (e.g. to 0.01)" in str(failed)
    assert not hasattr(models[1], "n_features_in_")  # left as it was
    reference = clone(base).set_params(random_state=0).fit(*data[0])
    np.testing.assert_allclose(
        ok.first_layer_weights_, reference.first_layer_weights_, rtol=1e-10
    )


def test_what_cannot_be_stacked_is_refused_with_the_reason():
    base = FirstLayerGDRegressor(2, max_iter=2)
    assert stacked_fit_unsupported(base) is None
    for params, reason in [
        (dict(init=np.zeros((2, 30))), "init"),
        (dict(hessian_every=1), "hessian_every"),
        (dict(verbose=1), "verbose"),
        (dict(activation=np.sin), "callable activation"),
    ]:
        assert reason in stacked_fit_unsupported(clone(base).set_params(**params))
    with pytest.raises(ValueError, match="these differ too: 'activation'"):
        fit_stacked_datasets(
            [base, clone(base).set_params(activation="tanh")], _data([0, 1])
        )
    with pytest.raises(ValueError, match="differ in shape"):
        fit_stacked_datasets([base, clone(base)], [_data([0])[0], _data([1], n=60)[0]])


def test_bad_data_leaves_every_estimator_as_it_was():
    base = FirstLayerGDRegressor(2, activation="quadratic", max_iter=5)
    data = _data([0, 1])
    X_bad = data[1][0].copy()
    X_bad[3, 0] = np.nan
    data[1] = (X_bad, data[1][1])
    models = [clone(base).set_params(random_state=s) for s in (0, 1)]
    with pytest.raises(ValueError, match="NaN"):
        fit_stacked_datasets(models, data)
    assert not any(hasattr(model, "n_features_in_") for model in models)
