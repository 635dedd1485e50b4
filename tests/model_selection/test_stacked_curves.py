"""Stacked sweeps against the sequential fits they replace."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_pt._training import (
    DivergenceCheck,
    EarlyStopping,
    MaxIterWarning,
    StackedStepper,
    fit_loop,
    initial_loss,
)
from sklearn_pt.exceptions import ConvergenceWarning, DivergenceError
from sklearn_pt.model_selection import fit_stacked, proportion_curve
from sklearn_pt.model_selection._stacked import stacked_fit_unsupported
from sklearn_pt.neural_network import PartiallyTrainableRegressor
from sklearn_pt.nn import PartiallyTrainableMLP
from sklearn_pt.nn._stacked import StackedPartiallyTrainableMLP, append_ones
from tests.conftest import make_sphere_regression

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

PROPORTIONS = (0.0, 0.3, 1.0)
SEEDS = (0, 1)
# float64 runs of the same arithmetic in a different order: rounding only.
RTOL64 = 1e-10
# float32: measured differences ~2e-7 relative after 30 epochs (a few ulps
# amplified by training); 1e-5 keeps a 50x margin and still fails on any
# wrong gradient, batch order or mask, which change results at 1e-2.
RTOL32 = 1e-5


def scores(result):
    """The train and test scores of a :func:`proportion_curve` result."""
    return result.train_scores, result.test_scores


def train_stacked(
    module, X, y, *, generators, max_iter, callbacks, learning_rate_init, **params
):
    """The stacked training of ``module``'s networks on ``(X, y)``: one
    :func:`~sklearn_pt._training.fit_loop` over a
    :class:`~sklearn_pt._training.StackedStepper`, as a stacked fit runs it."""
    stepper = StackedStepper(
        module,
        append_ones(X),
        y,
        learning_rate=learning_rate_init,
        generators=generators,
        **params,
    )
    return fit_loop(stepper, max_iter=max_iter, callbacks=callbacks)


def two_output_data(n_samples=240):
    X, y = make_sphere_regression(n_samples=n_samples)
    return X, np.c_[y, X[:, 3] * X[:, 4]]


def sequential_and_stacked(base, X, y, proportions=PROPORTIONS, seeds=SEEDS):
    configs = [
        clone(base).set_params(trainable_proportion=p, random_state=s)
        for p in proportions
        for s in seeds
    ]
    stacked = fit_stacked([clone(c) for c in configs], X, y)
    sequential = []
    for config in configs:
        try:
            sequential.append(config.fit(X, y))
        except DivergenceError as error:
            sequential.append(error)
    return sequential, stacked


def assert_same_fit(sequential, stacked, X, rtol):
    assert type(stacked) is type(sequential)
    if isinstance(sequential, DivergenceError):
        return
    assert stacked.n_iter_ == sequential.n_iter_
    assert stacked.n_features_in_ == sequential.n_features_in_
    for mask_b, mask_s in zip(
        stacked.trainable_masks_, sequential.trainable_masks_, strict=True
    ):
        np.testing.assert_array_equal(mask_b, mask_s)
    np.testing.assert_allclose(stacked.loss_curve_, sequential.loss_curve_, rtol=rtol)
    expected = sequential.predict(X)
    np.testing.assert_allclose(
        stacked.predict(X), expected, rtol=rtol, atol=rtol * np.abs(expected).max()
    )


@pytest.mark.parametrize("solver", ["sgd", "adam"])
def test_equals_sequential_fits_with_early_stopping(solver):
    """Depth 2, two outputs, L2 penalty, P in {0, 0.3, 1}, two seeds, and a
    stopping rule that ends the networks at different epochs."""
    X, y = two_output_data()
    base = PartiallyTrainableRegressor(
        (24, 16),
        solver=solver,
        alpha=1e-2,
        batch_size=50,
        learning_rate_init=2e-2 if solver == "adam" else 5e-2,
        max_iter=60,
        tol=1e-3,
        n_iter_no_change=3,
        dtype="float64",
    )
    sequential, stacked = sequential_and_stacked(base, X, y)
    for seq, bat in zip(sequential, stacked, strict=True):
        assert_same_fit(seq, bat, X, RTOL64)
    n_iters = [fit.n_iter_ for fit in sequential]
    assert len(set(n_iters)) >= 3, n_iters
    assert min(n_iters) < base.max_iter


def test_equals_sequential_full_batch_gd_and_float32():
    X, y = make_sphere_regression(n_samples=150)
    gd = PartiallyTrainableRegressor(
        (32,), solver="gd", learning_rate_init=0.5, max_iter=40, dtype="float64"
    )
    for seq, bat in zip(*sequential_and_stacked(gd, X, y), strict=True):
        assert_same_fit(seq, bat, X, RTOL64)
    adam32 = PartiallyTrainableRegressor(
        (32,), learning_rate_init=1e-2, max_iter=30, tol=0.0, n_iter_no_change=100
    )
    for seq, bat in zip(*sequential_and_stacked(adam32, X, y), strict=True):
        assert_same_fit(seq, bat, X, RTOL32)


@pytest.mark.parametrize("selection", ["random", "leverage"])
def test_ridge_readout_equals_sequential_fits_and_scores(selection):
    """readout="ridge": each network's readout re-solved after the stacked
    training, the P = 0 ones as the closed-form fit alone, and the batch's
    own R^2 scoring sees the re-solved readouts. Leverage selection builds
    each network from the training split, as fit does."""
    X, y = two_output_data()
    base = PartiallyTrainableRegressor(
        (24,),
        trainable_selection=selection,
        readout="ridge",
        alpha=1e-2,
        learning_rate_init=2e-2,
        max_iter=20,
        dtype="float64",
    )
    sequential, stacked = sequential_and_stacked(base, X, y)
    for seq, bat in zip(sequential, stacked, strict=True):
        assert_same_fit(seq, bat, X, RTOL64)
    assert [fit.n_iter_ for fit in sequential[:2]] == [1, 1]  # P = 0: closed form
    train = proportion_curve(
        base, X, y, proportions=PROPORTIONS, cv=KFold(2), strategy="stacked"
    ).train_scores
    expected = proportion_curve(
        base, X, y, proportions=PROPORTIONS, cv=KFold(2), strategy="sequential"
    ).train_scores
    np.testing.assert_allclose(train, expected, rtol=RTOL64)


def test_networks_of_different_init_scales_and_selections_in_one_batch():
    """init_scale, trainable_selection and leverage_pool_size only build the
    initial network: one batch of all of them equals the sequential fits, and
    a proportion_curve over init_scale is stacked to the same scores."""
    X, y = make_sphere_regression(n_samples=120)
    base = PartiallyTrainableRegressor(
        (16,), readout="ridge", learning_rate_init=2e-2, max_iter=15, dtype="float64"
    )
    configs = [
        clone(base).set_params(
            init_scale=tau,
            trainable_selection=selection,
            leverage_pool_size=pool,
            trainable_proportion=p,
            random_state=0,
        )
        for tau in (1.0, 10.0)
        for selection, pool in (("random", None), ("leverage", 40))
        for p in (0.0, 0.5)
    ]
    stacked = fit_stacked([clone(c) for c in configs], X, y)
    for config, bat in zip(configs, stacked, strict=True):
        assert_same_fit(config.fit(X, y), bat, X, RTOL64)
    # the init scales really differ: tau = 10 draws larger first-layer biases
    bias = [
        fit.module_.hidden_layers[0].bias.detach().abs().max().item()
        for fit in stacked[::4]
    ]
    assert bias[1] > 2 * bias[0]
    kwargs = dict(param_name="init_scale", proportions=[1.0, 10.0], cv=KFold(2))
    bat = proportion_curve(base, X, y, strategy="stacked", **kwargs)
    seq = proportion_curve(base, X, y, strategy="sequential", **kwargs)
    np.testing.assert_allclose(scores(bat), scores(seq), rtol=RTOL64)


def test_frozen_rows_stay_bitwise_fixed():
    """Adam with weight decay moves every entry it holds, whatever its
    gradient: the frozen rows must still come back bitwise."""
    X, y = make_sphere_regression(n_samples=120)
    X_t, y_t = torch.as_tensor(X), torch.as_tensor(y[:, None])
    modules = [
        PartiallyTrainableMLP(
            5,
            hidden_layer_sizes=(16, 8),
            trainable_proportion=p,
            random_state=0,
            dtype=torch.float64,
        )
        for p in (0.0, 0.5)
    ]
    batch = StackedPartiallyTrainableMLP.from_modules(modules)
    initial = [w.detach().clone() for w in batch.hidden_weights]
    outcomes = train_stacked(
        batch,
        X_t,
        y_t,
        generators=[torch.Generator().manual_seed(k) for k in range(2)],
        alpha=10.0,
        learning_rate_init=0.1,
        max_iter=5,
        callbacks=[DivergenceCheck(initial_losses=[1.0, 1.0]), *_stopping(tol=0.0)],
    )
    assert [o.n_iter for o in outcomes] == [5, 5]
    for weight, start, mask in zip(
        batch.hidden_weights, initial, batch.trainable_masks, strict=True
    ):
        assert torch.equal(weight.detach()[~mask], start[~mask])
        assert not torch.equal(weight.detach()[mask], start[mask])


def test_divergence_is_per_model():
    """With this step size the random-features model (P=0) diverges and the
    trainable one (P=1) does not, in both paths, with the same message."""
    X, y = make_sphere_regression(n_samples=200)
    base = PartiallyTrainableRegressor(
        (32,),
        solver="sgd",
        learning_rate_init=0.3,
        max_iter=30,
        alpha=1e-4,
        project_to_sphere=True,
        dtype="float64",
    )
    sequential, stacked = sequential_and_stacked(
        base, X, y, proportions=(0.0, 1.0), seeds=(0,)
    )
    assert isinstance(sequential[0], DivergenceError)
    assert isinstance(sequential[1], PartiallyTrainableRegressor)
    # The same error; a fit alone also tries smaller step sizes for its advice.
    assert str(sequential[0]).startswith(str(stacked[0]))
    assert_same_fit(sequential[1], stacked[1], X, RTOL64)
    unfitted = clone(base).set_params(trainable_proportion=0.0, random_state=0)
    fitted = clone(unfitted).set_params(trainable_proportion=1.0)
    outcomes = fit_stacked([unfitted, fitted], X, y)
    assert outcomes[1] is fitted
    assert not hasattr(unfitted, "n_features_in_")  # left as it was, like fit


def test_proportion_curve_stacked_equals_sequential():
    X, y = make_sphere_regression(n_samples=150)
    reg = PartiallyTrainableRegressor(
        (16,), max_iter=15, learning_rate_init=1e-2, dtype="float64"
    )
    kwargs = dict(
        proportions=[0.0, 0.5, 1.0],
        cv=KFold(3, shuffle=True, random_state=0),
        random_states=[0, 3],
        scoring="neg_mean_squared_error",
    )
    sequential = proportion_curve(reg, X, y, strategy="sequential", **kwargs)
    stacked = proportion_curve(reg, X, y, strategy="stacked", **kwargs)
    automatic = proportion_curve(reg, X, y, **kwargs)
    for seq, bat, auto in zip(
        scores(sequential), scores(stacked), scores(automatic), strict=True
    ):
        assert bat.shape == (3, 2, 3)
        np.testing.assert_allclose(bat, seq, rtol=RTOL64)
        np.testing.assert_array_equal(auto, bat)
    assert not np.allclose(stacked.test_scores[:, 0], stacked.test_scores[:, 1])


@pytest.mark.parametrize("scoring", [None, "r2"])
@pytest.mark.parametrize("dtype, rtol", [("float64", RTOL64), ("float32", RTOL32)])
def test_proportion_curve_r2_from_stacked_predictions(scoring, dtype, rtol):
    """The default score (R^2, computed for all networks from one stacked
    prediction) is each network's own ``score``, for two outputs too."""
    X, y = two_output_data(n_samples=150)
    reg = PartiallyTrainableRegressor(
        (16,), max_iter=10, learning_rate_init=1e-2, dtype=dtype
    )
    kwargs = dict(
        proportions=[0.0, 0.5, 1.0], cv=3, random_states=[0, 1], scoring=scoring
    )
    for target in (y, y[:, 0]):
        sequential = proportion_curve(reg, X, target, strategy="sequential", **kwargs)
        stacked = proportion_curve(reg, X, target, strategy="stacked", **kwargs)
        for seq, bat in zip(scores(sequential), scores(stacked), strict=True):
            assert np.isfinite(bat).all()
            # R^2 = 1 - SSE/SST carries its rounding on SSE/SST: an R^2 near
            # 0 (P = 0 after 10 epochs: -4.9e-4) differs relatively by far
            # more than the ratio does (1.2e-5 vs 6e-9 on AVX2 paths).
            np.testing.assert_allclose(1 - bat, 1 - seq, rtol=rtol)


