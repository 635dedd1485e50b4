"""Partially trainable networks: layers whose neurons are split into trainable
and frozen groups, and the multi-layer perceptron built from them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._random import make_generator

__all__ = [
    "PartiallyTrainableLinear",
    "PartiallyTrainableMLP",
    "he_normal_init",
    "project_to_sphere",
    "random_trainable_mask",
    "spherical_biased_relu_init",
]


PENALTY_SCALE_ROWS = 8_192
"""Rows per forward pass of :meth:`PartiallyTrainableMLP.penalty_scales`
(the scales use every training row; the chunks bound the memory)."""


def sum_of_squares(inputs: torch.Tensor) -> torch.Tensor:
    """The sum of squares of ``(..., n, features)`` inputs over their last
    two axes, in float64: each row's in the inputs' precision (a norm, no
    squared copy), the rows' in float64 (a float64 accumulation of every
    entry converts each one, several times slower). One value per network of
    a stacked ``(K, n, features)`` batch."""
    return (
        torch.linalg.vector_norm(inputs, dim=-1).square().sum(-1, dtype=torch.float64)
    )


def project_to_sphere(x: torch.Tensor) -> torch.Tensor:
    """Project each row of ``x`` onto the unit sphere ``S^{d-1}``.

    Rows of zero norm stay zero. This is the paper's input preprocessing; it is
    the same map as :class:`sklearn.preprocessing.Normalizer` with ``norm="l2"``.
    """
    return F.normalize(x, dim=1)


def spherical_biased_relu_init(
    n_features: int,
    width: int,
    *,
    init_scale: float = 1.0,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw spherical biased-ReLU features ``relu(<w_j, x> - b_j)``.

    Parameters
    ----------
    n_features : int
        Input dimension ``d``.
    width : int
        Number of features ``m``.
    init_scale : float, default=1.0
        ``tau``: thresholds are drawn from ``Uniform[-tau, tau]``. As
        ``|<w, x>| <= 1`` on the sphere, ``tau > 1`` leaves a fraction of the
        features always on or always off (the paper's initialisation mismatch).
    generator : torch.Generator, optional
        Source of randomness.
    dtype : torch.dtype, default=torch.float32

    Returns
    -------
    weight : Tensor of shape (width, n_features)
        Rows ``w_j`` uniform on the unit sphere.
    bias : Tensor of shape (width,)
        The additive bias ``-b_j`` (so that the layer computes
        ``<w_j, x> + bias_j``); ``b_j ~ Uniform[-tau, tau]``.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".
    """
    weight = torch.randn(width, n_features, generator=generator, dtype=dtype)
    weight = F.normalize(weight, dim=1)
    uniform = torch.rand(width, generator=generator, dtype=dtype)
    return weight, (1 - 2 * uniform) * init_scale


