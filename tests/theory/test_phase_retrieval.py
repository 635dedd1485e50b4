"""Tests of the spectral estimator's asymptotic overlap in phase retrieval."""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import erfcx

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.decomposition import (
    SpectralEstimator,
    max_overlap_preprocessing,
    optimal_preprocessing,
)
from sklearn_pt.decomposition._spectral import (
    PREPROCESSINGS as ESTIMATOR_PREPROCESSINGS,
)
from sklearn_pt.theory import (
    spectral_overlap,
    spectral_ratio_for_overlap,
    spectral_threshold,
)
from sklearn_pt.theory._phase_retrieval import (
    PREPROCESSINGS,
    _limit,
    _max_overlap_transform,
    _moments,
    _optimal_transform,
    _preprocessing,
)

DELTAS = np.array([0.2, 0.45, 0.55, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 30.0])


# --------------------------------------------------------------------------
# validation and shapes
# --------------------------------------------------------------------------
@pytest.mark.parametrize("delta", [0.0, -1.0, np.nan, np.inf, [1.0, -2.0], "two"])
def test_bad_delta_names_the_parameter(delta):
    with pytest.raises(ValueError, match="delta must be"):
        spectral_overlap(delta)


@pytest.mark.parametrize("func", [spectral_overlap, spectral_threshold])
def test_bad_preprocessing_says_the_options(func):
    args = (1.0,) if func is spectral_overlap else ()
    options = "'optimal', 'max-overlap', 'trimming' or 'identity'"
    with pytest.raises(ValueError, match=options):
        func(*args, preprocessing="truncated")
    with pytest.raises(ValueError, match="callable"):
        func(*args, preprocessing=np.sqrt)


@pytest.mark.parametrize("value", [0.0, -3.0, math.inf, True, "9"])
def test_bad_trimming_threshold(value):
    with pytest.raises(ValueError, match="trimming_threshold must be"):
        spectral_overlap(2.0, "trimming", trimming_threshold=value)


def test_scalar_in_float_out_array_in_array_out():
    assert isinstance(spectral_overlap(2.0), float)
    assert isinstance(spectral_overlap(np.float64(2.0), "identity"), float)
    grid = np.array([[0.3, 2.0], [4.0, 2.0]])
    out = spectral_overlap(grid)
    assert out.shape == (2, 2)
    assert out[0, 1] == out[1, 1] == spectral_overlap(2.0)
    assert spectral_overlap([2.0]).shape == (1,)


def test_same_preprocessings_as_the_estimator():
    assert PREPROCESSINGS == ESTIMATOR_PREPROCESSINGS


def test_optimal_transform_is_the_estimators():
    # The curve must describe the estimator: same T, including the constant
    # held at 1 below delta = 1/2 and the denominator floor.
    u = np.concatenate([[0.0, 1e-10, 1e-8, 1e-6], np.linspace(0.01, 40.0, 401)])
    for delta in (0.1, 0.5, 0.8, 2.0, 50.0):
        np.testing.assert_array_equal(
            _optimal_transform(u, delta), optimal_preprocessing(u, delta)
        )


# --------------------------------------------------------------------------
# quadrature against independent computations
# --------------------------------------------------------------------------
def _optimal_moments_closed_form(lam, delta):
    """The four moments for the optimal T, from E[1/(s^2 + k)] in closed form.

    With ``z = (u - 1)/(u + c - 1)``: ``z / (lam - z) = (u - 1) / (a (u + k))``,
    ``a = lam - 1``, ``k = (lam (c - 1) + 1) / a``;
    ``g1 = E[1/(u + k)] = sqrt(pi / (2k)) erfcx(sqrt(k / 2))`` and
    ``g2 = E[1/(u + k)^2] = -g1'(k) = (1 + g1 - k g1) / (2k)``.
    """
    c = math.sqrt(2.0 * max(delta, 0.5))
    a = lam - 1.0
    k = (lam * (c - 1.0) + 1.0) / a
    g1 = math.sqrt(math.pi / (2.0 * k)) * erfcx(math.sqrt(k / 2.0))
    g2 = (1.0 + g1 - k * g1) / (2.0 * k)
    return np.array(
        [
            (1.0 - (k + 1.0) * g1) / a,
            (-k + k * (k + 1.0) * g1) / a,
            (1.0 - 2.0 * (k + 1.0) * g1 + (k + 1.0) ** 2 * g2) / a**2,
            (1.0 - 2.0 * (k + 1.0) * (1.0 - k * g1) + (k + 1.0) ** 2 * (g1 - k * g2))
            / a**2,
        ]
    )


