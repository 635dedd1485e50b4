"""Reproduction: training error against the trainable proportion P, for two
init scales, measured the way the theory defines it (He, Lao, Lu, Zhang,
2026).

The theory's design: the trainable neurons are drawn by ridge leverage score
sampling (what its ``kappa_1 = 1`` assumes), every fit runs the same forced
budget (no early stop), the readout is re-solved in closed form after
training (exact at ``P = 0``), and the seeds are paired (the same data and
seed for both init scales). Random selection is run beside it as a variant.
Per seed, every P of every (selection, init scale) trains in one stacked
batch (:func:`~sklearn_pt.model_selection.fit_stacked`).
"""

from __future__ import annotations

import copy
from itertools import product

import numpy as np
import torch
from sklearn.metrics import mean_squared_error

from .._torch_bridge import as_tensor
from .._training import Callback
from ..datasets import make_sphere_regression
from ..exceptions import DivergenceError
from ..model_selection import PhaseTransitionDisplay, fit_stacked
from ..neural_network import PartiallyTrainableRegressor
from ..neural_network._partial import _fit_ridge_readout, _has_trainable_hidden
from ..theory import (
    biased_relu_alpha,
    biased_relu_kappa0,
    bound_shape,
    proportion_for_reduction,
)
from ._claims import Claim, IntervalTest, SignTest
from ._runner import Experiment
from ._stats import (
    HOLDS,
    captured_fraction,
    crossing,
    geometric_estimate,
    geometric_mean,
    seed_curves,
    small_proportions,
)

__all__ = ["PARTIAL"]

REFERENCE = (
    'He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully '
    'Trainable Networks".'
)
FRACTION = 0.9
"""P90 is the P at which this share of the P=0 -> P=1 drop is captured."""
THEORY_SELECTION = "leverage"
"""The selection of the theory's design; the others are variants."""
SMALL_P = 0.2
"""The largest P of the "fast fall at small P" claim's range."""
SHARPER_P = 0.1
"""The largest P of the "sharper for the larger init scale" claim's range."""
MIDPOINT = "the log-midpoint"
"""The point of the "sharper" claim that compares the log-midpoints."""
SHORT_BUDGET = 0.25
"""The theory's design is fitted again with this share of the epochs: the
"sharper" claim's smaller size (at small, the larger init scale trails for
want of training; see ``benchmarks/partial_sharper.py``)."""
PROPORTIONS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]


def _preset(seeds, n_samples, width, max_iter, proportions=PROPORTIONS):
    return {
        "seeds": seeds,
        "grid": [{}],  # one cell: per seed, the whole sweep is one batch
        "n_samples": n_samples,
        "n_features": 5,
        "test_fraction": 0.25,
        "width": width,
        "max_iter": max_iter,
        "learning_rate_init": 1e-2,
        "alpha": 1e-3,
        "leverage_reg": "auto",
        "pool_per_width": 10,
        "proportions": proportions,
        "init_scales": [1.0, 10.0],
        "selections": [THEORY_SELECTION, "random"],
        "short_budget": SHORT_BUDGET,
    }


def theory_design_regressor(
    config: dict, *, init_scale: float, selection: str
) -> PartiallyTrainableRegressor:
    """The estimator of the theory's design: ``selection`` of the trainable
    neurons, a forced budget of ``config["max_iter"]`` epochs (``tol=0`` and
    ``n_iter_no_change=max_iter``: never stops early), the readout re-solved
    in closed form with penalty ``config["alpha"]``, raw targets."""
    keys = ("leverage_reg", "learning_rate_init", "alpha", "max_iter", "device")
    return PartiallyTrainableRegressor(
        hidden_layer_sizes=(config["width"],),
        init_scale=init_scale,
        trainable_selection=selection,
        leverage_pool_size=config["pool_per_width"] * config["width"],
        project_to_sphere=True,
        solver="adam",
        readout="ridge",
        normalize_y=False,
        tol=0.0,
        n_iter_no_change=config["max_iter"],
        **{key: config[key] for key in keys},
    )


