"""The approximation-error reproduction: its table, metrics, verdicts and
figure at the hidden ``tiny`` scale, the pieces it is built from against
independent computations, and what the paper's claims look like at a small
but fast size (measured over paired seeds)."""

import math
import re
import warnings

import numpy as np
import pytest
import torch

from sklearn_pt._torch_bridge import make_generator
from sklearn_pt.experiments._approximation import (
    APPROXIMATION_PRESETS,
    ApproximationPreset,
    approximation_error,
    decay_exponent,
    geometric_summary,
    informative_widths,
    judge,
    rkhs_target,
    run_approximation,
)
from sklearn_pt.experiments._common import SCALES, read_csv_table
from sklearn_pt.experiments._verdicts import VERDICTS, Verdict
from sklearn_pt.kernels import BiasedReLUKernel
from sklearn_pt.nn import spherical_biased_relu_init
from sklearn_pt.theory import (
    approximation_bound,
    biased_relu_alpha,
    biased_relu_kappa0,
    bound_shape,
    fit_mismatch_ratio,
)

COLUMNS = (
    "init_scale",
    "trainable_proportion",
    "width",
    "seed",
    "n_select",
    "n_fit",
    "n_trainable",
    "test_mse",
    "train_mse",
    "target_variance",
    "error_ratio",
    "theory_shape",
    "n_features",
    "delta",
    "n_draws",
)
VERDICT_LINE = re.compile(
    r"^\*\*(?P<verdict>[^*]+)\*\*: (?P<claim>.+)\. Measured: (?P<measured>.+)\. "
    r"Paper: (?P<paper>.+)\.$"
)


@pytest.fixture(scope="module")
def tiny():
    return run_approximation(scale="tiny", progress=False)


def table(result):
    """``{(init_scale, P, width, seed): {column: value}}``."""
    return {row[:4]: dict(zip(result.columns, row, strict=True)) for row in result.rows}


