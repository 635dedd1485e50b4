"""Reproduction: training error against the trainable proportion P, for two
init scales, next to the theory bound (He, Lao, Lu, Zhang, 2026)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..model_selection import PhaseTransitionDisplay, proportion_curve
from ..neural_network import PartiallyTrainableRegressor
from ..theory import approximation_bound, proportion_for_reduction
from ._common import (
    ExperimentResult,
    Stopwatch,
    format_values,
    new_figure,
    plural,
    progress_bar,
    resolve_run_device,
    resolve_seeds,
    select_preset,
)

__all__ = [
    "PARTIAL_PRESETS",
    "PartialPreset",
    "captured_fraction",
    "drop_summary",
    "preset_regressor",
    "proportion_capturing",
    "run_partial",
    "sphere_regression",
    "sweep_proportions",
    "sweep_variants",
]

REFERENCE = (
    'He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully '
    'Trainable Networks".'
)
FRACTION = 0.9
"""The fraction of the error drop from P = 0 to P = 1 that the summary quotes."""


@dataclass(frozen=True)
class PartialPreset:
    """Sizes of the P sweep: data, network, training budget and grid."""

    n_samples: int
    width: int
    max_iter: int
    n_seeds: int
    proportions: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
    init_scales: tuple[float, ...] = (1.0, 10.0)
    n_features: int = 5
    test_fraction: float = 0.25
    learning_rate_init: float = 1e-2


PARTIAL_PRESETS = {
    "tiny": PartialPreset(
        n_samples=160, width=16, max_iter=5, n_seeds=1, proportions=(0.0, 0.5, 1.0)
    ),
    "small": PartialPreset(n_samples=1200, width=256, max_iter=200, n_seeds=3),
    "medium": PartialPreset(n_samples=2000, width=512, max_iter=300, n_seeds=4),
    "paper": PartialPreset(
        n_samples=4000,
        width=1024,
        max_iter=400,
        n_seeds=5,
        proportions=(0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0),
    ),
}


def sphere_regression(
    n_samples: int, n_features: int, random_state: int
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs uniform on the unit sphere and a smooth non-linear target.

    ``y = sin(4 x_0) cos(3 x_1) + x_2 ** 2``, the target of
    ``examples/plot_phase_transition.py``.

    Parameters
    ----------
    n_samples : int
    n_features : int
        At least 3.
    random_state : int
        Seed of a local ``numpy.random.Generator``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows of unit norm.
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.experiments._partial import sphere_regression
    >>> X, y = sphere_regression(4, 5, random_state=0)
    >>> np.allclose(np.linalg.norm(X, axis=1), 1), y.shape
    (True, (4,))
    """
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]) + X[:, 2] ** 2
    return X, y


def captured_fraction(errors: Sequence[float]) -> np.ndarray:
    """Fraction of the error drop from the first to the last grid point.

    Parameters
    ----------
    errors : sequence of float
        Errors along the grid of P, from ``P = 0`` to ``P = 1``.

    Returns
    -------
    ndarray
        ``(errors[0] - errors) / (errors[0] - errors[-1])``; NaN everywhere
        when there is no drop (``errors[-1] >= errors[0]``).

    Examples
    --------
    >>> from sklearn_pt.experiments._partial import captured_fraction
    >>> captured_fraction([1.0, 0.2, 0.0]).tolist()
    [0.0, 0.8, 1.0]
    """
    errors = np.asarray(errors, dtype=float)
    drop = errors[0] - errors[-1]
    if not drop > 0:
        return np.full(errors.shape, np.nan)
    return (errors[0] - errors) / drop


def proportion_capturing(
    proportions: Sequence[float], errors: Sequence[float], fraction: float = FRACTION
) -> float:
    """Smallest P on the grid whose error captures ``fraction`` of the drop.

    Parameters
    ----------
    proportions : sequence of float
        Increasing grid of P, from 0 to 1.
    errors : sequence of float
        Error at each P (e.g. the mean over seeds).
    fraction : float, default=0.9

    Returns
    -------
    float
        NaN when the error does not drop from ``P = 0`` to ``P = 1``.

    Examples
    --------
    >>> from sklearn_pt.experiments._partial import proportion_capturing
    >>> proportion_capturing([0, 0.1, 0.5, 1], [1.0, 0.3, 0.05, 0.0])
    0.5
    """
    captured = captured_fraction(errors)
    reached = np.flatnonzero(captured >= fraction)
    return float(np.asarray(proportions)[reached[0]]) if reached.size else np.nan


