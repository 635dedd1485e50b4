"""The verdict rules every reproduction shares.

A claim of a paper is judged in three moves, each a small pure function:

1. a **statistic** measured at each value of the parameter over which the
   paper makes the claim (a paired difference over seeds at each ``P``, a
   fitted exponent, a threshold ...);
2. a **test** at a stated level turns each value's statistic into an
   :class:`Outcome`: the claim *holds* there, the *opposite* holds there, or
   *neither* is shown (:func:`sign_test`, :func:`interval_test`);
3. :func:`judge` combines the outcomes over the stated range into one of the
   four :data:`VERDICTS`:

   - ``"reproduced"``: the claim holds at every value of the range;
   - ``"mixed"``: it holds on part of the range (the line says where, and
     where the opposite holds);
   - ``"not reproduced at this size"``: it holds nowhere and its opposite
     holds nowhere (the line should say why the size is a plausible reason);
   - ``"contradicted"``: it holds nowhere and its opposite holds somewhere.

:class:`Verdict` keeps the claim, the word, the test and the numbers, and
writes the line a summary opens with. Read more in ``SPEC.md``, "Verdict
words".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "BOOTSTRAP_OVER_SEEDS",
    "CONTRADICTED",
    "HOLDS",
    "LEVEL",
    "MIXED",
    "NEITHER",
    "NOT_AT_THIS_SIZE",
    "OPPOSITE",
    "REPRODUCED",
    "SIGN_TEST_OVER_SEEDS",
    "VERDICTS",
    "Verdict",
    "bootstrap_interval",
    "interval_test",
    "judge",
    "sign_test",
    "sign_test_out_of_reach",
    "sign_test_p_value",
]

REPRODUCED = "reproduced"
MIXED = "mixed"
NOT_AT_THIS_SIZE = "not reproduced at this size"
CONTRADICTED = "contradicted"
VERDICTS = (REPRODUCED, MIXED, NOT_AT_THIS_SIZE, CONTRADICTED)
"""The four verdict words, from the strongest support to the strongest
refutation."""

LEVEL = 0.05
"""The one-sided level of the sign tests over seeds (the intervals are
two-sided 95%)."""
SIGN_TEST_OVER_SEEDS = f"paired sign test over seeds, one-sided, level {LEVEL:g}"
"""How a verdict line names :func:`sign_test` over paired seeds."""
BOOTSTRAP_OVER_SEEDS = "95% percentile bootstrap interval over seeds"
"""How a verdict line names :func:`bootstrap_interval` over seeds."""

HOLDS, OPPOSITE, NEITHER = "holds", "opposite", "neither"
Outcome = Literal["holds", "opposite", "neither"]
"""What a test says at one value of the claim's range."""


def sign_test_p_value(differences: Sequence[float] | np.ndarray) -> float:
    """One-sided exact sign test of ``median(differences) > 0``.

    Ties (zeros) are dropped, as in the classical sign test.

    Parameters
    ----------
    differences : array-like of float
        Paired differences, one per seed.

    Returns
    -------
    p_value : float
        ``P(B >= k)`` for ``B ~ Binomial(n, 1/2)``, ``k`` the number of
        positive differences and ``n`` the number of nonzero ones; 1.0 when
        every difference is zero.

    Examples
    --------
    >>> from sklearn_pt.experiments._verdicts import sign_test_p_value
    >>> sign_test_p_value([0.1, 0.2, 0.3, 0.1, 0.2, 0.4])  # 6 of 6: 1/64
    0.015625
    """
    values = np.asarray(differences, dtype=float)
    if np.isnan(values).any():
        raise ValueError("differences must not contain NaN; drop the failed seeds.")
    nonzero = values[values != 0]
    n, k = nonzero.size, int((nonzero > 0).sum())
    if n == 0:
        return 1.0
    return sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n


def sign_test_out_of_reach(n_seeds: int, level: float = LEVEL) -> str:
    """Why no sign test over ``n_seeds`` can hold at ``level`` (its smallest
    p-value, all seeds one way, is ``2 ** -n_seeds``), or ``""`` when one can:
    the reason a verdict line gives for few seeds.

    Examples
    --------
    >>> from sklearn_pt.experiments._verdicts import sign_test_out_of_reach
    >>> print(sign_test_out_of_reach(2))
    With 2 seeds no one-sided sign test reaches 0.05 (its smallest p-value is 1/4).
    >>> sign_test_out_of_reach(6)
    ''
    """
    if 0.5**n_seeds <= level:
        return ""
    return (
        f"With {n_seeds} seeds no one-sided sign test reaches {level:g} "
        f"(its smallest p-value is 1/{2**n_seeds})."
    )


