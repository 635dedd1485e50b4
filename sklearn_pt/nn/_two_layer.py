"""The network of the two-step studies: a trained first layer ``W`` and a
fixed second layer ``a``, ``f(x) = a^T sigma(W x) / sqrt(N)``."""

from __future__ import annotations

import math

import torch
from torch import nn

from ._activations import activation_function

__all__ = ["FeatureMap", "StackedTwoLayerNetwork", "TwoLayerNetwork"]


class FeatureMap(nn.Module):
    """``x -> sigma(W x)``, the hidden layer; ``W`` is the trained parameter;
    ``activation`` is a name of :data:`ACTIVATIONS` or an elementwise callable."""

    def __init__(self, weight: torch.Tensor, activation):
        super().__init__()
        self.weight = nn.Parameter(weight)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return activation_function(self.activation)(x @ self.weight.T)


class TwoLayerNetwork(nn.Module):
    """``f(x) = a^T sigma(W x) / sqrt(N)`` with a fixed second layer ``a``."""

    def __init__(self, weight: torch.Tensor, readout: torch.Tensor, activation):
        super().__init__()
        self.feature_map = FeatureMap(weight, activation)
        self.register_buffer("readout", readout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        width = self.readout.shape[0]
        return self.feature_map(x) @ self.readout / math.sqrt(width)


class StackedTwoLayerNetwork(nn.Module):
    """``K`` :class:`TwoLayerNetwork` s of one shape, stacked: first layers
    ``W`` of shape ``(K, N, d)`` (the trained parameter), second layers ``a``
    of shape ``(K, N)``; network ``k`` computes
    ``a[k]^T sigma(W[k] x) / sqrt(N)`` on its inputs ``x[k]``. It has the
    protocol of :class:`~sklearn_pt._training.StackedStepper`, with the
    per-network loss ``stacked_loss(outputs, y) -> (K,)``."""

    def __init__(self, weight, readout, activation, stacked_loss):
        super().__init__()
        self.weight = nn.Parameter(weight)
        self.register_buffer("readout", readout)
        self.activation = activation
        self.stacked_loss = stacked_loss

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = activation_function(self.activation)(torch.bmm(x, self.weight.mT))
        outputs = torch.bmm(hidden, self.readout.unsqueeze(2)).squeeze(2)
        return outputs / math.sqrt(self.readout.shape[1])

    def stacked_losses(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.stacked_loss(self(x), y)

    @torch.no_grad()
    def predict(self, x: torch.Tensor) -> torch.Tensor:
        return self(x)
