"""Property tests of sklearn_pt.theory (hypothesis, derandomised).

They complement tests/theory/test_partial.py and test_two_step.py, which
check the formulas against independent evaluations: here the structural
properties (limits, monotonicity in every argument, inverse consistency,
bounds, argument checks) are checked on random arguments.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sklearn_pt.theory import (
    approximation_bound,
    biased_relu_kappa0,
    kappa_p,
    proportion_for_reduction,
    spike_count,
)

fast = settings(max_examples=50, deadline=None, derandomize=True)

proportions = st.floats(0.0, 1.0)
inner_proportions = st.floats(1e-6, 1.0 - 1e-6)
kappas = st.floats(1e-2, 1e3)
dims = st.integers(2, 100)
init_scales = st.floats(1.0, 50.0)
widths = st.floats(3.0, 1e6)  # above e * delta, where the bound decreases in m
deltas = st.floats(1e-6, 0.999)
exponents = st.floats(0.0, 0.5, exclude_max=True)
degrees = st.one_of(st.none(), st.integers(1, 8))
REL = 1e-12
# Random widths and mismatches include the regime where approximation_bound
# exceeds its constant and warns; test_partial.py tests that warning.
pytestmark = pytest.mark.filterwarnings(
    "ignore:approximation_bound is outside the regime:UserWarning"
)


# ---------------------------------------------------------------- kappa_p
@fast
@given(p=proportions, kappa0=kappas, kappa1=kappas)
def test_kappa_p_is_symmetric_under_swapping_the_two_groups(p, kappa0, kappa1):
    # P trained neurons of mismatch kappa1 and 1 - P frozen ones of kappa0.
    assert kappa_p(p, kappa0, kappa1) == pytest.approx(
        kappa_p(1.0 - p, kappa1, kappa0), rel=REL
    )


@fast
@given(p1=proportions, p2=proportions, kappa0=kappas, kappa1=kappas)
def test_inverse_kappa_p_is_linear_in_p(p1, p2, kappa0, kappa1):
    # Harmonic interpolation: 1 / kappa_P is the linear interpolation of
    # 1 / kappa0 and 1 / kappa1, so its value at the midpoint is the mean.
    middle = 1.0 / kappa_p((p1 + p2) / 2, kappa0, kappa1)
    mean = (1.0 / kappa_p(p1, kappa0, kappa1) + 1.0 / kappa_p(p2, kappa0, kappa1)) / 2
    assert middle == pytest.approx(mean, rel=REL)


@fast
@given(p=inner_proportions, kappa0=kappas, kappa1=kappas)
def test_kappa_p_lies_strictly_between_the_limits_inside(p, kappa0, kappa1):
    assume(abs(kappa0 - kappa1) > 1e-6 * max(kappa0, kappa1))
    value = kappa_p(p, kappa0, kappa1)
    assert min(kappa0, kappa1) < value < max(kappa0, kappa1)


@fast
@given(kappa0=kappas, kappa1=kappas, eps=st.floats(1e-12, 1e-6))
def test_kappa_p_is_continuous_at_both_ends(kappa0, kappa1, eps):
    # |d kappa_P / dP| = kappa_P^2 |1/kappa1 - 1/kappa0| <= max^2 |...|, plus
    # a few ulps of rounding in the evaluation.
    slope = max(kappa0, kappa1) ** 2 * abs(1 / kappa1 - 1 / kappa0)
    rounding = 8 * np.finfo(float).eps * max(kappa0, kappa1)
    allowed = slope * eps + rounding
    assert abs(kappa_p(eps, kappa0, kappa1) - kappa0) <= allowed
    assert abs(kappa_p(1 - eps, kappa0, kappa1) - kappa1) <= allowed


@fast
@given(p=st.one_of(st.floats(-10.0, -1e-9), st.floats(1.0 + 1e-9, 10.0)))
def test_kappa_p_rejects_proportions_outside_unit_interval(p):
    with pytest.raises(ValueError, match=r"trainable_proportion must lie in \[0, 1\]"):
        kappa_p(p, 2.0)


@fast
@given(kappa=st.floats(-10.0, 0.0))
def test_kappa_p_rejects_nonpositive_mismatch(kappa):
    with pytest.raises(ValueError, match=r"kappa0 must lie in .*positive value"):
        kappa_p(0.5, kappa)
    with pytest.raises(ValueError, match=r"kappa1 must lie in .*positive value"):
        kappa_p(0.5, 2.0, kappa)


# ----------------------------------------------------- approximation_bound
def bound(p=0.5, m=1000.0, d=5, tau=2.0, delta=0.05, kappa1=1.0, constant=1.0):
    return approximation_bound(
        p, m, d=d, init_scale=tau, delta=delta, kappa1=kappa1, constant=constant
    )


def assert_not_increasing(first, second):
    assert second <= first * (1 + REL)


@fast
@given(m1=widths, m2=widths, delta=deltas, p=proportions, d=dims, tau=init_scales)
def test_bound_decreases_in_width(m1, m2, delta, p, d, tau):
    small, large = sorted((m1, m2))
    assert_not_increasing(
        bound(p, small, d, tau, delta), bound(p, large, d, tau, delta)
    )


@fast
@given(d1=deltas, d2=deltas, m=widths, p=proportions, d=dims, tau=init_scales)
def test_bound_decreases_as_the_failure_probability_grows(d1, d2, m, p, d, tau):
    # A smaller delta asks for more confidence, hence a larger bound.
    low, high = sorted((d1, d2))
    assert_not_increasing(bound(p, m, d, tau, low), bound(p, m, d, tau, high))


@fast
@given(k1=kappas, k2=kappas, p=st.floats(1e-3, 1.0), d=dims, tau=init_scales)
def test_bound_increases_with_the_trained_mismatch(k1, k2, p, d, tau):
    low, high = sorted((k1, k2))
    assert_not_increasing(
        bound(p, d=d, tau=tau, kappa1=high), bound(p, d=d, tau=tau, kappa1=low)
    )


@fast
@given(t1=init_scales, t2=init_scales, p=st.floats(0.0, 0.999), d=dims)
def test_bound_increases_with_the_initialisation_mismatch(t1, t2, p, d):
    # kappa0 = 4 sqrt(2) tau (d + 1) / d grows with tau = init_scale.
    low, high = sorted((t1, t2))
    assert biased_relu_kappa0(d, low) <= biased_relu_kappa0(d, high)
    assert_not_increasing(bound(p, d=d, tau=high), bound(p, d=d, tau=low))


@fast
@given(p1=proportions, p2=proportions, d=dims, tau=init_scales)
def test_bound_decreases_in_p_when_training_helps(p1, p2, d, tau):
    # kappa1 = 1 < kappa0 for every tau >= 1: training neurons helps.
    low, high = sorted((p1, p2))
    assert_not_increasing(bound(low, d=d, tau=tau), bound(high, d=d, tau=tau))


@fast
@given(delta=st.one_of(st.floats(-1.0, 0.0), st.floats(1.0, 5.0)))
def test_bound_rejects_delta_outside_the_open_unit_interval(delta):
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\).*e\.g\. 0\.05"):
        bound(delta=delta)


@fast
@given(tau=st.floats(0.0, 1.0, exclude_max=True))
def test_bound_rejects_init_scale_below_one(tau):
    with pytest.raises(ValueError, match=r"init_scale must lie in .*init_scale >= 1"):
        bound(tau=tau)


# ------------------------------------------------- proportion_for_reduction
def reduction_fraction(p, *, m, delta, constant, d, tau, kappa1):
    """``(B(0) - B(P)) / (B(0) - B(1))`` with :func:`approximation_bound`."""
    b0, bp, b1 = (bound(q, m, d, tau, delta, kappa1, constant) for q in (0.0, p, 1.0))
    return (b0 - bp) / (b0 - b1)


@fast
@given(
    q=proportions,
    d=st.integers(2, 30),
    tau=init_scales,
    factor=st.floats(0.01, 0.9),
    m=widths,
    delta=deltas,
    constant=st.floats(1e-3, 1e3),
)
def test_proportion_is_the_inverse_of_the_bound_reduction(
    q, d, tau, factor, m, delta, constant
):
    # kappa1 below kappa0: training reduces the bound.
    kappa1 = factor * biased_relu_kappa0(d, tau)
    p = proportion_for_reduction(q, d=d, init_scale=tau, kappa1=kappa1)
    assert 0.0 <= p <= 1.0
    fraction = reduction_fraction(
        p, m=m, delta=delta, constant=constant, d=d, tau=tau, kappa1=kappa1
    )
    assert fraction == pytest.approx(q, abs=1e-8)


@fast
@given(
    q=proportions, d=st.integers(2, 30), tau=init_scales, factor=st.floats(1.0, 20.0)
)
def test_proportion_rejects_kappa1_at_or_above_kappa0(q, d, tau, factor):
    # The bound is then flat or grows with P: no reduction to capture.
    kappa1 = factor * biased_relu_kappa0(d, tau)
    with pytest.raises(
        ValueError,
        match=r"kappa1 must be smaller than kappa0 .*"
        r"Pass kappa1 <",
    ):
        proportion_for_reduction(q, d=d, init_scale=tau, kappa1=kappa1)


@fast
@given(q=st.one_of(st.floats(-5.0, -1e-9), st.floats(1.0 + 1e-9, 5.0)))
def test_proportion_rejects_fractions_outside_unit_interval(q):
    with pytest.raises(ValueError, match=r"fraction must lie in \[0, 1\].*e\.g\. 0\.9"):
        proportion_for_reduction(q, d=5, init_scale=10.0)


# ------------------------------------------------------------- spike_count
@fast
@given(alpha1=exponents, a=exponents, b=exponents, degree=degrees)
def test_spike_count_is_monotone_in_alpha2_for_every_degree(alpha1, a, b, degree):
    low, high = sorted((a, b))
    assert spike_count(alpha1, low, degree) <= spike_count(alpha1, high, degree)


@fast
@given(alpha1=exponents, alpha2=exponents, degree=degrees)
def test_spike_count_bounds(alpha1, alpha2, degree):
    count = spike_count(alpha1, alpha2, degree)
    assert isinstance(count, int)
    assert 0 <= count <= math.floor(alpha2 / (0.5 - alpha1) + 1e-9)
    if degree is not None:
        assert count <= degree - 1
    assert spike_count(alpha1, alpha2, degree, total=True) == count + 1
    assert spike_count(alpha1, None, degree) == 0


@fast
@given(
    bad=st.one_of(
        st.floats(-10.0, 0.0, exclude_max=True),
        st.floats(0.5, 10.0),
        st.sampled_from([math.nan, math.inf, -math.inf]),
    )
)
def test_spike_count_rejects_exponents_outside_the_theory(bad):
    with pytest.raises(ValueError, match=r"alpha1 must lie in \[0, 0\.5\).*e\.g\."):
        spike_count(bad, 0.25)
    with pytest.raises(ValueError, match=r"alpha2 must lie in \[0, 0\.5\).*e\.g\."):
        spike_count(0.25, bad)


@fast
@given(
    degree=st.one_of(
        st.integers(-5, 0), st.floats(1.5, 4.5), st.booleans(), st.just("2")
    )
)
def test_spike_count_rejects_bad_degrees(degree):
    with pytest.raises(ValueError, match=r"degree must be a positive int .* or None"):
        spike_count(0.25, 0.25, degree)
