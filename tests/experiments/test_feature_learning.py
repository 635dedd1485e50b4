"""The feature-learning reproduction: its first-phase rule, the Hessian
measurement, the verdicts from the CSV, and the finite-size trend of the
success crossing at CI size.

Montanari and Wang's delta_NN is a d -> infinity limit; at finite d the
crossing of the success rate sits lower and rises with d (measured from
outside: 1.67, 2.5, 2.5, 2.75, 3.0 at d = 100 ... 1600, width 4). Asserted
over 8 seeds with the bootstrap of :func:`sample_ratio_threshold`, so one
favourable seed cannot carry it.
"""

import itertools
import math
from functools import partial

import numpy as np
import pytest

from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.decomposition import SpectralEstimator
from sklearn_pt.experiments import run_feature_learning
from sklearn_pt.experiments._common import read_csv_table
from sklearn_pt.experiments._feature_learning import (
    ACTIVATIONS,
    COLUMNS,
    FEATURE_LEARNING_PRESETS,
    HESSIAN_SEPARATION,
    STEP_RULES,
    FirstPhaseSnapshot,
    HardDirectionProjection,
    _first_phase_hessian,
    _plateau_differences,
    first_phase_end,
    judge,
    outlier_found,
    pick_outlier,
    separation_margin,
    step_budget,
)
from sklearn_pt.experiments._verdicts import VERDICTS, Verdict
from sklearn_pt.metrics import eigenvector_overlap, neuron_overlap
from sklearn_pt.model_selection import sample_ratio_threshold
from sklearn_pt.neural_network import FirstLayerGDRegressor


@pytest.fixture(scope="module")
def tiny():
    return run_feature_learning(scale="tiny", progress=False)


# --------------------------------------------------------------------------
# the first-phase rule
# --------------------------------------------------------------------------
def test_first_phase_end_fires_on_the_plateau_after_a_fast_drop():
    # fast geometric drop for 30 steps, then a plateau, then a second drop
    # (an escape): the rule fires in the plateau, never in the drops.
    fast = [0.7**t for t in range(30)]
    plateau = [fast[-1] * (1 - 0.001 * t) for t in range(1, 41)]
    escape = [plateau[-1] * 0.8**t for t in range(1, 30)]
    losses = fast + plateau + escape
    end = first_phase_end(losses, window=10, drop=0.05)
    assert 30 <= end <= 40, end
    assert losses[end] >= 0.95 * losses[end - 10]
    assert all(losses[t] < 0.95 * losses[t - 10] for t in range(10, end))


def test_first_phase_end_never_fires_on_a_steady_drop_and_needs_a_window():
    steady = [0.9**t for t in range(200)]  # 65% over every 10 steps
    assert first_phase_end(steady, window=10, drop=0.05) is None
    assert first_phase_end([1.0] * 5, window=10, drop=0.05) is None
    assert first_phase_end([1.0] * 11, window=10, drop=0.05) == 10


def _estimator(method="quadratic", width=4, d=60, max_iter=120, seed=0):
    return FirstLayerGDRegressor(
        width,
        activation=ACTIVATIONS[method],
        learning_rate_init=STEP_RULES[method] * width,
        max_iter=max_iter,
        random_state=seed,
    )


def test_snapshot_holds_the_weights_where_the_rule_fires_on_the_history():
    X, y, _ = make_phase_retrieval(240, 60, random_state=0, return_directions=True)
    estimator = _estimator("GeLU", max_iter=300)
    plan = estimator.plan_fit(X, y)
    snapshot = FirstPhaseSnapshot(plan.module)
    plan.callbacks = [*plan.callbacks, snapshot]
    fitted = plan.complete(plan.run())
    # The callback sees the loss before each step: the same rule on the
    # recorded history fires at the same step.
    step = first_phase_end(fitted.history_["train_loss"])
    assert step is not None and snapshot.step == step
    # Its weights are those after `step` steps of the same GD.
    again = _estimator("GeLU", max_iter=step).fit(X, y)
    tol = 1e3 * np.finfo(np.float64).eps
    np.testing.assert_allclose(
        snapshot.weight.numpy(), again.first_layer_weights_, rtol=tol, atol=tol
    )


