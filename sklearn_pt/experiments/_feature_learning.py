"""Reproduction: the feature-learning threshold of first-layer GD on phase
retrieval, measured the way Montanari and Wang (2026) define it (the
Hessian's negative outlier at the end of the first phase) and by the success
rate, over d, width and initialisation, beside the spectral methods.

One row per fit (cell: ``method``, ``init``, ``width``, ``d``, ``delta``;
then ``seed``). GD rows: ``overlap``/``success`` at the end of training;
``test_loss_ratio`` (test MSE over the trivial one); ``plateau``, the GD
steps until the test loss halves (inf: never); ``first_phase_step``,
``first_phase_overlap``, where the rule of :func:`first_phase_end` fires on
the run's train loss (NaN: never) and W's overlap there; ``hessian_step``,
where it fires in the run with theta*'s component held at 0
(:class:`HardDirectionProjection`), at whose weights ``outlier_eigenvalue``,
``outlier_overlap`` and ``bulk_edge`` are read off the Hessian
(:func:`pick_outlier`) and ``outlier`` says whether the outlier is found
(:func:`outlier_found`). Spectral rows (``init`` "-", ``width`` 0) carry
``overlap``, ``success`` and the squared-overlap limit of their
preprocessing (``squared_overlap_limit``).
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Sequence
from functools import partial

import numpy as np
import torch
from scipy.sparse.linalg import ArpackNoConvergence
from sklearn.base import clone

from .._training import Callback, run_stacked
from ..datasets import make_phase_retrieval
from ..decomposition import SpectralEstimator
from ..exceptions import DivergenceError
from ..model_selection import rate_crossing
from ..model_selection._sample_ratio import held_out_loss_ratio
from ..neural_network import FirstLayerGDRegressor
from ..spectral import hessian_spectrum
from ..theory import spectral_overlap, spectral_ratio_for_overlap, spectral_threshold
from ._claims import Claim, IntervalTest, SignTest
from ._runner import Experiment
from ._stats import HOLDS, NEITHER, OPPOSITE, Estimate, bootstrap_interval, seed_curves

__all__ = ["FEATURE_LEARNING", "first_phase_end", "measure", "step_budget"]

REFERENCE = (
    'Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural '
    'Networks"; Luo, Alghamdi, Lu (2019), "Optimal spectral initialization for '
    'signal recovery with applications to phase retrieval".'
)
PAPER_THRESHOLDS = {"quadratic": 3.6, "GeLU": 6.0, "spectral": 0.5}
"""Thresholds of noiseless phase retrieval reported by the paper: ``delta_NN``
of first-layer GD and ``delta_alg`` of the optimal spectral method."""
PAPER_CONDITIONS = (
    "d -> infinity at fixed width m, weak recovery (overlap bounded away from "
    "0), GD run to convergence; the width behind 3.6 / 6.0 is not stated in the "
    "sources here, and delta_alg = 1/2 is where the spectral overlap becomes "
    "positive, not where it exceeds 0.5"
)
"""What the paper's values hold under, quoted beside every comparison."""
LEVEL = 0.5
"""The rate (of successes, of Hessian outliers) whose crossing is quoted."""
SUCCESS_OVERLAP = 0.5
"""Weak recovery: the best neuron's |cosine| with theta* above it."""
TEST_LOSS_FRACTION = 0.5
"""The test-loss criterion: test MSE below this fraction of the trivial one."""
FIRST_PHASE_WINDOW = 10
FIRST_PHASE_DROP = 0.05
"""The end of the first phase (:func:`first_phase_end`): the first GD step
``t`` at which the training loss has fallen by less than ``FIRST_PHASE_DROP``
(relative) over the last ``FIRST_PHASE_WINDOW`` steps."""
CONVERGED = 1e-10
"""A training loss at or below this fraction of its initial value has fitted
the data (to about 5 digits of ``y``): the first-phase rule does not fire
there, where a float32 loss stalls at its rounding floor (about 1e-13 of the
initial loss) while a float64 one still falls."""
HESSIAN_OVERLAP = 0.5
"""The outlier's eigenvector must overlap theta* by more than this
(:func:`~sklearn_pt.metrics.eigenvector_overlap`, about ``d ** -1/2`` for a
random direction); see :func:`outlier_found`."""
HESSIAN_SEPARATION = 0.35
"""The outlier's eigenvalue must lie below the bulk edge by more than
:func:`separation_margin` ``|bulk edge|``: this fraction at d = 100,
shrinking like ``(d / 100) ** -EDGE_EXPONENT`` (:func:`outlier_found`), so
that a bulk eigenvalue sticks out that far in about 1 spectrum of 20 at every
d (the measurement: :ref:`defaults_feature_learning_hessian`)."""
EDGE_EXPONENT = 2 / 3
"""The bulk edge's fluctuations shrink like ``N ** -2/3`` (Tracy-Widom
scaling at a soft edge; here N = m d at fixed m), and so does the margin
of :func:`separation_margin`."""
SEPARATION_REFERENCE_D = 100
OUTLIER_RULE = (
    f"eigenvalue < 0, eigenvector overlap with theta* > {HESSIAN_OVERLAP:g}, "
    f"and below the bulk edge by more than {HESSIAN_SEPARATION:g} "
    f"(d/{SEPARATION_REFERENCE_D})^-2/3 |bulk edge|"
)
"""The rule of :func:`outlier_found` in words, as the verdicts and the
summary state it."""
HESSIAN_TOL = 1e-8
"""Lanczos accuracy of the Hessian eigenpairs, relative to ``||H||``
(:func:`~sklearn_pt.spectral.hessian_spectrum`): tighter tolerances move
the columns far less than the float32 GD runs do
(:ref:`defaults_feature_learning_hessian`)."""
LANCZOS_RESTARTS = 0.05
"""Lanczos restarts allowed per trained parameter before the Hessian's
eigenpairs are computed densely instead (``scipy.linalg.eigh``, exact): a
cluster of near-degenerate bottom eigenvalues can keep ARPACK from reaching
:data:`HESSIAN_TOL` at all, and 0.05 restarts per parameter (1 to 1.5
products each) costs about what the dense Hessian does
(:ref:`defaults_feature_learning_hessian`)."""
PLATEAU_FRACTION = 0.5
"""Grokking: the plateau lasts until the test loss falls below this fraction
of its value at initialisation."""
EXPONENTS = (1 / 3, 1 / 2, 1.0)
"""Finite-size exponents nu of the fits ``crossing(d) = c_inf + b d^-nu``;
1/2 is quoted, the others bound the model uncertainty."""
QUOTED_EXPONENT = 0.5
INFORMATIVE_WIDTH = 0.5
"""An extrapolation's interval can reproduce the paper's value only when it
is at most this fraction of the value wide (else the data cannot tell)."""
ACTIVATIONS = {"quadratic": "quadratic", "GeLU": "gelu"}
STEP_RULES = {"quadratic": 0.0375, "GeLU": 0.25}
"""Step size per unit width (FirstLayerGDRegressor: about 0.04 * width is
stable for the quadratic activation, 0.25 * width for GeLU)."""
SPECTRAL = {"spectral": "optimal", "spectral max-overlap": "max-overlap"}
"""The spectral baselines: Mondelli--Montanari's preprocessing (optimal for
the weak-recovery threshold, delta_alg = 1/2) and Luo--Alghamdi--Lu's
``1 - 1/y`` (the largest overlap at every delta)."""
GD_DTYPE = "float32"
"""Precision of the GD runs (the Hessian is taken in float64 at their
weights, :func:`_hessian_outlier`): float32 halves the bytes of the
products with the data, which hold a step's time, and leaves every verdict
as float64 gives it (:ref:`defaults_feature_learning_dtype`)."""
SPECTRAL_SLACK = 0.05
"""Finite-size bias allowed between the spectral methods' mean squared
overlap and its d -> inf limit, on top of the bootstrap interval (the bias
is at most 0.010 at d = 2000, tests/theory/test_phase_retrieval.py, and
grows as d falls)."""


