"""Callbacks of :func:`~sklearn_pt._training.fit_loop`.

A callback implements any of five hooks (the base class's do nothing):

* ``on_train_begin(loop)``;
* ``on_step_end(loop)`` once after each iteration of the stepper, before the
  models' own hooks (e.g. to act on the stacked weights of all models);
* ``on_iteration_end(loop, k, loss)`` after model ``k``'s iteration: return a
  stop reason (a string: converged) or a
  :class:`~sklearn_pt.exceptions.DivergenceError` to stop that model, None
  to let it go on;
* ``on_model_stop(loop, k, reason)`` when a callback stopped model ``k``
  (converged);
* ``on_train_end(loop)``: final checks (``loop.fail(k, error)``) and
  warnings.

Each estimator declares its list; :func:`default_callbacks` is the one of
the estimators trained to convergence.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import torch

from ..exceptions import ConvergenceWarning, DivergenceError

__all__ = [
    "Callback",
    "DivergenceCheck",
    "EarlyStopping",
    "FunctionCallback",
    "LossHistory",
    "MaxIterWarning",
    "PrintLog",
    "default_callbacks",
    "divergence_message",
]

_BLOW_UP_FACTOR = 1e6
"""A loss this many times its value at initialisation stops training at once."""
_FINAL_RISE_FACTOR = 10.0
"""A final loss this many times its value at initialisation counts as diverged."""
_WARN_STACKLEVEL = 4
"""From ``warnings.warn`` in a hook, past the hook, fit_loop and FitPlan.run
(or the sweep's helper): the line of the estimator that trains."""


class Callback:
    """Base class: hooks that do nothing (see the module's docstring)."""

    def on_train_begin(self, loop) -> None:
        pass

    def on_step_end(self, loop) -> None:
        pass

    def on_iteration_end(self, loop, k: int, loss: float):
        return None

    def on_model_stop(self, loop, k: int, reason: str) -> None:
        pass

    def on_train_end(self, loop) -> None:
        pass


def divergence_message(
    loss, initial_loss, iteration, solver, name, value, *, collapsed=False
) -> str:
    """The message of a :class:`~sklearn_pt.exceptions.DivergenceError`: what
    happened, with which setting, and the fix (``collapsed``: the run ended
    above its initial loss with outputs that no longer depend on ``X``)."""
    if solver == "lbfgs":
        fix = (
            "L-BFGS does not use a learning rate: standardise X and y, increase "
            "alpha, or use solver='adam'"
        )
    else:
        fix = (
            f"Lower {name} (e.g. to {value / 10:g}) or standardise X and y; "
            "sklearn_pt.model_selection.stable_step_size(estimator, X, y) finds "
            "a value that fits"
        )
    start = (
        f"from {initial_loss:.4g} at initialisation "
        if math.isfinite(initial_loss)
        else ""
    )
    what = (
        "Training collapsed: the predictions no longer depend on X (every hidden "
        "unit inactive on the training data, where the gradient vanishes) and "
        "the loss rose"
        if collapsed
        else "Training diverged: the loss went"
    )
    return (
        f"{what} {start}to {loss:.4g} at iteration {iteration} with "
        f"solver={solver!r} and {name}={value:g}. {fix}. The estimator keeps "
        "the state it had before fit."
    )


def constant_outputs(inputs: torch.Tensor, outputs: torch.Tensor) -> bool:
    """Whether ``outputs`` do not depend on ``inputs`` (the first rows of the
    training data and the model's outputs on them; identical rows prove
    nothing)."""
    if inputs.shape[0] < 2 or torch.equal(inputs, inputs[:1].expand_as(inputs)):
        return False
    spread = outputs.amax(dim=0) - outputs.amin(dim=0)
    scale = outputs.abs().amax(dim=0) + 1.0
    tiny = 16 * torch.finfo(outputs.dtype).eps
    return bool(torch.all(spread <= tiny * scale))


class DivergenceCheck(Callback):
    """Stop a model whose loss diverges; after training, fail those that
    ended far above their start or where gradient descent cannot move.

    During training: a non-finite loss, or (``relative=True``) one a million
    times the loss at initialisation (on the first 8,192 rows), is a
    :class:`~sklearn_pt.exceptions.DivergenceError`. After training, with
    ``relative=True``, a last loss ten times the initial one is too, and
    outputs that no longer depend on the inputs (every hidden unit inactive,
    zero gradient) are a "collapsed" error when the loss rose. A fit that
    ends without learning anything, its loss lower, is the estimator's to
    warn about (:func:`~sklearn_pt._training.warn_if_collapsed`).

    Parameters
    ----------
    learning_rate_name : str, default="learning_rate_init"
        The step-size parameter the message names.
    relative : bool, default=True
        Apply the checks relative to the initial loss (only a nonnegative
        loss, such as the squared error, has a meaningful ratio).
    initial_losses : sequence of float, optional
        The references, when the caller has them (else the stepper's).
    final : bool, default=True
        Run the checks after training (``False``: only those during it).
    """

    def __init__(
        self,
        learning_rate_name="learning_rate_init",
        *,
        relative=True,
        initial_losses=None,
        final=True,
    ):
        self.learning_rate_name = learning_rate_name
        self.relative = relative
        self.initial_losses = initial_losses
        self.final = final

    def on_train_begin(self, loop) -> None:
        if not self.relative:
            self.references = [math.nan] * loop.n_models
        elif self.initial_losses is not None:
            self.references = list(self.initial_losses)
        else:
            self.references = loop.stepper.initial_losses()

    def error(self, loop, k, loss, iteration, collapsed=False) -> DivergenceError:
        stepper = loop.stepper
        value = stepper.model_learning_rate(k)
        return DivergenceError(
            divergence_message(
                loss,
                self.references[k],
                iteration,
                stepper.solver,
                self.learning_rate_name,
                value,
                collapsed=collapsed,
            ),
            step_size_name=None
            if stepper.solver == "lbfgs"
            else self.learning_rate_name,
            step_size=value,
        )

    def on_iteration_end(self, loop, k, loss):
        if not math.isfinite(loss) or loss > _BLOW_UP_FACTOR * self.references[k]:
            return self.error(loop, k, loss, loop.iteration)
        return None

    def on_train_end(self, loop) -> None:
        if not self.final:
            return
        for k, result in enumerate(loop.results):
            if loop.failed(k) or not result.loss_curve:
                continue
            curve, reference = result.loss_curve, self.references[k]
            if curve[-1] > _FINAL_RISE_FACTOR * reference:
                loop.fail(k, self.error(loop, k, curve[-1], result.n_iter))
                continue
            if curve[-1] > reference and constant_outputs(
                *loop.stepper.first_rows_and_outputs(k)
            ):
                error = self.error(loop, k, curve[-1], result.n_iter, collapsed=True)
                loop.fail(k, error)


class EarlyStopping(Callback):
    """Stop each model once its solver's criterion is met (``tol`` and
    ``n_iter_no_change`` for the first-order solvers, scipy's L-BFGS-B rules
    for ``"lbfgs"``; see the steppers' ``convergence_criterion``)."""

    def __init__(self, tol: float = 1e-4, n_iter_no_change: int = 10):
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change

    def on_train_begin(self, loop) -> None:
        self.criteria = [
            loop.stepper.convergence_criterion(
                k, tol=self.tol, n_iter_no_change=self.n_iter_no_change
            )
            for k in range(loop.n_models)
        ]

    def on_iteration_end(self, loop, k, loss):
        return self.criteria[k].stop_reason(loss)


class MaxIterWarning(Callback):
    """One :class:`~sklearn_pt.exceptions.ConvergenceWarning` for the models
    that ran ``max_iter`` iterations before ``stopping``'s criterion."""

    def __init__(self, stopping: EarlyStopping):
        self.stopping = stopping

    def on_train_end(self, loop) -> None:
        running = [
            k
            for k, result in enumerate(loop.results)
            if not loop.failed(k) and not result.converged
        ]
        if not running:
            return
        solver, unmet = loop.stepper.solver, self.stopping.criteria[running[0]].unmet()
        count = (
            f"{len(running)} of {loop.n_models} networks: " if loop.n_models > 1 else ""
        )
        warnings.warn(
            f"{count}solver={solver!r} reached max_iter={loop.max_iter} iterations "
            f"before {unmet}. Increase max_iter, or raise tol to stop earlier.",
            ConvergenceWarning,
            stacklevel=_WARN_STACKLEVEL,
        )


class PrintLog(Callback):
    """Print each iteration's loss, and why training stops."""

    def on_iteration_end(self, loop, k, loss):
        prefix = f"Model {k}, i" if loop.n_models > 1 else "I"
        print(f"{prefix}teration {loop.iteration}, loss = {loss:.8f}")
        return None

    def on_model_stop(self, loop, k, reason) -> None:
        if reason:
            print(f"{reason}. Stopping.")


class FunctionCallback(Callback):
    """A plain ``function(iteration, loss)`` after each iteration (of the one
    model); returning True stops training, counted as converged."""

    def __init__(self, function: Callable[[int, float], bool | None]):
        self.function = function

    def on_iteration_end(self, loop, k, loss):
        return "" if self.function(loop.iteration, loss) else None


class LossHistory(Callback):
    """Each model's loss at every iteration, the last weights' included:
    ``fitted_history(k)`` gives ``{"iteration": 0..n_iter, "train_loss": ...}``
    (the loss curve, whose entry ``i`` is the loss before step ``i + 1`` for
    ``"gd"``, followed by the loss at the final weights)."""

    def on_train_end(self, loop) -> None:
        self.final = loop.stepper.current_losses()
        self.results = loop.results

    def adopt(self, other: LossHistory, k: int) -> None:
        """Take model ``k`` of another (stacked) run as this one's model 0."""
        self.final, self.results = other.final[k : k + 1], other.results[k : k + 1]

    def fitted_history(self, k: int = 0) -> dict:
        result = self.results[k]
        return {
            "iteration": np.arange(result.n_iter + 1),
            "train_loss": np.array([*result.loss_curve, self.final[k]]),
        }


def default_callbacks(
    *, tol: float = 1e-4, n_iter_no_change: int = 10, verbose: int = 0, extra=()
) -> list[Callback]:
    """The callbacks of a fit trained to convergence: the divergence checks,
    the log (``verbose``), the ``extra`` ones, early stopping and the warning
    at ``max_iter``, in that order."""
    stopping = EarlyStopping(tol, n_iter_no_change)
    log = [PrintLog()] if verbose else []
    return [DivergenceCheck(), *log, *extra, stopping, MaxIterWarning(stopping)]
