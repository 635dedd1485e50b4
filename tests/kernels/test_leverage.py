"""Tests for ridge_leverage_scores against the explicit matrix formula."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_pt.kernels import reg_for_degrees_of_freedom, ridge_leverage_scores


def explicit_scores(phi, reg):
    """diag[Phi^T Phi (Phi^T Phi + n reg I)^-1] with an explicit inverse."""
    n, p = phi.shape
    cov = phi.T @ phi
    return np.diag(cov @ np.linalg.inv(cov + n * reg * np.eye(p)))


def effective_dof(phi, reg):
    s = np.linalg.eigvalsh(phi.T @ phi)
    return np.sum(s / (s + phi.shape[0] * reg))


@pytest.mark.parametrize(("n", "p"), [(40, 7), (7, 40), (15, 15), (1, 5), (5, 1)])
@pytest.mark.parametrize("reg", [1e-3, 0.1, 10.0])
def test_matches_explicit_inverse(n, p, reg):
    rng = np.random.default_rng(n * 100 + p)
    phi = np.maximum(rng.normal(size=(n, p)) + 0.3, 0)  # relu-like features
    scores = ridge_leverage_scores(phi, reg)
    assert scores.shape == (p,)
    np.testing.assert_allclose(scores, explicit_scores(phi, reg), rtol=1e-9, atol=1e-12)
    assert np.all((scores >= 0) & (scores <= 1))
    assert scores.sum() == pytest.approx(effective_dof(phi, reg), rel=1e-10)


def test_rank_deficient_features():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(30, 3))
    phi = np.hstack([base, base, base @ rng.normal(size=(3, 4))])  # rank 3
    for features in (phi, phi[:5]):  # n > p and n < p
        scores = ridge_leverage_scores(features, 1e-4)
        np.testing.assert_allclose(
            scores, explicit_scores(features, 1e-4), rtol=1e-7, atol=1e-12
        )
        assert np.all((scores >= 0) & (scores <= 1))
        assert scores.sum() <= np.linalg.matrix_rank(features) + 1e-9


def test_zero_feature_has_zero_leverage_and_unique_feature_high():
    rng = np.random.default_rng(1)
    phi = rng.normal(size=(20, 4))
    phi[:, 0] = 0.0
    scores = ridge_leverage_scores(phi, 1e-2)
    assert scores[0] == 0.0
    assert np.all(scores[1:] > 0.9)  # n = 20 > p: well-determined features


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 12),
    p=st.integers(1, 12),
    reg=st.floats(1e-3, 1e2),
    scale=st.floats(1e-2, 1e2),
    seed=st.integers(0, 2**16),
)
def test_scale_invariance_and_monotone_in_reg(n, p, reg, scale, seed):
    phi = np.random.default_rng(seed).normal(size=(n, p))
    scores = ridge_leverage_scores(phi, reg)
    # l(c Phi, c^2 reg) = l(Phi, reg)
    np.testing.assert_allclose(
        ridge_leverage_scores(scale * phi, scale**2 * reg),
        scores,
        rtol=1e-8,
        atol=1e-12,
    )
    # more regularisation, less leverage
    assert np.all(ridge_leverage_scores(phi, 2 * reg) <= scores + 1e-12)
    np.testing.assert_allclose(scores, explicit_scores(phi, reg), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("n", "p"), [(25, 6), (6, 25)])
def test_torch_tensors_in_and_out(dtype, n, p):
    rng = np.random.default_rng(2)
    phi = rng.normal(size=(n, p))
    tensor = torch.as_tensor(phi, dtype=dtype)
    scores = ridge_leverage_scores(tensor, 0.05)
    assert isinstance(scores, torch.Tensor)
    assert scores.dtype == dtype and scores.device == tensor.device
    assert scores.shape == (p,)
    expected = explicit_scores(tensor.double().numpy(), 0.05)
    np.testing.assert_allclose(scores.double().numpy(), expected, rtol=1e-6)


def test_numpy_dtypes_are_preserved_for_floats():
    phi = np.random.default_rng(3).normal(size=(10, 4))
    assert ridge_leverage_scores(phi.astype(np.float32), 0.1).dtype == np.float32
    assert ridge_leverage_scores(phi, 0.1).dtype == np.float64
    ints = np.arange(40).reshape(10, 4) % 7
    out = ridge_leverage_scores(ints, 0.1)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, explicit_scores(ints.astype(float), 0.1))
    out_list = ridge_leverage_scores(ints.tolist(), 0.1)
    assert isinstance(out_list, np.ndarray)
    np.testing.assert_allclose(out_list, out)


@pytest.mark.parametrize(
    ("features", "match"),
    [
        (np.ones(5), "2-D"),
        (np.ones((2, 3, 4)), "2-D"),
        (np.ones((0, 3)), "non-empty"),
        (np.ones((3, 0)), "non-empty"),
        (np.array([[1.0, np.nan]]), "NaN or infinite"),
        (np.array([[1.0, np.inf]]), "NaN or infinite"),
        (torch.tensor([[1.0, float("nan")]]), "NaN or infinite"),
        (np.ones((2, 2), dtype=complex), "real numbers"),
        (np.array([["a", "b"]]), "real numbers"),
        (torch.ones(2, 2, dtype=torch.complex64), "real tensor"),
    ],
)
def test_rejects_bad_features(features, match):
    with pytest.raises(ValueError, match=match):
        ridge_leverage_scores(features, 0.1)


@pytest.mark.parametrize("reg", [0.0, -1.0, np.inf, np.nan, "0.1", None, True])
def test_rejects_bad_reg(reg):
    with pytest.raises(ValueError, match="reg must be a positive finite number"):
        ridge_leverage_scores(np.ones((3, 2)), reg)


def test_accepts_scalar_array_and_tensor_reg():
    phi = np.random.default_rng(4).normal(size=(8, 3))
    expected = ridge_leverage_scores(phi, 0.2)
    np.testing.assert_allclose(ridge_leverage_scores(phi, np.float32(0.2)), expected)
    np.testing.assert_allclose(ridge_leverage_scores(phi, torch.tensor(0.2)), expected)


# --- the ridge parameter at a given number of degrees of freedom ----------------


@pytest.mark.parametrize("shape", [(60, 12), (12, 60)])
@pytest.mark.parametrize("dof", [0.5, 3.0, 9.5])
def test_reg_for_degrees_of_freedom_gives_that_sum_of_scores(shape, dof):
    phi = np.random.default_rng(1).normal(size=shape)
    reg = reg_for_degrees_of_freedom(phi, dof)
    assert reg > 0
    np.testing.assert_allclose(ridge_leverage_scores(phi, reg).sum(), dof, rtol=1e-8)
    # against the eigenvalue formula, independently of the scores
    s = np.linalg.eigvalsh(phi.T @ phi)
    np.testing.assert_allclose(np.sum(s / (s + shape[0] * reg)), dof, rtol=1e-8)


def test_reg_for_degrees_of_freedom_follows_the_scale_of_the_features():
    # Phi -> c Phi, reg -> c^2 reg: the same scores, so the same choice.
    phi = np.random.default_rng(2).normal(size=(40, 30))
    reg = reg_for_degrees_of_freedom(phi, 5.0)
    np.testing.assert_allclose(reg_for_degrees_of_freedom(7.0 * phi, 5.0), 49 * reg)


@pytest.mark.parametrize("dof", [0.0, -1.0, 4.0, 10.0])
def test_reg_for_degrees_of_freedom_rejects_unreachable_targets(dof):
    # rank 4: d(reg) < 4 for every reg > 0
    phi = np.random.default_rng(3).normal(size=(30, 4))
    with pytest.raises(ValueError, match="degrees_of_freedom must lie in"):
        reg_for_degrees_of_freedom(phi, dof)


def test_scores_at_degrees_of_freedom_from_one_decomposition():
    from sklearn_pt.kernels._leverage import leverage_scores_at_degrees_of_freedom

    for shape in [(50, 20), (20, 50)]:
        phi = np.maximum(np.random.default_rng(4).normal(size=shape) + 0.2, 0)
        scores, reg = leverage_scores_at_degrees_of_freedom(torch.as_tensor(phi), 4.0)
        assert reg == pytest.approx(reg_for_degrees_of_freedom(phi, 4.0), rel=1e-9)
        np.testing.assert_allclose(
            scores.numpy(), ridge_leverage_scores(phi, reg), rtol=1e-9, atol=1e-12
        )
        assert float(scores.sum()) == pytest.approx(4.0, rel=1e-8)


@pytest.mark.parametrize("shape", [(40, 90), (90, 40)])
def test_scores_over_column_chunks_equal_the_whole_matrix(monkeypatch, shape):
    # A chunk of a few columns: the Gram matrix and the scores are sums over
    # several chunks, on both sides.
    from sklearn_pt.kernels import _leverage

    phi = np.maximum(np.random.default_rng(5).normal(size=shape) + 0.2, 0)
    whole = ridge_leverage_scores(phi, 0.05)
    monkeypatch.setattr(_leverage, "COLUMN_CHUNK_ELEMENTS", 7 * shape[0])
    np.testing.assert_allclose(
        ridge_leverage_scores(phi, 0.05), whole, rtol=1e-10, atol=1e-13
    )
    np.testing.assert_allclose(whole, explicit_scores(phi, 0.05), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_samples", [30, 200])
def test_relu_features_are_scored_without_being_held(monkeypatch, n_samples):
    from sklearn_pt.kernels import _leverage
    from sklearn_pt.kernels._leverage import (
        ReLUFeatures,
        leverage_scores_at_degrees_of_freedom,
    )

    generator = torch.Generator().manual_seed(0)
    X = torch.randn(n_samples, 4, generator=generator, dtype=torch.float64)
    weight = torch.randn(120, 4, generator=generator, dtype=torch.float64)
    bias = torch.randn(120, generator=generator, dtype=torch.float64)
    lazy = ReLUFeatures(X, weight, bias)
    assert lazy.shape == (n_samples, 120)
    whole = torch.relu(X @ weight.T + bias)
    torch.testing.assert_close(lazy.materialize(), whole, rtol=1e-14, atol=1e-14)
    expected, reg = leverage_scores_at_degrees_of_freedom(whole, 5.0)
    monkeypatch.setattr(_leverage, "COLUMN_CHUNK_ELEMENTS", 11 * n_samples)
    scores, lazy_reg = leverage_scores_at_degrees_of_freedom(lazy, 5.0)
    assert lazy_reg == pytest.approx(reg, rel=1e-10)
    torch.testing.assert_close(scores, expected, rtol=1e-10, atol=1e-13)


def test_float32_features_are_scored_in_float64():
    phi = np.maximum(np.random.default_rng(6).normal(size=(30, 60)), 0)
    phi32 = torch.as_tensor(phi, dtype=torch.float32)
    scores = ridge_leverage_scores(phi32, 0.1)
    assert scores.dtype == torch.float32
    exact = explicit_scores(phi32.double().numpy(), 0.1)
    # The float64 computation on the float32 values, rounded once at the end.
    np.testing.assert_allclose(scores.numpy(), exact, rtol=1e-6, atol=1e-7)
