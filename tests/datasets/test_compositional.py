import numpy as np
import pytest

from sklearn_pt.datasets import make_compositional_regression


def test_shapes_sphere_and_orthonormal_directions():
    X, y, V = make_compositional_regression(
        300, 12, n_inner=3, random_state=0, return_directions=True
    )
    assert X.shape == (300, 12) and y.shape == (300,) and V.shape == (12, 3)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-12)
    X2, y2 = make_compositional_regression(300, 12, n_inner=3, random_state=0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)


@pytest.mark.parametrize(
    ("outer", "expected"),
    [
        ("cos", lambda h: np.cos(2 * h.sum(axis=1))),
        ("product", lambda h: h.prod(axis=1)),
        (lambda h: h.max(axis=1), lambda h: h.max(axis=1)),
    ],
)
def test_target_is_outer_of_relu_features(outer, expected):
    d = 9
    X, y, V = make_compositional_regression(
        200, d, n_inner=2, outer=outer, random_state=3, return_directions=True
    )
    projections = np.sqrt(d) * np.einsum("nd,dk->nk", X, V)
    inner = np.where(projections > 0, projections, 0.0)
    np.testing.assert_allclose(y, expected(inner), atol=1e-12)


def test_projections_have_unit_variance():
    # sqrt(d) <v, x> with x uniform on the sphere has variance exactly 1; the
    # sample variance of 20000 draws is within 5% of it (about 5 sd).
    d = 20
    X, _, V = make_compositional_regression(
        20_000, d, n_inner=1, random_state=0, return_directions=True
    )
    assert np.var(np.sqrt(d) * X @ V[:, 0]) == pytest.approx(1.0, rel=0.05)


def test_determinism_and_seed_dependence():
    for seed in (0, 1, 2):
        a = make_compositional_regression(50, 6, random_state=seed)
        b = make_compositional_regression(50, 6, random_state=seed)
        assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))
    X0, _ = make_compositional_regression(50, 6, random_state=0)
    X1, _ = make_compositional_regression(50, 6, random_state=1)
    assert not np.allclose(X0, X1)


def test_random_state_isolation():
    # An int seed reads and writes no global state: NumPy's global generator
    # is left exactly as it was.
    before = np.random.get_state()
    make_compositional_regression(40, 5, random_state=7)
    after = np.random.get_state()
    assert before[0] == after[0] and np.array_equal(before[1], after[1])
    assert before[2:] == after[2:]

    rng = np.random.RandomState(0)
    X_a, _ = make_compositional_regression(40, 5, random_state=rng)
    X_b, _ = make_compositional_regression(40, 5, random_state=rng)
    assert not np.allclose(X_a, X_b)  # a RandomState instance is advanced
    X_c, _ = make_compositional_regression(40, 5, random_state=0)
    assert np.array_equal(X_a, X_c)  # ... from the same start as the int seed


def test_noise_is_added_with_requested_scale():
    _, clean = make_compositional_regression(4000, 8, random_state=4)
    X, noisy = make_compositional_regression(4000, 8, noise=0.3, random_state=4)
    X_clean, _ = make_compositional_regression(4000, 8, random_state=4)
    assert np.array_equal(X, X_clean)
    assert np.std(noisy - clean) == pytest.approx(0.3, rel=0.05)


def test_bad_arguments():
    with pytest.raises(ValueError, match="cannot exceed n_features"):
        make_compositional_regression(10, 3, n_inner=4)
    with pytest.raises(ValueError, match="'outer' parameter"):
        make_compositional_regression(10, 3, outer="sine")
    with pytest.raises(ValueError, match="'noise' parameter"):
        make_compositional_regression(10, 3, noise=-0.1)
    with pytest.raises(ValueError, match=r"outer returned shape \(10, 2\)"):
        make_compositional_regression(10, 3, outer=lambda h: h)
