"""Tests for TwoStepFeatureLearner.

The gradient steps are checked against an independent NumPy implementation of
the two updates; the qualitative claims of Moniri and Hassani (2026) and Ba et
al. (2022) are checked over several fixed seeds, at the sizes where they were
measured to hold (see the docstrings for the measured numbers).
"""

import pickle

import numpy as np
import pytest
import torch
from numpy.polynomial.hermite_e import hermegauss
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV

from sklearn_pt._compat import InvalidParameterError
from sklearn_pt._torch_bridge import make_generator
from sklearn_pt.datasets import make_single_index
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.neural_network import TwoStepFeatureLearner
from sklearn_pt.spectral import WeightSpectrum
from sklearn_pt.theory import spike_count

C = (2.0, 2.0)  # step-size constants of the claims below


# SVD-heavy: one torch thread (see the fixture in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def small_data(n=160, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.tanh(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    return X, y


# ------------------------------------------------------------ reference updates
def tanh_prime(z):
    return 1.0 - np.tanh(z) ** 2


def numpy_gradient(W, a, X, y, loss):
    """Gradient of the correlation or half squared loss of
    f(x) = a^T tanh(W x) / sqrt(N) with respect to W, written out by hand."""
    N = W.shape[0]
    Z = X @ W.T
    if loss == "correlation":
        residual = -y
    else:
        residual = np.tanh(Z) @ a / np.sqrt(N) - y
    return (
        ((residual[:, None] * tanh_prime(Z)) * a[None, :]).T @ X / (len(y) * np.sqrt(N))
    )


def numpy_two_steps(W0, a, X, y, etas, batch, order, loss):
    y = (y - y.mean()) / y.std()
    if batch == "reuse":
        batches = [(X, y), (X, y)]
    else:
        half = len(y) // 2
        first, second = order[:half], order[half:]
        batches = [(X[first], y[first]), (X[second], y[second])]
    weights = [W0]
    for eta, (X_b, y_b) in zip(etas, batches, strict=True):
        weights.append(
            weights[-1] - eta * numpy_gradient(weights[-1], a, X_b, y_b, loss)
        )
    return weights


