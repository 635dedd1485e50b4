import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline

from sklearn_pt.kernels import BiasedReLUFeatures, BiasedReLUKernel
from sklearn_pt.neural_network import PartiallyTrainableRegressor
from tests.conftest import make_sphere_regression


def test_fitted_features():
    X, _ = make_sphere_regression(n_samples=50)
    features = BiasedReLUFeatures(n_components=300, init_scale=2.0, random_state=0)
    Z = features.fit_transform(X)
    assert Z.shape == (50, 300) and Z.min() >= 0
    np.testing.assert_allclose(np.linalg.norm(features.weights_, axis=1), 1.0)
    assert np.abs(features.biases_).max() <= 2.0
    np.testing.assert_allclose(
        Z, np.maximum(X @ features.weights_.T + features.biases_, 0), rtol=1e-12
    )
    assert features.transform(X.astype(np.float32)).dtype == np.float32
    assert features.get_feature_names_out()[0] == "biasedrelufeatures0"


def test_projection_to_sphere():
    X, _ = make_sphere_regression(n_samples=20)
    features = BiasedReLUFeatures(n_components=16, random_state=0).fit(X)
    np.testing.assert_allclose(features.transform(5 * X), features.transform(X))
    raw = BiasedReLUFeatures(n_components=16, project_to_sphere=False, random_state=0)
    assert not np.allclose(raw.fit(X).transform(5 * X), raw.transform(X))


def test_feature_inner_products_converge_to_the_kernel():
    """Monte-Carlo check of BiasedReLUKernel through the transformer's features."""
    X, _ = make_sphere_regression(n_samples=6, n_features=4)
    m = 200_000
    Z = BiasedReLUFeatures(
        n_components=m, init_scale=1.5, random_state=0
    ).fit_transform(X)
    estimate = Z @ Z.T / m
    products = Z[:, None, :] * Z[None, :, :]
    standard_error = products.std(axis=2) / np.sqrt(m)
    exact = BiasedReLUKernel(init_scale=1.5)(X)
    assert np.all(np.abs(estimate - exact) <= 5 * standard_error + 1e-12)


@pytest.mark.parametrize("alpha", [1e-3, 1.0])
def test_pipeline_equals_random_features_regressor(alpha):
    X, y = make_sphere_regression(n_samples=200)
    pipe = make_pipeline(
        BiasedReLUFeatures(n_components=64, init_scale=2.0, random_state=3),
        Ridge(alpha=alpha),
    ).fit(X, y)
    reg = PartiallyTrainableRegressor(
        hidden_layer_sizes=(64,),
        trainable_proportion=0.0,
        init_scale=2.0,
        readout="ridge",
        alpha=alpha,
        dtype="float64",
        random_state=3,
    ).fit(X, y)
    np.testing.assert_allclose(reg.predict(X), pipe.predict(X), rtol=1e-8, atol=1e-10)
    assert reg.n_iter_ == 1 and len(reg.loss_curve_) == 1
    # Closed form is the exact optimum: a trained readout is no better.
    adam = PartiallyTrainableRegressor(
        hidden_layer_sizes=(64,),
        trainable_proportion=0.0,
        init_scale=2.0,
        alpha=alpha,
        dtype="float64",
        random_state=3,
        max_iter=50,
        learning_rate_init=1e-2,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        adam.fit(X, y)
    assert reg.loss_curve_[0] <= adam.loss_curve_[-1] + 1e-12