def test_projection_keeps_theta_out_and_the_hessian_run_stops_there():
    X, y, theta = make_phase_retrieval(360, 60, random_state=1, return_directions=True)
    estimator = _estimator(max_iter=400)
    plan = estimator.plan_fit(X, y)
    projection = HardDirectionProjection(plan.module, theta)
    snapshot = FirstPhaseSnapshot(plan.module, stop=True)
    plan.callbacks = [projection, *plan.callbacks, snapshot]
    fitted = plan.complete(plan.run())
    weight = fitted.first_layer_weights_
    assert np.abs(weight @ theta).max() < 1e-12 * np.abs(weight).max()
    assert snapshot.step is not None and fitted.n_iter_ == snapshot.step + 1
    step, eigenvalue, _, edge = _first_phase_hessian(estimator, X, y, theta)
    assert step == snapshot.step and eigenvalue <= edge


def test_hessian_outlier_appears_above_and_not_below_the_threshold():
    """Quadratic, m = 4, d = 100, 3 seeds, at the end of the projected first
    phase (Lanczos at HESSIAN_TOL, equal to dense eigh to 1e-13): delta = 8
    gives a negative outlier with overlap 0.73-0.81 and an eigenvalue
    2.3-3.1x the bulk edge (gaps 1.29-2.08 |edge|); at delta = 1 the best
    of the 4 smallest eigenvectors overlaps theta* by 0.26, 0.505, 0.15 at
    gaps of 0.28, 0.07, 0.18 |edge|: at seed 1 theta* is spread over the
    five bottom eigenvectors of the bulk (overlaps 0.26-0.505, eigenvalues
    within 17% of each other), which only the separation rules out."""
    found = {}
    for delta in (1.0, 8.0):
        rows = []
        for seed in range(3):
            X, y, theta = make_phase_retrieval(
                round(delta * 100), 100, random_state=seed, return_directions=True
            )
            estimator = _estimator(d=100, max_iter=600, seed=seed)
            rows.append(_first_phase_hessian(estimator, X, y, theta))
        found[delta] = np.array(rows)
    above, below = found[8.0], found[1.0]
    assert np.all(above[:, 1] < 0) and np.all(above[:, 2] > 0.6)
    assert np.all(above[:, 1] < 1.5 * above[:, 3])  # separated from the bulk
    assert all(outlier_found(*row[1:], 100) for row in above)
    # Below: no outlier, and no candidate separated from the bulk at all.
    assert not any(outlier_found(*row[1:], 100) for row in below)
    gaps = (below[:, 3] - below[:, 1]) / np.abs(below[:, 3])
    assert np.all(gaps < separation_margin(100)), gaps


def _spiked_spectrum(edge_states, outlier):
    """The found rule on a Hessian built by hand (m = 2 neurons, d = 30):
    a bulk of eigenvalues spread over [-1, 2], one eigenvalue ``outlier``
    whose eigenvector is theta* on both neurons, and the two bottom bulk
    eigenvectors replaced by ``edge_states`` mixtures of theta* with a bulk
    direction. Returns what :func:`pick_outlier` reads off its eigh."""
    rng = np.random.default_rng(0)
    d, m = 30, 2
    theta = np.linalg.qr(rng.normal(size=(d, 1)))[0]
    along = np.kron(np.ones(m) / np.sqrt(m), theta[:, 0])  # V = theta on both
    basis = np.linalg.qr(np.column_stack([along, rng.normal(size=(m * d, m * d))]))[0]
    eigenvalues = np.linspace(-1.0, 2.0, m * d)
    vectors = basis.copy()
    if outlier is None:  # theta* split evenly between the two bottom states
        vectors[:, 0] = (basis[:, 0] + basis[:, 1]) / np.sqrt(2)
        vectors[:, 1] = (basis[:, 0] - basis[:, 1]) / np.sqrt(2)
        eigenvalues[:2] = edge_states
    else:  # theta* alone, at `outlier`, below the rest
        vectors = np.column_stack([basis[:, 0], basis[:, 2:], basis[:, 1]])
        eigenvalues = np.r_[outlier, eigenvalues[1:]]
    hessian = (vectors * eigenvalues) @ vectors.T
    values, vectors = np.linalg.eigh(0.5 * (hessian + hessian.T))
    overlaps = eigenvector_overlap(vectors, theta, [(0, m, d)])
    return pick_outlier(values[: m + 1], overlaps[: m + 1], m)


