"""The training core under every estimator and sweep (private).

* :func:`fit_loop` drives ``K >= 1`` models through a stepper
  (:mod:`._steppers`: :class:`FirstOrderStepper`, :class:`LBFGSStepper`,
  :class:`StackedStepper`), asking callbacks (:mod:`._callbacks`) when each
  stops;
* :mod:`._objective` holds the loss, the penalty, the epoch plan (batch
  sizes, per-model row orders) and the ``tol`` rule;
* :class:`FitPlan` is the protocol between an estimator and the loop
  (``plan_fit``, ``run``, ``finish``), which the stacked sweeps use too;
* :func:`train_module` is the one-module fit: a stepper, callbacks, one loop,
  the error raised.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..exceptions import DivergenceError
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
from ._plan import FitPlan
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
    "train_module",
]


def train_module(
    module: torch.nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    max_iter: int = 200,
    callbacks: Sequence[Callback] | None = None,
    **stepper_params,
) -> TrainingResult:
    """Train the trainable parameters of ``module`` on ``(X, y)`` in place.

    Parameters
    ----------
    module : torch.nn.Module
        Its parameters with ``requires_grad=True`` are trained; buffers and
        frozen parameters are left bitwise unchanged.
    X, y : torch.Tensor
        Training data, already on the module's device and dtype.
    max_iter : int, default=200
        Maximum number of iterations: epochs for the mini-batch solvers, steps
        for ``"gd"``, L-BFGS iterations for ``"lbfgs"`` (each one line search of
        usually one and at most 26 evaluations of the objective and its
        gradient, retried once if it fails), like ``maxiter`` of scipy's
        L-BFGS-B in :class:`~sklearn.neural_network.MLPRegressor`.
    callbacks : sequence of Callback, optional
        What decides when training stops, checks and reports it; the
        default is :func:`default_callbacks` (divergence checks, early
        stopping with ``tol=1e-4``, the warning at ``max_iter``).
    **stepper_params
        ``solver`` (``"sgd"``: mini-batch SGD with Nesterov momentum 0.9, as
        :class:`~sklearn.neural_network.MLPRegressor`; ``"adam"``; ``"gd"``:
        plain full-batch gradient descent; ``"lbfgs"``: full-batch L-BFGS
        with a strong-Wolfe line search), ``learning_rate_init``, ``alpha``
        (L2 penalty ``alpha / (2 n) * ||W||^2`` on parameters with ``ndim >=
        2``), ``batch_size``, ``shuffle``, ``generator`` (CPU generator of
        the mini-batch orders) and ``loss``: see :func:`make_stepper`.

    Returns
    -------
    TrainingResult

    Raises
    ------
    DivergenceError
        When the :class:`DivergenceCheck` (or another callback) ends the fit
        with one. The module's weights are then not usable and the caller
        must discard it.
    """
    trainable = [p for p in module.parameters() if p.requires_grad]
    if not trainable:
        loss = stepper_params.get("loss", half_squared_error)
        with torch.no_grad():
            value = float(loss(module(X), y))
        return TrainingResult(loss_curve=[value], converged=True)
    stepper = make_stepper(module, X, y, **stepper_params)
    if callbacks is None:
        callbacks = default_callbacks()
    (outcome,) = fit_loop(stepper, max_iter=max_iter, callbacks=callbacks)
    if isinstance(outcome, DivergenceError):
        raise outcome
    return outcome