def bound_fraction(proportions, *, d: int, init_scale: float) -> np.ndarray:
    """Share of the bound's reduction from ``P = 0`` to ``P = 1`` captured at
    each P (any P in [0, 1]): :func:`~sklearn_pt.theory.bound_shape` with
    ``kappa_1 = 1`` (mismatch ratio ``kappa_0*``) and ``alpha = (d+2)/(d-1)``
    (the width, ``delta`` and the bound's constant cancel).

    Examples
    --------
    >>> from sklearn_pt.experiments._partial import bound_fraction
    >>> bound_fraction([0.0, 0.1, 1.0], d=5, init_scale=10.0).round(3).tolist()
    [0.0, 0.972, 1.0]
    >>> bound_fraction([0.1], d=5, init_scale=10.0).round(3).tolist()
    [0.972]
    """
    kappa0, alpha = biased_relu_kappa0(d, init_scale), biased_relu_alpha(d)
    ends = np.concatenate([[0.0], np.asarray(proportions, dtype=float), [1.0]])
    return captured_fraction(bound_shape(ends, kappa0, alpha=alpha))[1:-1]


COLUMNS = (
    "selection init_scale trainable_proportion epochs train_mse test_mse n_features"
)
"""What :func:`measure` records per fit, after the seed."""


def measure(config: dict, seed: int) -> list[dict]:
    """Train and test MSE at every P of every (selection, init scale) for
    one seed, all in one :func:`~sklearn_pt.model_selection.fit_stacked`
    batch on the first three quarters of the rows (NaN for a fit that
    diverged); for the theory's selection also after
    ``config["short_budget"]`` of the epochs (:func:`_at_epoch`: the same
    trajectory, the readout re-solved there)."""
    n, d = config["n_samples"], config["n_features"]
    X, y = make_sphere_regression(n, d, random_state=seed)
    n_train = n - max(1, round(config["test_fraction"] * n))
    splits = ((X[:n_train], y[:n_train]), (X[n_train:], y[n_train:]))
    grids = (config["selections"], config["init_scales"], config["proportions"])
    fits = list(product(*grids))
    networks = [
        theory_design_regressor(config, init_scale=tau, selection=selection).set_params(
            random_state=seed, trainable_proportion=p
        )
        for selection, tau, p in fits
    ]
    short = max(1, round(config["short_budget"] * config["max_iter"]))
    snapshot = _Snapshot(short)
    fitted = fit_stacked(networks, *splits[0], callbacks=[snapshot])
    budgets = [(config["max_iter"], fits, fitted)]
    if short < config["max_iter"]:
        theory = [k for k, keys in enumerate(fits) if keys[0] == THEORY_SELECTION]
        early = _at_epoch(networks, fitted, snapshot, *splits[0])
        budgets.append((short, [fits[k] for k in theory], [early[k] for k in theory]))
    rows = []
    for epochs, keys, estimators in budgets:
        for key, fit in zip(keys, estimators, strict=True):
            errors = (
                [np.nan, np.nan]
                if isinstance(fit, DivergenceError)
                else [mean_squared_error(t, fit.predict(x)) for x, t in splits]
            )
            values = (*key, epochs, *errors, d)
            rows.append(dict(zip(COLUMNS.split(), values, strict=True)))
    return rows


class _Snapshot(Callback):
    """The stacked networks' weights after epoch ``epoch``."""

    def __init__(self, epoch: int) -> None:
        self.epoch, self.networks, self.weights = epoch, None, []

    def on_step_end(self, loop) -> None:
        if loop.iteration == self.epoch:
            self.networks = loop.stepper.module
            self.weights = [p.detach().clone() for p in self.networks.parameters()]

    @torch.no_grad()
    def restored(self):
        """The stacked networks, their weights put back to the epoch's (once
        the training is over)."""
        for parameter, weight in zip(
            self.networks.parameters(), self.weights, strict=True
        ):
            parameter.copy_(weight)
        return self.networks


