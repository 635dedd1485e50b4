"""Reproduction: two gradient steps where the theory says they act
(Moniri, Hassani, 2026).

Two parts of the long table (column ``part``), each row one fit:

1. ``"count"``: the outliers the second step adds (``added_outliers``) at
   ``N = n = d`` over a grid of ``(alpha1, alpha2)``, for ``"sincos"``
   (every Hermite coefficient nonzero, so the paper's ``Lambda`` applies),
   beside ``Lambda`` (``lambda_paper``, :func:`~sklearn_pt.theory.spike_count`)
   and the finite-``N`` prediction (``finite_n``, from
   :func:`~sklearn_pt.theory.two_step_signal`).
2. ``"alignment"``: ``theta``'s projection on the top-2 right singular
   vectors of the second step's update ``W_2 - W_1`` and on ``W_2``'s
   outliers, reused vs fresh batch, under ``tanh`` (``c_3 != 0``: the order
   ``k = 2`` that carries He_3 exists) and ``gelu`` (``c_3 = 0``: the parity
   rule's negative control), over ``d`` with paired seeds (the same data,
   ``W_0`` and ``a`` for both batches and both activations); in the readout
   cells, the ridge readout's test error after 0, 1 and 2 steps
   (``readout_mse_after_<k>``), on the He_3 target and on a tanh target
   (which has a linear part).

The count's steps are float64 (a count turns on a singular value beside the
edge); the alignment's are float32 (``alignment_dtype``), from the same
initial draw rounded, their numbers equal to float64's within 1e-5.
"""

from __future__ import annotations

import itertools
import math
from functools import partial

import numpy as np
import torch
from sklearn.base import clone
from sklearn.linear_model import RidgeCV
from sklearn.utils import Bunch

from .._torch_bridge import as_tensor
from ..datasets import make_single_index
from ..feature_extraction import TwoStepFeatures
from ..feature_extraction._two_step_plan import (
    RIDGE_ALPHAS,
    _check_step_params,
    standardise_targets,
)
from ..nn._activations import activation_function
from ..spectral import WeightSpectrum, soft_edge_test
from ..spectral._weights import singular_values, top_right_singular_vectors
from ..theory import predict_outlier_count, spike_count, two_step_signal
from ._claims import Claim, IntervalTest, SignTest
from ._runner import Experiment
from ._stats import NEITHER, OPPOSITE, bootstrap_interval, fit_exponent

__all__ = ["TWO_STEP", "align", "count_outliers", "measure"]

REFERENCE = (
    'Moniri, Hassani (2026), "Feature Learning in Linear-Width Two-Layer '
    'Networks: Two vs. One Step of Gradient Descent".'
)
LEVEL = 0.05
"""Level of the Tracy--Widom edge test that counts the outliers."""
COUNT_TOLERANCE = 0.5
"""A prediction of the count holds at an ``N`` when the bootstrap interval
of the mean ``|measured - predicted|`` over its runs (cells and seeds) lies
below this (within half an outlier on average); the opposite when above."""
DECAY_BOUNDARY = -0.25
"""The reused batch's alignment is ``Theta(1)`` in the paper (exponent
``b = 0`` in ``d^b``) while chance decays like ``d^(-1/2)``: the claim holds
when the exponent's bootstrap interval lies above the midpoint -1/4."""
N_UPDATE_VECTORS = 2
"""Right singular vectors of ``W_2 - W_1`` on which ``theta`` is projected
(chance ``sqrt(2 / d)``)."""
STEPS = (0, 1, 2)
"""The readout's test error is recorded after this many steps."""
READOUT = [f"readout_mse_after_{k}" for k in STEPS]
"""Its columns."""
ALIGN_EXPONENTS = {"alpha1": 0.375, "alpha2": 0.45}
"""The alignment's step-size exponents: ``Lambda = 3``, 1 with tanh
(``k = 2``), 2 with gelu (``k = 1, 3``)."""
ALPHA1, ALPHA2 = (0.1, 0.25, 0.375), (0.05, 0.2, 0.35, 0.45)
"""The count's grid."""


