"""Sweeps that reveal phase transitions, and their displays."""

from ._display import PhaseTransitionDisplay
from ._proportion_curve import ProportionCurveResult, proportion_curve
from ._sample_ratio import (
    estimator_overlap,
    rate_crossing,
    sample_ratio_curve,
    sample_ratio_threshold,
)

__all__ = [
    "PhaseTransitionDisplay",
    "ProportionCurveResult",
    "estimator_overlap",
    "proportion_curve",
    "rate_crossing",
    "sample_ratio_curve",
    "sample_ratio_threshold",
]
