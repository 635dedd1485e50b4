"""scikit-learn estimators backed by PyTorch networks.

``neuron_overlap`` moved to :mod:`sklearn_pt.metrics` and the torch module
``FirstLayerNetwork`` to :mod:`sklearn_pt.nn` in 0.1 (importing them from here
warns until 0.3).
"""

from .._moved import moved_names
from ._first_layer import FirstLayerGDRegressor
from ._partial import PartiallyTrainableRegressor
from ._two_step import TwoStepFeatureLearner

__all__ = [
    "FirstLayerGDRegressor",
    "PartiallyTrainableRegressor",
    "TwoStepFeatureLearner",
]

_to_metrics = moved_names(__name__, "sklearn_pt.metrics", ["neuron_overlap"])
_to_nn = moved_names(__name__, "sklearn_pt.nn", ["FirstLayerNetwork"])


def __getattr__(name: str):
    return _to_nn(name) if name == "FirstLayerNetwork" else _to_metrics(name)