def step_budget(base_iter: int, d: int) -> int:
    """GD steps at dimension ``d``: ``base_iter`` at d = 100, growing like
    log d (the escape from the first phase takes about log d steps).

    Examples
    --------
    >>> from sklearn_pt.experiments._feature_learning import step_budget
    >>> step_budget(500, 100), step_budget(500, 1000)
    (500, 750)
    """
    return round(base_iter * math.log(d) / math.log(100))


def first_phase_end(
    losses: Sequence[float],
    *,
    window: int = FIRST_PHASE_WINDOW,
    drop: float = FIRST_PHASE_DROP,
    converged: float = 0.0,
) -> int | None:
    """The end of GD's first phase: the first step ``t`` at which the
    training loss has fallen by less than ``drop`` (relative) over the last
    ``window`` steps, ``losses[t] >= (1 - drop) * losses[t - window]``,
    while it is above ``converged * losses[0]``.

    The rule of this experiment (Montanari and Wang's first phase ends when
    the easy directions are learned and the gradient is small: the loss
    stops falling fast). When the loss never slows down that much, there is
    no first-phase end (None). A loss that has fallen to ``converged``
    times its initial value has fitted the data, and its stalling there is
    the arithmetic's floor, not a plateau: the rule does not fire on it.

    Parameters
    ----------
    losses : sequence of float
        ``losses[t]``: the training loss after ``t`` steps.
    window : int, default=10
    drop : float, default=0.05
    converged : float, default=0.0
        The fraction of the initial loss at or below which the rule does not
        fire (:data:`CONVERGED` in this experiment).

    Returns
    -------
    int or None
        The step ``t``, or None when the loss never slows down that much.

    Examples
    --------
    >>> from sklearn_pt.experiments._feature_learning import first_phase_end
    >>> losses = [1.0, 0.5, 0.25, 0.2, 0.19, 0.185, 0.18]
    >>> first_phase_end(losses, window=2, drop=0.2)  # 0.185 >= 0.8 * 0.2
    5
    >>> first_phase_end([1.0, 0.5, 0.25], window=1, drop=0.2) is None
    True
    >>> stalled = [1.0, 1e-3, 1e-12, 1e-12]  # at the floor of its arithmetic
    >>> first_phase_end(stalled, window=1, drop=0.2) == 3
    True
    >>> first_phase_end(stalled, window=1, drop=0.2, converged=1e-10) is None
    True
    """
    floor = converged * losses[0] if len(losses) else 0.0
    for t in range(window, len(losses)):
        if losses[t] > floor and losses[t] >= (1 - drop) * losses[t - window]:
            return t
    return None


class FirstPhaseSnapshot(Callback):
    """Training callback keeping the first-layer weights at the end of the
    first phase (the rule of :func:`first_phase_end`), for each of the
    loop's models (one network, or several stacked).

    The loop hands each hook the loss *before* the step it just took, so the
    callback keeps the previous step's weights and stores model ``k``'s when
    the rule fires on its loss. ``steps[k]`` stays None when it never fires;
    ``weights[k]`` is then its last weights (of the stacked module's shape:
    a stacked network's rows past its own width are padding).

    Parameters
    ----------
    window, drop : int, float
        The rule's window and relative drop.
    stop : bool, default=False
        Stop a model's training when the rule fires for it.
    """

    def __init__(self, *, window=FIRST_PHASE_WINDOW, drop=FIRST_PHASE_DROP, stop=False):
        self.window, self.drop, self.stop = window, drop, stop

    def _current(self) -> torch.Tensor:
        return self.module.weight.detach().clone()

    def on_train_begin(self, loop) -> None:
        self.module = loop.stepper.module
        self.losses = [[] for _ in range(loop.n_models)]
        self.steps, self.weights = [None] * loop.n_models, [None] * loop.n_models
        self._previous = self._now = self._current()

    def on_step_end(self, loop) -> None:
        self._previous, self._now = self._now, self._current()

    def on_iteration_end(self, loop, k, loss):
        self.losses[k].append(float(loss))  # the loss of the weights before
        tail = self.losses[k][-self.window - 1 :]  # the rule fires at its last step?
        fired = first_phase_end(tail, window=self.window, drop=self.drop)
        if self.steps[k] is None and fired is not None:
            self.steps[k], self.weights[k] = len(self.losses[k]) - 1, self._previous[k]
            if self.stop:
                return "end of the first phase"
        return None

    def on_train_end(self, loop) -> None:
        last = self._current()
        self.weights = [last[k] if w is None else w for k, w in enumerate(self.weights)]