def _at_epoch(networks, fitted, snapshot: _Snapshot, X, y) -> list:
    """Per fit, what a budget of ``snapshot.epoch`` epochs leaves (a fit
    trains the same steps whatever its budget): a copy of the fitted
    estimator with the snapshot's hidden weights and its readout re-solved
    in closed form on ``(X, y)``. A fit with no trainable neuron (its
    closed form) and one that diverged are their own."""
    trains = [
        not isinstance(fit, DivergenceError) and _has_trainable_hidden(fit.module_)
        for fit in fitted
    ]
    if snapshot.networks is None or not any(trains):
        return list(fitted)
    copies = [
        copy.deepcopy(fit) if flag else fit
        for fit, flag in zip(fitted, trains, strict=True)
    ]
    # the stacked networks: those with a trainable neuron (one hidden layer)
    stacked = [
        k
        for k, network in enumerate(networks)
        if round(network.trainable_proportion * network.hidden_layer_sizes[0])
    ]
    spare = copies[trains.index(True)].module_  # a diverged fit's stand-in
    modules = [
        copies[k].module_ if trains[k] else copy.deepcopy(spare) for k in stacked
    ]
    snapshot.restored().copy_to_modules(modules)
    # one design: every fit computes on the spare's device, in its dtype
    weight = spare.readout.weight
    X_t = as_tensor(X, device=weight.device, dtype=weight.dtype)
    y_t = as_tensor(
        np.reshape(y, (len(y), -1)), device=weight.device, dtype=weight.dtype
    )
    for k in (k for k in stacked if trains[k]):
        _fit_ridge_readout(copies[k].module_, X_t, y_t, copies[k].alpha)
    return copies


def _at_budget(table, shortest: bool = False):
    """The rows fitted with the run's full budget of epochs (``shortest``:
    its short one); a table without an ``epochs`` column has only the full
    budget."""
    if "epochs" not in table:
        return table
    epochs = table.epochs.min() if shortest else table.epochs.max()
    return table[table.epochs == epochs]


def _curves(table, value: str = "train_mse") -> dict:
    """Per (selection, init scale), ``value`` as ``(P, seed)`` at the full
    budget."""
    by = ["selection", "init_scale"]
    return seed_curves(_at_budget(table), value, along="trainable_proportion", by=by)


def _captured(table) -> dict:
    """Per (selection, init scale), the share of each seed's drop captured."""
    return {
        key: curve.apply(captured_fraction) for key, curve in _curves(table).items()
    }


def _crossings(curves, level: float) -> np.ndarray:
    """Per seed (column), the P at which the curve first reaches ``level``."""
    return np.array([crossing(curves.index, curves[seed], level) for seed in curves])


def log_midpoints(errors) -> np.ndarray:
    """Per seed (column of ``errors``, indexed by P), the P at which half of
    the drop on a log scale is captured (log-interpolated; the first
    positive grid P when it is reached there, an upper bound).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_pt.experiments._partial import log_midpoints
    >>> errors = pd.DataFrame({0: [1.0, 0.5, 0.05, 0.01], 1: [1.0, 0.01, 0.001, 1e-4]},
    ...                       index=[0, 0.01, 0.1, 1])
    >>> log_midpoints(errors).round(4).tolist()
    [0.05, 0.01]
    """
    return _crossings(np.log(errors).apply(captured_fraction), 0.5)


def _bound_midpoint(d: int, tau: float) -> float:
    grid = np.linspace(0, 1, 2001)
    shape = bound_shape(grid, biased_relu_kappa0(d, tau), alpha=biased_relu_alpha(d))
    return crossing(grid, captured_fraction(np.log(shape)), 0.5)


class _SharperTest:
    """The paired sign test at each P; at :data:`MIDPOINT`, the interval of
    the paired log(midpoint ratio) above 0."""

    sign = SignTest()
    interval = IntervalTest(above=0.0, of="the paired log(midpoint ratio)")

    def describe(self) -> str:
        return (
            f"{self.sign.describe()} of the difference in captured share at "
            f"each P; {self.interval.describe()}"
        )

    def __call__(self, values, point):
        return (self.interval if point == MIDPOINT else self.sign)(values, point)


def _sharper(table) -> dict:
    """Per P of the range, the paired differences in captured share (larger
    init scale minus smaller); at :data:`MIDPOINT`, the paired
    ``log(midpoint of the smaller / midpoint of the larger)``."""
    captured, curves = _captured(table), _curves(table)
    low, high = ((THEORY_SELECTION, tau) for tau in _extremes(table))
    grid = small_proportions(captured[low].index, SHARPER_P)
    ratio = log_midpoints(curves[low]) / log_midpoints(curves[high])
    return {
        **{f"P={p:g}": captured[high].loc[p] - captured[low].loc[p] for p in grid},
        MIDPOINT: np.log(ratio),
    }


