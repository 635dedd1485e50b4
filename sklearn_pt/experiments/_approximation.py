"""Reproduction: the best approximation error E(P) of a partially
leverage-sampled network, the quantity the bound is about (He, Lao, Lu,
Zhang, 2026).

No gradient training: for a target in the biased-ReLU RKHS, the width-``m``
network's hidden layer is drawn as
:class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` draws it with
``trainable_selection="leverage"`` (``round(P m)`` neurons sampled by ridge
leverage scores from a pool of initial neurons, the others frozen at the
initialisation), and only the readout is solved, in closed form. Its held-out
error is the best the network can do with these neurons, which the
approximation bound ``C (kappa_P log(m / delta) / m) ** alpha`` bounds.

Per seed (one task: its target, data and networks serve every init scale,
proportion and width, common random numbers), one row per (init scale, P,
width): ``E(P)`` at ``width`` for every P of the grid, ``E(0)`` at every
width of the decay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._torch_bridge import make_generator, row_chunks, solve_ridge
from ..kernels import BiasedReLUKernel, worst_case_approximation_error
from ..kernels._biased_relu import _biased_relu_pairs
from ..kernels._leverage import ReLUFeatures
from ..neural_network._partial import _leverage_order, leading_candidates
from ..theory import (
    biased_relu_alpha,
    biased_relu_kappa0,
    bound_shape,
    fit_mismatch_ratio,
    kolmogorov_width,
    zonal_eigenvalues,
)
from ._claims import Claim, IntervalTest, SignTest
from ._runner import Experiment
from ._stats import (
    HOLDS,
    NEITHER,
    bootstrap_interval,
    captured_fraction,
    geometric_mean,
    seed_curves,
    small_proportions,
)

__all__ = ["APPROXIMATION", "approximation_errors", "first_layers", "rkhs_target"]

REFERENCE = (
    'He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully '
    'Trainable Networks"; Bach (2017), "On the equivalence between kernel '
    'quadrature rules and random feature expansions", JMLR 18.'
)
TARGET_BIAS_RANGE = 1.0
"""Bias range of the target's kernel: the limit kernel of the SPEC."""
_INSIDE = 1.0 - 1e-12
"""Factor that keeps unit vectors inside the unit ball for the kernel: a
normalised row can have norm ``1 + 1 ulp``, which would send its pairs to the
kernel's (much slower) quadrature for ``|x| > init_scale``; the target moves
by about ``1e-12`` of itself."""
DRAW_STRIDE = 1_000_003
"""Network seed of draw ``k`` of seed ``s``: ``s + k * DRAW_STRIDE`` (draw 0
is the seed itself)."""
MIN_WIDTHS = 3
"""Widths inside the bound's informative regime needed to fit its exponent."""
SMALL_P = 0.2
"""The largest P of the "fast fall at small P" claim's range."""
SHARPER_P = 0.1
"""The largest P of the "sharper for the larger init scale" claim's range."""
PROPORTIONS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]


def _preset(width, widths, seeds, proportions=PROPORTIONS, **sizes):
    """The sizes of a scale. A width-``m`` network selects its neurons on
    ``select_per_width * m`` points, fits its readout on ``fit_per_width *
    m`` (a superset) and is scored on ``n_test`` held-out points. At
    ``width`` (the curve in P), ``n_draws`` networks are drawn per (seed,
    init scale, P) and their errors summarised by the geometric mean (one
    draw at the other widths): one draw of 128 random features spreads by 2x
    to 10x between draws, which one draw per seed cannot tell from the
    selection's effect (init_scale 1, width 128, 6 seeds: fully
    leverage-selected below random features in 4 of 6 seeds with 4 draws,
    6 of 6 with 8). ``ridge`` is the readout's relative penalty
    (:func:`approximation_errors`), ``leverage_reg`` the estimator's. The
    worst case over the RKHS ball (:func:`worst_case_errors`) is computed
    where the readout's points number at most ``worst_case_points`` (their
    Gram matrix is held: 128 MiB at 4096)."""
    return {
        "seeds": seeds,
        "grid": [{}],  # one cell: per seed, every fit shares its data
        "width": width,
        "widths": widths,
        "proportions": proportions,
        "init_scales": [1.0, 10.0],
        "n_features": 5,
        "select_per_width": 4,
        "fit_per_width": 16,
        "n_test": 4000,
        "n_centres": 200,
        "delta": 0.05,
        "ridge": 1e-10,
        "leverage_reg": "auto",
        "pool_per_width": 10,
        "n_draws": 8,
        "worst_case_points": 4096,
        **sizes,
    }