def sign_test(
    differences: Sequence[float] | np.ndarray, level: float = 0.05
) -> Outcome:
    """Outcome of a paired sign test: does the claim ``difference > 0`` hold?

    Parameters
    ----------
    differences : array-like of float
        Paired differences oriented so that a positive value supports the
        claim (one per seed).
    level : float, default=0.05
        One-sided level of each direction's test. With 6 seeds only 6 of 6
        reaches 0.05 (p = 1/64; 5 of 6 gives 7/64).

    Returns
    -------
    outcome : {"holds", "opposite", "neither"}
        ``"holds"`` when ``difference > 0`` at the level, ``"opposite"``
        when ``difference < 0`` at the level, else ``"neither"``.

    Examples
    --------
    >>> from sklearn_pt.experiments._verdicts import sign_test
    >>> sign_test([1, 2, 3, 4, 5, 6]), sign_test([-1] * 6), sign_test([1, -1] * 3)
    ('holds', 'opposite', 'neither')
    """
    values = np.asarray(differences, dtype=float)
    if sign_test_p_value(values) <= level:
        return HOLDS
    if sign_test_p_value(-values) <= level:
        return OPPOSITE
    return NEITHER


def interval_test(
    interval: tuple[float, float],
    *,
    predicted: float | None = None,
    above: float | None = None,
    below: float | None = None,
) -> Outcome:
    """Outcome of comparing a confidence interval with the paper's value.

    Give exactly one of ``predicted``, ``above`` or ``below``.

    Parameters
    ----------
    interval : (float, float)
        Lower and upper ends of the interval of the measured statistic.
    predicted : float, optional
        The claim is "the statistic equals ``predicted``": holds when the
        interval contains it. A finite-size estimate whose interval misses
        it is ``"neither"`` (not shown at this size), never ``"opposite"``:
        an asymptotic value is not refuted by one size.
    above : float, optional
        The claim is "the statistic exceeds ``above``": holds when the whole
        interval is above it, opposite when the whole interval is below it.
    below : float, optional
        The claim is "the statistic is below ``below``": the mirror image.

    Returns
    -------
    outcome : {"holds", "opposite", "neither"}

    Examples
    --------
    >>> from sklearn_pt.experiments._verdicts import interval_test
    >>> interval_test((1.5, 2.1), predicted=1.75)
    'holds'
    >>> interval_test((2.2, 2.6), predicted=1.75)
    'neither'
    >>> interval_test((0.2, 0.4), above=0.1), interval_test((0.02, 0.05), above=0.1)
    ('holds', 'opposite')
    """
    given = [value is not None for value in (predicted, above, below)]
    if sum(given) != 1:
        raise ValueError("Give exactly one of predicted, above or below.")
    low, high = float(interval[0]), float(interval[1])
    if not low <= high:
        raise ValueError(
            f"interval must be (low, high) with low <= high; got {interval}."
        )
    if predicted is not None:
        return HOLDS if low <= predicted <= high else NEITHER
    if above is not None:
        return HOLDS if low > above else OPPOSITE if high < above else NEITHER
    return HOLDS if high < below else OPPOSITE if low > below else NEITHER


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    random_state: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a statistic of i.i.d. (or paired)
    values.

    Parameters
    ----------
    values : array-like
        One value per seed (for paired data, the per-seed difference), or
        a 2-D array with one row per seed that ``statistic`` reduces along
        axis 0 of each resample.
    statistic : callable, default=np.mean
        Maps an array of resampled rows to a float.
    confidence : float, default=0.95
        Two-sided coverage.
    n_resamples : int, default=2000
        Number of bootstrap resamples.
    random_state : int, default=0
        Seed of the local generator (no global state is touched).

    Returns
    -------
    (low, high) : tuple of float

    Examples
    --------
    >>> from sklearn_pt.experiments._verdicts import bootstrap_interval
    >>> low, high = bootstrap_interval([1.0, 1.2, 0.9, 1.1, 1.0, 1.05])
    >>> bool(0.9 < low < 1.04 < high < 1.2)
    True
    """
    data = np.asarray(values, dtype=float)
    if data.shape[0] == 0:
        raise ValueError("bootstrap_interval needs at least one value.")
    generator = np.random.default_rng(random_state)
    indices = generator.integers(0, data.shape[0], size=(n_resamples, data.shape[0]))
    replicates = np.array([statistic(data[index]) for index in indices], dtype=float)
    tail = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(replicates, [tail, 1.0 - tail])
    return float(low), float(high)


def _labels(outcomes: Mapping[str, Outcome], outcome: Outcome) -> str:
    return ", ".join(label for label, value in outcomes.items() if value == outcome)


def judge(outcomes: Mapping[str, Outcome]) -> tuple[str, str]:
    """Combine the outcomes over a claim's range into a verdict word.

    Parameters
    ----------
    outcomes : mapping of str to {"holds", "opposite", "neither"}
        One outcome per value of the stated range, keyed by a label of that
        value (``"P=0.05"``, ``"d=400"``); insertion order is kept in the text.

    Returns
    -------
    word : str
        One of :data:`VERDICTS`.
    where : str
        Where the claim holds and where its opposite holds (empty when the
        word says it all: everywhere, or nowhere and no opposite).

    Examples
    --------
    >>> from sklearn_pt.experiments._verdicts import judge
    >>> judge({"P=0.02": "holds", "P=0.05": "holds"})
    ('reproduced', '')
    >>> judge({"P=0.02": "opposite", "P=0.05": "neither", "P=0.1": "holds"})
    ('mixed', 'holds at P=0.1; opposite at P=0.02')
    >>> judge({"d=100": "neither", "d=200": "neither"})
    ('not reproduced at this size', '')
    >>> judge({"P=0.02": "opposite", "P=0.05": "neither"})
    ('contradicted', 'opposite at P=0.02')
    """
    if not outcomes:
        raise ValueError(
            "judge needs at least one outcome (the claim's range is empty)."
        )
    unknown = set(outcomes.values()) - {HOLDS, OPPOSITE, NEITHER}
    if unknown:
        raise ValueError(
            f"Outcomes must be 'holds', 'opposite' or 'neither'; got {unknown}."
        )
    holds, opposite = _labels(outcomes, HOLDS), _labels(outcomes, OPPOSITE)
    parts = ([f"holds at {holds}"] if holds else []) + (
        [f"opposite at {opposite}"] if opposite else []
    )
    if all(value == HOLDS for value in outcomes.values()):
        return REPRODUCED, ""
    if holds:
        return MIXED, "; ".join(parts)
    if opposite:
        return CONTRADICTED, "; ".join(parts)
    return NOT_AT_THIS_SIZE, ""


@dataclass(frozen=True)
class Verdict:
    """One claim's verdict, with the rule that gave it and the numbers.

    Parameters
    ----------
    claim : str
        The paper's claim, in a few words, with the range it is stated on.
    word : str
        One of :data:`VERDICTS` (usually from :func:`judge`).
    test : str
        The test and its level (``"paired sign test, one-sided, level 0.05"``).
    measured : str
        What this run measured, with numbers.
    paper : str
        What the paper (or its theory) says, with numbers.
    where : str, default=""
        Where it holds and where the opposite holds (from :func:`judge`).
    reason : str, default=""
        Why, when the word needs one (why the size is a plausible reason,
        what the opposite means).

    Examples
    --------
    >>> from sklearn_pt.experiments._verdicts import Verdict
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

    @classmethod
    def from_outcomes(
        cls, claim: str, outcomes: Mapping[str, Outcome], **fields: str
    ) -> Verdict:
        """The verdict :func:`judge` gives ``outcomes``, with the text fields
        (``test``, ``measured``, ``paper``, ``reason``) passed through."""
        word, where = judge(outcomes)
        return cls(claim, word, where=where, **fields)

    def line(self) -> str:
        """The Markdown line a summary opens with."""
        text = f"**{self.word.capitalize()}**: {self.claim}"
        if self.where:
            text += f" ({self.where})"
        text += f". Test: {self.test}. Measured: {self.measured}. Paper: {self.paper}."
        if self.reason:
            text += f" {self.reason}"
        return text
