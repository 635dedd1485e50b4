"""Limit kernels and ridge leverage scores of random features.

- :class:`BiasedReLUKernel` -- limit kernel of spherical biased-ReLU random
  features, a scikit-learn ``Kernel`` usable by ``KernelRidge`` and
  ``GaussianProcessRegressor``;
- :class:`BiasedReLUFeatures` -- the random features of that kernel, a
  transformer like ``RBFSampler``;
- :func:`ridge_leverage_scores` -- ridge leverage score of each random feature;
- :func:`reg_for_degrees_of_freedom` -- the ridge parameter at which the
  scores sum to a given number of degrees of freedom;
- :func:`worst_case_approximation_error` -- the worst case over the RKHS
  unit ball of the best approximation by a set of features.
"""

from ._biased_relu import BiasedReLUKernel
from ._features import BiasedReLUFeatures
from ._leverage import reg_for_degrees_of_freedom, ridge_leverage_scores
from ._worst_case import worst_case_approximation_error

__all__ = [
    "BiasedReLUFeatures",
    "BiasedReLUKernel",
    "reg_for_degrees_of_freedom",
    "ridge_leverage_scores",
    "worst_case_approximation_error",
]