def _sphere(n_samples: int, n_features: int, rng: np.random.Generator) -> np.ndarray:
    X = rng.normal(size=(n_samples, n_features))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@dataclass(frozen=True)
class RKHSTarget:
    """A function of the biased-ReLU RKHS: ``f(x) = sum_i coef_i k(x, z_i)``.

    ``k`` is :class:`~sklearn_pt.kernels.BiasedReLUKernel` with
    ``init_scale=1`` (the limit kernel of the networks' features at
    ``init_scale=1``). Call it on inputs on the unit sphere.

    Parameters
    ----------
    centres : ndarray of shape (n_centres, n_features)
        The points ``z_i``, on the unit sphere.
    coef : ndarray of shape (n_centres,)
        The coefficients ``c_i``.
    """

    centres: np.ndarray
    coef: np.ndarray

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """``f(X)``, one value per row of ``X``."""
        kernel = BiasedReLUKernel(init_scale=TARGET_BIAS_RANGE)
        return kernel(X * _INSIDE, self.centres * _INSIDE) @ self.coef

    def rkhs_norm(self) -> float:
        """``sqrt(c^T K c)``, ``K`` the kernel matrix of the centres."""
        kernel = BiasedReLUKernel(init_scale=TARGET_BIAS_RANGE)
        gram = kernel(self.centres * _INSIDE)
        return float(np.sqrt(self.coef @ gram @ self.coef))


def rkhs_target(n_centres: int, n_features: int, random_state: int) -> RKHSTarget:
    """A random target of unit norm in the biased-ReLU RKHS.

    Centres uniform on the unit sphere of ``R^n_features``, coefficients
    standard normal, then scaled so that ``c^T K c = 1``: the target lies on
    the unit sphere of the RKHS, the ball over which the bound holds.

    Examples
    --------
    >>> from sklearn_pt.experiments._approximation import rkhs_target
    >>> target = rkhs_target(10, 5, random_state=0)
    >>> round(target.rkhs_norm(), 12)
    1.0
    """
    rng = np.random.default_rng(random_state)
    centres = _sphere(n_centres, n_features, rng)
    coef = rng.normal(size=n_centres)
    return RKHSTarget(centres, coef / RKHSTarget(centres, coef).rkhs_norm())


