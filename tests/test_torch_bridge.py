import pickle
import random
import warnings

import numpy as np
import pytest
import torch

from sklearn_pt._torch_bridge import (
    DeviceString,
    as_tensor,
    make_generator,
    predict_numpy,
    resolve_device,
    resolve_dtype,
    solve_ridge,
)
from sklearn_pt._training import (
    DivergenceCheck,
    FunctionCallback,
    default_callbacks,
)
from sklearn_pt.exceptions import ConvergenceWarning, DivergenceError
from tests._numerics import assert_same_math
from tests._train import train_module


def linear_problem(n=256, d=4, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=dtype)
    y = X @ torch.arange(1.0, d + 1, dtype=dtype)[:, None]
    return X, y


def linear_module(d=4, dtype=torch.float64):
    module = torch.nn.Linear(d, 1, dtype=dtype)
    with torch.no_grad():
        module.weight.zero_()
        module.bias.zero_()
    return module


# --- devices and dtypes -------------------------------------------------------


def test_resolve_device_cpu_and_auto_without_cuda(no_cuda):
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cpu")


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1"])
def test_resolve_device_cuda_missing_says_the_fix(no_cuda, device):
    with pytest.raises(ValueError, match=r"CUDA is not available.*device='cpu'"):
        resolve_device(device)