class HardDirectionProjection(Callback):
    """Training callback holding the first-layer weights' component along
    the latent directions at 0 (before training and after every step), for
    every model of the loop (one network, or several stacked).

    GD then runs the first phase as it runs when ``d -> inf``, where the
    overlap with ``theta*`` stays ``O(d ** -1/2)`` until the escape: it
    learns the easy directions and stops at the point whose Hessian
    Montanari and Wang inspect, without the escape starting on the way
    (at ``d = 100 .. 400`` it starts during the first phase).
    """

    def __init__(self, directions):
        directions = np.asarray(directions, dtype=float).reshape(len(directions), -1)
        self.basis = torch.as_tensor(np.linalg.qr(directions)[0])

    def project(self, weight: torch.Tensor) -> None:
        """Remove the latent directions from the rows of ``weight``, in place."""
        basis = self.basis.to(weight)
        with torch.no_grad():
            weight -= (weight @ basis) @ basis.T

    def on_train_begin(self, loop) -> None:
        self.weight = loop.stepper.module.weight
        self.project(self.weight)

    def on_step_end(self, loop) -> None:
        self.project(self.weight)


def pick_outlier(eigenvalues, overlaps, width: int) -> tuple[float, float, float]:
    """The outlier candidate and the bulk edge of a Hessian's smallest
    eigenpairs.

    Among the ``width`` smallest eigenvalues (one theta* direction per
    neuron can be an outlier), the one whose eigenvector overlaps theta*
    most; the bulk edge is the ``width + 1``-th smallest eigenvalue.

    Parameters
    ----------
    eigenvalues : array-like of shape (k,)
        Ascending, ``k > width``.
    overlaps : array-like of shape (k,)
        Each eigenvector's overlap with theta*.
    width : int
        The network's width ``m``.

    Returns
    -------
    (eigenvalue, overlap, bulk_edge) : tuple of float

    Examples
    --------
    >>> from sklearn_pt.experiments._feature_learning import pick_outlier
    >>> pick_outlier([-3.0, -2.5, -1.0, -0.9], [0.2, 0.9, 0.1, 0.1], width=2)
    (-2.5, 0.9, -1.0)
    """
    eigenvalues, overlaps = np.asarray(eigenvalues, float), np.asarray(overlaps, float)
    if eigenvalues.size <= width:
        raise ValueError(
            f"pick_outlier needs width + 1 = {width + 1} eigenvalues (the bulk edge is "
            f"the last); got {eigenvalues.size}; ask hessian_spectrum for k = width + 1"
        )
    best = int(np.argmax(overlaps[:width]))
    return tuple(
        float(v) for v in (eigenvalues[best], overlaps[best], eigenvalues[width])
    )


def separation_margin(d):
    """How far below the bulk edge, in units of ``|bulk edge|``, an outlier
    must lie at dimension ``d``: ``HESSIAN_SEPARATION * (d / 100) **
    -EDGE_EXPONENT``, about the 95th percentile of the bulk's own first gap
    at that ``d`` (measured in :data:`HESSIAN_SEPARATION`). It vanishes as
    ``d -> inf``, where any eigenvalue out of the bulk is an outlier.

    Parameters
    ----------
    d : int or array-like
        The input dimension.

    Returns
    -------
    float or ndarray
        The margin at each ``d``, a fraction of ``|bulk edge|``.

    Examples
    --------
    >>> from sklearn_pt.experiments._feature_learning import separation_margin
    >>> [round(float(separation_margin(d)), 3) for d in (100, 200, 400)]
    [0.35, 0.22, 0.139]
    """
    ratio = np.asarray(d, dtype=float) / SEPARATION_REFERENCE_D
    return HESSIAN_SEPARATION * ratio**-EDGE_EXPONENT


def outlier_found(eigenvalue, overlap, bulk_edge, d, *, min_overlap=HESSIAN_OVERLAP):
    """Whether a Hessian eigenpair is the paper's negative outlier along
    theta*: negative, its eigenvector overlapping theta* by more than
    ``min_overlap``, and *separated from the bulk*,

    ``eigenvalue < 0``, ``overlap > min_overlap`` and
    ``bulk_edge - eigenvalue > separation_margin(d) * |bulk_edge|``.

    Without the separation, an eigenvector at the edge of the bulk can
    carry theta* because the theta* direction spreads over near-degenerate
    edge eigenvectors (below the threshold, the best of them overlapped it
    by 0.505 at a gap of 0.07 ``|bulk edge|``, d = 100); the margin
    (:func:`separation_margin`) is the bulk's own first gap in 95% of the
    spectra measured in :data:`HESSIAN_SEPARATION`, at every d. Elementwise
    on arrays; NaN is never found.

    Parameters
    ----------
    eigenvalue, overlap, bulk_edge : float or array-like
        As :func:`pick_outlier` returns them (the CSV's
        ``outlier_eigenvalue``, ``outlier_overlap``, ``bulk_edge``).
    d : int or array-like
        The input dimension.
    min_overlap : float, default=HESSIAN_OVERLAP

    Returns
    -------
    bool or ndarray of bool

    References
    ----------
    Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural
    Networks" (the outlier that defines ``delta_NN``).

    Examples
    --------
    >>> from sklearn_pt.experiments._feature_learning import outlier_found
    >>> outlier_found(-0.28, 0.80, -0.12, 100)  # gap 1.3 |edge|
    True
    >>> outlier_found(-0.0013, 0.505, -0.0012, 100)  # gap 0.08 |edge|: bulk
    False
    >>> outlier_found(-0.28, 0.30, -0.12, 100)  # not along theta*
    False
    >>> outlier_found(-1.25, 0.6, -1.0, 100), outlier_found(-1.25, 0.6, -1.0, 400)
    (False, True)
    """
    eigenvalue, overlap, bulk_edge = (
        np.asarray(v, dtype=float) for v in (eigenvalue, overlap, bulk_edge)
    )
    margin = separation_margin(d) * np.abs(bulk_edge)
    with np.errstate(invalid="ignore"):
        separated = bulk_edge - eigenvalue > margin
        found = (eigenvalue < 0) & (overlap > min_overlap) & separated
    return bool(found) if found.ndim == 0 else found


def _hessian_outlier(module, weight, X, y, theta, width) -> tuple[float, ...]:
    """``(outlier eigenvalue, its overlap, bulk edge)`` of the training-risk
    Hessian at the first-layer weights ``weight``: :func:`pick_outlier` on
    its ``width + 1`` smallest eigenpairs, by Lanczos to :data:`HESSIAN_TOL`
    within :data:`LANCZOS_RESTARTS` restarts per parameter, else dense; in
    float64 (the accuracy :data:`HESSIAN_TOL` asks for), whatever the fit's
    dtype."""
    network = copy.deepcopy(module).to(torch.float64)
    network.weight.data.copy_(weight)
    size = sum(p.numel() for p in network.parameters() if p.requires_grad)
    solve = {"k": width + 1, "which": "smallest", "directions": theta}
    restarts = max(1, math.ceil(LANCZOS_RESTARTS * size))
    lanczos = {"tol": HESSIAN_TOL, "maxiter": restarts}
    try:
        spectrum = hessian_spectrum(network, X, y, **lanczos, **solve)
    except ArpackNoConvergence:
        spectrum = hessian_spectrum(network, X, y, method="dense", **solve)
    return pick_outlier(spectrum.eigenvalues, spectrum.overlaps, width)


