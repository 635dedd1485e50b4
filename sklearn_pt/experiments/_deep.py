"""Reproduction: the phase transition in P for deep partially trainable
networks (He, Lao, Lu, Zhang, 2026).

Per depth (hidden layers of equal width, the same P in every one) and seed,
training and test MSE at every P of the grid, on
:func:`~sklearn_pt.datasets.make_sphere_regression` data.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..datasets import make_sphere_regression
from ..model_selection import PhaseTransitionDisplay, proportion_curve
from ..neural_network import PartiallyTrainableRegressor
from ._claims import Claim, IntervalTest
from ._runner import Experiment
from ._stats import (
    captured_fraction,
    crossing,
    geometric_mean,
    seed_curves,
    small_proportions,
)

__all__ = ["DEEP"]

REFERENCE = (
    'He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully '
    'Trainable Networks".'
)
FRACTION = 0.9
"""P90 is the P at which this share of the P=0 -> P=1 drop is captured."""
SHAPE_P = 0.1
"""The share of the drop is judged at the largest grid P up to this one."""
PROPORTIONS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]


def _preset(depths, seeds, n_samples, width, max_iter, proportions=PROPORTIONS):
    return {
        "seeds": seeds,
        "grid": [{"depth": depth} for depth in depths],
        "n_samples": n_samples,
        "width": width,
        "max_iter": max_iter,
        "n_features": 5,
        "test_fraction": 0.25,
        "learning_rate_init": 1e-2,
        "init_scale": 1.0,
        "proportions": proportions,
    }


def measure(config: dict, seed: int) -> list[dict]:
    """Train and test MSE at every P for one depth and seed: one
    :func:`~sklearn_pt.model_selection.proportion_curve` on a single split
    (the last quarter of the rows held out)."""
    n = config["n_samples"]
    X, y = make_sphere_regression(n, config["n_features"], random_state=seed)
    n_train = n - max(1, round(config["test_fraction"] * n))
    network = PartiallyTrainableRegressor(
        hidden_layer_sizes=(config["width"],) * config["depth"],
        init_scale=config["init_scale"],
        learning_rate_init=config["learning_rate_init"],
        max_iter=config["max_iter"],
        solver="adam",
        tol=1e-4,
        n_iter_no_change=10,
        alpha=0.0,
        normalize_y=False,
        project_to_sphere=True,
        device=config["device"],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        curve = proportion_curve(
            network,
            X,
            y,
            proportions=config["proportions"],
            cv=[(np.arange(n_train), np.arange(n_train, n))],
            scoring="neg_mean_squared_error",
            random_states=[seed],
        )
        train, test = curve.train_scores, curve.test_scores
    return [
        {"trainable_proportion": p, "train_mse": -tr, "test_mse": -te}
        for p, tr, te in zip(
            config["proportions"], train[:, 0, 0], test[:, 0, 0], strict=True
        )
    ]


def _captured(table) -> dict:
    """Per depth, the captured share of each seed's drop, ``(P, seed)``."""
    curves = seed_curves(table, "train_mse", along="trainable_proportion", by="depth")
    return {depth: curve.apply(captured_fraction) for depth, curve in curves.items()}


def _p90(captured) -> np.ndarray:
    """Per seed, the P capturing :data:`FRACTION` of the drop (log-interpolated)."""
    return np.array(
        [crossing(captured.index, captured[seed], FRACTION) for seed in captured]
    )


def _p90_log_ratios(table) -> dict:
    """Per depth below the shallowest, the seeds' log(P90 / shallowest P90)."""
    captured = _captured(table)
    shallow = _p90(captured.pop(min(captured)))
    return {depth: np.log(_p90(c) / shallow) for depth, c in captured.items()}


def _claims(table) -> list[Claim]:
    p = small_proportions(table.trainable_proportion.unique(), SHAPE_P)[-1]
    shallow = int(table.depth.min())
    claims = [
        Claim(
            "the same phase transition at every depth: the share of the drop "
            f"captured at P={p:g} exceeds P",
            lambda t: {d: c.loc[p] for d, c in _captured(t).items()},
            IntervalTest(above=p, of="the mean captured share"),
            paper="the transition of the two-layer network appears in deep "
            "networks (depth up to 15)",
            label="depth {}",
        ),
        Claim(
            f"P90 (the P capturing {FRACTION:.0%} of the drop) is the same at "
            f"every depth as at depth {shallow}",
            _p90_log_ratios,
            IntervalTest(contains=0.0, of="the paired log(P90 ratio)"),
            paper="the same shape at every depth",
            label="depth {}",
            test_text="(little power with few seeds)",
        ),
    ]
    return claims if table.depth.nunique() > 1 else claims[:1]


def _errors_panel(ax, table) -> None:
    for depth, group in table.groupby("depth"):
        train, test = (
            group.pivot(index="trainable_proportion", columns="seed", values=v)
            for v in ("train_mse", "test_mse")
        )
        PhaseTransitionDisplay(
            train.index.to_numpy(),
            train.to_numpy(),
            test.to_numpy(),
            label=f"depth {depth}",
        ).plot(ax=ax, log_x=True)
    ax.set_title("Error vs P by depth (dashed: test)")
    ax.legend(fontsize=7)


def _captured_panel(ax, table) -> None:
    for depth, captured in _captured(table).items():
        ax.plot(
            captured.index,
            captured.mean(axis=1),
            "o-",
            label=f"depth {depth}: P90 {geometric_mean(_p90(captured)):.3g}",
        )
    ax.axhline(FRACTION, color="0.4", lw=0.8, ls="--")
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set(
        xlabel="trainable proportion P (every hidden layer)",
        ylabel="share of the drop from P=0 to P=1 (mean over seeds)",
        title="Training-error drop captured, by depth",
        xlim=(0, 1.1),
        ylim=(-0.05, 1.1),
    )
    ax.legend(fontsize=7, loc="lower right")


def _describe(table) -> str:
    means = table.groupby(["depth", "trainable_proportion"]).train_mse.mean()
    lines = [
        f"- depth {depth}: P90 {geometric_mean(_p90(captured)):.3g} (geometric "
        f"mean over seeds), training MSE {means[depth].iloc[0]:.3g} at P=0, "
        f"{means[depth].iloc[-1]:.3g} at P=1"
        for depth, captured in _captured(table).items()
    ]
    return "\n".join(lines)


DEEP = Experiment(
    name="deep",
    title="Deep partially trainable networks: training error vs P by depth",
    reference=REFERENCE,
    presets={
        "tiny": _preset((2,), 1, 160, 16, 5, proportions=[0.0, 0.5, 1.0]),
        "small": _preset((2, 4, 8), 2, 800, 64, 100),
        "medium": _preset((2, 3, 5, 8, 12), 3, 1200, 128, 200),
        "paper": _preset((2, 3, 5, 10, 15), 5, 4000, 256, 400),
    },
    measure=measure,
    claims=_claims,
    panels=(_errors_panel, _captured_panel),
    describe=_describe,
)
"""Training error against P for several depths (2 to 15 at ``"paper"``)."""
