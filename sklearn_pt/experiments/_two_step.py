"""Reproduction: the weight spectrum after two gradient steps, its outlier
count against ``spike_count``, and alignment for reused vs fresh batches
(Moniri, Hassani, 2026)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from joblib import delayed

from .._progress import run_tasks
from ..datasets import make_single_index
from ..feature_extraction import TwoStepFeatures
from ..neural_network import TwoStepFeatureLearner
from ..spectral import WeightSpectrum
from ..theory import cross_covariance_overlap, order_strength, spike_count
from ._common import (
    ExperimentResult,
    Stopwatch,
    new_figure,
    plural,
    progress_bar,
    resolve_run_device,
    resolve_seeds,
    select_preset,
    verdict_line,
)

__all__ = [
    "COUNT_CLASSES",
    "CROSSOVER_BAND",
    "TWO_STEP_PRESETS",
    "TwoStepPreset",
    "added_outliers",
    "added_subspace",
    "classify_count",
    "fit_exponent",
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
    "width",
    "d",
    "seed",
    "measured",
    "predicted",
    "note",
)


CROSSOVER_BAND = (0.5, 2.0)
"""Strengths ``N ** (alpha2 - k (1/2 - alpha1))`` (:func:`order_strength`)
counted as *near the boundary*: an order-``k`` term of this size at the
run's ``N`` may or may not give an outlier, whatever its asymptotic fate
(the library's convention for :func:`classify_count`)."""

COUNT_CLASSES = (
    "agrees",
    "finite-size crossover",
    "single-index rank one",
    "detection error",
)
"""How a measured count relates to ``spike_count`` (:func:`classify_count`)."""


@dataclass(frozen=True)
class TwoStepPreset:
    """Sizes of the two-step experiment.

    ``width`` is ``N = n = d`` of the spectra panel; the count grid runs at
    ``N = n = d`` in ``count_widths``; the ``He_3`` alignment at
    ``N = n = align_ratio * d`` for ``d`` in ``align_dims``. The readout's
    ridge penalty is ``ridge_alpha_per_feature * N``: with ``N`` features
    and ``N`` readout samples a small penalty interpolates (at ``N = 500``,
    penalty 1 gave a test MSE 2.8 times the target's variance, penalty 100
    gave 0.8 times).
    """

    width: int
    n_seeds: int
    count_widths: tuple[int, ...]
    align_dims: tuple[int, ...]
    align_seeds: int
    align_ratio: int = 4
    alpha1: tuple[float, ...] = (0.1, 0.25, 0.375)
    alpha2: tuple[float, ...] = (0.05, 0.2, 0.35, 0.45)
    spectrum_exponents: tuple[float, float] = (0.25, 0.35)
    align_exponents: tuple[float, float] = (0.375, 0.45)
    step_size_constants: tuple[float, float] = (2.0, 2.0)
    level: float = 0.05
    n_test: int = 2000
    ridge_alpha_per_feature: float = 0.2
    n_boot: int = 1000


TWO_STEP_PRESETS = {
    "tiny": TwoStepPreset(
        width=40,
        n_seeds=1,
        count_widths=(40,),
        align_dims=(10, 20),
        align_seeds=2,
        alpha1=(0.25,),
        alpha2=(0.05, 0.35),
        n_test=100,
        n_boot=50,
    ),
    "small": TwoStepPreset(
        width=300,
        n_seeds=2,
        count_widths=(150, 300),
        align_dims=(100, 200),
        align_seeds=8,
    ),
    "medium": TwoStepPreset(
        width=1000,
        n_seeds=3,
        count_widths=(250, 500, 1000, 2000),
        align_dims=(100, 200, 400, 800),
        align_seeds=8,
    ),
    "paper": TwoStepPreset(
        width=2000,
        n_seeds=4,
        count_widths=(250, 500, 1000, 2000, 4000),
        align_dims=(100, 200, 400, 800, 1600),
        align_seeds=10,
    ),
}


def added_outliers(
    width: int,
    alpha1: float,
    alpha2: float,
    seed: int,
    *,
    constants: tuple[float, float] = (2.0, 2.0),
    edge: str = "tracy-widom",
    level: float = 0.05,
    device: str = "cpu",
) -> int:
    """Outliers that the second gradient step adds to the first layer.

    :class:`~sklearn_pt.feature_extraction.TwoStepFeatures` takes two steps
    (reused batch) on a tanh single-index target with ``N = n = d =
    width``; the count is the number of outliers of ``W_2`` minus that of
    ``W_1``, each found by :class:`~sklearn_pt.spectral.WeightSpectrum` with
    the given ``edge`` (by default the Tracy--Widom test at ``level``).

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
    edge : {"tracy-widom", "fitted", "mp"}, default="tracy-widom"
    level : float, default=0.05
        Level of the Tracy--Widom test.
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
    first, second = _spectra_of_steps(features, edge=edge, level=level, device=device)
    return int(second.n_outliers_ - first.n_outliers_)


def _spectra_of_steps(features, *, edge, level, device):
    """The weight spectra of ``W_1`` and ``W_2`` of fitted two-step features."""
    return tuple(
        WeightSpectrum.from_estimator(
            features, step=step, edge=edge, level=level, device=device
        )
        for step in (1, 2)
    )


def added_subspace(V1, V2) -> np.ndarray:
    """Orthonormal basis of the outlier directions that ``W_2`` adds to ``W_1``.

    ``V1`` (``r1 x d``) and ``V2`` (``r2 x d``) are the outliers' right
    singular vectors of ``W_1`` and ``W_2``. The added directions are the
    ``r2 - r1`` of ``span(V2)`` farthest from ``span(V1)``: the top right
    singular vectors of ``V2`` with its projection on ``span(V1)`` removed.

    Returns
    -------
    ndarray of shape (max(r2 - r1, 0), d)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.experiments._two_step import added_subspace
    >>> e = np.eye(4)
    >>> added_subspace(e[:1], e[[1, 0]]).round(6).tolist()
    [[0.0, 1.0, 0.0, 0.0]]
    """
    V1, V2 = np.atleast_2d(V1), np.atleast_2d(V2)
    k = V2.shape[0] - V1.shape[0]
    if k <= 0:
        return np.zeros((0, V2.shape[1]))
    residual = V2 - (V2 @ V1.T) @ V1 if V1.size else V2
    _, _, vt = np.linalg.svd(residual, full_matrices=False)
    return vt[:k]


def he3_alignment(
    width: int,
    n_features: int,
    exponents: tuple[float, float],
    batch: str,
    seed: int,
    *,
    constants: tuple[float, float] = (2.0, 2.0),
    on: str = "added",
    level: float = 0.05,
    device: str = "cpu",
) -> tuple[float, int]:
    """Alignment of the second step's outliers with an ``He_3`` direction.

    Two steps of :class:`~sklearn_pt.feature_extraction.TwoStepFeatures`
    (``N = n = width``, gelu, correlation loss) on an ``He_3`` single-index
    target, whose direction ``theta`` has no linear (degree-1) part.
    Outliers are found by the Tracy--Widom test at ``level``.

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
    on : {"added", "top3"}, default="added"
        ``"added"``: the norm of the projection of ``theta`` on the outlier
        directions that step 2 adds (:func:`added_subspace`; 0 when it adds
        none; chance level ``sqrt(k / d)`` for ``k`` added); ``"top3"``:
        the largest ``|cos|`` of the top 3 singular vectors of ``W_2``.
    level : float, default=0.05
    device : str, default="cpu"

    Returns
    -------
    alignment : float in [0, 1]
    n_added : int
        Outliers of ``W_2`` minus those of ``W_1``.
    update_energy : float
        ``d |U theta|^2 / ||U||_F^2`` for the second step's update
        ``U = W_2 - W_1``: its energy along ``theta`` relative to that along
        a random direction (1), free of outlier detection. A fresh batch's
        step reaches about ``kappa = 7`` by chance on ``He_3`` (the tilt of
        ``X^T y / n``, :func:`~sklearn_pt.theory.cross_covariance_overlap`).

    Examples
    --------
    >>> from sklearn_pt.experiments._two_step import he3_alignment
    >>> value, n_added, energy = he3_alignment(40, 20, (0.375, 0.45), "reuse", 0)
    >>> 0 <= value <= 1 and energy > 0
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
    first, second = _spectra_of_steps(
        features, edge="tracy-widom", level=level, device=device
    )
    n_added = int(second.n_outliers_ - first.n_outliers_)
    unit = np.ravel(theta) / np.linalg.norm(theta)
    _, W1, W2 = features.first_layer_weights_
    update = W2 - W1
    energy = float(n_features * np.sum((update @ unit) ** 2) / np.sum(update**2))
    if on == "top3":
        return float(second.alignment(theta, n_vectors=3).max()), n_added, energy
    basis = added_subspace(first.outlier_vectors_, second.outlier_vectors_)
    return float(np.linalg.norm(basis @ unit)), n_added, energy


def classify_count(measured: int, alpha1: float, alpha2: float, width: int) -> str:
    """Why a measured count of added outliers differs from ``spike_count``.

    - ``"agrees"``: ``measured == Lambda``;
    - ``"finite-size crossover"``: too many, and the first order beyond
      ``Lambda`` still has a strength (:func:`~sklearn_pt.theory.
      order_strength`) of at least ``CROSSOVER_BAND[0]`` at this ``N``; or
      too few, and the order ``Lambda`` is still below ``CROSSOVER_BAND[1]``
      (it has not yet grown out of the bulk);
    - ``"single-index rank one"``: ``Lambda >= 2`` and at least one outlier
      added but fewer than ``Lambda``: for a single-index target every
      order-``k`` term has the right vector ``beta``, so the orders share
      one spike instead of adding one each;
    - ``"detection error"``: otherwise (a spurious outlier with no order
      near the boundary, a strong order missed, or fewer outliers than W_1).

    Examples
    --------
    >>> from sklearn_pt.experiments._two_step import classify_count
    >>> classify_count(1, 0.25, 0.2, 500)  # Lambda = 0, strength 0.73
    'finite-size crossover'
    >>> classify_count(1, 0.1, 0.05, 500)  # Lambda = 0, strength 0.03
    'detection error'
    """
    expected = spike_count(alpha1, alpha2)
    if measured == expected:
        return "agrees"
    low, high = CROSSOVER_BAND
    if measured > expected:
        near = order_strength(width, alpha1, alpha2, expected + 1) >= low
        return "finite-size crossover" if near else "detection error"
    if expected == 0:  # W_2 lost one of W_1's outliers
        return "detection error"
    if expected >= 2 and measured >= 1:
        return "single-index rank one"
    near = order_strength(width, alpha1, alpha2, expected) < high
    return "finite-size crossover" if near else "detection error"


def fit_exponent(dims, values, *, n_boot: int = 1000, random_state: int = 0):
    """Exponent ``b`` of ``mean alignment ~ C d^b``, with a bootstrap interval.

    Least squares of ``log mean`` on ``log d``; the interval is the 2.5% and
    97.5% percentiles of the slope over resamples of the seeds at each ``d``
    (slopes of resamples with a zero mean are dropped).

    Parameters
    ----------
    dims : sequence of int
    values : array-like of shape (len(dims), n_seeds)
    n_boot : int, default=1000
    random_state : int, default=0

    Returns
    -------
    slope : float
    interval : tuple of two floats

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.experiments._two_step import fit_exponent
    >>> dims = [100, 400]
    >>> slope, _ = fit_exponent(dims, [[0.2, 0.2], [0.1, 0.1]], n_boot=10)
    >>> round(slope, 3)
    -0.5
    """
    x = np.log(np.asarray(dims, dtype=float))
    v = np.asarray(values, dtype=float)

    def slope_of(means):
        if np.any(means <= 0):
            return float("nan")
        return float(np.polyfit(x, np.log(means), 1)[0])

    slope = slope_of(v.mean(axis=1))
    rng = np.random.default_rng(random_state)
    draws = []
    for _ in range(n_boot):
        picks = rng.integers(0, v.shape[1], size=v.shape)
        draws.append(slope_of(np.take_along_axis(v, picks, axis=1).mean(axis=1)))
    draws = np.array(draws)
    draws = draws[np.isfinite(draws)]
    if draws.size < 2:
        return slope, (float("nan"), float("nan"))
    return slope, (float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5)))


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
    spectra = [
        WeightSpectrum.from_estimator(
            learner, step=step, edge="tracy-widom", level=preset.level, device=device
        )
        for step in (0, 1, 2)
    ]
    return spectra, test_mse, float(np.var(y_test))


