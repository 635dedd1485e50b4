"""Sweeps that reveal phase transitions, and their displays."""

from ._display import PhaseTransitionDisplay
from ._proportion_curve import proportion_curve

__all__ = ["PhaseTransitionDisplay", "proportion_curve"]
