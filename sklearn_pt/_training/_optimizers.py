"""The optimisers of the first-order solvers: torch's SGD (Nesterov momentum
0.9, as :class:`~sklearn.neural_network.MLPRegressor`) and Adam, and plain
gradient descent. All are elementwise, so one optimiser over stacked tensors
is ``K`` independent optimisers."""

from __future__ import annotations

import torch

__all__ = ["FusedAdam", "GradientDescent", "make_optimizer"]


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
    # The fused kernels update all parameters in one call, faster than the
    # default for-loop implementation (docs/defaults.rst, "How the code is
    # written").
    params = [p for group in groups for p in group["params"]]
    fused = _fused_supported(params)
    # One call of torch's fused kernel takes tensors of one device and dtype.
    uniform = len({(p.device, p.dtype) for p in params}) <= 1
    if solver == "adam" and fused and uniform and hasattr(torch, "_fused_adam_"):
        return FusedAdam(groups, lr=learning_rate)
    if solver == "adam":
        return torch.optim.Adam(groups, lr=learning_rate, fused=fused)
    if solver == "sgd":
        return torch.optim.SGD(
            groups, lr=learning_rate, momentum=0.9, nesterov=True, fused=fused
        )
    return GradientDescent(groups, lr=learning_rate)


class _ParameterGroups:
    """What the hand-written optimisers share with ``torch.optim``'s
    interface: ``param_groups`` (each group's ``"lr"`` and
    ``"weight_decay"`` filled in, editable between steps) and ``zero_grad``."""

    def __init__(self, groups: list[dict], lr: float) -> None:
        self.param_groups = [
            {"lr": lr, "weight_decay": 0.0, **group, "params": list(group["params"])}
            for group in groups
        ]

    def zero_grad(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = None


class GradientDescent(_ParameterGroups):
    """Plain gradient descent over parameter groups, ``p <- p - lr (grad +
    weight_decay p)``: the update of ``torch.optim.SGD`` without momentum,
    bitwise (tested), without its per-step Python overhead, which costs more
    than the arithmetic of a stacked first-layer GD step at width 4
    (:ref:`defaults_implementation`).

    Parameters
    ----------
    groups : list of dict
        ``{"params": [...]}``, optionally with ``"weight_decay"`` and
        ``"lr"``.
    lr : float
        The step size of the groups that do not set their own.
    """

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


class FusedAdam(_ParameterGroups):
    """Adam through torch's fused kernel, without ``torch.optim.Adam``'s
    per-step Python: the update of ``torch.optim.Adam(..., fused=True)``,
    bitwise (tested), for float32/float64 parameters on a CPU or GPU.

    ``torch.optim.Adam.step`` regroups the parameters by device and dtype and
    walks its state dictionaries at every step, which costs as much as the
    update itself at the size of a stacked sweep
    (:ref:`defaults_implementation`). Here the state lives in lists built at
    the first step, and a step is two calls, the step count's increment and
    ``torch._fused_adam_`` (the kernel ``torch.optim.Adam`` calls).
    :func:`make_optimizer` falls back to ``torch.optim.Adam`` where that
    kernel is absent or the parameters differ in device or dtype.

    Parameters
    ----------
    groups : list of dict
        ``{"params": [...]}``, optionally with ``"weight_decay"`` (L2, added
        to the gradient as torch's Adam does) and ``"lr"``; ``"lr"`` and
        ``"weight_decay"`` may be changed between steps in
        :attr:`param_groups`.
    lr : float
        The step size of the groups that do not set their own.
    betas : (float, float), default=(0.9, 0.999)
    eps : float, default=1e-8
    """

    def __init__(self, groups: list[dict], lr: float, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(groups, lr)
        self.betas, self.eps = betas, eps
        self._state: list[tuple] | None = None

    @staticmethod
    def _moments(group: dict) -> tuple[list, list, list]:
        """First and second moments and step counts of the group's
        parameters (one float32 scalar each, as torch's fused Adam keeps
        them), created at the first step."""
        params = group["params"]
        return (
            [torch.zeros_like(p) for p in params],
            [torch.zeros_like(p) for p in params],
            [torch.zeros((), dtype=torch.float32, device=p.device) for p in params],
        )

    @torch.no_grad()
    def step(self) -> None:
        if self._state is None:
            self._state = [self._moments(group) for group in self.param_groups]
        for group, moments in zip(self.param_groups, self._state, strict=True):
            params = group["params"]
            grads = [p.grad for p in params]
            if any(grad is None for grad in grads):  # as torch: skip those
                kept = [i for i, grad in enumerate(grads) if grad is not None]
                params, grads = [params[i] for i in kept], [grads[i] for i in kept]
                moments = tuple([values[i] for i in kept] for values in moments)
            if not params:
                continue
            means, squares, steps = moments
            torch._foreach_add_(steps, 1)
            torch._fused_adam_(
                params,
                grads,
                means,
                squares,
                [],
                steps,
                amsgrad=False,
                lr=group["lr"],
                beta1=self.betas[0],
                beta2=self.betas[1],
                weight_decay=group["weight_decay"],
                eps=self.eps,
                maximize=False,
                grad_scale=None,
                found_inf=None,
            )