def test_found_rule_asks_for_an_outlier_separated_from_the_bulk():
    # A separated outlier along theta*: eigenvalue -3 against a bulk whose
    # edge (the 3rd smallest eigenvalue, m = 2) is -0.90.
    eigenvalue, overlap, edge = _spiked_spectrum(None, -3.0)
    assert overlap > 0.99 and -0.91 < edge < -0.89
    assert outlier_found(eigenvalue, overlap, edge, 30)
    # theta* spread over the two bottom eigenvectors of the bulk, -1.00 and
    # -0.99 (overlap 1/sqrt(2) each): negative and along theta*, but 0.11
    # |edge| below the edge -0.90, within the margin at d = 30 (0.78). Not
    # an outlier, and only the separation condition says so.
    eigenvalue, overlap, edge = _spiked_spectrum((-1.0, -0.99), None)
    assert eigenvalue < 0 and overlap > 0.7
    assert not outlier_found(eigenvalue, overlap, edge, 30)
    # The margin is relative to |edge| on both sides of 0 and shrinks like
    # d^-2/3 (0.35 |edge| at d = 100, 0.139 at d = 400); NaN is never found.
    assert separation_margin(100) == pytest.approx(HESSIAN_SEPARATION)
    assert outlier_found(-1.36, 0.9, -1.0, 100)
    assert not outlier_found(-1.34, 0.9, -1.0, 100)
    assert outlier_found(-1.15, 0.9, -1.0, 400)
    assert not outlier_found(-1.13, 0.9, -1.0, 400)
    assert outlier_found(-0.01, 0.9, 0.2, 100)
    assert not outlier_found(0.01, 0.9, 0.2, 100)
    found = outlier_found([-2.0, np.nan], [0.9, 0.9], [-1.0, -1.0], [100, 100])
    np.testing.assert_array_equal(found, [True, False])
    with pytest.raises(ValueError, match="k = width \\+ 1"):
        pick_outlier([-1.0, -0.5], [0.9, 0.1], width=2)


# --------------------------------------------------------------------------
# the reproduction at the hidden test scale
# --------------------------------------------------------------------------
def test_verdicts_follow_from_the_csv_alone(tiny, tmp_path):
    files = tiny.write(tmp_path)
    table = read_csv_table(files["csv"])
    assert tuple(table) == COLUMNS
    assert judge(table) == tiny.verdicts
    assert len(tiny.verdicts) == 9
    assert all(isinstance(v, Verdict) and v.word in VERDICTS for v in tiny.verdicts)
    markdown = files["md"].read_text()
    assert all(v.line() in markdown for v in tiny.verdicts)


