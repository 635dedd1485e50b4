import pickle

import numpy as np
import pytest
import torch
from scipy.stats import norm
from sklearn.base import clone

from sklearn_pt.datasets import make_multi_index, make_phase_retrieval
from sklearn_pt.decomposition import SpectralEstimator
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.metrics import neuron_overlap
from sklearn_pt.neural_network import FirstLayerGDRegressor
from sklearn_pt.nn import FirstLayerNetwork

NUMPY_ACTIVATIONS = {
    "gelu": lambda z: z * norm.cdf(z),
    "quadratic": np.square,
    "relu": lambda z: np.maximum(z, 0),
    "tanh": np.tanh,
}


def phase_retrieval(delta, n_features, seed, n_test=1000):
    n = int(delta * n_features)
    X, y, theta = make_phase_retrieval(
        n + n_test, n_features, random_state=seed, return_directions=True
    )
    return X[:n], y[:n], X[n:], y[n:], theta


def sine(z):
    return torch.sin(z)


@pytest.mark.parametrize("activation", sorted(NUMPY_ACTIVATIONS))
@pytest.mark.parametrize("second_layer", ["ones", "signs", "array"])
def test_prediction_is_the_mean_of_the_fixed_second_layer(activation, second_layer):
    X, y = make_phase_retrieval(50, 6, random_state=0)
    a = np.array([0.5, -2.0, 1.0]) if second_layer == "array" else second_layer
    reg = FirstLayerGDRegressor(
        3, activation=activation, second_layer=a, max_iter=2, random_state=0
    ).fit(X, y)
    expected_a = {"ones": np.ones(3), "signs": np.array([1.0, -1.0, 1.0])}.get(
        second_layer, np.array([0.5, -2.0, 1.0])
    )
    np.testing.assert_array_equal(reg.second_layer_, expected_a)
    np.testing.assert_array_equal(reg.module_.second_layer.numpy(), expected_a)
    W = reg.first_layer_weights_
    expected = NUMPY_ACTIVATIONS[activation](X @ W.T) @ expected_a / 3
    np.testing.assert_allclose(reg.predict(X), expected, rtol=1e-10, atol=1e-12)


def test_one_step_is_plain_gradient_descent_on_the_first_layer():
    X, y = make_phase_retrieval(40, 5, random_state=0)
    W0 = np.random.default_rng(1).normal(size=(3, 5)) / np.sqrt(5)
    a = np.array([1.0, -1.0, 1.0])
    reg = FirstLayerGDRegressor(
        3,
        activation="quadratic",
        second_layer="signs",
        init=W0,
        learning_rate_init=0.3,
        max_iter=1,
    ).fit(X, y)
    residual = ((X @ W0.T) ** 2) @ a / 3 - y
    gradient = (2 * a / 3)[:, None] * ((X @ W0.T) * residual[:, None]).T @ X / len(X)
    np.testing.assert_allclose(
        reg.first_layer_weights_, W0 - 0.3 * gradient, rtol=1e-12
    )
    assert reg.history_["train_loss"][0] == pytest.approx(0.5 * np.mean(residual**2))


def test_history_is_measured_at_every_iteration():
    X, y, X_test, y_test, theta = phase_retrieval(4, 20, seed=0, n_test=100)
    reg = FirstLayerGDRegressor(4, max_iter=7, random_state=0).fit(
        X, y, eval_set=(X_test, y_test), true_directions=theta
    )
    h = reg.history_
    assert reg.n_iter_ == 7
    for key in ("iteration", "train_loss", "test_loss", "overlap"):
        assert h[key].shape == (8,)
    np.testing.assert_array_equal(h["iteration"], np.arange(8))
    np.testing.assert_allclose(h["train_loss"][:-1], reg.loss_curve_)
    # The last entries are those of the returned model.
    assert h["train_loss"][-1] == pytest.approx(
        0.5 * np.mean((reg.predict(X) - y) ** 2)
    )
    assert h["test_loss"][-1] == pytest.approx(
        0.5 * np.mean((reg.predict(X_test) - y_test) ** 2)
    )
    assert h["overlap"][-1] == pytest.approx(
        neuron_overlap(reg.first_layer_weights_, theta)
    )
    assert not any(k.startswith("hessian") for k in h)
    plain = FirstLayerGDRegressor(4, max_iter=7, random_state=0).fit(X, y)
    assert set(plain.history_) == {"iteration", "train_loss"}
    np.testing.assert_array_equal(
        plain.first_layer_weights_, reg.first_layer_weights_
    )  # monitoring is passive


