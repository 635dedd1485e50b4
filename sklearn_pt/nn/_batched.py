"""Many partially trainable networks of the same shape, stacked as one module.

A sweep over the trainable proportion ``P`` and the seed trains ``K`` networks
that differ only in their initial weights and in which neurons are trainable.
:class:`BatchedPartiallyTrainableMLP` holds their weights as stacked tensors
``(K, out, in)`` and evaluates all of them with one :func:`torch.baddbmm` per
layer, so one optimiser step updates the ``K`` networks at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ._partial import PartiallyTrainableMLP

__all__ = ["BatchedPartiallyTrainableMLP", "batched_linear"]


class BatchedPartiallyTrainableMLP(nn.Module):
    """``K`` ReLU networks with partly trainable hidden layers, stacked.

    Network ``k`` computes the same function as the
    :class:`~sklearn_pt.nn.PartiallyTrainableMLP` it was stacked from: hidden
    layers ``relu(x @ W_l[k].T + b_l[k])`` and a linear readout. Every weight
    is one stacked :class:`~torch.nn.Parameter` holding all rows, trainable and
    frozen; the per-network masks say which rows may change, and
    :meth:`restore_fixed_` puts back the rows that may not (frozen neurons, and
    every weight of a network that has stopped training) after an optimiser
    step. Because the networks share no weights, the gradient of the sum of
    their losses gives each network exactly the gradient of its own loss.

    Parameters
    ----------
    hidden_weights : sequence of Tensor of shape (K, out_l, in_l)
        Initial weights of the hidden layers.
    hidden_biases : sequence of Tensor of shape (K, out_l)
        Initial additive biases of the hidden layers.
    trainable_masks : sequence of bool Tensor of shape (K, out_l)
        Trainable neurons of each hidden layer of each network.
    readout_weight : Tensor of shape (K, n_outputs, out_last)
    readout_bias : Tensor of shape (K, n_outputs)

    Attributes
    ----------
    hidden_weights, hidden_biases : ParameterList
    readout_weight, readout_bias : Parameter
    n_models : int
        ``K``.

    See Also
    --------
    sklearn_pt.nn.PartiallyTrainableMLP : One such network.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn import PartiallyTrainableMLP
    >>> from sklearn_pt.nn._batched import BatchedPartiallyTrainableMLP
    >>> nets = [PartiallyTrainableMLP(3, hidden_layer_sizes=(8,),
    ...                               trainable_proportion=p, random_state=0)
    ...         for p in (0.0, 0.5)]
    >>> batch = BatchedPartiallyTrainableMLP.from_modules(nets)
    >>> x = torch.ones(4, 3) / 3 ** 0.5
    >>> out = batch(x.expand(2, 4, 3))
    >>> out.shape
    torch.Size([2, 4, 1])
    >>> bool(torch.allclose(out[1], nets[1](x)))
    True
    """

    def __init__(
        self,
        hidden_weights: Sequence[torch.Tensor],
        hidden_biases: Sequence[torch.Tensor],
        trainable_masks: Sequence[torch.Tensor],
        readout_weight: torch.Tensor,
        readout_bias: torch.Tensor,
    ) -> None:
        super().__init__()
        if not len(hidden_weights) == len(hidden_biases) == len(trainable_masks):
            raise ValueError(
                "hidden_weights, hidden_biases and trainable_masks need one entry "
                f"per hidden layer; got {len(hidden_weights)}, {len(hidden_biases)} "
                f"and {len(trainable_masks)}."
            )
        self.hidden_weights = nn.ParameterList(
            nn.Parameter(w.detach().clone()) for w in hidden_weights
        )
        self.hidden_biases = nn.ParameterList(
            nn.Parameter(b.detach().clone()) for b in hidden_biases
        )
        self.readout_weight = nn.Parameter(readout_weight.detach().clone())
        self.readout_bias = nn.Parameter(readout_bias.detach().clone())
        for depth, mask in enumerate(trainable_masks):
            mask = torch.as_tensor(mask, dtype=torch.bool, device=readout_bias.device)
            self.register_buffer(f"trainable_mask_{depth}", mask)
        self._n_layers = len(hidden_weights)
        self._reference = None
        self._update_masks = None
        self._has_fixed_entries = False

    @classmethod
    def from_modules(
        cls, modules: Sequence[PartiallyTrainableMLP]
    ) -> BatchedPartiallyTrainableMLP:
        """Stack networks of identical shapes (their current weights).

        Parameters
        ----------
        modules : sequence of PartiallyTrainableMLP
            On one device, in one dtype, with the same layer sizes.

        Returns
        -------
        BatchedPartiallyTrainableMLP
            Network ``k`` is a copy of ``modules[k]``.
        """
        shapes = {_shapes(m) for m in modules}
        if len(shapes) != 1:
            raise ValueError(
                "All networks stacked together must have the same layer sizes, "
                f"number of inputs and of outputs; got {len(shapes)} different "
                "shapes. Stack each shape separately."
            )
        n_layers = len(modules[0].hidden_layers)
        layers = [[m.hidden_layers[i] for m in modules] for i in range(n_layers)]
        return cls(
            hidden_weights=[torch.stack([lay.weight for lay in ls]) for ls in layers],
            hidden_biases=[torch.stack([lay.bias for lay in ls]) for ls in layers],
            trainable_masks=[
                torch.stack([lay.trainable_mask for lay in ls]) for ls in layers
            ],
            readout_weight=torch.stack([m.readout.weight.detach() for m in modules]),
            readout_bias=torch.stack([m.readout.bias.detach() for m in modules]),
        )

    @property
    def n_models(self) -> int:
        return self.readout_bias.shape[0]

    @property
    def trainable_masks(self) -> list[torch.Tensor]:
        """Per hidden layer, the bool ``(K, out_l)`` mask of trainable neurons."""
        return [getattr(self, f"trainable_mask_{i}") for i in range(self._n_layers)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs ``(K, n, n_outputs)`` of network ``k`` on ``x[k]``.

        Parameters
        ----------
        x : Tensor of shape (K, n, n_features)
            One batch of inputs per network (``x.expand(K, -1, -1)`` to give the
            same inputs to all).
        """
        for weight, bias in zip(self.hidden_weights, self.hidden_biases, strict=True):
            x = F.relu(batched_linear(x, weight, bias))
        return batched_linear(x, self.readout_weight, self.readout_bias)

    def decayed_parameters(self) -> list[nn.Parameter]:
        """The weight matrices (what the L2 penalty applies to)."""
        return [*self.hidden_weights, self.readout_weight]

    def bias_parameters(self) -> list[nn.Parameter]:
        """The biases (not penalised)."""
        return [*self.hidden_biases, self.readout_bias]

    def squared_weight_norms(self) -> torch.Tensor:
        """Per network, ``||W||^2`` summed over its trainable weight rows.

        The frozen rows are left out, as they are in the penalty of a single
        :class:`~sklearn_pt.nn.PartiallyTrainableMLP` (they are buffers there).

        Returns
        -------
        Tensor of shape (K,)
        """
        total = self.readout_weight.square().sum((1, 2))
        for weight, mask in zip(self.hidden_weights, self.trainable_masks, strict=True):
            total = total + (weight.square().sum(2) * mask).sum(1)
        return total

    def start_training(self) -> None:
        """Record the current weights as the values fixed rows are kept at."""
        masks = [mask.clone() for mask in self.trainable_masks]  # updated in place
        ones = torch.ones(self.n_models, 1, dtype=torch.bool, device=masks[0].device)
        self._reference = [p.detach().clone() for p in self._ordered_parameters()]
        self._update_masks = [
            *(m.unsqueeze(2) for m in masks),
            ones.unsqueeze(2),
            *masks,
            ones,
        ]
        self._has_fixed_entries = not all(bool(m.all()) for m in masks)

    def stop_models(self, models: Sequence[int]) -> None:
        """Keep every weight of ``models`` at its current value from now on."""
        if self._reference is None:
            raise RuntimeError("Call start_training() before stop_models().")
        index = torch.as_tensor(list(models), dtype=torch.long)
        index = index.to(self.readout_bias.device)
        for param, reference, mask in zip(
            self._ordered_parameters(), self._reference, self._update_masks, strict=True
        ):
            reference[index] = param.detach()[index]
            mask[index] = False
        self._has_fixed_entries = True

    @torch.no_grad()
    def restore_fixed_(self) -> None:
        """Put back the frozen rows and the weights of stopped networks.

        Call after every optimiser step: optimisers move entries that got a zero
        gradient (weight decay, momentum, Adam's moments), so masking the
        gradient would not keep them fixed. The restored entries are bitwise
        equal to their values at :meth:`start_training` (or :meth:`stop_models`).
        """
        if not self._has_fixed_entries:
            return
        for param, reference, mask in zip(
            self._ordered_parameters(), self._reference, self._update_masks, strict=True
        ):
            param.copy_(torch.where(mask, param, reference))

    def _ordered_parameters(self) -> list[nn.Parameter]:
        return [
            *self.hidden_weights,
            self.readout_weight,
            *self.hidden_biases,
            self.readout_bias,
        ]

    @torch.no_grad()
    def copy_to_modules(self, modules: Sequence[PartiallyTrainableMLP]) -> None:
        """Write network ``k``'s weights into ``modules[k]`` (same shapes)."""
        for k, module in enumerate(modules):
            for layer, weight, bias in zip(
                module.hidden_layers,
                self.hidden_weights,
                self.hidden_biases,
                strict=True,
            ):
                index = layer.trainable_index
                layer.weight_trainable.copy_(weight[k][index])
                layer.bias_trainable.copy_(bias[k][index])
            module.readout.weight.copy_(self.readout_weight[k])
            module.readout.bias.copy_(self.readout_bias[k])


