"""Tests for sklearn_pt.theory.spike_count against exact rational arithmetic."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
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
    with pytest.raises(ValueError, match="width"):
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


# ------------------------------------------------ Hermite coefficients
from numpy.polynomial.hermite_e import hermeval  # noqa: E402
from scipy.special import erf  # noqa: E402

from sklearn_pt.theory import (  # noqa: E402
    bbp_threshold,
    count_signal_outliers,
    hermite_coefficients,
    predict_outlier_count,
    two_step_signal,
)
from sklearn_pt.theory._two_step import (  # noqa: E402
    _derivative,
    _first_step,
    smoothed_derivative,
)


def he_at_zero(m: int) -> float:
    return 0.0 if m % 2 else (-1) ** (m // 2) * math.prod(range(m - 1, 0, -2))


def test_hermite_coefficients_of_closed_forms():
    phi0 = 1 / math.sqrt(2 * math.pi)
    relu = [phi0, 0.5] + [
        phi0 * he_at_zero(k - 2) / math.factorial(k) for k in range(2, 13)
    ]  # E[relu He_k] = phi(0) He_{k-2}(0), k >= 2 (Stein twice)
    np.testing.assert_allclose(hermite_coefficients("relu", 12), relu, atol=1e-14)
    np.testing.assert_allclose(
        hermite_coefficients("quadratic", 5), [1, 0, 1, 0, 0, 0], atol=1e-13
    )
    np.testing.assert_allclose(
        hermite_coefficients("hermite2", 4), [0, 1, 0.5, 0, 0], atol=1e-13
    )
    np.testing.assert_allclose(
        hermite_coefficients("hermite3", 5), [0, 1, 0.5, 1 / 6, 0, 0], atol=1e-13
    )
    # sin + cos: E[e^{iz} He_k] = i^k e^{-1/2}, so c_k = e^{-1/2} s_k / k!
    signs = [1, 1, -1, -1] * 4
    sincos = [math.exp(-0.5) * s / math.factorial(k) for k, s in enumerate(signs)]
    np.testing.assert_allclose(hermite_coefficients("sincos", 15), sincos, atol=1e-14)
    assert np.all(np.abs(sincos) > 0)


@pytest.mark.parametrize("activation", ["gelu", "tanh", "softplus", "relu"])
def test_hermite_coefficients_against_monte_carlo(activation):
    import torch

    from sklearn_pt.nn import ACTIVATIONS

    z = np.random.default_rng(0).standard_normal(400_000)
    values = ACTIVATIONS[activation](torch.as_tensor(z)).numpy()
    c = hermite_coefficients(activation, 5)
    for k in range(6):
        samples = values * hermeval(z, np.eye(6)[k]) / math.factorial(k)
        error = samples.std() / math.sqrt(z.size)
        assert abs(samples.mean() - c[k]) < 4 * error + 1e-12


def test_parity_of_the_registry_activations():
    """gelu, relu, softplus: z/2 + even (no c_3, c_5, ...); tanh odd."""
    for name in ("gelu", "relu", "softplus"):
        c = hermite_coefficients(name, 9)
        assert c[1] == pytest.approx(0.5, abs=1e-13)
        share = np.abs(c) * np.sqrt([math.factorial(k) for k in range(10)])
        assert np.all(share[3::2] < 1e-14)
        assert np.all(share[2::2] > 1e-4)
    c = hermite_coefficients("tanh", 9)
    assert np.all(np.abs(c[0::2]) < 1e-14) and np.all(np.abs(c[1::2]) > 1e-5)


def test_hermite_series_rebuilds_the_activation_and_callables_agree():
    c = hermite_coefficients("sincos", 40)
    z = np.linspace(-2.5, 2.5, 11)
    np.testing.assert_allclose(hermeval(z, c), np.sin(z) + np.cos(z), atol=1e-10)
    gelu = hermite_coefficients(lambda t: t * 0.5 * (1 + erf(t / math.sqrt(2))), 6)
    np.testing.assert_allclose(gelu, hermite_coefficients("gelu", 6), atol=1e-14)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"activation": "swish", "degree": 3}, "activation must be one of"),
        ({"activation": 3.0, "degree": 3}, "or a callable"),
        ({"activation": "gelu", "degree": -1}, "degree must be an int"),
        ({"activation": lambda t: t[:1], "degree": 2}, "same shape"),
    ],
)
def test_hermite_coefficients_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hermite_coefficients(**kwargs)


@settings(deadline=None, max_examples=40)
@given(alpha1=exponents, alpha2=exponents)
def test_spike_count_with_activation_keeps_the_orders_with_nonzero_coefficients(
    alpha1, alpha2
):
    a1, a2 = float(alpha1), float(alpha2)
    lam = spike_count(a1, a2)
    if lam > 22:  # sincos's shares fall below ZERO_COEFFICIENT_RTOL at k = 24
        return
    assert spike_count(a1, a2, activation="sincos") == lam  # all present
    assert spike_count(a1, a2, activation="gelu") == (lam + 1) // 2  # k odd
    assert spike_count(a1, a2, activation="tanh") == lam // 2  # k even
    assert spike_count(a1, a2, activation="hermite2") == spike_count(a1, a2, 2)
    assert spike_count(a1, a2, activation="hermite3") == spike_count(a1, a2, 3)


def test_spike_count_activation_broadcasts_and_counts_the_total():
    got = spike_count(0.4, [0.05, 0.15, 0.25, 0.45], activation="tanh", total=True)
    assert got.tolist() == [1, 1, 2, 3]  # Lambda 0, 1, 2, 4 -> k = 2, 4 only
    with pytest.raises(ValueError, match="activation=None"):
        spike_count(0.499, 0.49, activation="gelu")


# ------------------------------------------------ finite-N signal
def test_smoothed_derivative_is_the_gaussian_average_of_sigma_prime():
    shifts = np.array([[-1.0, 0.0, 0.7], [0.2, 1.5, -0.4]])
    scales = np.array([1.0, 1.8])
    got = smoothed_derivative("sincos", shifts, scales)
    want = np.exp(-(scales[:, None] ** 2) / 2) * (np.cos(shifts) - np.sin(shifts))
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)
    # Taylor: m'(0) = E[sigma''] = 2 c_2 (gelu: 2 * 0.2116)
    h = 1e-3
    slope = np.diff(smoothed_derivative("gelu", [-h, h])) / (2 * h)
    assert slope[0] == pytest.approx(2 * hermite_coefficients("gelu", 2)[2], rel=1e-3)


def test_first_step_is_the_estimators_first_step():
    """The theory's step (correlation loss, a / sqrt(N), standardised y) is
    the library's convention: the same W_1 as TwoStepFeatures, to rounding."""
    from sklearn_pt.feature_extraction import TwoStepFeatures
    from sklearn_pt.feature_extraction._two_step_plan import standardise_targets

    X, y = make_single_index(120, 30, link="he3", random_state=1)
    features = TwoStepFeatures(
        hidden_layer_sizes=50,
        activation="sincos",
        n_steps=1,
        random_state=2,
        dtype="float64",
    ).fit(X, y)
    W0, W1 = features.first_layer_weights_
    a = features.second_layer_weights_
    got = _first_step(
        W0, X, standardise_targets(y), a, features.step_sizes_[0], "sincos"
    )
    np.testing.assert_allclose(got, W1, rtol=1e-10, atol=1e-13)