@pytest.mark.parametrize("batch", ["reuse", "fresh"])
@pytest.mark.parametrize("loss", ["correlation", "squared"])
def test_steps_match_an_independent_numpy_implementation(batch, loss):
    X, y = small_data()
    N, (a1, a2), (c1, c2) = 24, (0.3, 0.4), (1.5, 0.7)
    features = TwoStepFeatures(
        hidden_layer_sizes=N,
        activation="tanh",
        step_size_exponents=(a1, a2),
        step_size_constants=(c1, c2),
        step_batches=batch,
        loss=loss,
        random_state=7,
        dtype="float64",
    ).fit(X, y)
    # The documented draw order: W_0, a, then the order of the fresh halves.
    generator = make_generator(7)
    W0 = torch.randn(N, X.shape[1], generator=generator, dtype=torch.float64)
    W0 = W0.numpy() / np.sqrt(X.shape[1])
    a = torch.randn(N, generator=generator, dtype=torch.float64).numpy()
    order = torch.randperm(len(y), generator=generator).numpy()
    etas = (c1 * N**a1, c2 * N**a2)
    expected = numpy_two_steps(W0, a, X, y, etas, batch, order, loss)
    assert features.step_sizes_ == pytest.approx(etas)
    np.testing.assert_allclose(features.second_layer_weights_, a)
    for got, want in zip(features.first_layer_weights_, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_initialisation_is_shared_across_batches_steps_and_losses():
    X, y = small_data()
    fits = [
        TwoStepFeatureLearner(
            hidden_layer_sizes=30, n_steps=k, step_batches=b, loss=loss, random_state=0
        ).fit(X, y)
        for k, b, loss in [(0, "reuse", "correlation"), (2, "fresh", "squared")]
    ]
    np.testing.assert_array_equal(*(f.first_layer_weights_[0] for f in fits))
    assert [len(f.first_layer_weights_) for f in fits] == [1, 3]
    W0 = fits[0].first_layer_weights_[0]
    assert W0.dtype == np.float32
    assert W0.shape == (30, 12)
    # rows ~ N(0, I/d): the variance of 400 x 12 entries has standard error
    # 0.02, a fifth of the tolerance (of 30 x 12 entries: 0.075)
    wide = TwoStepFeatureLearner(hidden_layer_sizes=400, n_steps=0, random_state=0)
    assert wide.fit(X, y).first_layer_weights_[0].var() * 12 == pytest.approx(
        1.0, abs=0.1
    )


def test_targets_are_standardised_for_the_steps_only():
    X, y = small_data()
    params = {"hidden_layer_sizes": 20, "random_state": 0, "dtype": "float64"}
    base = TwoStepFeatureLearner(**params).fit(X, y)
    shifted = TwoStepFeatureLearner(**params).fit(X, 3.0 * y + 5.0)
    for w, w_shifted in zip(
        base.first_layer_weights_, shifted.first_layer_weights_, strict=True
    ):
        np.testing.assert_allclose(w, w_shifted, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        shifted.predict(X), 3.0 * base.predict(X) + 5.0, rtol=1e-6, atol=1e-8
    )


def test_readout_is_ridge_on_the_held_out_split():
    X, y = small_data(n=201)
    est = TwoStepFeatureLearner(
        hidden_layer_sizes=25,
        alpha=0.3,
        readout_fraction=0.25,
        random_state=1,
        dtype="float64",
    ).fit(X, y)
    mask = est.readout_mask_
    assert mask.sum() == round(0.25 * 201)
    W = est.first_layer_weights_[-1]
    features = torch.nn.functional.gelu(torch.as_tensor(X @ W.T)).numpy()
    ridge = Ridge(alpha=0.3).fit(features[mask], y[mask])
    np.testing.assert_allclose(est.predict(X), ridge.predict(features), rtol=1e-10)
    # The steps used only the other rows: refitting on them alone gives the same W.
    steps = TwoStepFeatures(hidden_layer_sizes=25, random_state=1, dtype="float64")
    steps.fit(X[~mask], y[~mask])
    np.testing.assert_allclose(steps.first_layer_weights_[-1], W, rtol=1e-12)


def test_spectrum_attribute_is_a_weight_spectrum_of_the_final_weights():
    X, y = small_data()
    est = TwoStepFeatureLearner(hidden_layer_sizes=40, random_state=0).fit(X, y)
    assert isinstance(est.spectrum_, WeightSpectrum)
    np.testing.assert_allclose(
        est.spectrum_.singular_values_,
        np.linalg.svd(est.first_layer_weights_[-1].astype(float), compute_uv=False),
        rtol=1e-6,
    )


def test_grid_search_over_exponents_and_batch():
    X, y = make_single_index(600, 30, link="relu", random_state=0)
    grid = {
        "step_size_exponents": [(0.1, 0.05), (0.375, 0.45)],
        "step_batches": ["reuse", "fresh"],
    }
    search = GridSearchCV(
        TwoStepFeatureLearner(hidden_layer_sizes=60, alpha=1.0, random_state=0),
        grid,
        cv=3,
    ).fit(X, y)
    assert len(search.cv_results_["params"]) == 4
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    assert np.ptp(scores) > 0.01  # the parameters reach the estimator
    # Large steps learn the relu direction: they win, as on held-out data.
    assert search.best_params_["step_size_exponents"] == (0.375, 0.45)
    assert search.predict(X[:5]).shape == (5,)


def test_pickle_roundtrip_and_global_random_state_untouched():
    X, y = small_data()
    np_state = np.random.get_state()[1].copy()
    torch_state = torch.random.get_rng_state().clone()
    est = TwoStepFeatureLearner(hidden_layer_sizes=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(np.random.get_state()[1], np_state)
    assert torch.equal(torch.random.get_rng_state(), torch_state)
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    refit = clone(est).fit(X, y)
    np.testing.assert_array_equal(refit.predict(X), est.predict(X))


# ------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"hidden_layer_sizes": (10, 10)}, "one-element tuple"),
        ({"step_size_exponents": (0.1,)}, "step_size_exponents must be a pair"),
        ({"step_size_constants": (1.0, 0.0)}, "step_size_constants must be positive"),
        ({"step_size_constants": (1.0, np.inf)}, "pair of finite floats"),
    ],
)
def test_invalid_step_parameters(params, match):
    X, y = small_data()
    with pytest.raises(ValueError, match=match):
        TwoStepFeatureLearner(**params).fit(X, y)


