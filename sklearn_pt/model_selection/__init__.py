"""Sweeps that reveal phase transitions, and their displays."""

from ._display import PhaseTransitionDisplay
from ._proportion_curve import proportion_curve
from ._sample_ratio import (
    rate_crossing,
    sample_ratio_curve,
    sample_ratio_threshold,
)
from ._stacked import fit_stacked
from ._step_size import stable_step_size

__all__ = [
    "PhaseTransitionDisplay",
    "fit_stacked",
    "proportion_curve",
    "rate_crossing",
    "sample_ratio_curve",
    "sample_ratio_threshold",
    "stable_step_size",
]
