"""The partial-approximation reproduction: its verdicts follow from its CSV,
its rows are what the theory and the building blocks say, and the building
blocks are what they claim to be."""

import warnings

import numpy as np
import pytest
import torch

from sklearn_pt._torch_bridge import make_generator
from sklearn_pt.experiments import APPROXIMATION, judge, run
from sklearn_pt.experiments._approximation import (
    approximation_errors,
    first_layers,
    informative_widths,
    rkhs_target,
)
from sklearn_pt.kernels import BiasedReLUKernel
from sklearn_pt.nn import spherical_biased_relu_init
from sklearn_pt.theory import (
    approximation_bound,
    biased_relu_alpha,
    biased_relu_kappa0,
    bound_shape,
)


def sphere(n, d, seed):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def tiny():
    return run(APPROXIMATION, scale="tiny", progress=False, n_jobs=1)


def test_verdicts_follow_from_the_written_csv(tiny, tmp_path):
    files = tiny.write(tmp_path)
    assert judge(APPROXIMATION, files["csv"]) == tiny.verdicts
    assert len(tiny.verdicts) == 9
    assert "## Verdict" in files["md"].read_text()


def test_rows_are_the_error_ratio_and_the_theory_shape(tiny):
    table = tiny.table
    for (_seed, tau, m), group in table.groupby(["seed", "init_scale", "width"]):
        start = group.loc[group.trainable_proportion == 0.0, "test_mse"].iloc[0]
        np.testing.assert_allclose(group.error_ratio, group.test_mse / start)
        d = int(group.n_features.iloc[0])
        kappa0, alpha = biased_relu_kappa0(d, tau), biased_relu_alpha(d)
        expected = [
            bound_shape(p, kappa0, alpha=alpha) for p in group.trainable_proportion
        ]
        np.testing.assert_allclose(group.theory_shape, expected)
        np.testing.assert_array_equal(
            group.n_trainable, np.round(group.trainable_proportion * m)
        )


def test_the_worst_case_bounds_the_target_on_the_same_points(tiny):
    # The target has unit RKHS norm: its best fit on the readout's points
    # (train_mse, one draw) is at most the worst case over the ball there.
    table = tiny.table
    one_draw = table[(table.n_draws == 1) & table.worst_case_mse.notna()]
    assert len(one_draw) > 0
    assert np.all(one_draw.train_mse <= one_draw.worst_case_mse * (1 + 1e-6))
    # ... and it falls with the width at the matched init scale.
    at_zero = table[(table.trainable_proportion == 0) & (table.init_scale == 1.0)]
    worst = at_zero.groupby("width").worst_case_mse.apply(
        lambda v: np.exp(np.log(v).mean())
    )
    assert worst.is_monotonic_decreasing


def test_worst_case_errors_are_the_kernel_functions_on_each_layer():
    from sklearn_pt.experiments._approximation import worst_case_errors
    from sklearn_pt.kernels import worst_case_approximation_error

    X = torch.as_tensor(sphere(120, 5, seed=7))
    gram = BiasedReLUKernel()(X.numpy())
    layers = first_layers(
        X[:60], width=12, trainable_proportions=[0.0, 0.5], init_scale=1.0, seed=0
    )
    expected = [
        worst_case_approximation_error(torch.relu(X @ w.T + b), gram) for w, b in layers
    ]
    np.testing.assert_allclose(worst_case_errors(layers, X, gram), expected, rtol=1e-12)


def test_the_kolmogorov_floor_is_the_target_kernels_next_eigenvalue():
    from sklearn_pt.experiments._approximation import kolmogorov_floor

    # d = 5: degree 0 (1 function), then degree 1 (5): widths 1..5 leave
    # the degree-1 eigenvalue, width 6 the degree-2 one.
    floor = kolmogorov_floor([0, 1, 5, 6], 5)
    assert floor[1] == floor[2] < floor[0]
    assert floor[3] < floor[2]


def test_rkhs_target_is_a_unit_norm_kernel_expansion():
    target = rkhs_target(15, 5, random_state=3)
    assert target.centres.shape == (15, 5) and target.coef.shape == (15,)
    np.testing.assert_allclose(np.linalg.norm(target.centres, axis=1), 1.0)
    kernel = BiasedReLUKernel(init_scale=1.0)
    gram = kernel(target.centres * (1 - 1e-12))
    assert target.coef @ gram @ target.coef == pytest.approx(1.0, rel=1e-8)
    X = sphere(50, 5, seed=4)
    expected = kernel(X * (1 - 1e-12), target.centres * (1 - 1e-12)) @ target.coef
    np.testing.assert_allclose(target(X), expected, rtol=1e-7, atol=1e-8)


def test_approximation_errors_are_the_least_squares_readout_of_the_features():
    # At P = 0 the features are the initialisation's; the tiny relative
    # ridge gives numpy's least-squares error.
    d, m, n, n_test, tau = 5, 24, 400, 300, 10.0
    target = rkhs_target(20, d, random_state=0)
    X, X_test = sphere(n, d, 1), sphere(n_test, d, 2)
    y, y_test = target(X), target(X_test)

    def t(a):
        return torch.as_tensor(a, dtype=torch.float64)

    layers = first_layers(
        t(X), width=m, trainable_proportions=[0.0], init_scale=tau, seed=7
    )
    ((test_mse, train_mse),) = approximation_errors(
        layers, (t(X), t(y[:, None])), (t(X_test), t(y_test[:, None]))
    )
    w, b = spherical_biased_relu_init(
        d, m, init_scale=tau, generator=make_generator(7), dtype=torch.float64
    )
    features = np.maximum(X @ w.numpy().T + b.numpy(), 0.0)
    features_test = np.maximum(X_test @ w.numpy().T + b.numpy(), 0.0)
    design = np.column_stack([features, np.ones(n)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    fit_test = np.column_stack([features_test, np.ones(n_test)]) @ coef
    assert train_mse == pytest.approx(np.mean((design @ coef - y) ** 2), rel=1e-6)
    assert test_mse == pytest.approx(np.mean((fit_test - y_test) ** 2), rel=1e-5)


def test_informative_widths_are_where_the_bound_does_not_warn():
    widths = [16, 32, 46, 47, 64, 256, 642, 643, 1024]
    for tau in (1.0, 10.0):
        informative = informative_widths(widths, d=5, init_scale=tau, delta=0.05)
        for m in widths:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                approximation_bound(0.0, m, d=5, init_scale=tau)
            assert (m in informative) == (not caught)


def test_first_layers_are_the_estimators_at_every_proportion_and_nested():
    from sklearn_pt.neural_network import PartiallyTrainableRegressor

    X = torch.as_tensor(sphere(64, 5, seed=1))
    props = (0.0, 0.125, 0.5, 1.0)
    layers = first_layers(
        X, width=16, trainable_proportions=props, init_scale=10.0, seed=3
    )
    chosen = []
    for p, (weight, bias) in zip(props, layers, strict=True):
        estimator = PartiallyTrainableRegressor(
            hidden_layer_sizes=(16,),
            trainable_proportion=p,
            init_scale=10.0,
            trainable_selection="leverage",
            dtype="float64",
        )
        layer = estimator._build_module(X, 1, make_generator(3)).hidden_layers[0]
        assert torch.equal(layer.weight, weight) and torch.equal(layer.bias, bias)
        chosen.append({tuple(row.tolist()) for row in weight[: round(16 * p)]})
    # The neurons selected at a smaller P are among those at a larger P.
    assert chosen[1] <= chosen[2] <= chosen[3]
    assert len(chosen[3]) == 16  # without replacement: no duplicates
