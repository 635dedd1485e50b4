"""The reproductions of the papers' claims, behind ``sklearn-pt reproduce``.

An experiment is data, an :class:`Experiment`: its sizes per scale, one
``measure(config, seed)`` that fits and returns rows, the paper's claims as
:class:`Claim` objects and the panels of its figure. :func:`run` runs every
cell of its grid for every seed in joblib workers (under the caller's
scikit-learn and library configurations), gathers the rows into one long
pandas table and judges the claims; :func:`judge` gives the same verdicts
from the table or its written CSV alone.

- :data:`PARTIAL` -- training error against the trainable proportion P for
  two init scales, in the theory's design (He, Lao, Lu, Zhang, 2026);
- :data:`APPROXIMATION` -- the best approximation error E(P) that the bound
  is about (``sklearn-pt reproduce partial`` runs both);
- :data:`DEEP` -- the transition in P for deep networks;
- :data:`TWO_STEP` -- outliers of the weight spectrum after two large GD
  steps, reused against fresh batches, two steps against one (Moniri,
  Hassani, 2026);
- :data:`FEATURE_LEARNING` -- the Hessian-defined threshold and the success
  of first-layer GD against delta = n/d (Montanari, Wang, 2026).

A claim's verdict is one of :data:`VERDICTS`, from the outcomes of its test
(:class:`SignTest`, :class:`IntervalTest`) at each point of the range the
paper states it on; the statistics (:func:`sign_test`,
:func:`bootstrap_interval`, ...) use :mod:`scipy.stats` at one level
(:data:`SIGN_LEVEL`) and one confidence and resample count
(:data:`CONFIDENCE`, :data:`N_RESAMPLES`), which every verdict line states.
The tables, figures and CSVs need pandas and matplotlib, the ``plot`` extra.

Examples
--------
>>> from sklearn_pt.experiments import DEEP, run
>>> result = run(DEEP, scale="tiny", progress=False)  # doctest: +SKIP
>>> result.write("results/")  # doctest: +SKIP
"""

try:
    import pandas  # noqa: F401
except ImportError as exc:  # pragma: no cover - pandas is in the plot extra
    raise ImportError(
        "sklearn_pt.experiments needs pandas for its tables. Install the plot "
        "extra: pip install 'sklearn_pt[plot]' (or pip install pandas)."
    ) from exc

from .._plotting import PlotDependencyError
from ._approximation import APPROXIMATION
from ._claims import (
    VERDICTS,
    Claim,
    IntervalTest,
    SignTest,
    Verdict,
    verdict_word,
)
from ._deep import DEEP
from ._feature_learning import FEATURE_LEARNING
from ._partial import PARTIAL
from ._runner import SCALES, Experiment, ExperimentResult, judge, run
from ._stats import *  # noqa: F403 (the statistics, listed in _stats.__all__)
from ._stats import __all__ as _STATISTICS
from ._two_step import TWO_STEP

EXPERIMENTS = {
    experiment.name: experiment
    for experiment in (PARTIAL, APPROXIMATION, DEEP, TWO_STEP, FEATURE_LEARNING)
}
"""The experiments by command-line name (the stem of their files), in the
order ``sklearn-pt reproduce all`` runs them."""

COMMANDS = {"partial": ("partial", "partial-approximation")}
"""Command-line names that run several experiments; any other name runs the
experiment of that name."""

__all__ = [
    "APPROXIMATION",
    "COMMANDS",
    "DEEP",
    "EXPERIMENTS",
    "FEATURE_LEARNING",
    "PARTIAL",
    "SCALES",
    "TWO_STEP",
    "VERDICTS",
    "Claim",
    "Experiment",
    "ExperimentResult",
    "IntervalTest",
    "PlotDependencyError",
    "SignTest",
    "Verdict",
    "judge",
    "run",
    "verdict_word",
    *_STATISTICS,
]
