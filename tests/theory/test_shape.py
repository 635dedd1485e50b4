"""Tests for sklearn_pt.theory.bound_shape and fit_mismatch_ratio.

The shape is checked against ratios of approximation_bound; the fit against
synthetic curves with a known ratio and against a brute-force grid search.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_pt.theory import (
    approximation_bound,
    biased_relu_alpha,
    biased_relu_kappa0,
    bound_shape,
    fit_mismatch_ratio,
)

GRID = np.array([0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0])
fast = settings(max_examples=40, deadline=None, derandomize=True)


def brute_force_fit(p, e, alpha, max_ratio=1e4, n=400_001):
    """The grid point of ``log r`` with the smallest sum of squares."""
    u = np.linspace(0.0, np.log(max_ratio), n)
    residual = np.log(e)[None, :] + alpha * np.log1p(p[None, :] * np.expm1(u)[:, None])
    cost = np.einsum("ij,ij->i", residual, residual)
    best = int(np.argmin(cost))
    return float(np.exp(u[best])), float(cost[best]), u[1] - u[0]


# -------------------------------------------------------------- bound_shape
@pytest.mark.parametrize(("d", "tau", "kappa1"), [(5, 10.0, 1.0), (3, 2.0, 0.5)])
def test_shape_is_the_bound_relative_to_p0(d, tau, kappa1):
    # Widths large enough for the bound to be informative (no warning).
    width = 1e6
    bound = approximation_bound(GRID, width, d=d, init_scale=tau, kappa1=kappa1)
    ratio = biased_relu_kappa0(d, tau) / kappa1
    np.testing.assert_allclose(
        bound_shape(GRID, ratio, alpha=biased_relu_alpha(d)),
        bound / bound[0],
        rtol=1e-12,
    )


def test_shape_limits_and_broadcasting():
    assert bound_shape(0.0, 7.0, alpha=2.0) == 1.0
    assert bound_shape(1.0, 7.0, alpha=2.0) == pytest.approx(7.0**-2, rel=1e-15)
    assert bound_shape(0.3, 1.0, alpha=1.75) == 1.0  # no mismatch, no gain
    out = bound_shape(GRID[:, None], np.array([1.0, 10.0, 100.0]), alpha=1.75)
    assert out.shape == (7, 3)
    assert np.all(np.diff(out[:, 1:], axis=0) < 0)  # falls in P for r > 1
    assert isinstance(bound_shape(0.5, 2.0, alpha=1.0), float)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"trainable_proportion": 1.5, "mismatch_ratio": 2.0, "alpha": 1.0},
            r"trainable_proportion must lie in \[0, 1\]",
        ),
        (
            {"trainable_proportion": 0.5, "mismatch_ratio": 0.0, "alpha": 1.0},
            "mismatch_ratio must lie in .*positive value",
        ),
        (
            {"trainable_proportion": 0.5, "mismatch_ratio": 2.0, "alpha": -1.0},
            "alpha must lie in .*positive value",
        ),
    ],
)
def test_shape_arguments_are_validated(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bound_shape(**kwargs)


# ------------------------------------------------------- fit_mismatch_ratio
@pytest.mark.parametrize("ratio", [1.0, 1.5, 10.0, 67.88, 500.0])
@pytest.mark.parametrize("alpha", [1.0, 1.75, 4.0])
def test_fit_recovers_the_ratio_of_an_exact_curve(ratio, alpha):
    fitted, rms = fit_mismatch_ratio(
        GRID, bound_shape(GRID, ratio, alpha=alpha), alpha=alpha
    )
    assert fitted == pytest.approx(ratio, rel=1e-8)
    assert rms < 1e-8


def test_fit_recovers_the_ratio_from_noisy_seeds():
    # Five seeds with 10% multiplicative noise, fitted at once.
    rng = np.random.default_rng(0)
    p = np.tile(GRID, 5)
    e = bound_shape(p, 10.0, alpha=1.75) * np.exp(rng.normal(0, 0.1, p.size))
    e[p == 0] = 1.0
    fitted, rms = fit_mismatch_ratio(p, e, alpha=1.75)
    assert fitted == pytest.approx(10.0, rel=0.1)
    assert 0.05 < rms < 0.15


@fast
@given(
    ratio=st.floats(1.0, 1e3),
    alpha=st.floats(0.5, 4.0),
    seed=st.integers(0, 2**16),
    noise=st.floats(0.0, 0.5),
)
def test_fit_matches_brute_force_grid(ratio, alpha, seed, noise):
    rng = np.random.default_rng(seed)
    e = bound_shape(GRID, ratio, alpha=alpha) * np.exp(rng.normal(0, noise, GRID.size))
    fitted, rms = fit_mismatch_ratio(GRID, e, alpha=alpha)
    grid_ratio, grid_cost, step = brute_force_fit(GRID, e, alpha)
    # Never worse than the grid's best point, and next to it.
    assert GRID.size * rms**2 <= grid_cost * (1 + 1e-10) + 1e-14
    assert abs(np.log(fitted) - np.log(grid_ratio)) <= 2 * step


def test_fit_reports_the_ends_of_the_interval():
    # Errors that do not fall: training does not help, r = 1.
    flat = np.array([1.0, 1.1, 1.2, 1.0, 1.3, 1.1, 1.2])
    assert fit_mismatch_ratio(GRID, flat, alpha=1.75)[0] == 1.0
    # Errors falling faster than any ratio up to max_ratio allows.
    steep = bound_shape(GRID, 1e6, alpha=1.75)
    assert fit_mismatch_ratio(GRID, steep, alpha=1.75, max_ratio=1e3)[0] == 1e3


def test_fit_depends_on_alpha_through_the_last_point():
    # With one point at P = 1, r ** -alpha = e exactly.
    p, e = np.array([0.0, 1.0]), np.array([1.0, 1 / 50.0])
    for alpha in (1.0, 1.75, 3.0):
        fitted, rms = fit_mismatch_ratio(p, e, alpha=alpha)
        assert fitted == pytest.approx(50.0 ** (1 / alpha), rel=1e-8)
        assert rms < 1e-8


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([0.0, 0.5], [1.0]), {"alpha": 1.0}, "one value per point; got 2 .* 1"),
        (([0.0, 0.0], [1.0, 0.9]), {"alpha": 1.0}, "must contain a positive value"),
        (([0.0, 0.5], [1.0, 0.0]), {"alpha": 1.0}, "error_ratios must lie in"),
        (([0.0, 1.5], [1.0, 0.5]), {"alpha": 1.0}, "proportions must lie in"),
        (([0.0, 0.5], [1.0, 0.5]), {"alpha": 0.0}, "alpha must lie in"),
        (([0.0, 0.5], [1.0, np.nan]), {"alpha": 1.0}, "error_ratios must be finite"),
        (
            ([0.0, 0.5], [1.0, 0.5]),
            {"alpha": 1.0, "max_ratio": 1.0},
            r"max_ratio must lie in \(1, inf\).*e\.g\. 1e4",
        ),
    ],
)
def test_fit_arguments_are_validated(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_mismatch_ratio(*args, **kwargs)