def test_resolve_device_index_out_of_range(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(ValueError, match=r"only 2 CUDA device\(s\).*cuda:0 to cuda:1"):
        resolve_device("cuda:2")


@pytest.mark.parametrize("value", ["auto", "cpu", "cuda", "cuda:0", "cuda:12"])
def test_device_constraint_accepts(value):
    assert DeviceString().is_satisfied_by(value)


@pytest.mark.parametrize("value", ["gpu", "CPU", "cuda:", "cuda:x", "cuda:0 ", 0, None])
def test_device_constraint_rejects(value):
    assert not DeviceString().is_satisfied_by(value)


def test_resolve_dtype():
    assert resolve_dtype("float32") is torch.float32
    assert resolve_dtype("float64") is torch.float64


# --- random state -------------------------------------------------------------


def test_make_generator_int_is_reproducible_and_none_is_not():
    draw = lambda rs: torch.rand(5, generator=make_generator(rs))  # noqa: E731
    assert torch.equal(draw(3), draw(3))
    assert not torch.equal(draw(3), draw(4))
    assert not torch.equal(draw(None), draw(None))


def test_make_generator_advances_a_random_state_instance():
    rs = np.random.RandomState(0)
    first = torch.rand(3, generator=make_generator(rs))
    second = torch.rand(3, generator=make_generator(rs))
    assert not torch.equal(first, second)


@pytest.mark.parametrize("random_state", [None, 0])
def test_make_generator_leaves_global_states_alone(random_state):
    np_state = np.random.get_state()
    torch_state = torch.get_rng_state()
    py_state = random.getstate()
    torch.rand(3, generator=make_generator(random_state))
    assert all(
        np.array_equal(a, b)
        for a, b in zip(np_state, np.random.get_state(), strict=True)
    )
    assert torch.equal(torch_state, torch.get_rng_state())
    assert py_state == random.getstate()


# --- conversion -----------------------------------------------------------------


def test_as_tensor_shares_writable_memory_and_copies_readonly():
    X = np.ones((3, 2), dtype=np.float32)
    shared = as_tensor(X, device=torch.device("cpu"), dtype=torch.float32)
    X[0, 0] = 5.0
    assert shared[0, 0] == 5.0
    X.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copied = as_tensor(X, device=torch.device("cpu"), dtype=torch.float32)
    assert copied.data_ptr() != shared.data_ptr()
    assert torch.equal(copied, shared)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_predict_numpy_chunks_agree_with_one_pass(dtype):
    module = torch.nn.Sequential(
        torch.nn.Linear(3, 64, dtype=dtype), torch.nn.Tanh(), torch.nn.Linear(64, 8)
    ).to(dtype)
    X = np.random.default_rng(0).normal(size=(50, 3))
    whole = predict_numpy(module, X)
    assert isinstance(whole, np.ndarray) and whole.shape == (50, 8)
    assert whole.dtype == np.dtype(str(dtype).removeprefix("torch."))
    # A 1-row chunk takes gemv where the whole takes gemm: another summation
    # order, so float64 agrees to rounding, not bitwise. float32 is evaluated
    # in float64 and rounded once, so its rows agree to one unit in the last
    # place at most (exactly, but for a value on a rounding boundary).
    for chunk_rows in (1, 7):
        chunked = predict_numpy(module, X, chunk_rows=chunk_rows)
        assert_same_math(chunked, whole, ulps=1 if dtype == torch.float32 else 64)


def test_predict_numpy_of_float32_is_the_rounded_float64_forward():
    module = torch.nn.Sequential(torch.nn.Linear(5, 32), torch.nn.ReLU())
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    X = np.random.default_rng(1).normal(size=(20, 5))
    expected = module.double()(torch.as_tensor(X)).detach().float().numpy()
    module.float()
    np.testing.assert_array_equal(predict_numpy(module, X), expected)
    assert next(module.parameters()).dtype == torch.float32  # left as it was


# --- training -----------------------------------------------------------------


@pytest.mark.parametrize(
    "solver, lr", [("adam", 0.05), ("sgd", 0.01), ("gd", 0.1), ("lbfgs", 1.0)]
)
def test_every_solver_fits_a_linear_target(solver, lr):
    X, y = linear_problem()
    module = linear_module()
    result = train_module(
        module,
        X,
        y,
        solver=solver,
        learning_rate_init=lr,
        batch_size=32,
        max_iter=300,
        callbacks=default_callbacks(tol=1e-12),
        generator=make_generator(0),
    )
    assert result.loss_curve[-1] < 1e-3 * result.loss_curve[0]
    assert result.n_iter == len(result.loss_curve)
    np.testing.assert_allclose(
        module.weight.detach().numpy().ravel(), [1, 2, 3, 4], atol=0.05
    )


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_gd_is_plain_gradient_descent():
    """Two steps of solver='gd' equal the hand-written update W -= lr * grad."""
    X, y = linear_problem(n=64)
    module = linear_module()
    lr, alpha = 0.1, 0.5
    train_module(
        module, X, y, solver="gd", learning_rate_init=lr, alpha=alpha, max_iter=2
    )
    w = torch.zeros(1, 4, dtype=torch.float64)
    b = torch.zeros(1, dtype=torch.float64)
    n = X.shape[0]
    for _ in range(2):
        residual = X @ w.T + b - y  # d(0.5 * mean(residual^2)) / d prediction
        grad_w = residual.T @ X / n + alpha / n * w
        grad_b = residual.sum(0) / n
        w, b = w - lr * grad_w, b - lr * grad_b
    torch.testing.assert_close(module.weight.detach(), w, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(module.bias.detach(), b, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_loss_curve_includes_the_penalty():
    X, y = linear_problem(n=64)
    module = linear_module()
    alpha = 3.0
    result = train_module(module, X, y, solver="gd", alpha=alpha, max_iter=1)
    # The weights start at zero, so the first objective is the data loss alone.
    assert result.loss_curve[0] == pytest.approx(float(0.5 * (y**2).mean()))
    module2 = torch.nn.Linear(4, 1, dtype=torch.float64)
    with torch.no_grad():
        module2.weight.fill_(1.0)
        module2.bias.zero_()
    prediction = X.sum(1, keepdim=True)
    expected = 0.5 * ((prediction - y) ** 2).mean() + 0.5 * alpha / 64 * 4
    result = train_module(module2, X, y, solver="gd", alpha=alpha, max_iter=1)
    assert result.loss_curve[0] == pytest.approx(float(expected))


def test_frozen_parameters_and_buffers_do_not_move():
    X, y = linear_problem()
    module = torch.nn.Sequential(
        torch.nn.Linear(4, 8, dtype=torch.float64),
        torch.nn.Linear(8, 1, dtype=torch.float64),
    )
    module[0].weight.requires_grad_(False)
    module[1].register_buffer("mask", torch.ones(1, 8, dtype=torch.float64))
    frozen = module[0].weight.detach().clone()
    trained = module[1].weight.detach().clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        train_module(module, X, y, max_iter=3, learning_rate_init=0.1)
    assert torch.equal(module[0].weight, frozen)
    assert module[0].weight.grad is None
    assert torch.equal(module[1].mask, torch.ones(1, 8, dtype=torch.float64))
    # ... while the trainable parameters did move (else nothing was tested).
    assert not torch.allclose(module[1].weight, trained)


def test_early_stopping_and_convergence_warning():
    X, y = linear_problem()
    result = train_module(
        linear_module(),
        X,
        y,
        solver="adam",
        max_iter=500,
        callbacks=default_callbacks(tol=10.0, n_iter_no_change=3),
    )
    assert result.converged and result.n_iter == 4
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        result = train_module(
            linear_module(), X, y, max_iter=2, callbacks=default_callbacks(tol=0.0)
        )
    assert not result.converged and result.n_iter == 2


def test_callback_can_stop_training():
    X, y = linear_problem()
    seen = []

    def callback(iteration, loss):
        seen.append((iteration, loss))
        return iteration == 5

    result = train_module(
        linear_module(),
        X,
        y,
        max_iter=100,
        callbacks=default_callbacks(extra=[FunctionCallback(callback)]),
    )
    assert result.n_iter == 5 and result.converged
    assert [loss for _, loss in seen] == result.loss_curve


@pytest.mark.parametrize("solver, lr", [("sgd", 1e3), ("gd", 1e3), ("adam", 1e7)])
def test_divergence_names_the_learning_rate(solver, lr):
    X, y = linear_problem()
    with pytest.raises(
        DivergenceError, match=r"Lower learning_rate_init \(e\.g\. to "
    ) as info:
        train_module(
            linear_module(), X, y, solver=solver, learning_rate_init=lr, max_iter=50
        )
    assert info.value.step_size_name == "learning_rate_init"
    assert info.value.step_size == lr
    restored = pickle.loads(pickle.dumps(info.value))  # as joblib's workers send it
    assert str(restored) == str(info.value)
    assert (restored.step_size_name, restored.step_size) == ("learning_rate_init", lr)


def test_divergence_on_nan_loss_and_custom_name():
    X, y = linear_problem()
    y = y.clone()
    y[0] = float("nan")
    with pytest.raises(DivergenceError, match="step_size_constants"):
        train_module(
            linear_module(),
            X,
            y,
            max_iter=5,
            callbacks=[DivergenceCheck("step_size_constants")],
        )


def test_mini_batch_order_follows_the_generator():
    X, y = linear_problem()

    def fit(seed):
        module = linear_module()
        train_module(
            module,
            X,
            y,
            solver="sgd",
            batch_size=16,
            max_iter=2,
            callbacks=default_callbacks(tol=0.0),
            generator=make_generator(seed),
            learning_rate_init=0.01,
        )
        return module.weight.detach()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert torch.equal(fit(0), fit(0))
        assert not torch.equal(fit(0), fit(1))


def test_training_leaves_global_rng_alone():
    X, y = linear_problem()
    module = linear_module()
    torch_state = torch.get_rng_state()
    np_state = np.random.get_state()
    train_module(
        module,
        X,
        y,
        max_iter=3,
        callbacks=default_callbacks(tol=1e9, n_iter_no_change=2),
        generator=make_generator(0),
    )
    assert torch.equal(torch_state, torch.get_rng_state())
    assert np.array_equal(np_state[1], np.random.get_state()[1])


def test_verbose_prints_like_mlp(capsys):
    X, y = linear_problem()
    train_module(
        linear_module(),
        X,
        y,
        max_iter=3,
        callbacks=default_callbacks(tol=1e9, n_iter_no_change=2, verbose=1),
    )
    out = capsys.readouterr().out
    assert "Iteration 1, loss = " in out and "Iteration 2, loss = " in out
    train_module(
        linear_module(),
        X,
        y,
        max_iter=3,
        callbacks=default_callbacks(tol=1e9, n_iter_no_change=2),
    )
    assert capsys.readouterr().out == ""


def test_fixed_number_of_steps_without_early_stopping():
    X, y = linear_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = train_module(
            linear_module(),
            X,
            y,
            solver="gd",
            max_iter=2,
            callbacks=[DivergenceCheck()],  # no early stopping
        )
    assert result.n_iter == 2 and not result.converged


def test_negative_losses_are_not_mistaken_for_divergence():
    X, y = linear_problem()

    def correlation(prediction, target):
        return -(prediction * target).mean()

    result = train_module(
        linear_module(),
        X,
        y,
        solver="gd",
        learning_rate_init=0.01,
        max_iter=3,
        loss=correlation,
        callbacks=[DivergenceCheck(relative=False)],  # not a nonnegative loss
    )
    assert result.loss_curve[-1] < result.loss_curve[0] == 0.0  # zero init


@pytest.mark.parametrize("alpha", [0.0, 0.7])
@pytest.mark.parametrize("shape", [(40, 5), (6, 9)])
def test_solve_ridge_matches_sklearn_ridge(alpha, shape):
    from sklearn.linear_model import Ridge

    # (6, 9) at alpha=0: sklearn's SVD solver drops the null singular values,
    # the same minimum-norm interpolant as solve_ridge's least squares.
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=shape)
    Y = rng.normal(size=(shape[0], 2))
    coef, intercept = solve_ridge(torch.as_tensor(Phi), torch.as_tensor(Y), alpha)
    ridge = Ridge(alpha=alpha, solver="svd").fit(Phi, Y)
    np.testing.assert_allclose(coef.numpy(), ridge.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(
        intercept.numpy(), ridge.intercept_, rtol=1e-9, atol=1e-10
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_solve_ridge_over_row_chunks_is_the_whole_solve(monkeypatch, dtype):
    # Several chunks of 3 rows (and a short last one) give the float64
    # normal equations of the whole matrix, float32 features included.
    from sklearn.linear_model import Ridge

    from sklearn_pt import _torch_bridge

    rng = np.random.default_rng(2)
    Phi = rng.normal(size=(40, 6)) + 2.0
    Y = rng.normal(size=(40, 2))
    features = torch.as_tensor(Phi, dtype=dtype)
    monkeypatch.setattr(_torch_bridge, "_RIDGE_CHUNK_ELEMENTS", 3 * 6)
    coef, intercept = solve_ridge(features, torch.as_tensor(Y), 0.3)
    assert coef.dtype == intercept.dtype == dtype
    exact = Ridge(alpha=0.3, solver="svd").fit(features.double().numpy(), Y)
    tol = 1e-10 if dtype == torch.float64 else 1e-6
    np.testing.assert_allclose(coef.double().numpy(), exact.coef_, rtol=tol, atol=tol)
    np.testing.assert_allclose(
        intercept.double().numpy(), exact.intercept_, rtol=tol, atol=tol
    )


def test_solve_ridge_alpha_zero_is_the_minimum_norm_interpolant():
    """More features than samples: infinitely many interpolants; alpha=0
    returns the one of least norm, pinv of the centred features, and it
    is the limit of ridge as alpha -> 0."""
    rng = np.random.default_rng(1)
    n, p = 7, 15
    Phi = rng.normal(size=(n, p)) + 3.0  # an offset for the intercept to absorb
    Y = rng.normal(size=(n, 2))
    coef, intercept = solve_ridge(torch.as_tensor(Phi), torch.as_tensor(Y), 0.0)
    coef, intercept = coef.numpy(), intercept.numpy()
    Phi_c = Phi - Phi.mean(0)
    expected = (np.linalg.pinv(Phi_c) @ (Y - Y.mean(0))).T
    np.testing.assert_allclose(coef, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(intercept, Y.mean(0) - Phi.mean(0) @ expected.T)
    np.testing.assert_allclose(Phi @ coef.T + intercept, Y, atol=1e-10)
    # Least norm: orthogonal to the null space of the centred features, so
    # adding a null-space direction interpolates as well with a larger norm.
    null = np.linalg.svd(Phi_c)[2][n - 1 :]  # rank n - 1 after centring
    np.testing.assert_allclose(coef @ null.T, 0.0, atol=1e-10)
    # The Cholesky branch at a tiny alpha is within O(alpha) of it.
    near, _ = solve_ridge(torch.as_tensor(Phi), torch.as_tensor(Y), 1e-6)
    np.testing.assert_allclose(near.numpy(), coef, rtol=0, atol=1e-6)


# --- L-BFGS -----------------------------------------------------------------


def small_mlp(width=8, seed=0):
    """A float64 tanh network: a non-quadratic objective for train_module."""
    module = torch.nn.Sequential(
        torch.nn.Linear(4, width, dtype=torch.float64),
        torch.nn.Tanh(),
        torch.nn.Linear(width, 1, dtype=torch.float64),
    )
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) / 2)
    return module


def objective_and_gradient(module, X, y, alpha=0.0):
    """The training objective and its max-abs gradient, computed afresh."""
    parameters = list(module.parameters())
    value = 0.5 * ((module(X) - y) ** 2).mean()
    value = value + alpha / (2 * X.shape[0]) * sum(
        (p**2).sum() for p in parameters if p.ndim >= 2
    )
    grads = torch.autograd.grad(value, parameters)
    return float(value.detach()), max(float(g.abs().max()) for g in grads)


def random_features_optimum(estimator, X, y, alpha):
    """The ridge objective of ``estimator``'s random features, by sklearn:
    the readout's penalty ``alpha`` times the features' mean square (the
    estimator's scaled penalty, docs/defaults.rst ``defaults_penalty``)."""
    from sklearn.linear_model import LinearRegression, Ridge
    from sklearn.preprocessing import normalize

    with torch.no_grad():
        features = estimator.module_.features(torch.as_tensor(normalize(X)))
    Phi = features.numpy()
    alpha = alpha * float(np.mean(Phi**2))
    ridge = Ridge(alpha=alpha, solver="svd") if alpha else LinearRegression()
    ridge.fit(Phi, y)
    residual = ridge.predict(Phi) - y
    return 0.5 * np.mean(residual**2) + alpha / (2 * len(y)) * ridge.coef_ @ ridge.coef_


def random_features_lbfgs(**params):
    from sklearn_pt.neural_network import PartiallyTrainableRegressor

    return PartiallyTrainableRegressor(
        hidden_layer_sizes=(16,),
        trainable_proportion=0.0,
        solver="lbfgs",
        dtype="float64",
        normalize_y=False,  # the objective on the raw targets, as below
        random_state=0,
        **params,
    )


@pytest.mark.parametrize("init_scale, alpha", [(1.0, 1e-4), (1.0, 0.0), (10.0, 0.0)])
def test_lbfgs_reaches_the_ridge_objective_of_random_features(
    sphere_regression, init_scale, alpha
):
    """At P=0 the objective is a convex quadratic in the readout: L-BFGS must
    stop by itself at its minimum, computed independently by sklearn."""
    X, y = sphere_regression
    reg = random_features_lbfgs(init_scale=init_scale, alpha=alpha, tol=0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        reg.set_params(max_iter=3000).fit(X, y)
    optimum = random_features_optimum(reg, X, y, alpha)
    assert reg.loss_curve_[-1] == pytest.approx(optimum, rel=1e-6)
    assert reg.n_iter_ < 3000 and not caught


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lbfgs_beats_adam_on_a_fully_trainable_network(sphere_regression, dtype):
    """P=1, same budget: 200 L-BFGS iterations against 200 Adam epochs at the
    best of three learning rates, both with tol=0 (no early stop)."""
    from sklearn_pt.neural_network import PartiallyTrainableRegressor

    X, y = sphere_regression
    reg = PartiallyTrainableRegressor(
        hidden_layer_sizes=(128,),
        trainable_proportion=1.0,
        alpha=1e-4,  # the optimisers' race on the data term, as measured
        max_iter=200,
        tol=0.0,
        dtype=dtype,
        random_state=0,
    )
    lbfgs = clone_params(reg, solver="lbfgs").fit(X, y).loss_curve_[-1]
    adam = min(
        clone_params(reg, solver="adam", learning_rate_init=rate)
        .fit(X, y)
        .loss_curve_[-1]
        for rate in (1e-3, 1e-2, 1e-1)
    )
    assert lbfgs < 0.5 * adam


def clone_params(estimator, **params):
    from sklearn.base import clone

    return clone(estimator).set_params(**params)


def test_lbfgs_warns_unless_converged(sphere_regression):
    """Too few iterations warn; a run that ends silently is at the optimum
    (here tau=10, where the first trial step overshoots)."""
    X, y = sphere_regression
    reg = random_features_lbfgs(init_scale=10.0, alpha=1e-4)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        reg.set_params(max_iter=5).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        reg.set_params(max_iter=1000).fit(X, y)
    assert reg.n_iter_ < 1000
    optimum = random_features_optimum(reg, X, y, 1e-4)
    assert reg.loss_curve_[-1] == pytest.approx(optimum, rel=1e-5)


def test_lbfgs_loss_curve_is_the_objective_of_each_iterate():
    """The callback sees, at every iteration, the objective of the current
    parameters; the curve never rises."""
    X, y = linear_problem(n=128)
    y = torch.tanh(y / 4)
    module = small_mlp()
    alpha = 0.3
    mismatch = []

    def callback(iteration, loss):
        with torch.enable_grad():
            value, _ = objective_and_gradient(module, X, y, alpha)
        mismatch.append(abs(value - loss) / value)

    result = train_module(
        module,
        X,
        y,
        solver="lbfgs",
        alpha=alpha,
        max_iter=40,
        callbacks=[DivergenceCheck(), FunctionCallback(callback)],  # no early stop
    )
    assert max(mismatch) < 1e-12
    assert all(
        b <= a for a, b in zip(result.loss_curve, result.loss_curve[1:], strict=False)
    )


def test_lbfgs_tol_is_the_gradient_tolerance(capsys):
    """With tol=1e-5 the run stops on the gradient criterion, and the
    gradient of the returned parameters, computed afresh, is below tol."""
    X, y = linear_problem(n=128)
    y = torch.tanh(y / 4)
    module = small_mlp()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = train_module(
            module,
            X,
            y,
            solver="lbfgs",
            max_iter=1000,
            callbacks=default_callbacks(tol=1e-5, verbose=1),
        )
    assert result.converged and result.n_iter < 1000
    assert "L-BFGS converged: max |gradient|" in capsys.readouterr().out
    value, gradient = objective_and_gradient(module, X, y)
    assert gradient <= 1e-5
    assert value == pytest.approx(result.loss_curve[-1], rel=1e-12)


def test_lbfgs_evaluates_once_per_iteration():
    """torch's LBFGS opens every step with an evaluation the previous line
    search already made; the engine must not pay for it again."""
    X, y = linear_problem(n=128)
    y = torch.tanh(y / 4)
    module = small_mlp()
    calls = []
    module.register_forward_hook(lambda *_: calls.append(1))
    result = train_module(
        module, X, y, solver="lbfgs", max_iter=30, callbacks=[DivergenceCheck()]
    )
    # One initial loss, one evaluation at the start, then the line-search
    # trials: mostly one per iteration (the unit step is usually accepted).
    assert result.n_iter == 30
    assert len(calls) <= 2 + 1.3 * result.n_iter


def test_lbfgs_without_early_stopping_runs_max_iter_quietly():
    X, y = linear_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = train_module(
            linear_module(),
            X,
            y,
            solver="lbfgs",
            max_iter=80,
            callbacks=[DivergenceCheck()],  # no early stopping
        )
    assert result.n_iter == 80 and not result.converged
    assert result.loss_curve[-1] < 1e-20


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_lbfgs_divergence_says_the_fix(bad):
    X, y = linear_problem()
    y = y.clone()
    y[0] = bad
    with pytest.raises(DivergenceError, match="L-BFGS does not use a learning rate"):
        train_module(linear_module(), X, y, solver="lbfgs", max_iter=20)


@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_solve_ridge_on_features_computed_by_row_chunks(monkeypatch, alpha):
    # Features on demand (never held whole) give the solve of the
    # materialised matrix; the chunks cover every row once.
    from sklearn_pt import _torch_bridge
    from sklearn_pt._torch_bridge import row_chunks
    from sklearn_pt.kernels._leverage import ReLUFeatures

    generator = torch.Generator().manual_seed(0)
    X = torch.randn(50, 4, generator=generator, dtype=torch.float64)
    lazy = ReLUFeatures(
        X,
        torch.randn(7, 4, generator=generator, dtype=torch.float64),
        torch.randn(7, generator=generator, dtype=torch.float64),
    )
    Y = torch.randn(50, 2, generator=generator, dtype=torch.float64)
    monkeypatch.setattr(_torch_bridge, "_RIDGE_CHUNK_ELEMENTS", 4 * 7)
    rows = [r for r, _ in row_chunks(lazy)]
    assert len(rows) == 13 and rows[0] == slice(0, 4) and rows[-1] == slice(48, 50)
    torch.testing.assert_close(
        torch.cat([chunk for _, chunk in row_chunks(lazy)]), lazy.materialize()
    )
    expected = solve_ridge(lazy.materialize(), Y, alpha)
    for got, want in zip(solve_ridge(lazy, Y, alpha), expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
