"""Reproductions of the papers' figures, as used by ``sklearn-pt reproduce``.

Each experiment is a function ``run_<name>(*, scale, device, seeds, n_jobs,
progress)`` returning an :class:`ExperimentResult` (a table of raw numbers,
a matplotlib figure and a summary of the measured claim) that
:meth:`ExperimentResult.write` saves as PNG, CSV and Markdown:

- :func:`run_partial` -- training error vs the trainable proportion P for
  two init scales, in the theory's design, against the theory bound (He, Lao,
  Lu, Zhang, 2026);
- :func:`run_approximation` -- the best approximation error E(P) of a
  width-m network, the quantity the bound is about: its shape in P, the
  fitted mismatch ratio and its decay in m (``sklearn-pt reproduce partial``
  runs both);
- :func:`run_deep` -- the same for several depths;
- :data:`TWO_STEP` -- outliers added by the second gradient step vs
  :func:`~sklearn_pt.theory.spike_count` and a finite-N prediction, He_3
  alignment for reused vs fresh batches under an activation that can carry
  it, two steps against one (Moniri, Hassani, 2026);
- :data:`FEATURE_LEARNING` -- the Hessian-defined threshold delta_H
  and the success rate vs delta = n/d for first-layer GD, by d and width,
  and both spectral baselines (Montanari, Wang, 2026).

``scale`` is one of :data:`SCALES` (``"small"``, ``"medium"``,
``"paper"``); ``"small"`` runs all five in a little over a minute (an
estimate from CPU time; 117.6 s measured idle before the partial sweep's
small scale went to 400 epochs) on a two-core CPU (``sklearn-pt reproduce
all``, one seed per core).
Drawing needs matplotlib (``pip install sklearn_pt[plot]``).

Every verdict line is a :class:`Verdict` built by :meth:`Verdict.from_outcomes`
from per-range-point outcomes of :func:`sign_test` (paired over seeds, at
:data:`LEVEL`) or :func:`interval_test` (of a :func:`bootstrap_interval`),
in one of the four words of :data:`VERDICTS`; :func:`judge` is the rule that
turns the outcomes into the word. They are public so that an example or a
study of one's own judges its claims by the same rules.

The networks are small, so one torch thread per fit is fastest: on two busy
cores a fit of :func:`run_partial` took 0.33 s with
``torch.set_num_threads(1)`` and 3.35 s with two threads. ``sklearn-pt
reproduce`` runs with one thread (``--threads``) and parallelises over fits
with ``--n-jobs`` (by default one worker per core); the functions here leave
torch's settings alone.
"""

from ._approximation import run_approximation
from ._claims import (
    VERDICTS,
    Claim,
    IntervalTest,
    SignTest,
    Verdict,
    verdict_word,
)
from ._common import SCALES, ExperimentResult, PlotDependencyError
from ._deep import DEEP
from ._feature_learning import FEATURE_LEARNING
from ._partial import PARTIAL
from ._runner import Experiment, judge, run
from ._stats import (
    CONFIDENCE,
    N_RESAMPLES,
    SIGN_LEVEL,
    Estimate,
    bootstrap_interval,
    captured_fraction,
    crossing,
    fit_exponent,
    geometric_estimate,
    geometric_mean,
    interval_test,
    seed_curves,
    sign_test,
    sign_test_p_value,
    small_proportions,
)
from ._two_step import TWO_STEP

EXPERIMENTS = {
    "partial": PARTIAL,
    "partial-approximation": run_approximation,
    "deep": DEEP,
    "two-step": TWO_STEP,
    "feature-learning": FEATURE_LEARNING,
}
"""The experiments by command-line name (also the name of their files), in
the order ``all`` runs them."""

COMMANDS = {"partial": ("partial", "partial-approximation")}
"""Command-line names that run several experiments; any other name runs the
experiment of that name."""

__all__ = [
    "COMMANDS",
    "CONFIDENCE",
    "DEEP",
    "EXPERIMENTS",
    "FEATURE_LEARNING",
    "N_RESAMPLES",
    "PARTIAL",
    "SCALES",
    "SIGN_LEVEL",
    "TWO_STEP",
    "VERDICTS",
    "Claim",
    "Estimate",
    "Experiment",
    "ExperimentResult",
    "IntervalTest",
    "PlotDependencyError",
    "SignTest",
    "Verdict",
    "bootstrap_interval",
    "captured_fraction",
    "crossing",
    "fit_exponent",
    "geometric_estimate",
    "geometric_mean",
    "interval_test",
    "judge",
    "run",
    "run_approximation",
    "seed_curves",
    "sign_test",
    "sign_test_p_value",
    "small_proportions",
    "verdict_word",
]
