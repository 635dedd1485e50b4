"""Reproduction: the phase transition in P for deep partially trainable
networks (He, Lao, Lu, Zhang, 2026)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model_selection import PhaseTransitionDisplay
from ._common import (
    ExperimentResult,
    Stopwatch,
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
    captured_fraction,
    drop_summary,
    preset_regressor,
    sweep_variants,
)

__all__ = ["DEEP_PRESETS", "DeepPreset", "run_deep"]


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
            label=f"depth {depth}: P90 = {measured[depth]:.3g}",
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
        columns=("depth", "trainable_proportion", "seed", "train_mse", "test_mse"),
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
    )
