"""A fit, planned: the protocol between an estimator and the training loop.

Every torch-backed estimator's ``fit`` is ``plan = self.plan_fit(X, y)``, then
``plan.complete(plan.run())``: :meth:`plan_fit` validates the data and builds
the module, its training tensors, the stepper's keywords and the callbacks
(no training yet); :meth:`FitPlan.run` trains (one
:func:`~sklearn_pt._training.fit_loop`, or a closed-form solve); ``finish``
sets the fitted attributes from the outcome.

A stackable estimator also sets the plan's ``stack``: given plans of its
class that differ only in the estimator's ``_stacked_parameters``, it returns
a :class:`StackedFit` (one stacked module, the arguments of its
:class:`~sklearn_pt._training.StackedStepper`, the callbacks, and how each
model's trained state is handed back to its plan). :func:`run_stacked` trains
such plans together with one :func:`fit_loop` and completes each; it needs
nothing else from the estimator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from ..exceptions import DivergenceError
from ._loop import TrainingResult, fit_loop
from ._stacked import StackedStepper
from ._steppers import make_stepper

__all__ = ["FitPlan", "StackedFit", "run_stacked"]


@dataclass
class StackedFit:
    """What a plan's ``stack(plans)`` returns: ``K`` plans as one training.

    Attributes
    ----------
    module : StackedModule
        The ``K`` models stacked (:class:`~sklearn_pt.nn.StackedModule`).
    stepper_args : dict
        The arguments of :class:`~sklearn_pt._training.StackedStepper` after
        the module (``X``, ``y``, ``generators``, the solver's keywords).
    max_iter : int
    callbacks : sequence of Callback
        Callbacks that follow ``K`` models.
    hand_back : callable
        ``hand_back(outcomes)`` (one TrainingResult or DivergenceError per
        model) writes each model's trained state (its weights, what its
        recorders saw) into its plan, so that ``plan.complete(outcome)`` sets
        the estimator's attributes as its own ``fit`` would.
    """

    module: torch.nn.Module
    stepper_args: dict
    max_iter: int
    callbacks: Sequence
    hand_back: Callable[[list], None]


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
    stepper_params : dict
        Keywords of :func:`~sklearn_pt._training.make_stepper` (``solver``,
        ``learning_rate``, ``alpha``, ``batch_size``, ``shuffle``, ``loss``,
        ``schedule``) for every estimator: :meth:`run` builds the stepper
        from them.
    closed_form : callable, optional
        ``closed_form(plan)`` fits without gradient training and returns the
        result; None when the fit trains by gradient.
    max_iter : int
    callbacks : sequence of Callback
    X, y : Tensor, optional
        The training tensors the module sees (preprocessing applied).
    generator : torch.Generator, optional
        The generator of the mini-batch orders.
    stack : callable, optional
        ``stack(plans)`` stacks plans of this estimator's class (this one
        among them) into one :class:`StackedFit`; None when the fit cannot be
        stacked.
    """

    module: torch.nn.Module
    finish: Callable[[FitPlan, TrainingResult], object]
    stepper_params: dict = field(default_factory=dict)
    closed_form: Callable[[FitPlan], TrainingResult] | None = None
    max_iter: int = 0
    callbacks: Sequence = ()
    X: torch.Tensor | None = None
    y: torch.Tensor | None = None
    generator: torch.Generator | None = None
    stack: Callable[[Sequence[FitPlan]], StackedFit] | None = None

    @property
    def trains(self) -> bool:
        """Whether the fit trains by gradient (else it is a closed-form solve)."""
        return self.closed_form is None

    def run(self) -> TrainingResult:
        """Train; the result, or raise the DivergenceError that ended it."""
        if not self.trains:
            return self.closed_form(self)
        stepper = make_stepper(
            self.module, self.X, self.y, generator=self.generator, **self.stepper_params
        )
        (outcome,) = fit_loop(stepper, max_iter=self.max_iter, callbacks=self.callbacks)
        if isinstance(outcome, DivergenceError):
            raise outcome
        return outcome

    def complete(self, result: TrainingResult):
        """Set the estimator's fitted attributes from ``result``; the
        estimator."""
        return self.finish(self, result)


def run_stacked(plans: Sequence[FitPlan], *, callbacks: Sequence = ()) -> list:
    """Train ``plans`` together and complete each: what ``K`` calls of
    ``plan.complete(plan.run())`` would give, to rounding.

    The plans that train by gradient and have a ``stack`` are stacked by the
    first one's and trained by one :func:`fit_loop`; the others (closed-form
    solves, and plans whose estimator judged stacking not worth it, e.g. a
    large two-step grid on a CPU) run one by one. A model that diverges (in
    training, or when its plan completes) gives its
    :class:`~sklearn_pt.exceptions.DivergenceError` and the others train on.

    Parameters
    ----------
    plans : sequence of FitPlan
        Plans of estimators of one class that differ only in the class's
        ``_stacked_parameters``.
    callbacks : sequence of Callback, default=()
        More callbacks of the stacked training, after the stacking's own:
        they follow its ``K`` models (``loop.stepper.module`` is the stacked
        module) and may stop each.

    Returns
    -------
    list
        Per plan, what ``complete`` returned (the fitted estimator) or the
        DivergenceError.
    """
    trained = [k for k, plan in enumerate(plans) if plan.trains and plan.stack]
    outcomes = [None if k in trained else _run(plan) for k, plan in enumerate(plans)]
    if trained:
        stacked = plans[trained[0]].stack([plans[k] for k in trained])
        stepper = StackedStepper(stacked.module, **stacked.stepper_args)
        results = fit_loop(
            stepper,
            max_iter=stacked.max_iter,
            callbacks=[*stacked.callbacks, *callbacks],
        )
        stacked.hand_back(results)
        for k, result in zip(trained, results, strict=True):
            outcomes[k] = result
    fitted = []
    for plan, outcome in zip(plans, outcomes, strict=True):
        if not isinstance(outcome, DivergenceError):
            try:
                outcome = plan.complete(outcome)
            except DivergenceError as error:  # e.g. a readout that overflowed
                outcome = error
        fitted.append(outcome)
    return fitted


def _run(plan: FitPlan):
    """``plan.run()``, or the DivergenceError that ended it."""
    try:
        return plan.run()
    except DivergenceError as error:
        return error