def first_phase_runs(estimators, X, y, theta) -> list:
    """GD with ``theta*``'s component held at 0
    (:class:`HardDirectionProjection`), each run stopped at the end of its
    first phase (:class:`FirstPhaseSnapshot`), for estimators that stack
    (:func:`~sklearn_pt._training.run_stacked`: e.g. several widths on the
    one data set). Per estimator, ``(step, weight, fitted)``: the step at
    which the rule fired (NaN: never, the last weights), the first-layer
    weights there (a tensor) and the fitted clone; or the
    :class:`~sklearn_pt.exceptions.DivergenceError` that ended it."""
    plans = [clone(estimator).plan_fit(X, y) for estimator in estimators]
    projection = HardDirectionProjection(theta)
    for plan in plans:  # held at 0 from the start, for the divergence check too
        projection.project(plan.module.weight)
    snapshot = FirstPhaseSnapshot(stop=True)
    fitted = run_stacked(plans, callbacks=[projection, snapshot])
    runs = []
    for k, (plan, outcome) in enumerate(zip(plans, fitted, strict=True)):
        if isinstance(outcome, DivergenceError):
            runs.append(outcome)
            continue
        step = snapshot.steps[k]
        weight = snapshot.weights[k][: plan.module.weight.shape[0]]
        runs.append((math.nan if step is None else float(step), weight, outcome))
    return runs


def first_phase_weights(estimator, X, y, theta) -> tuple:
    """:func:`first_phase_runs` of one estimator: ``(step, weight,
    fitted)``; raises the DivergenceError that ended it."""
    (run,) = first_phase_runs([estimator], X, y, theta)
    if isinstance(run, DivergenceError):
        raise run
    return run


def _phase_hessian(run, X, y, theta) -> tuple:
    """``(step, outlier eigenvalue, overlap, bulk edge)`` of one run of
    :func:`first_phase_runs`."""
    step, weight, fitted = run
    width = fitted.first_layer_weights_.shape[0]
    return (step, *_hessian_outlier(fitted.module_, weight, X, y, theta, width))


HESSIAN_COLUMNS = ("hessian_step", "outlier_eigenvalue", "outlier_overlap", "bulk_edge")
"""What :func:`_phase_hessian` returns, as columns."""


def _fit_gd(config: dict, seed: int) -> list[dict]:
    """One GD configuration, delta and seed, at each of its widths: the full
    run (success, test loss, plateau, the first-phase rule on its train
    loss) and the projected first phase (Hessian outlier), each stacked
    over the widths (they share the data); a diverged run fails (NaN,
    inf)."""
    method, d = config["method"], config["d"]
    n = max(round(config["delta"] * d), 1)
    X, y, theta = make_phase_retrieval(
        n + config["n_test"], d, random_state=seed, return_directions=True
    )
    (X, X_test), (y, y_test) = (X[:n], X[n:]), (y[:n], y[n:])
    max_iter = step_budget(config["base_iter"], d)
    estimators = [
        FirstLayerGDRegressor(
            width,
            activation=ACTIVATIONS[method],
            init=config["init"],
            learning_rate_init=STEP_RULES[method] * width,
            max_iter=max_iter,
            random_state=seed,
            device=config["device"],
            dtype=GD_DTYPE,
        )
        for width in config["widths"]
    ]
    phases = first_phase_runs(estimators, X, y, theta)
    evaluation = {"eval_set": (X_test, y_test), "true_directions": theta}
    plans = [clone(e).plan_fit(X, y, **evaluation) for e in estimators]
    fits = run_stacked(plans)
    rows = []
    for width, phase, fitted in zip(config["widths"], phases, fits, strict=True):
        row = {"width": width, "max_iter": max_iter, "overlap": 0.0, "success": 0}
        row |= dict.fromkeys(("test_loss_ratio", "plateau"), math.inf)
        row |= dict.fromkeys(("first_phase_step", "first_phase_overlap"), math.nan)
        if isinstance(phase, DivergenceError) or isinstance(fitted, DivergenceError):
            rows.append(row | dict.fromkeys(HESSIAN_COLUMNS, math.nan) | {"outlier": 0})
            continue
        hessian = _phase_hessian(phase, X, y, theta)
        history = fitted.history_
        test = np.asarray(history["test_loss"])
        overlap = float(history["overlap"][-1])
        below = np.flatnonzero(test <= PLATEAU_FRACTION * test[0])
        row |= {"overlap": overlap, "success": int(overlap > SUCCESS_OVERLAP)}
        row["test_loss_ratio"] = held_out_loss_ratio(fitted, X_test, y_test, y)
        row["plateau"] = float(below[0]) if below.size else math.inf
        first = first_phase_end(history["train_loss"], converged=CONVERGED)
        if first is not None:
            row["first_phase_step"] = float(first)
            row["first_phase_overlap"] = float(history["overlap"][first])
        row |= dict(zip(HESSIAN_COLUMNS, hessian, strict=True))
        rows.append(row | {"outlier": int(outlier_found(*hessian[1:], d))})
    return rows


def measure(config: dict, seed: int) -> list[dict]:
    """One fit of the cell: first-layer GD
    (:class:`~sklearn_pt.neural_network.FirstLayerGDRegressor`, in
    :data:`GD_DTYPE`, full batch, :func:`step_budget` steps, the step size
    of :data:`STEP_RULES`) with the Hessian at the end of its projected
    first phase, or a spectral method (with its squared-overlap limit).
    Seed ``s`` draws the data (and the initialisation), so every
    configuration sees the same data at a given ``(d, delta)``."""
    if config["method"] not in SPECTRAL:
        return _fit_gd(config, seed)
    preprocessing, delta, d = SPECTRAL[config["method"]], config["delta"], config["d"]
    X, y, theta = make_phase_retrieval(
        max(round(delta * d), 1), d, random_state=seed, return_directions=True
    )
    fitted = SpectralEstimator(preprocessing=preprocessing).fit(X, y)
    overlap = float(fitted.overlap(theta))
    row = {"width": 0, "max_iter": 0, "overlap": overlap, "outlier": 0}
    row["success"] = int(row["overlap"] > SUCCESS_OVERLAP)
    return [row | {"squared_overlap_limit": spectral_overlap(delta, preprocessing)}]