def first_layers(
    X_select: torch.Tensor,
    *,
    width: int,
    trainable_proportions: Sequence[float],
    init_scale: float,
    seed: int,
    leverage_reg: float | str = "auto",
    pool_size: int | None = None,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The first layers that the estimator builds at several ``P``, at once.

    :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor` with
    ``trainable_selection="leverage"`` draws, from its generator, the
    initialisation, then a pool (default ``10 * width`` neurons) and a
    leverage-sampling order of it on ``X_select``, and takes the first
    ``round(P m)`` of that order; none of these draws depends on ``P``. So
    one draw serves every ``P``: the layer at each ``P`` equals the
    estimator's (``_build_module``) for the same seed.

    Returns
    -------
    list of (weight, bias)
        One per entry of ``trainable_proportions``.
    """
    counts = [round(p * width) for p in trainable_proportions]
    drawn = _leverage_order(
        X_select,
        width,
        max(counts),
        init_scale=init_scale,
        pool_size=pool_size or 10 * width,
        reg=leverage_reg,
        generator=make_generator(seed),
    )
    layers = [leading_candidates(*drawn, k) for k in counts]
    return [(w.to(X_select.device), b.to(X_select.device)) for w, b in layers]


def approximation_errors(layers, train, test, *, ridge: float = 1e-10) -> list:
    """Best error of a network at each of its first layers: no hidden neuron
    is trained, only the readout is solved on ``train = (X, y)`` by
    :func:`~sklearn_pt._torch_bridge.solve_ridge`, with the penalty ``ridge *
    ||Phi||_F^2 / m`` (relative to the mean squared norm of a feature
    column), and scored on ``test = (X, y)`` (float64 tensors, ``y`` of
    shape ``(n, 1)``).

    Returns
    -------
    list of (test_mse, train_mse)
        One per ``(weight, bias)`` of ``layers`` (:func:`first_layers`).

    Notes
    -----
    The penalty ``1e-10`` times the mean eigenvalue of the features' Gram
    matrix only acts on numerically null directions (dead neurons, and the
    ``d + 1``-dimensional span shared by every always-on neuron of a large
    ``init_scale``), where it keeps the Cholesky solve stable; elsewhere the
    fit is the unpenalised best fit. With a noiseless target its held-out
    error estimates the best ``L2`` error over the readouts of these
    neurons once the readout has many more points than features: at
    ``m = 128``, fitting on ``4 m`` points inflates it by up to 1.8x at
    ``init_scale=1``, ``16 m`` points are within 4% of ``32 m``. Hence the
    experiment's split: neurons selected on ``4 m`` points, the readout
    fitted on ``16 m``.
    """
    out = []
    with torch.no_grad():
        for weight, bias in layers:
            (X, y), (X_test, y_test) = train, test
            features = ReLUFeatures(X, weight, bias)  # never held whole
            chunks = row_chunks(features)
            alpha = (
                ridge * sum(float(c.square().sum()) for _, c in chunks) / len(weight)
            )
            coef, intercept = solve_ridge(features, y, alpha)
            train_mse = sum(
                (chunk @ coef.T + intercept - y[rows]).square().sum()
                for rows, chunk in row_chunks(features)
            ) / len(y)
            test_fit = torch.relu(X_test @ weight.T + bias) @ coef.T + intercept
            test_mse = (test_fit - y_test).square().mean()
            out.append((float(test_mse), float(train_mse)))
    return out


def worst_case_errors(layers, X: torch.Tensor, gram: np.ndarray) -> list[float]:
    """Per ``(weight, bias)`` of ``layers``, the worst case over the target
    RKHS's unit ball of the best approximation by its neurons on the points
    ``X`` (:func:`~sklearn_pt.kernels.worst_case_approximation_error`, ``gram``
    the target kernel's Gram matrix on ``X``): the quantity the bound is
    about, where :func:`approximation_errors` measures one target."""
    with torch.no_grad():
        return [
            worst_case_approximation_error(
                ReLUFeatures(X, weight, bias).materialize(), gram
            )
            for weight, bias in layers
        ]


def informative_widths(
    widths: Sequence[int], *, d: int, init_scale: float, delta: float
) -> tuple[int, ...]:
    """The widths at which the bound at ``P = 0`` is informative:
    ``kappa_0* log(m / delta) / m <= 1`` (below them the bound exceeds its
    constant and :func:`~sklearn_pt.theory.approximation_bound` warns).

    Examples
    --------
    >>> from sklearn_pt.experiments._approximation import informative_widths
    >>> informative_widths([64, 512, 1024, 2048], d=5, init_scale=10.0, delta=0.05)
    (1024, 2048)
    """
    kappa0 = biased_relu_kappa0(d, init_scale)
    return tuple(int(m) for m in widths if kappa0 * np.log(m / delta) / m <= 1.0)


def measure(config: dict, seed: int) -> list[dict]:
    """Every (init scale, P, width) of one seed: the curve in P at
    ``width`` and P = 0 at every width of the decay. The seed draws the
    target, the points and (with :data:`DRAW_STRIDE`) the networks."""
    d, width, taus = config["n_features"], config["width"], config["init_scales"]
    cells = {(t, float(p), width) for t in taus for p in config["proportions"]}
    cells = sorted(cells | {(t, 0.0, m) for t in taus for m in config["widths"]})
    rng = np.random.default_rng(seed)
    target = rkhs_target(config["n_centres"], d, rng.integers(2**32))
    n_max = config["fit_per_width"] * max(m for *_, m in cells)
    X_all, X_test = (_sphere(n, d, rng) for n in (n_max, config["n_test"]))

    def tensor(array):
        return torch.as_tensor(array, dtype=torch.float64, device=config["device"])

    y_all, y_test = tensor(target(X_all)[:, None]), tensor(target(X_test)[:, None])
    X_all, test = tensor(X_all), (tensor(X_test), y_test)
    variance = float(y_test.var(unbiased=False))
    rows, gram, gram_width = [], None, None
    # Width first: the init scales of a width share its Gram matrix (None
    # past worst_case_points), which is dropped at the next width.
    for m, tau in sorted({(m, tau) for tau, _, m in cells}):
        props = [p for t, p, w in cells if (t, w) == (tau, m)]  # from P = 0
        n, n_select = config["fit_per_width"] * m, config["select_per_width"] * m
        draws, errors = config["n_draws"] if m == width else 1, []
        train, ridge = (X_all[:n], y_all[:n]), config["ridge"]
        worst = [np.nan] * len(props)
        if m != gram_width:
            kernel = BiasedReLUKernel(init_scale=TARGET_BIAS_RANGE)
            inside = n <= config["worst_case_points"]
            gram_width, gram = m, kernel(X_all[:n].cpu().numpy()) if inside else None
        for k in range(draws):
            layers = first_layers(
                X_all[:n_select],
                width=m,
                trainable_proportions=props,
                init_scale=tau,
                seed=seed + k * DRAW_STRIDE,
                leverage_reg=config["leverage_reg"],
                pool_size=config["pool_per_width"] * m,
            )
            errors.append(approximation_errors(layers, train, test, ridge=ridge))
            if k == 0 and gram is not None:
                worst = worst_case_errors(layers, X_all[:n], gram)
        means = np.exp(np.log(errors).mean(axis=0))  # (proportions, 2)
        kappa0, alpha = biased_relu_kappa0(d, tau), biased_relu_alpha(d)
        for p, (test_mse, train_mse), worst_mse in zip(
            props, means, worst, strict=True
        ):
            shape = float(bound_shape(p, kappa0, alpha=alpha))
            row = dict(init_scale=tau, trainable_proportion=p, width=m)
            row |= dict(n_select=n_select, n_fit=n, n_trainable=round(p * m))
            row |= dict(test_mse=float(test_mse), train_mse=float(train_mse))
            row |= dict(target_variance=variance, error_ratio=test_mse / means[0][0])
            row |= dict(worst_case_mse=worst_mse)
            row |= dict(theory_shape=shape, n_features=d, delta=config["delta"])
            rows.append(row | dict(n_draws=draws))
    return rows


# ------------------------------------------------------------------ claims
WORST = "worst_case_mse"
"""The column of the worst case over the RKHS ball (NaN where not computed)."""


def _curves(table, value: str = "test_mse") -> dict:
    """Per init scale, ``value`` at the curve's width, ``(P, seed)``."""
    at = table[table.width == _curve_width(table)]
    return seed_curves(at, value, along="trainable_proportion", by="init_scale")


def _decays(table, value: str = "test_mse") -> dict:
    """Per init scale, ``value`` at P = 0, ``(width, seed)``, at the widths
    where it was measured, and the widths where the bound is informative."""
    d, delta = int(table.n_features.iloc[0]), float(table.delta.iloc[0])
    at = table[(table.trainable_proportion == 0) & table[value].notna()]
    decays = seed_curves(at, value, along="width", by="init_scale")
    return {
        tau: (e0, informative_widths(e0.index, d=d, init_scale=tau, delta=delta))
        for tau, e0 in decays.items()
    }


def _curve_width(table) -> int:
    return int(table.width[table.trainable_proportion > 0].max())


def _ratios(table, value: str = "test_mse") -> dict:
    """Per init scale, ``E(P)/E(0)`` of ``value`` at the curve's width,
    ``(P, seed)``."""
    return {tau: c / c.loc[0.0] for tau, c in _curves(table, value).items()}


def _captured(table) -> dict:
    """Per init scale, the share of each seed's drop captured at each P."""
    return {tau: c.apply(captured_fraction) for tau, c in _curves(table).items()}


def _bound_captured(proportions, d: int, tau: float) -> np.ndarray:
    """The bound shape's captured share at each P of a grid from 0 to 1
    (``kappa_1 = 1``, ``kappa_0*``, ``alpha = (d+2)/(d-1)``)."""
    kappa0, alpha = biased_relu_kappa0(d, tau), biased_relu_alpha(d)
    return captured_fraction(bound_shape(np.asarray(proportions), kappa0, alpha=alpha))


def _seed_bootstrap(rows: np.ndarray, statistic):
    """``statistic(rows)`` and its bootstrap interval, resampling whole rows
    (the seeds, paired across the grid: one target and data per seed)."""
    seeds = np.arange(len(rows), dtype=float)
    return bootstrap_interval([seeds], lambda index: statistic(rows[index.astype(int)]))


def _ratio_fit(ratios: np.ndarray, proportions, alpha: float) -> float:
    """The mismatch ratio fitted to every seed's ``E(P)/E(0)`` (rows)."""
    grid = np.tile(np.asarray(proportions, dtype=float), len(ratios))
    return fit_mismatch_ratio(grid, np.ravel(ratios), alpha=alpha)[0]


def _exponent(widths, log_errors: np.ndarray) -> float:
    """``beta`` of ``E ~ m^-beta`` fitted to the mean log error (rows: seeds)."""
    return float(-np.polyfit(np.log(widths), np.mean(log_errors, axis=0), 1)[0])


FLOOR_DEGREE = 30
"""The last harmonic degree of the target kernel's eigenvalues: its
multiplicities sum past 10^5 at d = 5, more than any width here."""


def kolmogorov_floor(widths, d: int) -> np.ndarray:
    """The best approximation of the target RKHS's unit ball by any ``m``
    functions, for each ``m`` of ``widths``: the ``(m+1)``-th Mercer
    eigenvalue of the target kernel on the sphere
    (:func:`~sklearn_pt.theory.kolmogorov_width` of
    :func:`~sklearn_pt.theory.zonal_eigenvalues`), the floor of the worst
    case of ``m`` neurons."""

    def profile(t):
        ones = np.ones_like(t)
        return _biased_relu_pairs(ones, ones, t, d=d, tau=TARGET_BIAS_RANGE)[0]

    eigenvalues, counts = zonal_eigenvalues(profile, d, FLOOR_DEGREE)
    return kolmogorov_width(eigenvalues, counts, widths)


def _worst_widths(table) -> list[int]:
    """The widths where the worst case of E(0) was measured."""
    at = table[(table.trainable_proportion == 0) & table[WORST].notna()]
    return sorted(int(m) for m in at.width.unique())


def _floor_exponent(table) -> tuple[float, list[int]]:
    """The floor's exponent fitted over :func:`_worst_widths`, and those
    widths."""
    widths, d = _worst_widths(table), int(table.n_features.iloc[0])
    return _exponent(widths, np.log(kolmogorov_floor(widths, d))[None]), widths


def _decay_estimates(table, value: str = "test_mse") -> dict:
    """Per init scale (its widths in the label), the exponent of ``value``
    over the widths where the bound is informative and its interval; None
    with fewer than :data:`MIN_WIDTHS` of them."""
    out = {}
    for tau, (decay, inside) in _decays(table, value).items():
        if len(inside) < MIN_WIDTHS:
            out[f"init_scale {tau:g} (of m = {list(decay.index)})"] = None
            continue
        logs = np.log(decay.loc[list(inside)].to_numpy()).T
        label = f"init_scale {tau:g} (m = {inside[0]}..{inside[-1]})"
        out[label] = _seed_bootstrap(logs, lambda rows, m=inside: _exponent(m, rows))
    return out


TOO_FEW = f"fewer than {MIN_WIDTHS} widths where the bound is informative"


class _InformativeTest(IntervalTest):
    """:class:`IntervalTest`, "neither" where too few widths are informative."""

    def __call__(self, values, point):
        if values is None:
            return NEITHER, TOO_FEW
        return super().__call__(values, point)


def _unless_all_hold(text: str):
    return lambda table, outcomes: text * (set(outcomes.values()) != {HOLDS})


def _claims(table) -> list[Claim]:
    d = int(table.n_features.iloc[0])
    alpha, taus = biased_relu_alpha(d), sorted(table.init_scale.unique())
    grid = sorted(_curves(table)[taus[0]].index)
    width = _curve_width(table)
    kappa0 = {tau: biased_relu_kappa0(d, tau) for tau in taus}

    def beats(tau):
        return Claim(
            "leverage-selected neurons beat random features, E(P) < E(0) for "
            f"every P in (0, 1] (init_scale {tau:g}, width {width})",
            lambda t: {p: -np.log(_ratios(t)[tau].loc[p]) for p in grid if p > 0},
            SignTest(),
            paper=f"kappa_1 = 1 < kappa_0* = {kappa0[tau]:.3g}, so the bound "
            "falls at every P",
            label="P={:g}",
            test_text="of log(E(0)/E(P)) at each P",
            measured="mean log(E(0)/E(P))",
        )

    def fast(tau):
        small = small_proportions(grid, SMALL_P)
        bound = _bound_captured(grid, d, tau)
        return Claim(
            "E(P) falls fast for small P, then saturates: the share of the drop "
            f"E(0) - E(1) captured at P exceeds P for P <= {SMALL_P:g} "
            f"(init_scale {tau:g})",
            lambda t: {p: _captured(t)[tau].loc[p] for p in small},
            IntervalTest(above=lambda p: p, of="the mean captured share"),
            paper="the bound's shape captures "
            + ", ".join(f"{bound[grid.index(p)]:.3f} at P={p:g}" for p in small),
            label="P={:g}",
            test_text="P",
            reason=_unless_all_hold(FAST_REASON),
        )

    low, high = taus[0], taus[-1]
    sharp = small_proportions(grid, SHARPER_P)
    bounds = {tau: _bound_captured(grid, d, tau)[grid.index(sharp[-1])] for tau in taus}

    def sharper(t):
        captured = _captured(t)
        return {p: captured[high].loc[p] - captured[low].loc[p] for p in sharp}

    def ratios(t, value="test_mse"):
        return {
            tau: _seed_bootstrap(
                r.T.to_numpy(), lambda rows, p=list(r.index): _ratio_fit(rows, p, alpha)
            )
            for tau, r in _ratios(t, value).items()
        }

    floor_exponent, floor_widths = _floor_exponent(table)
    kappa_paper = "kappa_0* = 4 sqrt(2) tau (d+1)/d = " + ", ".join(
        f"{kappa0[t]:.3g} (init_scale {t:g})" for t in taus
    )

    def ratio_claim(subject: str, value: str, reason: str) -> Claim:
        return Claim(
            f"the mismatch ratio kappa_0/kappa_1 fitted to {subject} is the "
            "bound's kappa_0*",
            lambda t: ratios(t, value),
            IntervalTest(
                contains=kappa0.get,
                of=f"the ratio refitted with alpha = {alpha:.3g} (seeds resampled)",
            ),
            paper=kappa_paper,
            label="init_scale {:g}",
            test_text="kappa_0*",
            reason=_unless_all_hold(reason),
        )

    return [
        *(claim(tau) for tau in reversed(taus) for claim in (beats, fast)),
        Claim(
            f"the fall is sharper for the larger init scale ({high:g} vs "
            f"{low:g}): it captures more of its drop at every P <= {SHARPER_P:g}",
            sharper,
            SignTest(),
            paper=f"the bound's shape captures {bounds[high]:.3f} vs "
            f"{bounds[low]:.3f} at P={sharp[-1]:g}",
            label="P={:g}",
            test_text="of the difference in captured share at each P",
            measured=f"captured share, init_scale {high:g} minus {low:g}",
        ),
        ratio_claim("E(P)/E(0)", "test_mse", RATIO_REASON),
        ratio_claim(
            "the worst case over the RKHS ball's E(P)/E(0)", WORST, WORST_RATIO_REASON
        ),
        Claim(
            "E(0) decays like m^-alpha where the bound is informative",
            _decay_estimates,
            _InformativeTest(
                contains=alpha,
                of="the exponent fitted to the geometric-mean E(0) (seeds resampled)",
            ),
            paper=f"alpha = (d+2)/(d-1) = {alpha:.3g} (d = {d})",
            reason=_unless_all_hold(DECAY_REASON.format(2 * alpha - 1)),
        ),
        Claim(
            "the worst case over the RKHS ball of E(0) decays like m^-alpha where "
            "the bound is informative",
            lambda t: _decay_estimates(t, WORST),
            _InformativeTest(
                contains=alpha,
                of="the exponent fitted to the geometric-mean worst case (seeds "
                "resampled)",
            ),
            paper=f"alpha = (d+2)/(d-1) = {alpha:.3g} (d = {d}); the bound is "
            f"this supremum's. At these widths (m = {floor_widths[0]}.."
            f"{floor_widths[-1]}) the best m functions of all (the ball's "
            f"Kolmogorov width, Funk-Hecke) fall like m^-{floor_exponent:.3g}",
            reason=_unless_all_hold(WORST_DECAY_REASON),
        ),
    ]


# ------------------------------------------------------------ figure, text
def _geometric(curve) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the geometric mean over seeds and the geometric sd factor."""
    logs = np.log(curve.to_numpy())
    return np.exp(logs.mean(axis=1)), np.exp(logs.std(axis=1))


def _curve_panel(ax, table) -> None:
    d, fine = int(table.n_features.iloc[0]), np.linspace(0, 1, 401)
    alpha = biased_relu_alpha(d)
    for k, (tau, ratios) in enumerate(_ratios(table).items()):
        color = f"C{k}"
        (mean, spread), x = _geometric(ratios), ratios.index
        ax.plot(x, mean, "o-", color=color, label=f"init_scale {tau:g}")
        ax.fill_between(x, mean / spread, mean * spread, color=color, alpha=0.2)
        fitted = _ratio_fit(ratios.T.to_numpy(), x, alpha)
        for ratio, style, name in (
            (biased_relu_kappa0(d, tau), ":", "bound's shape, kappa_0*"),
            (fitted, "--", "fit: kappa_0/kappa_1"),
        ):
            shape = bound_shape(fine, ratio, alpha=alpha)
            ax.plot(fine, shape, style, color=color, label=f"{name} = {ratio:.3g}")
    ax.set_xscale("symlog", linthresh=0.02)
    ax.set_yscale("log")
    ax.set(
        xlim=(0, 1.05),
        xlabel="trainable proportion P (leverage-sampled)",
        ylabel="E(P) / E(0) (geometric mean, band: geometric sd)",
        title="Best approximation error vs P",
    )
    ax.legend(fontsize=7, loc="lower left")


def _decay_panel(ax, table) -> None:
    alpha = biased_relu_alpha(int(table.n_features.iloc[0]))
    for k, (tau, (decay, inside)) in enumerate(_decays(table).items()):
        widths, (mean, spread) = decay.index.to_numpy(dtype=float), _geometric(decay)
        beta, color = _exponent(widths, np.log(decay.to_numpy()).T), f"C{k}"
        label = f"init_scale {tau:g}: m^-{beta:.2f}"
        band = [mean - mean / spread, mean * spread - mean]
        ax.errorbar(widths, mean, band, fmt="o-", color=color, capsize=3, label=label)
        out = ~np.isin(widths, inside)
        ax.plot(widths[out], mean[out], "o", color=color, mfc="white")
        ax.plot(widths, mean[0] * (widths / widths[0]) ** -alpha, ":", color=color)
    for k, (tau, (worst, _)) in enumerate(_decays(table, WORST).items()):
        widths, (mean, _) = worst.index.to_numpy(dtype=float), _geometric(worst)
        ax.plot(widths, mean, "s--", color=f"C{k}", ms=4, label=f"worst case, {tau:g}")
    if widths := _worst_widths(table):
        floor = kolmogorov_floor(widths, int(table.n_features.iloc[0]))
        ax.plot(widths, floor, "k-.", label="best m functions (Kolmogorov width)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set(
        xlabel="width m",
        ylabel="E(0): held-out MSE of a unit-norm target;\n"
        "squares: worst case over the RKHS ball",
        title=f"P = 0 (dotted: m^-{alpha:.3g}; hollow: bound > C)",
    )
    ax.legend(fontsize=7, loc="lower left")


def _describe(table) -> str:
    d, width = int(table.n_features.iloc[0]), _curve_width(table)
    alpha, exponents, notes = biased_relu_alpha(d), {}, {}
    for tau, (e0, inside) in _decays(table).items():
        widths = list(inside) if len(inside) >= MIN_WIDTHS else list(e0.index)
        exponents[tau] = _exponent(widths, np.log(e0.loc[widths].to_numpy()).T)
        notes[tau] = "" if width in inside else f"; bound > C at width {width}"
    measured = exponents[min(exponents)]
    points = int(table.n_fit[table[WORST].notna()].max())
    lines = [
        DESIGN.format(width=width, draws=int(table.n_draws.max()), points=points),
        "",
    ]
    for tau, ratios in _ratios(table).items():
        ratios = ratios.T
        fits = [
            _ratio_fit(ratios.to_numpy(), ratios.columns, a) for a in (alpha, measured)
        ]
        lines.append(
            f"- init_scale {tau:g}: E(1)/E(0) {geometric_mean(ratios[1.0]):.3g} "
            f"(geometric mean); E(0) ~ m^-{exponents[tau]:.3g}; kappa_0/kappa_1 "
            f"fitted {fits[0]:.3g} (alpha {alpha:.3g}), {fits[1]:.3g} (the "
            f"measured exponent {measured:.3g}); kappa_0* "
            f"{biased_relu_kappa0(d, tau):.3g}{notes[tau]}"
        )
    for tau, (worst, _) in _decays(table, WORST).items():
        floor = kolmogorov_floor(list(worst.index), d)
        over = np.exp(np.log(worst.to_numpy()).mean(axis=1)) / floor
        lines.append(
            f"- init_scale {tau:g}: worst case of E(0) over the RKHS ball, over "
            "the best m functions' (geometric mean): "
            + ", ".join(
                f"{r:.3g} (m = {m})" for m, r in zip(worst.index, over, strict=True)
            )
        )
    return "\n".join(lines)


FAST_REASON = "Where the interval contains P no faster than linear fall is shown."
RATIO_REASON = (
    "kappa_0* is a worst case over the RKHS ball: a smooth target and the "
    "leverage density at a finite width use much less of the mismatch."
)
DECAY_REASON = (
    "The bound, a supremum over the RKHS ball, decays like m^-alpha; a target "
    "K c with standard normal c is smoother (truncation leaves m^(1 - 2 "
    "alpha), exponent {:.3g}); widths where the bound > C are left out."
)
WORST_RATIO_REASON = (
    "The worst case is over the whole ball, as the bound's; kappa_0* is also "
    "a worst case over the inputs' density, which the sphere's uniform "
    "density does not reach."
)
WORST_DECAY_REASON = (
    "The worst case is computed where the readout is fitted on at most "
    "worst_case_points points (its Gram matrix is held); widths where the "
    "bound > C are left out."
)
DESIGN = (
    "Readout in closed form, no gradient training; target of unit RKHS norm; "
    "neurons selected on 4 m points, readout fitted on 16 m; E(P) at width "
    "{width} is the geometric mean of {draws} network draws per seed; the "
    "exponents are fitted where the bound is informative (all widths if < 3). "
    "The worst case over the target RKHS's unit ball (the bound's quantity) "
    "is computed on the readout's points for the first draw, where they "
    "number at most {points}."
)


APPROXIMATION = Experiment(
    name="partial-approximation",
    title="Partially trainable networks: best approximation error vs the "
    "bound's shape in P and m",
    reference=REFERENCE,
    presets={
        "tiny": _preset(
            16, [16, 32], 2, [0.0, 0.1, 1.0], n_test=400, n_centres=20, n_draws=2
        ),
        "small": _preset(128, [64, 128, 256, 512], 6),
        "medium": _preset(256, [64, 128, 256, 512, 1024, 2048], 6),
        "paper": _preset(1024, [64, 128, 256, 512, 1024, 2048, 4096], 10),
    },
    measure=measure,
    claims=_claims,
    panels=(_curve_panel, _decay_panel),
    describe=_describe,
)
"""Best approximation error E(P) against the bound's shape in P (width
``width``) and in m (``E(0)`` over ``widths``), for init scales 1 and 10."""
