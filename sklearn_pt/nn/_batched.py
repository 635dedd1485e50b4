"""Many partially trainable networks of the same shape, stacked as one module.

A sweep over the trainable proportion ``P`` and the seed trains ``K`` networks
that differ only in their initial weights and in which neurons are trainable.
:class:`BatchedPartiallyTrainableMLP` holds their weights as stacked tensors
``(K, out, in)`` and evaluates all of them with one :func:`torch.baddbmm` per
layer, so one optimiser step updates the ``K`` networks at once. Its training
step (:meth:`BatchedPartiallyTrainableMLP.squared_error_gradients_`) is a
hand-derived backward pass in reusable buffers rather than autograd: at the
sizes of a phase-transition sweep the step is bound by passes over the
``(K, batch, width)`` activations, and autograd's fresh allocations and
separate ReLU-mask and bias-gradient passes cost about as much as the
products themselves.
"""

from __future__ import annotations

import math
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
        self._workspace: dict[str, torch.Tensor] = {}
        # Whether some network trains layer l (the masks are fixed).
        self._layer_trains = [bool(mask.any()) for mask in self.trainable_masks]

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

    @torch.no_grad()
    def squared_error_gradients_(
        self, x: torch.Tensor, y: torch.Tensor, *, max_elements: int = 2**22
    ) -> torch.Tensor:
        """Each network's loss ``0.5 * mean((f_k(x[k]) - y[k]) ** 2)``, with
        its gradient written into the parameters' ``.grad``.

        This is the training step's forward and backward pass, derived by
        hand instead of through autograd: it computes what
        ``losses.sum().backward()`` would (the same products, to rounding) but
        in reusable buffers, with the ReLU mask applied in place, and only the
        gradients that something trainable needs (no weight gradient for a
        layer frozen in every network, no backpropagation below the lowest
        layer with a trainable neuron). It keeps at most about
        ``max_elements`` hidden activations at a time, processing the rows in
        chunks and summing their gradients, which bounds the memory of
        full-batch steps.

        Parameters
        ----------
        x : Tensor of shape (K, n, n_features)
            Network ``k``'s inputs ``x[k]``.
        y : Tensor of shape (K, n, n_outputs)
            Its targets.
        max_elements : int, default=2**22
            Hidden activations held at once (per layer), in elements.

        Returns
        -------
        Tensor of shape (K,)
            The losses (without any weight penalty).
        """
        n_models, n_rows, n_outputs = y.shape
        widths = [weight.shape[1] for weight in self.hidden_weights]
        chunk = max(1, min(n_rows, max_elements // (n_models * max(widths))))
        layer_trains = self._layer_trains
        lowest = layer_trains.index(True) if any(layer_trains) else None
        # Weight gradients accumulate as (K, in, out): x^T g is the fast layout.
        weight_grads = [
            self._scratch(
                f"weight_grad_{i}", (n_models, w.shape[2], w.shape[1])
            ).zero_()
            if trains
            else None
            for i, (w, trains) in enumerate(
                zip(self.hidden_weights, layer_trains, strict=True)
            )
        ]
        bias_grads = [
            _grad_of(b).zero_() if trains else None
            for b, trains in zip(self.hidden_biases, layer_trains, strict=True)
        ]
        readout_weight_grad = _grad_of(self.readout_weight).zero_()
        readout_bias_grad = _grad_of(self.readout_bias).zero_()
        scale = 1.0 / (n_rows * n_outputs)
        squared_errors = y.new_zeros(n_models)
        for start in range(0, n_rows, chunk):
            rows = slice(start, start + chunk)
            n = min(chunk, n_rows - start)
            activations = [x[:, rows]]
            for depth, (weight, bias) in enumerate(
                zip(self.hidden_weights, self.hidden_biases, strict=True)
            ):
                hidden = self._scratch(f"hidden_{depth}", (n_models, n, widths[depth]))
                torch.baddbmm(bias.unsqueeze(1), activations[-1], weight.mT, out=hidden)
                activations.append(hidden.clamp_min_(0.0))
            residual = torch.baddbmm(
                self.readout_bias.unsqueeze(1),
                activations[-1],
                self.readout_weight.mT,
            ).sub_(y[:, rows])
            squared_errors += residual.square().sum((1, 2))
            residual.mul_(scale)
            readout_bias_grad += residual.sum(1)
            readout_weight_grad.baddbmm_(residual.mT, activations[-1])
            if lowest is None:
                continue
            if lowest == len(widths) - 1 and n_outputs == 1:
                self._top_layer_gradients(
                    activations, residual, weight_grads[-1], bias_grads[-1]
                )
                continue
            upstream = self._scratch("upstream_0", (n_models, n, widths[-1]))
            if n_outputs == 1:  # an outer product, faster than a bmm over 1
                torch.mul(residual, self.readout_weight, out=upstream)
            else:
                torch.bmm(residual, self.readout_weight, out=upstream)
            for depth in reversed(range(lowest, len(widths))):
                # ReLU backward, in place: keep the gradient where the unit is on.
                torch.ops.aten.threshold_backward.grad_input(
                    upstream, activations[depth + 1], 0.0, grad_input=upstream
                )
                if layer_trains[depth]:
                    weight_grads[depth].baddbmm_(activations[depth].mT, upstream)
                    bias_grads[depth] += upstream.sum(1)
                if depth > lowest:
                    below = self._scratch(
                        f"upstream_{depth % 2 + 1}", (n_models, n, widths[depth - 1])
                    )
                    upstream = torch.bmm(
                        upstream, self.hidden_weights[depth], out=below
                    )
        for weight, grad in zip(self.hidden_weights, weight_grads, strict=True):
            if grad is None:
                weight.grad = None  # frozen in every network: skipped by the step
            else:
                _grad_of(weight).copy_(grad.mT)
        for bias, grad in zip(self.hidden_biases, bias_grads, strict=True):
            if grad is None:
                bias.grad = None
        return squared_errors.mul_(0.5 * scale)

    def _top_layer_gradients(self, activations, residual, weight_grad, bias_grad):
        """Add the last hidden layer's gradients for one output, in one product.

        With ``r`` the scaled residual (K, n, 1), ``a`` the readout row and
        ``M = 1[h > 0] = sign(h)`` the units that are on, the pre-activation
        gradient is ``r a^T * M``, so the weight and bias gradients are
        ``[x * r, r]^T M`` with column ``j`` scaled by ``a_j``: one ``bmm``
        instead of building ``r a^T * M`` (two passes over the activations)
        and multiplying it by the inputs.
        """
        hidden, inputs = activations[-1], activations[-2]
        n_models, n_rows, n_in = inputs.shape
        on = self._scratch("on", hidden.shape)
        torch.sign(hidden, out=on)
        lhs = self._scratch("scaled_inputs", (n_models, n_rows, n_in + 1))
        torch.mul(inputs, residual, out=lhs[:, :, :n_in])
        lhs[:, :, n_in:] = residual
        product = self._scratch("top_product", (n_models, n_in + 1, hidden.shape[2]))
        torch.bmm(lhs.mT, on, out=product)
        product.mul_(self.readout_weight)
        weight_grad += product[:, :n_in]
        bias_grad += product[:, n_in]

    def _scratch(self, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        """A reusable buffer viewed as ``shape`` (contents undefined).

        Allocating the large activation tensors afresh at every step costs
        more than the products that fill them (page faults), so they live in
        flat buffers that grow to the largest size requested.
        """
        numel = math.prod(shape)
        flat = self._workspace.get(name)
        if flat is None or flat.numel() < numel:
            reference = self.readout_bias
            flat = torch.empty(numel, dtype=reference.dtype, device=reference.device)
            self._workspace[name] = flat
        return flat[:numel].view(shape)

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
            torch.where(mask, param, reference, out=param)

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
    return torch.baddbmm(bias.unsqueeze(1), x, weight.mT)


def _grad_of(param: nn.Parameter) -> torch.Tensor:
    """``param.grad``, allocated (uninitialised) if there is none."""
    if param.grad is None:
        param.grad = torch.empty_like(param)
    return param.grad


def _shapes(module: PartiallyTrainableMLP) -> tuple:
    layers = tuple(
        (layer.out_features, layer.in_features) for layer in module.hidden_layers
    )
    reference = module.readout.weight
    return layers, tuple(reference.shape), reference.dtype, reference.device
