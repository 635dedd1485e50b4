"""A fit, planned: the protocol between an estimator and the training loop.

Every torch-backed estimator's ``fit`` is ``plan = self.plan_fit(X, y)``, then
``plan.complete(plan.run())``: :meth:`plan_fit` validates the data and builds
the module, its training tensors, the stepper and the callbacks (no training
yet); :meth:`FitPlan.run` trains (one :func:`~sklearn_pt._training.fit_loop`,
or a closed-form solve); ``finish`` sets the fitted attributes from the
outcome. A sweep that trains many plans at once (a stacked stepper) replaces
``run`` and completes each plan with its model's outcome: it needs nothing
else from the estimator. The callables take the plan, so that such a sweep
may give equal plans one copy of the training tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from ..exceptions import DivergenceError
from ._loop import TrainingResult, fit_loop

__all__ = ["FitPlan"]


@dataclass
class FitPlan:
    """What one ``fit`` trains, on what, how, and what it does with the result.

    Attributes
    ----------
    module : torch.nn.Module
        The network to train (in place).
    finish : callable
        ``finish(plan, result)`` sets the estimator's fitted attributes from
        the :class:`TrainingResult` and returns the estimator.
    stepper : callable, optional
        ``stepper(plan)`` builds the stepper of the gradient training (built
        only when :meth:`run` runs, so that a sweep that stacks the plans
        builds none); None when the fit is a closed-form solve.
    closed_form : callable, optional
        ``closed_form(plan)`` fits without gradient training and returns the
        result (used when ``stepper`` is None).
    max_iter : int
    callbacks : sequence of Callback
    X, y : Tensor, optional
        The training tensors the module sees (preprocessing applied).
    generator : torch.Generator, optional
        The generator of the mini-batch orders.
    stepper_params : dict
        Keywords of :func:`~sklearn_pt._training.make_stepper` (solver,
        learning rate, penalty, batches): what a stacked sweep needs to train
        equal plans together.
    stacking : type, optional
        A class whose ``from_modules(modules)`` stacks such modules for a
        :class:`~sklearn_pt._training.StackedStepper` and whose
        ``copy_to_modules(modules)`` writes the trained weights back; None
        when the estimator's fits cannot be stacked.
    """

    module: torch.nn.Module
    finish: Callable[[FitPlan, TrainingResult], object]
    stepper: Callable[[FitPlan], object] | None = None
    closed_form: Callable[[FitPlan], TrainingResult] | None = None
    max_iter: int = 0
    callbacks: Sequence = ()
    X: torch.Tensor | None = None
    y: torch.Tensor | None = None
    generator: torch.Generator | None = None
    stepper_params: dict = field(default_factory=dict)
    stacking: type | None = None

    @property
    def trains(self) -> bool:
        """Whether the fit trains by gradient (else it is a closed-form solve)."""
        return self.stepper is not None

    def run(self) -> TrainingResult:
        """Train; the result, or raise the DivergenceError that ended it."""
        if not self.trains:
            return self.closed_form(self)
        (outcome,) = fit_loop(
            self.stepper(self), max_iter=self.max_iter, callbacks=self.callbacks
        )
        if isinstance(outcome, DivergenceError):
            raise outcome
        return outcome

    def complete(self, result: TrainingResult):
        """Set the estimator's fitted attributes from ``result``; the
        estimator."""
        return self.finish(self, result)
