"""The feature-learning reproduction: its first-phase rule, the Hessian
measurement, the verdicts from the CSV, the claims on synthetic tables, and
the finite-size trend of the success crossing at CI size.

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
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_pt._training import run_stacked
from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.decomposition import SpectralEstimator
from sklearn_pt.experiments import (
    EXPERIMENTS,
    FEATURE_LEARNING,
    VERDICTS,
    Estimate,
    bootstrap_interval,
    judge,
    run,
)
from sklearn_pt.experiments._feature_learning import (
    ACTIVATIONS,
    CONVERGED,
    GD_DTYPE,
    HESSIAN_SEPARATION,
    STEP_RULES,
    FirstPhaseSnapshot,
    HardDirectionProjection,
    _Chain,
    _Informative,
    _over_seeds,
    _phase_hessian,
    _plateau_gaps,
    first_phase_end,
    first_phase_runs,
    first_phase_weights,
    outlier_found,
    pick_outlier,
    separation_margin,
    step_budget,
)
from sklearn_pt.metrics import eigenvector_overlap, neuron_overlap
from sklearn_pt.model_selection import rate_crossing, sample_ratio_threshold
from sklearn_pt.neural_network import FirstLayerGDRegressor
from sklearn_pt.theory import spectral_overlap, spectral_ratio_for_overlap

COLUMNS = [
    "method",
    "init",
    "d",
    "delta",
    "seed",
    "width",
    "max_iter",
    "overlap",
    "success",
    "test_loss_ratio",
    "plateau",
    "first_phase_step",
    "first_phase_overlap",
    "hessian_step",
    "outlier_eigenvalue",
    "outlier_overlap",
    "bulk_edge",
    "outlier",
    "squared_overlap_limit",
]
"""The columns of the old code's CSV, which the port keeps."""


@pytest.fixture(scope="module")
def tiny():
    return run(FEATURE_LEARNING, scale="tiny", n_jobs=1, progress=False)


# --------------------------------------------------------------------------
# the first-phase rule and the step budget
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


def _first_phase_hessian(estimator, X, y, theta) -> tuple:
    """``(step, outlier eigenvalue, overlap, bulk edge)`` of the Hessian at
    the end of one estimator's projected first phase."""
    return _phase_hessian(first_phase_weights(estimator, X, y, theta), X, y, theta)


def test_first_phase_end_never_fires_on_a_steady_drop_and_needs_a_window():
    steady = [0.9**t for t in range(200)]  # 65% over every 10 steps
    assert first_phase_end(steady, window=10, drop=0.05) is None
    assert first_phase_end([1.0] * 5, window=10, drop=0.05) is None
    assert first_phase_end([1.0] * 11, window=10, drop=0.05) == 10


def test_first_phase_end_ignores_a_loss_stalled_at_its_floating_point_floor():
    """A float32 run that has fitted the data stalls at about 1e-13 of its
    initial loss, where a float64 run still falls: below CONVERGED the rule
    does not fire, so both precisions find no first phase there."""
    fitted = [0.5**t for t in range(44)]  # down to 1.1e-13
    stalled = fitted + [fitted[-1]] * 30
    assert first_phase_end(fitted + [0.5**t for t in range(44, 74)]) is None
    assert first_phase_end(stalled) == 53
    assert first_phase_end(stalled, converged=CONVERGED) is None
    plateau = [1.0, 0.5] + [0.25] * 20  # a plateau far above the floor still ends
    assert first_phase_end(plateau, converged=CONVERGED) == 12


def test_step_budget_grows_like_log_d_from_base_iter_at_d_100():
    assert step_budget(300, 100) == 300
    assert step_budget(300, 200) == 345  # the small scale's d = 200 budget
    assert step_budget(40, 20) == 26 and step_budget(40, 40) == 32
    assert step_budget(500, 10_000) == 1000