def test_hessian_monitor_records_into_history():
    X, y, theta = make_phase_retrieval(60, 6, random_state=0, return_directions=True)
    reg = FirstLayerGDRegressor(
        3, max_iter=5, hessian_every=2, hessian_k=2, random_state=0
    ).fit(X, y, true_directions=theta)
    h = reg.history_
    np.testing.assert_array_equal(h["hessian_iteration"], [0, 2, 4])
    assert h["hessian_eigenvalues"].shape == h["hessian_overlap"].shape == (3, 2)
    assert np.all(np.diff(h["hessian_eigenvalues"], axis=1) >= 0)
    with pytest.raises(ValueError, match="hessian_k=18 must be smaller"):
        FirstLayerGDRegressor(3, hessian_every=1, hessian_k=18).fit(X, y)


def test_random_initialisation_has_rows_of_unit_norm_on_average():
    X, y = make_phase_retrieval(10, 400, random_state=0)
    reg = FirstLayerGDRegressor(
        50, max_iter=1, learning_rate_init=1e-12, random_state=0
    )
    norms = np.linalg.norm(reg.fit(X, y).first_layer_weights_, axis=1)
    assert abs(norms.mean() - 1) < 0.05 and norms.std() < 0.1


def test_spectral_initialisation_starts_aligned_with_the_spectral_estimate():
    X, y, _, _, theta = phase_retrieval(4, 100, seed=0, n_test=0)
    spectral = SpectralEstimator().fit(X, y)
    random = FirstLayerGDRegressor(
        8, max_iter=1, learning_rate_init=1e-12, random_state=0
    )
    aligned = clone(random).set_params(init="spectral")
    W_random = random.fit(X, y).first_layer_weights_
    W_spectral = aligned.fit(X, y, true_directions=theta).first_layer_weights_
    cosines = np.abs(W_spectral @ spectral.directions_[:, 0]) / np.linalg.norm(
        W_spectral, axis=1
    )
    assert np.median(cosines) > 0.4 and len(np.unique(W_spectral.round(8), axis=0)) == 8
    assert (
        neuron_overlap(W_spectral, theta) > 0.6 > 0.4 > neuron_overlap(W_random, theta)
    )
    # The orthogonal part is the random initialisation's.
    P = np.eye(100) - spectral.directions_ @ spectral.directions_.T
    np.testing.assert_allclose(W_spectral @ P, W_random @ P, atol=1e-10)
    # Any estimator with directions_ works; it is cloned, not fitted in place.
    estimator = SpectralEstimator(n_components=2, preprocessing="identity")
    FirstLayerGDRegressor(4, init=estimator, max_iter=1).fit(X, y)
    assert not hasattr(estimator, "directions_")


