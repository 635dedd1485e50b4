"""The partial-training claim at the size ``sklearn-pt reproduce partial``
runs it (``--scale small``), in the theory's design.

He, Lao, Lu, Zhang: a larger initialisation mismatch (``init_scale``) makes
the transition from random features to a trained network sharper. Measured
as the reproduction measures it: leverage-sampled trainable neurons, a forced
budget, the readout re-solved in closed form, seeds paired between the init
scales. Only the grid points the claim needs are fitted (the captured
fraction at P depends on the errors at 0, P and 1 only), so this is the
small run's headline comparison at a fraction of its cost.
"""

import dataclasses

import numpy as np

from sklearn_pt.experiments import run_partial
from sklearn_pt.experiments._common import read_csv_table
from sklearn_pt.experiments._partial import (
    PARTIAL_PRESETS,
    _Variant,
    judge,
    paired_wins,
    sweep_stacked,
    sweep_variants,
    theory_design_regressor,
)


def test_stacked_sweep_equals_one_proportion_curve_per_variant():
    """Every P of every init scale and selection in one batch per seed gives
    the errors of one proportion_curve per variant (float64: rounding)."""
    preset = PARTIAL_PRESETS["tiny"]
    estimators = {
        (selection, tau): theory_design_regressor(
            preset, "cpu", init_scale=tau, selection=selection
        ).set_params(dtype="float64")
        for selection in ("leverage", "random")
        for tau in (1.0, 10.0)
    }
    kwargs = dict(n_jobs=None, progress=False, desc="test")
    stacked = sweep_stacked(estimators, preset, (0, 1), **kwargs)
    separate = sweep_variants(estimators, preset, (0, 1), **kwargs)
    assert list(stacked) == list(separate)
    for key, (train, test) in separate.items():
        assert train.shape == (len(preset.proportions), 2)
        np.testing.assert_allclose(stacked[key][0], train, rtol=1e-10)
        np.testing.assert_allclose(stacked[key][1], test, rtol=1e-10)
    # the variants differ: the stacked batch did not train one of them only
    assert not np.allclose(stacked["leverage", 1.0][0], stacked["leverage", 10.0][0])


def test_larger_init_scale_captures_less_of_the_drop_at_p_0_05_in_paired_seeds():
    """At P = 0.05 (13 of 256 neurons trainable) the larger init scale
    captures *less* of its drop: the opposite of "sharper", at this size."""
    small = PARTIAL_PRESETS["small"]
    # The measurement below was made with 1000 epochs (the small scale runs
    # 400 since issue 29, where P = 1 ends at 0.6%-1.3% of the P = 0 error).
    preset = dataclasses.replace(small, proportions=(0.0, 0.05, 1.0), max_iter=1000)
    estimators = {
        tau: theory_design_regressor(
            preset, "cpu", init_scale=tau, selection="leverage"
        )
        for tau in (1.0, 10.0)
    }
    seeds = range(small.n_seeds)
    errors = sweep_stacked(
        estimators, preset, seeds, n_jobs=None, progress=False, desc="claim"
    )
    proportions = np.asarray(preset.proportions)
    low, high = (_Variant(*errors[tau], proportions).fractions for tau in (1.0, 10.0))

    # Each fit trained: P=1 reaches a small fraction of the P=0 error.
    for tau in (1.0, 10.0):
        train = errors[tau][0]
        assert np.all(train[-1] < 0.01 * train[0]), (tau, train)
    # Measured at this size (leverage_reg="auto"): more in 0 of 6 paired
    # seeds (0.500 +- 0.202 vs 0.834 +- 0.160); with the former fixed
    # leverage_reg=1e-3, 1 of 6 (0.704 vs 0.786).
    wins = int(paired_wins(high, low)[1])
    assert wins <= 1, (wins, high[1], low[1])
    assert high[1].mean() < low[1].mean()


# ------------------------------------------------------------- the verdicts
def test_verdicts_follow_from_the_written_csv(tmp_path):
    result = run_partial(scale="tiny", progress=False)
    files = result.write(tmp_path)
    assert judge(read_csv_table(files["csv"])) == result.verdicts
    assert "qualitatively" not in files["md"].read_text()


def _table(errors: dict, proportions) -> dict:
    """A table of training errors ``{(selection, tau): (n_p, n_seeds)}``."""
    rows = [
        (selection, tau, p, s, float(train[i, s]))
        for (selection, tau), train in errors.items()
        for i, p in enumerate(proportions)
        for s in range(train.shape[1])
    ]
    table = {
        name: [row[k] for row in rows]
        for k, name in enumerate(
            ("selection", "init_scale", "trainable_proportion", "seed", "train_mse")
        )
    }
    return table | {"n_features": [5] * len(rows)}


def test_judge_on_synthetic_curves():
    """Curves built to be sharper for init_scale 10 at P = 0.1 only: the sharper
    verdict is mixed and says where; a fast fall is reproduced."""
    proportions = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
    rng = np.random.default_rng(0)
    share = {  # captured share of the drop at each P, before noise
        1.0: np.array([0, 0.5, 0.7, 0.8, 0.9, 0.97, 1.0]),
        10.0: np.array([0, 0.3, 0.5, 0.95, 0.97, 0.99, 1.0]),
    }
    errors = {}
    for tau, fraction in share.items():
        noise = 0.005 * rng.standard_normal((len(proportions), 6))
        noise[[0, -1]] = 0.0
        errors["leverage", tau] = 1.0 - (fraction[:, None] + noise) * 0.9
    verdicts = judge(_table(errors, proportions))
    assert [v.word for v in verdicts[:2]] == ["reproduced", "reproduced"]
    sharper = verdicts[2]
    assert sharper.word == "mixed"
    assert "holds at P=0.1" in sharper.where
    assert "opposite at P=0.02, P=0.05" in sharper.where
