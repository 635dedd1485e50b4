"""Transformers producing learned features.

- :class:`TwoStepFeatures` -- the hidden features ``sigma(W_2 x)`` after two
  gradient steps on the first layer.
"""

from ._two_step import TwoStepFeatures

__all__ = ["TwoStepFeatures"]
