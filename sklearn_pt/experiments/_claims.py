"""A paper's claim as data, and the rule that turns it into a verdict.

A :class:`Claim` names a **statistic** of the long table at each point of
the range the paper states the claim on (per-seed values, or an
:class:`~sklearn_pt.experiments.Estimate`), and a **test**
(:class:`SignTest`, :class:`IntervalTest`) that gives each point an outcome:
the claim *holds* there, the *opposite* holds, or *neither* is shown.
:func:`verdict_word` combines the outcomes into one of :data:`VERDICTS`:

- ``"reproduced"``: the claim holds at every point of the range;
- ``"mixed"``: it holds on part of the range (the line says where);
- ``"not reproduced at this size"``: it holds nowhere and its opposite
  nowhere;
- ``"contradicted"``: it holds nowhere, its opposite somewhere, and the
  run shows that opposite not shrinking with size (below).

"Contradicted" needs a second size. An opposite seen at one size may be a
finite-size effect, so a claim with no size in its run reads "not
reproduced at this size" and its line says where the opposite holds. A
claim gets a second size in one of three ways:

- read along a size (``N``, ``d``, ``size_trend=True``) with an error as
  its statistic (the seeds' non-negative values at each size): the line
  states the slope ``b`` of ``mean error ~ size^b`` and its interval
  (:func:`~sklearn_pt.experiments.fit_exponent`), "converging" when the
  interval lies below 0. An opposite that converges is a size effect;
- a statistic that favours the claim when positive, read along a size
  (``along_size=True``: a paired difference at each ``d``): the slope of its
  mean in ``log size`` and the slope's bootstrap interval. An opposite whose
  slope's interval lies above 0 (moving towards the claim) is a size effect;
- measured at a smaller size too (``shrink``: per point, the paired move
  of the statistic from the smaller size to the run's, towards the claim
  when positive): at each point where the opposite holds, a sign test of
  that move. An opposite that shrinks at every such point is a size effect.

A size effect reads "not reproduced at this size"; an opposite not shown to
shrink reads "contradicted".

:class:`Verdict` keeps the words and numbers and writes the line a summary
opens with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._stats import (
    CONFIDENCE,
    HOLDS,
    N_RESAMPLES,
    NEITHER,
    OPPOSITE,
    SIGN_LEVEL,
    Estimate,
    Outcome,
    bootstrap_interval,
    fit_exponent,
    interval_test,
    sign_test,
)

__all__ = [
    "CONTRADICTED",
    "MIXED",
    "NOT_AT_THIS_SIZE",
    "REPRODUCED",
    "VERDICTS",
    "Claim",
    "IntervalTest",
    "SignTest",
    "Verdict",
    "verdict_word",
]

REPRODUCED = "reproduced"
MIXED = "mixed"
NOT_AT_THIS_SIZE = "not reproduced at this size"
CONTRADICTED = "contradicted"
VERDICTS = (REPRODUCED, MIXED, NOT_AT_THIS_SIZE, CONTRADICTED)
"""The four verdict words, from the strongest support to the strongest
refutation."""

Text = str | Callable[[pd.DataFrame], str]
"""A verdict's text: fixed, or written from the table."""


def verdict_word(outcomes: Mapping[str, Outcome]) -> tuple[str, str]:
    """The verdict word of a claim's outcomes over its range, and where the
    claim and its opposite hold (empty when the word says it all).

    Examples
    --------
    >>> from sklearn_pt.experiments import verdict_word
    >>> verdict_word({"P=0.02": "holds", "P=0.05": "holds"})
    ('reproduced', '')
    >>> verdict_word({"P=0.02": "opposite", "P=0.05": "neither", "P=0.1": "holds"})
    ('mixed', 'holds at P=0.1; opposite at P=0.02')
    >>> verdict_word({"d=100": "neither"})
    ('not reproduced at this size', '')
    >>> verdict_word({"P=0.02": "opposite", "P=0.05": "neither"})
    ('contradicted', 'opposite at P=0.02')
    """
    if not outcomes:
        raise ValueError("A claim needs at least one point in its range.")
    unknown = set(outcomes.values()) - {HOLDS, OPPOSITE, NEITHER}
    if unknown:
        raise ValueError(
            f"Outcomes are 'holds', 'opposite' or 'neither'; got {unknown}."
        )

    def at(outcome):
        return ", ".join(label for label, value in outcomes.items() if value == outcome)

    holds, opposite = at(HOLDS), at(OPPOSITE)
    where = "; ".join(
        [f"holds at {holds}"] * bool(holds)
        + [f"opposite at {opposite}"] * bool(opposite)
    )
    if all(value == HOLDS for value in outcomes.values()):
        return REPRODUCED, ""
    if holds:
        return MIXED, where
    return (CONTRADICTED, where) if opposite else (NOT_AT_THIS_SIZE, "")


