"""Reproduction: the phase transition in P for deep partially trainable
networks (He, Lao, Lu, Zhang, 2026)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model_selection import PhaseTransitionDisplay
from ._common import (
    ExperimentResult,
    Stopwatch,
    as_table,
    format_values,
    new_figure,
    plural,
    resolve_run_device,
    resolve_seeds,
    select_preset,
)
from ._partial import (
    FRACTION,
    REFERENCE,
    _fractions,
    _geometric_mean,
    _interval_outcome,
    _seed_p90,
    _small,
    captured_fraction,
    drop_summary,
    preset_regressor,
    sweep_variants,
)
from ._verdicts import BOOTSTRAP_OVER_SEEDS, Verdict

__all__ = ["DEEP_PRESETS", "DeepPreset", "judge", "run_deep"]

COLUMNS = ("depth", "trainable_proportion", "seed", "train_mse", "test_mse")
"""Columns of the table: one row per (depth, P, seed)."""
SHAPE_P = 0.1
"""The small P at which every depth's captured share is judged."""


@dataclass(frozen=True)
class DeepPreset:
    """Sizes of the P sweep over depths (depth: number of hidden layers)."""

    depths: tuple[int, ...]
    n_samples: int
    width: int
    max_iter: int
    n_seeds: int
    proportions: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
    init_scale: float = 1.0
    n_features: int = 5
    test_fraction: float = 0.25
    learning_rate_init: float = 1e-2


DEEP_PRESETS = {
    "tiny": DeepPreset(
        depths=(2,),
        n_samples=160,
        width=16,
        max_iter=5,
        n_seeds=1,
        proportions=(0.0, 0.5, 1.0),
    ),
    "small": DeepPreset(
        depths=(2, 4, 8), n_samples=800, width=64, max_iter=100, n_seeds=2
    ),
    "medium": DeepPreset(
        depths=(2, 3, 5, 8, 12), n_samples=1200, width=128, max_iter=200, n_seeds=3
    ),
    "paper": DeepPreset(
        depths=(2, 3, 5, 10, 15),
        n_samples=4000,
        width=256,
        max_iter=400,
        n_seeds=5,
    ),
}


def _errors(table) -> tuple[dict, list[float]]:
    """``{depth: train MSE (n_proportions, n_seeds)}`` and the grid of P."""
    keys = [
        (int(depth), float(p), int(seed))
        for depth, p, seed in zip(
            table["depth"], table["trainable_proportion"], table["seed"], strict=True
        )
    ]
    mse = dict(zip(keys, (float(v) for v in table["train_mse"]), strict=True))
    seeds = sorted({k[2] for k in keys})
    proportions = sorted({k[1] for k in keys})
    return {
        depth: np.array([[mse[depth, p, s] for s in seeds] for p in proportions])
        for depth in sorted({k[0] for k in keys})
    }, proportions


def judge(table) -> tuple[Verdict, ...]:
    """The verdicts of the deep reproduction, from its table alone.

    1. *The same shape at every depth*: at each depth the share of the
       P=0 -> P=1 training-error drop captured at the largest grid P up
       to 0.1 is above P, by the bootstrap interval of its mean over
       seeds.
    2. *P90 by depth*: at each depth deeper than the shallowest, the paired
       log ratio of the per-seed P90 (interpolated in log P) to the
       shallowest depth's has a bootstrap interval containing 0 (a P90 not
       shown to differ; the test has little power with few seeds, which the
       line says).

    Parameters
    ----------
    table : dict of str to list
        The result's CSV as :func:`~sklearn_pt.experiments._common.read_csv_table`
        returns it.

    Returns
    -------
    tuple of Verdict
    """
    errors, proportions = _errors(table)
    at = _small(proportions, SHAPE_P)[-1]
    p = proportions[at]
    shape, cells = {}, []
    for depth, train in errors.items():
        shape[f"depth {depth}"], text = _interval_outcome(
            _fractions(train)[at], above=p
        )
        cells.append(f"depth {depth}: {text}")
    n_seeds = next(iter(errors.values())).shape[1]
    first = [
        Verdict.from_outcomes(
            f"the same phase transition at every depth: the share of the drop "
            f"captured at P={p:g} exceeds P",
            shape,
            test=BOOTSTRAP_OVER_SEEDS + " of the mean captured share, above P",
            measured=", ".join(cells) + f" ({plural(n_seeds, 'seed')})",
            paper="the transition of the two-layer network appears in deep "
            "networks (depth up to 15)",
        )
    ]
    shallow = min(errors)
    base = np.log(_seed_p90(proportions, errors[shallow]))
    same, cells = {}, []
    for depth, train in errors.items():
        if depth == shallow:
            continue
        ratio = np.log(_seed_p90(proportions, train)) - base
        same[f"depth {depth}"], text = _interval_outcome(ratio, predicted=0.0)
        cells.append(f"depth {depth}: {text}")
    if same:
        first.append(
            Verdict.from_outcomes(
                f"P90 (the P capturing {FRACTION:.0%} of the drop) is the same "
                f"at every depth as at depth {shallow}",
                same,
                test=BOOTSTRAP_OVER_SEEDS
                + " of the paired log(P90 ratio), containing 0 "
                f"(low power with {n_seeds} seeds)",
                measured=f"log(P90 / P90 at depth {shallow}): " + ", ".join(cells),
                paper="the same shape at every depth",
            )
        )
    return tuple(first)


