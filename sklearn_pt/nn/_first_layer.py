"""A two-layer network whose first layer alone trains (K of them stacked:
:class:`~sklearn_pt.nn._stacked.StackedFirstLayerNetwork`)."""

from __future__ import annotations

import torch

from ._activations import activation_derivative, activation_second_derivative
from ._losses import half_squared_error

__all__ = ["FirstLayerNetwork"]


class FirstLayerNetwork(torch.nn.Module):
    """``f(x) = (1/m) sum_j a_j sigma(<w_j, x>)`` with a fixed second layer.

    Parameters
    ----------
    weight : Tensor of shape (width, n_features)
        Initial first-layer weights ``W`` (rows ``w_j``), the only trained
        parameter.
    second_layer : Tensor of shape (width,)
        The fixed output weights ``a`` (a buffer).
    activation : callable
        ``sigma``, applied elementwise.
    """

    def __init__(self, weight, second_layer, activation):
        super().__init__()
        self.weight = torch.nn.Parameter(weight)
        self.register_buffer("second_layer", second_layer)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.activation(x @ self.weight.T)
        return hidden @ self.second_layer / self.weight.shape[0]

    def _outputs(self, pre_activations: torch.Tensor) -> torch.Tensor:
        """The outputs ``(..., n)`` from the transposed pre-activations
        ``(..., width, n)``."""
        hidden = self.activation(pre_activations)
        return torch.matmul(self.second_layer, hidden) / self.weight.shape[-2]

    def _readout_scale(self, n_rows: int) -> torch.Tensor:
        """``a / (m n)``, the derivative of the mean loss's output term per
        neuron, shaped ``(width, 1)`` against the transposed
        pre-activations."""
        return (self.second_layer / (self.weight.shape[-2] * n_rows))[:, None]

    def squared_error_gradients_(
        self, x: torch.Tensor, y: torch.Tensor, *, weight_decay: float = 0.0
    ) -> torch.Tensor:
        """The loss ``0.5 * mean((f(x) - y) ** 2)`` (per network when
        stacked), with the gradient of loss plus ``weight_decay / 2 *
        ||W||^2`` written into ``weight.grad``, derived by hand.

        With ``Z^T = W x^T`` (``width x n``) and ``r`` the residuals,
        ``dL/dZ^T = (a / m) sigma'(Z^T) r^T / n`` and ``grad W = (dL/dZ^T)
        x``: two products with the data, as autograd's, without its graph.
        For a named activation ``sigma'`` is its closed form
        (:func:`~sklearn_pt.nn._activations.activation_derivative`); for any
        other callable autograd takes it, through the cheap part only
        (activation, second layer, loss).

        Computing ``Z`` transposed matters on CPU: with a few neurons and many
        inputs ``W x^T`` is faster than ``x W^T``, and autograd's own backward
        of ``x W^T`` batched takes ``x^T (dL/dZ)``, far slower than
        ``(dL/dZ^T) x`` (:ref:`defaults_implementation`).

        Parameters
        ----------
        x : Tensor of shape (n, d), or (K, n, d) when stacked
        y : Tensor of shape (n,), or (K, n)
        weight_decay : float, default=0.0

        Returns
        -------
        Tensor of shape () or (K,)
            The loss, without the penalty.
        """
        n_rows = x.shape[-2]
        with torch.no_grad():
            pre_activations = torch.matmul(self.weight, x.mT)
        derivative = activation_derivative(self.activation)
        if derivative is None:
            pre_activations.requires_grad_(True)
            with torch.enable_grad():
                outputs = self._outputs(pre_activations)
                losses = half_squared_error(outputs, y, dim=-1)
                (upstream,) = torch.autograd.grad(losses.sum(), pre_activations)
            losses = losses.detach()
        else:
            with torch.no_grad():
                residuals = self._outputs(pre_activations).sub_(y)
                losses = residuals.square().mean(dim=-1).mul_(0.5)
                upstream = derivative(pre_activations)
                upstream.mul_(self._readout_scale(n_rows))
                upstream.mul_(residuals.unsqueeze(-2))
        gradient = torch.matmul(upstream, x)
        if weight_decay:
            gradient.add_(self.weight.detach(), alpha=weight_decay)
        self.weight.grad = gradient
        return losses

    @torch.no_grad()
    def squared_error_hessian_product(self, x: torch.Tensor, y: torch.Tensor):
        """Products with the Hessian of ``0.5 * mean((f(x) - y) ** 2)`` with
        respect to ``W``, derived by hand; None when ``sigma`` has no closed
        form ``sigma'`` and ``sigma''`` (any callable but a named activation).

        With ``Z^T = W x^T``, ``r = f(x) - y``, ``s1 = a/m * sigma'(Z^T)`` and
        ``s2 = a/m * sigma''(Z^T) * r`` (computed once), the product with a
        direction ``V`` is ``H[V] = D x / n`` with ``U = V x^T``, ``df = 1^T
        (U * s1)`` (the change of the outputs) and ``D = s1 * df + s2 * U``:
        two products with the data, where autograd's double backward through
        the gradient's graph also re-derives ``sigma'`` and ``sigma''``
        elementwise at every product (for GeLU, most of its time). As in
        :meth:`squared_error_gradients_`, the products are taken with the
        width first (``V x^T``, not ``x V^T``), the faster orientation on CPU.

        Returns
        -------
        callable or None
            ``product(v)``: ``H v`` for ``v`` of shape ``(width * n_features,)``
            (``W`` flattened row by row), or ``V H`` for a batch of such rows
            ``V`` of shape ``(batch, width * n_features)``.
        """
        first = activation_derivative(self.activation)
        second = activation_second_derivative(self.activation)
        if first is None or second is None or self.weight.ndim != 2:
            return None  # (stacked networks: not one Hessian)
        z = self.weight @ x.T  # (width, n)
        readout = (self.second_layer / self.weight.shape[0])[:, None]
        residual = readout.T @ self.activation(z) - y.reshape(1, -1)
        s1 = first(z).mul_(readout)
        s2 = second(z).mul_(readout).mul_(residual)
        n_rows = x.shape[0]

        def product(v: torch.Tensor) -> torch.Tensor:
            directions = v.reshape(-1, *self.weight.shape)  # (batch, width, d)
            u = torch.matmul(directions, x.T)  # (batch, width, n)
            change = (u * s1).sum(-2, keepdim=True)
            d = torch.addcmul(s2.mul(u), s1, change)
            return torch.matmul(d, x).reshape(v.shape).div_(n_rows)

        return product