def test_the_learner_holds_the_features_built_from_its_parameters():
    # Composed, not re-declared: features_ is a TwoStepFeatures with the
    # learner's step parameters, fitted on the step split, and the learner
    # predicts with the readout on its features.
    X, y = make_single_index(200, 10, link="relu", random_state=0)
    learner = TwoStepFeatureLearner(
        hidden_layer_sizes=16,
        step_batches="fresh",
        loss="squared",
        alpha=0.5,
        random_state=3,
        dtype="float64",
    )
    learner.fit(X, y)
    features = learner.features_
    assert isinstance(features, TwoStepFeatures)
    shared = features.get_params()
    assert shared == {k: v for k, v in learner.get_params().items() if k in shared}
    assert features.first_layer_weights_ is learner.first_layer_weights_
    assert features.module_ is learner.module_.feature_map
    np.testing.assert_array_equal(
        learner.predict(X), learner.readout_.predict(features.transform(X))
    )
    # The same parameters set on the learner reach a refitted features_.
    learner.set_params(hidden_layer_sizes=(12,)).fit(X, y)
    assert learner.features_.hidden_layer_sizes == (12,)
    assert learner.features_.transform(X).shape == (200, 12)
    assert clone(learner).get_params() == learner.get_params()
    assert not hasattr(clone(learner), "features_")


def test_parameter_constraints_and_small_samples():
    X, y = small_data()
    with pytest.raises(InvalidParameterError, match="'step_batches' parameter"):
        TwoStepFeatureLearner(step_batches="stale").fit(X, y)
    with pytest.raises(InvalidParameterError, match="'n_steps' parameter"):
        TwoStepFeatureLearner(n_steps=3).fit(X, y)
    with pytest.raises(ValueError, match="n_samples=2"):
        TwoStepFeatureLearner(step_batches="fresh").fit(X[:2], y[:2])


def test_divergence_keeps_the_previous_state():
    X, y = small_data()
    est = TwoStepFeatureLearner(hidden_layer_sizes=20, random_state=0).fit(X, y)
    before = est.predict(X)
    est.set_params(step_size_constants=(1e300, 1e300))  # inf in float32
    with pytest.raises(DivergenceError, match="Lower step_size_constants"):
        est.fit(X, y)
    np.testing.assert_array_equal(est.predict(X), before)


def test_cuda_requested_without_cuda(no_cuda):
    X, y = small_data()
    with pytest.raises(ValueError, match="CUDA is not available"):
        TwoStepFeatureLearner(device="cuda").fit(X, y)


@pytest.mark.gpu
def test_cuda_matches_cpu():
    X, y = small_data()
    params = {"hidden_layer_sizes": 20, "random_state": 0, "dtype": "float64"}
    cpu = TwoStepFeatureLearner(**params).fit(X, y)
    gpu = TwoStepFeatureLearner(**params, device="cuda").fit(X, y)
    for w_cpu, w_gpu in zip(
        cpu.first_layer_weights_, gpu.first_layer_weights_, strict=True
    ):
        np.testing.assert_allclose(w_gpu, w_cpu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gpu.predict(X), cpu.predict(X), rtol=1e-6)


# ------------------------------------------------------------ claims
def standardised_tanh_linear_coefficient():
    """mu_1 = E[y z] of the standardised tanh link, by Gauss-Hermite quadrature."""
    z, w = hermegauss(80)
    w = w / w.sum()
    g = np.tanh(z) - np.sum(w * np.tanh(z))
    g = g / np.sqrt(np.sum(w * g * g))
    return float(np.sum(w * g * z))


def steps(X, y, exponents, *, n_steps=2, batch="reuse", constants=C, seed=0):
    return TwoStepFeatures(
        hidden_layer_sizes=X.shape[1],
        n_steps=n_steps,
        step_size_exponents=exponents,
        step_size_constants=constants,
        step_batches=batch,
        random_state=seed,
        dtype="float64",
    ).fit(X, y)