def test_array_initialisation_and_shape_errors():
    X, y = make_phase_retrieval(30, 4, random_state=0)
    W0 = np.ones((2, 4))
    reg = FirstLayerGDRegressor(2, init=W0, max_iter=1, learning_rate_init=1e-12).fit(
        X, y
    )
    np.testing.assert_allclose(reg.first_layer_weights_, W0)
    with pytest.raises(ValueError, match=r"init must have shape \(width, n_features\)"):
        FirstLayerGDRegressor(3, init=W0).fit(X, y)
    with pytest.raises(ValueError, match=r"second_layer must have shape \(width,\)"):
        FirstLayerGDRegressor(3, second_layer=[1.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match="true_directions must have shape"):
        FirstLayerGDRegressor(3).fit(X, y, true_directions=np.ones(5))
    with pytest.raises(ValueError, match="eval_set must be a pair"):
        FirstLayerGDRegressor(3).fit(X, y, eval_set=X)
    with pytest.raises(ValueError, match="y_test must have shape"):
        FirstLayerGDRegressor(3).fit(X, y, eval_set=(X, y[:-1]))
    with pytest.raises(ValueError, match="features"):
        FirstLayerGDRegressor(3).fit(X, y, eval_set=(X[:, :3], y))


def test_multi_index_overlap_is_a_subspace_overlap():
    X, y, theta = make_multi_index(
        2000, 20, n_directions=2, link="he2", random_state=0, return_directions=True
    )
    reg = FirstLayerGDRegressor(
        8, activation="quadratic", learning_rate_init=0.2, max_iter=300, random_state=0
    ).fit(X, y, true_directions=theta)
    assert reg.history_["overlap"][-1] > 0.9 > 0.5 > reg.history_["overlap"][0]
    rng = np.random.default_rng(0)
    assert neuron_overlap(rng.normal(size=(3, 2)) @ theta.T, theta) == pytest.approx(1)


def test_neuron_overlap_by_hand_with_unnormalised_directions():
    """The cosine is with theta / |theta|: any nonzero scale gives the same."""
    W = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 3.0, 4.0]])
    # Cosines of the rows with e2: 0, 1/sqrt(2), 3/5.
    for scale in (1.0, 3.0, -0.2, 50.0):
        theta = scale * np.array([0.0, 1.0, 0.0])
        assert neuron_overlap(W, theta) == pytest.approx(1 / np.sqrt(2), rel=1e-12)
        assert neuron_overlap(W, theta[:, None]) == pytest.approx(
            1 / np.sqrt(2), rel=1e-12
        )
    # theta = (0, 3, 4) / 5 up to scale: the third row is along it.
    assert neuron_overlap(W, [0.0, 0.3, 0.4]) == pytest.approx(1.0, rel=1e-12)
    # Two directions, span(e1, e2) from non-orthogonal, non-unit columns; the
    # top right singular vectors of W2 span e1 and (e2 + e3) / sqrt(2), so the
    # overlap is ||diag(1, 1/sqrt(2))||_F / sqrt(2) = sqrt(3) / 2.
    W2 = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    skewed = np.array([[2.0, 1.0], [0.0, 5.0], [0.0, 0.0]])
    assert neuron_overlap(W2, skewed) == pytest.approx(np.sqrt(3) / 2, rel=1e-12)


def test_neuron_overlap_depends_on_the_span_of_the_directions_only():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(5, 30))
    for k in (1, 3):
        basis = np.linalg.qr(rng.normal(size=(30, k)))[0]
        W_aligned = W + 2 * (W @ basis) @ basis.T  # overlaps well inside (0, 1)
        reference = neuron_overlap(W_aligned, basis)
        assert 0.2 < reference < 0.99
        mixing = np.triu(rng.uniform(0.5, 2.0, size=(k, k)))  # invertible
        for directions in (0.01 * basis, -40 * basis, basis @ mixing):
            assert neuron_overlap(W_aligned, directions) == pytest.approx(
                reference, rel=1e-12
            )


def test_overlap_history_does_not_depend_on_the_scale_of_true_directions():
    X, y, theta = make_phase_retrieval(60, 6, random_state=0, return_directions=True)
    reg = FirstLayerGDRegressor(3, max_iter=3, random_state=0)
    unit = reg.fit(X, y, true_directions=theta).history_["overlap"]
    scaled = clone(reg).fit(X, y, true_directions=7 * theta).history_["overlap"]
    np.testing.assert_allclose(scaled, unit, rtol=1e-12)
    assert np.all((unit > 0) & (unit < 1))


