"""Moniri-Hassani claims over enough seeds that no window of seeds decides.

Values measured when written are in the docstrings; thresholds sit well inside
them, and each assertion can fail (a reused batch no better than a fresh one
wins about half of the seeds with a mean gain near 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from sklearn_pt.experiments._two_step import added_outliers, he3_alignment
from sklearn_pt.theory import cross_covariance_overlap, order_strength, spike_count


def test_reused_batch_aligns_added_outliers_with_he3_over_40_seeds():
    """N = n = 400, d = 100, (0.375, 0.45): the norm of theta's projection on
    the outliers step 2 adds. Measured over seeds 0-39: reuse 0.400, fresh
    0.238, paired gain 0.162 (s.e. 0.031), reuse ahead in 30 of 40; every
    8-seed window has a positive mean gain (0.106 to 0.23)."""
    assert spike_count(0.375, 0.45) >= 2
    gains = np.array(
        [
            he3_alignment(400, 100, (0.375, 0.45), "reuse", seed)[0]
            - he3_alignment(400, 100, (0.375, 0.45), "fresh", seed)[0]
            for seed in range(40)
        ]
    )
    standard_error = gains.std(ddof=1) / np.sqrt(gains.size)
    assert gains.mean() > 3 * standard_error
    assert np.sum(gains > 0) >= 25  # P(>= 25 of 40) = 0.04 at a fair coin


def test_reused_batch_puts_more_of_step_two_on_theta_than_the_fresh_noise():
    """d = 200, N = n = 800, (0.375, 0.45): the second step's update energy
    along theta, d |U theta|^2 / ||U||_F^2 (random direction: 1), free of
    outlier detection. Measured over seeds 0-39: reuse ahead by 4.52 (s.e.
    0.98) in 29 of 40; fresh 6.09 (s.e. 0.8), at the level kappa = 7 of the
    tilted noise direction X^T y / n (cross_covariance_overlap), which a
    fresh step reaches without any signal."""
    reuse, fresh = (
        np.array(
            [he3_alignment(800, 200, (0.375, 0.45), batch, s)[2] for s in range(40)]
        )
        for batch in ("reuse", "fresh")
    )
    gains = reuse - fresh
    assert gains.mean() > 3 * gains.std(ddof=1) / np.sqrt(gains.size)
    assert np.sum(gains > 0) >= 25
    cos2 = cross_covariance_overlap(800, 200, "he3") ** 2  # kappa / (kappa + d - 1)
    kappa = cos2 * 199 / (1 - cos2)
    assert kappa == pytest.approx(7.0)
    assert abs(fresh.mean() - kappa) < 3 * fresh.std(ddof=1) / np.sqrt(fresh.size)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=(
        "Moniri-Hassani: with a reused batch and Lambda >= 2 the alignment of "
        "the added outliers with He_3 stays Theta(1) as d grows. Measured "
        "(N = n = 4d, (0.375, 0.45), 8 seeds): 0.448 at d = 100, 0.325 at "
        "200, 0.139 at 400, 0.096 at 800 (fitted d^-0.79): the order-2 term "
        "grows only like N^0.2 (3.3 to 4.4 from N = 400 to 1600) and step 2 "
        "adds fewer outliers as d grows (2.5 at d = 100, 0.9 at d = 400)."
    ),
)
def test_reused_he3_alignment_does_not_decay_from_d_100_to_d_400():
    def mean_alignment(d):
        return np.mean(
            [he3_alignment(4 * d, d, (0.375, 0.45), "reuse", s)[0] for s in range(12)]
        )

    assert mean_alignment(400) >= 0.8 * mean_alignment(100)


def agreement(cell, n_seeds=12, width=300):
    counts = np.array([added_outliers(width, *cell, seed) for seed in range(n_seeds)])
    return np.sum(counts == spike_count(*cell))


def test_one_added_outlier_when_lambda_is_one():
    """(0.1, 0.45): Lambda = 1, agrees in 10 of 12 seeds at N = 300."""
    assert spike_count(0.1, 0.45) == 1
    assert agreement((0.1, 0.45)) >= 8


def test_no_added_outlier_when_lambda_is_zero_far_from_the_boundary():
    """(0.1, 0.05): Lambda = 0 and the order-1 strength 300^-0.35 = 0.14;
    agrees in 12 of 12 seeds at N = 300 (the Tracy-Widom test, level 0.05)."""
    assert spike_count(0.1, 0.05) == 0
    assert order_strength(300, 0.1, 0.05, 1) < 0.2
    assert agreement((0.1, 0.05)) >= 10


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=(
        "Finite-size crossover, measured: at (0.25, 0.2) Lambda = 0 but the "
        "order-1 term has strength 300^-0.05 = 0.75 at N = 300, and step 2 adds "
        "1-2 outliers in 12 of 12 seeds (0 of 12 agree); it agrees only as "
        "N -> infinity (N^-0.05 decays slowly)."
    ),
)
def test_no_added_outlier_when_lambda_is_zero_near_the_boundary():
    assert spike_count(0.25, 0.2) == 0
    assert agreement((0.25, 0.2)) >= 10
