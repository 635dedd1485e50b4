"""Names that moved to another subpackage: the old import keeps working, with
a ``FutureWarning``, for the deprecation cycle (scikit-learn's: two minor
releases)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable


def moved_names(
    old_module: str,
    new_module: str,
    names: Iterable[str],
    *,
    since: str = "0.1",
    until: str = "0.3",
) -> Callable[[str], object]:
    """A module ``__getattr__`` that serves ``names`` from ``new_module``.

    Parameters
    ----------
    old_module : str
        The module the names were imported from (its ``__name__``).
    new_module : str
        Where they live now.
    names : iterable of str
    since, until : str
        The release that moved them, and the one that will drop the old path.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_pt._moved import moved_names
    >>> getattr_ = moved_names("old.place", "sklearn_pt.metrics", ["neuron_overlap"])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     function = getattr_("neuron_overlap")
    >>> function.__module__, caught[0].category.__name__
    ('sklearn_pt.metrics._overlap', 'FutureWarning')
    """
    moved = frozenset(names)

    def __getattr__(name: str):
        if name not in moved:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        warnings.warn(
            f"{old_module}.{name} moved to {new_module}.{name} in {since} and the "
            f"old name will be removed in {until}. Import it with: from "
            f"{new_module} import {name}",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new_module), name)

    return __getattr__