@pytest.mark.parametrize(("delta", "lam"), [(1.0, 1.5), (2.0, 1.42), (4.0, 3.0)])
def test_optimal_moments_match_closed_form(delta, lam):
    got = _moments(lam, _preprocessing("optimal", delta, 9.0))
    np.testing.assert_allclose(got, _optimal_moments_closed_form(lam, delta), rtol=1e-9)


def test_optimal_edge_values_in_closed_form():
    # At lambda = 1: psi(1) = 1/delta, psi'(1) = 0, phi(1) = 2/c = sqrt(2/delta).
    for delta in (0.7, 2.0, 9.0):
        limit = _limit(delta, _preprocessing("optimal", delta, 9.0))
        assert limit.lambda_bar == pytest.approx(1.0, abs=1e-9)
        assert limit.margin == pytest.approx(math.sqrt(2 / delta) - 1 / delta, rel=1e-9)
    # Below 1/2 the constant is held at c = 1: margin 2 - 1/delta < 0.
    limit = _limit(0.3, _preprocessing("optimal", 0.3, 9.0))
    assert limit.margin == pytest.approx(2 - 1 / 0.3, rel=1e-9)


@pytest.mark.parametrize("gap", [1e-4, 0.05, 3.0])
def test_trimming_moments_match_adaptive_quadrature(gap):
    # Near lambda = t the integrands peak in a thin layer below s = sqrt(t).
    t = 9.0
    lam = t + gap
    got = _moments(lam, _preprocessing("trimming", 2.0, t))

    def expect(f):
        def integrand(s):
            u = s * s
            return f(u / (lam - u), u) * 2 * math.exp(-u / 2) / math.sqrt(2 * math.pi)

        edge = math.sqrt(t)
        width = gap / (2 * edge)
        points = [
            edge - width * 10.0**j for j in range(6) if edge - width * 10.0**j > 0
        ]
        return quad(integrand, 0, edge, points=points, limit=500, epsrel=1e-12)[0]

    want = [
        expect(lambda r, u: r),
        expect(lambda r, u: u * r),
        expect(lambda r, u: r * r),
        expect(lambda r, u: u * r * r),
    ]
    np.testing.assert_allclose(got, want, rtol=1e-8)


# --------------------------------------------------------------------------
# properties of the curves
# --------------------------------------------------------------------------
@pytest.mark.parametrize("preprocessing", PREPROCESSINGS)
def test_overlap_in_unit_interval(preprocessing):
    out = spectral_overlap(DELTAS, preprocessing)
    assert np.all((out >= 0) & (out <= 1))


def test_optimal_threshold_is_one_half():
    # Mondelli--Montanari: delta_u = 1 / E[(s^2 - 1)^2] = 1/2 for real,
    # noiseless phase retrieval; found here as the root of Lu--Li's margin.
    assert spectral_threshold() == pytest.approx(0.5, abs=1e-9)
    assert spectral_threshold("optimal") == spectral_threshold()