@dataclass(frozen=True)
class Verdict:
    """One claim's verdict: the claim, its word, the test and the numbers.

    Examples
    --------
    >>> from sklearn_pt.experiments import Verdict
    >>> verdict = Verdict("E(P) falls", "reproduced", "sign test, level 0.05",
    ...                   "6 of 6 seeds", "it falls")
    >>> print(verdict.line())  # doctest: +NORMALIZE_WHITESPACE
    **Reproduced**: E(P) falls. Test: sign test, level 0.05.
    Measured: 6 of 6 seeds. Paper: it falls.
    """

    claim: str
    word: str
    test: str
    measured: str
    paper: str
    where: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        if self.word not in VERDICTS:
            raise ValueError(f"word must be one of {VERDICTS}; got {self.word!r}.")

    def line(self) -> str:
        """The Markdown line a summary opens with."""
        text = f"**{self.word.capitalize()}**: {self.claim}"
        if self.where:
            text += f" ({self.where})"
        text += f". Test: {self.test}. Measured: {self.measured}. Paper: {self.paper}."
        return text + (f" {self.reason}" if self.reason else "")


def _finite(values) -> np.ndarray:
    values = np.asarray(values, dtype=float).ravel()
    return values[np.isfinite(values)]


@dataclass(frozen=True)
class SignTest:
    """Paired sign test over seeds of ``difference > 0`` at each point
    (:func:`~sklearn_pt.experiments.sign_test`; NaN seeds dropped).

    Examples
    --------
    >>> from sklearn_pt.experiments import SignTest
    >>> SignTest()([0.1, 0.2, 0.1, 0.3, 0.2, 0.1], None)
    ('holds', '+0.167 (6 of 6 seeds ahead)')
    """

    level: float = SIGN_LEVEL

    def describe(self) -> str:
        return (
            "paired sign test over seeds (scipy binomtest), one-sided, level "
            f"{self.level:g}"
        )

    def __call__(self, values, point) -> tuple[Outcome, str]:
        diff = _finite(values)
        if not diff.size:
            return NEITHER, "no seed"
        ahead = int((diff > 0).sum())
        return sign_test(diff, self.level), (
            f"{diff.mean():+.3f} ({ahead} of {diff.size} seeds ahead)"
        )


@dataclass(frozen=True)
class IntervalTest:
    """The bootstrap interval of a statistic against a value at each point.

    The statistic's values are the seeds' values (their mean and its
    interval are taken) or an :class:`~sklearn_pt.experiments.Estimate`
    made by the claim's statistic. Give one of ``contains``, ``above`` or
    ``below``: a number, or a function of the range point.

    Examples
    --------
    >>> from sklearn_pt.experiments import IntervalTest
    >>> IntervalTest(above=lambda p: p)([0.4, 0.5, 0.45, 0.6], 0.1)[0]
    'holds'
    """

    contains: float | Callable[[Any], float] | None = None
    above: float | Callable[[Any], float] | None = None
    below: float | Callable[[Any], float] | None = None
    of: str = "the mean over seeds"
    digits: int = 3

    def describe(self) -> str:
        side = next(
            f"{name} {value:g}" if not callable(value) else name
            for name, value in (
                ("containing", self.contains),
                ("above", self.above),
                ("below", self.below),
            )
            if value is not None
        )
        return (
            f"{CONFIDENCE:.0%} percentile bootstrap interval ({N_RESAMPLES} "
            f"resamples) of {self.of}, {side}"
        )

    def __call__(self, values, point) -> tuple[Outcome, str]:
        if isinstance(values, Estimate):
            estimate = values
        else:
            finite = _finite(values)
            if finite.size < 2:
                return NEITHER, "too few seeds"
            estimate = bootstrap_interval(finite)
        sides = {"contains": self.contains, "above": self.above, "below": self.below}
        name, value = next((k, v) for k, v in sides.items() if v is not None)
        target = value(point) if callable(value) else value
        outcome = interval_test((estimate.low, estimate.high), **{name: target})
        n = self.digits
        return outcome, (
            f"{estimate.value:.{n}g} [{estimate.low:.{n}g}, {estimate.high:.{n}g}]"
        )


