"""Exceptions and warnings raised by sklearn_pt.

Warnings about training that stopped before converging reuse scikit-learn's
:class:`~sklearn.exceptions.ConvergenceWarning`, so that users' existing
``warnings`` filters keep working.
"""

from sklearn.exceptions import ConvergenceWarning

__all__ = ["ConvergenceWarning", "DeviceFallbackWarning", "DivergenceError"]


class DivergenceError(ValueError, FloatingPointError):
    """Raised when the training loss becomes NaN or infinite.

    It is a :class:`ValueError` (the usual type for a bad parameter value) and a
    :class:`FloatingPointError` (what happened numerically). The message names
    the parameter to change, typically ``learning_rate_init``. The estimator
    that raised it keeps the state it had before ``fit`` was called.
    """


class DeviceFallbackWarning(UserWarning):
    """Warned when a model fitted on an accelerator is loaded where it is absent.

    The model's tensors are then kept on the CPU, where it predicts as before.
    """
