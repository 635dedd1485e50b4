"""Steppers: one training iteration of ``K >= 1`` models.

:func:`~sklearn_pt._training.fit_loop` drives any object with this protocol
(:class:`Stepper` documents it):

* :class:`FirstOrderStepper` -- one module, mini-batch SGD/Adam epochs or
  full-batch GD steps (optionally a fixed schedule of batches and step sizes,
  as the two-step learner takes); its gradient comes from autograd or, where
  the module has one, from a hand-derived pass;
* :class:`LBFGSStepper` -- one module, one torch L-BFGS run advanced an
  iteration per call;
* :class:`~sklearn_pt._training._stacked.StackedStepper` (in
  :mod:`._stacked`) -- ``K`` models stacked in one module.

The optimisers are in :mod:`._optimizers`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from ..nn import HandDerivedGradients
from ._epochs import EpochPlan, ToleranceRule
from ._losses import (
    INITIAL_LOSS_ROWS,
    half_squared_error,
    initial_loss,
    mean_loss,
    penalty,
)
from ._optimizers import make_optimizer

__all__ = [
    "FIRST_ORDER_SOLVERS",
    "SOLVERS",
    "FirstOrderStepper",
    "LBFGSStepper",
    "Stepper",
    "make_stepper",
]

FIRST_ORDER_SOLVERS = ("adam", "sgd", "gd")
"""Solvers whose update is elementwise, so that stacking models is exact."""
SOLVERS = (*FIRST_ORDER_SOLVERS, "lbfgs")
"""Every solver of :func:`make_stepper`."""
_LBFGS_MAX_LINE_SEARCH = 25
"""Trial points of one strong-Wolfe line search beyond the first (torch's default)."""
_LBFGS_FTOL = 2.220446049250313e-09
"""L-BFGS stops once an iteration lowers the objective from ``f_prev`` to ``f``
by at most this times ``max(|f_prev|, |f|, 1)``: scipy's L-BFGS-B default
``ftol`` (``factr=1e7`` times float64's machine epsilon), which
:class:`~sklearn.neural_network.MLPRegressor` uses."""


class Stepper:
    """The protocol of a stepper (and the defaults of its optional parts).

    Attributes
    ----------
    n_models : int
        ``K``, the models it trains.
    solver : str
        Quoted in the divergence and ``max_iter`` messages.
    learning_rate : float
        The step size of the current iteration, quoted likewise.
    """

    n_models = 1
    solver = ""
    learning_rate = math.nan

    def step(self, active: torch.Tensor) -> list[float]:
        """One iteration of the models where the bool ``(K,)`` ``active`` is
        True; each model's objective (entries of the others are meaningless)."""
        raise NotImplementedError

    def stop_models(self, models: Sequence[int]) -> None:
        """Keep the parameters of ``models`` as they are from now on."""

    def model_learning_rate(self, k: int) -> float:
        """Model ``k``'s step size of the current iteration (for messages)."""
        return self.learning_rate

    def convergence_criterion(self, k: int, *, tol: float, n_iter_no_change: int):
        """Model ``k``'s criterion for early stopping: an object with
        ``stop_reason(loss) -> str | None`` and ``unmet() -> str``."""
        return ToleranceRule(tol=tol, n_iter_no_change=n_iter_no_change)

    def initial_losses(self) -> list[float]:
        """Each model's loss at initialisation on the first 8,192 rows."""
        raise NotImplementedError

    def first_rows_and_outputs(self, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Model ``k``'s first 8,192 training rows and its outputs on them."""
        raise NotImplementedError

    def current_losses(self) -> list[float]:
        """Each model's loss on all its training rows, at its current weights."""
        raise NotImplementedError


def _first_of(schedule, solver: str, X, y, learning_rate):
    """The data and step size of the first iteration: ``schedule[0]`` when
    there is a schedule (which takes ``solver="gd"``), else as given."""
    if schedule is None:
        return X, y, learning_rate
    if solver != "gd":
        raise ValueError("A schedule of batches needs solver='gd'.")
    return schedule[0]


_GRADIENTS = ("auto", "manual", "autograd")


def _hand_derived(module, gradients: str, applies: bool = True) -> bool:
    """Whether a stepper takes ``module.squared_error_gradients_`` (the
    module's hand-derived pass) rather than autograd: ``"auto"`` does where
    the module has one and it ``applies`` (the squared loss)."""
    if gradients not in _GRADIENTS:
        raise ValueError(f"gradients must be one of {_GRADIENTS}; got {gradients!r}.")
    if gradients == "auto":
        return applies and isinstance(module, HandDerivedGradients)
    return gradients == "manual"


class _ModuleStepper(Stepper):
    """What the one-module steppers share: the module, its data and loss."""

    def __init__(self, module, X, y, loss):
        self.module, self.X, self.y = module, X, y
        self.loss = loss
        self.trainable = [p for p in module.parameters() if p.requires_grad]
        self.decayed = [p for p in self.trainable if p.ndim >= 2]
        self.weight_decay = 0.0
        self.penalty_scales = [1.0] * len(self.decayed)

    def _set_penalty(self, alpha: float) -> None:
        """The penalty ``alpha / (2 n) * sum_W scale_W ||W||^2`` over the
        decayed tensors (those of two or more dimensions): ``scale_W`` is
        what the module's ``penalty_scales(X)`` gives ``W`` at the start of
        training, where it has that method (1 otherwise)."""
        self.weight_decay = alpha / self.X.shape[0]
        scales = getattr(self.module, "penalty_scales", None)
        if self.weight_decay == 0.0 or scales is None:
            return
        given = {id(p): float(scale) for p, scale in scales(self.X)}
        self.penalty_scales = [given.get(id(p), 1.0) for p in self.decayed]

    def _penalty(self):
        return penalty(self.decayed, self.weight_decay, self.penalty_scales)

    def initial_losses(self) -> list[float]:
        # The objective the loss curve records: loss plus penalty, so that
        # the divergence checks compare like with like (with alpha=7 and one
        # sample the penalty alone can be 10x the initial squared error).
        with torch.no_grad():
            start = self._penalty()
        return [initial_loss(self.module, self.X, self.y, self.loss) + float(start)]

    def first_rows_and_outputs(self, k: int = 0):
        rows = self.X[:INITIAL_LOSS_ROWS]
        with torch.no_grad():
            return rows, self.module(rows)

    def current_losses(self) -> list[float]:
        with torch.no_grad():
            return [float(mean_loss(self.module, self.X, self.y, self.loss))]


class FirstOrderStepper(_ModuleStepper):
    """One epoch of SGD/Adam (mini-batch) or one step of GD (full batch).

    The objective of an iteration is its batch losses plus the penalty at the
    end of the iteration (the optimiser applies the penalty's gradient as
    weight decay ``alpha / n`` to parameters with two or more dimensions,
    each times its scale where the module has ``penalty_scales``).

    Parameters
    ----------
    module : torch.nn.Module
        Its parameters with ``requires_grad=True`` are trained.
    X, y : Tensor
        Training data on the module's device and dtype.
    solver : {"adam", "sgd", "gd"}
    learning_rate : float
    alpha : float
        L2 penalty ``alpha / (2 n) * sum_W scale_W ||W||^2`` (``scale_W`` from
        the module's ``penalty_scales(X)``, 1 without it).
    batch_size : int or "auto"
    shuffle : bool
    generator : torch.Generator or None
        CPU generator of the mini-batch orders.
    loss : callable
        ``loss(prediction, target)``, a scalar mean over the rows.
    schedule : sequence of (X, y, learning_rate), optional
        For ``solver="gd"``: iteration ``i`` takes one step on the ``i``-th
        data with the ``i``-th step size (``X``, ``y`` and ``learning_rate``
        are then those of the first).
    gradients : {"auto", "manual", "autograd"}, default="auto"
        With the squared loss, ``"auto"`` uses the module's hand-derived
        pass when it has one: ``squared_error_gradients_(X, y)``, which
        returns ``half_squared_error(module(X), y)`` and writes its
        gradient into the parameters' ``.grad`` (e.g.
        :class:`~sklearn_pt.nn.FirstLayerNetwork`); the optimiser then
        applies the weight decay as with autograd.
    """

    def __init__(
        self,
        module,
        X,
        y,
        *,
        solver="adam",
        learning_rate=1e-3,
        alpha=0.0,
        batch_size="auto",
        shuffle=True,
        generator=None,
        loss=half_squared_error,
        schedule=None,
        gradients="auto",
    ):
        X, y, learning_rate = _first_of(schedule, solver, X, y, learning_rate)
        super().__init__(module, X, y, loss)
        self.manual = _hand_derived(module, gradients, loss is half_squared_error)
        self.solver, self.learning_rate = solver, learning_rate
        self.schedule, self.iteration = schedule, 0
        self._set_penalty(alpha)
        if self.weight_decay == 0.0:
            groups = [{"params": self.trainable}]  # one group: one fused update
        else:
            decays: dict[float, list] = {}  # one group per scale
            for p, scale in zip(self.decayed, self.penalty_scales, strict=True):
                decays.setdefault(self.weight_decay * scale, []).append(p)
            decayed_ids = {id(p) for p in self.decayed}
            groups = [{"params": ps, "weight_decay": wd} for wd, ps in decays.items()]
            groups.append(
                {"params": [p for p in self.trainable if id(p) not in decayed_ids]}
            )
            groups = [g for g in groups if g["params"]]
        self.optimizer = make_optimizer(groups, solver, learning_rate)
        self.plan = EpochPlan(
            X.shape[0],
            batch_size,
            solver,
            shuffle=shuffle,
            generators=[generator],
            device=X.device,
            dtype=X.dtype,
        )

    def _gradients(self, X, y) -> torch.Tensor:
        """The batch loss, its gradient in the parameters' ``.grad``."""
        if self.manual:
            return self.module.squared_error_gradients_(X, y)
        self.optimizer.zero_grad()
        return mean_loss(self.module, X, y, self.loss, backward=True)

    def _batch_step(self, X, y) -> torch.Tensor:
        batch_loss = self._gradients(X, y)
        self.optimizer.step()
        return batch_loss

    def step(self, active=None) -> list[float]:
        if self.schedule is not None:
            X, y, self.learning_rate = self.schedule[self.iteration]
            for group in self.optimizer.param_groups:
                group["lr"] = self.learning_rate
        else:
            X, y = self.X, self.y
        self.iteration += 1
        if self.plan.full_batch:
            batch_loss = self._gradients(X, y)
            with torch.no_grad():
                value = batch_loss + self._penalty()
            self.optimizer.step()
            return [float(value)]
        (order,) = self.plan.orders(torch.ones(1, dtype=torch.bool))
        losses = [
            self._batch_step(X[index], y[index])
            for index in order.split(self.plan.batch_size)
        ]
        with torch.no_grad():
            return [float(self.plan.mean(losses) + self._penalty())]


class LBFGSStepper(_ModuleStepper):
    """One torch L-BFGS run over the whole fit, advanced one iteration per call.

    A single :class:`torch.optim.LBFGS` with ``max_iter=1`` is stepped once per
    iteration. Its state (the last 100 curvature pairs, the last step)
    persists between calls, so the calls make one L-BFGS run; each
    strong-Wolfe line search may try ``1 + _LBFGS_MAX_LINE_SEARCH`` points
    (torch derives ``max_eval`` from ``max_iter`` otherwise, which for
    ``max_iter=1`` leaves a single trial and no line search at all). torch's
    own exits are disabled (``tolerance_grad=0``, ``tolerance_change=0``):
    their absolute thresholds would end a call without a step and, the state
    unchanged, every later call the same way; :meth:`stop_reason` holds the
    stopping criteria (the stepper is its own convergence criterion).

    Every ``step`` of torch's LBFGS opens with an evaluation at the current
    iterate, which the previous line search has just evaluated. The best
    point of each line search is kept (a copy of its parameters, its objective
    and its gradients) and handed back for that opening evaluation: one
    forward and backward pass per line-search trial and none wasted. Should
    torch accept another point than the best, it is evaluated again.

    If a line search cannot lower the objective along the L-BFGS direction,
    the curvature history is dropped and the iteration retried from steepest
    descent, as L-BFGS-B does. If that fails too, the run has stalled (the
    objective is at its floating-point floor along the gradient): later calls
    return the same loss and evaluate nothing.
    """

    solver = "lbfgs"

    def __init__(self, module, X, y, *, alpha=0.0, loss=half_squared_error, tol=0.0):
        super().__init__(module, X, y, loss)
        self._set_penalty(alpha)
        self.tol = tol
        self.optimizer = torch.optim.LBFGS(
            self.trainable,
            lr=1.0,
            max_iter=1,
            max_eval=1 + _LBFGS_MAX_LINE_SEARCH,  # the opening evaluation counts
            tolerance_grad=0.0,
            tolerance_change=0.0,
            line_search_fn="strong_wolfe",
        )
        self.reuse_kept = False
        self.stalled = False
        self.previous_loss = math.inf
        self._keep(self._evaluate())

    def convergence_criterion(self, k: int, *, tol: float, n_iter_no_change: int):
        self.tol = tol  # n_iter_no_change is not used
        return self

    def _evaluate(self) -> torch.Tensor:
        """Objective and (into ``.grad``) gradients at the current parameters."""
        for p in self.trainable:
            p.grad = None  # fresh gradient tensors: the kept point's stay intact
        value = self.loss(self.module(self.X), self.y)
        value = value + self._penalty()
        value.backward()
        return value.detach()

    def _keep(self, value: torch.Tensor) -> None:
        """Keep the current point: parameters, objective and gradients."""
        self.point = [p.detach().clone() for p in self.trainable]
        self.grads = [p.grad for p in self.trainable]
        self.value, self.loss_value = value, float(value)

    def _at_kept_point(self) -> bool:
        pairs = zip(self.trainable, self.point, strict=True)
        return all(torch.equal(p, kept) for p, kept in pairs)

    def _closure(self) -> torch.Tensor:
        """torch's closure: the opening call of a step gets the kept point;
        line-search trials are evaluated and the best one kept."""
        if self.reuse_kept:
            self.reuse_kept = False
            for p, grad in zip(self.trainable, self.grads, strict=True):
                p.grad = grad
            return self.value
        value = self._evaluate()
        if float(value) < self.loss_value:
            self._keep(value)
        return value

    def _step(self) -> None:
        """One torch step; afterwards the kept point is the accepted iterate."""
        self.reuse_kept = True
        self.optimizer.step(self._closure)
        self.reuse_kept = False
        if not self._at_kept_point():
            self._keep(self._evaluate())

    def _has_history(self) -> bool:
        """Whether the last step used curvature pairs (was not a first step)."""
        return self.optimizer.state[self.trainable[0]].get("n_iter", 0) > 1

    def step(self, active=None) -> list[float]:
        """One L-BFGS iteration; the objective at the accepted iterate."""
        if self.stalled:
            return [self.loss_value]
        self.previous_loss = start = self.loss_value
        self._step()
        if not self.loss_value < start and self._has_history():
            self.optimizer.state.clear()  # restart from steepest descent
            self._step()
        self.stalled = not self.loss_value < start
        return [self.loss_value]

    def gradient_max(self) -> float:
        """``max |gradient|`` of the objective at the current iterate."""
        values = [g.abs().max() for g in self.grads if g is not None and g.numel()]
        return float(torch.stack(values).max()) if values else 0.0

    def relative_decrease(self) -> float:
        """scipy's ``(f_prev - f) / max(|f_prev|, |f|, 1)`` of the last iteration."""
        scale = max(abs(self.previous_loss), abs(self.loss_value), 1.0)
        return (self.previous_loss - self.loss_value) / scale

    def stop_reason(self, loss: float) -> str | None:
        """Why the run has converged, or None (``loss``, the last value
        returned, is not needed): ``max |gradient| <= tol`` at the iterate, or
        a :meth:`relative_decrease` of at most ``_LBFGS_FTOL`` (zero when the
        run stalled)."""
        gradient = self.gradient_max()
        if gradient <= self.tol:
            return f"L-BFGS converged: max |gradient| {gradient:.3g} <= tol={self.tol}"
        decrease = self.relative_decrease()
        if self.stalled or decrease <= _LBFGS_FTOL:
            return (
                "L-BFGS converged: relative decrease of the objective "
                f"{decrease:.3g} <= {_LBFGS_FTOL:.3g}"
            )
        return None

    def unmet(self) -> str:
        """The criteria, as the warning at ``max_iter`` words them."""
        return (
            f"converging (max |gradient| {self.gradient_max():.3g} > tol="
            f"{self.tol}, relative decrease of the objective "
            f"{self.relative_decrease():.3g} > {_LBFGS_FTOL:.3g})"
        )


def make_stepper(
    module,
    X,
    y,
    *,
    solver: str = "adam",
    learning_rate: float = 1e-3,
    alpha: float = 0.0,
    batch_size: int | str = "auto",
    shuffle: bool = True,
    generator: torch.Generator | None = None,
    loss: Callable = half_squared_error,
    schedule=None,
) -> Stepper:
    """The stepper of one module for ``solver``: :class:`LBFGSStepper` for
    ``"lbfgs"``, else :class:`FirstOrderStepper` (whose parameters these
    are). A fit plan's ``stepper_params`` are its keywords."""
    if solver == "lbfgs":
        return LBFGSStepper(module, X, y, alpha=alpha, loss=loss)
    return FirstOrderStepper(
        module,
        X,
        y,
        solver=solver,
        learning_rate=learning_rate,
        alpha=alpha,
        batch_size=batch_size,
        shuffle=shuffle,
        generator=generator,
        loss=loss,
        schedule=schedule,
    )