def test_initial_losses_are_each_networks():
    X, y = make_sphere_regression(n_samples=50)
    X, y = torch.as_tensor(X), torch.as_tensor(y).reshape(-1, 1)
    modules = [
        PartiallyTrainableMLP(
            X.shape[1], hidden_layer_sizes=(12,), random_state=seed, dtype=X.dtype
        )
        for seed in range(3)
    ]
    batch = StackedPartiallyTrainableMLP.from_modules(modules)
    expected = [initial_loss(module, X, y) for module in modules]
    stepper = StackedStepper(batch, append_ones(X), y, generators=[None] * 3)
    np.testing.assert_allclose(stepper.initial_losses(), expected, rtol=1e-12)
    assert len(set(expected)) == 3


def test_proportion_curve_random_state_sweep_and_divergence():
    X, y = make_sphere_regression(n_samples=120)
    reg = PartiallyTrainableRegressor(
        (16,), trainable_proportion=0.5, max_iter=5, dtype="float64"
    )
    kwargs = dict(param_name="random_state", proportions=[0, 4], cv=2)
    seq = proportion_curve(reg, X, y, strategy="sequential", **kwargs)
    bat = proportion_curve(reg, X, y, strategy="stacked", **kwargs)
    np.testing.assert_allclose(bat.test_scores, seq.test_scores, rtol=RTOL64)

    diverging = clone(reg).set_params(
        hidden_layer_sizes=(32,),
        solver="sgd",
        learning_rate_init=0.5,
        max_iter=30,
        alpha=1e-4,
        project_to_sphere=True,
    )
    X, y = make_sphere_regression(n_samples=400)
    kwargs = dict(proportions=[0.0, 1.0], cv=2, random_states=[0])
    with pytest.warns(FitFailedWarning, match="fits failed"):
        bat = proportion_curve(diverging, X, y, strategy="stacked", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        seq = proportion_curve(diverging, X, y, strategy="sequential", **kwargs)
    np.testing.assert_array_equal(np.isnan(bat.test_scores), np.isnan(seq.test_scores))
    assert np.isnan(bat.test_scores[0]).all()
    assert not np.isnan(bat.test_scores[1]).any()
    np.testing.assert_allclose(bat.test_scores, seq.test_scores, rtol=RTOL64)


@pytest.mark.parametrize(
    "estimator, param_name, match",
    [
        (
            make_pipeline(StandardScaler(), PartiallyTrainableRegressor()),
            "partiallytrainableregressor__trainable_proportion",
            "Pipeline fits cannot be stacked",
        ),
        (PartiallyTrainableRegressor(), "alpha", "param_name='alpha'"),
        (
            PartiallyTrainableRegressor(solver="lbfgs"),
            "trainable_proportion",
            "solver='lbfgs'",
        ),
    ],
)
def test_unsupported_sweeps(estimator, param_name, match):
    X, y = make_sphere_regression(n_samples=40)
    assert stacked_fit_unsupported(estimator, param_name) is not None
    with pytest.raises(ValueError, match=match):
        proportion_curve(
            estimator,
            X,
            y,
            param_name=param_name,
            proportions=[1.0],
            cv=2,
            strategy="stacked",
        )


def test_auto_falls_back_to_sequential():
    X, y = make_sphere_regression(n_samples=60)
    reg = PartiallyTrainableRegressor((8,), solver="lbfgs", max_iter=3)
    kwargs = dict(proportions=[0.0, 1.0], cv=2, random_states=[0])
    auto = proportion_curve(reg, X, y, **kwargs)
    sequential = proportion_curve(reg, X, y, strategy="sequential", **kwargs)
    np.testing.assert_array_equal(auto.test_scores, sequential.test_scores)


def test_fit_stacked_rejects_mixed_parameters():
    X, y = make_sphere_regression(n_samples=40)
    models = [PartiallyTrainableRegressor(alpha=a) for a in (0.0, 1.0)]
    with pytest.raises(ValueError, match=r"these differ too: 'alpha'\. Set them equal"):
        fit_stacked(models, X, y)
    with pytest.raises(ValueError, match="solver='lbfgs'"):
        fit_stacked([PartiallyTrainableRegressor(solver="lbfgs")], X, y)


def test_not_converged_networks_warn_once():
    X, y = make_sphere_regression(n_samples=60)
    models = [
        PartiallyTrainableRegressor((8,), max_iter=2, random_state=s) for s in (0, 1)
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_stacked(models, X, y)
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(convergence) == 1
    assert "2 of 2 networks" in str(convergence[0].message)


@pytest.mark.parametrize("strategy", ["stacked", "sequential"])
def test_verbose_shows_a_progress_bar_and_zero_nothing(strategy, capsys):
    X, y = make_sphere_regression(n_samples=60)
    reg = PartiallyTrainableRegressor((8,), max_iter=2)
    kwargs = dict(proportions=[0.0, 1.0], cv=3, random_states=[0], strategy=strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        proportion_curve(reg, X, y, verbose=1, **kwargs)
        shown = capsys.readouterr()
        proportion_curve(reg, X, y, verbose=0, **kwargs)
        quiet = capsys.readouterr()
    total = 3 if strategy == "stacked" else 6  # splits, or fits
    assert shown.out == ""
    assert f"{total}/{total}" in shown.err and "proportion_curve" in shown.err
    assert quiet.out == quiet.err == ""


@pytest.mark.parametrize("strategy", ["stacked", "sequential"])
def test_a_sweep_warns_once_with_the_count_of_unconverged_fits(strategy):
    # 2 proportions x 2 seeds x 3 splits = 12 fits, all stopped by max_iter=2,
    # even in joblib workers (n_jobs=2; the stacked strategy ignores it).
    X, y = make_sphere_regression(n_samples=60)
    reg = PartiallyTrainableRegressor((8,), max_iter=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proportion_curve(
            reg,
            X,
            y,
            proportions=[0.0, 1.0],
            cv=3,
            random_states=[0, 1],
            strategy=strategy,
            n_jobs=2,
        )
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(convergence) == 1
    assert str(convergence[0].message).startswith(
        "12 of 12 fits stopped before converging. First: "
    )
    assert "max_iter=2" in str(convergence[0].message)


@pytest.mark.gpu
def test_stacked_sweep_on_gpu_equals_sequential():
    """The stacked sweep on a GPU (training, divergence checks and stacked
    R^2) gives the sequential GPU fits' scores; the fitted models are on the
    GPU."""
    X, y = two_output_data(n_samples=200)
    reg = PartiallyTrainableRegressor(
        (32,), max_iter=10, learning_rate_init=1e-2, dtype="float64", device="cuda"
    )
    kwargs = dict(proportions=[0.0, 0.5, 1.0], cv=2, random_states=[0, 1])
    sequential = proportion_curve(reg, X, y, strategy="sequential", **kwargs)
    stacked = proportion_curve(reg, X, y, strategy="stacked", **kwargs)
    for seq, bat in zip(scores(sequential), scores(stacked), strict=True):
        assert np.isfinite(bat).all()
        np.testing.assert_allclose(bat, seq, rtol=RTOL64)
    fitted = fit_stacked([clone(reg)], X, y)[0]
    assert fitted.device_.type == "cuda"
    assert all(p.device.type == "cuda" for p in fitted.module_.parameters())


def _stopping(**kwargs):
    stopping = EarlyStopping(**kwargs)
    return [stopping, MaxIterWarning(stopping)]


def test_a_stacked_sweep_of_another_stackable_estimator_scores_each_fit():
    """Any stackable estimator sweeps one of its _stacked_parameters stacked
    (here FirstLayerGDRegressor's seed), scored by its own score: the
    sequential scores, to rounding."""
    from sklearn_pt.neural_network import FirstLayerGDRegressor

    X, y = make_sphere_regression(n_samples=80)
    reg = FirstLayerGDRegressor(3, activation="tanh", max_iter=5, dtype="float64")
    kwargs = dict(param_name="random_state", proportions=[0, 1], cv=KFold(2))
    stacked = proportion_curve(reg, X, y, strategy="stacked", **kwargs)
    sequential = proportion_curve(reg, X, y, strategy="sequential", **kwargs)
    np.testing.assert_allclose(scores(stacked), scores(sequential), rtol=RTOL64)
    # the seeds differ
    assert not np.allclose(stacked.test_scores[0], stacked.test_scores[1])
