"""Progress bars and one summarising warning for the sweeps and experiments.

A sweep runs many fits (often in joblib workers, whose warnings never reach
the caller): :func:`quiet_fit` records each fit's ``ConvergenceWarning`` messages so
that :func:`warn_convergence` can emit one warning for the whole sweep
("17 of 18 fits stopped before converging ...") instead of one per fit.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from sklearn.exceptions import ConvergenceWarning

__all__ = ["progress_bar", "quiet_fit", "warn_convergence"]


def progress_bar(total: int, *, desc: str, enabled: bool):
    """A tqdm progress bar over ``total`` runs (fits), on stderr.

    Parameters
    ----------
    total : int
        Number of runs.
    desc : str
        Label shown before the bar.
    enabled : bool
        False gives a silent bar (``update`` still works).

    Returns
    -------
    tqdm.tqdm
        Use it as a context manager and call ``update(n)`` after ``n`` runs.
    """
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="fit", disable=not enabled, leave=True)


def quiet_fit(fit: Callable[[], Any]) -> tuple[Any, list[str]]:
    """Call ``fit()``, recording its ``ConvergenceWarning`` messages.

    Every other warning is emitted again as it was raised.

    Returns
    -------
    result : object
        What ``fit()`` returned.
    messages : list of str
        The messages of the convergence warnings it raised.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit()
    messages = []
    for record in caught:
        if issubclass(record.category, ConvergenceWarning):
            messages.append(str(record.message))
        else:
            warnings.warn_explicit(
                record.message, record.category, record.filename, record.lineno
            )
    return result, messages


def warn_convergence(messages: Sequence[Sequence[str]], *, stacklevel: int = 3):
    """One ``ConvergenceWarning`` for the fits of a sweep that raised any.

    Parameters
    ----------
    messages : sequence of sequences of str
        Per fit, the messages :func:`quiet_fit` recorded.
    stacklevel : int, default=3
        As in :func:`warnings.warn` called here (2: this function's caller);
        the sweeps pass the level of their own caller.
    """
    warned = [m for m in messages if m]
    if warned:
        warnings.warn(
            f"{len(warned)} of {len(messages)} fits stopped before converging. "
            f"First: {warned[0][0]}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )
