"""scikit-learn estimators backed by PyTorch networks."""

from ._partial import PartiallyTrainableRegressor
from ._two_step import TwoStepFeatureLearner

__all__ = ["PartiallyTrainableRegressor", "TwoStepFeatureLearner"]