def _preset(
    widths,
    seeds,
    dims,
    paired,
    readout_dims,
    a1=ALPHA1,
    a2=ALPHA2,
    n_test=2000,
    alignment_dtype="float32",
):
    """One scale: the count cells (``N = n = d`` in ``widths``, ``seeds``
    each; one task per ``(N, alpha1)`` measures every ``alpha2`` of ``a2``,
    see :func:`count_outliers`), then the alignment cells (``N = n = 4 d``,
    ``paired`` seeds): He_3 under tanh and gelu, and the tanh target at
    ``readout_dims``."""
    count = [
        {"part": "count", "activation": "sincos", "link": "tanh", "batch": "reuse"}
        | {"ratio": 1, "d": width, "alpha1": alpha1, "alpha2": tuple(a2)}
        for width, alpha1 in itertools.product(widths, a1)
    ]
    alignment = [
        {"part": "alignment", "activation": activation, "link": link}
        | {"batch": batch, "ratio": 4, "d": d, "seeds": paired}
        | ALIGN_EXPONENTS
        for activation, link, cells in (
            ("tanh", "he3", dims),
            ("gelu", "he3", dims),
            ("tanh", "tanh", readout_dims),
        )
        for batch in ("reuse", "fresh")
        for d in cells
    ]
    return {
        "seeds": seeds,
        "grid": count + alignment,
        "step_size_constants": [2.0, 2.0],
        "readout_activation": "tanh",
        "readout_dims": list(readout_dims),
        "n_test": n_test,
        "level": LEVEL,
        "alignment_dtype": alignment_dtype,
    }


# ---------------------------------------------------------------- measure


def _two_steps(config: dict, seed: int, X, y, dtype="float64") -> TwoStepFeatures:
    """The cell's two steps, ``N = n = len(X)``."""
    return TwoStepFeatures(
        hidden_layer_sizes=X.shape[0],
        activation=config["activation"],
        step_size_exponents=(config["alpha1"], config["alpha2"]),
        step_size_constants=tuple(config["step_size_constants"]),
        step_batches=config["batch"],  # the table's "batch" column
        random_state=seed,
        device=config["device"],
        dtype=dtype,
    ).fit(X, y)


def count_outliers(config: dict, seed: int) -> list[dict]:
    """Outliers the second step adds at ``N = n = d``, measured and
    predicted, for each ``alpha2`` of ``config["alpha2"]``.

    Measured (``added_outliers``): outliers of ``W_2`` minus those of
    ``W_1``, each by the Tracy--Widom edge test at ``config["level"]``.
    Predicted (``finite_n``): the same difference for the mean-field signals
    ``S_2``, ``S_1`` of :func:`~sklearn_pt.theory.two_step_signal` against
    each measured bulk (:func:`~sklearn_pt.theory.predict_outlier_count`:
    the spikes of ``S_k`` whose outlier, by the D-transform of ``W_k``'s
    bulk, passes the test's threshold, plus the heavy rows of ``W_k - S_k``,
    the neurons with the largest ``|a_j|``).
    The cells share the data, the first step, ``W_1``'s test and ``S_1``
    (see :func:`_count_parts`).

    Examples
    --------
    >>> from sklearn_pt.experiments._two_step import TWO_STEP, count_outliers
    >>> preset = TWO_STEP.presets["tiny"]
    >>> cell = preset["grid"][0]
    >>> out = count_outliers({**preset, **cell, "device": "cpu"}, 0)
    >>> len(out) == len(cell["alpha2"]), sorted(out[0])
    (True, ['added_outliers', 'finite_n'])
    """
    cells = _count_parts(config, seed)
    first = _predicted(cells[0], 0)  # W_1 and S_1 are every cell's
    return [
        {
            "added_outliers": int(cell.tests[1].n_outliers - cell.tests[0].n_outliers),
            "finite_n": _predicted(cell, 1) - first,
        }
        for cell in cells
    ]


def _predicted(parts: Bunch, step: int) -> int:
    """:func:`~sklearn_pt.theory.predict_outlier_count` of ``W_1`` (``step``
    0) or ``W_2`` (1) of one :func:`_count_parts` entry, from its signal and
    its edge test."""
    test = parts.tests[step]
    return predict_outlier_count(
        (parts.signal.first, parts.signal.second)[step],
        parts.weights[1 + step],
        edge=test.edge,
        threshold=test.threshold,
        singular_values=test.singular_values,
    )


