"""Funk–Hecke eigenvalues of zonal kernels, checked on kernels solvable by
hand, and the Kolmogorov width they give."""

import numpy as np
import pytest

from sklearn_pt.kernels import BiasedReLUKernel
from sklearn_pt.kernels._biased_relu import _biased_relu_pairs
from sklearn_pt.theory import harmonic_multiplicity, kolmogorov_width, zonal_eigenvalues


@pytest.mark.parametrize("d", [3, 4, 5, 8])
def test_multiplicities_count_the_harmonics(d):
    # Harmonics of degree <= L are the polynomials of degree <= L restricted
    # to the sphere: C(L + d - 1, d - 1) + C(L + d - 2, d - 1) of them.
    from math import comb

    for top in range(6):
        total = sum(harmonic_multiplicity(k, d) for k in range(top + 1))
        assert total == comb(top + d - 1, d - 1) + comb(top + d - 2, d - 1)


@pytest.mark.parametrize("d", [3, 5, 7])
def test_polynomial_kernels_by_hand(d):
    # <x, y>: E[<x, y> y_1] = x_1 / d on degree 1 only.
    mu, count = zonal_eigenvalues(lambda t: t, d, 3)
    np.testing.assert_allclose(mu, [0, 1 / d, 0, 0], atol=1e-13)
    # <x, y>^2 = 1/d (degree 0) + the traceless part: mu_2 = 2 / (d (d + 2)).
    mu, count = zonal_eigenvalues(lambda t: t**2, d, 3)
    np.testing.assert_allclose(mu, [1 / d, 0, 2 / (d * (d + 2)), 0], atol=1e-13)
    assert mu @ count == pytest.approx(1.0)  # the trace, k(x, x)


def test_biased_relu_kernel_eigenvalues_match_its_gram_matrix():
    # The Gram matrix on n uniform points, divided by n, has the operator's
    # eigenvalues (up to sampling error) in blocks of the multiplicities.
    d = 5

    def profile(t):
        return _biased_relu_pairs(np.ones_like(t), np.ones_like(t), t, d=d, tau=1.0)[0]

    mu, count = zonal_eigenvalues(profile, d, 30)
    assert mu @ count == pytest.approx(float(profile(np.array([1.0]))[0]), rel=1e-4)
    assert np.all(np.diff(mu) < 0)  # falling with the degree, for this kernel
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    empirical = np.linalg.eigvalsh(BiasedReLUKernel()(X))[::-1] / len(X)
    starts = np.concatenate([[0], np.cumsum(count)])[:4]
    for degree, start in enumerate(starts):
        block = empirical[start : start + count[degree]]
        assert np.mean(block) == pytest.approx(mu[degree], rel=0.1)
    widths = [1, 6, 20]  # the ends of the first blocks: the next degree's
    np.testing.assert_allclose(kolmogorov_width(mu, count, widths), mu[1:4])


def test_kolmogorov_width_needs_enough_eigenvalues():
    with pytest.raises(ValueError, match="larger max_degree"):
        kolmogorov_width(np.array([1.0, 0.5]), np.array([1, 3]), [4])


def test_zonal_eigenvalues_rejects_low_dimensions():
    with pytest.raises(ValueError, match="at least 3"):
        zonal_eigenvalues(lambda t: t, 2, 3)