def test_signal_expansion_matches_the_smoothed_step_for_a_small_move():
    """For a small first step, S_2 - S_1 = T_0 + T_1 + O(move^2): the Hermite
    expansion's first two orders, built here from their formulas."""
    rng = np.random.default_rng(0)
    N, n, d = 300, 200, 50
    X = rng.standard_normal((n, d))
    y = np.tanh(X[:, 0]) + 0.5 * X[:, 1] ** 2
    y = (y - y.mean()) / y.std()
    a = rng.standard_normal(N)
    eta = (0.3, 1.0)
    signal = two_step_signal((X, y), (X, y), a, eta, "sincos")
    c = hermite_coefficients("sincos", 3)
    beta = X.T @ y / n
    move = eta[0] * c[1] / np.sqrt(N)
    T0 = eta[1] * c[1] / np.sqrt(N) * np.outer(a, beta)
    v1 = X.T @ (y * (X @ beta)) / n
    T1 = eta[1] * 2 * c[2] * move / np.sqrt(N) * np.outer(a**2, v1)
    step = signal.second - signal.first
    assert np.linalg.norm(step - T0 - T1) < 0.05 * np.linalg.norm(T1)
    assert signal.orders[1] == pytest.approx(np.linalg.norm(T1), rel=1e-10)
    assert signal.orders[0] == pytest.approx(np.linalg.norm(T0), rel=1e-10)
    tanh = two_step_signal((X, y), (X, y), a, eta, "tanh")
    assert tanh.orders[1] == 0 and tanh.orders[2] > 0  # parity: no k = 1


