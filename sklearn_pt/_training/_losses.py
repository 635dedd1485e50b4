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

from .._chunks import chunk_slices
from ..nn import half_squared_error

__all__ = [
    "INITIAL_LOSS_ROWS",
    "half_squared_error",
    "initial_loss",
    "penalty",
]

INITIAL_LOSS_ROWS = 8_192
"""Rows on which the reference loss of the divergence checks is measured."""


ROW_CHUNK_ELEMENTS = 2**23
"""A full-batch loss or gradient is taken on at most this many activations of
the widest layer (rows times width) at a time, its parts weighted by their
rows: the same mean (every loss here is a mean over the rows), without the
whole batch's activations and their gradients in memory at once (a 6400 x
6400 float32 layer holds 164 MB per array; :ref:`defaults_implementation`)."""


def widest_layer(module) -> int:
    """The most rows of any trained matrix of ``module`` (its widest layer's
    width), 1 when it has none."""
    widths = [
        p.shape[0] for p in module.parameters() if p.requires_grad and p.ndim == 2
    ]
    return max(widths, default=1)


def row_chunks(n_rows: int, width: int) -> list[slice]:
    """Consecutive row slices of at most ``ROW_CHUNK_ELEMENTS // width`` rows
    covering ``n_rows``: one slice when the whole batch fits."""
    return chunk_slices(n_rows, width, ROW_CHUNK_ELEMENTS)


def mean_loss(module, X, y, loss, *, backward: bool = False) -> torch.Tensor:
    """``loss(module(X), y)``, a mean over the rows, taken over
    :func:`row_chunks` of the rows and weighted by their share; with
    ``backward``, each part's gradient is added to the parameters' ``.grad``
    as it is taken (so only one part's graph is alive at a time). One chunk
    is the plain call. Returns the loss, detached."""
    n_rows = X.shape[0]
    chunks = row_chunks(n_rows, widest_layer(module))
    total = None
    for rows in chunks:
        part = loss(module(X[rows]), y[rows])
        if len(chunks) > 1:
            part = part * ((rows.stop - rows.start) / n_rows)
        if backward:
            part.backward()
        part = part.detach()
        total = part if total is None else total + part
    return total


def initial_loss(module, X, y, loss=None) -> float:
    """The reference of the divergence checks: the loss at initialisation on
    the first 8,192 rows (one small forward pass whatever ``n``)."""
    rows = slice(0, INITIAL_LOSS_ROWS)
    with torch.no_grad():
        return float(mean_loss(module, X[rows], y[rows], loss or half_squared_error))


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
