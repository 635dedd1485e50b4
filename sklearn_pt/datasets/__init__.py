"""Synthetic data sets of the papers: index models, phase retrieval,
compositional targets and a smooth target on the sphere."""

from ._compositional import OUTER_FUNCTIONS, make_compositional_regression
from ._index_models import (
    LINKS,
    hermite_e_polynomial,
    make_multi_index,
    make_phase_retrieval,
    make_single_index,
)
from ._sphere import make_sphere_regression

__all__ = [
    "LINKS",
    "OUTER_FUNCTIONS",
    "hermite_e_polynomial",
    "make_compositional_regression",
    "make_multi_index",
    "make_phase_retrieval",
    "make_single_index",
    "make_sphere_regression",
]
