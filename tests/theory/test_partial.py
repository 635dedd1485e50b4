"""Tests for sklearn_pt.theory: formulas checked against independent evaluations."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from sklearn_pt.theory import (
    approximation_bound,
    biased_relu_alpha,
    biased_relu_kappa0,
    kappa_p,
    proportion_for_reduction,
)

UNINFORMATIVE = "approximation_bound is outside the regime where it is informative"
# The formula checks below probe the whole domain, including widths where the
# bound exceeds its constant and warns; the warning has its own tests.
pytestmark = pytest.mark.filterwarnings(f"ignore:{UNINFORMATIVE}:UserWarning")

proportions = st.floats(0.0, 1.0)
kappa0s = st.floats(1e-2, 1e3)
kappa1s = st.floats(1e-2, 5.0)
dims = st.integers(2, 200)
scales = st.floats(1.0, 100.0)
fractions = st.floats(0.0, 1.0)


def brute_bound(p, m, d, tau, delta=0.05, kappa1=1.0, constant=1.0):
    """The bound written out with Python floats, one value at a time."""
    kappa0 = 4 * math.sqrt(2) * tau * (d + 1) / d
    kp = 1 / (p / kappa1 + (1 - p) / kappa0)
    return constant * (kp * math.log(m / delta) / m) ** ((d + 2) / (d - 1))


# ---------------------------------------------------------------- kappa_p
@given(kappa0=kappa0s, kappa1=kappa1s)
def test_kappa_p_limits(kappa0, kappa1):
    assert kappa_p(0.0, kappa0, kappa1) == pytest.approx(kappa0, rel=1e-14)
    assert kappa_p(1.0, kappa0, kappa1) == pytest.approx(kappa1, rel=1e-14)


def test_kappa_p_matches_explicit_formula():
    p = np.linspace(0, 1, 11)
    for k0 in (0.5, 3.0, 67.0):
        for k1 in (0.2, 1.0, 4.0):
            expected = [1 / (pi / k1 + (1 - pi) / k0) for pi in p]
            np.testing.assert_allclose(kappa_p(p, k0, k1), expected, rtol=1e-14)


@given(p1=proportions, p2=proportions, kappa0=kappa0s, kappa1=kappa1s)
def test_kappa_p_monotone_and_between(p1, p2, kappa0, kappa1):
    lo, hi = sorted((p1, p2))
    k_lo, k_hi = kappa_p(lo, kappa0, kappa1), kappa_p(hi, kappa0, kappa1)
    # kappa_P moves monotonically from kappa0 (P = 0) to kappa1 (P = 1).
    if kappa1 <= kappa0:
        assert k_hi <= k_lo * (1 + 1e-14)
    else:
        assert k_hi >= k_lo * (1 - 1e-14)
    for k in (k_lo, k_hi):
        assert (
            min(kappa0, kappa1) * (1 - 1e-14) <= k <= max(kappa0, kappa1) * (1 + 1e-14)
        )


def test_kappa_p_broadcasts_and_returns_float_for_scalars():
    out = kappa_p(np.linspace(0, 1, 5)[:, None], np.array([2.0, 4.0, 8.0]))
    assert out.shape == (5, 3)
    assert isinstance(kappa_p(0.3, 2.0), float)
    assert isinstance(kappa_p([0.3], 2.0), np.ndarray)


# ---------------------------------------------------- biased-ReLU constants
def test_biased_relu_alpha_values():
    assert biased_relu_alpha(2) == 4.0
    assert biased_relu_alpha(5) == 1.75
    d = np.arange(2, 100)
    np.testing.assert_allclose(biased_relu_alpha(d), (d + 2) / (d - 1), rtol=1e-15)
    assert np.all(biased_relu_alpha(d) > 1)


def test_biased_relu_kappa0_values():
    assert biased_relu_kappa0(5, 10.0) == pytest.approx(48 * math.sqrt(2), rel=1e-15)
    assert biased_relu_kappa0(2, 1.0) == pytest.approx(6 * math.sqrt(2), rel=1e-15)
    out = biased_relu_kappa0(np.array([[2], [4]]), np.array([1.0, 2.0, 3.0]))
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out[1], 4 * math.sqrt(2) * np.array([1, 2, 3]) * 5 / 4)


@pytest.mark.parametrize("tau", [0.999, 0.5, 0.0, -1.0])
def test_biased_relu_kappa0_rejects_small_init_scale(tau):
    with pytest.raises(ValueError, match=r"init_scale.*>= 1"):
        biased_relu_kappa0(5, tau)


@pytest.mark.parametrize("d", [1, 0, -3, 2.5, np.nan])
def test_dimension_is_validated(d):
    with pytest.raises(ValueError, match=r"\bd must"):
        biased_relu_alpha(d)
    with pytest.raises(ValueError, match=r"\bd must"):
        biased_relu_kappa0(d, 1.0)


# ------------------------------------------------------- approximation bound
@pytest.mark.parametrize(
    ("p", "m", "d", "tau", "delta", "kappa1", "constant"),
    [
        (0.0, 100, 5, 10.0, 0.05, 1.0, 1.0),
        (0.3, 1000, 2, 1.0, 0.1, 2.0, 3.0),
        (1.0, 50, 11, 4.0, 0.01, 0.5, 0.2),
        (0.7, 7.5, 3, 1.5, 0.5, 1.0, 1.0),
    ],
)
def test_bound_matches_explicit_formula(p, m, d, tau, delta, kappa1, constant):
    got = approximation_bound(
        p, m, d=d, init_scale=tau, delta=delta, kappa1=kappa1, constant=constant
    )
    assert got == pytest.approx(
        brute_bound(p, m, d, tau, delta, kappa1, constant), rel=1e-13
    )


@given(p1=proportions, p2=proportions, d=dims, tau=scales, kappa1=kappa1s)
def test_bound_decreases_in_proportion(p1, p2, d, tau, kappa1):
    # kappa1 < 5 < 4 sqrt(2) tau (d+1)/d = kappa0, so training helps.
    lo, hi = sorted((p1, p2))
    b_lo = approximation_bound(lo, 100, d=d, init_scale=tau, kappa1=kappa1)
    b_hi = approximation_bound(hi, 100, d=d, init_scale=tau, kappa1=kappa1)
    assert b_hi <= b_lo * (1 + 1e-12)
    if hi - lo > 1e-6:
        assert b_hi < b_lo


@given(
    m1=st.floats(1.0, 1e7),
    m2=st.floats(1.0, 1e7),
    p=proportions,
    d=dims,
    delta=st.floats(1e-6, 0.3),
)
def test_bound_decreases_in_width(m1, m2, p, d, delta):
    # log(m / delta) / m decreases for m > e * delta, which holds for m >= 1 > 0.82.
    lo, hi = sorted((m1, m2))
    b_lo = approximation_bound(p, lo, d=d, init_scale=2.0, delta=delta)
    b_hi = approximation_bound(p, hi, d=d, init_scale=2.0, delta=delta)
    assert b_hi <= b_lo * (1 + 1e-12)


def test_bound_broadcasting_shapes():
    p = np.linspace(0, 1, 4).reshape(4, 1, 1)
    m = np.array([10.0, 100.0, 1000.0]).reshape(1, 3, 1)
    d = np.array([2, 5])
    out = approximation_bound(p, m, d=d, init_scale=3.0)
    assert out.shape == (4, 3, 2)
    assert out[2, 1, 1] == pytest.approx(brute_bound(p[2, 0, 0], 100.0, 5, 3.0))
    assert isinstance(approximation_bound(0.5, 10, d=3, init_scale=1.0), float)


# ------------------------------------- bound outside its informative regime
def rate(p, m, d, tau, delta=0.05, kappa1=1.0):
    """``kappa_P * log(m / delta) / m``, written out."""
    kappa0 = 4 * math.sqrt(2) * tau * (d + 1) / d
    return math.log(m / delta) / (m * (p / kappa1 + (1 - p) / kappa0))


def test_bound_warns_outside_the_informative_regime():
    # d = 5, tau = 10, width 256: kappa0* = 67.9, rate 2.26 > 1.
    assert rate(0.0, 256, 5, 10.0) == pytest.approx(2.26475, abs=1e-5)
    with pytest.warns(UserWarning, match=UNINFORMATIVE) as record:
        approximation_bound(0.0, 256, d=5, init_scale=10.0)
    assert len(record) == 1
    message = str(record[0].message)
    assert "kappa_P * log(width / delta) / width = 2.26 > 1" in message
    assert "trainable_proportion=0, width=256" in message
    assert "kappa_P=67.9, delta=0.05" in message
    assert "exceeds its constant C" in message
    assert "Pass a larger width: at least 643 neurons" in message
    assert record[0].filename == __file__  # points at the caller's line


@pytest.mark.filterwarnings("error")
def test_bound_does_not_warn_where_it_is_informative():
    approximation_bound(0.0, 1000, d=5, init_scale=10.0)  # rate 0.67
    approximation_bound(np.linspace(0, 1, 11), 1000, d=5, init_scale=10.0)
    approximation_bound(0.0, 256, d=5, init_scale=1.0)  # rate 0.23
    approximation_bound(1.0, 64, d=5, init_scale=10.0)  # kappa_P = kappa1 = 1


@pytest.mark.parametrize(
    ("d", "tau", "p", "delta"), [(5, 10.0, 0.0, 0.05), (3, 2.0, 0.3, 0.01)]
)
def test_informative_width_in_the_message_is_the_threshold(d, tau, p, delta):
    with pytest.warns(UserWarning, match=UNINFORMATIVE) as record:
        approximation_bound(p, 2.0, d=d, init_scale=tau, delta=delta)
    width = int(str(record[0].message).split("at least ")[1].split()[0])
    # Brute force over integer widths: the first one from which rate <= 1.
    widths = np.arange(3, 100_000)
    rates = np.array([rate(p, m, d, tau, delta) for m in widths])
    assert width == widths[np.flatnonzero(rates <= 1)[0]]
    assert rate(p, width, d, tau, delta) <= 1 < rate(p, width - 1, d, tau, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        approximation_bound(p, width, d=d, init_scale=tau, delta=delta)


def test_bound_warns_once_per_call_and_counts_the_values():
    # Along P the rate falls from 2.26 (P = 0) below 1 from P ~ 0.02 on.
    proportions = np.array([0.0, 0.01, 0.5, 1.0])
    expected = sum(rate(q, 256, 5, 10.0) > 1 for q in proportions)
    with pytest.warns(UserWarning, match=UNINFORMATIVE) as record:
        out = approximation_bound(proportions, 256, d=5, init_scale=10.0)
    assert len(record) == 1
    assert f"({expected} of 4 values)" in str(record[0].message)
    # The values are returned as without the warning.
    np.testing.assert_allclose(
        out, [brute_bound(q, 256, 5, 10.0) for q in proportions], rtol=1e-13
    )


# ------------------------------------------------- proportion for reduction
def reduction_fraction(p, d, tau, kappa1=1.0, m=1000.0, delta=0.05, constant=1.0):
    b = [
        approximation_bound(
            x, m, d=d, init_scale=tau, delta=delta, kappa1=kappa1, constant=constant
        )
        for x in (0.0, p, 1.0)
    ]
    return (b[0] - b[1]) / (b[0] - b[2])


def test_paper_value_d5_tau10():
    p = proportion_for_reduction(0.9, d=5, init_scale=10.0)
    assert p == pytest.approx(0.0406042636, abs=1e-10)
    # About 4% of trainable neurons capture 90% of the gain.
    assert reduction_fraction(p, 5, 10.0) == pytest.approx(0.9, abs=1e-12)


@pytest.mark.parametrize(
    ("q", "d", "tau", "kappa1"),
    [
        (0.9, 5, 10.0, 1.0),
        (0.5, 2, 1.0, 1.0),
        (0.99, 20, 3.0, 2.0),
        (0.1, 3, 50.0, 0.3),
    ],
)
def test_proportion_matches_brentq_and_grid(q, d, tau, kappa1):
    p = proportion_for_reduction(q, d=d, init_scale=tau, kappa1=kappa1)

    def gap(x):
        return reduction_fraction(x, d, tau, kappa1) - q

    assert p == pytest.approx(brentq(gap, 0.0, 1.0, xtol=1e-15), abs=1e-11)
    # Brute force: the grid point whose reduction fraction is closest to q.
    grid = np.linspace(0.0, 1.0, 200_001)
    kp = 1 / (grid / kappa1 + (1 - grid) / biased_relu_kappa0(d, tau))
    alpha = biased_relu_alpha(d)
    k0, k1 = biased_relu_kappa0(d, tau), kappa1
    frac = (k0**alpha - kp**alpha) / (k0**alpha - k1**alpha)
    assert abs(grid[np.argmin(np.abs(frac - q))] - p) <= 0.5 / 200_000 + 1e-12


@settings(max_examples=200)
@given(q=fractions, d=dims, tau=scales, kappa1=kappa1s)
def test_proportion_reproduces_fraction(q, d, tau, kappa1):
    p = proportion_for_reduction(q, d=d, init_scale=tau, kappa1=kappa1)
    assert 0.0 <= p <= 1.0
    assert reduction_fraction(p, d, tau, kappa1) == pytest.approx(q, abs=1e-9)


@given(q1=fractions, q2=fractions, d=dims, tau=scales)
def test_proportion_increases_with_fraction(q1, q2, d, tau):
    lo, hi = sorted((q1, q2))
    p_lo = proportion_for_reduction(lo, d=d, init_scale=tau)
    p_hi = proportion_for_reduction(hi, d=d, init_scale=tau)
    assert p_lo <= p_hi + 1e-12


def test_proportion_independent_of_width_delta_constant():
    p = proportion_for_reduction(0.75, d=4, init_scale=3.0)
    for m, delta, constant in [(10, 0.05, 1.0), (1e3, 0.2, 7.0), (1e6, 1e-4, 0.01)]:
        frac = reduction_fraction(p, 4, 3.0, m=m, delta=delta, constant=constant)
        assert frac == pytest.approx(0.75, abs=1e-12)


def test_proportion_endpoints_and_limits():
    np.testing.assert_allclose(
        proportion_for_reduction([0.0, 1.0], d=5, init_scale=10.0), [0, 1], atol=1e-14
    )
    # Larger mismatch: the same fraction is reached with fewer trainable neurons.
    taus = np.array([1.0, 2.0, 10.0, 100.0])
    p = proportion_for_reduction(0.9, d=5, init_scale=taus)
    assert np.all(np.diff(p) < 0)


def test_proportion_rejects_kappa1_above_kappa0():
    # Training then makes the bound grow with P: there is no reduction.
    k0 = biased_relu_kappa0(3, 1.0)
    with pytest.raises(ValueError) as info:
        proportion_for_reduction(0.3, d=3, init_scale=1.0, kappa1=100.0)
    message = str(info.value)
    assert message.startswith("kappa1 must be smaller than kappa0")
    assert f"= {k0!r}; got kappa1=100.0" in message
    assert "grows with the trainable proportion" in message
    assert f"Pass kappa1 < {k0:.6g}, e.g. the default 1.0" in message


def test_proportion_rejects_kappa1_above_kappa0_in_arrays():
    # One bad entry of a broadcast is enough; the message names it.
    k0 = biased_relu_kappa0(5, np.array([1.0, 10.0]))
    with pytest.raises(ValueError, match=r"got kappa1=20\.0\. .* grows with"):
        proportion_for_reduction(0.9, d=5, init_scale=[1.0, 10.0], kappa1=20.0)
    assert k0[0] < 20.0 < k0[1]
    # Just below kappa0 is allowed and reaches the fraction.
    kappa1 = biased_relu_kappa0(5, 2.0) * (1 - 1e-6)
    p = proportion_for_reduction(0.5, d=5, init_scale=2.0, kappa1=kappa1)
    assert 0 <= p <= 1


def test_proportion_broadcasting():
    out = proportion_for_reduction(
        np.array([0.5, 0.9])[:, None], d=np.array([3, 5, 7]), init_scale=10.0
    )
    assert out.shape == (2, 3)
    assert out[1, 1] == pytest.approx(proportion_for_reduction(0.9, d=5, init_scale=10))


def test_proportion_rejects_equal_kappas():
    k0 = biased_relu_kappa0(5, 2.0)
    with pytest.raises(
        ValueError,
        match=r"kappa1 must be smaller than kappa0 .* does not depend on the "
        r"trainable proportion",
    ):
        proportion_for_reduction(0.9, d=5, init_scale=2.0, kappa1=k0)


# ------------------------------------------------------------ bad arguments
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: kappa_p(-0.1, 2.0), r"trainable_proportion must lie in \[0, 1\]"),
        (lambda: kappa_p(1.1, 2.0), r"trainable_proportion must lie in \[0, 1\]"),
        (lambda: kappa_p([0.2, np.nan], 2.0), "trainable_proportion must be finite"),
        (lambda: kappa_p(0.5, 0.0), "kappa0 must lie in"),
        (lambda: kappa_p(0.5, 2.0, -1.0), "kappa1 must lie in"),
        (lambda: kappa_p("a", 2.0), "trainable_proportion must be a real number"),
        (
            lambda: approximation_bound(0.5, 0.01, d=3, init_scale=1.0),
            "width must exceed delta",
        ),
        (
            lambda: approximation_bound(0.5, 0.0, d=3, init_scale=1.0),
            "width must lie in",
        ),
        (
            lambda: approximation_bound(0.5, 10, d=3, init_scale=1.0, delta=1.0),
            r"delta must lie in \(0, 1\)",
        ),
        (
            lambda: approximation_bound(0.5, 10, d=3, init_scale=1.0, delta=0.0),
            r"delta must lie in \(0, 1\)",
        ),
        (
            lambda: approximation_bound(0.5, 10, d=3, init_scale=1.0, constant=0),
            "constant must lie in",
        ),
        (
            lambda: approximation_bound(0.5, 10, d=3, init_scale=0.5),
            "init_scale must lie in",
        ),
        (
            lambda: proportion_for_reduction(1.5, d=3, init_scale=1.0),
            r"fraction must lie in \[0, 1\]",
        ),
        (
            lambda: proportion_for_reduction(0.5, d=3, init_scale=1.0, kappa1=0.0),
            "kappa1 must lie in",
        ),
        (lambda: proportion_for_reduction(0.5, d=1, init_scale=1.0), r"\bd must"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_errors_say_the_fix():
    with pytest.raises(ValueError, match=r"pass init_scale >= 1\."):
        biased_relu_kappa0(3, 0.5)
    with pytest.raises(ValueError, match="Pass trainable_proportion between 0"):
        kappa_p(2.0, 1.0)