def test_trimming_threshold_and_identity():
    threshold = spectral_threshold("trimming")
    assert 1.0 < threshold < 2.5  # 1.6326 for t = 9
    assert spectral_threshold("identity") == math.inf
    # A cut at t = 1 keeps only |s| <= 1, where s^2 - 1 <= 0: theta* is not
    # even the top direction of E[T(y) x x^T], so the overlap is never > 0.
    assert spectral_threshold("trimming", trimming_threshold=1.0) == math.inf
    assert np.all(spectral_overlap(DELTAS, "trimming", trimming_threshold=1.0) == 0)


@pytest.mark.parametrize(
    ("preprocessing", "cut"), [("optimal", 9.0), ("trimming", 9.0), ("trimming", 4.0)]
)
def test_zero_below_threshold_increasing_above(preprocessing, cut):
    threshold = spectral_threshold(preprocessing, trimming_threshold=cut)
    below = threshold * np.array([0.05, 0.3, 0.7, 0.99])
    above = threshold * np.array([1.01, 1.1, 1.5, 2.0, 4.0, 10.0, 40.0])
    assert np.all(spectral_overlap(below, preprocessing, trimming_threshold=cut) == 0)
    values = spectral_overlap(above, preprocessing, trimming_threshold=cut)
    assert values[0] > 0
    assert np.all(np.diff(values) > 0)


def test_optimal_tends_to_one_at_rate_five_halves_over_delta():
    # lambda* ~ sqrt(2 delta), psi' ~ 1/delta, phi' ~ -E[u (u-1)^2] / c^4
    # = -5 / (2 delta^2), so 1 - overlap ~ 5 / (2 delta).
    for delta in (1e4, 1e5):
        deficit = 1.0 - spectral_overlap(delta)
        assert deficit == pytest.approx(2.5 / delta, rel=0.05)
    assert spectral_overlap(1e4, "trimming") > 0.999


def test_identity_is_zero_everywhere():
    assert np.all(spectral_overlap(DELTAS, "identity") == 0)


@pytest.mark.parametrize("cut", [3.0, 9.0, 25.0])
def test_optimal_dominates_trimming_and_identity(cut):
    optimal = spectral_overlap(DELTAS)
    trimming = spectral_overlap(DELTAS, "trimming", trimming_threshold=cut)
    assert np.all(optimal >= trimming)
    informative = optimal > 0
    assert np.all(optimal[informative] > trimming[informative])  # strictly
    assert np.all(optimal >= spectral_overlap(DELTAS, "identity"))
    assert np.all(spectral_threshold("trimming", trimming_threshold=cut) > 0.5)


def test_max_overlap_transform_is_the_estimators_and_optimal_at_c_1():
    u = np.concatenate([[0.0, 1e-10, 1e-8, 1e-6], np.linspace(0.01, 40.0, 401)])
    np.testing.assert_array_equal(
        _max_overlap_transform(u), max_overlap_preprocessing(u)
    )
    # T = 1 - 1/y is Mondelli-Montanari's T with the constant c = 1, the
    # value it takes at delta <= 1/2; the latter's denominator u + 1 - 1
    # rounds with relative error eps (1 + 1/u), hence the tolerance.
    eps = np.finfo(np.float64).eps
    best, optimal = max_overlap_preprocessing(u), optimal_preprocessing(u, 0.5)
    bound = 4 * eps * (1 + 1 / np.maximum(u, eps)) * np.abs(optimal)
    assert np.all(np.abs(best - optimal) <= bound)


def test_max_overlap_has_the_same_threshold_and_a_larger_overlap_above_it():
    """Luo, Alghamdi and Lu (2019): 1 - 1/y maximises the overlap at every
    delta, with the weak-recovery threshold of the optimal T (1/2)."""
    assert spectral_threshold("max-overlap") == pytest.approx(0.5, abs=1e-9)
    best = spectral_overlap(DELTAS, "max-overlap")
    optimal = spectral_overlap(DELTAS)
    above = DELTAS > 0.5
    assert np.all(best[~above] == 0)
    assert np.all(best[above] > optimal[above])
    # ... and above every constant c > 1 of the same family (by quadrature):
    # the family's overlap falls with c at fixed delta.
    for delta in (1.0, 2.0, 4.0):
        for c in (1.1, 1.5, 2.0):
            # the optimal T's constant is sqrt(2 delta'): c at delta' = c^2 / 2
            family = _limit(delta, _preprocessing("optimal", c**2 / 2.0, 9.0))
            assert family.overlap < spectral_overlap(delta, "max-overlap")


