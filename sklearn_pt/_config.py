"""Library-wide settings: :func:`config_context`, :func:`set_config`,
:func:`get_config`, shaped like scikit-learn's.

The one setting is ``torch_threads``, the number of torch intra-op threads
that every ``fit``, ``predict`` and ``transform`` of the library runs with.
"""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager
from numbers import Integral

__all__ = ["config_context", "get_config", "set_config", "torch_threads_applied"]

_DEFAULTS = {"torch_threads": None}
_local = threading.local()


def _settings() -> dict:
    if not hasattr(_local, "config"):
        _local.config = dict(_DEFAULTS)
    return _local.config


def _check_torch_threads(value):
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(
            "torch_threads must be None (torch's own setting) or an int >= 1, "
            f"e.g. torch_threads=1; got {value!r}."
        )
    return int(value)


def get_config() -> dict:
    """The library's current settings.

    Returns
    -------
    dict
        ``{"torch_threads": int or None}``; a copy, so changing it changes
        nothing.

    See Also
    --------
    config_context : Settings for a block of code.
    set_config : Change the settings.

    Examples
    --------
    >>> import sklearn_pt
    >>> sklearn_pt.get_config()
    {'torch_threads': None}
    """
    return dict(_settings())


def set_config(torch_threads=None) -> None:
    """Change the library's settings (of the calling thread).

    Parameters
    ----------
    torch_threads : int or None, default=None
        The number of torch intra-op threads the library's estimators fit,
        predict and transform with; torch's own setting is restored after
        each call, so nothing outside the library changes. None leaves
        torch's setting alone (the default); 1 suits a busy or small machine
        (:ref:`defaults_threads`).

    See Also
    --------
    config_context : The same for a block of code, restored afterwards.

    Examples
    --------
    >>> import sklearn_pt
    >>> sklearn_pt.set_config(torch_threads=1)
    >>> sklearn_pt.get_config()["torch_threads"]
    1
    >>> sklearn_pt.set_config(torch_threads=None)
    """
    _settings()["torch_threads"] = _check_torch_threads(torch_threads)


@contextmanager
def config_context(*, torch_threads=None):
    """Settings of the library for a block of code, restored afterwards.

    Parameters
    ----------
    torch_threads : int or None, default=None
        Inside the block, the library's ``fit``, ``predict`` and
        ``transform`` run with this many torch intra-op threads; torch's own
        setting is restored when each call returns (or raises). None keeps
        the current setting. Set it to 1 on a busy or small machine
        (:ref:`defaults_threads`).

    Yields
    ------
    None

    Notes
    -----
    ``torch_threads=1`` is the usual choice for the library's small
    networks, with processes (``n_jobs``) for parallel fits; see
    :ref:`defaults_threads` for why.

    *Thread safety.* The settings are per Python thread, like
    scikit-learn's. torch's thread count, however, is one process-wide
    value: while a fit runs with ``torch_threads``, torch operations of
    other Python threads of the same process run with that count too, and
    two threads fitting with different values at once see each other's.
    Use the same value in every thread, or processes.

    See Also
    --------
    set_config, get_config

    Examples
    --------
    >>> import torch
    >>> import sklearn_pt
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> with sklearn_pt.config_context(torch_threads=1):
    ...     reg = PartiallyTrainableRegressor(hidden_layer_sizes=8, max_iter=2,
    ...                                       random_state=0)
    ...     reg = reg.fit([[0.0, 1.0], [1.0, 0.0]], [0.0, 1.0])
    >>> sklearn_pt.get_config()["torch_threads"] is None
    True
    """
    settings = _settings()
    previous = dict(settings)
    if torch_threads is not None:
        settings["torch_threads"] = _check_torch_threads(torch_threads)
    try:
        yield
    finally:
        settings.clear()
        settings.update(previous)


@contextmanager
def _torch_threads():
    import torch  # here: importing sklearn_pt (and its CLI) stays torch-free

    n_threads = _settings()["torch_threads"]
    if n_threads is None or n_threads == torch.get_num_threads():
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def torch_threads_applied(method):
    """Decorate an estimator method to run with the configured torch threads
    (``torch_threads`` of :func:`config_context`), restored afterwards."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with _torch_threads():
            return method(*args, **kwargs)

    return wrapper