def test_reproducible_without_global_random_state():
    X, y = make_phase_retrieval(50, 5, random_state=0)
    np_state = np.random.get_state()[1].copy()
    torch_state = torch.random.get_rng_state().clone()
    first = FirstLayerGDRegressor(3, max_iter=3, random_state=7).fit(X, y)
    second = FirstLayerGDRegressor(3, max_iter=3, random_state=7).fit(X, y)
    np.testing.assert_array_equal(
        first.first_layer_weights_, second.first_layer_weights_
    )
    np.testing.assert_array_equal(np.random.get_state()[1], np_state)
    assert torch.equal(torch.random.get_rng_state(), torch_state)


def test_callable_activation_pickle_and_float32():
    X, y = make_phase_retrieval(50, 5, random_state=0)
    reg = FirstLayerGDRegressor(3, activation=sine, max_iter=3, random_state=0).fit(
        X, y
    )
    np.testing.assert_allclose(
        reg.predict(X), np.sin(X @ reg.first_layer_weights_.T).mean(axis=1), rtol=1e-10
    )
    loaded = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(loaded.predict(X), reg.predict(X))
    assert isinstance(loaded.module_, FirstLayerNetwork)
    single = FirstLayerGDRegressor(3, max_iter=3, random_state=0, dtype="float32")
    assert single.fit(X, y).predict(X.astype(np.float32)).dtype == np.float32


def test_divergence_keeps_the_previous_state():
    X, y = make_phase_retrieval(50, 5, random_state=0)
    reg = FirstLayerGDRegressor(3, activation="quadratic", max_iter=3, random_state=0)
    reg.fit(X, y)
    before = reg.first_layer_weights_.copy()
    with pytest.raises(DivergenceError, match="Lower learning_rate"):
        reg.set_params(learning_rate_init=1e3, max_iter=50).fit(X, y)
    np.testing.assert_array_equal(reg.first_layer_weights_, before)


# Claims of Montanari and Wang (2026) on noiseless phase retrieval; the paper's
# GD threshold for the quadratic activation is delta_NN ~ 3.6.


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quadratic_gd_succeeds_well_above_and_fails_well_below_threshold(seed):
    # Measured (d = 200, m = 4, learning_rate = 0.15, 500 steps, seeds 0-5):
    # final overlap 0.14-0.35 and test loss 0.97-1.12 x its initial value at
    # delta = 1; overlap >= 0.99 and test loss <= 0.004 x initial at delta = 7.
    params = dict(activation="quadratic", learning_rate_init=0.15, max_iter=500)
    results = {}
    for delta in (1.0, 7.0):
        X, y, X_test, y_test, theta = phase_retrieval(delta, 200, seed)
        reg = FirstLayerGDRegressor(4, random_state=seed, **params)
        h = reg.fit(X, y, eval_set=(X_test, y_test), true_directions=theta).history_
        results[delta] = h["overlap"][-1], h["test_loss"][-1] / h["test_loss"][0]
    assert results[1.0][0] < 0.5 and results[1.0][1] > 0.9
    assert results[7.0][0] > 0.9 and results[7.0][1] < 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_negative_hessian_outlier_along_theta_only_above_threshold(seed):
    # Smallest Hessian eigenpairs every 10 GD steps (d = 300, m = 4,
    # learning_rate = 0.15, as in the previous test). Measured
    # (seeds 0-2): below (delta = 1) the eigenvectors of the 3 smallest
    # eigenvalues overlap theta* by at most 0.21-0.31 along the whole run and
    # the test loss never halves (those eigenvalues, -3.9 to -6.2 at t = 0, are
    # more negative than above the threshold, but their eigenvectors are
    # localised on the samples with the largest responses). Above (delta = 6)
    # the smallest eigenvalue (-1.0 to -1.6 at t = 0) has an eigenvector
    # overlapping theta* by 0.72-0.77 from t = 0, and the test loss halves
    # only at t = 30-94 (seeds 3-5: 0.71-0.78 and t = 36-46).
    params = dict(
        activation="quadratic",
        learning_rate_init=0.15,
        max_iter=150,
        hessian_every=10,
        hessian_k=3,
    )
    histories = {}
    for delta in (1.0, 6.0):
        X, y, X_test, y_test, theta = phase_retrieval(delta, 300, seed)
        reg = FirstLayerGDRegressor(4, random_state=seed, **params)
        reg.fit(X, y, eval_set=(X_test, y_test), true_directions=theta)
        histories[delta] = reg.history_

    def outlier_iterations(h):
        along_theta = (h["hessian_eigenvalues"] < 0) & (h["hessian_overlap"] > 0.5)
        return h["hessian_iteration"][along_theta.any(axis=1)]

    def drop_iterations(h):
        return h["iteration"][h["test_loss"] < 0.5 * h["test_loss"][0]]

    below, above = histories[1.0], histories[6.0]
    assert len(outlier_iterations(below)) == 0
    assert below["hessian_overlap"].max() < 0.45
    assert len(drop_iterations(below)) == 0
    assert len(outlier_iterations(above)) > 0 and len(drop_iterations(above)) > 0
    assert outlier_iterations(above)[0] < drop_iterations(above)[0]


