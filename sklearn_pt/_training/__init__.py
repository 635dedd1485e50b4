"""The training core under every estimator and sweep (private).

* :func:`fit_loop` drives ``K >= 1`` models through a stepper
  (:mod:`._steppers`: :class:`FirstOrderStepper`, :class:`LBFGSStepper`,
  :class:`StackedStepper`), asking callbacks (:mod:`._callbacks`) when each
  stops;
* :mod:`._objective` holds the loss, the penalty, the epoch plan (batch
  sizes, per-model row orders) and the ``tol`` rule;
* :class:`FitPlan` is the protocol between an estimator and the loop
  (``plan_fit``, ``run``, ``finish``, and ``stack`` for a stacked fit:
  :class:`StackedFit`, :func:`run_stacked`).
"""

from __future__ import annotations

from ._callbacks import (
    STUCK_MESSAGE,
    Callback,
    DivergenceCheck,
    EarlyStopping,
    EvalSetRecorder,
    FunctionCallback,
    LossHistory,
    MaxIterWarning,
    PrintLog,
    default_callbacks,
    divergence_message,
)
from ._loop import Loop, TrainingResult, fit_loop
from ._objective import (
    INITIAL_LOSS_ROWS,
    EpochPlan,
    ToleranceRule,
    half_squared_error,
    initial_loss,
    penalty,
    resolve_batch_size,
)
from ._plan import FitPlan, StackedFit, run_stacked
from ._steppers import (
    FIRST_ORDER_SOLVERS,
    FirstOrderStepper,
    FixedEntries,
    LBFGSStepper,
    StackedStepper,
    Stepper,
    make_optimizer,
    make_stepper,
)

__all__ = [
    "FIRST_ORDER_SOLVERS",
    "INITIAL_LOSS_ROWS",
    "STUCK_MESSAGE",
    "Callback",
    "DivergenceCheck",
    "EarlyStopping",
    "EpochPlan",
    "EvalSetRecorder",
    "FirstOrderStepper",
    "FitPlan",
    "FixedEntries",
    "FunctionCallback",
    "LBFGSStepper",
    "Loop",
    "LossHistory",
    "MaxIterWarning",
    "PrintLog",
    "StackedFit",
    "StackedStepper",
    "Stepper",
    "ToleranceRule",
    "TrainingResult",
    "default_callbacks",
    "divergence_message",
    "fit_loop",
    "half_squared_error",
    "initial_loss",
    "make_optimizer",
    "make_stepper",
    "penalty",
    "resolve_batch_size",
    "run_stacked",
]
