"""Over which rows an iteration trains, and when it has converged.

* :class:`EpochPlan`, the batch sizes, their weights in the epoch's mean
  loss and each model's row order, drawn from its own generator;
* :class:`ToleranceRule`, the ``tol`` / ``n_iter_no_change`` convergence
  criterion of the first-order solvers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

__all__ = [
    "EpochPlan",
    "ToleranceRule",
    "resolve_batch_size",
]


def resolve_batch_size(batch_size: int | str, solver: str, n_samples: int) -> int:
    """Rows per step: all of them for ``"gd"``, ``min(200, n)`` for
    ``"auto"``, and never more than ``n_samples``."""
    if solver == "gd":
        return n_samples
    if batch_size == "auto":
        return min(200, n_samples)
    return min(batch_size, n_samples)


class EpochPlan:
    """The mini-batches of one epoch, for ``K >= 1`` models.

    Parameters
    ----------
    n_samples : int
        Training rows.
    batch_size : int or "auto"
        As the estimators' parameter (see :func:`resolve_batch_size`).
    solver : str
        ``"gd"`` takes all rows in one step.
    shuffle : bool
        Draw a new row order every epoch.
    generators : sequence of torch.Generator
        Model ``k``'s CPU generator for its row orders.
    device, dtype
        Where the orders and the batch weights live.

    Attributes
    ----------
    batch_size : int
        Rows per step.
    full_batch : bool
        Whether one step takes every row (no order is drawn then).
    weights : Tensor of shape (n_batches,)
        Each batch's share of the rows: the epoch's loss is the weighted sum
        of its batch losses (as in :class:`~sklearn.neural_network.MLPRegressor`).
    """

    def __init__(
        self, n_samples, batch_size, solver, *, shuffle, generators, device, dtype
    ):
        self.n_samples = n_samples
        self.batch_size = resolve_batch_size(batch_size, solver, n_samples)
        self.full_batch = self.batch_size == n_samples
        self.shuffle = shuffle
        self.generators = list(generators)
        self.device = device
        sizes = [self.batch_size] * (n_samples // self.batch_size)
        if n_samples % self.batch_size:
            sizes.append(n_samples % self.batch_size)
        self.weights = torch.tensor(sizes, dtype=dtype, device=device) / n_samples
        self._identity = torch.arange(n_samples)

    def orders(self, active: torch.Tensor) -> torch.Tensor:
        """Row order ``(K, n)`` of this epoch, on the device: one permutation
        per running model from its generator (stopped models draw nothing, as
        they would not run)."""
        n_models = len(self.generators)
        if not self.shuffle:
            return self._identity.expand(n_models, -1).to(self.device)
        rows = [
            torch.randperm(self.n_samples, generator=generator)
            if running
            else self._identity
            for generator, running in zip(self.generators, active.tolist(), strict=True)
        ]
        return torch.stack(rows).to(self.device)

    def batches(self, active: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """This epoch's ``(K, batch)`` row indices, batch by batch."""
        return self.orders(active).split(self.batch_size, dim=1)

    def mean(self, batch_losses: Sequence[torch.Tensor]) -> torch.Tensor:
        """The epoch's loss from its batch losses (each of shape (K,) or ())."""
        return self.weights @ torch.stack(list(batch_losses))


@dataclass
class ToleranceRule:
    """The convergence criterion of the first-order solvers, for one model:
    stop once the loss has not improved by ``tol`` on the best loss so far
    for ``n_iter_no_change`` consecutive iterations."""

    tol: float = 0.0
    n_iter_no_change: int = 10
    best_loss: float = math.inf
    no_improvement: int = 0

    def converged(self, loss: float) -> bool:
        """Record ``loss``; whether the stopping criterion is met."""
        improved = loss <= self.best_loss - self.tol
        self.no_improvement = 0 if improved else self.no_improvement + 1
        self.best_loss = min(self.best_loss, loss)
        return self.no_improvement >= self.n_iter_no_change

    def stop_reason(self, loss: float) -> str | None:
        """Record ``loss``; why training stops now, or None."""
        if self.converged(loss):
            return (
                f"Training loss did not improve more than tol={self.tol} for "
                f"{self.n_iter_no_change} consecutive iterations"
            )
        return None

    def unmet(self) -> str:
        """The criterion, as the warning at ``max_iter`` words it."""
        return f"the training loss stopped improving by tol={self.tol}"