def task_cost(config: dict) -> float:
    """A task's run time in GD steps on ``(n, d)`` data, roughly: the two
    runs of :func:`_fit_gd` per width (the widths are small, so a step costs
    about the same whatever ``m``); a spectral method's one ``d x d`` matrix
    costs about ten."""
    d = config["d"]
    n = max(round(config["delta"] * d), 1)
    if config["method"] in SPECTRAL:
        return n * d * 10
    return n * d * 2 * step_budget(config["base_iter"], d) * len(config["widths"])


GROUP = ["method", "init", "width", "d"]
"""The columns that name a configuration (a curve over delta)."""
GRIDS = {
    "quadratic": (1.0, 2.0, 3.0, 4.0, 6.0),
    "GeLU": (2.0, 4.0, 6.0, 8.0, 10.0),
    "spectral": (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0),
}


def _preset(dims, widths, seeds, base_iter, grids, init_widths=(), n_test=500):
    """One scale: GD at every d and activation over ``widths`` (random
    init), also from the spectral initialisation at the smallest d over
    ``init_widths``, then both spectral methods at every d; one cell per
    delta of the grids (overriding :data:`GRIDS`), whose widths share its
    data and train stacked. The GD budget at d = 100 is ``base_iter``
    (:func:`step_budget`)."""
    grids = GRIDS | grids
    groups = [(m, "random", d, widths) for d in dims for m in ACTIVATIONS]
    if init_widths:
        groups += [(m, "spectral", dims[0], init_widths) for m in ACTIVATIONS]
    groups += [(name, "-", d, None) for d in dims for name in SPECTRAL]
    grid = [
        {"method": method, "init": init, "d": d, "delta": delta}
        | ({} if group_widths is None else {"widths": group_widths})
        for method, init, d, group_widths in groups
        for delta in grids.get(method, grids["spectral"])
    ]
    return {"seeds": seeds, "grid": grid, "base_iter": base_iter, "n_test": n_test}


TINY_GRIDS = {
    "quadratic": (1.0, 4.0, 8.0),
    "GeLU": (2.0, 6.0, 10.0),
    "spectral": (0.5, 2.0, 4.0),
}
PAPER_GRIDS = {
    "quadratic": (1.0, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0),
    "GeLU": (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0),
}
ALL_WIDTHS = (1, 2, 4, 8)
PRESETS = {
    "tiny": _preset((20, 40), (2,), 3, 40, TINY_GRIDS, (2,), n_test=100),
    "small": _preset((100, 200), (2, 4), 6, 300, {"GeLU": (2.0, 4.0, 6.0, 8.0)}, (4,)),
    "medium": _preset((100, 200, 400), ALL_WIDTHS, 8, 400, {}, ALL_WIDTHS),
    "paper": _preset(
        (100, 200, 400, 800, 1600), ALL_WIDTHS, 16, 1000, PAPER_GRIDS, ALL_WIDTHS
    ),
}
"""Per scale: ``"small"``, d in (100, 200), widths 2 and 4, 6 seeds;
``"medium"``, d up to 400, widths 1, 2, 4, 8, 8 seeds; ``"paper"``, d up to
1600, 16 seeds."""


# ----------------------------------------------------------------- claims


def _curves(table, value: str, **where) -> dict:
    """Per ``(method, init, width, d)`` of the rows with the given values:
    ``value`` as a DataFrame indexed by delta, one column per seed."""
    for column, wanted in where.items():
        table = table[table[column] == wanted]
    return seed_curves(table, value, along="delta", by=GROUP)


def _crossing(indicator, picks=slice(None)) -> float | np.ndarray:
    """The delta at which the rate of ``indicator`` (a curve of
    :func:`_curves`) over the seeds ``picks`` first reaches :data:`LEVEL`,
    linearly interpolated (:func:`~sklearn_pt.model_selection.rate_crossing`);
    inf when it never does. ``picks`` of shape ``(n_resamples, n_seeds)``
    gives one crossing per resample."""
    values = np.nan_to_num(indicator.to_numpy(dtype=float))
    rates = values[:, picks].mean(axis=-1)  # (n_deltas,) or (n_deltas, n_resamples)
    found = rate_crossing(indicator.index.to_numpy(), rates.T, LEVEL)
    return np.where(np.isnan(found), np.inf, found)[()]


def _over_seeds(statistic, n_seeds: int) -> Estimate:
    """``statistic(picks)`` of the seeds ``0 .. n_seeds - 1`` and its
    bootstrap interval, the seeds resampled together (at every delta, d and
    configuration: they share their data, so differences are paired);
    ``statistic`` takes a batch of resamples, ``picks`` of shape
    ``(n_resamples, n_seeds)``, and returns one value per resample.

    The interval is taken in ``arctan`` scale and mapped back, so that a
    replicate at +-inf (a rate that never crosses) orders and interpolates
    like a number; NaN replicates (inf - inf: neither crosses) are dropped.
    """

    def angle(picks, axis=-1):
        return np.arctan(statistic(picks.astype(int)))

    b = np.array(bootstrap_interval([np.arange(n_seeds)], angle, vectorized=True))
    ends = np.where(np.abs(b) == np.pi / 2, np.copysign(np.inf, b), np.tan(b))
    return Estimate(*ends)