def _sharper_with_budget(table) -> dict:
    """Per point of :func:`_sharper`, the paired move of its statistic from
    the short budget to the full one (positive: towards "sharper"); empty
    when the table has one budget."""
    if "epochs" not in table or table.epochs.nunique() < 2:
        return {}
    full, smaller = _sharper(table), _sharper(_at_budget(table, shortest=True))
    return {point: full[point] - smaller[point] for point in full}


def _extremes(table) -> tuple[float, float]:
    return table.init_scale.min(), table.init_scale.max()


def _claims(table) -> list[Claim]:
    d = int(table.n_features.iloc[0])
    small = small_proportions(table.trainable_proportion.unique(), SMALL_P)
    taus = sorted(table.init_scale.unique())
    low, high = _extremes(table)
    theory = {t: proportion_for_reduction(FRACTION, d=d, init_scale=t) for t in taus}

    def fast(tau):
        bound = bound_fraction(small, d=d, init_scale=tau)
        return Claim(
            "training error falls fast for small P, then saturates: the share "
            f"of the P=0 -> P=1 drop captured at P exceeds P for P <= "
            f"{SMALL_P:g} (init_scale {tau:g}, {THEORY_SELECTION} selection)",
            lambda t: {p: _captured(t)[THEORY_SELECTION, tau].loc[p] for p in small},
            IntervalTest(above=lambda p: p, of="the mean captured share"),
            paper="the bound captures "
            + ", ".join(
                f"{b:.3f} at P={p:g}" for p, b in zip(small, bound, strict=True)
            ),
            label="P={:g}",
            test_text="P",
        )

    sharper = Claim(
        f"the transition is sharper for the larger init scale ({high:g} vs "
        f"{low:g}): more of the drop captured at every P <= {SHARPER_P:g}, and a "
        "smaller log-midpoint P",
        _sharper,
        _SharperTest(),
        paper=f"the bound's log-midpoint P {_bound_midpoint(d, high):.3g} vs "
        f"{_bound_midpoint(d, low):.3g}",
        measured=f"captured share, init_scale {high:g} minus {low:g}",
        shrink=_sharper_with_budget,
        shrink_text=_budget_text(table),
    )
    p90 = Claim(
        f"the P capturing {FRACTION:.0%} of the drop is the bound's "
        "proportion_for_reduction",
        lambda t: {
            tau: geometric_estimate(_crossings(curve, FRACTION))
            for (selection, tau), curve in _captured(t).items()
            if selection == THEORY_SELECTION
        },
        IntervalTest(
            contains=lambda tau: theory[tau],
            of="the geometric mean of the per-seed P90 (interpolated in log P)",
        ),
        paper=", ".join(
            f"{theory[tau]:.3g} (init_scale {tau:g}, kappa_0* "
            f"{biased_relu_kappa0(d, tau):.3g})"
            for tau in taus
        )
        + " (kappa_1 = 1, kappa_0* = 4 sqrt(2) tau (d+1)/d)",
        label="init_scale {:g}",
        reason=lambda t, outcomes: "" if set(outcomes.values()) == {HOLDS} else WORST,
        test_text="the bound's",
    )
    return [*(fast(tau) for tau in reversed(taus)), sharper, p90]


def _budget_text(table) -> str:
    if "epochs" not in table:
        return "with the budget"
    return f"from {table.epochs.min()} to {table.epochs.max()} epochs"


def _errors_panel(ax, table) -> None:
    tests = _curves(table, "test_mse")
    for (selection, tau), train in _curves(table).items():
        if selection == THEORY_SELECTION:
            PhaseTransitionDisplay(
                train.index.to_numpy(),
                train.to_numpy(),
                tests[selection, tau].to_numpy(),
                label=f"init_scale {tau:g}",
            ).plot(ax=ax, log_x=True)
    ax.set_title(f"{THEORY_SELECTION} selection, closed-form readout")
    ax.legend(fontsize=7)


