"""Many partially trainable networks of the same shape, stacked as one module.

A sweep over the trainable proportion ``P`` and the seed trains ``K`` networks
that differ only in their initial weights and in which neurons are trainable.
:class:`StackedPartiallyTrainableMLP` holds each layer of the ``K`` networks as
one stacked tensor and evaluates all of them with one batched matrix product
per layer, so one optimiser step updates the ``K`` networks at once.

Each layer is stored *augmented and transposed*, ``(K, in + 1, out)``: rows
``:in`` hold ``W^T`` and the last row the bias, so that ``[x, 1] @ layer`` is
the affine map. Its training step
(:meth:`StackedPartiallyTrainableMLP.squared_error_gradients_`) is a
hand-derived backward pass in reusable buffers rather than autograd. At the
sizes of a phase-transition sweep the step is bound by the two products with
the ``(K, batch, width)`` activations and by the passes over them; the layout
removes every pass it can: the first layer is one product of the inputs with a
column of ones (no bias broadcast), its weight and bias gradients come out of
one product already in the parameter's layout (no transposed copy), and when
only the last hidden layer trains (one output) the readout gradient follows
from the product that gives that layer's gradient (no third product), and on
a CPU that layer runs a few networks at a time, so that the passes after the
product that writes the activations read them from the core's cache
(:data:`CACHE_BLOCK_BYTES`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import NamedTuple, Protocol, runtime_checkable

import torch
import torch.nn.functional as F
from torch import nn

from ._activations import activation_derivative, activation_function
from ._first_layer import FirstLayerNetwork
from ._losses import half_squared_error
from ._partial import PartiallyTrainableMLP, sum_of_squares

__all__ = [
    "CACHE_BLOCK_BYTES",
    "HandDerivedGradients",
    "StackedFirstLayerNetwork",
    "StackedModule",
    "StackedPartiallyTrainableMLP",
    "StackedTwoLayerNetwork",
    "Workspace",
    "append_ones",
]


#: The activations a CPU training step keeps in the core's cache at a time
#: (see :meth:`StackedPartiallyTrainableMLP.squared_error_gradients_`): half of
#: a 2 MiB per-core L2; see :ref:`defaults_implementation` for how it was chosen.
CACHE_BLOCK_BYTES = 2**20


@runtime_checkable
class StackedModule(Protocol):
    """What :class:`~sklearn_pt._training.StackedStepper` trains: ``K``
    models of one shape stacked in one module.

    A stacked module evaluates all models at once and says which entries
    may move; the stepper keeps the others, and every entry of a stopped
    model, at their values (:class:`~sklearn_pt._training.FixedEntries`).
    """

    @property
    def n_models(self) -> int:
        """``K``."""

    def stacked_losses(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Each model's loss on its rows, shape ``(K,)``, differentiable:
        e.g. ``half_squared_error`` of ``f_k(x[k])`` and ``y[k]``."""

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """The outputs ``(K, n, ...)`` without autograd."""

    def update_masks(self) -> list[tuple[nn.Parameter, torch.Tensor]]:
        """``(parameter, mask)`` pairs: the bool mask (broadcastable, leading
        dimension ``K``) of the entries that may change; ``[]`` when all
        may."""

    def squared_weight_norms(self) -> torch.Tensor:
        """The penalised norms, shape ``(K,)`` (the penalty is ``alpha /
        (2 n)`` times these). A module with ``penalty_scales(x)`` (one
        ``(K,)`` scale per penalised weight) takes them as ``scales=``."""

    def add_weight_decay_(self, weight_decay: float) -> None:
        """Add ``weight_decay`` times the penalised weights to their
        ``.grad``. A module with ``penalty_scales`` also takes one ``(K,)``
        coefficient tensor per penalised weight instead of the float."""

    def make_workspace(self):
        """The reusable buffers of the module's hand-derived backward pass
        (passed back as ``workspace=``), or None."""


@runtime_checkable
class HandDerivedGradients(Protocol):
    """A module with a hand-derived backward pass for the squared loss,
    which a stepper uses instead of autograd (``gradients="auto"``)."""

    def squared_error_gradients_(
        self, x: torch.Tensor, y: torch.Tensor, **keywords
    ) -> torch.Tensor:
        """The losses, with the gradients of loss plus ``weight_decay=``
        penalty written into the parameters' ``.grad``."""


