"""The one registry of named activations.

A name means one function everywhere in the library: ``"quadratic"`` is
``z^2`` (Montanari and Wang's quadratic network), while the
Hermite-normalised polynomials of Moniri and Hassani's two-step analysis have
their own names, ``"hermite2"`` and ``"hermite3"``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

__all__ = ["ACTIVATIONS", "HERMITE_DEGREES"]


def _square(z: torch.Tensor) -> torch.Tensor:
    return z * z


def _hermite2(z: torch.Tensor) -> torch.Tensor:
    return z + 0.5 * (z * z - 1.0)  # He_1 + He_2 / 2!


def _hermite3(z: torch.Tensor) -> torch.Tensor:
    return z + 0.5 * (z * z - 1.0) + (z**3 - 3.0 * z) / 6.0  # + He_3 / 3!


ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": F.gelu,
    "relu": F.relu,
    "tanh": torch.tanh,
    "softplus": F.softplus,
    "quadratic": _square,
    "hermite2": _hermite2,
    "hermite3": _hermite3,
}
"""Named activations ``sigma``, applied elementwise: GeLU (the exact
``z * Phi(z)``), ReLU, tanh, softplus, ``z^2``, ``He_1 + He_2 / 2`` and
``He_1 + He_2 / 2 + He_3 / 6``."""

HERMITE_DEGREES: dict[str, int | None] = {
    "gelu": None,
    "relu": None,
    "tanh": None,
    "softplus": None,
    "quadratic": 2,
    "hermite2": 2,
    "hermite3": 3,
}
"""Degree ``L`` of each activation's Hermite expansion (``None``: infinite),
the ``degree`` argument of :func:`sklearn_pt.theory.spike_count`."""
