"""worst_case_approximation_error: the sup over the RKHS ball, on cases
solvable by hand and against sampled members of the ball."""

import numpy as np
import pytest

from sklearn_pt.kernels import (
    BiasedReLUKernel,
    _worst_case,
    worst_case_approximation_error,
)


def _psd(n, seed):
    A = np.random.default_rng(seed).normal(size=(n, n))
    return A @ A.T / n


def test_without_features_it_is_the_top_eigenvalue_over_n():
    K = _psd(30, 0)
    expected = np.linalg.eigvalsh(K)[-1] / 30
    assert worst_case_approximation_error(np.zeros((30, 0)), K) == pytest.approx(
        expected, rel=1e-12
    )


@pytest.mark.parametrize("k", [1, 4, 10])
def test_the_top_eigenvectors_leave_the_next_eigenvalue(k):
    K = _psd(25, 1)
    values, vectors = np.linalg.eigh(K)
    features = vectors[:, ::-1][:, :k] * np.arange(1, k + 1)  # any scaling
    error = worst_case_approximation_error(features, K)
    assert error == pytest.approx(values[::-1][k] / 25, rel=1e-10)


def test_it_bounds_every_member_of_the_ball_and_is_attained():
    rng = np.random.default_rng(2)
    n = 40
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    K = BiasedReLUKernel()(X)
    features = np.maximum(X @ rng.normal(size=(3, 6)) + rng.uniform(-1, 1, 6), 0)
    worst = worst_case_approximation_error(features, K)

    def error(c):  # f = K c scaled to unit RKHS norm, best fit by the features
        f = K @ c / np.sqrt(c @ K @ c)
        fit = features @ np.linalg.lstsq(features, f, rcond=None)[0]
        return np.mean((f - fit) ** 2)

    sampled = [error(rng.normal(size=n)) for _ in range(200)]
    assert max(sampled) <= worst * (1 + 1e-9)
    # The maximiser: c = K^(-1/2) u with u the top eigenvector of
    # K^(1/2) P K^(1/2) (K is positive definite here).
    values, vectors = np.linalg.eigh(K)
    root = vectors @ np.diag(np.sqrt(values)) @ vectors.T
    q, _ = np.linalg.qr(features)
    project = np.eye(n) - q @ q.T
    u = np.linalg.eigh(root @ project @ root)[1][:, -1]
    attained = error(np.linalg.solve(root, u))
    assert attained == pytest.approx(worst, rel=1e-6)
    assert max(sampled) < attained


def test_lanczos_equals_the_dense_decomposition(monkeypatch):
    rng = np.random.default_rng(3)
    K, features = _psd(300, 4), rng.normal(size=(300, 20))
    dense = worst_case_approximation_error(features, K)
    monkeypatch.setattr(_worst_case, "DENSE_MAX_POINTS", 100)
    assert worst_case_approximation_error(features, K) == pytest.approx(dense, rel=1e-8)


def test_dead_and_repeated_features_add_nothing():
    rng = np.random.default_rng(5)
    K, features = _psd(30, 6), rng.normal(size=(30, 5))
    padded = np.hstack([features, np.zeros((30, 3)), 2 * features[:, :2]])
    assert worst_case_approximation_error(padded, K) == pytest.approx(
        worst_case_approximation_error(features, K), rel=1e-10
    )


@pytest.mark.parametrize(
    ("features", "gram", "match"),
    [
        (np.ones((4, 2)), np.ones((4, 3)), "gram must be a square"),
        (np.ones((5, 2)), np.eye(4), "features must have shape"),
        (np.full((4, 2), np.nan), np.eye(4), "must be finite"),
    ],
)
def test_rejects_bad_input(features, gram, match):
    with pytest.raises(ValueError, match=match):
        worst_case_approximation_error(features, gram)
