"""Synthetic data sets of the papers: index models, phase retrieval and
compositional targets."""

from ._compositional import OUTER_FUNCTIONS, make_compositional_regression
from ._index_models import (
    LINKS,
    hermite_e_polynomial,
    make_multi_index,
    make_phase_retrieval,
    make_single_index,
)

__all__ = [
    "LINKS",
    "OUTER_FUNCTIONS",
    "hermite_e_polynomial",
    "make_compositional_regression",
    "make_multi_index",
    "make_phase_retrieval",
    "make_single_index",
]