def sphere(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


# ------------------------------------------------------------------ result
def test_every_public_scale_has_a_preset():
    assert set(SCALES) <= set(APPROXIMATION_PRESETS)
    assert "tiny" in APPROXIMATION_PRESETS


def test_result_has_one_row_per_configuration_and_seed(tiny):
    preset = APPROXIMATION_PRESETS["tiny"]
    assert tiny.name == "partial-approximation"
    assert tiny.columns == COLUMNS
    configs = {
        (tau, p, preset.width) for tau in preset.init_scales for p in preset.proportions
    } | {(tau, 0.0, m) for tau in preset.init_scales for m in preset.widths}
    keys = [row[:4] for row in tiny.rows]
    assert len(keys) == len(set(keys)) == len(configs) * preset.n_seeds
    assert {k[:3] for k in keys} == configs
    for row in table(tiny).values():
        m, p = row["width"], row["trainable_proportion"]
        assert row["n_trainable"] == round(p * m)
        assert row["n_select"] == preset.select_per_width * m
        assert row["n_fit"] == preset.fit_per_width * m
        assert row["n_draws"] == (preset.n_draws if m == preset.width else 1)
        assert row["test_mse"] > 0 and row["train_mse"] > 0
        assert row["test_mse"] < row["target_variance"]  # better than a constant


def test_error_ratios_and_theory_shape_agree_with_the_table(tiny):
    rows = table(tiny)
    alpha = biased_relu_alpha(5)
    for (tau, p, m, seed), row in rows.items():
        base = rows[tau, 0.0, m, seed]["test_mse"]
        assert row["error_ratio"] == pytest.approx(row["test_mse"] / base, rel=1e-12)
        expected = bound_shape(p, biased_relu_kappa0(5, tau), alpha=alpha)
        assert row["theory_shape"] == pytest.approx(expected, rel=1e-12)


def test_theory_metrics_are_the_theory_functions(tiny):
    alpha = biased_relu_alpha(5)
    assert tiny.metrics["alpha"] == alpha
    for tau in APPROXIMATION_PRESETS["tiny"].init_scales:
        kappa0 = biased_relu_kappa0(5, tau)
        assert tiny.metrics[f"kappa0_star_tau{tau:g}"] == kappa0
        bound_ratio = tiny.metrics[f"bound_ratio_0_1_tau{tau:g}"]
        assert bound_ratio == pytest.approx(1 / bound_shape(1.0, kappa0, alpha=alpha))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # only the ratio is used
            b0, b1 = approximation_bound([0.0, 1.0], 1e3, d=5, init_scale=tau)
        assert bound_ratio == pytest.approx(b0 / b1, rel=1e-12)


def test_measured_metrics_are_recomputed_from_the_table(tiny):
    preset = APPROXIMATION_PRESETS["tiny"]
    rows = table(tiny)
    seeds = range(preset.n_seeds)
    alpha = biased_relu_alpha(5)
    for tau in preset.init_scales:
        ratios = np.array(
            [
                [rows[tau, p, preset.width, s]["error_ratio"] for s in seeds]
                for p in preset.proportions
            ]
        )
        last = math.exp(np.log(ratios[-1]).mean())
        assert tiny.metrics[f"error_ratio_0_1_tau{tau:g}"] == pytest.approx(1 / last)
        fitted, _ = fit_mismatch_ratio(
            np.repeat(preset.proportions, preset.n_seeds), ratios.ravel(), alpha=alpha
        )
        assert tiny.metrics[f"mismatch_ratio_tau{tau:g}"] == pytest.approx(fitted)
        e0 = [
            math.exp(
                np.mean([math.log(rows[tau, 0.0, m, s]["test_mse"]) for s in seeds])
            )
            for m in preset.widths
        ]
        slope = np.polyfit(np.log(preset.widths), np.log(e0), 1)[0]
        assert tiny.metrics[f"decay_exponent_tau{tau:g}"] == pytest.approx(-slope)


def test_verdicts_are_judged_by_the_shared_rules(tiny):
    verdicts = tiny.verdicts
    n_taus = len(APPROXIMATION_PRESETS["tiny"].init_scales)
    assert len(verdicts) == 2 * n_taus + 3
    for verdict in verdicts:
        assert isinstance(verdict, Verdict) and verdict.word in VERDICTS
        assert re.search(r"\d", verdict.measured) and re.search(r"\d", verdict.paper)
        assert "sign test" in verdict.test or "bootstrap interval" in verdict.test
    claims = [verdict.claim for verdict in verdicts]
    assert sum("beat random features" in c for c in claims) == n_taus
    assert sum("falls fast for small P" in c for c in claims) == n_taus
    assert any("sharper for the larger init scale" in c for c in claims)
    assert any("kappa_0/kappa_1" in c for c in claims)
    assert any("decays like m^-alpha" in c for c in claims)
    # The paper's figures in the lines come from the theory functions.
    lines = tiny.verdict_lines()
    assert f"{biased_relu_kappa0(5, 10.0):.3g}" in " ".join(lines)
    assert f"{biased_relu_alpha(5):.3g}" in lines[-1]
    markdown = tiny.markdown()
    assert markdown.index("## Verdict") < markdown.index(lines[0])
    assert "qualitatively" not in markdown


def test_verdicts_follow_from_the_written_csv(tiny, tmp_path):
    files = tiny.write(tmp_path)
    assert judge(read_csv_table(files["csv"])) == tiny.verdicts


def test_judge_on_synthetic_errors():
    """Errors built to satisfy or refute each claim give the expected words."""
    rng = np.random.default_rng(0)
    mse = {}
    for tau in (1.0, 10.0):
        for m in (64, 128, 256, 512):  # E(0) ~ m^-alpha exactly, up to noise
            for s in range(6):
                mse[tau, 0.0, m, s] = m**-1.75 * (1 + 0.01 * rng.standard_normal())
        for p in (0.05, 0.1, 0.5, 1.0):
            # tau 10 falls to 5% of E(0), nearly all of it by P = 0.1;
            # tau 1 rises by 10% (leverage loses to random features).
            shape = 0.05 + 0.95 * np.exp(-60 * p) if tau == 10 else 1 + 0.1 * p
            for s in range(6):
                noise = 1 + 0.01 * rng.standard_normal()
                mse[tau, p, 64, s] = mse[tau, 0.0, 64, s] * shape * noise
    columns = ("init_scale", "trainable_proportion", "width", "seed")
    table = {c: [key[i] for key in mse] for i, c in enumerate(columns)}
    table |= {"test_mse": list(mse.values()), "n_features": [5] * len(mse)}
    table["delta"] = [0.05] * len(mse)
    verdicts = judge(table)
    words = [verdict.word for verdict in verdicts]
    # tau 10: beats random features, falls fast; tau 1: the opposite, and
    # no drop to capture; sharper: not judged where tau 1 has no drop.
    assert words[:4] == [
        "reproduced",
        "reproduced",
        "contradicted",
        "not reproduced at this size",
    ]
    assert words[4] == "not reproduced at this size"
    # the ratio is fitted, never kappa_0*; the exponent is alpha at tau 1, the
    # only init scale with three informative widths among 64..512.
    assert words[5] == "not reproduced at this size"
    assert words[6] == "mixed" and "holds at init_scale 1" in verdicts[6].where


def test_figure_has_two_labelled_panels_that_hold_the_data(tiny):
    left, right = tiny.figure.axes
    for ax in (left, right):
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        assert ax.get_legend() is not None
    low, high = left.get_ylim()
    for line in left.get_lines():
        y = np.asarray(line.get_ydata(), dtype=float)
        assert low <= y.min() and y.max() <= high
    preset = APPROXIMATION_PRESETS["tiny"]
    rows = table(tiny)
    low, high = right.get_ylim()
    for tau in preset.init_scales:
        e0 = np.array(
            [
                [rows[tau, 0.0, m, s]["test_mse"] for s in range(preset.n_seeds)]
                for m in preset.widths
            ]
        )
        mean = geometric_summary(e0)[0]
        assert low <= mean.min() and mean.max() <= high
    # No empty decades: the axis spans at most 100 times the data's range.
    assert high / low <= 100 * mean.max() / mean.min() or high / low < 1e3
    assert right.get_xscale() == "log" and right.get_yscale() == "log"


def test_threads_and_seeds_arguments(tiny):
    again = run_approximation(scale="tiny", progress=False, n_jobs=2)
    np.testing.assert_array_equal(
        np.array(again.rows, dtype=float), np.array(tiny.rows, dtype=float)
    )
    one = run_approximation(scale="tiny", progress=False, seeds=1)
    assert {row[3] for row in one.rows} == {0}
    assert one.settings["seeds"] == 1


def test_writes_its_files(tiny, tmp_path):
    files = tiny.write(tmp_path)
    assert {p.name for p in files.values()} == {
        "partial-approximation.png",
        "partial-approximation.csv",
        "partial-approximation.md",
    }
    header = files["csv"].read_text().splitlines()[0]
    assert header == ",".join(COLUMNS)


def test_a_preset_without_the_headline_proportion_is_refused(monkeypatch):
    bad = ApproximationPreset(width=8, widths=(8, 16), n_seeds=1, proportions=(0, 1))
    monkeypatch.setitem(APPROXIMATION_PRESETS, "bad", bad)
    with pytest.raises(ValueError, match="contain headline_proportion"):
        run_approximation(scale="bad", progress=False)


# ------------------------------------------------------- the building blocks
def test_rkhs_target_is_a_unit_norm_kernel_expansion():
    target = rkhs_target(15, 5, random_state=3)
    assert target.centres.shape == (15, 5) and target.coef.shape == (15,)
    np.testing.assert_allclose(np.linalg.norm(target.centres, axis=1), 1.0)
    kernel = BiasedReLUKernel(init_scale=1.0)
    gram = kernel(target.centres * (1 - 1e-9))
    assert target.coef @ gram @ target.coef == pytest.approx(1.0, rel=1e-8)
    X = sphere(50, 5, seed=4)
    expected = kernel(X * (1 - 1e-9), target.centres * (1 - 1e-9)) @ target.coef
    np.testing.assert_allclose(target(X), expected, rtol=1e-7, atol=1e-8)


def test_approximation_error_is_the_least_squares_readout_of_the_features():
    # At P = 0 the features are the initialisation's, drawn independently
    # here; the tiny relative ridge gives numpy's least-squares error.
    d, m, n, n_test, tau = 5, 24, 400, 300, 10.0
    target = rkhs_target(20, d, random_state=0)
    X, X_test = sphere(n, d, 1), sphere(n_test, d, 2)
    y, y_test = target(X), target(X_test)

    def t(a):
        return torch.as_tensor(a, dtype=torch.float64)

    test_mse, train_mse = approximation_error(
        t(X),
        t(y[:, None]),
        t(X_test),
        t(y_test[:, None]),
        width=m,
        trainable_proportion=0.0,
        init_scale=tau,
        seed=7,
    )
    w, b = spherical_biased_relu_init(
        d, m, init_scale=tau, generator=make_generator(7), dtype=torch.float64
    )
    features = np.maximum(X @ w.numpy().T + b.numpy(), 0.0)
    features_test = np.maximum(X_test @ w.numpy().T + b.numpy(), 0.0)
    design = np.column_stack([features, np.ones(n)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    expected_train = np.mean((design @ coef - y) ** 2)
    fit_test = np.column_stack([features_test, np.ones(n_test)]) @ coef
    assert train_mse == pytest.approx(expected_train, rel=1e-6)
    assert test_mse == pytest.approx(np.mean((fit_test - y_test) ** 2), rel=1e-5)


def test_informative_widths_are_where_the_bound_does_not_warn():
    widths = [16, 32, 46, 47, 64, 256, 642, 643, 1024]
    for tau in (1.0, 10.0):
        informative = informative_widths(widths, d=5, init_scale=tau, delta=0.05)
        for m in widths:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                approximation_bound(0.0, m, d=5, init_scale=tau)
            assert (m in informative) == (not caught)
    assert informative_widths(widths, d=5, init_scale=10.0, delta=0.05) == (643, 1024)


def test_decay_exponent_and_geometric_summary():
    widths = np.array([64, 128, 256, 512])
    assert decay_exponent(widths, 3.0 * widths**-1.75) == pytest.approx(1.75)
    with pytest.raises(ValueError, match="at least two distinct widths"):
        decay_exponent([64, 64], [1.0, 2.0])
    mean, spread = geometric_summary(np.array([[1.0, 4.0], [2.0, 2.0]]))
    np.testing.assert_allclose(mean, [2.0, 2.0])
    np.testing.assert_allclose(spread, [2.0, 1.0])


# ------------------------------------------------ the claims at a fast size
CLAIM_PRESET = ApproximationPreset(
    width=128,
    widths=(64, 128),
    n_seeds=6,
    proportions=(0.0, 0.2, 1.0),
    headline_proportion=0.2,
    n_test=2000,
    n_centres=100,
)


@pytest.fixture(scope="module")
def claim_run():
    APPROXIMATION_PRESETS["claim-test"] = CLAIM_PRESET
    try:
        result = run_approximation(scale="claim-test", progress=False)
    finally:
        del APPROXIMATION_PRESETS["claim-test"]
    rows = table(result)
    return {
        (tau, p): np.array(
            [rows[tau, p, 128, s]["error_ratio"] for s in range(CLAIM_PRESET.n_seeds)]
        )
        for tau in CLAIM_PRESET.init_scales
        for p in CLAIM_PRESET.proportions
    }


def test_leverage_group_cuts_the_error_and_more_for_the_larger_init_scale(claim_run):
    # Measured (width 128, 6 paired seeds, 8 network draws per seed,
    # leverage_reg="auto"): E(1)/E(0) at init_scale 10 is 0.11-0.13
    # (geometric mean 0.12); E(0.2)/E(0) is 0.37-0.58 at init_scale 10
    # against 0.83-1.18 at init_scale 1, lower in 6 of 6 seeds.
    assert np.all(claim_run[10.0, 1.0] < 0.5)
    assert np.exp(np.log(claim_run[10.0, 1.0]).mean()) < 0.25
    assert np.sum(claim_run[10.0, 0.2] < claim_run[1.0, 0.2]) >= 5
    assert np.exp(np.log(claim_run[10.0, 0.2]).mean()) < 0.75


def test_leverage_group_cuts_the_error_at_the_matched_init_scale(claim_run):
    # The sign test at level 0.05 over 6 seeds needs all 6. Measured (width
    # 128, 8 draws per seed): E(1)/E(0) = 0.48-0.88, geometric mean 0.66.
    # With one draw per seed it held in 1 of 6 seeds here (0.57-3.8): one
    # draw of 128 random features spreads by 2x-10x between draws, more
    # than the leverage density's gain at init_scale 1 (its scores are
    # within a factor 2 of their mean, the features are the target kernel's).
    assert np.all(claim_run[1.0, 1.0] < 1.0)


def test_first_layers_are_the_estimators_at_every_proportion_and_nested():
    from sklearn_pt.experiments._approximation import first_layers
    from sklearn_pt.neural_network import PartiallyTrainableRegressor

    X = torch.as_tensor(sphere(64, 5, seed=1))
    props = (0.0, 0.125, 0.5, 1.0)
    layers = first_layers(
        X, width=16, trainable_proportions=props, init_scale=10.0, seed=3
    )
    chosen = []
    for p, (weight, bias) in zip(props, layers, strict=True):
        estimator = PartiallyTrainableRegressor(
            hidden_layer_sizes=(16,),
            trainable_proportion=p,
            init_scale=10.0,
            trainable_selection="leverage",
            dtype="float64",
        )
        layer = estimator._build_module(X, 1, make_generator(3)).hidden_layers[0]
        assert torch.equal(layer.weight, weight) and torch.equal(layer.bias, bias)
        chosen.append({tuple(row.tolist()) for row in weight[: round(16 * p)]})
    # The neurons selected at a smaller P are among those at a larger P.
    assert chosen[1] <= chosen[2] <= chosen[3]
    assert len(chosen[3]) == 16  # without replacement: no duplicates