def extrapolate_crossing(dims, crossings, exponent: float = QUOTED_EXPONENT):
    """Least-squares fit of ``crossing(d) = c_inf + b * d ** -exponent``
    over the finite crossings.

    Parameters
    ----------
    dims : sequence of int
    crossings : array-like of shape (n_dims,) or (n_dims, n_curves)
        One crossing per d; several curves fitted at once along the second
        axis.
    exponent : float, default=QUOTED_EXPONENT

    Returns
    -------
    (c_inf, b) : tuple of float or of ndarray of shape (n_curves,)
        NaN with fewer than 2 finite crossings.

    Examples
    --------
    >>> from sklearn_pt.experiments._feature_learning import extrapolate_crossing
    >>> dims = [100, 400, 1600]
    >>> c, b = extrapolate_crossing(dims, [3.0 - 10 / d**0.5 for d in dims])
    >>> round(c, 6), round(b, 6)
    (3.0, -10.0)
    """
    crossings = np.asarray(crossings, dtype=float)
    x = np.asarray(dims, dtype=float).reshape((-1,) + (1,) * (crossings.ndim - 1))
    x = np.broadcast_to(x**-exponent, crossings.shape)
    keep = np.isfinite(crossings)
    count = keep.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        x_mean = np.where(keep, x, 0).sum(axis=0) / count
        y_mean = np.where(keep, crossings, 0).sum(axis=0) / count
        dx = np.where(keep, x - x_mean, 0)
        dy = np.where(keep, crossings - y_mean, 0)
        slope = (dx * dy).sum(axis=0) / (dx * dx).sum(axis=0)
    intercept = y_mean - slope * x_mean
    slope, intercept = (np.where(count >= 2, v, np.nan)[()] for v in (slope, intercept))
    if crossings.ndim == 1:
        return float(intercept), float(slope)
    return intercept, slope


def _by_width(table, method: str, kind: str) -> dict:
    """Per width (random init), the curves of ``kind`` by d."""
    out: dict = {}
    for key, curve in _curves(table, kind, method=method, init="random").items():
        out.setdefault(key[2], {})[key[3]] = curve
    return out


def _c_inf(by_d: dict, picks=slice(None), exponent=QUOTED_EXPONENT):
    crossings = np.array([_crossing(curve, picks) for curve in by_d.values()])
    return extrapolate_crossing(list(by_d), crossings, exponent)[0]


def _extrapolated(method: str, kind: str, table) -> dict:
    """Per width: ``c_inf`` of the crossing of ``kind`` (``"success"`` or
    ``"outlier"``) over d, refitted on every resample of the seeds."""
    return {
        width: _over_seeds(partial(_c_inf, by_d), next(iter(by_d.values())).shape[1])
        for width, by_d in _by_width(table, method, kind).items()
    }


def _fmt(value: float) -> str:
    """Two decimals; "none" for a crossing that never happens."""
    return f"{value:.2f}" if np.isfinite(value) else "none"


def _crossings_text(method: str, kind: str, table) -> str:
    parts = []
    for width, by_d in _by_width(table, method, kind).items():
        spread = [_c_inf(by_d, exponent=nu) for nu in EXPONENTS]
        found = ", ".join(f"{_fmt(_crossing(c))} (d={d})" for d, c in by_d.items())
        spread = f"{_fmt(min(spread))}..{_fmt(max(spread))}"
        parts.append(f"m={width}: {found}, c_inf at nu 1/3..1 {spread}")
    return f"crossing of the rate at {LEVEL:g}: " + "; ".join(parts) + "; c_inf"


class _Informative(IntervalTest):
    """:class:`IntervalTest` that reads an interval wider than
    :data:`INFORMATIVE_WIDTH` times the value it should contain as
    "neither": the data cannot tell."""

    def __call__(self, values, point):
        outcome, text = super().__call__(values, point)
        if values.high - values.low > INFORMATIVE_WIDTH * self.contains:
            return NEITHER, text + " (too wide)"
        return outcome, text


def _threshold_claim(method: str, kind: str) -> Claim:
    """delta_H (kind "outlier") or the success crossing, extrapolated in d,
    against the paper's delta_NN, per width."""
    paper = PAPER_THRESHOLDS[method]
    what = (
        f"the Hessian's negative outlier ({OUTLIER_RULE}) at the end of the first "
        "phase appears"
        if kind == "outlier"
        else f"first-layer GD succeeds (overlap > {SUCCESS_OVERLAP:g})"
    )
    name = "delta_H" if kind == "outlier" else "the success crossing"
    return Claim(
        f"{method}: {what} above delta_NN = {paper:g} ({name}, random init)",
        partial(_extrapolated, method, kind),
        _Informative(contains=paper, of="c_inf of the fit c_inf + b d^-1/2"),
        paper=f"delta_NN = {paper:g} ({PAPER_CONDITIONS})",
        label="m={}",
        reason="At finite d the crossings move with d and the extrapolation "
        "assumes the exponent (nu 1/3..1 is the spread); an interval that "
        "misses the paper's value at these d does not refute it.",
        test_text=f"at each width, one more than {INFORMATIVE_WIDTH:g} x the "
        "value wide counting as neither (the data cannot tell)",
        measured=partial(_crossings_text, method, kind),
    )


def _difference(low, high, picks):
    with np.errstate(invalid="ignore"):  # inf - inf: neither crosses
        return _crossing(high, picks) - _crossing(low, picks)


def _transition(table) -> dict:
    """Per GD configuration (random init): the success crossing minus
    delta_H on the same runs."""
    outlier = _curves(table, "outlier", init="random")
    return {
        key: _over_seeds(partial(_difference, outlier[key], success), success.shape[1])
        for key, success in _curves(table, "success", init="random").items()
    }


def _transition_reason(table, outcomes) -> str:
    below = [LABEL.format(k) for k, e in _transition(table).items() if e.high < 0]
    return (
        f"GD succeeds below delta_H at {len(below)} of {len(outcomes)} (m, d) "
        f"({', '.join(below)}): at these d the escape starts from the O(d^-1/2) "
        "initial overlap before the Hessian at the end of the first phase has a "
        "theta*-outlier; the paper's statement is a d -> inf one."
        if below
        else ""
    )


LABEL = "{0[0]} m={0[2]} d={0[3]}"


def _order(table) -> dict:
    """Per width at the largest d: spectral < quadratic < GeLU, each step as
    the paired difference of the success crossings."""
    d = table.d.max()
    success = _curves(table, "success", d=d)
    out, n_seeds = {}, table.seed.nunique()
    for width in sorted(table[table.init == "random"].width.unique()):
        chain = [("spectral", "-", 0, d)] + [
            (m, "random", width, d) for m in ACTIVATIONS
        ]
        if set(chain) <= set(success):
            out[width] = {
                f"{low[0]} < {high[0]}": _over_seeds(
                    partial(_difference, success[low], success[high]), n_seeds
                )
                for low, high in itertools.pairwise(chain)
            }
    return out


class _Chain(IntervalTest):
    """:class:`IntervalTest` of every step of a chain at one point: holds
    when every step holds, opposite when one step is opposite."""

    def __call__(self, steps, point):
        test = super().__call__
        found = {name: test(values, point) for name, values in steps.items()}
        outcomes = {outcome for outcome, _ in found.values()}
        outcome = next((o for o in (OPPOSITE, NEITHER) if o in outcomes), HOLDS)
        return outcome, ", ".join(f"{k} {text}" for k, (_, text) in found.items())