def test_one_step_gives_one_spike_aligned_with_the_linear_part():
    """Ba et al. (2022): one spike, whose right singular vector is X^T y / n.

    Its overlap with theta is then mu_1 / sqrt(mu_1^2 + d/n) = 0.694 for the
    tanh link at n = d; measured 0.663-0.667 at N = n = d = 400 (seeds 0-2).
    """
    mu = standardised_tanh_linear_coefficient()
    predicted = mu / np.sqrt(mu**2 + 1.0)
    for seed in range(3):
        X, y, theta = make_single_index(
            400, 400, link="tanh", random_state=seed, return_directions=True
        )
        spectrum = steps(X, y, (0.25, 0.1), n_steps=1, seed=seed).spectrum_
        assert spectrum.n_outliers_ == 1
        assert spectrum.alignment(theta)[0, 0] == pytest.approx(predicted, abs=0.05)
        v = X.T @ ((y - y.mean()) / y.std())
        assert spectrum.alignment(v)[0, 0] > 0.97


@pytest.mark.parametrize("exponents", [(0.1, 0.05), (0.15, 0.1), (0.2, 0.1)])
def test_small_total_exponent_adds_no_outlier_and_acts_as_one_step(exponents):
    """alpha1 + alpha2 < 1/2: W_2 is one step of size eta1 + eta2.

    At N = 400 this held for 5 of 5 seeds at these points, and failed for 1 of 5
    at alpha1 + alpha2 = 0.3 and 0.35 (a slowly decaying second outlier).
    """
    a1, a2 = exponents
    assert spike_count(a1, a2) == 0
    for seed in range(2):
        X, y = make_single_index(400, 400, link="tanh", random_state=seed)
        two = steps(X, y, exponents, seed=seed)
        first = WeightSpectrum.from_estimator(two, step=1)
        assert two.spectrum_.n_outliers_ == first.n_outliers_ == 1
        eta = C[0] * 400**a1 + C[1] * 400**a2
        one = steps(
            X, y, exponents, n_steps=1, constants=(eta / 400**a1, 1.0), seed=seed
        )
        assert one.spectrum_.n_outliers_ == 1
        assert abs(one.spectrum_.components_[0] @ two.spectrum_.components_[0]) > 0.999


@pytest.mark.parametrize("exponents", [(0.1, 0.45), (0.25, 0.35), (0.3, 0.3)])
def test_second_step_adds_one_label_memorisation_outlier_when_count_is_one(exponents):
    """spike_count = 1: the second step adds one outlier (fitted bulk edge).

    Its right singular vector correlates with X^T (y_s^2 - 1), the order-1
    term of the expansion (each sample's first-step move carries its label):
    measured |cos| 0.50-0.61 at N = 400.
    """
    assert spike_count(*exponents) == 1
    X, y = make_single_index(400, 400, link="tanh", random_state=0)
    two = steps(X, y, exponents)
    first = WeightSpectrum.from_estimator(two, step=1)
    assert two.spectrum_.n_outliers_ - first.n_outliers_ == 1
    y_s = (y - y.mean()) / y.std()
    assert two.spectrum_.alignment(X.T @ (y_s**2 - 1), n_vectors=2)[1, 0] > 0.4


def test_gelu_adds_the_activation_aware_count_where_order_two_is_missing():
    """(0.375, 0.3): Lambda = 2 (orders 1, 2), but gelu's c_3 = 0 removes the
    order k = 2 (parity rule), so spike_count(..., activation="gelu") = 1,
    and step 2 adds 1 (N = n = d = 400; 1 in 4 of 4 seeds when measured)."""
    assert spike_count(0.375, 0.3) == 2
    assert spike_count(0.375, 0.3, activation="gelu") == 1
    X, y = make_single_index(400, 400, link="tanh", random_state=0)
    two = steps(X, y, (0.375, 0.3))
    first = WeightSpectrum.from_estimator(two, step=1)
    assert two.spectrum_.n_outliers_ - first.n_outliers_ == 1


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=(
        "Disagreement with the N -> infinity count at testable sizes, reported: "
        "at (0.375, 0.45) gelu has the orders k = 1 and 3 (c_2, c_4 != 0), so "
        "spike_count(..., activation='gelu') = 2, yet step 2 adds 1 at N = n = "
        "d = 400 (4 seeds), 1000 (2 seeds) and 2000 (1 seed): the order-3 term "
        "carries 4 c_4 = -0.06 and N^(0.45 - 3/8) = N^0.075, far below the bulk "
        "edge (two_step_signal gives its strength at a finite N)."
    ),
)
def test_gelu_adds_two_outliers_at_lambda_three():
    assert spike_count(0.375, 0.45, activation="gelu") == 2
    X, y = make_single_index(400, 400, link="tanh", random_state=0)
    two = steps(X, y, (0.375, 0.45))
    first = WeightSpectrum.from_estimator(two, step=1)
    assert two.spectrum_.n_outliers_ - first.n_outliers_ == 2