def test_reused_signal_is_the_mean_of_step_two_over_initialisations():
    """With a reused batch, S_2 - S_1 is the step-2 gradient averaged over
    W_0 (the data and a fixed): against 1000 simulated initialisations, the
    sample's own term kept exact is within 0.3 (relative), and replacing it
    by its mean mu_1 (built here from the formula) is off by more than 0.6.
    (The 1000-draw average itself is off by about 0.1.)"""
    rng = np.random.default_rng(0)
    N, n, d = 200, 100, 100
    X = rng.standard_normal((n, d))
    y = np.tanh(X[:, 0])
    y = (y - y.mean()) / y.std()
    a = rng.standard_normal(N)
    eta = (2 * N**0.375, 1.0)

    def initial():
        return rng.standard_normal((N, d)) / np.sqrt(d)

    def step_two(mean_derivative):
        return (a[:, None] * mean_derivative) @ (y[:, None] * X) / (n * np.sqrt(N))

    # step 1 acts row by row: 250 draws stacked are one (250 N, d) step (a
    # tiled; the step size times sqrt(250) undoes the 1 / sqrt(250 N) scale)
    chunk, simulated = 250, np.zeros((N, n))
    for _ in range(4):
        W0s = rng.standard_normal((chunk * N, d)) / np.sqrt(d)
        W1s = _first_step(W0s, X, y, np.tile(a, chunk), eta[0] * chunk**0.5, "sincos")
        simulated += _derivative("sincos", W1s @ X.T).reshape(chunk, N, n).sum(0)
    simulated /= 4 * chunk
    W0 = initial()
    signal = two_step_signal((X, y), (X, y), a, eta, "sincos", initial_weights=W0)
    c = hermite_coefficients("sincos", 1)
    beta = X.T @ y / n
    first = np.outer(eta[0] * c[1] * a / np.sqrt(N), beta)
    widths = np.linalg.norm(_first_step(W0, X, y, a, eta[0], "sincos") - first, axis=1)
    widths *= np.sqrt(np.mean(np.sum(X * X, axis=1)) / d)
    mean_move = np.outer(eta[0] * c[1] * a / np.sqrt(N), X @ beta)
    mean_only = smoothed_derivative("sincos", mean_move, widths)

    def error(step):
        want = step_two(simulated)
        return np.linalg.norm(step - want) / np.linalg.norm(want)

    np.testing.assert_allclose(signal.first, first)
    assert error(signal.second - signal.first) < 0.3
    assert error(step_two(mean_only)) > 0.6