def _count_parts(config: dict, seed: int) -> list[Bunch]:
    """What :func:`count_outliers` compares, for each ``alpha2`` of
    ``config["alpha2"]``: ``weights`` (``[W_0, W_1, W_2]``),
    ``second_layer`` (``a``), ``tests`` (the
    :func:`~sklearn_pt.spectral.soft_edge_test` of ``W_1`` and ``W_2``, with
    their ``singular_values``) and ``signal`` (``first`` and ``second`` of
    :func:`~sklearn_pt.theory.two_step_signal`).

    One fit serves every ``alpha2``: the second step moves ``W_1`` by
    ``eta_2`` times a gradient that does not depend on ``eta_2``, so ``W_2 =
    W_1 + eta_2 G_2``, and step 2's mean term is linear in ``eta_2`` the
    same way (``S_2 = S_1 + eta_2 B``); both are taken from the fit and the
    signal at the first ``alpha2``."""
    d, level, device = config["d"], config["level"], config["device"]
    X, y = make_single_index(d, d, link=config["link"], random_state=seed)
    alphas = config["alpha2"]
    features = _two_steps({**config, "alpha2": alphas[0]}, seed, X, y)
    W0, W1, W2 = features.first_layer_weights_
    a = features.second_layer_weights_
    eta2 = features.step_sizes_[1]
    targets = standardise_targets(y)
    signal = two_step_signal(
        (X, targets),
        (X, targets),
        a,
        features.step_sizes_,
        config["activation"],
        initial_weights=W0,
    )
    step, mean_step = (W2 - W1) / eta2, (signal.second - signal.first) / eta2
    first_test = _edge_test(W1, level, device)
    parts = []
    for alpha2 in alphas:
        cell = clone(features).set_params(
            step_size_exponents=(config["alpha1"], alpha2)
        )
        eta = _check_step_params(cell)[1][1]
        second = W1 + eta * step
        parts.append(
            Bunch(
                weights=[W0, W1, second],
                second_layer=a,
                tests=(first_test, _edge_test(second, level, device)),
                signal=Bunch(first=signal.first, second=signal.first + eta * mean_step),
            )
        )
    return parts


def _edge_test(W, level: float, device) -> Bunch:
    """The Tracy--Widom edge test of ``W``'s singular values (what
    ``WeightSpectrum(edge="tracy-widom")`` counts, without its vectors),
    with the ``singular_values``."""
    values = singular_values(as_tensor(W, device=device, dtype=torch.float64))
    return Bunch(**soft_edge_test(values, level=level), singular_values=values)


def _readout_errors(weights, activation, X, y, readout, test) -> dict:
    """Test MSE / Var(y_test) of a RidgeCV readout (the learner's ``"auto"``)
    on ``sigma(W x)`` of the readout rows, for each ``W`` of ``weights``."""
    sigma = activation_function(activation)
    errors = {}
    for column, weight in zip(READOUT, weights, strict=True):
        with torch.no_grad():
            features = sigma(torch.as_tensor(X @ weight.T)).numpy()
        ridge = RidgeCV(alphas=RIDGE_ALPHAS).fit(features[readout], y[readout])
        residual = ridge.predict(features[test]) - y[test]
        errors[column] = float(np.mean(residual**2) / np.var(y[test]))
    return errors


