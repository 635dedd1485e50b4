"""scikit-learn estimators backed by PyTorch networks."""

from ._first_layer import FirstLayerGDRegressor, FirstLayerNetwork, neuron_overlap
from ._partial import PartiallyTrainableRegressor
from ._two_step import TwoStepFeatureLearner

__all__ = [
    "FirstLayerGDRegressor",
    "FirstLayerNetwork",
    "PartiallyTrainableRegressor",
    "TwoStepFeatureLearner",
    "neuron_overlap",
]
