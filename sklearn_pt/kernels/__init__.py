"""Limit kernels and ridge leverage scores of random features.

- :class:`BiasedReLUKernel` -- limit kernel of spherical biased-ReLU random
  features, a scikit-learn ``Kernel`` usable by ``KernelRidge`` and
  ``GaussianProcessRegressor``;
- :class:`BiasedReLUFeatures` -- the random features of that kernel, a
  transformer like ``RBFSampler``;
- :func:`ridge_leverage_scores` -- ridge leverage score of each random feature.
"""

from ._biased_relu import BiasedReLUKernel
from ._features import BiasedReLUFeatures
from ._leverage import ridge_leverage_scores

__all__ = ["BiasedReLUFeatures", "BiasedReLUKernel", "ridge_leverage_scores"]