def align(config: dict, seed: int) -> dict:
    """Two steps at ``N = n = ratio * d`` on a single-index target: how much
    of ``theta`` they learn, and (readout cells) what a ridge readout gains.

    Returns
    -------
    dict
        ``"update_alignment"``: ``|P theta|`` on the top
        :data:`N_UPDATE_VECTORS` right singular vectors of ``W_2 - W_1``;
        ``"outlier_alignment"``: on the right singular vectors of ``W_2``'s
        outliers (Tracy--Widom test; 0 when none); ``"n_outliers"``: their
        number; in the readout cells (``readout_activation`` at
        ``readout_dims``), :data:`READOUT`: the test errors after 0, 1, 2
        steps of a readout on ``n`` further samples, as
        :class:`~sklearn_pt.neural_network.TwoStepFeatureLearner` does.

    Examples
    --------
    >>> from sklearn_pt.experiments._two_step import TWO_STEP, align
    >>> preset = TWO_STEP.presets["tiny"]
    >>> cell = next(c for c in preset["grid"] if c["part"] == "alignment")
    >>> out = align({**preset, **cell, "device": "cpu"}, 0)
    >>> 0 <= out["update_alignment"] <= 1, len(out)
    (True, 6)
    """
    d, n = config["d"], config["ratio"] * config["d"]
    readout = _is_readout_cell(config)
    extra = n + config["n_test"] if readout else 0
    X, y, theta = make_single_index(
        n + extra, d, link=config["link"], random_state=seed, return_directions=True
    )
    if not readout:  # the steps round X to their dtype, and nothing else reads it
        X = X.astype(config["alignment_dtype"])
    steps = _two_steps(config, seed, X[:n], y[:n], config["alignment_dtype"])
    weights = steps.first_layer_weights_
    del steps
    if readout:
        weights = [w.astype(np.float64) for w in weights]
    # float64 from here, one conversion at a time (W_2 - W_1 casts W_1 as it goes)
    second = weights[2].astype(np.float64, copy=False)
    update = torch.as_tensor(second - weights[1], dtype=torch.float64)
    unit = np.ravel(theta) / np.linalg.norm(theta)
    vt = top_right_singular_vectors(update, N_UPDATE_VECTORS)
    del update
    spectrum = WeightSpectrum(edge="tracy-widom", level=config["level"])
    vectors = spectrum.fit(second).outlier_vectors_
    out = {
        "update_alignment": float(np.linalg.norm(vt @ unit)),
        "outlier_alignment": float(np.linalg.norm(vectors @ unit))
        if len(vectors)
        else 0.0,
        "n_outliers": int(spectrum.n_outliers_),
    }
    if readout:
        rows = np.arange(X.shape[0])
        readout, test = rows[n : 2 * n], rows[2 * n :]
        out |= _readout_errors(weights, config["activation"], X, y, readout, test)
    return out


def measure(config: dict, seed: int) -> list[dict]:
    """The fits of the cell's part (:func:`count_outliers`, a row per
    ``alpha2``, or :func:`align`), beside the theory's counts and the chance
    alignment."""
    if config["part"] == "count":
        counts = count_outliers(config, seed)
        return [
            {"alpha2": alpha2} | _theory(config, alpha2) | count
            for alpha2, count in zip(config["alpha2"], counts, strict=True)
        ]
    chance = math.sqrt(N_UPDATE_VECTORS / config["d"])
    theory = _theory(config, config["alpha2"])
    return [theory | {"chance_alignment": chance} | align(config, seed)]


def _theory(config: dict, alpha2: float) -> dict:
    """The width and the counts ``Lambda`` of the paper and of the cell's
    activation (:func:`~sklearn_pt.theory.spike_count`)."""
    a1 = config["alpha1"]
    return {
        "width": config["ratio"] * config["d"],
        "lambda_paper": spike_count(a1, alpha2),
        "lambda_activation": spike_count(a1, alpha2, activation=config["activation"]),
    }


def task_cost(config: dict) -> float:
    """A task's products, roughly: ``N n d`` per fit, ``N^2 n`` per readout
    (three readouts in a readout cell), and for a count task (an ``alpha2``
    per entry) its fit, signal and ten decompositions, about ``10 d^3``."""
    d = config["d"]
    if config["part"] == "count":
        return 10.0 * d**3
    width = samples = config["ratio"] * d
    readout = 3 * width**2 * samples if _is_readout_cell(config) else 0
    return width * samples * d + readout


def _is_readout_cell(config: dict) -> bool:
    """Whether an alignment cell also fits the readout (:func:`align`)."""
    return (
        config["activation"] == config["readout_activation"]
        and config["d"] in config["readout_dims"]
    )


# ----------------------------------------------------------------- claims


def _rows(table, part, **where):
    """The rows of ``part`` whose columns equal the given values."""
    rows = table[table.part == part]
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return rows


def _count_errors(prediction: str, table) -> dict:
    """Per ``N``: ``|added_outliers - prediction|`` of its runs (cells and
    seeds)."""
    count = _rows(table, "count")
    error = (count.added_outliers - count[prediction]).abs()
    return {width: e.to_numpy() for width, e in error.groupby(count.width)}