def test_mlp_names_and_attributes():
    # hidden_layer_sizes / learning_rate_init as MLPRegressor, coefs_ and
    # intercepts_ as its lists.
    from sklearn.neural_network import MLPRegressor

    X, y = make_phase_retrieval(60, 5, random_state=0)
    reg = FirstLayerGDRegressor(
        (3,), learning_rate_init=0.1, max_iter=4, random_state=0
    )
    reg.fit(X, y)
    mlp = MLPRegressor(hidden_layer_sizes=(3,), max_iter=2).fit(X, y)
    assert [c.shape for c in reg.coefs_] == [c.shape for c in mlp.coefs_]
    assert [b.shape for b in reg.intercepts_] == [b.shape for b in mlp.intercepts_]
    np.testing.assert_array_equal(reg.coefs_[0], reg.first_layer_weights_.T)
    hidden = NUMPY_ACTIVATIONS["gelu"](X @ reg.coefs_[0] + reg.intercepts_[0])
    manual = hidden @ reg.coefs_[1] + reg.intercepts_[1]
    np.testing.assert_allclose(manual.ravel(), reg.predict(X), rtol=1e-10)


@pytest.mark.parametrize("chunk", [1, 7, 10**6])
def test_recorded_trajectory_equals_the_weights_step_by_step(chunk, monkeypatch):
    """The test loss and overlap of ``history_``, evaluated a chunk of
    iterations at a time, equal those of the weights after each step (the
    weights replayed by a callback), whatever the chunk."""
    from sklearn_pt.neural_network import _first_layer as module_file

    X, y, theta = make_phase_retrieval(150, 12, random_state=0, return_directions=True)
    weights = []
    original = module_file._TrajectoryRecorder.record

    def record(self):
        weights.append(self.module.weight.detach().clone().numpy())
        self._chunk = chunk
        original(self)

    monkeypatch.setattr(module_file._TrajectoryRecorder, "record", record)
    est = FirstLayerGDRegressor(3, max_iter=20, random_state=0)
    est.fit(X[:100], y[:100], eval_set=(X[100:], y[100:]), true_directions=theta)
    assert len(est.history_["test_loss"]) == len(weights) == 21
    a = est.second_layer_ / 3
    for w, loss, overlap in zip(
        weights, est.history_["test_loss"], est.history_["overlap"], strict=True
    ):
        outputs = torch.nn.functional.gelu(torch.as_tensor(X[100:] @ w.T)).numpy() @ a
        assert loss == pytest.approx(0.5 * np.mean((outputs - y[100:]) ** 2), rel=1e-12)
        assert overlap == pytest.approx(neuron_overlap(w, theta), rel=1e-12)
