"""The squared loss of every estimator that trains with the squared error."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["half_squared_error"]


def half_squared_error(
    prediction: torch.Tensor, target: torch.Tensor, dim=None
) -> torch.Tensor:
    """``0.5 * mean((prediction - target) ** 2)``, scikit-learn's squared loss.

    Parameters
    ----------
    prediction, target : Tensor
        Of one shape.
    dim : int or tuple of int, optional
        The dimensions to average over (e.g. ``1`` for ``K`` stacked models'
        ``(K, n)`` outputs: one loss per model); all of them by default.

    Returns
    -------
    Tensor
        A scalar, or one value per index of the other dimensions.

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn import half_squared_error
    >>> half_squared_error(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0]))
    tensor(2.5000)
    >>> half_squared_error(torch.tensor([[1.0], [3.0]]), torch.zeros(2, 1), dim=1)
    tensor([0.5000, 4.5000])
    """
    if dim is None:
        return 0.5 * F.mse_loss(prediction, target)
    return 0.5 * (prediction - target).square().mean(dim)