@pytest.mark.parametrize("preprocessing", ["optimal", "max-overlap", "trimming"])
@pytest.mark.parametrize("cosine", [0.1, 0.5, 0.9])
def test_ratio_for_overlap_is_where_the_overlap_reaches_the_cosine(
    preprocessing, cosine
):
    delta = spectral_ratio_for_overlap(cosine, preprocessing)
    assert delta > spectral_threshold(preprocessing)
    assert spectral_overlap(delta, preprocessing) == pytest.approx(cosine**2)
    # the overlap rises with delta: just below it, the cosine is not reached
    assert spectral_overlap(0.99 * delta, preprocessing) < cosine**2


def test_ratio_for_overlap_rises_with_the_cosine_and_max_overlap_needs_less():
    ratios = [spectral_ratio_for_overlap(c) for c in (0.2, 0.5, 0.8)]
    assert ratios == sorted(ratios) and len(set(ratios)) == 3
    # the experiment's success criterion |cosine| > 0.5 in the limit
    assert spectral_ratio_for_overlap(0.5) == pytest.approx(1.12, abs=0.005)
    best = spectral_ratio_for_overlap(0.5, "max-overlap")
    assert 0.5 < best < spectral_ratio_for_overlap(0.5)
    # a grid search agrees with the root to the grid's step
    grid = np.linspace(0.51, 3.0, 2491)
    first = grid[np.argmax(spectral_overlap(grid) >= 0.25)]
    assert abs(first - spectral_ratio_for_overlap(0.5)) <= 1e-3


# --------------------------------------------------------------------------
# agreement with SpectralEstimator
# --------------------------------------------------------------------------
D = 2000
# (preprocessing, delta, seeds, sd of overlap^2, sd of the top eigenvalue),
# the sds measured at d = 2000 over seeds 0..7.
CASES = [
    ("optimal", 1.0, (0, 1, 2), 0.0202, 0.0221),
    ("optimal", 2.0, (0, 1, 2), 0.0170, 0.0133),
    ("optimal", 4.0, (0, 1, 2), 0.0117, 0.0076),
    ("trimming", 4.0, (0, 1), 0.0219, 0.1137),
    ("max-overlap", 1.0, (0,), 0.0242, 0.0196),
    ("max-overlap", 2.0, (0,), 0.0137, 0.0113),
    ("max-overlap", 4.0, (0,), 0.0045, 0.0061),
]


BELOW = ("optimal", 0.4, (0, 1, 2), 0.0140, 0.0270)


@pytest.fixture(scope="module")
def measured():
    """Squared overlaps and top eigenvalues of SpectralEstimator, per case."""
    data = {}
    out = {}
    for preprocessing, delta, seeds, _, _ in [*CASES, BELOW]:
        overlaps, eigenvalues = [], []
        for seed in seeds:
            if (delta, seed) not in data:
                data[delta, seed] = make_phase_retrieval(
                    round(delta * D), D, random_state=seed, return_directions=True
                )
            X, y, theta = data[delta, seed]
            est = SpectralEstimator(preprocessing=preprocessing).fit(X, y)
            # overlap() is |<v, theta>| / |theta|, not squared.
            cosine = abs(est.directions_[:, 0] @ theta[:, 0]) / np.linalg.norm(theta)
            assert est.overlap(theta) == pytest.approx(cosine, abs=1e-12)
            overlaps.append(est.overlap(theta) ** 2)
            eigenvalues.append(est.eigenvalues_[0])
        out[preprocessing, delta] = (np.array(overlaps), np.array(eigenvalues))
    return out


