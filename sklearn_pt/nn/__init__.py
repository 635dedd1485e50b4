"""``torch.nn.Module`` building blocks, usable on their own or with skorch."""

from ._activations import ACTIVATIONS, HERMITE_DEGREES, activation_function
from ._first_layer import FirstLayerNetwork
from ._losses import half_squared_error
from ._partial import (
    PartiallyTrainableLinear,
    PartiallyTrainableMLP,
    he_normal_init,
    project_to_sphere,
    random_trainable_mask,
    spherical_biased_relu_init,
)
from ._stacked import (
    HandDerivedGradients,
    StackedFirstLayerNetwork,
    StackedModule,
    StackedPartiallyTrainableMLP,
    StackedTwoLayerNetwork,
    append_ones,
)
from ._two_layer import FeatureMap, TwoLayerNetwork

__all__ = [
    "ACTIVATIONS",
    "HERMITE_DEGREES",
    "FeatureMap",
    "FirstLayerNetwork",
    "HandDerivedGradients",
    "PartiallyTrainableLinear",
    "PartiallyTrainableMLP",
    "StackedFirstLayerNetwork",
    "StackedModule",
    "StackedPartiallyTrainableMLP",
    "StackedTwoLayerNetwork",
    "TwoLayerNetwork",
    "activation_function",
    "append_ones",
    "half_squared_error",
    "he_normal_init",
    "project_to_sphere",
    "random_trainable_mask",
    "spherical_biased_relu_init",
]
