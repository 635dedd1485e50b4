"""Reproduction: the weight spectrum after two gradient steps, its outlier
count against ``spike_count``, and alignment for reused vs fresh batches
(Moniri, Hassani, 2026)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from ..datasets import make_single_index
from ..feature_extraction import TwoStepFeatures
from ..neural_network import TwoStepFeatureLearner
from ..spectral import WeightSpectrum, null_weights
from ..theory import spike_count
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
    "TWO_STEP_PRESETS",
    "TwoStepPreset",
    "added_outliers",
    "he3_alignment",
    "run_two_step",
]

REFERENCE = (
    'Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer '
    'Networks: Two vs. One Step of Gradient Descent".'
)
COLUMNS = (
    "quantity",
    "step",
    "alpha1",
    "alpha2",
    "batch",
    "seed",
    "measured",
    "predicted",
)


@dataclass(frozen=True)
class TwoStepPreset:
    """Sizes of the two-step experiment.

    ``width`` is ``N = n = d`` of the spectra and of the count grid; the
    alignment runs use ``N = n = align_width`` and ``d = align_features``.
    The readout's ridge penalty is ``ridge_alpha_per_feature * N``: with
    ``N`` features and ``N`` readout samples a small penalty interpolates
    (at ``N = 500``, penalty 1 gave a test MSE 2.8 times the target's
    variance, penalty 100 gave 0.8 times).
    """

    width: int
    n_seeds: int
    align_width: int
    align_features: int
    align_seeds: int
    alpha1: tuple[float, ...] = (0.1, 0.25, 0.375)
    alpha2: tuple[float, ...] = (0.05, 0.2, 0.35, 0.45)
    spectrum_exponents: tuple[float, float] = (0.25, 0.35)
    align_exponents: tuple[float, float] = (0.375, 0.45)
    step_size_constants: tuple[float, float] = (2.0, 2.0)
    n_test: int = 2000
    ridge_alpha_per_feature: float = 0.2


TWO_STEP_PRESETS = {
    "tiny": TwoStepPreset(
        width=40,
        n_seeds=1,
        align_width=40,
        align_features=20,
        align_seeds=1,
        alpha1=(0.25,),
        alpha2=(0.05, 0.35),
        n_test=100,
    ),
    "small": TwoStepPreset(
        width=500, n_seeds=2, align_width=600, align_features=150, align_seeds=4
    ),
    "medium": TwoStepPreset(
        width=1000, n_seeds=2, align_width=1000, align_features=250, align_seeds=8
    ),
    "paper": TwoStepPreset(
        width=2000, n_seeds=3, align_width=2000, align_features=500, align_seeds=10
    ),
}


def added_outliers(
    width: int,
    alpha1: float,
    alpha2: float,
    seed: int,
    *,
    constants: tuple[float, float] = (2.0, 2.0),
    device: str = "cpu",
) -> int:
    """Outliers that the second gradient step adds to the first layer.

    :class:`~sklearn_pt.feature_extraction.TwoStepFeatures` takes two steps
    on a tanh single-index target with ``N = n = d = width``; the count is
    the number of outliers of ``W_2`` minus that of ``W_1``, both above
    their fitted bulk edges (:class:`~sklearn_pt.spectral.WeightSpectrum`).

    Parameters
    ----------
    width : int
        ``N = n = d``.
    alpha1, alpha2 : float
        Step-size exponents.
    seed : int
        Data and initialisation.
    constants : tuple of two floats, default=(2.0, 2.0)
        Step-size constants ``(c1, c2)``.
    device : str, default="cpu"

    Returns
    -------
    int
        Comparable with :func:`~sklearn_pt.theory.spike_count`.

    Examples
    --------
    >>> from sklearn_pt.experiments._two_step import added_outliers
    >>> isinstance(added_outliers(40, 0.25, 0.05, seed=0), int)
    True
    """
    X, y = make_single_index(width, width, link="tanh", random_state=seed)
    features = TwoStepFeatures(
        hidden_layer_sizes=width,
        step_size_exponents=(alpha1, alpha2),
        step_size_constants=constants,
        random_state=seed,
        device=device,
        dtype="float64",
    ).fit(X, y)
    first = WeightSpectrum.from_estimator(features, step=1, device=device)
    return int(features.spectrum_.n_outliers_ - first.n_outliers_)


def he3_alignment(
    width: int,
    n_features: int,
    exponents: tuple[float, float],
    batch: str,
    seed: int,
    *,
    constants: tuple[float, float] = (2.0, 2.0),
    device: str = "cpu",
) -> float:
    """Largest ``|cos|`` between the top 3 singular vectors of ``W_2`` and theta.

    Two steps of :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`
    (``N = n = width``) on an ``He_3`` single-index target, whose direction
    ``theta`` has no linear (degree-1) part.

    Parameters
    ----------
    width : int
        ``N = n``.
    n_features : int
        ``d``.
    exponents : tuple of two floats
        ``(alpha1, alpha2)``.
    batch : {"reuse", "fresh"}
    seed : int
    constants : tuple of two floats, default=(2.0, 2.0)
    device : str, default="cpu"

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> from sklearn_pt.experiments._two_step import he3_alignment
    >>> 0 <= he3_alignment(40, 20, (0.375, 0.45), "reuse", seed=0) <= 1
    True
    """
    X, y, theta = make_single_index(
        width, n_features, link="he3", random_state=seed, return_directions=True
    )
    features = TwoStepFeatures(
        hidden_layer_sizes=width,
        step_size_exponents=exponents,
        step_size_constants=constants,
        batch=batch,
        random_state=seed,
        device=device,
        dtype="float64",
    ).fit(X, y)
    return float(features.spectrum_.alignment(theta, n_vectors=3).max())


def _step_spectra(preset, device):
    """Spectra of W_0, W_1, W_2 of one learner, and readout test errors."""
    N, n_test = preset.width, preset.n_test
    X, y = make_single_index(2 * N + n_test, N, link="tanh", random_state=0)
    X_train, y_train = X[:-n_test], y[:-n_test]
    X_test, y_test = X[-n_test:], y[-n_test:]
    test_mse, learner = [], None
    for n_steps in (0, 1, 2):
        learner = TwoStepFeatureLearner(
            hidden_layer_sizes=N,
            n_steps=n_steps,
            step_size_exponents=preset.spectrum_exponents,
            step_size_constants=preset.step_size_constants,
            ridge_alpha=preset.ridge_alpha_per_feature * N,
            random_state=0,
            device=device,
            dtype="float64",
        ).fit(X_train, y_train)
        test_mse.append(float(np.mean((learner.predict(X_test) - y_test) ** 2)))
    null = null_weights(learner, X_train, y_train, random_state=0)
    spectra = [
        WeightSpectrum.from_estimator(learner, step=step, device=device)
        for step in (0, 1)
    ]
    spectra.append(
        WeightSpectrum.from_estimator(learner, step=2, reference=null, device=device)
    )
    return spectra, test_mse, float(np.var(y_test))


def _run_jobs(jobs, n_jobs, bar):
    """Run ``delayed`` jobs with joblib, advancing ``bar`` as each one ends."""
    results = []
    for value in Parallel(n_jobs=n_jobs, return_as="generator")(jobs):
        results.append(value)
        bar.update(1)
    return results


def _draw(preset, spectra, test_mse, test_variance, predicted, counts, aligned):
    figure, axes = new_figure(3, n_rows=2, width_per_panel=5.3, height_per_panel=4.4)
    for step, (ax, spectrum) in enumerate(zip(axes[:3], spectra, strict=True)):
        spectrum.plot(ax=ax)
        ax.set_title(
            f"W_{step}: {spectrum.n_outliers_} outlier(s), predicted "
            f"{_predicted_outliers(step, preset.spectrum_exponents)}\n"
            f"readout test MSE {test_mse[step]:.3f}",
            fontsize=10,
        )
    a1, a2 = preset.spectrum_exponents
    figure.suptitle(
        f"Spectra after 0, 1, 2 GD steps: tanh single-index target, N = n = d = "
        f"{preset.width}, (alpha1, alpha2) = ({a1:g}, {a2:g}); W_2's edge is "
        f"fitted to a null run. Variance of the test targets: {test_variance:.3f}",
        fontsize=10,
    )
    extent = (0, len(preset.alpha2), 0, len(preset.alpha1))
    image = None
    for ax, grid, title in [
        (axes[3], predicted, "predicted: spike_count"),
        (axes[4], counts.mean(axis=-1), f"measured (mean of {counts.shape[-1]})"),
    ]:
        image = ax.imshow(
            grid, origin="lower", cmap="viridis", vmin=0, vmax=4, extent=extent
        )
        for (i, j), value in np.ndenumerate(grid):
            ax.text(j + 0.5, i + 0.5, f"{value:g}", ha="center", va="center", color="w")
        ax.set_xticks(
            np.arange(len(preset.alpha2)) + 0.5, [f"{v:g}" for v in preset.alpha2]
        )
        ax.set_yticks(
            np.arange(len(preset.alpha1)) + 0.5, [f"{v:g}" for v in preset.alpha1]
        )
        ax.set(xlabel="alpha2", ylabel="alpha1")
        ax.set_title(f"outliers added by step 2, {title}\nN = n = d = {preset.width}")
    figure.colorbar(image, ax=axes[4], shrink=0.8, label="added outliers")
    ax = axes[5]
    for k, (batch, values) in enumerate(aligned.items()):
        ax.scatter(np.full(values.size, k), values, color=f"C{k}", zorder=3)
        ax.bar(
            k,
            values.mean(),
            color=f"C{k}",
            alpha=0.4,
            label=f"{batch}: mean {values.mean():.2f}",
        )
    ax.axhline(
        1 / np.sqrt(preset.align_features), color="0.4", ls="--", label="1/sqrt(d)"
    )
    ax.set_xticks(range(len(aligned)), [f"{batch} batch" for batch in aligned])
    ax.set(ylabel="max |cos(v_i, theta)|, top 3 vectors", ylim=(0, 1))
    b1, b2 = preset.align_exponents
    ax.set_title(
        f"He_3 target, N = n = {preset.align_width}, d = {preset.align_features}\n"
        f"(alpha1, alpha2) = ({b1:g}, {b2:g}), spike_count = {spike_count(b1, b2)}"
    )
    ax.legend(fontsize=8, loc="upper right")
    return figure


def _predicted_outliers(step: int, exponents: tuple[float, float]) -> int:
    """Outliers of ``W_step`` that the theory predicts (rank-one spike at step 1)."""
    if step == 0:
        return 0
    if step == 1:
        return spike_count(exponents[0], None, total=True)
    return spike_count(*exponents, total=True)


def run_two_step(
    *,
    scale: str = "small",
    device: str = "cpu",
    seeds: int | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ExperimentResult:
    """Spectra after 0, 1, 2 steps, outlier counts vs theory, He_3 alignment.

    1. :class:`~sklearn_pt.neural_network.TwoStepFeatureLearner` with 0, 1
       and 2 gradient steps on a tanh single-index target: outliers of
       ``W_0, W_1, W_2`` above the fitted bulk edge (``W_2`` against a null
       run on permuted targets) and the test error of the ridge readout.
    2. The outliers added by the second step over the preset's
       ``(alpha1, alpha2)`` grid (:func:`added_outliers`) against
       :func:`~sklearn_pt.theory.spike_count`.
    3. The alignment of the top singular vectors with an ``He_3`` target's
       direction for reused and fresh batches (:func:`he3_alignment`).

    Parameters
    ----------
    scale : {"small", "medium", "paper"}, default="small"
        ``N = n = d`` of 500, 1000 and 2000.
    device : {"cpu", "cuda", "auto"}, default="cpu"
    seeds : int, default=None
        Repetitions per grid cell; None uses the preset's. The alignment
        uses ``max(seeds, preset.align_seeds)`` repetitions per batch.
    n_jobs : int, default=None
        Parallel fits (joblib) over the grid and the alignment runs.
    progress : bool, default=True
        Show a progress bar over the fits on stderr.

    Returns
    -------
    ExperimentResult
        Columns ``quantity, step, alpha1, alpha2, batch, seed, measured,
        predicted`` with ``quantity`` one of ``"outliers"`` (per step),
        ``"readout_test_mse"``, ``"added_outliers"`` and ``"he3_alignment"``
        (``predicted`` is NaN where the theory gives no number).

    References
    ----------
    Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
    Networks: Two vs. One Step of Gradient Descent".

    Examples
    --------
    >>> from sklearn_pt.experiments import run_two_step
    >>> result = run_two_step(scale="tiny", progress=False)
    >>> sorted(set(result.column("quantity")))
    ['added_outliers', 'he3_alignment', 'outliers', 'readout_test_mse']
    """
    clock = Stopwatch()
    preset = select_preset(TWO_STEP_PRESETS, scale)
    device = resolve_run_device(device)
    seed_list = resolve_seeds(seeds, preset.n_seeds)
    align_seeds = tuple(range(max(len(seed_list), preset.align_seeds)))
    cells = [(a1, a2) for a1 in preset.alpha1 for a2 in preset.alpha2]
    batches = ("reuse", "fresh")
    n_fits = 4 + len(cells) * len(seed_list) + len(batches) * len(align_seeds)
    constants = preset.step_size_constants
    with progress_bar(n_fits, desc="two-step", enabled=progress) as bar:
        spectra, test_mse, test_variance = _step_spectra(preset, device)
        bar.update(4)
        count_jobs = [
            delayed(added_outliers)(
                preset.width, a1, a2, seed, constants=constants, device=device
            )
            for a1, a2 in cells
            for seed in seed_list
        ]
        counts = np.array(_run_jobs(count_jobs, n_jobs, bar)).reshape(
            len(preset.alpha1), len(preset.alpha2), len(seed_list)
        )
        align_jobs = [
            delayed(he3_alignment)(
                preset.align_width,
                preset.align_features,
                preset.align_exponents,
                batch,
                seed,
                constants=constants,
                device=device,
            )
            for batch in batches
            for seed in align_seeds
        ]
        values = np.array(_run_jobs(align_jobs, n_jobs, bar)).reshape(
            len(batches), len(align_seeds)
        )
    aligned = dict(zip(batches, values, strict=True))
    predicted = spike_count(
        np.array(preset.alpha1)[:, None], np.array(preset.alpha2)[None, :]
    )

    a1, a2 = preset.spectrum_exponents
    nan = float("nan")
    rows = [
        ("outliers", step, a1, a2, "reuse", 0, spectrum.n_outliers_, expected)
        for step, spectrum in enumerate(spectra)
        for expected in [_predicted_outliers(step, preset.spectrum_exponents)]
    ]
    rows += [
        ("readout_test_mse", step, a1, a2, "reuse", 0, mse, nan)
        for step, mse in enumerate(test_mse)
    ]
    rows += [
        ("added_outliers", 2, b1, b2, "reuse", seed, int(count), int(expected))
        for b1, counts_a1, expected_a1 in zip(
            preset.alpha1, counts, predicted, strict=True
        )
        for b2, counts_cell, expected in zip(
            preset.alpha2, counts_a1, expected_a1, strict=True
        )
        for seed, count in zip(seed_list, counts_cell, strict=True)
    ]
    b1, b2 = preset.align_exponents
    rows += [
        ("he3_alignment", 2, b1, b2, batch, seed, float(value), nan)
        for batch, per_seed in aligned.items()
        for seed, value in zip(align_seeds, per_seed, strict=True)
    ]

    match = float(np.mean(counts == predicted[:, :, None]))
    by_prediction = {
        label: counts[mask].mean() if mask.any() else nan
        for label, mask in [
            ("0", predicted == 0),
            ("1", predicted == 1),
            (">=2", predicted >= 2),
        ]
    }
    measured_steps = "/".join(str(s.n_outliers_) for s in spectra)
    predicted_steps = "/".join(
        str(_predicted_outliers(step, preset.spectrum_exponents)) for step in (0, 1, 2)
    )
    summary = (
        f"Outliers of W_0/W_1/W_2 above the fitted bulk edge (N = n = d = "
        f"{preset.width}, (alpha1, alpha2) = ({a1:g}, {a2:g}); the edge of W_2 "
        f"fitted to a null run on permuted targets): {measured_steps} measured, "
        f"{predicted_steps} predicted. "
        f"Readout test MSE after 0/1/2 steps: "
        f"{'/'.join(f'{v:.3f}' for v in test_mse)} (variance of the test "
        f"targets: {test_variance:.3f}). "
        f"Outliers added by the second step over the {len(preset.alpha1)}x"
        f"{len(preset.alpha2)} (alpha1, alpha2) grid: measured == spike_count in "
        f"{100 * match:.0f}% of {counts.size} runs; mean measured where "
        f"spike_count is 0: {by_prediction['0']:.2f}, 1: {by_prediction['1']:.2f}, "
        f">=2: {by_prediction['>=2']:.2f}. "
        f"He_3 alignment (max |cos| of the top 3 singular vectors with theta, "
        f"N = n = {preset.align_width}, d = {preset.align_features}, "
        f"{plural(len(align_seeds), 'seed')}): reuse "
        f"{aligned['reuse'].mean():.2f}, fresh {aligned['fresh'].mean():.2f} "
        f"(1/sqrt(d) = "
        f"{1 / np.sqrt(preset.align_features):.2f})."
    )
    metrics = {
        "count_match_rate": match,
        "alignment_reuse": float(aligned["reuse"].mean()),
        "alignment_fresh": float(aligned["fresh"].mean()),
        **{f"outliers_W{step}": s.n_outliers_ for step, s in enumerate(spectra)},
        **{f"test_mse_step{step}": v for step, v in enumerate(test_mse)},
        "test_variance": test_variance,
    }
    return ExperimentResult(
        name="two-step",
        title="Two gradient steps: weight spectrum, outlier count and alignment",
        columns=COLUMNS,
        rows=rows,
        figure=_draw(
            preset, spectra, test_mse, test_variance, predicted, counts, aligned
        ),
        summary=summary,
        metrics=metrics,
        settings={
            "scale": scale,
            "seeds": len(seed_list),
            "device": device,
            "N=n=d": preset.width,
            "step_size_constants": constants,
        },
        seconds=clock.seconds(),
        reference=REFERENCE,
    )
