"""``torch.nn.Module`` building blocks, usable on their own or with skorch."""

from ._activations import ACTIVATIONS, HERMITE_DEGREES
from ._partial import (
    PartiallyTrainableLinear,
    PartiallyTrainableMLP,
    he_normal_init,
    project_to_sphere,
    random_trainable_mask,
    spherical_biased_relu_init,
)

__all__ = [
    "ACTIVATIONS",
    "HERMITE_DEGREES",
    "PartiallyTrainableLinear",
    "PartiallyTrainableMLP",
    "he_normal_init",
    "project_to_sphere",
    "random_trainable_mask",
    "spherical_biased_relu_init",
]