def _text(text: Text, table: pd.DataFrame) -> str:
    return text(table) if callable(text) else text


@dataclass(frozen=True)
class Claim:
    """A paper's claim, as the verdict rule reads it from the long table.

    Parameters
    ----------
    claim : str or callable
        The claim in a few words, with its range (a callable writes it from
        the table).
    statistic : callable
        ``statistic(table) -> {point: values}``: for each point of the range
        (a ``P``, a ``d``, ...), the seeds' values (paired differences for a
        :class:`SignTest`) or an :class:`~sklearn_pt.experiments.Estimate`.
    test : SignTest or IntervalTest
    paper : str or callable
        What the paper or its theory says, with numbers.
    label : str, default="{}"
        How a point is named in the line (``"P={:g}"``).
    reason : str or callable, default=""
        Why, when the word needs one; a callable gets the table and the
        outcomes.
    test_text : str, default=""
        Said after the test's own description (what it is applied to).
    measured : str or callable, default=""
        Said before the measured values.
    size_trend : bool, default=False
        The range's points are sizes and the statistic's values errors: the
        line states the slope of the mean error in the size, and an
        opposite that converges (slope interval below 0) reads "not
        reproduced at this size", not "contradicted".
    along_size : bool, default=False
        The range's points are sizes and the statistic favours the claim
        when positive (a :class:`SignTest`'s paired differences): an
        opposite whose mean moves towards the claim with the size (the
        bootstrap interval of the slope of the mean in ``log size`` above 0)
        reads "not reproduced at this size", not "contradicted".
    shrink : callable, optional
        ``shrink(table) -> {point: values}``: per point of the range, the
        seeds' paired move of the statistic from a smaller size of the run
        to its full size (positive: towards the claim). An opposite that a
        sign test shows moving towards the claim at every point where it
        holds reads "not reproduced at this size". Without ``shrink`` (or
        where it gives no point), ``size_trend`` and ``along_size``, the run
        has one size, and an opposite reads "not reproduced at this size"
        with where it holds.
    shrink_text : str, default="with size"
        How the line names the move (``"from 100 to 400 epochs"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_pt.experiments import Claim, SignTest
    >>> table = pd.DataFrame({"d": [1, 1, 1, 1, 1], "gain": [1, 2, 1, 3, 1]})
    >>> claim = Claim("a gain at every d", lambda t: dict(iter(t.groupby("d").gain)),
    ...               SignTest(), paper="a gain", label="d={}")
    >>> claim.verdict(table).word
    'reproduced'
    """

    claim: Text
    statistic: Callable[[pd.DataFrame], Mapping[Any, Any]]
    test: SignTest | IntervalTest
    paper: Text
    label: str = "{}"
    reason: str | Callable[[pd.DataFrame, Mapping[str, Outcome]], str] = ""
    test_text: str = ""
    measured: Text = ""
    size_trend: bool = False
    along_size: bool = False
    shrink: Callable[[pd.DataFrame], Mapping[Any, Any]] | None = None
    shrink_text: str = "with size"

    def verdict(self, table: pd.DataFrame) -> Verdict:
        """The verdict of this claim on ``table`` (the experiment's CSV)."""
        outcomes, cells = {}, []
        statistic = self.statistic(table)
        for point, values in statistic.items():
            label = self.label.format(point)
            outcomes[label], text = self.test(values, point)
            cells.append(f"{label}: {text}")
        word, where = verdict_word(outcomes)
        if self.size_trend and word != REPRODUCED:
            word, where = _with_trend(word, where, statistic)
        elif word == CONTRADICTED and self.along_size:
            word, where = _along_size(where, statistic)
        elif word == CONTRADICTED:
            word, where = self._shrinking(table, outcomes, where)
        reason = self.reason(table, outcomes) if callable(self.reason) else self.reason
        prefix = _text(self.measured, table)
        return Verdict(
            _text(self.claim, table),
            word,
            self.test.describe() + (f" {self.test_text}" if self.test_text else ""),
            (f"{prefix}: " if prefix else "") + "; ".join(cells),
            _text(self.paper, table),
            where=where,
            reason=reason,
        )

    def _shrinking(self, table, outcomes, where: str) -> tuple[str, str]:
        """A contradiction's word once its opposite's move with size is
        tested: "contradicted" only where that opposite is not shown to
        shrink."""
        moves = self.shrink(table) if self.shrink is not None else {}
        if not moves:
            return _one_size(CONTRADICTED, where)
        moves = {self.label.format(point): v for point, v in moves.items()}
        tested = {
            label: SignTest()(moves[label], label)
            if label in moves
            else (NEITHER, "not measured")
            for label, outcome in outcomes.items()
            if outcome == OPPOSITE
        }
        shrinking = all(outcome == HOLDS for outcome, _ in tested.values())
        cells = ", ".join(f"{label} {text}" for label, (_, text) in tested.items())
        moved = (
            f"{'shrinking' if shrinking else 'not shown to shrink'} {self.shrink_text}"
        )
        return (
            NOT_AT_THIS_SIZE if shrinking else CONTRADICTED,
            f"{where}; {moved}: {cells}",
        )