def _draw(preset, spectra, test_mse, test_variance, agreement, counts, aligned):
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
        f"{preset.width}, (alpha1, alpha2) = ({a1:g}, {a2:g}); outliers by the "
        f"Tracy-Widom test at level {preset.level:g}. Variance of the test "
        f"targets: {test_variance:.3f}",
        fontsize=10,
    )
    ax = axes[3]
    widths = np.array(preset.count_widths)
    for label, values in agreement.items():
        ax.plot(widths, values, "o-", label=label)
    ax.set_xscale("log")
    ax.set(
        xlabel="N = n = d",
        ylabel="fraction of runs with count == spike_count",
        ylim=(-0.05, 1.05),
    )
    ax.set_title("outliers added by step 2 vs Lambda, over N", fontsize=10)
    ax.legend(fontsize=8)
    ax = axes[4]
    predicted = spike_count(
        np.array(preset.alpha1)[:, None], np.array(preset.alpha2)[None, :]
    )
    extent = (0, len(preset.alpha2), 0, len(preset.alpha1))
    grid = counts[-1].mean(axis=-1)
    image = ax.imshow(
        grid, origin="lower", cmap="viridis", vmin=0, vmax=4, extent=extent
    )
    for (i, j), value in np.ndenumerate(grid):
        ax.text(
            j + 0.5,
            i + 0.5,
            f"{value:.2g} ({predicted[i, j]})",
            ha="center",
            va="center",
            color="w",
        )
    ax.set_xticks(
        np.arange(len(preset.alpha2)) + 0.5, [f"{v:g}" for v in preset.alpha2]
    )
    ax.set_yticks(
        np.arange(len(preset.alpha1)) + 0.5, [f"{v:g}" for v in preset.alpha1]
    )
    ax.set(xlabel="alpha2", ylabel="alpha1")
    ax.set_title(
        f"added outliers, mean (spike_count), N = n = d = {widths[-1]}", fontsize=10
    )
    figure.colorbar(image, ax=ax, shrink=0.8, label="added outliers")
    ax = axes[5]
    dims = np.array(preset.align_dims)
    for k, (batch, values) in enumerate(aligned.items()):
        mean = values.mean(axis=1)
        sd = values.std(axis=1)
        ax.errorbar(dims, mean, yerr=sd, fmt="o-", color=f"C{k}", label=batch)
    chance = [cross_covariance_overlap(preset.align_ratio * d, d, "he3") for d in dims]
    ax.plot(dims, chance, color="0.4", ls="--", label="tilt of X^T y / n (chance)")
    ax.set_xscale("log")
    b1, b2 = preset.align_exponents
    ax.set(
        xlabel=f"d (N = n = {preset.align_ratio} d)",
        ylabel="|P_added theta|",
        ylim=(0, 1),
    )
    ax.set_title(
        f"He_3 target, alignment on the added outliers (mean, sd)\n"
        f"(alpha1, alpha2) = ({b1:g}, {b2:g}), spike_count = {spike_count(b1, b2)}",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    return figure


def _predicted_outliers(step: int, exponents: tuple[float, float]) -> int:
    """Outliers of ``W_step`` that the theory predicts (rank-one spike at step 1)."""
    if step == 0:
        return 0
    if step == 1:
        return spike_count(exponents[0], None, total=True)
    return spike_count(*exponents, total=True)


def _agreement(preset, counts, predicted):
    """Fraction of runs with count == Lambda per N: all, Lambda <= 1, >= 2."""
    out = {}
    for label, mask in [
        ("all cells", np.ones_like(predicted, dtype=bool)),
        ("Lambda <= 1", predicted <= 1),
        ("Lambda >= 2", predicted >= 2),
    ]:
        if mask.any():
            out[label] = [
                float(np.mean(c[mask] == predicted[mask][:, None])) for c in counts
            ]
    return out


def _verdicts(preset, agreement, classes, test_mse, aligned, exponents, energies):
    """One line per claim of Moniri and Hassani.

    1. *Step 2 adds Lambda outliers*: "reproduced" when every run at the
       largest N agrees; "qualitatively" when the cells with Lambda <= 1
       agree in at least 80% of the runs at the largest N; otherwise not.
    2. *Reuse aligns with He_3, fresh does not*: "reproduced" when the
       reused batch's exponent interval lies above the fresh batch's and
       above -1/2 (the chance decay); "qualitatively" when reuse's mean is
       above fresh's at every d; otherwise not.
    3. *Two steps improve the ridge readout*: "reproduced" when the test
       MSE falls 0 -> 1 -> 2 steps; "qualitatively" when 2 < 0 steps.
    """
    lines = []
    final = {k: v[-1] for k, v in agreement.items()}
    tally = ", ".join(f"{k} {v}" for k, v in classes.items() if v)
    if final["all cells"] == 1.0:
        verdict = "reproduced"
    elif final.get("Lambda <= 1", 0.0) >= 0.8:
        verdict = "reproduced qualitatively"
    else:
        verdict = "not reproduced at this size"
    per_n = "; ".join(
        f"N={w}: {a:.2f}"
        for w, a in zip(preset.count_widths, agreement["all cells"], strict=True)
    )
    lines.append(
        verdict_line(
            "the second step adds Lambda = floor(alpha2 / (1/2 - alpha1)) outliers",
            verdict,
            f"agreement with Lambda {per_n} (Lambda <= 1: "
            f"{final.get('Lambda <= 1', float('nan')):.2f}, Lambda >= 2: "
            f"{final.get('Lambda >= 2', float('nan')):.2f} at the largest N); "
            f"disagreements: {tally}",
            "Lambda outliers as N -> infinity (Tracy-Widom test at level "
            f"{preset.level:g})",
        )
    )
    (sr, (lr, hr)), (sf, (lf, hf)) = exponents["reuse"], exponents["fresh"]
    reuse, fresh = aligned["reuse"].mean(axis=1), aligned["fresh"].mean(axis=1)
    if lr > hf and lr > -0.5:
        verdict = "reproduced"
    elif np.all(reuse > fresh):
        verdict = "reproduced qualitatively"
    else:
        verdict = "not reproduced at this size"
    values = "; ".join(
        f"d={d}: {r:.3f} vs {f:.3f}"
        for d, r, f in zip(preset.align_dims, reuse, fresh, strict=True)
    )
    reuse_energy, fresh_energy = energies["reuse"], energies["fresh"]
    wins = int(np.sum(reuse_energy[-1] > fresh_energy[-1]))
    lines.append(
        verdict_line(
            "a reused batch aligns the added outliers with an He_3 direction, "
            "a fresh one does not",
            verdict,
            f"reuse vs fresh {values}; exponents d^b: reuse {sr:.2f} "
            f"[{lr:.2f}, {hr:.2f}], fresh {sf:.2f} [{lf:.2f}, {hf:.2f}]; "
            f"step 2's update energy along theta (random direction 1, fresh "
            f"noise about 7): reuse {reuse_energy[0].mean():.1f} -> "
            f"{reuse_energy[-1].mean():.1f}, fresh {fresh_energy[0].mean():.1f} "
            f"-> {fresh_energy[-1].mean():.1f} from d={preset.align_dims[0]} to "
            f"{preset.align_dims[-1]} (reuse > fresh in {wins} of "
            f"{reuse_energy.shape[1]} paired seeds there)",
            "reuse Theta(1) (b = 0) when Lambda >= 2, fresh -> 0 (chance, b = -1/2)",
        )
    )
    if test_mse[2] < test_mse[1] < test_mse[0]:
        verdict = "reproduced"
    elif test_mse[2] < test_mse[0]:
        verdict = "reproduced qualitatively"
    else:
        verdict = "not reproduced at this size"
    lines.append(
        verdict_line(
            "steps improve the ridge readout",
            verdict,
            "test MSE after 0/1/2 steps " + "/".join(f"{v:.3f}" for v in test_mse),
            "the test error falls with the learned features",
        )
    )
    return tuple(lines)


def run_two_step(
    *,
    scale: str = "small",
    device: str = "cpu",
    seeds: int | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ExperimentResult:
    """Spectra after 0, 1, 2 steps, outlier counts vs theory over N, He_3 alignment.

    1. :class:`~sklearn_pt.neural_network.TwoStepFeatureLearner` with 0, 1
       and 2 gradient steps on a tanh single-index target: outliers of
       ``W_0, W_1, W_2`` by the Tracy--Widom edge test
       (:func:`~sklearn_pt.spectral.soft_edge_test`) and the test error of
       the ridge readout.
    2. The outliers added by the second step over the preset's
       ``(alpha1, alpha2)`` grid at each ``N`` of ``count_widths``
       (:func:`added_outliers`) against
       :func:`~sklearn_pt.theory.spike_count`, each disagreement classified
       by :func:`classify_count` (finite-size crossover, single-index rank
       one, detection error).
    3. The alignment of the outliers added by step 2 with an ``He_3``
       target's direction, reused vs fresh batch, at ``N = n = 4 d`` over
       ``align_dims`` (:func:`he3_alignment`), with a fitted exponent
       ``d^b`` and its bootstrap interval (:func:`fit_exponent`), beside
       the chance level of a fresh step
       (:func:`~sklearn_pt.theory.cross_covariance_overlap`) and the
       detection-free energy of step 2's update along that direction.

    Parameters
    ----------
    scale : {"tiny", "small", "medium", "paper"}, default="small"
    device : {"cpu", "cuda", "auto"}, default="cpu"
    seeds : int, default=None
        Repetitions per grid cell; None uses the preset's. The alignment
        uses ``max(seeds, preset.align_seeds)`` repetitions per batch and d.
    n_jobs : int, default=None
        Parallel fits (joblib) over the grid and the alignment runs.
    progress : bool, default=True
        Show a progress bar over the fits on stderr.

    Returns
    -------
    ExperimentResult
        Columns ``quantity, step, alpha1, alpha2, batch, width, d, seed,
        measured, predicted, note`` with ``quantity`` one of
        ``"outliers"`` (per step), ``"readout_test_mse"``,
        ``"added_outliers"`` (``note``: its :func:`classify_count`) and
        ``"he3_alignment"`` (``note``: the number of outliers added) and
        ``"he3_update_energy"`` (see :func:`he3_alignment`);
        ``predicted`` is NaN where the theory gives no number.

    References
    ----------
    Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer
    Networks: Two vs. One Step of Gradient Descent".

    Examples
    --------
    >>> from sklearn_pt.experiments import run_two_step
    >>> result = run_two_step(scale="tiny", progress=False)
    >>> sorted(set(result.column("quantity")))  # doctest: +NORMALIZE_WHITESPACE
    ['added_outliers', 'he3_alignment', 'he3_update_energy', 'outliers',
     'readout_test_mse']
    """
    clock = Stopwatch()
    preset = select_preset(TWO_STEP_PRESETS, scale)
    device = resolve_run_device(device)
    seed_list = resolve_seeds(seeds, preset.n_seeds)
    align_seeds = tuple(range(max(len(seed_list), preset.align_seeds)))
    cells = [(a1, a2) for a1 in preset.alpha1 for a2 in preset.alpha2]
    batches = ("reuse", "fresh")
    widths, dims = preset.count_widths, preset.align_dims
    n_fits = (
        3
        + len(widths) * len(cells) * len(seed_list)
        + len(batches) * len(dims) * len(align_seeds)
    )
    constants, level = preset.step_size_constants, preset.level
    with progress_bar(n_fits, desc="two-step", enabled=progress) as bar:
        spectra, test_mse, test_variance = _step_spectra(preset, device)
        bar.update(3)
        count_jobs = [
            delayed(added_outliers)(
                width, a1, a2, seed, constants=constants, level=level, device=device
            )
            for width in widths
            for a1, a2 in cells
            for seed in seed_list
        ]
        counts = np.array(run_tasks(count_jobs, n_jobs=n_jobs, bar=bar)).reshape(
            len(widths), len(preset.alpha1), len(preset.alpha2), len(seed_list)
        )
        align_jobs = [
            delayed(he3_alignment)(
                preset.align_ratio * d,
                d,
                preset.align_exponents,
                batch,
                seed,
                constants=constants,
                level=level,
                device=device,
            )
            for batch in batches
            for d in dims
            for seed in align_seeds
        ]
        results = run_tasks(align_jobs, n_jobs=n_jobs, bar=bar)
    values = np.array([r[0] for r in results]).reshape(
        len(batches), len(dims), len(align_seeds)
    )
    n_added = np.array([r[1] for r in results]).reshape(values.shape)
    energy = np.array([r[2] for r in results]).reshape(values.shape)
    aligned = dict(zip(batches, values, strict=True))
    energies = dict(zip(batches, energy, strict=True))
    exponents = {
        batch: fit_exponent(dims, v, n_boot=preset.n_boot)
        for batch, v in aligned.items()
    }
    predicted = spike_count(
        np.array(preset.alpha1)[:, None], np.array(preset.alpha2)[None, :]
    )

    a1, a2 = preset.spectrum_exponents
    nan = float("nan")
    N = preset.width
    rows = [
        ("outliers", step, a1, a2, "reuse", N, N, 0, s.n_outliers_, expected, "")
        for step, s in enumerate(spectra)
        for expected in [_predicted_outliers(step, preset.spectrum_exponents)]
    ]
    rows += [
        ("readout_test_mse", step, a1, a2, "reuse", N, N, 0, mse, nan, "")
        for step, mse in enumerate(test_mse)
    ]
    by_width = []
    for width, counts_w in zip(widths, counts, strict=True):
        tally = dict.fromkeys(COUNT_CLASSES, 0)
        for i, b1 in enumerate(preset.alpha1):
            for j, b2 in enumerate(preset.alpha2):
                for seed, count in zip(seed_list, counts_w[i, j], strict=True):
                    note = classify_count(int(count), b1, b2, width)
                    tally[note] += 1
                    rows.append(
                        (
                            "added_outliers",
                            2,
                            b1,
                            b2,
                            "reuse",
                            width,
                            width,
                            seed,
                            int(count),
                            int(predicted[i, j]),
                            note,
                        )
                    )
        by_width.append(tally)
    classes = {key: by_width[-1][key] for key in COUNT_CLASSES[1:]}
    b1, b2 = preset.align_exponents
    notes = {"he3_alignment": "{} added", "he3_update_energy": ""}
    rows += [
        (
            quantity,
            2,
            b1,
            b2,
            batch,
            preset.align_ratio * d,
            d,
            seed,
            float(value),
            nan,
            notes[quantity].format(int(added)),
        )
        for quantity, measured in (
            ("he3_alignment", values),
            ("he3_update_energy", energy),
        )
        for k, batch in enumerate(batches)
        for i, d in enumerate(dims)
        for seed, value, added in zip(
            align_seeds, measured[k, i], n_added[k, i], strict=True
        )
    ]

    agreement = _agreement(preset, counts, predicted)
    measured_steps = "/".join(str(s.n_outliers_) for s in spectra)
    predicted_steps = "/".join(
        str(_predicted_outliers(step, preset.spectrum_exponents)) for step in (0, 1, 2)
    )
    count_table = "\n".join(
        f"| {w} | "
        + " | ".join(
            f"{agreement[k][i]:.2f}" if k in agreement else "-"
            for k in ("all cells", "Lambda <= 1", "Lambda >= 2")
        )
        + " | "
        + " | ".join(str(by_width[i][c]) for c in COUNT_CLASSES[1:])
        + " |"
        for i, w in enumerate(widths)
    )
    align_table = "\n".join(
        f"| {d} | {preset.align_ratio * d} | "
        f"{aligned['reuse'][i].mean():.3f} ± {aligned['reuse'][i].std():.3f} | "
        f"{aligned['fresh'][i].mean():.3f} ± {aligned['fresh'][i].std():.3f} | "
        f"{n_added[0, i].mean():.2f} / {n_added[1, i].mean():.2f} | "
        f"{cross_covariance_overlap(preset.align_ratio * d // 2, d, 'he3'):.3f} | "
        f"{energies['reuse'][i].mean():.1f} ± {energies['reuse'][i].std():.1f} | "
        f"{energies['fresh'][i].mean():.1f} ± {energies['fresh'][i].std():.1f} | "
        f"{int(np.sum(energies['reuse'][i] > energies['fresh'][i]))} of "
        f"{len(align_seeds)} |"
        for i, d in enumerate(dims)
    )
    (sr, (lr, hr)), (sf, (lf, hf)) = exponents["reuse"], exponents["fresh"]
    summary = (
        f"Outliers of W_0/W_1/W_2 by the Tracy-Widom edge test at level "
        f"{level:g} (N = n = d = {N}, (alpha1, alpha2) = ({a1:g}, {a2:g})): "
        f"{measured_steps} measured, {predicted_steps} predicted. "
        f"Readout test MSE after 0/1/2 steps: "
        f"{'/'.join(f'{v:.3f}' for v in test_mse)} (variance of the test "
        f"targets: {test_variance:.3f}).\n\n"
        f"**Outliers added by step 2 vs Lambda**, {len(preset.alpha1)}x"
        f"{len(preset.alpha2)} (alpha1, alpha2) grid, "
        f"{plural(len(seed_list), 'seed')} per cell, reused batch; fraction "
        f"of runs with count == spike_count, and how the others disagree "
        f"(classify_count: an order with strength N^(alpha2 - k(1/2 - "
        f"alpha1)) in [{CROSSOVER_BAND[0]:g}, {CROSSOVER_BAND[1]:g}] is near "
        f"the boundary):\n\n"
        f"| N = n = d | all | Lambda <= 1 | Lambda >= 2 | "
        + " | ".join(COUNT_CLASSES[1:])
        + " |\n|"
        + "---|" * (4 + len(COUNT_CLASSES) - 1)
        + "\n"
        + count_table
        + "\n\n"
        f"**He_3 alignment on the added outliers** (|P theta| on the "
        f"directions step 2 adds, 0 when none; (alpha1, alpha2) = ({b1:g}, "
        f"{b2:g}), spike_count {spike_count(b1, b2)}; mean ± sd over "
        f"{plural(len(align_seeds), 'seed')}):\n\n"
        "| d | N = n | reuse | fresh | added (reuse / fresh) | chance: tilt of "
        "X^T y / n | energy along theta, reuse | fresh | reuse > fresh |\n"
        "|---|---|---|---|---|---|---|---|---|\n" + align_table + "\n\n"
        f"Fitted d^b (log-log, 95% bootstrap over seeds): reuse b = {sr:.2f} "
        f"[{lr:.2f}, {hr:.2f}], fresh b = {sf:.2f} [{lf:.2f}, {hf:.2f}].\n\n"
        "*Why both decay.* A plain gradient step contains the rank-one term "
        "X^T y / n; on an He_3 target it carries no signal, yet it is tilted "
        "towards theta because the noise is heteroscedastic (E[y^2 z^2] = 7 "
        "for the standardised He_3): |cos| = sqrt(7 / (d + 6)) "
        "(cross_covariance_overlap), the chance column, the level a fresh "
        "step reaches and which decays like d^-1/2. The energy columns are "
        "free of outlier detection: d |U theta|^2 / ||U||_F^2 for the second "
        "step's update U = W_2 - W_1 (1 for a random direction, about 7 for "
        "the tilted noise). Where the reused batch's energy along theta "
        "grows with d while the fresh one stays near 7, step 2 does pick up "
        "theta through the first step's memorisation term, but not as a "
        "separate outlier at these sizes: its strength "
        f"N^(alpha2 - 2 (1/2 - alpha1)) = N^{b2 - 2 * (0.5 - b1):.3g} grows "
        f"only from {order_strength(preset.align_ratio * dims[0], b1, b2, 2):.2f} "
        f"to {order_strength(preset.align_ratio * dims[-1], b1, b2, 2):.2f} over "
        "this range of N."
    )
    metrics = {
        "count_match_rate": float(np.mean(counts[-1] == predicted[:, :, None])),
        **{
            f"count_match_rate_N{w}": float(np.mean(c == predicted[:, :, None]))
            for w, c in zip(widths, counts, strict=True)
        },
        "alignment_reuse": float(aligned["reuse"].mean()),
        "alignment_fresh": float(aligned["fresh"].mean()),
        "alignment_exponent_reuse": sr,
        "alignment_exponent_fresh": sf,
        **{
            f"update_energy_{batch}_d{d}": float(v[i].mean())
            for batch, v in energies.items()
            for i, d in enumerate(dims)
        },
        **{
            f"alignment_{batch}_d{d}": float(v[i].mean())
            for batch, v in aligned.items()
            for i, d in enumerate(dims)
        },
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
            preset, spectra, test_mse, test_variance, agreement, counts, aligned
        ),
        summary=summary,
        metrics=metrics,
        settings={
            "scale": scale,
            "seeds": len(seed_list),
            "align_seeds": len(align_seeds),
            "device": device,
            "count N": widths,
            "align d": dims,
            "step_size_constants": constants,
            "level": level,
        },
        seconds=clock.seconds(),
        reference=REFERENCE,
        verdicts=_verdicts(
            preset, agreement, classes, test_mse, aligned, exponents, energies
        ),
    )
