"""Bad input, bad parameters and divergence, over every public estimator.

Every failure must raise a ValueError or TypeError (scikit-learn's
``InvalidParameterError`` is both) whose message names the offending input or
parameter and says how to fix it, and must leave the estimator as it was: a
failed fit of a fitted estimator keeps it bitwise as before (the library's
``keep_state_on_error``), a failed first fit leaves it unfitted.

The small estimators below (one per public class, from ``tests/test_common.py``
plus :class:`~sklearn_pt.spectral.WeightSpectrum`, whose ``fit`` takes a
weight matrix) are shared with the determinism, persistence and concurrency
tests.
"""

from __future__ import annotations

import re
import warnings
from numbers import Integral

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted

from sklearn_pt._compat import Interval, InvalidParameterError, StrOptions
from sklearn_pt.datasets import make_single_index
from sklearn_pt.exceptions import CollapseWarning, DivergenceError
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.kernels import BiasedReLUFeatures, BiasedReLUKernel
from sklearn_pt.model_selection._stacked import fit_stacked_datasets
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)
from sklearn_pt.spectral import WeightSpectrum
from tests.test_common import ESTIMATORS as COMMON_ESTIMATORS


def one_per_class(estimators):
    """The first estimator of each class, in order."""
    seen, chosen = set(), []
    for estimator in estimators:
        if type(estimator) not in seen:
            seen.add(type(estimator))
            chosen.append(estimator)
    return chosen


ESTIMATORS = [*one_per_class(COMMON_ESTIMATORS), WeightSpectrum()]
"""One small, fast instance of every public estimator and transformer."""

UNSUPERVISED = (BiasedReLUFeatures, WeightSpectrum)
"""Estimators whose ``fit`` ignores ``y``."""

N_SAMPLES, N_FEATURES = 60, 6


def make_data(random_state=0):
    """Gaussian inputs and a target with a positive mean (as the spectral
    estimator's phase-retrieval preprocessing needs)."""
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((N_SAMPLES, N_FEATURES))
    y = X[:, 0] ** 2 + 0.5 * X[:, 1] + 0.1
    return X, y