def _estimator(method="quadratic", width=4, d=60, max_iter=120, seed=0):
    return FirstLayerGDRegressor(
        width,
        activation=ACTIVATIONS[method],
        learning_rate_init=STEP_RULES[method] * width,
        max_iter=max_iter,
        random_state=seed,
        dtype=GD_DTYPE,
    )


def test_snapshot_holds_the_weights_where_the_rule_fires_on_the_history():
    """For each of several stacked fits (widths 2, 4, 8 on one data set) the
    snapshot fires where the rule fires on that fit's recorded history, and
    holds its weights after that many steps of the same GD alone."""
    X, y, _ = make_phase_retrieval(240, 60, random_state=0, return_directions=True)
    estimators = [_estimator("GeLU", width=m, max_iter=300) for m in (2, 4, 8)]
    snapshot = FirstPhaseSnapshot()
    plans = [estimator.plan_fit(X, y) for estimator in estimators]
    fitted = run_stacked(plans, callbacks=[snapshot])
    for k, (estimator, model) in enumerate(zip(estimators, fitted, strict=True)):
        # The callback sees the loss before each step: the same rule on the
        # recorded history fires at the same step.
        step = first_phase_end(model.history_["train_loss"])
        assert step is not None and snapshot.steps[k] == step
        # Its weights are those after `step` steps of the same GD alone.
        width = estimator.hidden_layer_sizes
        again = clone(estimator).set_params(max_iter=step).fit(X, y)
        np.testing.assert_allclose(
            snapshot.weights[k][:width].numpy(),
            again.first_layer_weights_,
            rtol=1e-5,
            atol=1e-6,
        )
        assert not snapshot.weights[k][width:].any()  # the padding
    assert len(set(snapshot.steps)) > 1  # each fit its own step


def test_projection_keeps_theta_out_and_the_hessian_run_stops_there():
    """The projected runs of widths 2 and 4, stacked, stop each at its own
    first-phase end, theta* held out of both; the single-estimator path
    gives the same step and a Hessian whose outlier candidate lies at or
    below the bulk edge."""
    X, y, theta = make_phase_retrieval(360, 60, random_state=1, return_directions=True)
    estimators = [_estimator(width=m, max_iter=400) for m in (2, 4)]
    runs = first_phase_runs(estimators, X, y, theta)
    for estimator, (step, weight, fitted) in zip(estimators, runs, strict=True):
        final = fitted.first_layer_weights_
        eps = np.finfo(final.dtype).eps  # theta* is held out to the fit's rounding
        for w in (final, weight.numpy()):
            assert np.abs(w @ theta).max() < 8 * eps * np.abs(w).max()
        assert not math.isnan(step) and fitted.n_iter_ == step + 1
        alone, eigenvalue, _, edge = _first_phase_hessian(estimator, X, y, theta)
        assert alone == step and eigenvalue <= edge
    assert runs[0][0] != runs[1][0]


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


def test_neuron_overlap_of_a_projected_network_is_zero():
    rng = np.random.default_rng(0)
    theta = np.linalg.qr(rng.normal(size=(30, 1)))[0]
    module = (
        FirstLayerGDRegressor(3, max_iter=1, random_state=0)
        .fit(rng.normal(size=(50, 30)), rng.normal(size=50))
        .module_
    )
    HardDirectionProjection(theta).project(module.weight)
    weight = module.weight.detach().numpy()
    assert neuron_overlap(weight, theta) < 1e-12


# --------------------------------------------------------------------------
# the reproduction at the hidden test scale
# --------------------------------------------------------------------------
def test_verdicts_follow_from_the_written_csv(tiny, tmp_path):
    files = tiny.write(tmp_path)
    assert list(pd.read_csv(files["csv"]).columns) == COLUMNS
    assert judge(FEATURE_LEARNING, files["csv"]) == tiny.verdicts
    assert len(tiny.verdicts) == 9
    assert all(v.word in VERDICTS for v in tiny.verdicts)
    markdown = files["md"].read_text()
    assert all(v.line() in markdown for v in tiny.verdicts)
    assert EXPERIMENTS["feature-learning"] is FEATURE_LEARNING