@pytest.mark.parametrize(("preprocessing", "delta", "seeds", "sd", "sd_eig"), CASES)
def test_agrees_with_spectral_estimator(
    measured, preprocessing, delta, seeds, sd, sd_eig
):
    """Theory vs ``SpectralEstimator`` at ``d = 2000``, mean over seeds.

    Measured at ``d = 2000`` over seeds 0..7 (mean +- sd of the squared
    overlap; theory in brackets): optimal ``delta = 1``: 0.215 +- 0.020
    (0.206); 2: 0.476 +- 0.017 (0.486); 4: 0.698 +- 0.012 (0.705);
    max-overlap ``delta = 1``: 0.236 +- 0.024 (0.231); 2: 0.631 +- 0.014
    (0.639); 4: 0.925 +- 0.005 (0.925), top eigenvalue 1.020 +- 0.020,
    0.498 +- 0.011, 0.248 +- 0.006 (theory 1.000, 0.500, 0.250); trimming
    ``delta = 2``: 0.098 +- 0.064 (0.091); 3: 0.280 +- 0.019 (0.277); 4:
    0.393 +- 0.022 (0.397). The 8-seed means are within 0.010 of the theory
    (finite-size bias), so the tolerance is ``0.015 + 3 sd / sqrt(n_seeds)``
    (0.035 to 0.061 here, against gaps of 0.2 to 0.3 between the cases). The
    top eigenvalue (theory ``zeta_delta(lambda*)``) measured within 1.8% of
    the theory (largest: optimal ``delta = 1``, 1.055 +- 0.022 vs 1.037):
    tolerance ``2% + 3 sd / sqrt(n_seeds)``.
    """
    overlaps, eigenvalues = measured[preprocessing, delta]
    limit = _limit(delta, _preprocessing(preprocessing, delta, 9.0))
    assert limit.overlap == spectral_overlap(delta, preprocessing)
    k = len(seeds)
    tol = 0.015 + 3 * sd / math.sqrt(k)
    assert overlaps.mean() == pytest.approx(limit.overlap, abs=tol)
    tol_eig = 0.02 * limit.eigenvalue + 3 * sd_eig / math.sqrt(k)
    assert eigenvalues.mean() == pytest.approx(limit.eigenvalue, abs=tol_eig)


def test_estimator_orders_like_the_theory(measured):
    # At delta = 4 the optimal beats trimming by 0.31 in theory; measured too.
    optimal = measured["optimal", 4.0][0].mean()
    trimming = measured["trimming", 4.0][0].mean()
    gap = spectral_overlap(4.0) - spectral_overlap(4.0, "trimming")
    assert optimal - trimming == pytest.approx(gap, abs=0.06)


def test_estimator_below_threshold(measured):
    """Optimal preprocessing at ``delta = 0.4 < 1/2``: theory 0.

    A random direction has squared overlap ``1/d``; near the threshold finite
    ``d`` leaves more: 0.030 +- 0.014 at ``d = 2000`` over seeds 0..7 (0.058
    at most), against 0.21 at ``delta = 1``. The bound 0.1 separates the two.
    The top eigenvalue sits at the bulk edge ``psi_delta(lambda_bar) =
    1/delta = 2.5`` (measured 2.476 +- 0.027).
    """
    preprocessing, delta, seeds, _, sd_eig = BELOW
    overlaps, eigenvalues = measured[preprocessing, delta]
    limit = _limit(delta, _preprocessing(preprocessing, delta, 9.0))
    assert limit.overlap == 0.0
    assert limit.eigenvalue == pytest.approx(1 / delta)
    assert overlaps.mean() < 0.1
    tol_eig = 0.02 * limit.eigenvalue + 3 * sd_eig / math.sqrt(len(seeds))
    assert eigenvalues.mean() == pytest.approx(limit.eigenvalue, abs=tol_eig)