def _exact_shares(prediction: str, table) -> str:
    shares = ", ".join(
        f"N={width:g} {np.mean(errors == 0):.0%}"
        for width, errors in _count_errors(prediction, table).items()
    )
    return f"mean |measured - predicted| (exact in {shares})"


def _lambda_reason(table, outcomes) -> str:
    if "holds" in outcomes.values():
        return ""
    return (
        "Lambda is the N -> infinity count: the orders near the boundary "
        "alpha2 = k (1/2 - alpha1) have strengths of order one at these N "
        "(the finite-N prediction counts them)."
    )


class _AsymptoticBelow(IntervalTest):
    """:class:`IntervalTest` of an ``N -> infinity`` value: an interval on
    the wrong side is "neither", since one finite size cannot refute it."""

    def __call__(self, values, point):
        outcome, text = super().__call__(values, point)
        return (NEITHER if outcome == OPPOSITE else outcome), text


def _count_claim(prediction, claim, test, paper, **texts) -> Claim:
    return Claim(
        claim,
        partial(_count_errors, prediction),
        test(below=COUNT_TOLERANCE, of="the mean |measured - predicted| over the runs"),
        paper=paper,
        label="N={:g}",
        measured=partial(_exact_shares, prediction),
        size_trend=True,
        **texts,
    )


COUNT_CLAIMS = [
    _count_claim(
        "lambda_paper",
        "the second step adds Lambda = floor(alpha2 / (1/2 - alpha1)) outliers "
        "(sincos: every Hermite coefficient nonzero)",
        _AsymptoticBelow,
        "Lambda outliers as N -> infinity",
        reason=_lambda_reason,
        test_text="at each N (an interval above it is not counted against an "
        "N -> infinity count)",
    ),
    _count_claim(
        "finite_n",
        "the finite-N prediction gives the count (spikes of the mean-field "
        "signal S_2 whose outlier, by the D-transform of W_2's measured bulk, "
        "passes the edge test, plus the heavy rows of W_2 - S_2, minus the same "
        "for S_1 and W_1)",
        IntervalTest,
        "the library's prediction from the Hermite expansion (two_step_signal); "
        "the paper gives the N -> infinity count",
        test_text="at each N",
    ),
]
"""The count against ``Lambda`` and against the finite-``N`` prediction."""


def _curves(table, value, **where):
    """``value`` of the He_3 alignment rows, ``(d, seed)``."""
    rows = _rows(table, "alignment", link="he3", **where)
    return rows.pivot(index="d", columns="seed", values=value)


def _paired(value, first: dict, second: dict, table) -> dict:
    """Per ``d``, ``first - second`` over the paired seeds."""
    diff = _curves(table, value, **first) - _curves(table, value, **second)
    return {d: diff.loc[d].to_numpy() for d in diff.index}


def _exponent(table, activation, batch):
    """Exponent ``b`` of the mean update alignment ``~ d^b``, its interval
    from the seeds resampled at each ``d``."""
    curves = _curves(table, "update_alignment", activation=activation, batch=batch)
    return fit_exponent(curves.index, [row.dropna() for _, row in curves.iterrows()])


def _exponent_text(activation, table, outcomes=None) -> str:
    estimates = {
        batch: _exponent(table, activation, batch) for batch in ("reuse", "fresh")
    }
    text = ", ".join(
        f"{batch} b = {b:.2f} [{low:.2f}, {high:.2f}]"
        for batch, (b, low, high) in estimates.items()
    )
    decay = max(e.high for e in estimates.values()) < 0
    return f"{activation}'s exponents in d: {text}" + (
        " (both intervals below 0: both decay)." if decay else "."
    )


def _outlier_counts(carrier, table, outcomes) -> str:
    reuse, fresh = (
        _curves(table, "n_outliers", activation=carrier, batch=batch).stack().mean()
        for batch in ("reuse", "fresh")
    )
    return (
        f"The projection grows with the number of outliers (chance sqrt(k / "
        f"d)): W_2 has {reuse:.1f} (reuse) and {fresh:.1f} (fresh) on average; "
        "the update's top-2 vectors above are free of that count."
    )