def _draw(preset, errors, measured):
    """Left: errors against P per depth; right: fraction of the drop."""
    figure, (left, right) = new_figure(2)
    proportions = np.asarray(preset.proportions)
    for k, (depth, (train, test)) in enumerate(errors.items()):
        PhaseTransitionDisplay(proportions, train, test, label=f"depth {depth}").plot(
            ax=left, log_x=True
        )
        right.plot(
            proportions,
            captured_fraction(train.mean(axis=1)),
            "o-",
            color=f"C{k}",
            label=f"depth {depth}: P90 = {measured[depth]:.3g} on the grid, "
            f"{_geometric_mean(_seed_p90(proportions, train)):.3g} interpolated",
        )
    left.set_title(
        f"Error vs P, {preset.width} neurons per hidden layer (dashed: test)"
    )
    left.legend(fontsize=7)
    right.axhline(FRACTION, color="0.4", lw=0.8, ls="--", label="90% of the drop")
    right.set_xscale("symlog", linthresh=0.01)
    right.set(
        xlabel="trainable proportion P (every hidden layer)",
        ylabel="fraction of the drop from P=0 to P=1",
        title="Training-error drop captured, by depth",
        xlim=(0, 1.1),
        ylim=(-0.05, 1.1),
    )
    right.legend(fontsize=7, loc="lower right")
    return figure


def run_deep(
    *,
    scale: str = "small",
    device: str = "cpu",
    seeds: int | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ExperimentResult:
    """Training error against the trainable proportion P for several depths.

    Fits :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` with
    ``depth`` hidden layers of equal width (the first of spherical biased-ReLU
    features with ``init_scale=1``, the others He-initialised) and the same P
    in every hidden layer, on the data of
    :func:`~sklearn_pt.experiments.run_partial`, and measures per depth the
    smallest P on the grid that captures 90% of the training-error drop from
    ``P = 0`` to ``P = 1``.

    Parameters
    ----------
    scale : {"small", "medium", "paper"}, default="small"
        Depths (2, 4 and 8 at ``"small"``, 2 to 15 at ``"paper"``) and sizes.
    device : {"cpu", "cuda", "auto"}, default="cpu"
    seeds : int, default=None
        Number of repetitions; None uses the preset's.
    n_jobs : int, default=None
        Parallel fits (joblib), over the grid of P.
    progress : bool, default=True
        Show a progress bar over the fits on stderr.

    Returns
    -------
    ExperimentResult
        Columns ``depth, trainable_proportion, seed, train_mse, test_mse``;
        metrics ``p90_depth<L>``.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to
    Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.experiments import run_deep
    >>> run_deep(scale="tiny", progress=False).columns[0]
    'depth'
    """
    clock = Stopwatch()
    preset = select_preset(DEEP_PRESETS, scale)
    device = resolve_run_device(device)
    seed_list = resolve_seeds(seeds, preset.n_seeds)
    estimators = {
        depth: preset_regressor(
            preset,
            device,
            hidden_layer_sizes=(preset.width,) * depth,
            init_scale=preset.init_scale,
            # the design, stated rather than left to the estimator's defaults
            solver="adam",
            tol=1e-4,
            n_iter_no_change=10,
        )
        for depth in preset.depths
    }
    errors = sweep_variants(
        estimators, preset, seed_list, n_jobs=n_jobs, progress=progress, desc="deep"
    )
    proportions = np.asarray(preset.proportions)
    labels = [f"depth {depth}" for depth in errors]
    measured, ends = drop_summary(proportions, errors, labels)
    rows = [
        (depth, float(p), seed, float(train[i, j]), float(test[i, j]))
        for depth, (train, test) in errors.items()
        for i, p in enumerate(proportions)
        for j, seed in enumerate(seed_list)
    ]
    summary = (
        f"P capturing 90% of the training-error drop (smallest P on the grid, "
        f"mean of {plural(len(seed_list), 'seed')}, same P in every hidden layer, "
        f"init_scale {preset.init_scale:g}): "
        f"{format_values(list(measured.values()), labels)}. "
        f"Training MSE from P=0 to P=1: {'; '.join(ends)}."
    )
    return ExperimentResult(
        name="deep",
        title="Deep partially trainable networks: training error vs P by depth",
        columns=COLUMNS,
        rows=rows,
        figure=_draw(preset, errors, measured),
        summary=summary,
        metrics={f"p90_depth{depth}": value for depth, value in measured.items()},
        settings={
            "scale": scale,
            "seeds": len(seed_list),
            "device": device,
            "depths": ",".join(map(str, preset.depths)),
            "width": preset.width,
            "n_samples": preset.n_samples,
            "max_iter": preset.max_iter,
        },
        seconds=clock.seconds(),
        reference=REFERENCE,
        verdicts=judge(as_table(COLUMNS, rows)),
    )