# The reuse-vs-fresh He_3 claim (tanh, whose c_3 carries it) is asserted over
# paired seeds in tests/experiments/test_two_step.py.


def relative_test_error(link, n_steps, seed, *, alpha=10.0):
    X, y = make_single_index(2800, 100, link=link, random_state=seed)
    est = TwoStepFeatureLearner(
        hidden_layer_sizes=200,
        n_steps=n_steps,
        step_size_exponents=(0.375, 0.45),
        step_size_constants=C,
        alpha=alpha,
        random_state=seed,
        dtype="float64",
    ).fit(X[:800], y[:800])
    return np.mean((est.predict(X[800:]) - y[800:]) ** 2) / y[800:].var()


def test_two_steps_beat_random_features_on_a_target_with_a_linear_part():
    """Relu link, N = 200, n = 800 (400 steps + 400 readout), d = 100: relative
    test error measured 0.61-0.64 (0 steps) vs 0.19-0.27 (2 steps, reuse)."""
    for seed in range(2):
        assert (
            relative_test_error("relu", 2, seed)
            < relative_test_error("relu", 0, seed) - 0.25
        )


@pytest.mark.xfail(
    strict=True,
    reason=(
        "Disagreement with the claim at testable sizes, reported: on He_3 the ridge "
        "readout does not learn at all (relative test error >= 1 after 0, 1 or 2 "
        "steps, reuse or fresh) at N = 200-800, n = 800-1600, d = 100-200 and ridge "
        "alpha from 1e-3 to 300."
    ),
)
def test_two_steps_beat_random_features_on_he3():
    errors = [relative_test_error("he3", k, 0, alpha=300.0) for k in (0, 2)]
    assert errors[1] < errors[0] - 0.05
    assert errors[1] < 0.95


def test_coefs_and_intercepts_are_the_predictive_map_as_mlp_lists():
    X, y = make_single_index(200, 6, link="tanh", random_state=0)
    reg = TwoStepFeatureLearner(16, activation="relu", random_state=0, dtype="float64")
    reg.fit(X, y)
    assert [c.shape for c in reg.coefs_] == [(6, 16), (16, 1)]
    assert [b.shape for b in reg.intercepts_] == [(16,), (1,)]
    hidden = np.maximum(X @ reg.coefs_[0] + reg.intercepts_[0], 0.0)
    manual = hidden @ reg.coefs_[1] + reg.intercepts_[1]
    np.testing.assert_allclose(manual.ravel(), reg.predict(X), rtol=1e-10)
    assert WeightSpectrum.from_estimator(reg).shape_ == (16, 6)


def sincos_callable(z):
    return torch.sin(z) + torch.cos(z)


@pytest.mark.parametrize("estimator_class", [TwoStepFeatures, TwoStepFeatureLearner])
def test_callable_activation_takes_the_same_steps_as_its_registry_name(
    estimator_class,
):
    X, y = small_data()
    params = dict(hidden_layer_sizes=20, random_state=3, dtype="float64")
    named = estimator_class(activation="sincos", **params).fit(X, y)
    given = estimator_class(activation=sincos_callable, **params).fit(X, y)
    for a, b in zip(
        named.first_layer_weights_, given.first_layer_weights_, strict=True
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    clone(given)  # a module-level callable clones and pickles
    assert pickle.loads(pickle.dumps(given)).activation is sincos_callable


@pytest.mark.parametrize(
    ("function", "match"),
    [
        (np.sin, "failed on a \\(7, 1\\) float64 tensor"),
        (lambda z: z.sum(), "must return a tensor of its input's shape"),
        (lambda z: z.detach() * 2, "autograd can differentiate"),
    ],
)
def test_bad_callable_activation_names_the_parameter_and_the_fix(function, match):
    X, y = small_data()
    with pytest.raises(ValueError, match=match) as info:
        TwoStepFeatureLearner(hidden_layer_sizes=8, activation=function).fit(X, y)
    assert "activation" in str(info.value) and "torch.sin" in str(info.value)