class _BatchedLinear(torch.autograd.Function):
    """``x[k] @ weight[k].T + bias[k]`` for every network ``k``, with a
    backward pass laid out for speed.

    The values are those of ``torch.baddbmm`` and its autograd backward; two
    products are computed in a faster layout (measured on one CPU thread,
    ``K=16``, a batch of 200, width 512, d=20, float32): the weight gradient as
    ``(x^T g)^T`` rather than ``g^T x`` (58 us instead of 127 us per network),
    and, for a single output, the input gradient as the broadcast product
    ``g * weight`` rather than a ``bmm`` with an inner dimension of 1 (10 us
    instead of 24 us).
    """

    @staticmethod
    def forward(x, weight, bias):
        return torch.baddbmm(bias.unsqueeze(1), x, weight.mT)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight, _ = inputs
        ctx.save_for_backward(x, weight)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad * weight if weight.shape[1] == 1 else torch.bmm(grad, weight)
        if ctx.needs_input_grad[1]:
            grad_weight = torch.bmm(x.mT, grad).mT.contiguous()
        if ctx.needs_input_grad[2]:
            grad_bias = grad.sum(1)
        return grad_x, grad_weight, grad_bias


def batched_linear(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor
) -> torch.Tensor:
    """``x[k] @ weight[k].T + bias[k]`` for each ``k``: the batched
    :func:`torch.nn.functional.linear`.

    Parameters
    ----------
    x : Tensor of shape (K, n, in_features)
    weight : Tensor of shape (K, out_features, in_features)
    bias : Tensor of shape (K, out_features)

    Returns
    -------
    Tensor of shape (K, n, out_features)

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn._batched import batched_linear
    >>> x, w, b = torch.ones(2, 3, 4), torch.ones(2, 5, 4), torch.zeros(2, 5)
    >>> batched_linear(x, w, b).shape
    torch.Size([2, 3, 5])
    """
    return _BatchedLinear.apply(x, weight, bias)


def _shapes(module: PartiallyTrainableMLP) -> tuple:
    layers = tuple(
        (layer.out_features, layer.in_features) for layer in module.hidden_layers
    )
    reference = module.readout.weight
    return layers, tuple(reference.shape), reference.dtype, reference.device
