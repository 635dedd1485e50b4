"""joblib tasks that run under the caller's settings, scikit-learn's and
the library's.

A joblib worker is a fresh process (or a thread with fresh thread-local
settings): ``sklearn_pt.config_context(torch_threads=1)`` around a sweep would
not reach it. :func:`delayed` captures both configurations when a task is
made and applies them in the worker, as :func:`sklearn.utils.parallel.delayed`
does for scikit-learn's alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable, Iterable
from typing import Any

import sklearn
from joblib import Parallel

from ._config import _torch_threads, config_context, get_config

__all__ = ["delayed", "run_tasks"]


def _load_malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and other C libraries
        return None


_MALLOC_TRIM = _load_malloc_trim()


def release_freed_memory() -> bool:
    """Hand the C heap's free pages back to the system (glibc ``malloc_trim``);
    whether it could.

    Freed tensors below glibc's mmap threshold return to the process's heap,
    not to the system, so a worker would keep the high-water mark of every
    task it ran; after each task it keeps its live memory only.
    """
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


class _WithConfig:
    """``function`` called inside the configurations it was made under."""

    def __init__(self, function: Callable) -> None:
        self.function = function
        self.sklearn_config = sklearn.get_config()
        self.config = get_config()
        functools.update_wrapper(self, function)

    def __call__(self, *args, **kwargs):
        try:
            with (
                sklearn.config_context(**self.sklearn_config),
                config_context(**self.config),
                _torch_threads(),
            ):
                return self.function(*args, **kwargs)
        finally:
            release_freed_memory()


def delayed(function: Callable) -> Callable:
    """:func:`joblib.delayed` that carries the caller's configurations.

    The task runs with the scikit-learn configuration
    (:func:`sklearn.get_config`) and the library's (:func:`sklearn_pt.get_config`,
    its ``torch_threads`` applied to torch for the whole task) of the place
    where the task was made; after it, :func:`release_freed_memory` returns
    the memory it freed to the system.

    Parameters
    ----------
    function : callable

    Returns
    -------
    callable
        Returns ``(function, args, kwargs)`` for :class:`joblib.Parallel`.

    Examples
    --------
    >>> from joblib import Parallel
    >>> import sklearn_pt
    >>> from sklearn_pt._parallel import delayed
    >>> with sklearn_pt.config_context(torch_threads=1):
    ...     tasks = [delayed(sklearn_pt.get_config)() for _ in range(2)]
    >>> [c["torch_threads"] for c in Parallel(n_jobs=2)(tasks)]
    [1, 1]
    """

    @functools.wraps(function)
    def make_task(*args, **kwargs):
        return _WithConfig(function), args, kwargs

    return make_task


def run_tasks(tasks: Iterable, *, n_jobs: int | None, bar, step: int = 1) -> list:
    """Run :func:`delayed` tasks, advancing ``bar`` by ``step`` as each returns.

    The tasks are all made (and their configurations captured) in the
    calling thread before the first one runs.

    Parameters
    ----------
    tasks : iterable of delayed calls
    n_jobs : int or None
        joblib workers.
    bar : tqdm.tqdm
        A progress bar (it may span several calls).
    step : int, default=1
        Runs each task counts for.

    Returns
    -------
    list
        The tasks' results, in the order of ``tasks``.
    """
    # Make every task here: joblib pulls further tasks from a generator in
    # its own thread, whose (thread-local) configurations are the defaults.
    tasks = list(tasks)
    results: list[Any] = []
    for result in Parallel(n_jobs=n_jobs, return_as="generator")(tasks):
        results.append(result)
        bar.update(step)
    return results
