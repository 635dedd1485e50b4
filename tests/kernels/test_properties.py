"""Property tests of BiasedReLUKernel on random points (hypothesis,
derandomised): symmetry, positive semi-definiteness, nonnegativity and the
diagonal formula. Points are drawn both inside the ball of radius
``init_scale`` (closed form) and outside it (clipping correction)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_pt.kernels import BiasedReLUKernel

fast = settings(max_examples=50, deadline=None, derandomize=True)


@st.composite
def point_sets(draw, max_samples=7):
    """``(X, tau)``: up to ``max_samples`` points in dimension 1 to 6 with norms
    up to ``radius * tau``."""
    d = draw(st.integers(1, 6))
    n = draw(st.integers(2, max_samples))
    tau = draw(st.floats(0.2, 5.0))
    radius = draw(st.floats(0.1, 3.0))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((n, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    norms = radius * tau * rng.uniform(0.0, 1.0, size=(n, 1))
    return directions * norms, tau


@fast
@given(data=point_sets())
def test_kernel_matrix_is_symmetric(data):
    X, tau = data
    kernel = BiasedReLUKernel(init_scale=tau)
    K = kernel(X)
    np.testing.assert_array_equal(K, K.T)
    Y = X[::-1] * 0.7
    np.testing.assert_allclose(kernel(X, Y), kernel(Y, X).T, rtol=1e-10, atol=1e-14)


@fast
@given(data=point_sets())
def test_kernel_matrix_is_psd_and_nonnegative(data):
    X, tau = data
    K = BiasedReLUKernel(init_scale=tau)(X)
    # An expectation of products of ReLUs: entrywise nonnegative, and a Gram
    # matrix of features, so PSD (and Cauchy-Schwarz holds) up to rounding.
    assert np.all(K >= 0)
    eigenvalues = np.linalg.eigvalsh(K)
    assert eigenvalues.min() >= -1e-10 * max(eigenvalues.max(), 1e-300)
    diag = np.diag(K)
    assert np.all(K**2 <= np.outer(diag, diag) * (1 + 1e-9) + 1e-300)


@fast
@given(data=point_sets(max_samples=12))
def test_diag_is_the_formula_inside_the_ball(data):
    X, tau = data
    norms = np.linalg.norm(X, axis=1)
    X = X[norms <= tau]
    if len(X) == 0:
        X = np.zeros((1, data[0].shape[1]))
    d = X.shape[1]
    expected = np.sum(X**2, axis=1) / (2 * d) + tau**2 / 6
    kernel = BiasedReLUKernel(init_scale=tau)
    np.testing.assert_allclose(kernel.diag(X), expected, rtol=1e-12)


@fast
@given(data=point_sets())
def test_diag_matches_the_kernel_matrix_everywhere(data):
    X, tau = data
    kernel = BiasedReLUKernel(init_scale=tau)
    np.testing.assert_allclose(kernel.diag(X), np.diag(kernel(X)), rtol=1e-10)
