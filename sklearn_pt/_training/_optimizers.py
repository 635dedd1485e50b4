"""The optimisers of the first-order solvers: torch's SGD (Nesterov momentum
0.9, as :class:`~sklearn.neural_network.MLPRegressor`) and Adam, and plain
gradient descent. All are elementwise, so one optimiser over stacked tensors
is ``K`` independent optimisers."""

from __future__ import annotations

import torch

__all__ = ["GradientDescent", "make_optimizer"]


def _fused_supported(parameters) -> bool:
    """Whether torch's fused SGD/Adam kernels apply to all ``parameters``."""
    return all(
        p.device.type in ("cpu", "cuda") and p.dtype in (torch.float32, torch.float64)
        for p in parameters
    )


def make_optimizer(groups: list[dict], solver: str, learning_rate: float):
    """The optimiser of a first-order ``solver`` over parameter ``groups``:
    torch's Adam, torch's SGD with Nesterov momentum 0.9, or for ``"gd"``
    :class:`GradientDescent` (torch's plain SGD update)."""
    # The fused kernels update all parameters in one call: measured 10% faster
    # per epoch than the default for-loop implementation on CPU.
    fused = _fused_supported([p for group in groups for p in group["params"]])
    if solver == "adam":
        return torch.optim.Adam(groups, lr=learning_rate, fused=fused)
    if solver == "sgd":
        return torch.optim.SGD(
            groups, lr=learning_rate, momentum=0.9, nesterov=True, fused=fused
        )
    return GradientDescent(groups, lr=learning_rate)


class GradientDescent:
    """Plain gradient descent over parameter groups, ``p <- p - lr (grad +
    weight_decay p)``: the update of ``torch.optim.SGD`` without momentum,
    bitwise (tested), without its per-step Python overhead (about 45 us per
    step on CPU, more than the arithmetic of a stacked first-layer GD step
    at width 4).

    Parameters
    ----------
    groups : list of dict
        ``{"params": [...]}``, optionally with ``"weight_decay"`` and
        ``"lr"``.
    lr : float
        The step size of the groups that do not set their own.
    """

    def __init__(self, groups: list[dict], lr: float) -> None:
        self.param_groups = [
            {"lr": lr, "weight_decay": 0.0, **group, "params": list(group["params"])}
            for group in groups
        ]

    @torch.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            rate, decay = group["lr"], group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = param.grad.add(param, alpha=decay) if decay else param.grad
                if abs(rate) <= torch.finfo(param.dtype).max:
                    param.add_(grad, alpha=-rate)
                else:  # beyond the dtype: the step overflows, as torch's does
                    param.sub_(grad * rate)

    def zero_grad(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = None
