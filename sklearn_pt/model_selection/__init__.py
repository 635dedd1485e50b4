"""Sweeps that reveal phase transitions, and their displays.

``estimator_overlap`` moved to :mod:`sklearn_pt.metrics` in 0.1 (importing it
from here warns until 0.3).
"""

from .._moved import moved_names
from ._display import PhaseTransitionDisplay
from ._proportion_curve import ProportionCurveResult, proportion_curve
from ._sample_ratio import (
    rate_crossing,
    sample_ratio_curve,
    sample_ratio_threshold,
)
from ._stacked import STACKED_PARAMETERS, fit_stacked

__all__ = [
    "STACKED_PARAMETERS",
    "PhaseTransitionDisplay",
    "ProportionCurveResult",
    "fit_stacked",
    "proportion_curve",
    "rate_crossing",
    "sample_ratio_curve",
    "sample_ratio_threshold",
]

__getattr__ = moved_names(__name__, "sklearn_pt.metrics", ["estimator_overlap"])