def test_rows_match_the_preset_and_the_rules(tiny):
    table, preset = tiny.table, FEATURE_LEARNING.presets["tiny"]
    keys = ["method", "init", "d", "delta"]
    rows = {  # one row per width of a GD cell (they train stacked), 0: spectral
        (*(cell[key] for key in keys), width)
        for cell in preset["grid"]
        for width in cell.get("widths", (0,))
    }
    assert set(map(tuple, table[[*keys, "width"]].values)) == rows
    assert len(table) == len(rows) * preset["seeds"]
    assert (table.success == (table.overlap > 0.5)).all()
    gd = table[table.method.isin(list(ACTIVATIONS))]
    found = outlier_found(gd.outlier_eigenvalue, gd.outlier_overlap, gd.bulk_edge, gd.d)
    np.testing.assert_array_equal(gd.outlier, found.astype(int))
    budget = [step_budget(preset["base_iter"], d) for d in gd.d]
    np.testing.assert_array_equal(gd.max_iter, budget)
    trained = gd[np.isfinite(gd.test_loss_ratio)]  # not diverged
    assert (trained.outlier_eigenvalue <= trained.bulk_edge).all()
    assert set(gd[gd.init == "spectral"].method) == set(ACTIVATIONS)
    spectral = table[table.init == "-"]
    assert set(spectral.method) == {"spectral", "spectral max-overlap"}
    assert (spectral.outlier == 0).all() and (spectral.width == 0).all()
    limits = [
        spectral_overlap(delta, "optimal" if name == "spectral" else "max-overlap")
        for name, delta in zip(spectral.method, spectral.delta, strict=True)
    ]
    np.testing.assert_allclose(spectral.squared_overlap_limit, limits)


def test_crossings_in_the_verdicts_agree_with_the_table(tiny):
    """The success crossing of every GD curve, recomputed from the table with
    a loop, stands in the verdict line of its method."""
    by_claim = {v.claim.split(" (")[0]: v for v in tiny.verdicts}
    for method in ACTIVATIONS:
        line = next(
            v.measured
            for claim, v in by_claim.items()
            if claim.startswith(f"{method}: first-layer GD succeeds")
        )
        for d in sorted(tiny.table.d.unique()):
            rows = tiny.table.query(
                "method == @method and init == 'random' and d == @d"
            )
            rates = rows.groupby("delta").success.mean()
            expected = rate_crossing(rates.index.to_numpy(), rates.to_numpy(), 0.5)
            text = "none" if math.isnan(expected) else f"{expected:.2f}"
            assert f"{text} (d={d})" in line, (method, d, line)
    limit = spectral_ratio_for_overlap(0.5)
    assert f"above {limit:.2f} (optimal)" in tiny.markdown()
    assert "d -> infinity at fixed width m" in tiny.verdicts[0].paper


def test_figure_draws_every_panel(tiny):
    axes = tiny.figure.axes
    assert len(axes) == 6
    assert all(ax.get_title() and ax.get_legend() is not None for ax in axes)


# --------------------------------------------------------------------------
# the claims' pieces and the claims on synthetic tables
# --------------------------------------------------------------------------
def test_over_seeds_resamples_the_seeds_and_keeps_infinities():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    mean = _over_seeds(lambda picks: values[picks].mean(axis=-1), 4)
    assert mean.value == pytest.approx(2.5) and 1.0 <= mean.low < 2.5 < mean.high
    # the same interval as the statistic evaluated one resample at a time
    seeds = [np.arange(4)]
    angles = bootstrap_interval(
        seeds, lambda p: math.atan(values[p.astype(int)].mean())
    )
    assert mean == pytest.approx(tuple(np.tan(angles)), rel=1e-12)

    def constant(value):
        return lambda picks: np.full(picks.shape[:-1], value)

    # A statistic at -inf on every resample (a rate that never crosses) is an
    # interval at -inf, not NaN.
    assert _over_seeds(constant(-math.inf), 4) == (-math.inf,) * 3
    # NaN resamples (inf - inf) are dropped; all NaN leaves no interval.
    assert all(math.isnan(v) for v in _over_seeds(constant(math.nan), 4)[1:])


