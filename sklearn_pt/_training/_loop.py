"""The one training loop: :func:`fit_loop` drives ``K >= 1`` models.

Everything the loop does beside stepping is a callback
(:mod:`sklearn_pt._training._callbacks`): early stopping, the divergence
checks, the warning at ``max_iter``, the printed log, recorders. The loop
itself only steps, records each model's loss curve, asks the callbacks
after each model's iteration whether it stops, and stops it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from ..exceptions import DivergenceError

__all__ = ["Loop", "TrainingResult", "fit_loop"]


@dataclass
class TrainingResult:
    """What training reports for one model.

    Attributes
    ----------
    loss_curve : list of float
        The training objective (data loss plus penalty) of each iteration: for
        the mini-batch solvers the mean batch loss over the epoch (as in
        :class:`~sklearn.neural_network.MLPRegressor`), for ``"gd"`` the
        full-batch loss at the start of the step, for ``"lbfgs"`` the
        full-batch objective at the iterate the iteration accepted (so the
        last value is the objective of the returned parameters).
    n_iter : int
        Number of iterations run.
    converged : bool
        Whether a callback (the stopping criterion, or the caller's) ended
        training before ``max_iter``.
    """

    loss_curve: list[float] = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False


@dataclass
class Loop:
    """The state callbacks see.

    Attributes
    ----------
    stepper : Stepper
    max_iter : int
    callbacks : list of Callback
    results : list of TrainingResult
        Per model, its loss curve so far.
    outcomes : list of TrainingResult or DivergenceError
        Per model, its result, or the error that ended it (set by
        :meth:`fail`).
    iteration : int
        The current iteration (0 before the first).
    """

    stepper: object
    max_iter: int
    callbacks: list
    results: list[TrainingResult]
    outcomes: list
    iteration: int = 0

    @property
    def n_models(self) -> int:
        return len(self.results)

    def failed(self, k: int) -> bool:
        """Whether model ``k`` ended in an error."""
        return isinstance(self.outcomes[k], DivergenceError)

    def fail(self, k: int, error: DivergenceError) -> None:
        """End model ``k`` with ``error`` (after training, from a callback's
        ``on_train_end``)."""
        self.outcomes[k] = error


def fit_loop(
    stepper, *, max_iter: int, callbacks: Sequence = ()
) -> list[TrainingResult | DivergenceError]:
    """Train the ``K`` models of ``stepper`` for at most ``max_iter`` iterations.

    After each iteration, every callback's ``on_step_end`` runs once; then,
    for each model still training, its loss is
    appended to its curve and the callbacks are asked in order
    (``on_iteration_end``): the first that returns a stop reason (a string,
    possibly empty: converged) or a :class:`DivergenceError` stops that model,
    and the others are not asked. Stopped models are handed to
    ``stepper.stop_models`` and keep their weights; the loop ends when none
    trains. Then every callback's ``on_train_end`` runs (final checks,
    warnings).

    Parameters
    ----------
    stepper : Stepper
        See :class:`~sklearn_pt._training._steppers.Stepper`.
    max_iter : int
    callbacks : sequence of Callback

    Returns
    -------
    list of TrainingResult or DivergenceError
        Per model; the caller decides whether to raise the error (a single
        fit) or to keep the other models (a sweep).
    """
    n_models = stepper.n_models
    results = [TrainingResult() for _ in range(n_models)]
    loop = Loop(stepper, max_iter, list(callbacks), results, list(results))
    for callback in loop.callbacks:
        callback.on_train_begin(loop)
    active = torch.ones(n_models, dtype=torch.bool)
    for iteration in range(1, max_iter + 1):
        loop.iteration = iteration
        losses = stepper.step(active)
        for callback in loop.callbacks:
            callback.on_step_end(loop)
        stopped = []
        for k in active.nonzero().flatten().tolist():
            result = results[k]
            result.loss_curve.append(losses[k])
            result.n_iter = iteration
            verdict = _first_verdict(loop, k, losses[k])
            if verdict is None:
                continue
            stopped.append(k)
            if isinstance(verdict, DivergenceError):
                loop.outcomes[k] = verdict
                continue
            result.converged = True
            for callback in loop.callbacks:
                callback.on_model_stop(loop, k, verdict)
        if stopped:
            active[stopped] = False
            if not active.any():
                break
            stepper.stop_models(stopped)
    for callback in loop.callbacks:
        callback.on_train_end(loop)
    return loop.outcomes


def _first_verdict(loop, k, loss):
    for callback in loop.callbacks:
        verdict = callback.on_iteration_end(loop, k, loss)
        if verdict is not None:
            return verdict
    return None
