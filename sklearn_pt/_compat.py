"""The one place where scikit-learn's private helpers are imported.

scikit-learn does not promise stability for these names; keeping them here means
a change in a new scikit-learn release is fixed in one file. The tested range is
pinned in ``pyproject.toml``.
"""

from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import validate_data

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "_fit_context",
    "_safe_indexing",
    "validate_data",
    "validate_params",
]