def test_informative_and_chain_tests():
    informative = _Informative(contains=3.6)
    assert informative(Estimate(3.5, 3.0, 4.0), None)[0] == "holds"
    outcome, text = informative(Estimate(3.5, 2.0, 6.0), None)  # 4 > 0.5 x 3.6
    assert outcome == "neither" and text.endswith("(too wide)")
    assert informative(Estimate(5.0, 4.5, 5.5), None)[0] == "neither"
    chain = _Chain(above=0.0)
    up, down, wide = Estimate(1, 0.5, 2), Estimate(-1, -2, -0.5), Estimate(0, -1, 1)
    assert chain({"a": up, "b": up}, 2)[0] == "holds"
    assert chain({"a": up, "b": wide}, 2)[0] == "neither"
    outcome, text = chain({"a": up, "b": wide, "c": down}, 2)
    assert outcome == "opposite" and text.startswith("a 1 [0.5, 2], b ")


def _plateau_table(plateau, outlier, budget=100):
    """One GD configuration over deltas 2, 4, 6, two seeds."""
    rows = [
        {
            "method": "quadratic",
            "init": "random",
            "width": 2,
            "d": 100,
            "delta": delta,
            "seed": seed,
            "max_iter": budget,
            "plateau": plateau[i][seed],
            "outlier": outlier[i],
        }
        for i, delta in enumerate((2.0, 4.0, 6.0))
        for seed in range(2)
    ]
    return pd.DataFrame(rows)


def test_plateau_gaps_count_a_never_as_longer_and_two_nevers_as_a_tie():
    plateau = [[np.inf, np.inf], [np.inf, 80.0], [40.0, 30.0]]
    # delta_H at 3 (the outlier rate crosses 0.5 halfway from 2 to 4): only
    # 4 -> 6 lies above it.
    gaps = _plateau_gaps(_plateau_table(plateau, [0, 1, 1]))
    assert list(gaps) == ["quadratic m=2 d=100 delta 4->6"]
    np.testing.assert_array_equal(next(iter(gaps.values())), [101 - 40, 50.0])
    # delta_H at 2 (found from the start) is not above itself; two nevers
    # (past the budget of 100 steps) tie.
    nevers = [[np.inf, np.inf], [np.inf, np.inf], [np.inf, 30.0]]
    gaps = _plateau_gaps(_plateau_table(nevers, [1, 1, 1]))
    np.testing.assert_array_equal(gaps.pop("quadratic m=2 d=100 delta 4->6"), [0, 71])
    assert not gaps
    # Never found: no delta above delta_H.
    assert _plateau_gaps(_plateau_table(plateau, [0, 0, 0])) == {
        "no two deltas above delta_H": []
    }


def _synthetic_table(shift_hessian: float, centres=None) -> pd.DataFrame:
    """A table whose success of seed s at delta is ``delta > c + 0.1 s`` (c:
    3 quadratic, 5 GeLU; spectral always) and whose Hessian outlier is found
    at ``delta > c + 0.1 s + shift_hessian``; the plateau is 50 / delta."""
    centres = centres or {"quadratic": 3.0, "GeLU": 5.0}
    rows = []
    for d, (method, centre), delta, seed in itertools.product(
        (100, 200), centres.items(), np.arange(1.0, 9.0), range(6)
    ):
        edge = centre + 0.1 * seed
        success, outlier = int(delta > edge), int(delta > edge + shift_hessian)
        rows.append(
            {
                "method": method,
                "init": "random",
                "width": 2,
                "d": d,
                "delta": delta,
                "seed": seed,
                "max_iter": 100,
                "overlap": 0.9 * success,
                "success": success,
                "test_loss_ratio": 1.0 - 0.9 * success,
                "plateau": 50.0 / delta,
                "first_phase_step": 10.0,
                "first_phase_overlap": 0.1,
                "hessian_step": 10.0,
                "outlier_eigenvalue": -0.2 - outlier,
                "outlier_overlap": 0.9 * outlier,
                "bulk_edge": -0.1,
                "outlier": outlier,
            }
        )
    for d, name, delta, seed in itertools.product(
        (100, 200), ("spectral", "spectral max-overlap"), (1.0, 2.0, 4.0), range(6)
    ):
        value = 0.9 if name == "spectral" else 0.85
        rows.append(
            {
                "method": name,
                "init": "-",
                "width": 0,
                "d": d,
                "delta": delta,
                "seed": seed,
                "max_iter": 0,
                "overlap": value,
                "success": 1,
                "outlier": 0,
                "squared_overlap_limit": 0.8,
            }
        )
    return pd.DataFrame(rows)


