"""Tests for sklearn_pt.theory.spike_count against exact rational arithmetic."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sklearn_pt.datasets import make_single_index
from sklearn_pt.theory import cross_covariance_overlap, spike_count

HALF = Fraction(1, 2)
# Exponents as exact fractions in [0, 1/2), so that the expected count is exact.
exponents = st.fractions(min_value=0, max_value=Fraction(29, 60), max_denominator=60)
degrees = st.one_of(st.none(), st.integers(1, 8))


def exact_count(alpha1: Fraction, alpha2: Fraction, degree) -> int:
    """``min(L - 1, floor(alpha2 / (1/2 - alpha1)))`` in exact arithmetic."""
    count = math.floor(alpha2 / (HALF - alpha1))
    return count if degree is None else min(degree - 1, count)


@given(alpha1=exponents, alpha2=exponents, degree=degrees)
def test_matches_exact_rational_formula(alpha1, alpha2, degree):
    assert spike_count(float(alpha1), float(alpha2), degree) == exact_count(
        alpha1, alpha2, degree
    )


@pytest.mark.parametrize(
    ("alpha1", "alpha2", "expected"),
    [
        (0.35, 0.3, 2),  # 0.3 / (0.5 - 0.35) == 1.9999999999999996 in floats
        (0.375, 0.125, 1),  # on the boundary between the regions 0 and 1
        (0.25, 0.25, 1),
        (0.4, 0.3, 3),
        (0.0, 0.49, 0),
    ],
)
def test_integer_ratios_are_not_lost_to_rounding(alpha1, alpha2, expected):
    assert spike_count(alpha1, alpha2) == expected


@pytest.mark.parametrize(
    ("alpha1", "alpha2", "ratio"),
    [
        (0.25, 0.25, 1),  # alpha1 + alpha2 = 1/2 exactly
        (0.375, 0.25, 2),  # 0.25 / 0.125, exact in binary floating point
        (0.4375, 0.1875, 3),  # 0.1875 / 0.0625
        (0.46875, 0.125, 4),  # 0.125 / 0.03125
    ],
)
def test_exact_integer_ratio_counts_the_boundary_term(alpha1, alpha2, ratio):
    # The ratios are exact in floats, so no rounding tolerance is involved.
    assert alpha2 / (0.5 - alpha1) == ratio
    # At an integer ratio K the order-K term has size N ** 0: the floor counts
    # it, so Lambda = K; each region includes its lower boundary line.
    assert spike_count(alpha1, alpha2) == ratio
    # Just below the line the order-K term vanishes as N grows: K - 1.
    assert spike_count(alpha1, alpha2 - 1e-6) == ratio - 1
    assert spike_count(alpha1, alpha2 + 1e-6) == ratio
    # A degree cap below K still wins.
    assert spike_count(alpha1, alpha2, degree=ratio) == ratio - 1


@given(alpha1=exponents, alpha2=exponents)
def test_small_total_exponent_adds_nothing(alpha1, alpha2):
    # alpha1 + alpha2 < 1/2: the second step acts like one step of eta1 + eta2.
    if alpha1 + alpha2 < HALF:
        assert spike_count(float(alpha1), float(alpha2)) == 0


@given(alpha1=exponents, a=exponents, b=exponents)
def test_monotone_in_both_exponents(alpha1, a, b):
    low, high = sorted((float(a), float(b)))
    assert spike_count(float(alpha1), low) <= spike_count(float(alpha1), high)
    assert spike_count(low, float(alpha1)) <= spike_count(high, float(alpha1))


def test_degree_caps_the_count():
    assert spike_count(0.45, 0.45) == 9
    assert spike_count(0.45, 0.45, degree=3) == 2
    assert spike_count(0.45, 0.45, degree=2) == 1
    assert spike_count(0.45, 0.45, degree=1) == 0  # a linear activation


def test_one_step_special_case():
    assert spike_count(0.3) == 0
    assert spike_count(0.3, None, total=True) == 1
    assert spike_count(0.4, 0.3, total=True) == 1 + spike_count(0.4, 0.3)


def test_broadcasts_and_returns_python_int_for_scalars():
    assert type(spike_count(0.25, 0.3)) is int
    grid = spike_count(np.array([0.1, 0.25, 0.375])[:, None], [0.05, 0.2, 0.35, 0.45])
    assert grid.shape == (3, 4)
    assert grid.dtype == np.int64
    np.testing.assert_array_equal(grid, [[0, 0, 0, 1], [0, 0, 1, 1], [0, 1, 2, 3]])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alpha1": 0.5, "alpha2": 0.1}, r"alpha1 must lie in \[0, 0.5\); got 0.5"),
        ({"alpha1": -0.1, "alpha2": 0.1}, "alpha1 must lie in"),
        ({"alpha1": float("nan"), "alpha2": 0.1}, "alpha1 must lie in"),
        ({"alpha1": 0.2, "alpha2": [0.1, 0.7]}, "alpha2 must lie in .* got 0.7"),
        ({"alpha1": "a", "alpha2": 0.1}, "alpha1 must be a real number"),
        ({"alpha1": 0.2, "alpha2": 0.1, "degree": 0}, "degree must be a positive int"),
        ({"alpha1": 0.2, "alpha2": 0.1, "degree": 2.5}, "degree must be a positive"),
        ({"alpha1": 0.2, "alpha2": 0.1, "degree": True}, "degree must be a positive"),
    ],
)
def test_argument_errors_say_what_was_expected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        spike_count(**kwargs)


def test_order_strength_is_the_heuristic_and_agrees_with_spike_count():
    from sklearn_pt.theory import order_strength

    # by hand: 500 ** (0.2 - 0.25) = exp(-0.05 ln 500)
    assert order_strength(500, 0.25, 0.2, 1) == pytest.approx(
        np.exp(-0.05 * np.log(500)), rel=1e-12
    )
    # spike_count counts the orders whose strength does not vanish with N
    for a1 in (0.1, 0.25, 0.375):
        for a2 in (0.05, 0.2, 0.35, 0.45):
            growing = [
                k
                for k in range(1, 12)
                if order_strength(4000, a1, a2, k)
                >= order_strength(1000, a1, a2, k) * (1 - 1e-12)
            ]
            assert len(growing) == spike_count(a1, a2)
    grid = order_strength(np.array([250, 2000])[:, None], 0.25, 0.3, [1, 2])
    assert grid.shape == (2, 2) and grid[1, 0] > grid[0, 0] and grid[1, 1] < grid[0, 1]
    with pytest.raises(ValueError, match="order"):
        order_strength(500, 0.25, 0.2, 0)
    with pytest.raises(ValueError, match="n_neurons"):
        order_strength(-1, 0.25, 0.2, 1)
    with pytest.raises(ValueError, match="alpha1"):
        order_strength(500, 0.5, 0.2, 1)


# ------------------------------------------------- cross_covariance_overlap
@pytest.mark.parametrize("d", [10, 100, 800])
def test_he3_cross_covariance_tilt_is_sqrt_7_over_d_plus_6(d):
    # E[He_3^2 z^2] / E[He_3^2] = (E z^8 - 6 E z^6 + 9 E z^4) / 6 = 42 / 6,
    # and He_3 has no linear part, so n drops out.
    for n in (d, 4 * d):
        value = cross_covariance_overlap(n, d, "he3")
        assert value == pytest.approx(math.sqrt(7 / (d + 6)), rel=1e-12)


@pytest.mark.parametrize("link", ["he3", "he2", "tanh"])
def test_cross_covariance_overlap_matches_simulation(link):
    # Monte Carlo over 300 draws of (X, y) at n = 400, d = 100: the root mean
    # squared cosine of X^T y / n with theta (measured within 7% for He_3 and
    # He_2, whose ratio of expectations overestimates slightly, and 0.1% for
    # tanh, whose linear part dominates).
    n, d = 400, 100
    cosines = []
    for seed in range(300):
        X, y, theta = make_single_index(
            n, d, link=link, random_state=seed, return_directions=True
        )
        y = (y - y.mean()) / y.std()
        v, theta = X.T @ y / n, np.ravel(theta)
        cosines.append((v @ theta) ** 2 / (v @ v) / (theta @ theta))
    measured = math.sqrt(np.mean(cosines))
    assert measured == pytest.approx(cross_covariance_overlap(n, d, link), rel=0.1)


def test_cross_covariance_overlap_bad_arguments_say_what_to_do():
    with pytest.raises(ValueError, match="n_samples must be an int >= 1"):
        cross_covariance_overlap(10.5, 3)
    with pytest.raises(ValueError, match="must be >= 1"):
        cross_covariance_overlap(10, 0)
    with pytest.raises(ValueError, match="link must be one of"):
        cross_covariance_overlap(10, 3, "he7")
    with pytest.raises(ValueError, match="must not be constant"):
        cross_covariance_overlap(10, 3, np.ones_like)
