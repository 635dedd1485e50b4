"""Without matplotlib every drawing entry point says who needs it and how to
install it, through the one check of ``sklearn_pt._plotting``."""

import sys

import numpy as np
import pytest

from sklearn_pt._plotting import PlotDependencyError
from sklearn_pt.experiments._common import new_figure
from sklearn_pt.model_selection import PhaseTransitionDisplay
from sklearn_pt.spectral import WeightSpectrum


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError


def test_every_drawing_entry_point_names_itself_and_the_extra(no_matplotlib):
    spectrum = WeightSpectrum().fit(np.random.default_rng(0).normal(size=(20, 10)))
    display = PhaseTransitionDisplay([0.0, 1.0], np.ones((2, 1, 2)), np.ones((2, 1, 2)))
    calls = {
        "WeightSpectrum.plot": spectrum.plot,
        "PhaseTransitionDisplay": display.plot,
        "The reproductions": lambda: new_figure(2),
    }
    for needed_by, call in calls.items():
        with pytest.raises(
            PlotDependencyError,
            match=rf"{needed_by} needs matplotlib.*sklearn_pt\[plot\]",
        ):
            call()
    assert issubclass(PlotDependencyError, ImportError)
