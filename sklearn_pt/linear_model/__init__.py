"""Deprecated: moved to :mod:`sklearn_pt.decomposition` in 0.1.

``SpectralEstimator`` is a transformer that estimates directions, which a
scikit-learn user looks for next to ``PCA``; ``subspace_overlap`` is in
:mod:`sklearn_pt.metrics`. Importing a name from here still works, with a
``FutureWarning``, until 0.3.
"""

from .. import decomposition as _decomposition
from .._moved import moved_names

__all__: list[str] = []

_to_decomposition = moved_names(
    __name__, "sklearn_pt.decomposition", _decomposition.__all__
)
_to_metrics = moved_names(__name__, "sklearn_pt.metrics", ["subspace_overlap"])


def __getattr__(name: str):
    if name == "subspace_overlap":
        return _to_metrics(name)
    return _to_decomposition(name)
