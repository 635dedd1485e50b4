"""Synthetic data sets of the papers: index models and phase retrieval."""

from ._index_models import (
    LINKS,
    hermite_e_polynomial,
    make_multi_index,
    make_phase_retrieval,
    make_single_index,
)

__all__ = [
    "LINKS",
    "hermite_e_polynomial",
    "make_multi_index",
    "make_phase_retrieval",
    "make_single_index",
]