class StackedPartiallyTrainableMLP(nn.Module):
    """``K`` ReLU networks with partly trainable hidden layers, stacked.

    Network ``k`` computes the same function as the
    :class:`~sklearn_pt.nn.PartiallyTrainableMLP` it was stacked from: hidden
    layers ``relu(x @ W_l[k].T + b_l[k])`` and a linear readout. Each layer is
    one stacked :class:`~torch.nn.Parameter` of shape ``(K, in + 1, out)``
    (``W^T`` over the bias row) holding all neurons, trainable and frozen; the
    per-network masks say which neurons may change (:meth:`update_masks`);
    the stacked training puts back those that may not (frozen neurons, and
    every weight of a network that has stopped training) after every
    optimiser step, and holds that state itself. Because the
    networks share no weights, the gradient of the sum of their losses gives
    each network exactly the gradient of its own loss.

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
    layers : ParameterList of Parameter of shape (K, in_l + 1, out_l)
        The hidden layers, augmented and transposed.
    readout : Parameter of shape (K, n_outputs, out_last + 1)
        The readout weights and biases side by side, ``[W | b]`` (the layout
        in which its products with the activations are fast).
    hidden_weights, hidden_biases, readout_weight, readout_bias : views
        The parameters in the layout they were given in (views of ``layers``
        and ``readout``: editing them in place edits the networks).
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
    >>> from sklearn_pt.nn._stacked import StackedPartiallyTrainableMLP
    >>> nets = [PartiallyTrainableMLP(3, hidden_layer_sizes=(8,),
    ...                               trainable_proportion=p, random_state=0)
    ...         for p in (0.0, 0.5)]
    >>> batch = StackedPartiallyTrainableMLP.from_modules(nets)
    >>> batch.layers[0].shape
    torch.Size([2, 4, 8])
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
        self.layers = nn.ParameterList(
            nn.Parameter(_augmented(w, b))
            for w, b in zip(hidden_weights, hidden_biases, strict=True)
        )
        self.readout = nn.Parameter(
            torch.cat([readout_weight.detach(), readout_bias.detach()[..., None]], 2)
        )
        for depth, mask in enumerate(trainable_masks):
            mask = torch.as_tensor(mask, dtype=torch.bool, device=readout_bias.device)
            self.register_buffer(f"trainable_mask_{depth}", mask)
        self._n_layers = len(hidden_weights)
        self._views: _StepViews | None = None
        # Whether some network trains layer l (the masks are fixed).
        self._layer_trains = [bool(mask.any()) for mask in self.trainable_masks]
        trained = [d for d, trains in enumerate(self._layer_trains) if trains]
        self._lowest_trained = trained[0] if trained else None
        self._max_width = max((layer.shape[2] for layer in self.layers), default=1)

    @classmethod
    def from_modules(
        cls, modules: Sequence[PartiallyTrainableMLP]
    ) -> StackedPartiallyTrainableMLP:
        """Stack networks of identical shapes (their current weights).

        Parameters
        ----------
        modules : sequence of PartiallyTrainableMLP
            On one device, in one dtype, with the same layer sizes.

        Returns
        -------
        StackedPartiallyTrainableMLP
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
        return self.readout.shape[0]

    @property
    def trainable_masks(self) -> list[torch.Tensor]:
        """Per hidden layer, the bool ``(K, out_l)`` mask of trainable neurons."""
        return [getattr(self, f"trainable_mask_{i}") for i in range(self._n_layers)]

    @property
    def hidden_weights(self) -> list[torch.Tensor]:
        """Per hidden layer, the ``(K, out_l, in_l)`` weights (views)."""
        return [layer[:, :-1].mT for layer in self.layers]

    @property
    def hidden_biases(self) -> list[torch.Tensor]:
        """Per hidden layer, the ``(K, out_l)`` biases (views)."""
        return [layer[:, -1] for layer in self.layers]

    @property
    def readout_weight(self) -> torch.Tensor:
        """The ``(K, n_outputs, out_last)`` readout weights (a view)."""
        return self.readout[:, :, :-1]

    @property
    def readout_bias(self) -> torch.Tensor:
        """The ``(K, n_outputs)`` readout biases (a view)."""
        return self.readout[:, :, -1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs ``(K, n, n_outputs)`` of network ``k`` on ``x[k]``.

        Parameters
        ----------
        x : Tensor of shape (K, n, n_features)
            One batch of inputs per network (``x.expand(K, -1, -1)`` to give the
            same inputs to all).
        """
        for layer in self.layers:
            x = F.relu(_affine(x, layer))
        return _readout(self.readout_bias.unsqueeze(1), x, self.readout_weight)

    @torch.no_grad()
    def squared_error_gradients_(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        *,
        weight_decay: float = 0.0,
        max_elements: int = 2**22,
        block_bytes: int | str | None = "auto",
        workspace: Workspace | None = None,
    ) -> torch.Tensor:
        """Each network's loss ``0.5 * mean((f_k(x[k]) - y[k]) ** 2)``, with
        the gradient of ``loss + 0.5 * weight_decay * ||W||^2`` written into
        the parameters' ``.grad``.

        This is the training step's forward and backward pass, derived by
        hand instead of through autograd: it computes what autograd would (the
        same products, to rounding) but in reusable buffers, with the ReLU
        mask applied in place, and only the gradients that something trainable
        needs (none for a layer frozen in every network, no backpropagation
        below the lowest layer with a trainable neuron). The weight decay is
        the optimiser's L2 penalty, applied to the weights and not to the
        biases. At most about ``max_elements`` hidden activations are held at
        a time: the rows are processed in chunks whose gradients add up, which
        bounds the memory of full-batch steps.

        Parameters
        ----------
        x : Tensor of shape (K, n, n_features + 1)
            Network ``k``'s inputs ``x[k]`` followed by a column of ones (the
            first layer's bias input, see :func:`append_ones`).
        y : Tensor of shape (K, n, n_outputs)
            Its targets.
        weight_decay : float or sequence of Tensor, default=0.0
            L2 penalty coefficient added to the weight gradients, or one
            ``(K,)`` coefficient per weight (see :meth:`add_weight_decay_`).
        max_elements : int, default=2**22
            Hidden activations held at once (per layer), in elements.
        block_bytes : int, "auto" or None, default="auto"
            When only the last hidden layer trains (one output), that layer
            is processed a few networks at a time, each block's activations
            about ``block_bytes`` (at least one network), so that they stay
            in a CPU core's cache across the passes over them. ``"auto"``:
            :data:`CACHE_BLOCK_BYTES` on a CPU, and all networks at once on a
            GPU (where kernel launches, not the cache, bound the step); None:
            all at once.
        workspace : Workspace, optional
            The reusable buffers of the activations (the training loop keeps
            one, :meth:`make_workspace`); a fresh one when None.

        Returns
        -------
        Tensor of shape (K,)
            The losses (without the weight penalty).
        """
        workspace = Workspace() if workspace is None else workspace
        n_models, n_rows, n_outputs = y.shape
        views = self._step_views()
        params = [*views.layers, self.readout]
        for param, grad in zip(params, [*views.grads, views.readout_grad], strict=True):
            if grad is not None:
                grad.zero_()
            if param.grad is not grad:
                param.grad = grad
        lowest = self._lowest_trained
        top_layer_only = lowest == self._n_layers - 1 and n_outputs == 1
        scale = 1.0 / (n_rows * n_outputs)
        squared_errors = y.new_zeros(n_models)
        chunk = self._chunk_rows(n_models, n_rows, max_elements)
        for start in range(0, n_rows, chunk):
            rows = slice(start, start + chunk)
            x_rows, y_rows = (x[:, rows], y[:, rows]) if chunk < n_rows else (x, y)
            if top_layer_only:
                below = self._hidden_activations(
                    x_rows, views, workspace, n_layers=self._n_layers - 1
                )[-1]
                squared_errors += self._top_layer_step(
                    below, y_rows, scale, views, workspace, block_bytes
                )
                continue
            activations = self._hidden_activations(x_rows, views, workspace)
            residual = _readout(
                views.readout_bias, activations[-1], views.readout_weight
            ).sub_(y_rows)
            squared_errors += residual.square().sum((1, 2))
            residual.mul_(scale)
            views.readout_grad_bias.add_(residual.sum(1))
            views.readout_grad_weight.baddbmm_(residual.mT, activations[-1])
            if lowest is not None:
                self._backpropagate(activations, residual, views, lowest, workspace)
        if _nonzero(weight_decay):
            self.add_weight_decay_(weight_decay)
        return squared_errors.mul_(0.5 * scale)

    def stacked_losses(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Each network's loss ``0.5 * mean((f_k(x[k]) - y[k]) ** 2)`` by
        autograd-tracked operations: what :meth:`squared_error_gradients_`
        returns, for training by autograd (the reference of that
        hand-derived pass).

        Parameters
        ----------
        x : Tensor of shape (K, n, n_features + 1)
            Inputs followed by a column of ones (see :func:`append_ones`).
        y : Tensor of shape (K, n, n_outputs)

        Returns
        -------
        Tensor of shape (K,)
        """
        for depth, layer in enumerate(self.layers):
            x = F.relu(torch.bmm(x, layer) if depth == 0 else _affine(x, layer))
        outputs = _readout(self.readout_bias.unsqueeze(1), x, self.readout_weight)
        return half_squared_error(outputs, y, dim=(1, 2))

    @torch.no_grad()
    def add_weight_decay_(self, weight_decay) -> None:
        """Add ``weight_decay`` times the weights (not the biases) to their
        gradients: the gradient of the penalty ``weight_decay / 2 * ||W||^2``
        (the frozen neurons' entries are restored after the step anyway).

        ``weight_decay`` is a float, or one ``(K,)`` tensor per hidden layer
        and one for the readout: network ``k``'s coefficient of each weight
        (``alpha / n`` times its :meth:`penalty_scales`), the gradient of
        ``sum_W weight_decay_W[k] / 2 * ||W[k]||^2``.
        """
        views = self._step_views()
        weights = [*views.weights, views.readout_weight]
        grads = [layer.grad for layer in views.layers]
        grads = [None if g is None else g[:, :-1] for g in grads]
        grads.append(self.readout.grad[:, :, :-1])
        if isinstance(weight_decay, Real):
            weight_decay = [weight_decay] * len(weights)
        for weight, grad, decay in zip(weights, grads, weight_decay, strict=True):
            if grad is None:
                continue
            if isinstance(decay, torch.Tensor):
                grad.addcmul_(weight, decay.view(-1, 1, 1))
            else:
                grad.add_(weight, alpha=decay)

    @torch.no_grad()
    def penalty_scales(
        self, x: torch.Tensor, *, max_elements: int = 2**22
    ) -> list[torch.Tensor]:
        """Per hidden layer and then the readout, each network's scale of
        that weight's L2 penalty, shape ``(K,)``: the mean square of the
        inputs it multiplies, on ``x`` at the current weights (what
        :meth:`PartiallyTrainableMLP.penalty_scales` gives each network).

        Parameters
        ----------
        x : Tensor of shape (n, n_features + 1) or (K, n, n_features + 1)
            The training inputs followed by a column of ones (see
            :func:`append_ones`), shared or one set per network.
        max_elements : int, default=2**22
            Hidden activations held at once (per layer), in elements, as
            :meth:`predict`.

        Returns
        -------
        list of Tensor of shape (K,), float64
        """
        n_models = self.n_models
        sums = [
            x.new_zeros(n_models, dtype=torch.float64)
            for _ in range(len(self.layers) + 1)
        ]
        n_rows = x.shape[-2]
        chunk = self._chunk_rows(n_models, n_rows, max_elements)
        for start in range(0, n_rows, chunk):
            rows = x[..., start : start + chunk, :]
            if rows.ndim == 2:
                rows = rows.expand(n_models, *rows.shape)
            inputs = rows[..., :-1]
            for depth, layer in enumerate(self.layers):
                sums[depth] += sum_of_squares(inputs)
                if depth == 0:
                    inputs = torch.bmm(rows, layer).relu_()
                else:
                    inputs = _affine(inputs, layer).relu_()
            sums[-1] += sum_of_squares(inputs)
        fan_ins = [layer.shape[1] - 1 for layer in self.layers]
        fan_ins.append(self.readout.shape[2] - 1)
        n = max(n_rows, 1)
        return [
            total / (n * fan_in) for total, fan_in in zip(sums, fan_ins, strict=True)
        ]

    @torch.no_grad()
    def predict(
        self,
        x: torch.Tensor,
        *,
        max_elements: int = 2**22,
        workspace: Workspace | None = None,
    ) -> torch.Tensor:
        """Outputs ``(K, n, n_outputs)`` of network ``k`` on ``x[k]``, without
        autograd: what :meth:`forward` computes, in the reusable buffers of
        the training step and at most about ``max_elements`` hidden
        activations at a time (a sweep scores all its networks with it).

        Parameters
        ----------
        x : Tensor of shape (K, n, n_features + 1)
            Network ``k``'s inputs followed by a column of ones (see
            :func:`append_ones`; ``x.expand(K, -1, -1)`` gives the same inputs
            to all).
        max_elements : int, default=2**22
            Hidden activations held at once (per layer), in elements.

        Returns
        -------
        Tensor of shape (K, n, n_outputs)
        """
        workspace = Workspace() if workspace is None else workspace
        n_models, n_rows = x.shape[:2]
        views = self._step_views()
        outputs = x.new_empty((n_models, n_rows, self.readout.shape[1]))
        chunk = self._chunk_rows(n_models, n_rows, max_elements)
        for start in range(0, n_rows, chunk):
            rows = slice(start, start + chunk)
            hidden = self._hidden_activations(x[:, rows], views, workspace)[-1]
            outputs[:, rows] = _readout(
                views.readout_bias, hidden, views.readout_weight
            )
        return outputs

    def _chunk_rows(self, n_models: int, n_rows: int, max_elements: int) -> int:
        """Rows per chunk so that a layer's activations hold at most about
        ``max_elements`` elements (at least one row)."""
        return max(1, min(n_rows, max_elements // (n_models * self._max_width)))

    def _step_views(self) -> _StepViews:
        """The views of the parameters and gradients a training step uses.

        Built once (and again if the parameters move, e.g. to another device):
        at the sizes of a sweep each slicing costs as much as a small product.
        The gradients live in buffers of the module (none for a layer frozen
        in every network), which the training step gives to the parameters'
        ``.grad``.
        """
        params = [*self.layers, self.readout]
        key = tuple(param.data_ptr() for param in params)
        views = self._views
        if views is None or views.key != key:
            grads = [
                torch.zeros_like(layer) if trains else None
                for layer, trains in zip(self.layers, self._layer_trains, strict=True)
            ]
            readout_grad = torch.zeros_like(self.readout)
            views = self._views = _StepViews(
                key=key,
                layers=list(self.layers),
                weights=[layer[:, :-1] for layer in self.layers],
                biases=[layer[:, -1:] for layer in self.layers],
                grads=grads,
                readout_weight=self.readout[:, :, :-1],
                readout_bias=self.readout[:, :, -1].unsqueeze(1),
                readout_grad=readout_grad,
                readout_grad_weight=readout_grad[:, :, :-1],
                readout_grad_bias=readout_grad[:, :, -1],
            )
        return views

    def _hidden_activations(
        self, x: torch.Tensor, views, workspace: Workspace, n_layers: int | None = None
    ) -> list[torch.Tensor]:
        """``[x, h_1, ..., h_n]`` for the first ``n_layers`` hidden layers (all
        by default), in reusable buffers; ``x`` carries a column of ones, so
        the first layer is one product."""
        activations = [x]
        for depth, layer in enumerate(views.layers[:n_layers]):
            hidden = workspace.buffer(
                f"hidden_{depth}", (*x.shape[:2], layer.shape[2]), like=self.readout
            )
            if depth == 0:
                torch.bmm(x, layer, out=hidden)
            else:
                weight, bias = views.weights[depth], views.biases[depth]
                torch.baddbmm(bias, activations[-1], weight, out=hidden)
            activations.append(hidden.clamp_min_(0.0))
        return activations

    def _backpropagate(self, activations, residual, views, lowest, workspace) -> None:
        """Add the hidden layers' gradients, from the top down to ``lowest``."""
        upstream = workspace.buffer(
            "upstream_0", activations[-1].shape, like=self.readout
        )
        if residual.shape[2] == 1:  # an outer product, faster than a bmm over 1
            torch.mul(residual, views.readout_weight, out=upstream)
        else:
            torch.bmm(residual, views.readout_weight, out=upstream)
        for depth in reversed(range(lowest, self._n_layers)):
            # ReLU backward, in place: keep the gradient where the unit is on
            # (the activations above are not needed any more: they become the
            # 0/1 mask).
            upstream.mul_(activations[depth + 1].gt_(0.0))
            inputs, grad = activations[depth], views.grads[depth]
            if grad is not None and depth == 0:
                grad.baddbmm_(inputs.mT, upstream)  # the ones give the bias row
            elif grad is not None:
                grad[:, :-1].baddbmm_(inputs.mT, upstream)
                grad[:, -1] += upstream.sum(1)
            if depth > lowest:
                below = workspace.buffer(
                    f"upstream_{depth % 2 + 1}", inputs.shape, like=self.readout
                )
                upstream = torch.bmm(upstream, views.weights[depth].mT, out=below)

    def _top_layer_step(
        self, inputs, y, scale, views, workspace, block_bytes
    ) -> torch.Tensor:
        """The last hidden layer's forward and backward pass when only it and
        the readout train (one output): add their gradients, return the
        squared errors' sums ``(K,)``.

        With ``r`` the residual (K, n, 1), ``a`` the readout row, ``z = [x,
        1]`` the layer's inputs and ``M = 1[h > 0]`` the units that are on,
        the pre-activation gradient is ``r a^T * M``, so the layer's gradient
        is ``Q * a`` with ``Q = (z * r)^T M``: one ``bmm`` instead of building
        ``r a^T * M`` (two passes over the activations) and multiplying it by
        the inputs. And as ``h_ij = M_ij <z_i, layer_j>``, the readout
        gradient ``sum_i r_i h_ij`` is ``sum_k layer_kj Q_kj``: the readout
        needs no product of its own.

        What remains is five passes over each network's ``(n, width)``
        activations: the product that writes them, the ReLU, the readout,
        the mask and the product that reads it. On a CPU they run a few
        networks at a time (see ``block_bytes``), so that the four after the
        first read the activations from the core's cache, not from memory.
        """
        layer = views.layers[-1]
        n_models, n_rows = inputs.shape[:2]
        width = layer.shape[2]
        if block_bytes == "auto":
            block_bytes = CACHE_BLOCK_BYTES if layer.device.type == "cpu" else None
        block = n_models
        if block_bytes is not None:
            per_model = n_rows * width * layer.element_size()
            block = max(1, min(n_models, block_bytes // per_model))
        hidden = workspace.buffer("top_hidden", (block, n_rows, width), like=layer)
        residual = workspace.buffer("top_residual", (n_models, 1, n_rows), like=layer)
        lhs = workspace.buffer(
            "scaled_inputs", (n_models, n_rows, layer.shape[1]), like=layer
        )
        product = workspace.buffer("top_product", layer.shape, like=layer)
        first = self._n_layers == 1  # the inputs carry their column of ones
        static = (layer, views.readout_bias.mT, views.readout_weight)
        blocks = workspace.blocks((*static, residual, lhs, product), block)
        data = zip(inputs.split(block), y.mT.split(block), blocks, strict=True)
        for z, t, (w, b, a, r, q, out) in data:
            h = hidden if len(z) == block else hidden[: len(z)]
            if first:
                torch.bmm(z, w, out=h)
            else:
                torch.baddbmm(w[:, -1:], z, w[:, :-1], out=h)
            torch.baddbmm(b, a, h.clamp_min_(0.0).mT, out=r).sub_(t)
            if first:
                torch.mul(z, r.mT, out=q)
            else:
                torch.mul(z, r.mT, out=q[:, :, :-1])
                q[:, :, -1:] = r.mT
            torch.bmm(q.mT, h.gt_(0.0), out=out)
        views.readout_grad_bias.add_(residual.sum(2), alpha=scale)
        contributions = workspace.buffer("top_contributions", layer.shape, like=layer)
        torch.mul(product, layer, out=contributions)
        views.readout_grad_weight.add_(contributions.sum(1, keepdim=True), alpha=scale)
        views.grads[-1].addcmul_(product, views.readout_weight, value=scale)
        return residual.square().sum((1, 2))

    def make_workspace(self) -> Workspace:
        """The reusable buffers of :meth:`squared_error_gradients_`, for a
        training loop to keep (the stacked stepper does)."""
        return Workspace()

    def squared_weight_norms(self, scales=None) -> torch.Tensor:
        """Per network, ``||W||^2`` over the weights of its trainable neurons.

        The frozen neurons are left out, as they are in the penalty of a single
        :class:`~sklearn_pt.nn.PartiallyTrainableMLP` (they are buffers there);
        biases are not penalised.

        Parameters
        ----------
        scales : sequence of Tensor of shape (K,), optional
            One per hidden layer and one for the readout (as
            :meth:`penalty_scales` returns them): the sum
            ``sum_W scale_W[k] ||W[k]||^2`` instead.

        Returns
        -------
        Tensor of shape (K,)
        """
        n_weights = len(self.layers) + 1
        scales = [None] * n_weights if scales is None else list(scales)
        total = self.readout_weight.square().sum((1, 2))
        if scales[-1] is not None:
            total = total * scales[-1].to(total.dtype)
        for layer, mask, scale in zip(
            self.layers, self.trainable_masks, scales[:-1], strict=True
        ):
            norms = (layer[:, :-1].square().sum(1) * mask).sum(1)
            total = total + (norms if scale is None else norms * scale.to(norms.dtype))
        return total

    def update_masks(self) -> list[tuple[nn.Parameter, torch.Tensor]]:
        """Which entries of each parameter may change: per hidden layer, the
        ``(K, 1, out_l)`` trainable-neuron mask (a neuron's incoming weights
        and bias); the readout, every entry. Training keeps the others at
        their initial values (see :class:`~sklearn_pt._training.FixedEntries`).
        """
        ones = torch.ones(self.n_models, 1, 1, dtype=torch.bool)
        masks = [mask.unsqueeze(1) for mask in self.trainable_masks]
        masks.append(ones.to(self.readout.device))
        return list(zip(self._ordered_parameters(), masks, strict=True))

    def _ordered_parameters(self) -> list[nn.Parameter]:
        return [*self.layers, self.readout]

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


class Workspace:
    """Reusable buffers, each viewed as the shape asked (contents undefined).

    Allocating the large activation tensors afresh at every step costs more
    than the products that fill them (page faults), so they live in flat
    buffers that grow to the largest size requested. The training loop owns
    one (training state stays out of the module).
    """

    def __init__(self) -> None:
        self._flat: dict[str, torch.Tensor] = {}
        self._views: dict[tuple, torch.Tensor] = {}
        self._blocks: dict[tuple, list[tuple[torch.Tensor, ...]]] = {}

    def buffer(self, name: str, shape: tuple[int, ...], *, like: torch.Tensor):
        """The buffer ``name`` viewed as ``shape``, in ``like``'s dtype and
        on its device."""
        view = self._views.get((name, shape))
        if view is not None:
            return view
        numel = math.prod(shape)
        flat = self._flat.get(name)
        if flat is None or flat.numel() < numel:
            flat = torch.empty(numel, dtype=like.dtype, device=like.device)
            self._flat[name] = flat
            self._views = {key: v for key, v in self._views.items() if key[0] != name}
        view = self._views[name, shape] = flat[:numel].view(shape)
        return view

    def blocks(self, tensors: Sequence[torch.Tensor], size: int) -> list[tuple]:
        """``list(zip(*(t.split(size) for t in tensors)))``, kept for the next
        call on the same memory (the parameters and buffers of a training
        step), which would otherwise split afresh at every step
        (:ref:`defaults_implementation`)."""
        key = (size, *((t.data_ptr(), t.shape, t.stride()) for t in tensors))
        blocks = self._blocks.get(key)
        if blocks is None:
            if len(self._blocks) >= 8:  # e.g. buffers that grew: drop the old
                self._blocks.clear()
            splits = (t.split(size) for t in tensors)
            blocks = self._blocks[key] = list(zip(*splits, strict=True))
        return blocks


class _StepViews(NamedTuple):
    """Views of :class:`StackedPartiallyTrainableMLP`'s parameters and of
    their gradient buffers, for the training step."""

    key: tuple[int, ...]  # the parameters' data pointers when built
    layers: list[nn.Parameter]  # (K, in + 1, out)
    weights: list[torch.Tensor]  # (K, in, out)
    biases: list[torch.Tensor]  # (K, 1, out)
    grads: list[torch.Tensor | None]  # as layers; None: frozen in every network
    readout_weight: torch.Tensor  # (K, n_outputs, width)
    readout_bias: torch.Tensor  # (K, 1, n_outputs)
    readout_grad: torch.Tensor  # as the readout
    readout_grad_weight: torch.Tensor
    readout_grad_bias: torch.Tensor  # (K, n_outputs)


def _nonzero(weight_decay) -> bool:
    """Whether a weight decay (a float or coefficient tensors) is not zero."""
    if isinstance(weight_decay, Real):
        return weight_decay != 0.0
    return len(weight_decay) > 0


def append_ones(x: torch.Tensor) -> torch.Tensor:
    """``x`` with a last column of ones: the inputs
    :meth:`StackedPartiallyTrainableMLP.squared_error_gradients_` takes.

    Parameters
    ----------
    x : Tensor of shape (..., n_features)

    Returns
    -------
    Tensor of shape (..., n_features + 1)

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn._stacked import append_ones
    >>> append_ones(torch.zeros(2, 3))
    tensor([[0., 0., 0., 1.],
            [0., 0., 0., 1.]])
    """
    return torch.cat([x, x.new_ones((*x.shape[:-1], 1))], dim=-1)


def _augmented(weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``(K, out, in)`` weights and ``(K, out)`` biases as one ``(K, in + 1,
    out)`` tensor: ``W^T`` over the bias row."""
    return torch.cat([weight.detach().mT, bias.detach().unsqueeze(1)], dim=1)


def _readout(bias: torch.Tensor, hidden: torch.Tensor, weight: torch.Tensor):
    """``hidden @ weight^T + bias`` for K stacked networks, (K, n, outputs).

    Computed as ``(weight @ hidden^T + bias^T)^T`` (a view of a (K, outputs,
    n) result): with few outputs the product then streams ``hidden`` as the
    right-hand operand, which MKL reads faster than the left one
    (:ref:`defaults_implementation`); the sums are the same dot products.
    """
    return torch.baddbmm(bias.mT, weight, hidden.mT).mT


def _affine(x: torch.Tensor, layer: torch.Tensor) -> torch.Tensor:
    """``x[k] @ W[k].T + b[k]`` for an augmented ``layer``."""
    return torch.baddbmm(layer[:, -1:], x, layer[:, :-1])


def _shapes(module: PartiallyTrainableMLP) -> tuple:
    layers = tuple(
        (layer.out_features, layer.in_features) for layer in module.hidden_layers
    )
    reference = module.readout.weight
    return layers, tuple(reference.shape), reference.dtype, reference.device


class _StackedFirstLayer:
    """The :class:`StackedModule` members of a module whose trained
    parameter is one stacked first layer ``weight`` of shape ``(K, width,
    d)``, every entry of which may change, penalised by its squared norm."""

    weight: nn.Parameter

    @torch.no_grad()
    def predict(self, x: torch.Tensor) -> torch.Tensor:
        return self(x)

    @property
    def n_models(self) -> int:
        return self.weight.shape[0]

    def update_masks(self) -> list:
        """Every entry of ``W`` may change."""
        return []

    def make_workspace(self) -> None:
        """No buffers to keep (the stepper calls this once)."""
        return None

    def squared_weight_norms(self) -> torch.Tensor:
        """``||W[k]||^2`` per network, shape (K,)."""
        return self.weight.square().sum((1, 2))

    @torch.no_grad()
    def add_weight_decay_(self, weight_decay: float) -> None:
        """Add ``weight_decay * W`` to ``weight.grad``."""
        self.weight.grad.add_(self.weight, alpha=weight_decay)


class StackedFirstLayerNetwork(_StackedFirstLayer, FirstLayerNetwork):
    """``K`` :class:`FirstLayerNetwork` s, stacked: first layers ``W`` of
    shape ``(K, width, d)``, fixed second layers ``a`` of shape ``(width,)``
    (one for all) or ``(K, width)``; network ``k`` computes ``sigma(x[k] @
    W[k].T) @ a[k] / widths[k]``. Networks of several widths stack padded to
    the widest (:meth:`from_networks`): the rows past a network's own width
    have ``a = 0``, so they take no part and never move.

    It has the protocol of :class:`~sklearn_pt._training.StackedStepper`
    (which puts a stopped network's ``W[k]`` back after every step); its
    training step is :meth:`FirstLayerNetwork.squared_error_gradients_`,
    stacked. On one data set shared by every network (``x`` expanded from one
    ``(n, d)`` set, as the stepper passes shared data) the step takes one
    product with the data for the real rows of all networks, where each
    network on its own would read the data once per network: networks of a
    few neurons each are bound by the per-product cost and the per-step
    overhead, not by the rows.

    Parameters
    ----------
    weight : Tensor of shape (K, width, d)
    second_layer : Tensor of shape (width,) or (K, width)
    activation : callable
    widths : sequence of K int, optional
        Each network's own width ``m_k`` (the ``1 / m_k`` of its output);
        its rows ``m_k:`` must have ``a = 0``. None: every network is
        ``width`` wide.
    """

    def __init__(self, weight, second_layer, activation, *, widths=None):
        super().__init__(weight, second_layer, activation)
        n_models, width = weight.shape[:2]
        widths = [width] * n_models if widths is None else [int(w) for w in widths]
        if len(widths) != n_models or not all(1 <= w <= width for w in widths):
            raise ValueError(
                f"widths must hold {n_models} widths in [1, {width}]; got {widths}."
            )
        device = weight.device
        real = torch.arange(width, device=device) < torch.tensor(
            widths, device=device
        ).unsqueeze(1)
        readout = second_layer.expand(n_models, width)
        if bool((readout[~real] != 0).any()):
            raise ValueError(
                "The second layer must be 0 on the rows past each network's width "
                "(padding); build mixed widths with "
                "StackedFirstLayerNetwork.from_networks."
            )
        self.register_buffer(
            "widths", torch.tensor(widths, dtype=weight.dtype, device=device)
        )
        rows = real.flatten().nonzero().flatten()
        self.register_buffer("_rows", rows)  # the real rows of W.view(K * width, d)
        self.register_buffer("_row_model", rows // width)
        self.register_buffer("_row_readout", (readout / self.widths[:, None])[real])

    @classmethod
    def from_networks(cls, networks: Sequence[FirstLayerNetwork]):
        """Stack :class:`FirstLayerNetwork` s of one activation and input
        dimension, of any widths (padded to the widest); their current
        weights are copied."""
        width = max(net.weight.shape[0] for net in networks)
        reference = networks[0].weight
        weight = reference.new_zeros(len(networks), width, reference.shape[1])
        second_layer = reference.new_zeros(len(networks), width)
        for k, net in enumerate(networks):
            weight[k, : net.weight.shape[0]] = net.weight.detach()
            second_layer[k, : net.weight.shape[0]] = net.second_layer
        widths = [net.weight.shape[0] for net in networks]
        return cls(weight, second_layer, networks[0].activation, widths=widths)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._outputs(torch.bmm(self.weight, x.mT))

    def _outputs(self, pre_activations: torch.Tensor) -> torch.Tensor:
        hidden = self.activation(pre_activations)
        outputs = torch.matmul(self._second_layers().unsqueeze(-2), hidden)
        return outputs.squeeze(-2) / self.widths[:, None]

    def _second_layers(self) -> torch.Tensor:
        return self.second_layer.expand(self.weight.shape[:2])

    def _readout_scale(self, n_rows: int) -> torch.Tensor:
        scale = self._second_layers() / (self.widths[:, None] * n_rows)
        return scale.unsqueeze(-1)

    def squared_error_gradients_(
        self, x: torch.Tensor, y: torch.Tensor, *, weight_decay: float = 0.0
    ) -> torch.Tensor:
        """:meth:`FirstLayerNetwork.squared_error_gradients_` of every
        network; on shared data (``x`` expanded, stride 0 along ``K``), in
        one product with the data each way for the real rows of all
        networks, ``(sum_k m_k, d)``."""
        derivative = activation_derivative(self.activation)
        if x.ndim != 3 or x.stride(0) != 0 or derivative is None:
            return super().squared_error_gradients_(x, y, weight_decay=weight_decay)
        data, n_rows = x[0], x.shape[1]
        n_models, width, n_features = self.weight.shape
        flat = self.weight.detach().view(n_models * width, n_features)
        with torch.no_grad():
            pre_activations = flat.index_select(0, self._rows) @ data.T
            hidden = self.activation(pre_activations)
            hidden.mul_(self._row_readout[:, None])
            outputs = hidden.new_zeros(n_models, n_rows)
            residuals = outputs.index_add_(0, self._row_model, hidden).sub_(y)
            losses = residuals.square().mean(dim=-1).mul_(0.5)
            upstream = derivative(pre_activations)
            upstream.mul_((self._row_readout / n_rows)[:, None])
            upstream.mul_(residuals.index_select(0, self._row_model))
            gradient = torch.zeros_like(flat)
            gradient.index_copy_(0, self._rows, upstream @ data)
            gradient = gradient.view_as(self.weight)
            if weight_decay:
                gradient.add_(self.weight.detach(), alpha=weight_decay)
        self.weight.grad = gradient
        return losses

    def stacked_losses(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return half_squared_error(self(x), y, dim=1)


class StackedTwoLayerNetwork(_StackedFirstLayer, nn.Module):
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