def _per_d(claim, statistic, paper, reason="") -> Claim:
    """A paired sign test at each ``d``, read along ``d``."""
    return Claim(
        claim,
        statistic,
        SignTest(),
        paper=paper,
        label="d={:g}",
        reason=reason,
        test_text="at each d",
        along_size=True,
    )


def _alignment_claims(table) -> list[Claim]:
    activations = sorted(_rows(table, "alignment", link="he3").activation.unique())
    carrier = "tanh" if "tanh" in activations else activations[0]
    reuse = {"activation": carrier, "batch": "reuse"}
    fresh = {"activation": carrier, "batch": "fresh"}
    chance = "reuse Theta(1) when Lambda >= 2, fresh at chance"
    dims = _curves(table, "update_alignment", **reuse).index
    decay = Claim(
        f"the reused batch's He_3 alignment does not decay with d ({carrier})",
        lambda t: {f"{dims[0]:g}..{dims[-1]:g}": _exponent(t, carrier, "reuse")},
        IntervalTest(
            above=DECAY_BOUNDARY, of="the exponent b of mean alignment ~ d^b", digits=2
        ),
        paper="reuse b = 0 (Theta(1)); fresh, chance, b = -1/2",
        label="d={}",
        reason=partial(_exponent_text, carrier),
        measured="reuse b",
    )
    return [
        _per_d(
            f"a reused batch aligns step 2's update with an He_3 direction and a "
            f"fresh one does not ({carrier}, c_3 != 0; |P theta| on the top "
            f"{N_UPDATE_VECTORS} right singular vectors of W_2 - W_1)",
            partial(_paired, "update_alignment", reuse, fresh),
            chance,
        ),
        _per_d(
            f"a reused batch aligns W_2's outliers with an He_3 direction more "
            f"than a fresh one ({carrier}; |P theta| on the outliers' right "
            "vectors, Tracy-Widom test)",
            partial(_paired, "outlier_alignment", reuse, fresh),
            chance,
            partial(_outlier_counts, carrier),
        ),
        decay,
    ] + [
        _per_d(
            f"the order k = 2 (c_3) carries He_3: the reused batch aligns more "
            f"under {carrier} than under {control} (c_3 = 0; parity rule), same "
            "data and initialisation",
            partial(
                _paired, "update_alignment", reuse, reuse | {"activation": control}
            ),
            f"spike_count(..., activation={control!r}) leaves out k = 2: no He_3 "
            "alignment",
            partial(_exponent_text, control),
        )
        for control in activations
        if control != carrier
    ]


def _readout_rows(table, link="", batch="reuse"):
    rows = table[table[READOUT[-1]].notna() & (table.batch == batch)]
    return rows[rows.link == link] if link else rows


def _two_beat_one(link, table) -> dict:
    """Per ``d``, the readout's error after one step minus after two."""
    rows = _readout_rows(table, link)
    return dict(iter((rows[READOUT[1]] - rows[READOUT[2]]).groupby(rows.d)))


def _readout_reason(link, table, outcomes) -> str:
    after = _readout_rows(table, link)[READOUT].mean()
    text = "Test MSE / Var(y) after 0, 1, 2 steps (all d): " + ", ".join(
        f"{a:.3f}" for a in after
    )
    if after.min() <= 0.95:
        return text + "."
    return text + (
        ". The readout learns nothing of this target at these sizes (error at "
        "the variance), although step 2 aligns with theta: its update is rank 2 "
        "and O(1) beside a bulk of norm about 3, so each neuron's weight along "
        "theta stays about 1 / sqrt(N)."
    )


def _readout_claims(table) -> list[Claim]:
    return [
        _per_d(
            f"two steps beat one: the ridge readout's test error falls from 1 to 2 "
            f"steps on the {link} target "
            f"({'no linear part' if link == 'he3' else 'a linear part'}; reused "
            f"batch, {_readout_rows(table, link).activation.iloc[0]})",
            partial(_two_beat_one, link),
            "one step learns only the linear part (He_3 has none); the second "
            "step adds the higher orders",
            partial(_readout_reason, link),
        )
        for link in sorted(_readout_rows(table).link.unique())
    ]


