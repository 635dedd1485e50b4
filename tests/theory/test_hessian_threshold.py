"""Tests of the Hessian's aligned outlier as a matrix-weighted spectral method."""

import math

import numpy as np
import pytest
from scipy.stats import ortho_group

from sklearn_pt.theory import (
    aligned_outlier,
    hessian_threshold,
    plateau_law,
    plateau_weights,
    scalar_aligned_outlier,
    scalar_outlier_threshold,
    spectral_threshold,
    weighted_lower_edge,
    weighted_resolvent,
)
from sklearn_pt.theory._phase_retrieval import (
    _GL_NODES,
    _GL_WEIGHTS,
    _limit,
    _panels,
    _preprocessing,
)

# A hand-solvable law: G^2 = 4 with probability p = 0.2 (where T = -1), else
# G = 1/2 and T = 0. With z = -T: mu* = 1 + delta p q (q = E[G^2 - 1 | z = 1]
# = 3), mu_bar = 1 + sqrt(p delta), outlier iff delta > 1 / (p q^2), at
# -(1 + delta p q)(1 + 1/q) / delta; lower edge -(1 + sqrt(p delta))^2 / delta.
P, Q = 0.2, 3.0
G_TWO = np.array([2.0, 0.5, 0.5, 0.5, 0.5])
T_TWO = np.where(G_TWO == 2.0, -1.0, 0.0)


def two_point_outlier(delta):
    return -(1 + delta * P * Q) * (1 + 1 / Q) / delta


def quadrature_law(name):
    """Gauss--Legendre nodes and weights of ``s >= 0`` (``s ~ N(0, 1)``,
    folded) and ``z = T(s^2)`` of a named preprocessing with fixed panels."""
    prep = _preprocessing(name, 1.0, 9.0)
    ends = _panels(2.0, prep)
    left, right = ends[:-1, None], ends[1:, None]
    half = 0.5 * (right - left)
    s = ((left + right) * 0.5 + half * _GL_NODES).ravel()
    weight = (
        (half * _GL_WEIGHTS).ravel() * np.exp(-0.5 * s * s) * math.sqrt(2 / math.pi)
    )
    return s, prep.transform(s * s), weight


# --------------------------------------------------------------------------
# hand-solvable cases
# --------------------------------------------------------------------------
@pytest.mark.parametrize("delta", [1.5, 4.0, 10.0])
@pytest.mark.parametrize("c", [1.0, 2.5, -0.7])
def test_constant_weight_gives_marchenko_pastur_edge(delta, c):
    expected = c * (1 - math.copysign(1, c) / math.sqrt(delta)) ** 2
    assert weighted_lower_edge([c], delta) == pytest.approx(expected, rel=1e-9)
    # m = 3: M = c I decouples into three copies
    weights = c * np.eye(3)[None].repeat(4, axis=0)
    assert weighted_lower_edge(weights, delta) == pytest.approx(expected, rel=1e-9)


def test_constant_weight_below_one_has_edge_at_zero():
    assert weighted_lower_edge([1.0], 0.5) == pytest.approx(0.0, abs=1e-6)


def test_constant_weight_has_no_outlier():
    # E[G^2] = 1 exactly: E[(G^2 - 1) M ...] = 0
    G = np.array([1.0, -1.0, 1.0])
    assert aligned_outlier(np.full(3, -1.0), G, 4.0) is None
    assert scalar_aligned_outlier(np.full(3, -1.0), G, 4.0) is None
    weights = -np.eye(2)[None].repeat(3, axis=0)
    assert aligned_outlier(weights, G, 4.0) is None


def test_resolvent_solves_the_fixed_point():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(50, 3, 3))
    M = (A + A.transpose(0, 2, 1)) / 2
    delta, lam = 3.0, weighted_lower_edge(M, 3.0) - 0.5
    S = weighted_resolvent(M, delta, lam)
    eye = np.eye(3)
    mean = np.mean(M @ np.linalg.inv(eye - S @ M / delta), axis=0)
    np.testing.assert_allclose(np.linalg.inv(S), lam * eye - mean, atol=1e-9)
    assert np.all(np.linalg.eigvalsh(S) < 0)
    far = weighted_resolvent(M, delta, -1e6)
    np.testing.assert_allclose(far, eye / -1e6, rtol=1e-4, atol=1e-12)