def _fraction_panel(ax, table) -> None:
    d, grid = int(table.n_features.iloc[0]), np.linspace(0, 1, 401)
    taus = sorted(table.init_scale.unique())
    for (selection, tau), captured in _captured(table).items():
        color, design = f"C{taus.index(tau)}", selection == THEORY_SELECTION
        mean, sd = captured.mean(axis=1), captured.std(axis=1, ddof=0)
        label, fmt = f"{selection}, init_scale {tau:g}", "o-" if design else "s--"
        ax.errorbar(captured.index, mean, sd, fmt=fmt, color=color, label=label)
        if design:
            p90 = proportion_for_reduction(FRACTION, d=d, init_scale=tau)
            bound = bound_fraction(grid, d=d, init_scale=tau)
            ax.plot(grid, bound, ":", color=color, label=f"bound (P90 {p90:.3g})")
    ax.set(
        xlabel="trainable proportion P",
        ylabel="share of the training-error drop from P=0 to P=1",
        title="Drop captured (mean ± sd over paired seeds)",
        xlim=(0, 1.05),
    )
    ax.axhline(FRACTION, color="0.4", lw=0.8, ls="--")
    ax.set_xscale("symlog", linthresh=0.01)
    ax.legend(fontsize=7, loc="lower right", framealpha=0.6)


def _paired_panel(ax, table) -> None:
    captured, (low, high) = _captured(table), _extremes(table)
    for s, selection in enumerate(sorted(table.selection.unique())):
        difference = (captured[selection, high] - captured[selection, low]).iloc[1:-1]
        x, color = difference.index.to_numpy(), f"C{s + 2}"
        ax.plot(x * (1.04 + 0.04 * s), difference, ".", color=color, alpha=0.4)
        ax.plot(x, difference.mean(axis=1), marker="o", color=color, label=selection)
    ax.axhline(0.0, color="0.4", lw=0.8)
    ax.set_xscale("log")
    ax.set_xticks(x, [f"{p:g}" for p in x])
    ax.minorticks_off()
    ax.set(
        xlabel="trainable proportion P",
        ylabel=f"captured share, init_scale {high:g} minus {low:g}",
        title="Paired seeds (dots; > 0: sharper for the larger init scale)",
    )
    ax.legend(fontsize=7)


def _describe(table) -> str:
    lines = [DESIGN, ""]
    for (selection, tau), curve in _curves(table).items():
        mean, midpoints = curve.mean(axis=1), log_midpoints(curve)
        p90 = _crossings(curve.apply(captured_fraction), FRACTION)
        lines.append(
            f"- {selection}, init_scale {tau:g}: training MSE {mean.iloc[0]:.3g} at "
            f"P=0, {mean.iloc[-1]:.3g} at P=1; log-midpoint P "
            f"{geometric_mean(midpoints):.3g}, P90 {geometric_mean(p90):.3g} "
            "(geometric means over seeds)"
        )
    tau = table.init_scale.max()
    frozen = f"At init_scale {tau:g}, {(tau - 1) / (2 * tau):.0%} of the frozen neurons"
    return "\n".join([*lines, "", frozen + FROZEN])


DESIGN = (
    f"Design: {THEORY_SELECTION}-sampled trainable neurons (the theory's kappa_1 "
    "= 1; random selection beside it), the same forced budget of Adam epochs for "
    "every fit (no early stop), the readout re-solved in closed form (ridge) "
    "after training, paired seeds (the same data and seed for both init scales), "
    "a quarter of the points held out."
)
FROZEN = (
    " are always off, in expectation, and as many always on (a bias beyond "
    "|<w, x>| <= 1): the random-features network has few nonlinear neurons, its "
    "drop from P=0 to P=1 is larger, and a handful of trained neurons capture a "
    "smaller share of it."
)
WORST = (
    "The bound's constant and kappa_0* are worst cases over the RKHS ball; see "
    "partial-approximation for the mismatch ratio fitted to the best approximation."
)
PAPER_PROPORTIONS = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]


PARTIAL = Experiment(
    name="partial",
    title="Partially trainable networks: training error vs the trainable proportion P",
    reference=REFERENCE,
    presets={
        "tiny": _preset(2, 160, 16, 5, proportions=[0.0, 0.1, 0.5, 1.0]),
        "small": _preset(6, 1200, 256, 400),
        "medium": _preset(8, 2000, 512, 1500),
        "paper": _preset(10, 4000, 1024, 2000, PAPER_PROPORTIONS),
    },
    measure=measure,
    claims=_claims,
    panels=(_errors_panel, _fraction_panel, _paired_panel),
    describe=_describe,
)
"""Training error against P for init scales 1 and 10, in the theory's
design (leverage selection; random selection beside it)."""