def _spectral(table) -> dict:
    """Per spectral method at the largest d: the squared overlap, delta >= 1."""
    curves = _curves(table, "overlap", init="-", d=table.d.max())
    return {key[0]: curve[curve.index >= 1.0] ** 2 for key, curve in curves.items()}


def _follows(table) -> dict:
    """Per (preprocessing, delta, limit): the mean squared overlap and its
    interval widened by :data:`SPECTRAL_SLACK`."""
    limits = table.groupby(["method", "delta"]).squared_overlap_limit.first()
    out = {}
    for name, squared in _spectral(table).items():
        for delta, row in squared.iterrows():
            mean, low, high = bootstrap_interval(row.to_numpy())
            point = (SPECTRAL[name], delta, limits[name, delta])
            out[point] = Estimate(mean, low - SPECTRAL_SLACK, high + SPECTRAL_SLACK)
    return out


def _beats(table) -> dict:
    """Per delta >= 1: max-overlap's squared overlap minus optimal's, per seed."""
    squared = _spectral(table)
    difference = squared["spectral max-overlap"] - squared["spectral"]
    return {delta: row.to_numpy() for delta, row in difference.iterrows()}


def _plateau_gaps(table) -> dict:
    """Per GD configuration and pair of consecutive deltas above its
    delta_H: the plateau at the smaller minus that at the larger, per seed
    (never halved: past the budget, so that two nevers tie)."""
    outlier = _curves(table, "outlier", init="random")
    budget = _curves(table, "max_iter", init="random")
    out = {}
    for key, plateau in _curves(table, "plateau", init="random").items():
        censored = np.minimum(plateau, budget[key] + 1).to_numpy()
        deltas, threshold = plateau.index, _crossing(outlier[key])
        for i in np.flatnonzero(deltas[:-1] > threshold):
            label = f"{LABEL.format(key)} delta {deltas[i]:g}->{deltas[i + 1]:g}"
            out[label] = censored[i] - censored[i + 1]
    return out or {"no two deltas above delta_H": []}


def _claims(table) -> list[Claim]:
    """delta_H and the success crossing against delta_NN (quadratic, GeLU),
    the success crossing against delta_H, the order of the thresholds, the
    spectral methods against their limits and each other, grokking."""
    d = table.d.max()
    return [
        *(_threshold_claim(m, k) for k in ("outlier", "success") for m in ACTIVATIONS),
        Claim(
            "the threshold of GD is the Hessian transition: the success crossing "
            "equals delta_H on the same runs",
            _transition,
            IntervalTest(contains=0.0, of="the paired success crossing - delta_H"),
            paper="delta_NN is where the negative outlier appears (its definition)",
            label=LABEL,
            reason=_transition_reason,
            test_text="(a resample that never crosses counts as +-inf)",
        ),
        Claim(
            f"success crossings ordered spectral < quadratic < GeLU (d={d})",
            _order,
            _Chain(above=0.0, of="the paired difference of the crossings"),
            paper="0.5 < 3.6 < 6.0",
            label="m={}",
            test_text="at every step",
        ),
        Claim(
            "the spectral methods' squared overlap follows its d -> inf limit "
            f"(d={d}, delta >= 1)",
            _follows,
            IntervalTest(
                contains=lambda point: point[2],
                of=f"the mean squared overlap, widened by {SPECTRAL_SLACK:g} "
                "(finite-size bias)",
            ),
            paper="Lu, Li (2020) fixed-point equations (theory.spectral_overlap) "
            "for Mondelli-Montanari's T (threshold 1/2) and Luo-Alghamdi-Lu's 1 - 1/y",
            label="{0[0]} delta={0[1]:g} (limit {0[2]:.3f})",
            test_text="the limit",
        ),
        Claim(
            "T(y) = 1 - 1/y gives a larger overlap than Mondelli-Montanari's T "
            f"(d={d})",
            _beats,
            SignTest(),
            paper="Luo, Alghamdi, Lu (2019): 1 - 1/y maximises the overlap at "
            "every delta",
            label="delta={:g}",
            test_text="of the squared overlaps (same data)",
        ),
        Claim(
            "grokking: the plateau (steps until the test loss halves) is longer "
            "closer above delta_H",
            _plateau_gaps,
            SignTest(),
            paper="GD escapes along the negative outlier after ~ log d / |lambda| "
            "steps, longer near the threshold",
            test_text="of the plateau at consecutive deltas above the measured "
            "delta_H (never halved: past the budget)",
        ),
    ]


# ----------------------------------------------------------------- panels