def _claims(table) -> list[Claim]:
    """The count against both predictions, the He_3 alignment (update,
    outliers, decay, parity control), two steps against one per target."""
    claims = list(COUNT_CLAIMS) if (table.part == "count").any() else []
    if len(_rows(table, "alignment", link="he3")):
        claims += _alignment_claims(table)
    return claims + (_readout_claims(table) if READOUT[-1] in table else [])


# ----------------------------------------------------------------- panels


def _errorbars(ax, x, samples, **style) -> None:
    """Means of ``samples`` (one array per ``x``) with bootstrap intervals."""
    estimates = [
        bootstrap_interval(s) if len(s) > 1 else (np.mean(s),) * 3 for s in samples
    ]
    means, low, high = np.array(estimates, dtype=float).T
    ax.errorbar(x, means, yerr=[means - low, high - means], capsize=3, **style)


def _count_error_panel(ax, table) -> None:
    for k, (prediction, label) in enumerate(
        (("lambda_paper", "Lambda (paper)"), ("finite_n", "finite-N prediction"))
    ):
        errors = _count_errors(prediction, table)
        x = np.array(list(errors), dtype=float) * (1 + 0.02 * k)
        _errorbars(ax, x, list(errors.values()), fmt="o-", label=label)
    ax.axhline(COUNT_TOLERANCE, color="0.5", ls=":", label="verdict tolerance")
    ax.set_xscale("log")
    ax.set(xlabel="N = n = d", ylabel="mean |measured - predicted| (95% CI)")
    ax.set_title("outliers added by step 2: error of each prediction", fontsize=10)
    ax.legend(fontsize=8)


def _count_cells_panel(ax, table) -> None:
    count = _rows(table, "count")
    width = count.width.max()
    at = count[count.width == width]
    cells = at.groupby(["alpha1", "alpha2"]).mean(numeric_only=True)
    grid = cells.added_outliers.unstack()
    for (i, a1), (j, a2) in itertools.product(
        enumerate(grid.index), enumerate(grid.columns)
    ):
        cell = cells.loc[(a1, a2)]
        text = f"{cell.added_outliers:.2g}\nL {cell.lambda_paper:g} | "
        text += f"f {cell.finite_n:.2g}"
        ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", color="w", fontsize=8)
    extent = (0, grid.shape[1], 0, grid.shape[0])
    image = ax.imshow(grid, origin="lower", vmin=0, vmax=4, extent=extent)
    ax.set_xticks(np.arange(grid.shape[1]) + 0.5, [f"{v:g}" for v in grid.columns])
    ax.set_yticks(np.arange(grid.shape[0]) + 0.5, [f"{v:g}" for v in grid.index])
    ax.set(xlabel="alpha2", ylabel="alpha1")
    ax.set_title(
        f"added outliers, N = {width:g}: measured\n(L: Lambda, f: finite-N prediction)",
        fontsize=10,
    )
    ax.figure.colorbar(image, ax=ax, shrink=0.8)


def _count_means_panel(ax, table) -> None:
    count = _rows(table, "count")
    for column, label, fmt in (
        ("added_outliers", "measured (Tracy-Widom)", "o-"),
        ("finite_n", "finite-N prediction", "s--"),
        ("lambda_paper", "Lambda", "^:"),
    ):
        by_width = dict(iter(count.groupby("width")[column]))
        _errorbars(ax, list(by_width), list(by_width.values()), fmt=fmt, label=label)
    ax.set_xscale("log")
    ax.set(xlabel="N = n = d", ylabel="added outliers, mean over the grid (95% CI)")
    ax.set_title("outliers added by step 2, over N", fontsize=10)
    ax.legend(fontsize=8)


def _alignment_panel(value, title, ax, table) -> None:
    he3 = _rows(table, "alignment", link="he3")
    batches = itertools.product(sorted(he3.activation.unique()), ("reuse", "fresh"))
    for k, (activation, batch) in enumerate(batches):
        curves = _curves(table, value, activation=activation, batch=batch)
        x = curves.index.to_numpy(dtype=float) * (1 + 0.02 * k)
        samples = [row.dropna() for _, row in curves.iterrows()]
        fmt = "o-" if batch == "reuse" else "s--"
        _errorbars(ax, x, samples, fmt=fmt, label=f"{activation}, {batch}")
    if value == "update_alignment":
        chance = he3.groupby("d").chance_alignment.first()
        ax.plot(chance.index, chance, color="0.4", ls=":", label="chance sqrt(2/d)")
    ax.set_xscale("log")
    ax.set(xlabel="d (N = n = 4 d)", ylabel=f"|P theta| on {title}", ylim=(0, 1))
    ax.set_title(f"He_3: alignment of {title} (95% CI)", fontsize=10)
    ax.legend(fontsize=8)


