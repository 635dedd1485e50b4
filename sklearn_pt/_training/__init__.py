"""The training core under every estimator and sweep (private).

* :func:`fit_loop` (:mod:`._loop`) drives ``K >= 1`` models through a
  stepper, asking callbacks (:mod:`._callbacks`) when each stops;
* single-model steppers (:mod:`._steppers`: :class:`FirstOrderStepper`,
  :class:`LBFGSStepper`) and the stacked one (:mod:`._stacked`:
  :class:`StackedStepper`, :class:`FixedEntries`);
* :mod:`._optimizers`: SGD, Adam, plain gradient descent;
* :mod:`._epochs`: the epoch plan (batch sizes, per-model row orders) and
  the ``tol`` rule;
* :mod:`._losses`: the loss, the penalty, the divergence checks' reference;
* :class:`FitPlan` is the protocol between an estimator and the loop
  (``plan_fit``, ``run``, ``finish``, and ``stack`` for a stacked fit:
  :class:`StackedFit`, :func:`run_stacked`).
"""

from __future__ import annotations

from ._callbacks import (
    Callback,
    DivergenceCheck,
    EarlyStopping,
    FunctionCallback,
    LossHistory,
    MaxIterWarning,
    PrintLog,
    default_callbacks,
    divergence_message,
)
from ._collapse import NO_FIT_R2, warn_if_collapsed, warn_if_constant_features
from ._epochs import EpochPlan, ToleranceRule, resolve_batch_size
from ._loop import Loop, TrainingResult, fit_loop
from ._losses import INITIAL_LOSS_ROWS, half_squared_error, initial_loss, penalty
from ._optimizers import GradientDescent, make_optimizer
from ._plan import FitPlan, StackedFit, run_stacked
from ._stacked import FixedEntries, StackedStepper
from ._steppers import (
    FIRST_ORDER_SOLVERS,
    SOLVERS,
    FirstOrderStepper,
    LBFGSStepper,
    Stepper,
    make_stepper,
)

__all__ = [
    "FIRST_ORDER_SOLVERS",
    "INITIAL_LOSS_ROWS",
    "NO_FIT_R2",
    "SOLVERS",
    "Callback",
    "DivergenceCheck",
    "EarlyStopping",
    "EpochPlan",
    "FirstOrderStepper",
    "FitPlan",
    "FixedEntries",
    "FunctionCallback",
    "GradientDescent",
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
    "warn_if_collapsed",
    "warn_if_constant_features",
]