def sweep_proportions(
    estimator, preset, seeds: Sequence[int], *, n_jobs: int | None, bar
) -> tuple[np.ndarray, np.ndarray]:
    """Train and test MSE against P, one data set and seed per repetition.

    Each repetition draws :func:`sphere_regression` data with its seed, holds
    out the last ``test_fraction`` of the rows, and runs
    :func:`~sklearn_pt.model_selection.proportion_curve` on that one split.

    Parameters
    ----------
    estimator : PartiallyTrainableRegressor
        Unfitted; its ``random_state`` is set to each seed.
    preset : PartialPreset or DeepPreset
        Gives ``n_samples``, ``n_features``, ``test_fraction`` and
        ``proportions``.
    seeds : sequence of int
    n_jobs : int or None
        Parallel fits over the proportions.
    bar : tqdm.tqdm
        Advanced by one per fit.

    Returns
    -------
    train_errors, test_errors : ndarray of shape (n_proportions, n_seeds)
    """
    n_test = max(1, round(preset.test_fraction * preset.n_samples))
    n_train = preset.n_samples - n_test
    split = [(np.arange(n_train), np.arange(n_train, preset.n_samples))]
    train, test = [], []
    for seed in seeds:
        X, y = sphere_regression(preset.n_samples, preset.n_features, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            train_scores, test_scores = proportion_curve(
                estimator,
                X,
                y,
                proportions=preset.proportions,
                cv=split,
                scoring="neg_mean_squared_error",
                n_jobs=n_jobs,
                random_states=[seed],
            )
        train.append(-train_scores[:, 0, 0])
        test.append(-test_scores[:, 0, 0])
        bar.update(len(preset.proportions))
    return np.stack(train, axis=1), np.stack(test, axis=1)


def sweep_variants(
    estimators: dict, preset, seeds: Sequence[int], *, n_jobs, progress, desc
) -> dict:
    """:func:`sweep_proportions` for each estimator of ``estimators`` (keyed
    by what varies between them, e.g. the init scale or the depth), under one
    progress bar; the ``(train_errors, test_errors)`` pairs under the same
    keys."""
    n_fits = len(estimators) * len(seeds) * len(preset.proportions)
    with progress_bar(n_fits, desc=desc, enabled=progress) as bar:
        return {
            key: sweep_proportions(estimator, preset, seeds, n_jobs=n_jobs, bar=bar)
            for key, estimator in estimators.items()
        }


def preset_regressor(preset, device: str, **params) -> PartiallyTrainableRegressor:
    """The swept estimator: the preset's training budget, no L2 penalty."""
    return PartiallyTrainableRegressor(
        learning_rate_init=preset.learning_rate_init,
        max_iter=preset.max_iter,
        alpha=0.0,
        device=device,
        **params,
    )


def drop_summary(proportions, errors: dict, labels) -> tuple[dict, list[str]]:
    """Per variant, the P capturing :data:`FRACTION` of the mean training
    error's drop, and a ``"<P=0> -> <P=1> (label)"`` text of that drop."""
    means = {key: train.mean(axis=1) for key, (train, _) in errors.items()}
    measured = {
        key: proportion_capturing(proportions, mean, FRACTION)
        for key, mean in means.items()
    }
    ends = [
        f"{mean[0]:.3g} -> {mean[-1]:.3g} ({label})"
        for mean, label in zip(means.values(), labels, strict=True)
    ]
    return measured, ends


def _theory_fraction(proportions, preset, init_scale) -> np.ndarray:
    bound = approximation_bound(
        np.asarray(proportions, dtype=float),
        preset.width,
        d=preset.n_features,
        init_scale=init_scale,
    )
    return captured_fraction(bound)


def _draw(preset, errors, measured, theory):
    """Left: errors against P; right: fraction of the drop, measured vs theory."""
    figure, (left, right) = new_figure(2)
    proportions = np.asarray(preset.proportions)
    grid = np.unique(np.concatenate([np.linspace(0, 1, 401), proportions]))
    for k, (init_scale, (train, test)) in enumerate(errors.items()):
        color = f"C{k}"
        PhaseTransitionDisplay(
            proportions, train, test, label=f"init_scale {init_scale:g}"
        ).plot(ax=left, log_x=True)
        fraction = captured_fraction(train.mean(axis=1))
        right.plot(
            proportions,
            fraction,
            "o-",
            color=color,
            label=f"measured, init_scale {init_scale:g}: P90 = "
            f"{measured[init_scale]:.3g}",
        )
        right.plot(
            grid,
            _theory_fraction(grid, preset, init_scale),
            ":",
            color=color,
            label=f"theory bound, init_scale {init_scale:g}: P90 = "
            f"{theory[init_scale]:.3g}",
        )
        right.axvline(theory[init_scale], color=color, ls=":", lw=0.8)
    left.set_title(
        f"Error vs P (width {preset.width}, d = {preset.n_features}; dashed: test)"
    )
    right.axhline(FRACTION, color="0.4", lw=0.8, ls="--")
    right.set_xscale("symlog", linthresh=0.01)
    right.set(
        xlabel="trainable proportion P",
        ylabel="fraction of the drop from P=0 to P=1",
        title="Training-error drop captured vs the theory bound",
        xlim=(0, 1.1),
        ylim=(-0.05, 1.55),
    )
    right.legend(fontsize=7, loc="upper left")
    left.legend(fontsize=7)
    return figure


def run_partial(
    *,
    scale: str = "small",
    device: str = "cpu",
    seeds: int | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ExperimentResult:
    """Training error against the trainable proportion P for two init scales.

    Fits :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor`
    (one hidden layer, Adam, no penalty) on inputs on the unit sphere of
    ``R^5`` for every P of the preset's grid and ``init_scale`` (tau) 1 and
    10, with :func:`~sklearn_pt.model_selection.proportion_curve`. It
    measures, per tau, the smallest P on the grid whose mean training error
    captures 90% of the drop from ``P = 0`` to ``P = 1``, and sets it next to
    the P that captures 90% of the reduction of the theory bound
    (:func:`~sklearn_pt.theory.proportion_for_reduction`).

    Parameters
    ----------
    scale : {"small", "medium", "paper"}, default="small"
        Size of the run (``"tiny"``: a few seconds, for tests only).
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the networks train.
    seeds : int, default=None
        Number of repetitions (data set and initialisation); None uses the
        preset's.
    n_jobs : int, default=None
        Parallel fits (joblib), over the grid of P.
    progress : bool, default=True
        Show a progress bar over the fits on stderr.

    Returns
    -------
    ExperimentResult
        Columns ``init_scale, trainable_proportion, seed, train_mse,
        test_mse, theory_bound, theory_fraction``; metrics ``p90_tau<tau>``
        and ``p90_theory_tau<tau>``.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to
    Fully Trainable Networks".

    Examples
    --------
    >>> from sklearn_pt.experiments import run_partial
    >>> result = run_partial(scale="tiny", progress=False)
    >>> result.columns[:3]
    ('init_scale', 'trainable_proportion', 'seed')
    >>> round(result.metrics["p90_theory_tau10"], 4)
    0.0406
    """
    clock = Stopwatch()
    preset = select_preset(PARTIAL_PRESETS, scale)
    device = resolve_run_device(device)
    seed_list = resolve_seeds(seeds, preset.n_seeds)
    estimators = {
        tau: preset_regressor(
            preset, device, hidden_layer_sizes=(preset.width,), init_scale=tau
        )
        for tau in preset.init_scales
    }
    errors = sweep_variants(
        estimators, preset, seed_list, n_jobs=n_jobs, progress=progress, desc="partial"
    )
    proportions = np.asarray(preset.proportions)
    labels = [f"init_scale {tau:g}" for tau in errors]
    measured, ends = drop_summary(proportions, errors, labels)
    theory = {
        tau: proportion_for_reduction(FRACTION, d=preset.n_features, init_scale=tau)
        for tau in errors
    }
    rows = []
    for tau, (train, test) in errors.items():
        bound = approximation_bound(
            proportions, preset.width, d=preset.n_features, init_scale=tau
        )
        fraction = _theory_fraction(proportions, preset, tau)
        for i, proportion in enumerate(proportions):
            for j, seed in enumerate(seed_list):
                rows.append(
                    (
                        tau,
                        float(proportion),
                        seed,
                        float(train[i, j]),
                        float(test[i, j]),
                        float(bound[i]),
                        float(fraction[i]),
                    )
                )

    summary = (
        f"P capturing 90% of the training-error drop (smallest P on the grid, "
        f"mean of {plural(len(seed_list), 'seed')}): "
        f"{format_values(list(measured.values()), labels)}. "
        f"Theory bound (proportion_for_reduction, d={preset.n_features}, "
        f"kappa1=1): {format_values(list(theory.values()), labels)}. "
        f"Training MSE from P=0 (random features) to P=1: {'; '.join(ends)}."
    )
    metrics = {f"p90_tau{tau:g}": value for tau, value in measured.items()}
    metrics |= {f"p90_theory_tau{tau:g}": value for tau, value in theory.items()}
    return ExperimentResult(
        name="partial",
        title="Partially trainable networks: training error vs the trainable "
        "proportion P",
        columns=(
            "init_scale",
            "trainable_proportion",
            "seed",
            "train_mse",
            "test_mse",
            "theory_bound",
            "theory_fraction",
        ),
        rows=rows,
        figure=_draw(preset, errors, measured, theory),
        summary=summary,
        metrics=metrics,
        settings={
            "scale": scale,
            "seeds": len(seed_list),
            "device": device,
            "width": preset.width,
            "n_samples": preset.n_samples,
            "d": preset.n_features,
            "max_iter": preset.max_iter,
        },
        seconds=clock.seconds(),
        reference=REFERENCE,
    )
