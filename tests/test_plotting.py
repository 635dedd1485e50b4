"""Without matplotlib every drawing entry point says who needs it and how to
install it, through the one check of ``sklearn_pt._plotting``."""

import sys

import numpy as np
import pytest

from sklearn_pt._plotting import PlotDependencyError
from sklearn_pt.experiments import DEEP, run
from sklearn_pt.model_selection import PhaseTransitionDisplay
from sklearn_pt.spectral import WeightSpectrum


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError


def test_every_drawing_entry_point_names_itself_and_the_extra(no_matplotlib):
    spectrum = WeightSpectrum().fit(np.random.default_rng(0).normal(size=(20, 10)))
    display = PhaseTransitionDisplay([0.0, 1.0], np.ones((2, 1, 2)), np.ones((2, 1, 2)))
    result = run(DEEP, scale="tiny", progress=False)  # the table needs no matplotlib
    calls = {
        "WeightSpectrum.plot": spectrum.plot,
        "PhaseTransitionDisplay": display.plot,
        "The reproductions": lambda: result.figure,
    }
    for needed_by, call in calls.items():
        with pytest.raises(
            PlotDependencyError,
            match=rf"{needed_by} needs matplotlib.*sklearn_pt\[plot\]",
        ):
            call()
    assert issubclass(PlotDependencyError, ImportError)
