"""Moniri-Hassani claims over enough seeds that no window of seeds decides.

Values measured when written are in the docstrings; thresholds sit well inside
them, and each assertion can fail (a reused batch no better than a fresh one
wins about half of the seeds with a mean gain near 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from sklearn_pt.experiments._two_step import added_outliers, he3_alignment
from sklearn_pt.theory import order_strength, spike_count


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