def _by_claim(verdicts) -> dict:
    names = (
        "quadratic: the Hessian",
        "GeLU: the Hessian",
        "quadratic: first-layer",
        "GeLU: first-layer",
        "the threshold of GD",
        "success crossings ordered",
        "the spectral methods'",
        "T(y) = 1 - 1/y",
        "grokking",
    )
    assert len(verdicts) == len(names)
    assert all(v.claim.startswith(n) for v, n in zip(verdicts, names, strict=True))
    return dict(zip(names, verdicts, strict=True))


def test_judge_on_synthetic_tables_follows_the_rules():
    same = _by_claim(judge(FEATURE_LEARNING, _synthetic_table(0.0)))
    assert same["the threshold of GD"].word == "reproduced"
    assert same["success crossings ordered"].word == "reproduced"
    # Crossings at 3.5 (quadratic) at both d: c_inf 3.5, an interval of width
    # 0 that misses 3.6.
    quadratic = same["quadratic: first-layer"]
    assert quadratic.word == "not reproduced at this size"
    assert "m=2: 3.5 [3.5, 3.5]" in quadratic.measured
    # The Hessian outlier two deltas later than success: the paired
    # intervals exclude 0 everywhere, and the line says GD succeeds below.
    later = _by_claim(judge(FEATURE_LEARNING, _synthetic_table(2.0)))
    transition = later["the threshold of GD"]
    assert transition.word == "not reproduced at this size"
    assert "GD succeeds below delta_H at 4 of 4" in transition.reason
    # The plateau 50 / delta shortens above delta_H at every step: 6 of 6.
    assert later["grokking"].word == "reproduced"
    # max-overlap below optimal on every seed at every delta: the opposite,
    # at one d (not shown to persist, so not "contradicted"); the optimal
    # method's 0.81 is off its (synthetic) limit 0.8 by less than the slack,
    # max-overlap's 0.72 is not.
    beats = later["T(y) = 1 - 1/y"]
    assert beats.word == "not reproduced at this size"
    assert beats.where.endswith("; one size, so not shown to persist")
    follows = later["the spectral methods'"]
    assert follows.word == "mixed" and "optimal delta=1" in follows.where
    assert "max-overlap" not in follows.where.split("holds at")[1]


def test_order_needs_every_step_of_the_chain():
    """GeLU below quadratic: the first step holds, the second is opposite,
    so the width's outcome is opposite (at one d: not reproduced at this
    size); no outlier ever: delta_H never crosses and the transition's
    differences are -inf."""
    flipped = judge(
        FEATURE_LEARNING, _synthetic_table(20.0, {"quadratic": 5.0, "GeLU": 3.0})
    )
    order = _by_claim(flipped)["success crossings ordered"]
    assert order.word == "not reproduced at this size"
    assert order.where == "opposite at m=2; one size, so not shown to persist"
    assert "spectral < quadratic 4.5 [4.5, 4.5], quadratic < GeLU -2" in (
        order.measured
    )
    transition = _by_claim(flipped)["the threshold of GD"]
    assert transition.word == "not reproduced at this size"
    assert "-inf [-inf, -inf]" in transition.measured


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