def test_rows_match_the_preset_and_the_metrics_match_the_rows(tiny):
    preset = FEATURE_LEARNING_PRESETS["tiny"]
    rows = [dict(zip(COLUMNS, row, strict=True)) for row in tiny.rows]
    grids = dict(preset.grids)
    gd = [r for r in rows if r["method"] in ACTIVATIONS]
    trained = [r for r in gd if np.isfinite(r["test_loss_ratio"])]  # not diverged
    assert all(r["success"] == int(r["overlap"] > 0.5) for r in rows)
    assert all(
        r["outlier"]
        == int(
            outlier_found(
                r["outlier_eigenvalue"], r["outlier_overlap"], r["bulk_edge"], r["d"]
            )
        )
        for r in gd
    )
    assert all(r["max_iter"] == step_budget(preset.base_iter, r["d"]) for r in gd)
    assert all(r["outlier_eigenvalue"] <= r["bulk_edge"] for r in trained)
    assert all(r["outlier"] == 0 and r["success"] == 0 for r in gd if r not in trained)
    for method in ACTIVATIONS:
        for d in preset.dims:
            mine = [
                r
                for r in gd
                if (r["method"], r["d"], r["init"]) == (method, d, "random")
            ]
            assert sorted({r["delta"] for r in mine}) == list(grids[method])
            assert len(mine) == len(grids[method]) * preset.n_seeds
            deltas = list(grids[method])
            rates = [
                np.mean([r["success"] for r in mine if r["delta"] == x]) for x in deltas
            ]
            got = tiny.metrics[f"crossing_{method}_m2_d{d}"]
            expected = _crossing(deltas, rates)
            assert (math.isnan(got) and math.isnan(expected)) or got == expected
    spectral_init = {r["method"] for r in gd if r["init"] == "spectral"}
    assert spectral_init == set(ACTIVATIONS)
    spectral = [r for r in rows if r["method"].startswith("spectral")]
    assert {r["method"] for r in spectral} == {"spectral", "spectral max-overlap"}
    assert "delta_H" in tiny.summary and "Grokking" in tiny.summary


def _crossing(deltas, rates):
    from sklearn_pt.model_selection import rate_crossing

    return rate_crossing(deltas, rates, 0.5)


def test_plateau_differences_count_a_never_as_longer():
    group = {
        "deltas": np.array([2.0, 4.0, 6.0]),
        "plateau": np.array([[np.inf, np.inf], [np.inf, 80.0], [40.0, 30.0]]),
    }
    pairs = _plateau_differences(group, 3.0)  # only 4 -> 6 lies above 3
    assert [label for label, _ in pairs] == ["4->6"]
    np.testing.assert_array_equal(pairs[0][1], [np.inf, 50.0])
    ties = _plateau_differences(group, 1.0)[0][1]  # inf - inf: a tie
    np.testing.assert_array_equal(ties, [0.0, np.inf])
    assert _plateau_differences(group, math.nan) == []


# --------------------------------------------------------------------------
# the success crossing at CI size (the finite-size trend, the order)
# --------------------------------------------------------------------------
def _search(method, d, grid, n_refinements=2):
    width = 4
    estimator = (
        SpectralEstimator()
        if method == "spectral"
        else FirstLayerGDRegressor(
            width,
            activation=ACTIVATIONS[method],
            learning_rate_init=STEP_RULES[method] * width,
            max_iter=step_budget(300, d),
            dtype="float32",
        )
    )
    return sample_ratio_threshold(
        estimator,
        partial(make_phase_retrieval, return_directions=True),
        deltas=grid,
        n_features=d,
        n_repeats=8,
        n_refinements=n_refinements,
        n_bootstrap=1000,
        random_state=0,
    )


def test_quadratic_crossing_at_fixed_width_rises_from_d_100_to_d_400():
    grid = (1.0, 2.0, 3.0, 4.0)
    low, high = (_search("quadratic", d, grid) for d in (100, 400))
    assert np.isfinite(low.threshold) and np.isfinite(high.threshold)
    assert high.threshold > low.threshold, (low.threshold, high.threshold)
    # Seeds resampled independently at each d: the rise holds in at least 90%
    # of the paired resamples.
    rises = np.mean(high.bootstrap > low.bootstrap)
    assert rises >= 0.9, (rises, low.threshold, high.threshold)
    # Both are finite-size values below the paper's asymptotic 3.6.
    assert high.threshold < 3.6


def test_thresholds_are_ordered_spectral_below_quadratic_below_gelu():
    # The paper's order delta_alg < delta_NN(quadratic) < delta_NN(GeLU)
    # (0.5 < 3.6 < 6.0), at d = 100, width 4, 8 seeds, with each
    # comparison holding in at least 90% of the bootstrap resamples.
    grids = {
        "spectral": (0.25, 0.5, 1.0, 2.0),
        "quadratic": (1.0, 2.0, 3.0, 4.0),
        "GeLU": (2.0, 3.0, 4.0, 6.0),
    }
    order = [_search(m, 100, grids[m]) for m in ("spectral", "quadratic", "GeLU")]
    for low, high in itertools.pairwise(order):
        assert low.threshold < high.threshold, (low.threshold, high.threshold)
        below = np.mean(low.bootstrap < high.bootstrap)
        assert below >= 0.9, (below, low.threshold, high.threshold)