def test_count_signal_outliers_against_a_simulated_spiked_matrix():
    """BBP: a rank-one signal leaves a white bulk iff theta > c^(1/4); the
    count from the bulk's measured edge agrees with the simulated spectrum."""
    rng = np.random.default_rng(0)
    N, d = 800, 200
    assert bbp_threshold(N, d) == pytest.approx(2**0.5)
    u, v = np.ones(N) / np.sqrt(N), np.eye(d)[0]
    for theta, expected in ((2.5, 1), (0.9, 0)):
        noise = rng.standard_normal((N, d)) / np.sqrt(d)
        W = noise + theta * np.outer(u, v)
        s = np.linalg.svd(W, compute_uv=False)
        edge = 1 + np.sqrt(N / d)
        assert count_signal_outliers(theta * np.outer(u, v), edge) == expected
        assert (s[0] > edge + 0.1) == bool(expected)


def test_predict_outlier_count_is_the_bbp_threshold_on_a_white_bulk():
    """On a white bulk the D-transform's threshold is bbp_threshold (N = 800,
    d = 200: sqrt(2)), and the count agrees with the simulated spectrum's
    edge test on either side of it."""
    from sklearn_pt.spectral import soft_edge_test

    rng = np.random.default_rng(0)
    N, d = 800, 200
    u, v = np.ones(N) / np.sqrt(N), np.eye(d)[0]
    for theta, expected in ((2.5, 1), (1.9, 1), (1.0, 0), (0.5, 0)):
        S = theta * np.outer(u, v)
        W = S + rng.standard_normal((N, d)) / np.sqrt(d)
        test = soft_edge_test(np.linalg.svd(W, compute_uv=False))
        kwargs = {"edge": test.edge, "threshold": test.threshold}
        assert predict_outlier_count(S, W, **kwargs) == expected
        assert test.n_outliers == expected
        # and its transpose (N < d)
        test = soft_edge_test(np.linalg.svd(W.T, compute_uv=False))
        kwargs = {"edge": test.edge, "threshold": test.threshold}
        assert predict_outlier_count(S.T, W.T, **kwargs) == expected


def test_predict_outlier_count_counts_a_heavy_row():
    """A row of the noise with three times the others' norm is an outlier
    of its own (the signal has none); one with 1.1 times is not."""
    from sklearn_pt.spectral import soft_edge_test

    rng = np.random.default_rng(1)
    N = d = 400
    S = np.zeros((N, d))
    for factor, expected in ((3.0, 1), (1.1, 0)):
        W = rng.standard_normal((N, d)) / np.sqrt(d)
        W[5] *= factor
        test = soft_edge_test(np.linalg.svd(W, compute_uv=False))
        kwargs = {"edge": test.edge, "threshold": test.threshold}
        assert predict_outlier_count(S, W, **kwargs) == expected
        assert test.n_outliers == expected


def test_singular_values_above_a_floor_equal_the_dense_ones():
    """Lanczos for the few values above the floor, doubling ``k`` while the
    smallest found is above it: equal to the SVD's, for a signal whose
    vectors are orthogonal to the ones vector, for more values above the
    floor than the first ``k``, for a small matrix and for zero."""
    from sklearn_pt.theory._two_step import _singular_values_above

    rng = np.random.default_rng(0)
    alternating = np.resize([1.0, -1.0], 300) / np.sqrt(300)  # orthogonal to 1
    rank_one = 5.0 * np.outer(rng.standard_normal(400) / 20, alternating)
    decaying = rng.standard_normal((400, 300)) * 0.5 ** np.arange(300)  # columns
    cases = [(rank_one, 0.1), (decaying, 1e-3), (decaying[:20, :12], 1e-3)]
    for S, floor in cases:
        dense = np.linalg.svd(S, compute_uv=False)
        found = _singular_values_above(S, floor)
        assert found.size == (dense > floor).sum() and found.size > 0
        np.testing.assert_allclose(found, dense[: found.size], rtol=1e-10)
    assert _singular_values_above(decaying, 1e-3).size > 8  # k doubled
    assert _singular_values_above(np.zeros((50, 40)), 0.1).size == 0
