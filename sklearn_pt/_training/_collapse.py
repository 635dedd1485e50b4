"""The checks that a fit learned something from ``X``: :func:`warn_if_collapsed`
(a model's predictions), :func:`warn_if_constant_features` (a feature map)."""

from __future__ import annotations

import warnings

import numpy as np
import torch

from ..exceptions import CollapseWarning

__all__ = ["NO_FIT_R2", "warn_if_collapsed", "warn_if_constant_features"]

NO_FIT_R2 = 1e-3
"""A fit whose coefficient of determination on its own training data is
below this explains nothing of ``y``: it warns."""


def _numpy(values) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    values = np.asarray(values, dtype=np.float64)
    return values.reshape(len(values), -1)


def _constant(values: np.ndarray, scale: np.ndarray) -> bool:
    """Whether every column of ``values`` is constant, relative to ``scale``."""
    return bool(np.all(np.ptp(values, axis=0) <= 1e-6 * scale))


_DEAD = "(every hidden unit inactive or saturated there, where the gradient vanishes)"


def warn_if_collapsed(predictions, y, *, fix: str, data: str = "training data"):
    """Warn with :class:`~sklearn_pt.exceptions.CollapseWarning` when a fit's
    ``predictions`` on ``data`` are constant or no better than the mean of ``y``.

    Parameters
    ----------
    predictions : array-like or Tensor of shape (n_samples,) or (n_samples, n_outputs)
        The fitted model's predictions on the data it was fitted to.
    y : array-like or Tensor of the same shape
        The targets there. A target that does not vary is not checked.
    fix : str
        The sentence that says what to change, appended to the message.
    data : str, default="training data"
        What the rows are, as the message names them.

    Returns
    -------
    bool
        Whether it warned.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_pt._training import warn_if_collapsed
    >>> y = np.arange(4.0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_if_collapsed(np.full(4, 1.5), y, fix="Lower the step.")
    True
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    The fitted network predicts a constant on the training data: its outputs do
    not depend on X (every hidden unit inactive or saturated there, where the
    gradient vanishes). Lower the step.
    >>> warn_if_collapsed(y + 0.1, y, fix="Lower the step.")
    False
    """
    predictions, y = _numpy(predictions), _numpy(y)
    varies = np.ptp(y, axis=0) > 0
    if len(y) < 2 or not varies.any():
        return False
    predictions, y = predictions[:, varies], y[:, varies]
    scale = np.abs(predictions).max(axis=0) + np.abs(y).max(axis=0)
    residual = ((y - predictions) ** 2).sum(axis=0)
    r2 = float(np.mean(1.0 - residual / ((y - y.mean(axis=0)) ** 2).sum(axis=0)))
    if _constant(predictions, scale):
        what = (
            f"predicts a constant on the {data}: its outputs do not depend on X {_DEAD}"
        )
    elif not r2 >= NO_FIT_R2:
        what = (
            f"does no better than predicting the mean of y on the {data} "
            f"(R^2 = {r2:.3g}, below {NO_FIT_R2:g})"
        )
    else:
        return False
    warnings.warn(f"The fitted network {what}. {fix}", CollapseWarning, stacklevel=3)
    return True


def warn_if_constant_features(features, *, fix: str, n_probe: int = 64) -> bool:
    """Warn with :class:`~sklearn_pt.exceptions.CollapseWarning` when none of
    a learned feature map's ``features`` on the training data depends on X.

    Parameters
    ----------
    features : array-like or Tensor of shape (n_samples, n_features_out), or callable
        The features, or a function ``rows -> features`` of the row indices
        (a slice) that computes them. A function is first called on the
        first ``n_probe`` rows: a feature that varies there by twice the
        tolerance varies on all rows (see Notes), and the features of all
        rows are computed only when none does.
    fix : str
        The sentence that says what to change.
    n_probe : int, default=64
        Rows of the first call when ``features`` is a function.

    Returns
    -------
    bool
        Whether it warned.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_pt._training import warn_if_constant_features
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     warn_if_constant_features(np.zeros((3, 2)), fix="Lower the step.")
    True

    Notes
    -----
    A feature is constant when its range is at most ``1e-6 (M + 1)``, ``M``
    its largest absolute value. If it varies on the probe rows by ``r >
    2e-6 (m + 1)``, ``m`` the probe's largest absolute value, it varies on
    all rows: when ``M <= 2 m + 1`` the range is at least ``r > 1e-6 (M +
    1)``; otherwise a value of size ``M`` lies at least ``M - m > (M + 1) /
    2`` from the probe's values.
    """
    if callable(features):
        probe = _numpy(features(slice(0, n_probe)))
        if not _constant(probe, 2 * (np.abs(probe).max(axis=0) + 1)):
            return False
        features = features(slice(None))
    features = _numpy(features)
    if len(features) < 2 or not _constant(features, np.abs(features).max(axis=0) + 1):
        return False
    warnings.warn(
        f"The learned features do not depend on X on the training data {_DEAD}. {fix}",
        CollapseWarning,
        stacklevel=3,
    )
    return True