def test_resolvent_above_the_edge_says_the_fix():
    with pytest.raises(ValueError, match="lam must lie below the bulk's lower edge"):
        weighted_resolvent([1.0], 4.0, 0.3)


def test_two_point_law_closed_form():
    threshold = 1 / (P * Q**2)
    assert scalar_outlier_threshold(T_TWO, G_TWO) == pytest.approx(threshold, rel=1e-9)
    for delta in (0.9 * threshold, 0.99 * threshold):
        assert aligned_outlier(T_TWO, G_TWO, delta) is None
        assert scalar_aligned_outlier(T_TWO, G_TWO, delta) is None
    for delta in (1.01 * threshold, 1.0, 3.0):
        expected = two_point_outlier(delta)
        assert aligned_outlier(T_TWO, G_TWO, delta) == pytest.approx(expected, rel=1e-8)
        assert scalar_aligned_outlier(T_TWO, G_TWO, delta) == pytest.approx(
            expected, rel=1e-10
        )
        edge = -((1 + math.sqrt(P * delta)) ** 2) / delta
        assert weighted_lower_edge(T_TWO, delta) == pytest.approx(edge, rel=1e-8)
        assert expected < edge


# --------------------------------------------------------------------------
# the matrix code against the scalar case
# --------------------------------------------------------------------------
@pytest.mark.parametrize("delta", [1.0, 2.0, 5.0])
def test_matrix_code_with_m_one_is_the_scalar_case(delta):
    rng = np.random.default_rng(1)
    G = rng.normal(size=400)
    T = 0.3 - G**2 + 0.2 * rng.normal(size=400)  # a residual-like weight
    matrix = aligned_outlier(T[:, None, None], G, delta)
    scalar = scalar_aligned_outlier(T, G, delta)
    assert (matrix is None) == (scalar is None)
    if scalar is not None:
        assert matrix == pytest.approx(scalar, rel=1e-8)
    # the scalar edge is the bulk edge when there is no outlier
    threshold = scalar_outlier_threshold(T, G)
    assert (scalar is None) == (delta <= threshold)


def test_block_diagonal_weights_decouple():
    rng = np.random.default_rng(2)
    G = rng.normal(size=300)
    T = 0.5 - G**2
    weights = np.zeros((300, 2, 2))
    weights[:, 0, 0] = T
    weights[:, 1, 1] = 0.2  # a far-away bulk of its own
    Q_rot = ortho_group.rvs(2, random_state=0)
    rotated = Q_rot @ weights @ Q_rot.T
    for delta in (1.0, 4.0):
        expected = scalar_aligned_outlier(T, G, delta)
        for M in (weights, rotated):
            found = aligned_outlier(M, G, delta)
            assert (found is None) == (expected is None)
            if expected is not None:
                assert found == pytest.approx(expected, rel=1e-8)
            assert weighted_lower_edge(M, delta) == pytest.approx(
                weighted_lower_edge(T, delta), rel=1e-8
            )


def test_scalar_case_agrees_with_the_spectral_threshold():
    # Luo--Alghamdi--Lu's T = 1 - 1/y on quadrature nodes: the top outlier
    # of T is the lower outlier of -T; its threshold is 1/2.
    s, z, weight = quadrature_law("max-overlap")
    found = scalar_outlier_threshold(-z, s, sample_weight=weight)
    assert found == pytest.approx(spectral_threshold("max-overlap"), rel=1e-6)
    assert found == pytest.approx(0.5, rel=1e-6)
    prep = _preprocessing("max-overlap", 2.0, 9.0)
    top = _limit(2.0, prep).eigenvalue  # the library's quadrature
    assert -scalar_aligned_outlier(-z, s, 2.0, sample_weight=weight) == pytest.approx(
        top, rel=1e-7
    )
    assert -aligned_outlier(-z, s, 2.0, sample_weight=weight) == pytest.approx(
        top, rel=1e-6
    )