def he_normal_init(
    fan_in: int,
    width: int,
    *,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """He initialisation for a ReLU layer: ``W ~ N(0, 2 / fan_in)``, zero bias.

    It keeps the second moment of the activations constant with depth, so that
    deeper hidden layers neither explode nor vanish at initialisation.
    """
    weight = torch.randn(width, fan_in, generator=generator, dtype=dtype)
    return weight * math.sqrt(2.0 / fan_in), torch.zeros(width, dtype=dtype)


def random_trainable_mask(
    width: int, proportion: float, *, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A boolean mask with ``round(proportion * width)`` trainable neurons,
    chosen uniformly at random (Python's ``round``: halves go to even)."""
    mask = torch.zeros(width, dtype=torch.bool)
    mask[torch.randperm(width, generator=generator)[: round(proportion * width)]] = True
    return mask


class PartiallyTrainableLinear(nn.Module):
    """A linear layer whose output neurons are split into trainable and frozen.

    Row ``j`` of the weight (and entry ``j`` of the bias) is a trainable
    :class:`~torch.nn.Parameter` when ``trainable_mask[j]`` is true, and a
    buffer otherwise: frozen neurons get no gradient and no optimiser state,
    are saved in the ``state_dict`` and follow ``.to(device)``.

    Parameters
    ----------
    weight : Tensor of shape (out_features, in_features)
        Initial weight.
    bias : Tensor of shape (out_features,)
        Initial additive bias.
    trainable_mask : bool Tensor of shape (out_features,)
        Which neurons are trained.

    Attributes
    ----------
    weight_trainable, bias_trainable : Parameter
        Rows of the trainable neurons, in the order of ``trainable_index``:
        the layer's only parameters.
    weight, bias : Tensor
        The full weight and bias, computed from the parameters and buffers
        (differentiable; see :attr:`weight`).
    frozen_weight, frozen_bias : buffer
        The full-size initial weight and bias; rows of trainable neurons are
        overwritten by the parameters in ``forward`` and are not used.
    trainable_index : buffer of int64
        Indices of the trainable neurons.
    """

    def __init__(
        self, weight: torch.Tensor, bias: torch.Tensor, trainable_mask: torch.Tensor
    ) -> None:
        super().__init__()
        trainable_mask = torch.as_tensor(trainable_mask, dtype=torch.bool)
        if trainable_mask.shape != bias.shape or weight.shape[0] != bias.shape[0]:
            raise ValueError(
                "weight, bias and trainable_mask must describe the same neurons; "
                f"got shapes {tuple(weight.shape)}, {tuple(bias.shape)} and "
                f"{tuple(trainable_mask.shape)}."
            )
        index = trainable_mask.nonzero().flatten()
        self.register_buffer("trainable_index", index)
        self.register_buffer("frozen_weight", weight.detach().clone())
        self.register_buffer("frozen_bias", bias.detach().clone())
        self.weight_trainable = nn.Parameter(weight.detach()[index].clone())
        self.bias_trainable = nn.Parameter(bias.detach()[index].clone())
        self._all_trainable = bool(trainable_mask.all())

    @property
    def in_features(self) -> int:
        return self.frozen_weight.shape[1]

    @property
    def out_features(self) -> int:
        return self.frozen_weight.shape[0]

    @property
    def trainable_mask(self) -> torch.Tensor:
        """Boolean mask of the trainable neurons."""
        mask = torch.zeros(self.out_features, dtype=torch.bool)
        mask[self.trainable_index.cpu()] = True
        return mask

    def _full(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self._all_trainable:
            return self.weight_trainable, self.bias_trainable
        if self.trainable_index.numel() == 0:
            return self.frozen_weight, self.frozen_bias
        index = (self.trainable_index,)
        return (
            self.frozen_weight.index_put(index, self.weight_trainable),
            self.frozen_bias.index_put(index, self.bias_trainable),
        )

    @property
    def weight(self) -> torch.Tensor:
        """The current full weight, trainable and frozen rows together,
        computed from the parameters at each access as a
        :mod:`torch.nn.utils.parametrize` parametrisation is: differentiable
        with respect to ``weight_trainable`` (a penalty on it trains them), and
        the very ``weight_trainable`` when every neuron trains. To change the
        layer, edit ``weight_trainable`` (or ``frozen_weight`` for the frozen
        rows), not this tensor."""
        return self._full()[0]

    @property
    def bias(self) -> torch.Tensor:
        """The current full additive bias, computed as :attr:`weight` is."""
        return self._full()[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight, bias = self._full()
        return F.linear(x, weight, bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"trainable={self.trainable_index.numel()}"
        )


class PartiallyTrainableMLP(nn.Module):
    """ReLU network whose hidden neurons are partly trainable, partly fixed.

    The first hidden layer computes the spherical biased-ReLU features
    ``relu(<w_j, x> - b_j)`` with ``w_j ~ Uniform(S^{d-1})`` and
    ``b_j ~ Uniform[-init_scale, init_scale]``; deeper hidden layers use
    :func:`he_normal_init`. In each hidden layer a proportion of the neurons is
    trainable (its incoming weights and bias); the rest keep their initial
    values. The linear readout is always trained. Inputs are expected on the
    unit sphere: with ``project_inputs=True`` the module projects them itself
    (:func:`project_to_sphere`, see :meth:`preprocess`), so that it is the
    whole map from raw inputs to predictions.

    The constructor takes plain keyword arguments, so the class works as the
    ``module`` of :class:`skorch.NeuralNetRegressor`
    (``module__n_features=...``).

    Parameters
    ----------
    n_features : int
        Input dimension ``d``.
    n_outputs : int, default=1
        Output dimension.
    hidden_layer_sizes : sequence of int, default=(256,)
        Width of each hidden layer.
    trainable_proportion : float or sequence of float, default=1.0
        Proportion ``P`` of trainable neurons, for all hidden layers or per
        layer. Layer ``l`` has ``round(P_l * width_l)`` trainable neurons chosen
        at random. ``P = 0`` is a random-features model, ``P = 1`` a fully
        trainable network.
    init_scale : float, default=1.0
        ``tau``, the range of the first layer's thresholds.
    trainable_masks : sequence of bool arrays, optional
        Explicit masks, one per hidden layer; overrides ``trainable_proportion``.
    first_layer_init : tuple of (weight, bias) tensors, optional
        Initial weight ``(width, n_features)`` and additive bias ``(width,)`` of
        the first hidden layer, instead of drawing spherical biased-ReLU
        features (used by ridge leverage score selection).
    random_state : int, torch.Generator or None, default=None
        Seed or CPU generator for the initialisation and the neuron selection
        (every draw is made on the CPU, so the network is the same on every
        device).
    dtype : torch.dtype, default=torch.float32
    device : torch.device or str, default=None
        Where the parameters live (None: the CPU), as torch's factory
        keyword.
    project_inputs : bool, default=False
        Project each input row onto the unit sphere before the first layer.

    Attributes
    ----------
    hidden_layers : ModuleList of PartiallyTrainableLinear
    readout : torch.nn.Linear

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn import PartiallyTrainableMLP
    >>> net = PartiallyTrainableMLP(3, hidden_layer_sizes=(10,),
    ...                             trainable_proportion=0.3, random_state=0)
    >>> net.hidden_layers[0]
    PartiallyTrainableLinear(in_features=3, out_features=10, trainable=3)
    >>> net(torch.ones(4, 3) / 3 ** 0.5).shape
    torch.Size([4, 1])
    """

    def __init__(
        self,
        n_features: int,
        n_outputs: int = 1,
        *,
        hidden_layer_sizes: Sequence[int] = (256,),
        trainable_proportion: float | Sequence[float] = 1.0,
        init_scale: float = 1.0,
        trainable_masks: Sequence | None = None,
        first_layer_init: tuple[torch.Tensor, torch.Tensor] | None = None,
        random_state: int | torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str | None = None,
        project_inputs: bool = False,
    ) -> None:
        super().__init__()
        self.project_inputs = project_inputs
        sizes = [int(width) for width in np.atleast_1d(hidden_layer_sizes)]
        generator = make_generator(random_state)
        proportions = np.broadcast_to(
            np.asarray(trainable_proportion, dtype=float), (len(sizes),)
        )
        if trainable_masks is not None and len(trainable_masks) != len(sizes):
            raise ValueError(
                f"trainable_masks has {len(trainable_masks)} masks for "
                f"{len(sizes)} hidden layers; pass one mask per hidden layer."
            )
        layers = []
        fan_in = n_features
        for depth, width in enumerate(sizes):
            if depth == 0 and first_layer_init is not None:
                weight, bias = (t.to(dtype) for t in first_layer_init)
            elif depth == 0:
                weight, bias = spherical_biased_relu_init(
                    n_features,
                    width,
                    init_scale=init_scale,
                    generator=generator,
                    dtype=dtype,
                )
            else:
                weight, bias = he_normal_init(
                    fan_in, width, generator=generator, dtype=dtype
                )
            if trainable_masks is None:
                mask = random_trainable_mask(
                    width, proportions[depth], generator=generator
                )
            else:
                mask = torch.as_tensor(np.asarray(trainable_masks[depth], dtype=bool))
            layers.append(PartiallyTrainableLinear(weight, bias, mask))
            fan_in = width
        self.hidden_layers = nn.ModuleList(layers)
        # Built on the meta device, nn.Linear neither initialises its weights
        # (which would draw from the global RNG) nor allocates them; cheaper
        # than nn.utils.skip_init (docs/defaults.rst, "How the code is written").
        self.readout = nn.Linear(fan_in, n_outputs, device="meta", dtype=dtype)
        bound = 1.0 / math.sqrt(fan_in)
        uniform = torch.rand(n_outputs, fan_in, generator=generator, dtype=dtype)
        self.readout.weight = nn.Parameter((2 * uniform - 1) * bound)
        self.readout.bias = nn.Parameter(torch.zeros(n_outputs, dtype=dtype))
        if device is not None:
            self.to(device)

    def preprocess(self, x: torch.Tensor) -> torch.Tensor:
        """The inputs the first layer sees: ``x`` projected onto the unit
        sphere when ``project_inputs``, else ``x`` itself."""
        return project_to_sphere(x) if self.project_inputs else x

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Activations of the last hidden layer."""
        x = self.preprocess(x)
        for layer in self.hidden_layers:
            x = F.relu(layer(x))
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(self.features(x))

    @torch.no_grad()
    def penalty_scales(self, x: torch.Tensor) -> list[tuple[nn.Parameter, float]]:
        """The scale of each weight matrix's L2 penalty: the mean square of
        the inputs it multiplies, on ``x`` at the current weights.

        The training steppers call it once, at the start of a fit, and
        penalise each matrix by ``alpha / (2 n)`` times its scale times its
        squared norm: the L2 penalty of the network written for inputs of
        unit mean square in every layer, so that scaling the inputs (say,
        projecting them onto the sphere) does not change how strongly the
        first layer is held (:ref:`defaults_penalty`).

        Parameters
        ----------
        x : Tensor of shape (n, n_features)
            The training inputs (projected by :meth:`preprocess`).

        Returns
        -------
        list of (Parameter, float)
            Per hidden layer its trainable weight rows and the mean square
            of its inputs, then the readout weight and that of the last
            hidden layer's activations.
        """
        weights = [layer.weight_trainable for layer in self.hidden_layers]
        weights.append(self.readout.weight)
        sums = [0.0] * len(weights)
        for rows in x.split(PENALTY_SCALE_ROWS):
            inputs = self.preprocess(rows)
            for depth, layer in enumerate(self.hidden_layers):
                sums[depth] += float(sum_of_squares(inputs))
                inputs = F.relu(layer(inputs))
            sums[-1] += float(sum_of_squares(inputs))
        fan_ins = [layer.in_features for layer in self.hidden_layers]
        fan_ins.append(self.readout.in_features)
        n = max(x.shape[0], 1)
        return [
            (weight, total / (n * fan_in))
            for weight, total, fan_in in zip(weights, sums, fan_ins, strict=True)
        ]

    def extra_repr(self) -> str:
        return "project_inputs=True" if self.project_inputs else ""
