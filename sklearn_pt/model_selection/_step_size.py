"""The largest step size, of a few tried, that fits without diverging."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

from sklearn import clone
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, validate_params

from ..exceptions import DivergenceError

__all__ = ["stable_step_size"]


@validate_params(
    {
        "estimator": [object],
        "X": ["array-like"],
        "y": ["array-like"],
        "factor": [Interval(Real, 1, None, closed="neither")],
        "max_tries": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def stable_step_size(estimator, X, y, *, factor=10.0, max_tries=8) -> Bunch:
    """Find the largest step size, dividing by ``factor``, that fits ``(X, y)``.

    A fit that diverges raises a :class:`~sklearn_pt.exceptions.DivergenceError`
    naming its step-size parameter. This function is the explicit retry: it
    fits ``estimator`` (a clone, left unchanged) at its step size, then at
    that step divided by ``factor``, ``factor**2``, ... until a fit does not
    diverge. A diverging try stops at its first non-finite loss, so the search
    costs about one fit more than the fit that works. Use it once, outside a
    grid search, and set the value it finds.

    Parameters
    ----------
    estimator : estimator
        An estimator whose ``fit`` may raise ``DivergenceError`` with a
        ``step_size_name`` among its parameters (``learning_rate_init`` of
        the gradient-trained estimators).
    X : array-like of shape (n_samples, n_features)
        Training inputs.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets.
    factor : float, default=10.0
        Each try divides the step size by this (greater than 1).
    max_tries : int, default=8
        How many smaller step sizes to try after the estimator's own.

    Returns
    -------
    result : Bunch
        ``parameter`` (the step size's name) and ``step_size`` (the value
        that fits), both None where the estimator's own fit does not
        diverge; ``diverged`` (the values tried that diverged, largest
        first) and ``estimator`` (a clone fitted at ``step_size``).

    Raises
    ------
    DivergenceError
        Where every value tried diverges, or the divergence names no step size
        of ``estimator`` (L-BFGS, a schedule of steps): the message says what
        was tried and what to change instead.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.preprocessing import scale
    >>> from sklearn_pt.model_selection import stable_step_size
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> X, y = make_friedman1(200, random_state=0)
    >>> X, y = scale(X), scale(y)
    >>> model = PartiallyTrainableRegressor((16,), learning_rate_init=1e6,
    ...                                     max_iter=20, random_state=0)
    >>> found = stable_step_size(model, X, y)
    >>> found.parameter, found.step_size < 1e6, found.diverged[0]
    ('learning_rate_init', True, 1000000.0)
    >>> model.get_params()["learning_rate_init"]  # the estimator is unchanged
    1000000.0
    """
    trial = clone(estimator)
    error = _diverges(trial, X, y)
    if error is None:
        return Bunch(parameter=None, step_size=None, diverged=(), estimator=trial)
    name, value = error.step_size_name, error.step_size
    params = estimator.get_params(deep=False)
    if name is None or value is None or params.get(name) != value:
        raise DivergenceError(
            f"{error} No step size of the estimator to lower: "
            "stable_step_size cannot help here.",
            step_size_name=name,
            step_size=value,
        ) from error
    quiet = {"verbose": 0} if "verbose" in params else {}
    diverged = [value]
    for power in range(1, max_tries + 1):
        candidate = value / factor**power
        trial = clone(estimator).set_params(**{name: candidate}, **quiet)
        if _diverges(trial, X, y) is None:
            return Bunch(
                parameter=name,
                step_size=candidate,
                diverged=tuple(diverged),
                estimator=trial,
            )
        diverged.append(candidate)
    raise DivergenceError(
        f"{name} from {value:g} down to {diverged[-1]:g} ({max_tries} values, "
        f"each {factor:g}x smaller) all diverged on these data: standardise X "
        "and y (e.g. a StandardScaler) or increase alpha before trying smaller "
        "step sizes.",
        step_size_name=name,
        step_size=diverged[-1],
    ) from error


def _diverges(estimator, X, y) -> DivergenceError | None:
    """Fit ``estimator``; its ``DivergenceError``, or None when it fits (the
    warnings of a try, e.g. at ``max_iter``, are not the caller's)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
    except DivergenceError as error:
        return error
    return None