def _readout_panel(ax, table) -> None:
    readout = table[table[READOUT[-1]].notna()]
    for k, ((link, batch), rows) in enumerate(readout.groupby(["link", "batch"])):
        d = rows.d.max()
        samples = [rows[rows.d == d][column].to_numpy() for column in READOUT]
        fmt = "o-" if batch == "reuse" else "s--"
        label = f"{link} target, {batch}, d={d:g}"
        _errorbars(ax, np.array(STEPS) + 0.04 * k, samples, fmt=fmt, label=label)
    ax.set_xticks(list(STEPS))
    ax.set(xlabel="gradient steps", ylabel="test MSE / Var(y) (95% CI)")
    ax.set_title("ridge readout: two steps against one", fontsize=10)
    ax.legend(fontsize=8)


def _describe(table) -> str:
    """The design in a few lines, the theory's counts read from the table."""
    he3 = _rows(table, "alignment", link="he3")
    counts = he3.groupby("activation").lambda_activation.first()
    first = he3.iloc[0]
    return (
        "*Count*: sincos (every Hermite coefficient nonzero), tanh single-index "
        f"target, reused batch, N = n = d, Tracy-Widom edge test at level {LEVEL:g} "
        "on W_1 and W_2. Lambda is the paper's N -> infinity count; the finite-N "
        "prediction counts the spikes of the mean-field signal S_2 "
        "(two_step_signal) whose outlier, by the D-transform of W_2's measured "
        "bulk (Benaych-Georges, Nadakuditi), passes the test's threshold, plus "
        "the heavy rows of W_2 - S_2 (neurons with a large |a_j|), minus the "
        "same for S_1 and W_1.\n\n"
        f"*He_3 alignment*: N = n = {first.width / first.d:g} d, (alpha1, alpha2) "
        f"= ({first.alpha1:g}, {first.alpha2:g}), Lambda = {first.lambda_paper:g} ("
        + ", ".join(f"{c:g} with {a}" for a, c in counts.items())
        + "); chance sqrt(2/d).\n\n"
        "*Two steps against one*: a RidgeCV readout on n further samples. One "
        "step adds X^T y / n, whose signal is the target's linear coefficient "
        "(zero for He_3); the second step's k = 2 adds a direction along theta, "
        "as a rank-2 update of size O(1) beside a bulk of norm ~3 over N neurons."
    )


TWO_STEP = Experiment(
    name="two-step",
    title=(
        "Two gradient steps: outlier count vs Lambda and a finite-N "
        "prediction, He_3 alignment (reused vs fresh), two steps vs one"
    ),
    reference=REFERENCE,
    presets={
        "tiny": _preset(
            (30, 40, 50), 1, (10, 15, 20), 2, (10,), (0.25,), (0.05, 0.35), n_test=100
        ),
        "small": _preset((100, 200, 300), 2, (50, 100, 200, 400), 8, (50, 100, 200)),
        "medium": _preset(
            (200, 400, 800, 1600), 8, (100, 200, 400, 800, 1600), 8, (100, 200, 400)
        ),
        "paper": _preset(
            (250, 500, 1000, 2000, 4000),
            10,
            (100, 200, 400, 800, 1600, 3200),
            10,
            (100, 200, 400, 800),
        ),
    },
    measure=measure,
    cost=task_cost,
    claims=_claims,
    panels=(
        _count_error_panel,
        _count_cells_panel,
        _count_means_panel,
        partial(_alignment_panel, "update_alignment", "step 2's update (W_2 - W_1)"),
        partial(_alignment_panel, "outlier_alignment", "W_2's outliers"),
        _readout_panel,
    ),
    describe=_describe,
)
"""Outliers added by the second step against ``Lambda`` and a finite-``N``
prediction, He_3 alignment reused vs fresh under tanh and gelu, and two
steps against one (Moniri, Hassani, 2026)."""