def _shown_width(table) -> int:
    widths = sorted(table[table.init == "random"].width.unique())
    return 4 if 4 in widths else int(widths[len(widths) // 2])


def _finish(ax, title: str, ylabel: str, xlabel="delta = n / d", **limits) -> None:
    ax.set(xlabel=xlabel, ylabel=ylabel, **limits)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)


def _rates_panel(ax, table) -> None:
    d, width = table.d.max(), _shown_width(table)
    keep = (table.d == d) & (table.init != "spectral")
    rows = table[keep & table.width.isin([0, width])]
    for k, (method, group) in enumerate(rows.groupby("method")):
        rates = group.groupby("delta")[["success", "outlier"]].mean()
        ax.plot(rates.success, "o-", color=f"C{k}", label=f"{method}: success")
        if method in ACTIVATIONS:
            ax.plot(rates.outlier, "s:", color=f"C{k}", label=f"{method}: outlier")
    ax.axhline(LEVEL, color="0.4", lw=0.8, ls="--")
    _finish(ax, f"Success and Hessian-outlier rates, d={d}, m={width}", "rate")


def _hessian_panel(column: str, ax, table) -> None:
    """The outlier's eigenvalue (and the bulk edge, x) or its eigenvector's
    overlap with theta*, median over seeds, by d (random init)."""
    width, dims = _shown_width(table), sorted(table.d.unique())
    rows = table[(table.init == "random") & (table.width == width)]
    for (method, d), group in rows.groupby(["method", "d"]):
        medians = group.groupby("delta")[[column, "bulk_edge"]].median()
        ls = "-" if method == "quadratic" else "--"
        style = {"color": f"C{dims.index(d)}", "ls": ls}
        ax.plot(medians[column], marker="o", label=f"{method}, d={d}", **style)
        if column == "outlier_eigenvalue":
            ax.plot(medians.bulk_edge, marker="x", lw=0.6, **style)
    ax.axhline(0.0 if column == "outlier_eigenvalue" else HESSIAN_OVERLAP, color="0.4")
    for method in ACTIVATIONS:
        ax.axvline(PAPER_THRESHOLDS[method], color="0.6", ls=":")
    title = f"Hessian at the end of the first phase, m={width}"
    _finish(ax, title, f"{column} (median; x: bulk edge)")


def _extrapolation_panel(ax, table) -> None:
    x_max = table.d.min() ** -QUOTED_EXPONENT
    line = np.linspace(0.0, 1.05 * x_max, 50)
    for method, kind in itertools.product(ACTIVATIONS, ("success", "outlier")):
        for width, by_d in _by_width(table, method, kind).items():
            found = [_crossing(curve) for curve in by_d.values()]
            c_inf, slope = extrapolate_crossing(list(by_d), found)
            label = f"{method} m={width} {kind} -> {_fmt(c_inf)}"
            x = np.array(list(by_d), dtype=float) ** -QUOTED_EXPONENT
            points = ax.plot(x, found, "so"[kind == "success"], label=label)
            ax.plot(line, c_inf + slope * line, lw=0.7, color=points[0].get_color())
    for method, value in PAPER_THRESHOLDS.items():
        ax.axhline(value, color="0.3", ls=":", lw=1)
        ax.annotate(f"paper {method} {value:g}", (0.0, value), fontsize=7)
    title = "Finite-size scaling of the crossings: c_inf + b d^-1/2"
    _finish(ax, title, "crossing delta", "d ** -1/2", xlim=(-0.04 * x_max, 1.1 * x_max))


def _spectral_panel(ax, table) -> None:
    rows = table[table.init == "-"]
    line = np.linspace(0.05, rows.delta.max(), 200)
    for k, (name, preprocessing) in enumerate(SPECTRAL.items()):
        limit = spectral_overlap(line, preprocessing)
        ax.plot(line, limit, color=f"C{k}", label=f"{preprocessing}: d -> inf limit")
        by_d = rows[rows.method == name].groupby("d")
        for marker, (d, mine) in zip("^v<>>>", by_d, strict=False):
            means = (mine.overlap**2).groupby(mine.delta).mean()
            ax.plot(means, marker, color=f"C{k}", label=f"{preprocessing}, d={d}")
    ax.axvline(spectral_threshold(), color="0.4", ls=":", lw=1)
    title = "Spectral baselines vs their limits (dotted: weak recovery at 1/2)"
    _finish(ax, title, "squared overlap (mean over seeds)", ylim=(-0.03, 1.05))


def _plateau_panel(ax, table) -> None:
    width = _shown_width(table)
    outlier = _curves(table, "outlier", init="random", width=width)
    for key, plateau in _curves(table, "plateau", init="random", width=width).items():
        median = plateau.median(axis=1).replace(np.inf, np.nan)
        style = "o-" if key[0] == "quadratic" else "s--"
        x = median.index - _crossing(outlier[key])
        ax.plot(x, median, style, label=f"{key[0]} d={key[3]}")
    ax.axvline(0.0, color="0.4", ls=":", lw=1)
    title = f"Grokking plateau, m={width} (missing: never halved)"
    _finish(ax, title, "steps until the test loss halves (median)", "delta - delta_H")


def _describe(table) -> str:
    """The design, and per GD configuration its crossings and first phases."""
    gd = table[table.method.isin(list(ACTIVATIONS))]
    steps = ", ".join(f"{s} (d={d})" for d, s in gd.groupby("d").max_iter.max().items())
    lines = [
        f"First-layer GD, full batch, {GD_DTYPE}, step {STEP_RULES['quadratic']:g} m "
        f"(quadratic), {STEP_RULES['GeLU']:g} m (GeLU), steps {steps}; seed s draws "
        "the data of every configuration. The Hessian is taken where the first-phase "
        f"rule (train loss down by less than {FIRST_PHASE_DROP:.0%} over "
        f"{FIRST_PHASE_WINDOW} steps) fires in a second run from the same "
        "initialisation with theta*'s component held at 0: its width + 1 smallest "
        f"eigenpairs (Lanczos, tol {HESSIAN_TOL:g} ||H||). Per configuration: the "
        "success crossing, delta_H, the test-loss crossing (test MSE < "
        f"{TEST_LOSS_FRACTION:g} x the trivial one); medians of the free run's "
        "first-phase step / W's overlap there, and of the projected run's step:",
        "",
    ]
    for key, rows in gd.groupby(GROUP):
        curve = partial(rows.pivot, index="delta", columns="seed")
        crossings = (curve(values=column) for column in ("success", "outlier"))
        test_loss = curve(values="test_loss_ratio") < TEST_LOSS_FRACTION
        found = ", ".join(_fmt(_crossing(c)) for c in (*crossings, test_loss))
        steps = [rows[c].median() for c in ("first_phase_step", "hessian_step")]
        overlap = rows.first_phase_overlap.median()
        lines.append(
            f"- {' '.join(map(str, key[:2]))} m={key[2]} d={key[3]}: {found}; "
            f"{steps[0]:.0f} / {overlap:.2f}, {steps[1]:.0f}"
        )
    ratios = [spectral_ratio_for_overlap(SUCCESS_OVERLAP, p) for p in SPECTRAL.values()]
    return "\n".join(lines) + (
        f"\n\nSpectral methods: weak recovery above {spectral_threshold():g} for both, "
        f"overlap > {SUCCESS_OVERLAP:g} above {ratios[0]:.2f} (optimal) and "
        f"{ratios[1]:.2f} (max-overlap) in the limit."
    )


FEATURE_LEARNING = Experiment(
    name="feature-learning",
    title="Feature learning by first-layer GD: the Hessian-defined threshold and "
    "the success rate in delta = n/d, over d and width",
    reference=REFERENCE,
    presets=PRESETS,
    measure=measure,
    cost=task_cost,
    claims=_claims,
    panels=(
        _rates_panel,
        partial(_hessian_panel, "outlier_eigenvalue"),
        partial(_hessian_panel, "outlier_overlap"),
        _extrapolation_panel,
        _spectral_panel,
        _plateau_panel,
    ),
    describe=_describe,
)
"""The threshold delta_H (the Hessian's outlier) and the success crossing of
first-layer GD over d and width, against delta_NN, beside both spectral
methods (Montanari, Wang, 2026; Luo, Alghamdi, Lu, 2019)."""
