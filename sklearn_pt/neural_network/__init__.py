"""scikit-learn estimators backed by PyTorch networks.

``neuron_overlap`` moved to :mod:`sklearn_pt.metrics` in 0.1 (importing it
from here warns until 0.3).
"""

from .._moved import moved_names
from ._first_layer import FirstLayerGDRegressor, FirstLayerNetwork
from ._partial import PartiallyTrainableRegressor
from ._two_step import TwoStepFeatureLearner

__all__ = [
    "FirstLayerGDRegressor",
    "FirstLayerNetwork",
    "PartiallyTrainableRegressor",
    "TwoStepFeatureLearner",
]

__getattr__ = moved_names(__name__, "sklearn_pt.metrics", ["neuron_overlap"])
