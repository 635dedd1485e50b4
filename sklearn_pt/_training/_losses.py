"""What one training iteration optimises.

* :func:`~sklearn_pt.nn.half_squared_error` (defined in :mod:`sklearn_pt.nn`,
  whose stacked modules use it too), the loss of every estimator that trains
  with the squared error, and :func:`initial_loss`, the reference of the divergence
  checks;
* :func:`penalty`, the L2 penalty ``weight_decay / 2 * ||W||^2`` the loss
  curves include, each matrix's term optionally scaled (the optimisers
  apply its gradient as weight decay).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..nn import half_squared_error

__all__ = [
    "INITIAL_LOSS_ROWS",
    "half_squared_error",
    "initial_loss",
    "penalty",
]

INITIAL_LOSS_ROWS = 8_192
"""Rows on which the reference loss of the divergence checks is measured."""


def initial_loss(module, X, y, loss=None) -> float:
    """The reference of the divergence checks: the loss at initialisation on
    the first 8,192 rows (one small forward pass whatever ``n``)."""
    rows = slice(0, INITIAL_LOSS_ROWS)
    with torch.no_grad():
        return float((loss or half_squared_error)(module(X[rows]), y[rows]))


def penalty(decayed: Sequence[torch.Tensor], weight_decay: float, scales=None):
    """The L2 penalty ``weight_decay / 2 * sum_W scale_W ||W||^2`` over the
    ``decayed`` tensors (0.0 when there is none); ``scales`` holds one float
    per tensor (None: all 1)."""
    if weight_decay == 0.0 or not decayed:
        return 0.0
    if scales is None:
        scales = [1.0] * len(decayed)
    return (
        0.5
        * weight_decay
        * sum(
            scale * p.square().sum() for p, scale in zip(decayed, scales, strict=True)
        )
    )
