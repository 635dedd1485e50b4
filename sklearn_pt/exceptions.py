"""Exceptions and warnings raised by sklearn_pt.

Warnings about training that stopped before converging reuse scikit-learn's
:class:`~sklearn.exceptions.ConvergenceWarning`, so that users' existing
``warnings`` filters keep working.
"""

from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "CollapseWarning",
    "ConvergenceWarning",
    "DeviceFallbackWarning",
    "DivergenceError",
]


class DivergenceError(ValueError, FloatingPointError):
    """Raised when the training loss becomes NaN or infinite.

    It is a :class:`ValueError` (the usual type for a bad parameter value) and a
    :class:`FloatingPointError` (what happened numerically). The message names
    the parameter to change, typically ``learning_rate_init``; where an
    estimator's ``fit`` raises it, the message gives a value of that
    parameter that was tried on the same data and did not diverge. The
    estimator that raised it keeps the state it had before ``fit`` was called.

    Parameters
    ----------
    message : str
        What happened and the fix.
    step_size_name : str, optional
        The step-size parameter whose value diverged (None where lowering a
        step size is not the fix, e.g. for L-BFGS).
    step_size : float, optional
        Its value.
    """

    def __init__(
        self,
        message: str = "",
        *,
        step_size_name: str | None = None,
        step_size: float | None = None,
    ):
        super().__init__(message)
        self.step_size_name = step_size_name
        self.step_size = step_size

    def __reduce__(self):
        return (
            _rebuild_divergence_error,
            (str(self), self.step_size_name, self.step_size),
        )


def _rebuild_divergence_error(message, step_size_name, step_size):
    return DivergenceError(message, step_size_name=step_size_name, step_size=step_size)


class DeviceFallbackWarning(UserWarning):
    """Warned when a model fitted on an accelerator is loaded where it is absent.

    The model's tensors are then kept on the CPU, where it predicts as before.
    """


class CollapseWarning(ConvergenceWarning):
    """Warned when a fit ends having learned nothing from ``X``.

    Its predictions on the data it was fitted to are constant (every hidden
    unit inactive or saturated there, where the gradient vanishes), or no
    better than predicting the mean of ``y`` (a coefficient of determination
    below :data:`sklearn_pt._training.NO_FIT_R2`). The message names the
    setting to change. It is a :class:`ConvergenceWarning`, so existing
    filters of those apply.
    """
