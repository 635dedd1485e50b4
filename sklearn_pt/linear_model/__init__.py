"""Deprecated: moved to :mod:`sklearn_pt.decomposition` in 0.1.

``SpectralEstimator`` is a transformer that estimates directions, which a
scikit-learn user looks for next to ``PCA``. Importing a name from here still
works, with a ``FutureWarning``, until 0.3.
"""

import warnings

from .. import decomposition as _decomposition

__all__: list[str] = []

_MOVED = frozenset(_decomposition.__all__)


def __getattr__(name: str):
    if name in _MOVED:
        warnings.warn(
            f"sklearn_pt.linear_model.{name} moved to sklearn_pt.decomposition."
            f"{name} in 0.1; sklearn_pt.linear_model will be removed in 0.3. "
            f"Import it with: from sklearn_pt.decomposition import {name}",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(_decomposition, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
