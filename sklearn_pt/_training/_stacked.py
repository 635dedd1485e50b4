"""The stacked stepper: one training iteration of ``K`` models stacked in one
module (each on the shared data or on its own), one optimiser over the
stacked tensors; its gradient comes from autograd or, where the module has
one, from a hand-derived backward pass (an optimisation tested against
autograd).

The optimisers are elementwise (SGD, Adam), so one optimiser over stacked
tensors is ``K`` independent optimisers: the stacked stepper takes, model by
model, the steps the first-order stepper would.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import torch

from ..nn import StackedModule
from ._epochs import EpochPlan
from ._losses import INITIAL_LOSS_ROWS, half_squared_error
from ._optimizers import make_optimizer
from ._steppers import FIRST_ORDER_SOLVERS, Stepper, _first_of, _hand_derived

__all__ = ["FixedEntries", "StackedStepper"]


class FixedEntries:
    """The entries of stacked parameters that training keeps as they are.

    Optimisers move entries that got a zero gradient (weight decay, momentum,
    Adam's moments), so masking gradients would not keep them fixed: after
    every optimiser step, :meth:`restore_` puts them back, bitwise.

    Parameters
    ----------
    parameters : sequence of Tensor
        Stacked parameters, leading dimension ``K`` (one slice per model).
    update_masks : sequence of (Tensor, bool Tensor)
        For some of them, the entries that may change (broadcastable to the
        parameter); the others may change everywhere.
    n_models : int
    """

    def __init__(self, parameters, update_masks, n_models):
        given = {id(param): mask for param, mask in update_masks}
        self.parameters = list(parameters)
        self.masks = []
        for p in self.parameters:
            mask = given.get(id(p))
            if mask is None:
                shape = (n_models,) + (1,) * (p.ndim - 1)
                mask = torch.ones(shape, dtype=torch.bool, device=p.device)
            self.masks.append(mask.clone())
        self.references = [p.detach().clone() for p in self.parameters]
        self._find_restored()

    def stop(self, models: Sequence[int]) -> None:
        """Keep every entry of ``models`` at its current value from now on."""
        for param, reference, mask in zip(
            self.parameters, self.references, self.masks, strict=True
        ):
            index = torch.as_tensor(list(models), dtype=torch.long, device=param.device)
            reference[index] = param.detach()[index]
            mask[index] = False
        self._find_restored()

    def _find_restored(self) -> None:
        """The parameters with entries to restore (those not all updated),
        each with its 0/1 mask of updated entries and its fixed values (zero
        where updated)."""
        self._restored = [
            (param, mask.to(param.dtype), reference.masked_fill(mask, 0.0))
            for param, reference, mask in zip(
                self.parameters, self.references, self.masks, strict=True
            )
            if not bool(mask.all())
        ]

    @torch.no_grad()
    def restore_(self) -> None:
        """Put the fixed entries back (after an optimiser step).

        ``param * updated + fixed`` is one pass, faster than ``torch.where``
        on CPU (:ref:`defaults_implementation`). It keeps the updated entries
        (a ``-0.0`` becomes ``0.0``) and puts back the fixed values bitwise,
        as long as the optimiser step left them finite (a non-finite step has
        already made that model diverge).
        """
        for param, updated, fixed in self._restored:
            torch.addcmul(fixed, param, updated, out=param)


class StackedStepper(Stepper):
    """One iteration of ``K`` models stacked in one module.

    The module is a :class:`~sklearn_pt.nn.StackedModule` (its losses, its
    outputs, the entries that may move, the penalty); when it is also a
    :class:`~sklearn_pt.nn.HandDerivedGradients` its hand-derived backward
    pass is used unless ``gradients="autograd"``, with the buffers of its
    ``make_workspace()`` kept for the whole fit.

    Parameters
    ----------
    module : StackedModule
        The stacked models, trained in place.
    X : Tensor of shape (n, ...) or (K, n, ...)
        Inputs as the module takes them: shared by all models, or one set
        per model (``per_model_data=True``).
    y : Tensor of shape (n, ...) or (K, n, ...)
        Targets, likewise.
    solver : {"adam", "sgd", "gd"}
    learning_rate : float or sequence of K floats
        One step size, or (``"gd"``) one per model.
    alpha, batch_size, shuffle
        As for :class:`FirstOrderStepper` (the penalty is ``alpha / (2 n)``
        times ``squared_weight_norms()``, or where the module has
        ``penalty_scales`` times ``squared_weight_norms(scales)`` with the
        scales at the initial weights).
    generators : sequence of K torch.Generator
        Model ``k``'s generator of its mini-batch orders.
    per_model_data : bool, default=False
        Whether ``X`` and ``y`` hold one data set per model (full-batch
        steps only: every such sweep takes them).
    gradients : {"auto", "manual", "autograd"}, default="auto"
        ``"auto"`` uses the module's hand-derived backward pass when it has
        one.
    schedule : sequence of (X, y, learning_rate), optional
        For ``solver="gd"``: iteration ``i`` takes one step on the ``i``-th
        data (per model, with ``per_model_data``) with the ``i``-th step
        size(s).
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
        generators,
        per_model_data=False,
        gradients="auto",
        schedule=None,
    ):
        if not isinstance(module, StackedModule):
            raise TypeError(
                f"StackedStepper trains a StackedModule; a {type(module).__name__} "
                "lacks some of n_models, stacked_losses, predict, update_masks, "
                "squared_weight_norms, add_weight_decay_, make_workspace."
            )
        if solver not in FIRST_ORDER_SOLVERS:
            raise ValueError(
                f"Stacked training supports solver in {FIRST_ORDER_SOLVERS}; got "
                f"solver={solver!r}. Fit such estimators one by one."
            )
        X, y, learning_rate = _first_of(schedule, solver, X, y, learning_rate)
        self.schedule, self.iteration = schedule, 0
        self.module, self.X, self.y = module, X, y
        self.solver = solver
        self._set_learning_rate(learning_rate)
        self.n_models = len(generators)
        self.per_model_data = per_model_data
        n_samples = X.shape[1] if per_model_data else X.shape[0]
        self.weight_decay = alpha / n_samples
        self._set_penalty_scales()
        self.manual = _hand_derived(module, gradients)
        # The hand-derived pass's reusable buffers, kept here (not in the
        # module) for the whole fit, when the module has any.
        workspace = module.make_workspace() if self.manual else None
        self._gradient_keywords = {} if workspace is None else {"workspace": workspace}
        # Weight decay is added to the gradients: one parameter group.
        groups = [{"params": [p for p in module.parameters() if p.requires_grad]}]
        self.optimizer = make_optimizer(groups, solver, self._optimizer_rate)
        self.plan = EpochPlan(
            n_samples,
            batch_size,
            solver,
            shuffle=shuffle,
            generators=generators,
            device=X.device,
            dtype=X.dtype,
        )
        if per_model_data and not self.plan.full_batch:
            raise ValueError(
                "Stacked training on one data set per model takes full-batch "
                "steps (solver='gd'); got mini-batches."
            )
        self._outputs = None
        self.fixed = FixedEntries(
            groups[0]["params"], module.update_masks(), self.n_models
        )

    def _set_learning_rate(self, learning_rate) -> None:
        """One step size, or one per model (a sequence of K, ``"gd"`` only:
        each model's gradient is scaled by its own, the optimiser's is 1)."""
        if isinstance(learning_rate, Real):
            self.learning_rate, self._rates = float(learning_rate), None
            self._optimizer_rate = self.learning_rate
            return
        if self.solver != "gd":
            raise ValueError("One step size per model needs solver='gd'.")
        self._rates = torch.as_tensor(
            learning_rate, dtype=self.X.dtype, device=self.X.device
        )
        self.learning_rate = math.nan
        self._optimizer_rate = 1.0

    def model_learning_rate(self, k: int) -> float:
        return self.learning_rate if self._rates is None else float(self._rates[k])

    def _all_models(self, data: torch.Tensor) -> torch.Tensor:
        """All rows of ``data`` for every model, ``(K, n, ...)``."""
        if self.per_model_data:
            return data
        return data.expand(self.n_models, *data.shape)

    @staticmethod
    def _gather(data: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """The shared rows ``index[k]`` for each model, ``(K, batch, ...)``."""
        return data.index_select(0, index.reshape(-1)).view(
            *index.shape, *data.shape[1:]
        )

    def _set_penalty_scales(self) -> None:
        """Each model's scale of each weight's penalty, from the module's
        ``penalty_scales`` (at the initial weights, on the training inputs)
        where it has that method, as :class:`FirstOrderStepper` takes them:
        ``self.decay`` is what the gradients get (``alpha / n``, or one
        ``(K,)`` coefficient per weight)."""
        self.penalty_scales, self.decay = None, self.weight_decay
        scales = getattr(self.module, "penalty_scales", None)
        if self.weight_decay == 0.0 or scales is None:
            return
        self.penalty_scales = scales(self.X)
        self.decay = [
            (self.weight_decay * scale).to(self.X.dtype)
            for scale in self.penalty_scales
        ]

    def _penalty(self):
        if self.weight_decay == 0.0:
            return 0.0
        if self.penalty_scales is None:
            return 0.5 * self.weight_decay * self.module.squared_weight_norms()
        norms = self.module.squared_weight_norms(self.penalty_scales)
        return 0.5 * self.weight_decay * norms

    def _take_step(self, inputs, targets) -> torch.Tensor:
        if self.manual:
            losses = self.module.squared_error_gradients_(
                inputs,
                targets,
                weight_decay=self.decay,
                **self._gradient_keywords,
            )
        else:
            self.optimizer.zero_grad()
            losses = self.module.stacked_losses(inputs, targets)
            losses.sum().backward()
            losses = losses.detach()
            if self.weight_decay:
                self.module.add_weight_decay_(self.decay)
        if self._rates is not None:
            for param in self.fixed.parameters:
                shape = (self.n_models,) + (1,) * (param.ndim - 1)
                param.grad.mul_(self._rates.view(shape))
        self.optimizer.step()
        self.fixed.restore_()
        return losses

    def step(self, active) -> list[float]:
        self._outputs = None
        if self.schedule is not None:
            self.X, self.y, rate = self.schedule[self.iteration]
            self._set_learning_rate(rate)
            for group in self.optimizer.param_groups:
                group["lr"] = self._optimizer_rate
        self.iteration += 1
        if self.plan.full_batch:
            with torch.no_grad():
                start_penalty = self._penalty()
            losses = self._take_step(self._all_models(self.X), self._all_models(self.y))
            return (losses + start_penalty).tolist()
        losses = [
            self._take_step(self._gather(self.X, index), self._gather(self.y, index))
            for index in self.plan.batches(active)
        ]
        with torch.no_grad():
            return (self.plan.mean(losses) + self._penalty()).tolist()

    def stop_models(self, models) -> None:
        self.fixed.stop(models)

    def _first_rows(self, data):
        rows = slice(0, INITIAL_LOSS_ROWS)
        return data[:, rows] if self.per_model_data else data[rows]

    def _losses(self, X, y) -> torch.Tensor:
        outputs = self.module.predict(self._all_models(X))
        return half_squared_error(
            outputs.flatten(1), self._all_models(y).flatten(1), dim=1
        )

    def initial_losses(self) -> list[float]:
        # Loss plus penalty, as each step's loss (see _ModuleStepper).
        with torch.no_grad():
            losses = self._losses(self._first_rows(self.X), self._first_rows(self.y))
            return (losses + self._penalty()).tolist()

    def first_rows_and_outputs(self, k: int):
        rows = self._all_models(self._first_rows(self.X))
        if self._outputs is None:
            self._outputs = self.module.predict(rows)
        return rows[k], self._outputs[k]

    def current_losses(self) -> list[float]:
        return self._losses(self.X, self.y).tolist()
