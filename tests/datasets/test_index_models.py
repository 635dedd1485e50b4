import math

import numpy as np
import pytest

from sklearn_pt.datasets import (
    hermite_e_polynomial,
    make_multi_index,
    make_phase_retrieval,
    make_single_index,
)


def test_hermite_against_recurrence_and_orthogonality():
    z = np.linspace(-3, 3, 13)
    previous, current = np.ones_like(z), z
    for k in range(1, 6):  # He_{k+1} = z He_k - k He_{k-1}
        np.testing.assert_allclose(hermite_e_polynomial(k, z), current, atol=1e-12)
        previous, current = current, z * current - k * previous
    nodes, weights = np.polynomial.hermite_e.hermegauss(20)
    weights = weights / weights.sum()
    for j in range(5):
        for k in range(5):
            inner = np.sum(
                weights
                * hermite_e_polynomial(j, nodes)
                * hermite_e_polynomial(k, nodes)
            )
            assert inner == pytest.approx(
                math.factorial(k) if j == k else 0.0, abs=1e-9
            )


def test_multi_index_structure():
    X, y, theta = make_multi_index(
        2000, 30, n_directions=3, link="he2", random_state=0, return_directions=True
    )
    assert X.shape == (2000, 30) and y.shape == (2000,)
    np.testing.assert_allclose(theta.T @ theta, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(y, ((X @ theta) ** 2 - 1).mean(1), atol=1e-12)
    # He_2 of a standard Gaussian projection has mean 0.
    assert abs(y.mean()) < 4 * np.sqrt(2 / 3 / 2000)


def test_single_index_links_noise_and_reproducibility():
    X, y, theta = make_single_index(
        500, 8, link="he3", random_state=1, return_directions=True
    )
    z = X @ theta[:, 0]
    np.testing.assert_allclose(y, z**3 - 3 * z, atol=1e-10)
    X2, y2 = make_single_index(500, 8, link="he3", random_state=1)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    _, noisy = make_single_index(500, 8, link="he3", noise=0.5, random_state=1)
    assert np.std(noisy - y) == pytest.approx(0.5, rel=0.1)
    _, custom = make_single_index(500, 8, link=np.sin, random_state=1)
    np.testing.assert_allclose(custom, np.sin(z))


def test_phase_retrieval():
    X, y, theta = make_phase_retrieval(100, 6, random_state=0, return_directions=True)
    np.testing.assert_allclose(y, (X @ theta[:, 0]) ** 2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="cannot exceed n_features"):
        make_multi_index(10, 3, n_directions=4)
    with pytest.raises(ValueError, match="'link' parameter"):
        make_single_index(10, 3, link="he7")
    with pytest.raises(ValueError, match="'noise' parameter"):
        make_single_index(10, 3, noise=-1.0)
    with pytest.raises(ValueError, match="nonnegative int"):
        hermite_e_polynomial(-1, [0.0])
