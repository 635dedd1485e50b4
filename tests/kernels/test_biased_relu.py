"""Tests for BiasedReLUKernel against independent computations."""

import math

import numpy as np
import pytest
from scipy import integrate
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import WhiteKernel
from sklearn.kernel_ridge import KernelRidge

import sklearn_pt.kernels._biased_relu as biased_relu_module
from sklearn_pt.kernels import BiasedReLUKernel


def mixed_norm_inputs(rng, n, d, low=0.2, high=2.5):
    """Points with norms spread on both sides of the bias ranges tested."""
    x = rng.normal(size=(n, d))
    return x * rng.uniform(low, high, size=(n, 1)) / np.linalg.norm(x, axis=1)[:, None]


# ---------------------------------------------------------------- Monte Carlo
def monte_carlo(X, tau, n_features, seed, chunk=200_000):
    """Mean and standard error of relu(<w,x>-b) relu(<w,x'>-b) over features."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    s1 = np.zeros((n, n))
    s2 = np.zeros((n, n))
    for _ in range(n_features // chunk):
        w = rng.normal(size=(chunk, d))
        w /= np.linalg.norm(w, axis=1, keepdims=True)
        b = rng.uniform(-tau, tau, size=chunk)
        f = np.maximum(X @ w.T - b, 0.0)
        s1 += f @ f.T
        s2 += (f * f) @ (f * f).T
    mean = s1 / n_features
    var = s2 / n_features - mean**2
    return mean, np.sqrt(np.maximum(var, 0.0) / (n_features - 1))


@pytest.mark.parametrize(("d", "tau"), [(5, 1.0), (3, 0.5)])
def test_matches_monte_carlo_features(d, tau):
    rng = np.random.default_rng(d)
    X = np.vstack(
        [
            mixed_norm_inputs(rng, 4, d, 0.9, 1.0),  # on/inside the unit sphere
            mixed_norm_inputs(rng, 4, d, 1.5, 3.0),  # beyond the bias range
        ]
    )
    K = BiasedReLUKernel(init_scale=tau)(X)
    mean, se = monte_carlo(X, tau, n_features=2_000_000, seed=d)
    # 5 standard errors of the Monte-Carlo mean (64 entries: a false alarm
    # has probability < 1e-4).
    assert np.all(np.abs(K - mean) <= 5 * se)
    assert se.max() < 2e-3 * np.abs(K).max()  # the check is not vacuous


def test_d1_matches_exact_expectation():
    # d = 1: w = +-1, so only the bias needs integrating.
    tau = 0.7
    x = np.array([[-2.0], [-0.3], [0.5], [1.4]])
    K = BiasedReLUKernel(init_scale=tau)(x)
    for i in range(4):
        for j in range(4):
            exact = 0.0
            for s in (1.0, -1.0):
                u, v = s * x[i, 0], s * x[j, 0]
                exact += integrate.quad(
                    lambda b, u=u, v=v: max(u - b, 0) * max(v - b, 0),
                    -tau,
                    tau,
                    points=sorted({min(max(u, -tau), tau), min(max(v, -tau), tau)}),
                    epsabs=1e-14,
                )[0] / (2 * tau)
            assert K[i, j] == pytest.approx(exact / 2, abs=1e-12)


# ------------------------------------------------------ brute-force integral
def bias_mean(u, v, tau):
    """(1 / 2 tau) int_{-tau}^{tau} relu(u - b) relu(v - b) db."""
    hi = min(max(min(u, v), -tau), tau)

    def antiderivative(b):
        return u * v * b - (u + v) * b * b / 2 + b**3 / 3

    return (antiderivative(hi) - antiderivative(-tau)) / (2 * tau)


def plane_coordinates(x, y):
    q, _ = np.linalg.qr(np.stack([x, y], axis=1))
    return [float(t) for t in q.T @ x], [float(t) for t in q.T @ y]


_OPTS = {"limit": 200, "epsabs": 1e-10, "epsrel": 1e-10}


def brute_force(x, y, tau):
    """Adaptive quadrature over the sphere, for d = 2, 3 or 5."""
    d = x.size
    (x1, x2), (y1, y2) = plane_coordinates(x, y)
    if d == 2:  # w = (cos p, sin p)

        def f(p):
            w1, w2 = math.cos(p), math.sin(p)
            return bias_mean(w1 * x1 + w2 * x2, w1 * y1 + w2 * y2, tau)

        val = integrate.quad(f, 0, 2 * math.pi, **_OPTS)[0]
        return val / (2 * math.pi)
    if d == 3:  # Archimedes: w = (t, sqrt(1 - t^2) cos p, ...), t ~ U[-1, 1]

        def f(p, t):
            w1, w2 = t, math.sqrt(max(1 - t * t, 0.0)) * math.cos(p)
            return bias_mean(w1 * x1 + w2 * x2, w1 * y1 + w2 * y2, tau)

        val = integrate.nquad(f, [[0, 2 * math.pi], [-1, 1]], opts=[_OPTS, _OPTS])[0]
        return val / (4 * math.pi)
    if d == 5:  # (w1, w2) has density proportional to sqrt(1 - |w|^2) on the disk

        def f(p, rho):
            w1, w2 = rho * math.cos(p), rho * math.sin(p)
            dens = rho * math.sqrt(max(1 - rho * rho, 0.0))
            return bias_mean(w1 * x1 + w2 * x2, w1 * y1 + w2 * y2, tau) * dens

        val = integrate.nquad(f, [[0, 2 * math.pi], [0, 1]], opts=[_OPTS, _OPTS])[0]
        return val / (2 * math.pi / 3)
    raise NotImplementedError(d)


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
@pytest.mark.parametrize(
    ("d", "tau", "norms"),
    [
        (2, 1.0, (0.4, 0.9)),  # inside the ball: closed form
        (2, 0.5, (1.0, 2.4)),  # clipping correction
        (2, 0.05, (1.0, 1.0)),
        (3, 1.0, (0.33, 0.8)),
        (3, 0.5, (2.6, 2.1)),
        (5, 0.5, (2.1, 2.2)),
    ],
)
def test_matches_brute_force_integral(d, tau, norms):
    rng = np.random.default_rng(10 * d + int(100 * tau))
    x, y = rng.normal(size=(2, d))
    x *= norms[0] / np.linalg.norm(x)
    y *= norms[1] / np.linalg.norm(y)
    k = BiasedReLUKernel(init_scale=tau)(np.stack([x, y]))
    assert k[0, 1] == pytest.approx(brute_force(x, y, tau), abs=1e-8)
    assert k[0, 0] == pytest.approx(brute_force(x, x, tau), abs=1e-8)


def test_closed_form_on_the_sphere():
    rng = np.random.default_rng(0)
    d, tau = 4, 1.5
    X = rng.normal(size=(7, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    K = BiasedReLUKernel(init_scale=tau)(X)
    c_d = math.gamma(d / 2) / (math.sqrt(math.pi) * math.gamma((d + 3) / 2))
    dist = np.linalg.norm(X[:, None] - X[None], axis=-1)
    expected = X @ X.T / (2 * d) + tau**2 / 6 + c_d * dist**3 / (24 * tau)
    np.testing.assert_allclose(K, expected, rtol=1e-13)
    np.testing.assert_allclose(np.diag(K), 1 / (2 * d) + tau**2 / 6, rtol=1e-14)


# ------------------------------------------------------- kernel properties
@pytest.mark.parametrize(("d", "tau"), [(1, 0.6), (3, 0.4), (6, 1.0), (40, 0.2)])
def test_symmetric_psd_and_diag(d, tau):
    rng = np.random.default_rng(d)
    X = mixed_norm_inputs(rng, 60, d)
    kernel = BiasedReLUKernel(init_scale=tau)
    K = kernel(X)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(kernel(X, X), K, rtol=1e-10, atol=1e-14)
    eig = np.linalg.eigvalsh(K)
    assert eig.min() >= -1e-10 * eig.max()
    np.testing.assert_allclose(kernel.diag(X), np.diag(K), rtol=1e-12)


def test_cross_kernel_shape_and_blocks():
    rng = np.random.default_rng(1)
    X, Y = mixed_norm_inputs(rng, 5, 3), mixed_norm_inputs(rng, 3, 3)
    kernel = BiasedReLUKernel(init_scale=0.8)
    K = kernel(X, Y)
    assert K.shape == (5, 3)
    full = kernel(np.vstack([X, Y]))
    np.testing.assert_allclose(K, full[:5, 5:], rtol=1e-10)


def test_chunking_does_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(2)
    X = mixed_norm_inputs(rng, 12, 4)
    kernel = BiasedReLUKernel(init_scale=0.5)
    K, G = kernel(X, eval_gradient=True)
    Y = mixed_norm_inputs(rng, 9, 4)
    K_xy = kernel(X, Y)
    monkeypatch.setattr(biased_relu_module, "_CHUNK_PAIRS", 7)
    monkeypatch.setattr(biased_relu_module, "_BLOCK_PAIRS", 25)
    K7, G7 = kernel(X, eval_gradient=True)
    np.testing.assert_allclose(K7, K, rtol=1e-14)
    np.testing.assert_allclose(G7, G, rtol=1e-14)
    np.testing.assert_array_equal(K7, K7.T)
    np.testing.assert_allclose(kernel(X, Y), K_xy, rtol=1e-14)


def test_quadrature_is_converged():
    rng = np.random.default_rng(3)
    X = mixed_norm_inputs(rng, 15, 5, 0.5, 4.0)
    K = BiasedReLUKernel(init_scale=0.1)(X)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(biased_relu_module, "_N_ARC_NODES", 128)
        K_fine = BiasedReLUKernel(init_scale=0.1)(X)
    assert np.abs(K - K_fine).max() <= 1e-9 * np.abs(K_fine).max()


@pytest.mark.parametrize(("d", "tau"), [(1, 0.6), (3, 0.3), (5, 2.0), (12, 0.8)])
def test_gradient_matches_finite_differences(d, tau):
    rng = np.random.default_rng(d)
    X = mixed_norm_inputs(rng, 10, d, 0.2, 3.0)
    kernel = BiasedReLUKernel(init_scale=tau)
    K, G = kernel(X, eval_gradient=True)
    assert G.shape == (10, 10, 1)
    np.testing.assert_array_equal(K, kernel(X))
    h = 1e-5
    k_plus = kernel.clone_with_theta(kernel.theta + h)(X)
    k_minus = kernel.clone_with_theta(kernel.theta - h)(X)
    fd = (k_plus - k_minus) / (2 * h)
    np.testing.assert_allclose(G[..., 0], fd, rtol=0, atol=1e-8 * np.abs(K).max())
    assert np.abs(G).max() > 1e-3 * np.abs(K).max()


def test_fixed_init_scale_has_no_gradient():
    X = np.random.default_rng(0).normal(size=(4, 3))
    kernel = BiasedReLUKernel(0.5, init_scale_bounds="fixed")
    K, G = kernel(X, eval_gradient=True)
    assert G.shape == (4, 4, 0)
    np.testing.assert_array_equal(K, kernel(X))
    assert kernel.n_dims == 0


# ---------------------------------------------------------- sklearn API
def test_params_clone_and_hyperparameters():
    kernel = BiasedReLUKernel(init_scale=0.7, init_scale_bounds=(0.1, 10.0))
    assert kernel.get_params() == {
        "init_scale": 0.7,
        "init_scale_bounds": (0.1, 10.0),
    }
    cloned = clone(kernel)
    assert cloned == kernel and cloned is not kernel
    np.testing.assert_allclose(kernel.theta, [np.log(0.7)])
    np.testing.assert_allclose(kernel.bounds, np.log([[0.1, 10.0]]))
    assert kernel.clone_with_theta(np.log([2.0])).init_scale == pytest.approx(2.0)
    assert kernel.is_stationary() is False
    assert kernel.requires_vector_input
    assert repr(kernel) == "BiasedReLUKernel(init_scale=0.7)"
    assert BiasedReLUKernel().get_params() == {
        "init_scale": 1.0,
        "init_scale_bounds": (1e-2, 1e2),
    }


def test_kernel_ridge_solves_the_kernel_system():
    rng = np.random.default_rng(0)
    X = mixed_norm_inputs(rng, 30, 4, 0.5, 1.5)
    y = np.maximum(X[:, 0], 0) - X[:, 1] ** 2
    kernel = BiasedReLUKernel(init_scale=1.0)
    model = KernelRidge(alpha=1e-2, kernel=kernel).fit(X, y)
    K = kernel(X)
    np.testing.assert_allclose(
        model.dual_coef_, np.linalg.solve(K + 1e-2 * np.eye(30), y), rtol=1e-8
    )
    X_new = mixed_norm_inputs(rng, 5, 4)
    np.testing.assert_allclose(
        model.predict(X_new), kernel(X_new, X) @ model.dual_coef_, rtol=1e-10
    )


def test_gaussian_process_optimises_init_scale():
    rng = np.random.default_rng(0)
    X = mixed_norm_inputs(rng, 30, 3, 0.8, 1.2)
    y = np.maximum(X @ np.array([1.0, -0.5, 0.3]) - 0.2, 0) + 0.05 * rng.normal(size=30)
    kernel = BiasedReLUKernel(init_scale=5.0) + WhiteKernel(noise_level=1e-2)
    gp = GaussianProcessRegressor(kernel=kernel, random_state=0).fit(X, y)
    # The log marginal likelihood gradient used by the optimiser is correct ...
    theta = np.log([0.6, 2e-3])
    lml, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
    assert lml == pytest.approx(gp.log_marginal_likelihood(theta), rel=1e-12)
    h = 1e-6
    for i in range(2):
        step = np.zeros(2)
        step[i] = h
        fd = (
            gp.log_marginal_likelihood(theta + step)
            - gp.log_marginal_likelihood(theta - step)
        ) / (2 * h)
        assert grad[i] == pytest.approx(fd, rel=1e-5, abs=1e-5)
    # ... and the optimiser moved init_scale and improved the likelihood.
    assert gp.kernel_.k1.init_scale != pytest.approx(5.0, rel=1e-3)
    assert gp.log_marginal_likelihood_value_ > gp.log_marginal_likelihood(kernel.theta)
    assert gp.score(X, y) > 0.9
    assert 1e-4 < gp.kernel_.k2.noise_level < 1e-1


# -------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("init_scale", [0.0, -1.0, np.inf, np.nan, "1", True])
def test_rejects_bad_init_scale(init_scale):
    kernel = BiasedReLUKernel(init_scale=init_scale)
    with pytest.raises(ValueError, match="init_scale"):
        kernel(np.ones((2, 2)))
    with pytest.raises(ValueError, match="init_scale"):
        kernel.diag(np.ones((2, 2)))
    assert repr(kernel).startswith("BiasedReLUKernel(init_scale=")


def test_rejects_bad_inputs():
    kernel = BiasedReLUKernel()
    with pytest.raises(ValueError, match="same number of features"):
        kernel(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="Gradient can only be evaluated"):
        kernel(np.ones((2, 3)), np.ones((2, 3)), eval_gradient=True)
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        kernel(np.array([[0.0, np.nan]]))


@pytest.mark.parametrize("d", [3, 4, 5, 10, 11, 40, 96])
def test_tail_moment_recurrence_matches_incomplete_beta(d, monkeypatch):
    # The closed forms of T_1, T_3 by the recurrence in A_c against scipy's
    # incomplete beta function, down to y = 1 - 1e-12 (x = 1 - y^2 -> 0).
    y = np.concatenate([np.linspace(1e-6, 1.0, 501), 1.0 - np.logspace(-12, -1, 30)])
    recurrence = biased_relu_module._tail_moments(y, d)
    monkeypatch.setattr(biased_relu_module, "_MAX_RECURRENCE", 0)
    incomplete_beta = biased_relu_module._tail_moments(y, d)
    for fast, reference in zip(recurrence, incomplete_beta, strict=True):
        np.testing.assert_allclose(fast, reference, rtol=0, atol=4e-15)


def test_fast_path_matches_the_general_quadrature_off_the_sphere():
    # Standardised-like inputs (norms 0.2-4 around init_scale 0.7, d = 6):
    # the decomposition into per-point moments and one cap-intersection
    # integral equals the general angular quadrature (which still computes
    # the gradient) to rounding.
    rng = np.random.default_rng(5)
    X = mixed_norm_inputs(rng, 40, 6, 0.2, 4.0)
    K = BiasedReLUKernel(init_scale=0.7)(X)
    sq = np.einsum("ij,ij->i", X, X)
    sq1, sq2 = np.broadcast_arrays(sq[:, None], sq[None, :])
    general, _ = biased_relu_module._biased_relu_pairs(
        sq1.ravel(), sq2.ravel(), (X @ X.T).ravel(), d=6, tau=0.7
    )
    np.testing.assert_allclose(K, general.reshape(K.shape), rtol=0, atol=1e-12)