def _one_size(word: str, where: str) -> tuple[str, str]:
    """At one size an opposite is not shown to persist: no contradiction."""
    if word != CONTRADICTED:
        return word, where
    return NOT_AT_THIS_SIZE, f"{where}; one size, so not shown to persist"


def _along_size(where: str, statistic: Mapping[Any, Any]) -> tuple[str, str]:
    """A contradiction read along a size: "contradicted" unless the mean
    statistic is shown moving towards the claim as the size grows."""
    sizes = np.log([float(size) for size in statistic])
    values = [_finite(v) for v in statistic.values()]
    if len(sizes) < 2 or any(v.size < 2 for v in values):
        return _one_size(CONTRADICTED, where)

    def slope(*samples):
        return float(np.polyfit(sizes, [np.mean(s) for s in samples], 1)[0])

    trend = bootstrap_interval(values, slope)
    shrinking = trend.low > 0
    return (NOT_AT_THIS_SIZE if shrinking else CONTRADICTED), (
        f"{where}; {'shrinking' if shrinking else 'not shown to shrink'} with "
        f"size: the mean's slope per e-fold of size {trend.value:+.3g} "
        f"[{trend.low:+.3g}, {trend.high:+.3g}]"
    )


_ROUNDING = 1e-9
"""A slope within this of 0 is the rounding of a least-squares fit to equal
errors, not a trend."""


def _with_trend(word: str, where: str, errors: Mapping[Any, Any]) -> tuple[str, str]:
    """The word and its parenthesis once the errors' trend in the size is
    known: "converging" (the slope's interval below 0) turns a contradiction
    into a size effect."""
    sizes = [float(size) for size in errors]
    values = [_finite(v) for v in errors.values()]
    if len(sizes) < 2:
        return _one_size(word, where)
    if any(v.size == 0 for v in values):
        return word, where
    slope = fit_exponent(sizes, values)
    if not np.isfinite([slope.value, slope.low, slope.high]).all():
        return word, where  # an exact size (mean error 0) has no log
    converging = slope.high < -_ROUNDING
    direction = (
        "converging"
        if converging
        else "growing"
        if slope.low > _ROUNDING
        else "no trend shown"
    )
    trend = (
        f"{direction}: mean error ~ size^b, b = {slope.value:.2f} "
        f"[{slope.low:.2f}, {slope.high:.2f}]"
    )
    if word == CONTRADICTED and converging:
        word = NOT_AT_THIS_SIZE
    return word, "; ".join([trend] + [where] * bool(where))
