"""``train_module``: the one-module fit the training tests drive (a stepper,
callbacks, one loop, the error raised), what ``FitPlan.run`` does for an
estimator."""

from __future__ import annotations

import torch

from sklearn_pt._training import (
    TrainingResult,
    default_callbacks,
    fit_loop,
    half_squared_error,
    make_stepper,
)
from sklearn_pt.exceptions import DivergenceError


def train_module(module, X, y, *, max_iter=200, callbacks=None, **stepper_params):
    """Train the trainable parameters of ``module`` on ``(X, y)`` in place.

    ``stepper_params`` are :func:`~sklearn_pt._training.make_stepper`'s
    keywords; ``callbacks`` default to
    :func:`~sklearn_pt._training.default_callbacks`. A module without
    trainable parameters gets its loss and ``converged=True``. Raises the
    DivergenceError that ended the fit.
    """
    if "learning_rate_init" in stepper_params:
        stepper_params["learning_rate"] = stepper_params.pop("learning_rate_init")
    if not any(p.requires_grad for p in module.parameters()):
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