def test_neuron_overlap_of_a_projected_network_is_zero():
    rng = np.random.default_rng(0)
    theta = np.linalg.qr(rng.normal(size=(30, 1)))[0]
    module = (
        FirstLayerGDRegressor(3, max_iter=1, random_state=0)
        .fit(rng.normal(size=(50, 30)), rng.normal(size=50))
        .module_
    )
    HardDirectionProjection(module, theta).project()
    weight = module.weight.detach().numpy()
    assert neuron_overlap(weight, theta) < 1e-12


def _synthetic_table(shift_hessian: float) -> dict:
    """A table whose success of seed s at delta is ``delta > c + 0.1 s`` (c:
    1 spectral, 3 quadratic, 5 GeLU) and whose Hessian outlier is found at
    ``delta > c + 0.1 s + shift_hessian``."""
    rows = []
    centres = {"quadratic": 3.0, "GeLU": 5.0}
    grid = np.arange(1.0, 9.0, 1.0)
    for d in (100, 200):
        for method, centre in centres.items():
            for delta in grid:
                for seed in range(6):
                    edge = centre + 0.1 * seed
                    success, outlier = (
                        int(delta > edge),
                        int(delta > edge + shift_hessian),
                    )
                    head = [method, "random", 2, d, delta, seed, 100]
                    fit = [0.9 * success, success, 1.0 - 0.9 * success]
                    phase = [50.0 / delta, 10.0, 0.1, 10.0]
                    hessian = [-0.2 - outlier, 0.9 * outlier, -0.1, outlier, np.nan]
                    rows.append(head + fit + phase + hessian)
        for name in ("spectral", "spectral max-overlap"):
            for delta in (1.0, 2.0, 4.0):
                for seed in range(6):
                    value = 0.9 if name == "spectral" else 0.85
                    head = [name, "-", 0, d, delta, seed, 0, value, 1]
                    rows.append([*head, *[np.nan] * 8, 0, 0.8])
    table = {}
    for i, column in enumerate(COLUMNS):
        values = [row[i] for row in rows]
        table[column] = (
            values if column in ("method", "init") else list(map(float, values))
        )
    return table


def test_judge_on_synthetic_tables_follows_the_rules():
    same = judge(_synthetic_table(0.0))
    by_claim = {v.claim.split(":")[0]: v for v in same}
    transition = by_claim["the threshold of GD is the Hessian transition"]
    assert transition.word == "reproduced"
    order = next(v for v in same if v.claim.startswith("success crossings ordered"))
    assert order.word == "reproduced"
    # The Hessian outlier two deltas later than success: the paired
    # intervals exclude 0 everywhere, and the line says GD succeeds below.
    later = judge(_synthetic_table(2.0))
    transition = next(v for v in later if "Hessian transition" in v.claim)
    assert transition.word == "not reproduced at this size"
    assert "GD succeeds below delta_H at 4 of 4" in transition.reason
    # The plateau 50 / delta shortens above delta_H at every step: 6 of 6.
    grokking = later[-1]
    assert grokking.claim.startswith("grokking") and grokking.word == "reproduced"
    # max-overlap below optimal on every seed at every delta: contradicted;
    # the optimal method's 0.81 is off its (synthetic) limit 0.8 by less than
    # the slack, max-overlap's 0.72 is not.
    beats = next(v for v in later if v.claim.startswith("T(y) = 1 - 1/y"))
    assert beats.word == "contradicted"
    follows = next(v for v in later if v.claim.startswith("the spectral methods'"))
    assert follows.word == "mixed" and "optimal delta=1" in follows.where
