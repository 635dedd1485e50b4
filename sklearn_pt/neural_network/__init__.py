"""scikit-learn estimators backed by PyTorch networks."""

from ._partial import PartiallyTrainableRegressor

__all__ = ["PartiallyTrainableRegressor"]
