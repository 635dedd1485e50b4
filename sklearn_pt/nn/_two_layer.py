"""The network of the two-step studies: a trained first layer ``W`` and a
fixed second layer ``a``, ``f(x) = a^T sigma(W x) / sqrt(N)``."""

from __future__ import annotations

import math

import torch
from torch import nn

from ._activations import activation_function

__all__ = ["FeatureMap", "TwoLayerNetwork"]


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
