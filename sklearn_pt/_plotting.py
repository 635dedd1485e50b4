"""The one check that matplotlib, the ``plot`` extra, is installed."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["PlotDependencyError", "import_matplotlib"]


class PlotDependencyError(ImportError):
    """matplotlib, the ``plot`` extra, is needed to draw the figures."""


def import_matplotlib(needed_by: str, module: str = "matplotlib.pyplot") -> ModuleType:
    """Import ``module`` of matplotlib, or say who needs it and how to get it.

    Parameters
    ----------
    needed_by : str
        What draws, for the message (e.g. ``"WeightSpectrum.plot"``).
    module : str, default="matplotlib.pyplot"
        The matplotlib module to import (``"matplotlib.figure"`` draws
        without a GUI backend).

    Returns
    -------
    module

    Raises
    ------
    PlotDependencyError
        An ImportError naming ``needed_by`` and the install command.

    Examples
    --------
    >>> from sklearn_pt._plotting import import_matplotlib
    >>> import_matplotlib("this example", "matplotlib.figure").__name__
    'matplotlib.figure'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PlotDependencyError(
            f"{needed_by} needs matplotlib, which is not installed. Install the "
            "plot extra: pip install 'sklearn_pt[plot]' (or pip install "
            "matplotlib)."
        ) from exc
