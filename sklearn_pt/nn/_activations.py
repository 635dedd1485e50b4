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

__all__ = [
    "ACTIVATIONS",
    "HERMITE_DEGREES",
    "activation_derivative",
    "activation_function",
    "activation_second_derivative",
]


def _square(z: torch.Tensor) -> torch.Tensor:
    return z * z


def _hermite2(z: torch.Tensor) -> torch.Tensor:
    return z + 0.5 * (z * z - 1.0)  # He_1 + He_2 / 2!


def _hermite3(z: torch.Tensor) -> torch.Tensor:
    return z + 0.5 * (z * z - 1.0) + (z**3 - 3.0 * z) / 6.0  # + He_3 / 3!


def _sincos(z: torch.Tensor) -> torch.Tensor:
    # E[e^{iz} He_k(z)] = i^k e^{-1/2}: |c_k| = e^{-1/2} / k! for every k.
    return torch.sin(z) + torch.cos(z)


ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": F.gelu,
    "relu": F.relu,
    "tanh": torch.tanh,
    "softplus": F.softplus,
    "quadratic": _square,
    "hermite2": _hermite2,
    "hermite3": _hermite3,
    "sincos": _sincos,
}
"""Named activations ``sigma``, applied elementwise: GeLU (the exact
``z * Phi(z)``), ReLU, tanh, softplus, ``z^2``, ``He_1 + He_2 / 2``,
``He_1 + He_2 / 2 + He_3 / 6`` and ``sin(z) + cos(z)``. ``"sincos"`` is
smooth and bounded and, unlike the others, has every Hermite coefficient
nonzero (``c_k = e^{-1/2} s_k / k!`` with signs ``s_k = 1, 1, -1, -1, 1,
...``), so every order of the second GD step exists for it
(:func:`sklearn_pt.theory.spike_count`): GeLU, ReLU and softplus are
``z/2`` plus an even function (no ``c_3, c_5, ...``) and tanh is odd (no
``c_2, c_4, ...``)."""

HERMITE_DEGREES: dict[str, int | None] = {
    "gelu": None,
    "relu": None,
    "tanh": None,
    "softplus": None,
    "quadratic": 2,
    "hermite2": 2,
    "hermite3": 3,
    "sincos": None,
}
"""Degree ``L`` of each activation's Hermite expansion (``None``: infinite),
the ``degree`` argument of :func:`sklearn_pt.theory.spike_count`."""


_SQRT_HALF = 0.5**0.5
_INV_SQRT_2PI = (2.0 * torch.pi) ** -0.5


def _sincos_derivative(z: torch.Tensor) -> torch.Tensor:
    return torch.cos(z) - torch.sin(z)


def _relu_derivative(z: torch.Tensor) -> torch.Tensor:
    return (z > 0).to(z.dtype)  # 0 at 0, as autograd's ReLU backward


def _tanh_derivative(z: torch.Tensor) -> torch.Tensor:
    return 1.0 - torch.tanh(z).square()


def _softplus_derivative(z: torch.Tensor) -> torch.Tensor:
    # F.softplus is the identity above its threshold 20, as its backward.
    return torch.where(z > 20.0, 1.0, torch.sigmoid(z))


def _gelu_derivative(z: torch.Tensor) -> torch.Tensor:
    cdf = 0.5 * (1.0 + torch.erf(z * _SQRT_HALF))
    return cdf + z * torch.exp(-0.5 * z * z) * _INV_SQRT_2PI


def _square_derivative(z: torch.Tensor) -> torch.Tensor:
    return 2.0 * z


def _hermite2_derivative(z: torch.Tensor) -> torch.Tensor:
    return 1.0 + z


def _hermite3_derivative(z: torch.Tensor) -> torch.Tensor:
    return 1.0 + z + 0.5 * (z * z - 1.0)


_DERIVATIVES = {  # keyed by the functions of ACTIVATIONS (tested: one for each)
    F.gelu: _gelu_derivative,
    F.relu: _relu_derivative,
    torch.tanh: _tanh_derivative,
    F.softplus: _softplus_derivative,
    _square: _square_derivative,
    _hermite2: _hermite2_derivative,
    _hermite3: _hermite3_derivative,
    _sincos: _sincos_derivative,
}


def activation_derivative(
    activation: Callable[[torch.Tensor], torch.Tensor],
) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """``sigma'`` for a named activation's function, None for any other
    callable (whose derivative autograd then takes).

    Parameters
    ----------
    activation : callable
        A value of :data:`ACTIVATIONS` or any elementwise function.

    Returns
    -------
    callable or None

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn import ACTIVATIONS
    >>> from sklearn_pt.nn._activations import activation_derivative
    >>> activation_derivative(ACTIVATIONS["quadratic"])(torch.tensor([1.5]))
    tensor([3.])
    >>> print(activation_derivative(torch.sin))
    None
    """
    try:
        return _DERIVATIVES.get(activation)
    except TypeError:  # an unhashable callable
        return None


_SECOND_DERIVATIVES = {  # keyed as _DERIVATIVES (tested: one for each)
    F.gelu: lambda z: torch.exp(-0.5 * z * z) * _INV_SQRT_2PI * (2.0 - z * z),
    F.relu: torch.zeros_like,  # 0 away from 0, as autograd's double backward
    torch.tanh: lambda z: -2.0 * torch.tanh(z) * _tanh_derivative(z),
    F.softplus: lambda z: torch.where(
        z > 20.0, 0.0, torch.sigmoid(z) * torch.sigmoid(-z)
    ),
    _square: lambda z: torch.full_like(z, 2.0),
    _hermite2: torch.ones_like,
    _hermite3: lambda z: 1.0 + z,
    _sincos: lambda z: -_sincos(z),
}


def activation_second_derivative(
    activation: Callable[[torch.Tensor], torch.Tensor],
) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """``sigma''`` for a named activation's function, None for any other
    callable (as :func:`activation_derivative`).

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn import ACTIVATIONS
    >>> from sklearn_pt.nn._activations import activation_second_derivative
    >>> activation_second_derivative(ACTIVATIONS["hermite3"])(torch.tensor([1.5]))
    tensor([2.5000])
    >>> print(activation_second_derivative(torch.sin))
    None
    """
    try:
        return _SECOND_DERIVATIVES.get(activation)
    except TypeError:  # an unhashable callable
        return None


def activation_function(
    activation: str | Callable[[torch.Tensor], torch.Tensor],
) -> Callable[[torch.Tensor], torch.Tensor]:
    """The function of a registry name, or the callable itself.

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn._activations import activation_function
    >>> activation_function("sincos")(torch.tensor([0.0]))
    tensor([1.])
    >>> activation_function(torch.sin) is torch.sin
    True
    """
    return ACTIVATIONS[activation] if isinstance(activation, str) else activation
