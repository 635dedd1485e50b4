"""Metrics of what a network learned.

- :func:`subspace_overlap` -- overlap of two sets of directions.
- :func:`neuron_overlap` -- overlap of first-layer weights with the latent
  directions.
- :func:`eigenvector_overlap` -- overlap of Hessian eigenvectors with them.
- :func:`estimator_overlap` -- overlap of a fitted estimator's learned
  directions with the true ones.
"""

from ._overlap import (
    eigenvector_overlap,
    estimator_overlap,
    neuron_overlap,
    subspace_overlap,
)

__all__ = [
    "eigenvector_overlap",
    "estimator_overlap",
    "neuron_overlap",
    "subspace_overlap",
]
