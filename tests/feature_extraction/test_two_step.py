"""Tests for sklearn_pt.feature_extraction.TwoStepFeatures."""

import numpy as np
import pytest
import torch
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline

from sklearn_pt.datasets import make_single_index
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.neural_network import TwoStepFeatureLearner

# SVD-heavy: one torch thread (see the fixture in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("one_torch_thread")


STEP_PARAMS = {
    "hidden_layer_sizes": 40,
    "activation": "softplus",
    "step_size_exponents": (0.3, 0.4),
    "step_size_constants": (1.5, 1.0),
    "random_state": 3,
    "dtype": "float64",
}


@pytest.mark.parametrize("batch", ["reuse", "fresh"])
def test_pipeline_with_ridge_reproduces_the_learner(batch):
    X, y = make_single_index(300, 20, link="relu", random_state=0)
    X_test = make_single_index(50, 20, random_state=1)[0]
    learner = TwoStepFeatureLearner(
        **STEP_PARAMS, step_batches=batch, alpha=0.5, readout_fraction=0.4
    ).fit(X, y)
    m = learner.readout_mask_
    features = TwoStepFeatures(**STEP_PARAMS, step_batches=batch).fit(X[~m], y[~m])
    pipe = Pipeline(
        [("features", FrozenEstimator(features)), ("ridge", Ridge(alpha=0.5))]
    ).fit(X[m], y[m])
    np.testing.assert_allclose(
        pipe.predict(X_test), learner.predict(X_test), rtol=1e-12
    )
    for a, b in zip(
        features.first_layer_weights_, learner.first_layer_weights_, strict=True
    ):
        np.testing.assert_array_equal(a, b)


def test_unfrozen_pipeline_fits_steps_and_ridge_on_the_same_rows():
    X, y = make_single_index(200, 15, link="tanh", random_state=0)
    pipe = Pipeline(
        [("features", TwoStepFeatures(**STEP_PARAMS)), ("ridge", Ridge(alpha=1.0))]
    ).fit(X, y)
    features = TwoStepFeatures(**STEP_PARAMS).fit(X, y)
    ridge = Ridge(alpha=1.0).fit(features.transform(X), y)
    np.testing.assert_allclose(pipe.predict(X), ridge.predict(features.transform(X)))


def test_transform_is_the_activation_of_the_final_weights():
    X, y = make_single_index(120, 10, link="he2", random_state=0)
    features = TwoStepFeatures(**STEP_PARAMS).fit(X, y)
    W = features.first_layer_weights_[-1]
    expected = torch.nn.functional.softplus(torch.as_tensor(X @ W.T)).numpy()
    np.testing.assert_allclose(features.transform(X), expected, rtol=1e-12)
    names = features.get_feature_names_out()
    assert names.shape == (40,)
    assert names[0] == "twostepfeatures0"


def test_zero_steps_are_random_features_whatever_the_batch():
    X, y = make_single_index(100, 10, random_state=0)
    params = {**STEP_PARAMS, "n_steps": 0}
    reuse = TwoStepFeatures(**params, step_batches="reuse").fit(X, y)
    fresh = TwoStepFeatures(**params, step_batches="fresh").fit(X, y)
    assert len(reuse.first_layer_weights_) == 1
    np.testing.assert_array_equal(reuse.transform(X), fresh.transform(X))


def test_float32_by_default_and_float64_input_dtype_kept():
    X, y = make_single_index(100, 10, random_state=0)
    features = TwoStepFeatures(hidden_layer_sizes=8, random_state=0).fit(X, y)
    assert features.first_layer_weights_[-1].dtype == np.float32
    assert features.transform(X).dtype == np.float64
    assert features.transform(X.astype(np.float32)).dtype == np.float32


def test_fresh_batch_needs_two_samples():
    with pytest.raises(ValueError, match="n_samples=1"):
        TwoStepFeatures(step_batches="fresh").fit(np.ones((1, 3)), [1.0])


@pytest.mark.parametrize("estimator", [TwoStepFeatures, TwoStepFeatureLearner])
def test_spectrum_is_the_final_weights_spectrum_and_follows_a_refit(estimator):
    from sklearn.exceptions import NotFittedError

    from sklearn_pt.spectral import WeightSpectrum

    X, y = make_single_index(120, 20, link="relu", random_state=0)
    model = estimator(hidden_layer_sizes=16, random_state=0)
    with pytest.raises(NotFittedError):
        model.spectrum_  # noqa: B018
    model.fit(X, y)
    direct = WeightSpectrum().fit(model.first_layer_weights_[-1])
    np.testing.assert_array_equal(
        model.spectrum_.singular_values_, direct.singular_values_
    )
    assert model.spectrum_ is model.spectrum_  # computed once
    first = model.spectrum_.singular_values_
    model.set_params(random_state=1).fit(X, y)
    assert not np.array_equal(model.spectrum_.singular_values_, first)
