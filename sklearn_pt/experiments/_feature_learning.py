"""Reproduction: success rate of feature learning against delta = n/d on
phase retrieval, for first-layer GD and the spectral method (Montanari,
Wang, 2026)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..datasets import make_phase_retrieval
from ..linear_model import SpectralEstimator
from ..model_selection import sample_ratio_curve
from ..neural_network import FirstLayerGDRegressor
from ._common import (
    ExperimentResult,
    Stopwatch,
    new_figure,
    plural,
    progress_bar,
    resolve_run_device,
    resolve_seeds,
    select_preset,
)

__all__ = [
    "FEATURE_LEARNING_PRESETS",
    "PAPER_THRESHOLDS",
    "FeatureLearningPreset",
    "crossing",
    "run_feature_learning",
]

REFERENCE = (
    'Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural '
    'Networks".'
)
PAPER_THRESHOLDS = {"quadratic": 3.6, "GeLU": 6.0, "spectral": 0.5}
"""Thresholds of noiseless phase retrieval reported by the paper (d -> inf):
``delta_NN`` of first-layer GD and ``delta_alg`` of the optimal spectral
method."""
LEVEL = 0.5
"""The success rate whose crossing the summary quotes."""


@dataclass(frozen=True)
class FeatureLearningPreset:
    """Sizes of the delta sweep: dimension, grid, repetitions, GD budget."""

    n_features: int
    n_seeds: int
    max_iter: int
    deltas: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
    width: int = 4


FEATURE_LEARNING_PRESETS = {
    "tiny": FeatureLearningPreset(
        n_features=30, n_seeds=2, max_iter=50, deltas=(0.5, 2.0, 6.0)
    ),
    "small": FeatureLearningPreset(n_features=150, n_seeds=4, max_iter=500),
    "medium": FeatureLearningPreset(
        n_features=300,
        n_seeds=8,
        max_iter=1000,
        deltas=(0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0),
    ),
    "paper": FeatureLearningPreset(
        n_features=1000,
        n_seeds=16,
        max_iter=2000,
        deltas=(0.5, 1.0, 2.0, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0),
    ),
}


def crossing(
    deltas: Sequence[float], rates: Sequence[float], level: float = LEVEL
) -> float:
    """The delta at which a success rate first reaches ``level``.

    Linear interpolation between the two grid points around the first
    crossing from below.

    Parameters
    ----------
    deltas : sequence of float
        Increasing grid.
    rates : sequence of float
        Success rate at each delta.
    level : float, default=0.5

    Returns
    -------
    float
        ``deltas[0]`` if the rate starts at or above ``level``; NaN if it
        never reaches it.

    Examples
    --------
    >>> from sklearn_pt.experiments._feature_learning import crossing
    >>> crossing([1.0, 2.0, 4.0], [0.0, 0.25, 0.75])
    3.0
    >>> crossing([1.0, 2.0], [0.0, 0.25])
    nan
    """
    if rates[0] >= level:
        return float(deltas[0])
    for i in range(1, len(deltas)):
        if rates[i] >= level > rates[i - 1]:
            t = (level - rates[i - 1]) / (rates[i] - rates[i - 1])
            return float(deltas[i - 1] + t * (deltas[i] - deltas[i - 1]))
    return float("nan")


def _methods(preset, device) -> dict:
    """The estimators compared, with the step sizes of the example script."""
    return {
        "quadratic": FirstLayerGDRegressor(
            preset.width,
            activation="quadratic",
            learning_rate=0.15,
            max_iter=preset.max_iter,
            device=device,
        ),
        "GeLU": FirstLayerGDRegressor(
            preset.width,
            activation="gelu",
            learning_rate=1.0,
            max_iter=preset.max_iter,
            device=device,
        ),
        "spectral": SpectralEstimator(),
    }


def _draw(preset, curves, crossings):
    figure, (left, right) = new_figure(2)
    deltas = np.asarray(preset.deltas)
    for k, (name, curve) in enumerate(curves.items()):
        color = f"C{k}"
        left.plot(
            deltas,
            curve["success_rate"],
            "o-",
            color=color,
            label=f"{name}: crosses 1/2 at {crossings[name]:.2f} "
            f"(paper {PAPER_THRESHOLDS[name]:g})",
        )
        left.axvline(PAPER_THRESHOLDS[name], color=color, ls=":", lw=1)
        left.plot(crossings[name], LEVEL, "x", color=color, ms=10, mew=2)
        right.plot(deltas, curve["mean_overlap"], "o-", color=color, label=name)
    left.axhline(LEVEL, color="0.4", lw=0.8, ls="--")
    left.set(
        xlabel="delta = n / d",
        ylabel="success rate (overlap > 0.5)",
        title=f"Weak recovery, phase retrieval, d = {preset.n_features}, "
        f"m = {preset.width}\n(dotted: the paper's thresholds)",
        ylim=(-0.03, 1.05),
    )
    left.legend(fontsize=7, loc="lower right")
    right.axhline(0.5, color="0.4", lw=0.8, ls="--", label="success threshold")
    right.set(
        xlabel="delta = n / d",
        ylabel="mean overlap with theta*",
        title="Mean overlap of the learned directions",
        ylim=(-0.03, 1.05),
    )
    right.legend(fontsize=7, loc="lower right")
    return figure


def run_feature_learning(
    *,
    scale: str = "small",
    device: str = "cpu",
    seeds: int | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ExperimentResult:
    """Success rate of weak recovery against delta = n/d on phase retrieval.

    Runs :func:`~sklearn_pt.model_selection.sample_ratio_curve` for
    :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor` with the
    quadratic and the GeLU activation (full-batch GD on the first layer of a
    width-4 network) and for
    :class:`~sklearn_pt.linear_model.SpectralEstimator`, on noiseless phase
    retrieval ``y = <theta*, x>^2``, and measures where each success rate
    (overlap > 0.5) crosses 1/2, next to the paper's thresholds.

    Parameters
    ----------
    scale : {"small", "medium", "paper"}, default="small"
        ``d`` of 150, 300 and 1000.
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where GD runs (the spectral method runs on the CPU).
    seeds : int, default=None
        Repetitions per delta; None uses the preset's.
    n_jobs : int, default=None
        Parallel fits (joblib) over the repetitions.
    progress : bool, default=True
        Show a progress bar over the fits on stderr.

    Returns
    -------
    ExperimentResult
        Columns ``method, delta, n_samples, seed, overlap, success``;
        metrics ``crossing_<method>``.

    References
    ----------
    Montanari, Wang (2026), "Phase Transitions for Feature Learning in
    Neural Networks".

    Examples
    --------
    >>> from sklearn_pt.experiments import run_feature_learning
    >>> result = run_feature_learning(scale="tiny", progress=False)
    >>> result.columns
    ('method', 'delta', 'n_samples', 'seed', 'overlap', 'success')
    """
    clock = Stopwatch()
    preset = select_preset(FEATURE_LEARNING_PRESETS, scale)
    device = resolve_run_device(device)
    n_repeats = len(resolve_seeds(seeds, preset.n_seeds))
    methods = _methods(preset, device)
    data = partial(make_phase_retrieval, return_directions=True)
    n_fits = len(methods) * len(preset.deltas) * n_repeats
    curves, rows = {}, []
    with progress_bar(n_fits, desc="feature-learning", enabled=progress) as bar:
        for name, estimator in methods.items():
            rates, overlaps = [], []
            for delta in preset.deltas:
                # One delta per call, for the progress bar; random_state=0
                # gives every call the same repetition seeds, as one sweep.
                curve = sample_ratio_curve(
                    estimator,
                    data,
                    deltas=[delta],
                    n_features=preset.n_features,
                    n_repeats=n_repeats,
                    n_jobs=n_jobs,
                    random_state=0,
                )
                rates.append(float(curve.success_rate[0]))
                overlaps.append(float(curve.mean_overlap[0]))
                rows += [
                    (name, delta, int(curve.n_samples[0]), int(seed), float(o), bool(s))
                    for seed, o, s in zip(
                        curve.seeds, curve.overlaps[0], curve.successes[0], strict=True
                    )
                ]
                bar.update(n_repeats)
            curves[name] = {"success_rate": rates, "mean_overlap": overlaps}
    crossings = {
        name: crossing(preset.deltas, curve["success_rate"])
        for name, curve in curves.items()
    }
    described = ", ".join(
        f"{value:.2f} ({name}; paper {PAPER_THRESHOLDS[name]:g})"
        for name, value in crossings.items()
    )
    paper_order = sorted(PAPER_THRESHOLDS, key=PAPER_THRESHOLDS.get)
    if any(np.isnan(value) for value in crossings.values()):
        comparison = "not all methods reached 1/2, so their order is undetermined"
    else:
        order = sorted(crossings, key=crossings.get)
        comparison = (
            f"measured order {' < '.join(order)}; the paper's order "
            f"{' < '.join(paper_order)} "
            f"({'same' if order == paper_order else 'different'})"
        )
    summary = (
        f"delta = n/d at which the success rate (overlap > 0.5) first reaches 1/2 "
        f"(linear interpolation; d = {preset.n_features}, {plural(n_repeats, 'seed')}, "
        f"width {preset.width}): {described}; {comparison}. The paper's "
        f"thresholds are asymptotic (d -> infinity)."
    )
    return ExperimentResult(
        name="feature-learning",
        title="Feature learning by first-layer GD: success rate vs delta = n/d",
        columns=("method", "delta", "n_samples", "seed", "overlap", "success"),
        rows=rows,
        figure=_draw(preset, curves, crossings),
        summary=summary,
        metrics={f"crossing_{name}": value for name, value in crossings.items()},
        settings={
            "scale": scale,
            "seeds": n_repeats,
            "device": device,
            "d": preset.n_features,
            "width": preset.width,
            "max_iter": preset.max_iter,
        },
        seconds=clock.seconds(),
        reference=REFERENCE,
    )
