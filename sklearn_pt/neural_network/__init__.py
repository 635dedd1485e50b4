"""scikit-learn estimators backed by PyTorch networks."""

from ._first_layer import FirstLayerGDRegressor
from ._partial import PartiallyTrainableRegressor
from ._two_step import TwoStepFeatureLearner

__all__ = [
    "FirstLayerGDRegressor",
    "PartiallyTrainableRegressor",
    "TwoStepFeatureLearner",
]