# --------------------------------------------------------------------------
# the plateau law
# --------------------------------------------------------------------------
def test_plateau_law_is_the_hessian_weight():
    import torch

    from sklearn_pt.nn import FirstLayerNetwork

    rng = np.random.default_rng(3)
    X, W = rng.normal(size=(6, 5)), rng.normal(size=(3, 5)) / 3
    a, y = np.array([1.0, -1.0, 0.5]), rng.normal(size=6)
    network = FirstLayerNetwork(
        torch.tensor(W), torch.tensor(a), torch.nn.functional.gelu
    )
    Xt, yt = torch.tensor(X), torch.tensor(y)

    def risk(flat):
        network_w = flat.reshape(3, 5)
        f = torch.nn.functional.gelu(Xt @ network_w.T) @ torch.tensor(a) / 3
        return 0.5 * torch.mean((f - yt) ** 2)

    dense = torch.autograd.functional.hessian(risk, torch.tensor(W).reshape(-1)).numpy()
    with torch.no_grad():
        residuals = (network(Xt) - yt).numpy()
    M = plateau_law(X @ W.T, residuals, a, "gelu")
    H = np.einsum("jik,ja,jb->iakb", M, X, X).reshape(15, 15) / 6
    np.testing.assert_allclose(H, dense, atol=1e-12)


def test_quadratic_threshold_is_finite_and_positive():
    G, M = plateau_weights("quadratic", 4, 6.0, n_features=60, max_iter=100)
    assert G.shape == (360,) and M.shape == (360, 4, 4)
    threshold = hessian_threshold(
        "quadratic", 4, deltas=(1.0, 8.0), n_bisections=2, n_features=60, max_iter=100
    )
    assert 1.0 < threshold <= 8.0


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: weighted_lower_edge([1.0], 0.0), "delta must be positive"),
        (lambda: weighted_lower_edge([1.0], [1.0, 2.0]), "Call the function once"),
        (lambda: weighted_lower_edge(np.ones((3, 2, 3)), 1.0), r"\(n, m, m\)"),
        (lambda: weighted_lower_edge([[[1.0, 2.0], [0.0, 1.0]]], 1.0), "symmetric"),
        (lambda: weighted_lower_edge([np.nan], 1.0), "finite"),
        (lambda: aligned_outlier([1.0, 2.0], [1.0], 1.0), r"signal must have shape"),
        (
            lambda: aligned_outlier([1.0], [1.0], 1.0, sample_weight=[-1.0]),
            "sample_weight must be non-negative",
        ),
        (lambda: weighted_resolvent([1.0], 1.0, math.inf), "lam must be a finite"),
        (
            lambda: scalar_aligned_outlier([1.0, 2.0], [1.0, 1.0], 1.0),
            "min\\(weights\\)",
        ),
        (lambda: plateau_law([[1.0]], [0.0], [1.0], "nope"), "activation must be one"),
        (lambda: plateau_weights("quadratic", 0, 2.0), "width must be a positive"),
        (
            lambda: hessian_threshold("quadratic", 2, deltas=(2.0, 1.0)),
            "deltas must be an increasing",
        ),
    ],
)
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_lower_edge_is_the_first_fold_of_the_branch():
    # A plateau law whose branch rises, folds at -0.847, dips and rises
    # again to -0.862 within one 30% step in tau (quadratic, m = 2, d = 100,
    # delta = 6, seed 1): the edge is the first fold, found here by small
    # steps along the branch.
    from sklearn_pt.theory._hessian_threshold import _START, _Branch, _Point

    G, M = plateau_weights("quadratic", 2, 6.0, n_features=100, random_state=1)
    edge = weighted_lower_edge(M, 6.0)
    branch = _Branch(M, np.full(len(M), 1 / len(M)), 6.0)
    tau = _START / branch.scale
    S = -tau * np.eye(2)
    lam = np.trace(branch.lam_matrix(S, branch.terms(S))) / 2
    point = branch.solve(tau, _Point(tau, S, lam))
    while True:
        new = branch.solve(point.tau * 1.005, point)
        if new is None or new.lam < point.lam:
            break
        point = new
    assert edge == pytest.approx(point.lam, rel=5e-4)  # 0.5% steps in tau
    assert edge >= point.lam
    # past the first fold the branch is inside the spectrum: no outlier there
    assert aligned_outlier(M, G, 6.0) is None
