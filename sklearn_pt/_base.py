"""What every torch-backed sklearn_pt estimator shares beyond the engine:
portable pickling, state kept on a failed ``fit``, and tags."""

from __future__ import annotations

import copy
import functools
import warnings

import torch

from ._engine import resolve_device
from .exceptions import DeviceFallbackWarning

__all__ = ["TorchEstimatorMixin", "keep_state_on_error"]


def keep_state_on_error(fit):
    """Decorate ``fit`` so that an exception restores the estimator's attributes.

    A ``fit`` that fails (bad input, a diverging loss, an interrupt) leaves a
    fitted estimator exactly as it was, and an unfitted one unfitted.
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return wrapper


def _cpu_copy(module: torch.nn.Module) -> torch.nn.Module:
    """A deep copy of ``module`` whose tensors are on the CPU.

    Tensors are copied to the CPU directly (through the ``deepcopy`` memo), so
    no second copy is made on the accelerator.
    """
    memo = {}
    for tensor in (*module.parameters(), *module.buffers()):
        cpu = tensor.detach().cpu()
        if isinstance(tensor, torch.nn.Parameter):
            cpu = torch.nn.Parameter(cpu.clone(), requires_grad=tensor.requires_grad)
        memo[id(tensor)] = cpu
    return copy.deepcopy(module, memo)


def _on_cpu(module: torch.nn.Module) -> bool:
    return all(
        t.device.type == "cpu" for t in (*module.parameters(), *module.buffers())
    )


class TorchEstimatorMixin:
    """Mixin for estimators holding fitted ``torch.nn.Module`` attributes.

    * Pickles hold CPU tensors, so a model fitted on a GPU loads on a CPU-only
      machine. On loading, the modules go back to ``device_`` when it exists
      there; otherwise they stay on the CPU, ``device_`` becomes ``cpu`` and a
      :class:`~sklearn_pt.exceptions.DeviceFallbackWarning` says so.
    * Results are bitwise reproducible on the CPU; on other devices some torch
      kernels are not, hence the ``non_deterministic`` tag.
    """

    def __getstate__(self):
        state = super().__getstate__()
        for key, value in state.items():
            if isinstance(value, torch.nn.Module) and not _on_cpu(value):
                state[key] = _cpu_copy(value)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        device = getattr(self, "device_", None)
        if device is None or device.type == "cpu":
            return
        try:
            resolve_device(str(device))
        except ValueError:
            warnings.warn(
                f"This {type(self).__name__} was fitted on {device}, which is not "
                "available here; it was loaded on the CPU and will predict there.",
                DeviceFallbackWarning,
                stacklevel=2,
            )
            self.device_ = torch.device("cpu")
            return
        for value in vars(self).values():
            if isinstance(value, torch.nn.Module):
                value.to(device)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.device != "cpu"
        return tags