def fit_estimator(estimator, X, y):
    """``fit(X, y)``; a :class:`WeightSpectrum` is fitted to ``X`` as ``W``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at tiny max_iter
        if isinstance(estimator, WeightSpectrum):
            return estimator.fit(X)
        return estimator.fit(X, y)


def output_of(estimator, X):
    """What the fitted estimator computes: predictions, features, or (for a
    :class:`WeightSpectrum`) its singular values and vectors."""
    if hasattr(estimator, "predict"):
        return estimator.predict(X)
    if hasattr(estimator, "transform"):
        return estimator.transform(X)
    check_is_fitted(estimator)
    return np.concatenate([estimator.singular_values_, estimator.components_.ravel()])


def estimator_id(estimator):
    return type(estimator).__name__


all_estimators = pytest.mark.parametrize("estimator", ESTIMATORS, ids=estimator_id)


def assert_fit_fails_cleanly(estimator, X, y, error, match, bad_params=None):
    """A failing fit raises ``error`` matching ``match`` and changes nothing.

    Checked twice: on an unfitted clone (stays unfitted) and on a clone fitted
    on good data (keeps the very same attributes and bitwise outputs). The
    ``bad_params`` are set for the failing fits only.
    """
    bad_params = bad_params or {}
    X_good, y_good = make_data()
    unfitted = clone(estimator).set_params(**bad_params)
    with pytest.raises(error, match=match):
        fit_estimator(unfitted, X, y)
    with pytest.raises(NotFittedError):
        output_of(unfitted, X_good)

    fitted = fit_estimator(clone(estimator), X_good, y_good)
    before, attributes = output_of(fitted, X_good), dict(vars(fitted))
    with pytest.raises(error, match=match):
        fit_estimator(fitted.set_params(**bad_params), X, y)
    # Every attribute is the very object it was (the parameters just set
    # keep their new values, as set_params left them).
    assert vars(fitted).keys() == attributes.keys()
    for key, value in attributes.items():
        assert vars(fitted)[key] is (bad_params[key] if key in bad_params else value)
    after = output_of(fitted, X_good)
    assert after.dtype == before.dtype
    assert after.tobytes() == before.tobytes()


# ----------------------------------------------------------------- inputs
def with_entry(X, value):
    X = X.copy()
    X[3, 2] = value
    return X


BAD_X = {
    "nan": (lambda X: with_entry(X, np.nan), r"contains NaN.*(impute|Imputer)"),
    "inf": (lambda X: with_entry(X, np.inf), r"contains infinity.*np\.isfinite"),
    "empty": (lambda X: X[:0], r"0 sample\(s\).*at least one sample"),
    "1-D": (lambda X: X[:, 0], r"Expected 2D array.*reshape"),
    "3-D": (lambda X: X[:, :, None], r"dim 3.*must be 2-D.*reshape"),
    "strings": (
        lambda X: np.full(X.shape, "a", dtype=object),
        r"string to float.*must be numeric.*Encoder",
    ),
    "complex": (lambda X: X + 1j, r"Complex data not supported.*must be real"),
}


@all_estimators
@pytest.mark.parametrize("case", list(BAD_X))
def test_bad_X_is_rejected_with_the_fix_and_changes_nothing(estimator, case):
    X, y = make_data()
    make_bad, match = BAD_X[case]
    X_bad = make_bad(X)
    y = y[: len(X_bad)] if X_bad.ndim else y
    assert_fit_fails_cleanly(
        estimator, X_bad, y, (ValueError, TypeError), f"(?s){match}"
    )


BAD_Y = {
    "mismatched lengths": (
        lambda y: y[:-1],
        r"inconsistent numbers of samples.*one row per sample",
    ),
    "nan": (
        lambda y: np.where(np.arange(len(y)) == 4, np.nan, y),
        r"Input y contains NaN.*np\.isnan\(y\)",
    ),
    "inf": (
        lambda y: np.where(np.arange(len(y)) == 4, np.inf, y),
        r"Input y contains infinity.*np\.isfinite",
    ),
    "strings": (
        lambda y: y.astype(str),
        r"y must be numeric; got an array of dtype <U.*np\.asarray\(y, dtype=float\)",
    ),
}


@pytest.mark.parametrize(
    "estimator",
    [e for e in ESTIMATORS if not isinstance(e, UNSUPERVISED)],
    ids=estimator_id,
)
@pytest.mark.parametrize("case", list(BAD_Y))
def test_bad_y_is_rejected_with_the_fix_and_changes_nothing(estimator, case):
    X, y = make_data()
    make_bad, match = BAD_Y[case]
    assert_fit_fails_cleanly(estimator, X, make_bad(y), ValueError, f"(?s){match}")


@all_estimators
def test_one_sample_fits_or_is_rejected_naming_the_sample_count(estimator):
    # One sample is legal for most estimators (the features or the spectral
    # matrix of one point exist); those that need more say how many.
    X, y = make_data()
    try:
        fitted = fit_estimator(clone(estimator), X[:1], y[:1])
    except ValueError as exc:
        assert re.search(r"at least \d+ samples.*n_samples=1", str(exc))
    else:
        assert np.all(np.isfinite(output_of(fitted, X[:1])))


@pytest.mark.parametrize(
    "estimator",
    [e for e in ESTIMATORS if not isinstance(e, WeightSpectrum)],
    ids=estimator_id,
)
def test_predict_with_another_number_of_features_names_the_fix(estimator):
    X, y = make_data()
    fitted = fit_estimator(clone(estimator), X, y)
    match = (
        rf"(?s)X has {N_FEATURES - 1} features, but {type(estimator).__name__} is "
        rf"expecting {N_FEATURES} features.*columns seen in fit"
    )
    with pytest.raises(ValueError, match=match):
        output_of(fitted, X[:, :-1])


# ------------------------------------------------------------- parameters
def just_outside(interval: Interval) -> list:
    """Values just outside ``interval``, at each finite end."""
    integral = interval.type is Integral
    values = []
    for end, direction, closed in (
        (interval.left, -1, interval.closed in ("left", "both")),
        (interval.right, 1, interval.closed in ("right", "both")),
    ):
        if end is None:
            continue
        if not closed:
            values.append(int(end) if integral else float(end))
        elif integral:
            values.append(int(end) + direction)
        else:
            values.append(float(np.nextafter(end, direction * np.inf)))
    return values


def out_of_range_cases():
    for estimator in ESTIMATORS:
        constraints = type(estimator)._parameter_constraints
        for name, options in constraints.items():
            for constraint in options:
                if isinstance(constraint, Interval):
                    for value in just_outside(constraint):
                        yield pytest.param(
                            estimator,
                            name,
                            value,
                            id=f"{estimator_id(estimator)}-{name}={value!r}",
                        )


def unknown_option_cases():
    for estimator in ESTIMATORS:
        constraints = type(estimator)._parameter_constraints
        for name, options in constraints.items():
            if any(isinstance(c, StrOptions) for c in options):
                yield pytest.param(
                    estimator, name, id=f"{estimator_id(estimator)}-{name}"
                )


def test_every_estimator_has_numeric_and_option_parameters_to_check():
    # Guards the generators above against silently yielding nothing.
    with_intervals = {case.values[0].__class__ for case in out_of_range_cases()}
    with_options = {case.values[0].__class__ for case in unknown_option_cases()}
    assert with_intervals == {type(e) for e in ESTIMATORS}
    assert with_options >= {type(e) for e in ESTIMATORS} - {BiasedReLUFeatures}


@pytest.mark.parametrize(("estimator", "name", "value"), out_of_range_cases())
def test_numeric_parameter_just_outside_its_range(estimator, name, value):
    X, y = make_data()
    match = (
        rf"The '{name}' parameter of {type(estimator).__name__} must be .*"
        rf"Got {re.escape(repr(value))} instead"
    )
    assert_fit_fails_cleanly(
        estimator, X, y, InvalidParameterError, match, bad_params={name: value}
    )


@pytest.mark.parametrize(("estimator", "name"), unknown_option_cases())
def test_unknown_option_lists_the_valid_ones(estimator, name):
    # Covers activation, solver, device, dtype, loss, batch, edge, ...
    X, y = make_data()
    match = (
        rf"The '{name}' parameter of {type(estimator).__name__} must be .*"
        r"str among \{.*Got 'no-such-option' instead"
    )
    assert_fit_fails_cleanly(
        estimator,
        X,
        y,
        InvalidParameterError,
        match,
        bad_params={name: "no-such-option"},
    )


@pytest.mark.parametrize(
    "estimator", [e for e in ESTIMATORS if "device" in e.get_params()], ids=estimator_id
)
def test_cuda_without_cuda_names_device_and_fix(estimator, no_cuda):
    X, y = make_data()
    assert_fit_fails_cleanly(
        estimator,
        X,
        y,
        ValueError,
        r"device='cuda' was requested but CUDA is not available.*Use device='cpu'",
        bad_params={"device": "cuda"},
    )


@all_estimators
def test_fit_is_decorated_with_keep_state_on_error(estimator):
    assert getattr(type(estimator).fit, "keeps_state_on_error", False)


# ------------------------------------------------------------ the kernel
@pytest.mark.parametrize("init_scale", [0.0, -1.0, np.nan, np.inf, "1", True])
def test_kernel_bad_init_scale_names_it_and_the_fix(init_scale):
    X, _ = make_data()
    kernel = BiasedReLUKernel(init_scale=init_scale)
    match = r"'init_scale' parameter of BiasedReLUKernel.*init_scale=1\.0"
    with pytest.raises(ValueError, match=match):
        kernel(X)
    with pytest.raises(ValueError, match=match):
        kernel.diag(X)


@pytest.mark.parametrize("case", ["nan", "inf", "3-D", "strings", "complex"])
def test_kernel_bad_inputs_say_the_fix(case):
    X, _ = make_data()
    make_bad, match = BAD_X[case]
    kernel = BiasedReLUKernel()
    with pytest.raises((ValueError, TypeError), match=f"(?s){match}"):
        kernel(make_bad(X))
    with pytest.raises((ValueError, TypeError), match=f"(?s){match}"):
        kernel(X, make_bad(X))


def test_kernel_arguments_with_different_feature_counts():
    X, _ = make_data()
    with pytest.raises(ValueError, match="X has 6 features but Y has 5"):
        BiasedReLUKernel()(X, X[:, :5])


# ------------------------------------------------------------- divergence
def fits_or_diverges(estimator, X, y, parameter):
    """Fit; a divergence must name ``parameter``; otherwise outputs are finite.

    Returns whether it diverged.
    """
    try:
        fitted = fit_estimator(estimator, X, y)
    except DivergenceError as exc:
        assert f"Lower {parameter}" in str(exc)
        return True
    assert np.all(np.isfinite(output_of(fitted, X)))
    return False


@pytest.mark.parametrize("solver", ["sgd", "adam", "gd"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_too_large_learning_rate_init_raises_divergence(solver, dtype):
    X, y = make_data()
    reg = PartiallyTrainableRegressor(
        hidden_layer_sizes=(16,), solver=solver, max_iter=30, random_state=0
    )
    good = fit_estimator(clone(reg).set_params(dtype=dtype), X, y)
    before = good.predict(X)
    good.set_params(learning_rate_init=1e4)
    with pytest.raises(DivergenceError, match=r"learning_rate_init=10000\. Lower"):
        fit_estimator(good, X, y)
    assert good.predict(X).tobytes() == before.tobytes()
    for rate in [1e1, 1e2, 1e6, 1e20]:
        fits_or_diverges(
            reg.set_params(learning_rate_init=rate), X, y, "learning_rate_init"
        )


@pytest.mark.parametrize("activation", ["gelu", "quadratic", "relu"])
def test_too_large_learning_rate_raises_divergence(activation):
    X, y = make_data()
    reg = FirstLayerGDRegressor(
        hidden_layer_sizes=4,
        activation=activation,
        learning_rate_init=1e3,
        max_iter=30,
        random_state=0,
    )
    with pytest.raises(DivergenceError, match="Lower learning_rate_init "):
        fit_estimator(reg, X, y)
    with pytest.raises(NotFittedError):
        reg.predict(X)


@pytest.mark.parametrize("stacked", [False, True])
def test_a_collapse_to_dead_units_raises_divergence(stacked):
    # One ReLU unit on x = (1, t), y = 1 (random_state=3 starts it active):
    # a large step overshoots, the next sends w.x below zero on every row,
    # and there GD stays (zero gradient) with a constant prediction and the
    # loss 0.5 = mean(y^2) / 2, above the initial loss yet neither a blow-up
    # nor a ten-fold rise.
    X = np.column_stack([np.ones(20), np.linspace(0.5, 1.5, 20)])
    y = np.ones(20)
    reg = FirstLayerGDRegressor(
        hidden_layer_sizes=1,
        activation="relu",
        learning_rate_init=10,
        max_iter=5,
        random_state=3,
    )
    match = (
        r"(?s)Training collapsed: the predictions no longer depend on X.*"
        r"loss rose from [\d.]+ at initialisation to 0\.5 .*Lower learning_rate"
    )
    healthy = clone(reg).set_params(learning_rate_init=0.1).fit(X, y)
    before = healthy.predict(X)
    assert np.ptp(before) > 0.01
    assert healthy.history_["train_loss"][-1] < healthy.history_["train_loss"][0]
    if stacked:
        (outcome,) = fit_stacked_datasets([reg], [(X, y)])
        assert isinstance(outcome, DivergenceError)
        assert re.search(match, str(outcome))
        return
    with pytest.raises(DivergenceError, match=match):
        reg.fit(X, y)
    with pytest.raises(NotFittedError):
        reg.predict(X)
    with pytest.raises(DivergenceError, match=match):
        healthy.set_params(learning_rate_init=10).fit(X, y)
    assert healthy.predict(X).tobytes() == before.tobytes()


@pytest.mark.parametrize("stacked", [False, True])
def test_a_fit_that_starts_with_every_unit_dead_warns(stacked):
    # random_state=0 draws the one ReLU unit with w.x < 0 on every row of
    # x = (1, t): zero gradient and a constant prediction from the start;
    # random_state=3 draws it active and it trains.
    X = np.column_stack([np.ones(20), np.linspace(0.5, 1.5, 20)])
    y = X[:, 1]
    dead = FirstLayerGDRegressor(
        1, activation="relu", learning_rate_init=0.1, max_iter=5, random_state=0
    )
    with pytest.warns(CollapseWarning, match=r"predicts a constant.*random_state"):
        if stacked:
            fit_stacked_datasets([dead], [(X, y)])
        else:
            dead.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        alive = clone(dead).set_params(random_state=3).fit(X, y)
    assert alive.history_["train_loss"][-1] < alive.history_["train_loss"][0]


def test_bounded_activation_cannot_diverge_and_stays_finite():
    # tanh saturates: the loss is bounded whatever the step, so GD with a huge
    # step ends with finite (poor) weights and no error.
    X, y = make_data()
    for rate in [1e2, 1e6, 1e20]:
        reg = FirstLayerGDRegressor(
            hidden_layer_sizes=4,
            activation="tanh",
            learning_rate_init=rate,
            max_iter=30,
            random_state=0,
        )
        assert not fits_or_diverges(reg, X, y, "learning_rate_init")


@pytest.mark.parametrize("estimator_class", [TwoStepFeatureLearner, TwoStepFeatures])
@pytest.mark.parametrize("loss", ["correlation", "squared"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_huge_step_sizes_raise_divergence_or_stay_finite(estimator_class, loss, dtype):
    X, y = make_single_index(200, 20, link="he3", random_state=0)
    outcomes = []
    for activation in ["gelu", "hermite3", "tanh"]:
        for constant in [1e2, 1e10, 1e40, 1e300]:
            estimator = estimator_class(
                hidden_layer_sizes=16,
                activation=activation,
                loss=loss,
                step_size_constants=(constant, constant),
                random_state=0,
                dtype=dtype,
            )
            outcomes.append(fits_or_diverges(estimator, X, y, "step_size_constants"))
    # Both outcomes occur: finite huge weights are kept, overflow is an error.
    assert any(outcomes)
    assert not all(outcomes)


def test_correlation_loss_weights_grow_linearly_with_the_step_size():
    # The documented reason why huge steps give huge but finite weights: the
    # correlation loss's gradient does not depend on f, so W_1 - W_0 is
    # exactly proportional to eta_1.
    X, y = make_single_index(200, 20, link="he3", random_state=0)
    moves = []
    for constant in [1.0, 1e6]:
        features = TwoStepFeatures(
            hidden_layer_sizes=16,
            n_steps=1,
            step_size_constants=(constant, 1.0),
            random_state=0,
            dtype="float64",
        ).fit(X, y)
        W0, W1 = features.first_layer_weights_
        moves.append(W1 - W0)
    np.testing.assert_allclose(moves[1], 1e6 * moves[0], rtol=1e-9)


@pytest.mark.parametrize("estimator_class", [TwoStepFeatureLearner, TwoStepFeatures])
@pytest.mark.parametrize("exponents", [(0.6, 0.7), (0.25, 0.5), (-0.1, 0.2)])
def test_step_size_exponents_outside_the_theory_range_are_refused(
    estimator_class, exponents
):
    X, y = make_data()
    estimator = estimator_class(hidden_layer_sizes=8, random_state=0)
    assert_fit_fails_cleanly(
        estimator,
        X,
        y,
        InvalidParameterError,
        r"'step_size_exponents' parameter of \w+ must be a pair \(alpha1, alpha2\) "
        r"in \[0, 1/2\).*raise step_size_constants",
        bad_params={"step_size_exponents": exponents},
    )


# --- divergence advice ---------------------------------------------------------


@pytest.mark.parametrize(
    "estimator",
    [
        PartiallyTrainableRegressor((16,), learning_rate_init=1e6, random_state=0),
        PartiallyTrainableRegressor(
            (16,), solver="sgd", learning_rate_init=50.0, random_state=0
        ),
        FirstLayerGDRegressor(4, learning_rate_init=1e4, max_iter=20, random_state=0),
    ],
    ids=["adam", "sgd", "first-layer-gd"],
)
def test_divergence_advice_is_a_step_size_that_fits_the_same_data(estimator):
    X, y = make_data()
    X = (X - X.mean(0)) / X.std(0)
    with pytest.raises(DivergenceError, match="Lower learning_rate_init") as info:
        estimator.fit(X, y)
    message = str(info.value)
    found = re.search(r"learning_rate_init=(\S+) fits without diverging", message)
    assert found, message
    advised = float(found.group(1))
    assert advised < estimator.learning_rate_init
    assert not hasattr(estimator, "n_features_in_")  # left unfitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clone(estimator).set_params(learning_rate_init=advised).fit(X, y)
    # ... and the next larger value tried is one of those that diverged.
    if advised * 10 < estimator.learning_rate_init:
        assert f"{advised * 10:g}" in message.split("fits without diverging")[1]


def test_divergence_advice_says_when_no_tried_step_size_fits(monkeypatch):
    # Two tries only, both still far too large: the advice says what was
    # tried and what to do, not a value that was never tested.
    from sklearn_pt import _base

    monkeypatch.setattr(_base, "_STEP_SIZE_TRIES", 2)
    estimator = PartiallyTrainableRegressor(
        (8,), learning_rate_init=1e7, random_state=0
    )
    X, y = make_data()
    with pytest.raises(DivergenceError) as info:
        estimator.fit(X, y)
    message = str(info.value)
    assert "learning_rate_init down to 100000 (2 values, each 10x smaller)" in message
    assert "fits without diverging" not in message


@pytest.mark.parametrize(
    ("estimator", "width_text"),
    [
        (FirstLayerGDRegressor(hidden_layer_sizes=(0,)), r"width m\), e\.g\. \(8,\)"),
        (TwoStepFeatureLearner(hidden_layer_sizes=(0,)), r"width N\), e\.g\. \(512,\)"),
    ],
    ids=["first-layer-gd", "two-step"],
)
def test_width_error_uses_the_estimators_own_width(estimator, width_text):
    X, y = make_data()
    with pytest.raises(
        ValueError, match=rf"hidden_layer_sizes .*{width_text}; got \(0,\)"
    ):
        estimator.fit(X, y)
