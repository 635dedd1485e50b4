"""A grid of two-step fits as one stacked computation equals the fits."""

import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_pt.datasets import make_single_index
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.model_selection import fit_stacked
from sklearn_pt.neural_network import TwoStepFeatureLearner

RTOL = 1e-10  # float64, the same arithmetic in another order


def grid(template, exponents=((0.0, 0.0), (0.3, 0.45)), seeds=(0, 1)):
    return [
        clone(template).set_params(step_size_exponents=e, random_state=s)
        for e in exponents
        for s in seeds
    ]


@pytest.mark.parametrize("batch", ["reuse", "fresh"])
@pytest.mark.parametrize("loss", ["correlation", "squared"])
@pytest.mark.parametrize("n_steps", [1, 2])
def test_stacked_grid_equals_the_fits(batch, loss, n_steps):
    X, y = make_single_index(240, 16, random_state=0)
    template = TwoStepFeatureLearner(
        hidden_layer_sizes=24,
        step_batches=batch,
        loss=loss,
        n_steps=n_steps,
        dtype="float64",
    )
    stacked = fit_stacked(grid(template), X, y)
    for fitted, alone in zip(stacked, grid(template), strict=True):
        alone.fit(X, y)
        assert len(fitted.first_layer_weights_) == n_steps + 1
        for a, b in zip(
            fitted.first_layer_weights_, alone.first_layer_weights_, strict=True
        ):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-12)
        np.testing.assert_array_equal(fitted.readout_mask_, alone.readout_mask_)
        np.testing.assert_allclose(
            fitted.spectrum_.singular_values_,
            alone.spectrum_.singular_values_,
            rtol=RTOL,
        )
        assert fitted.alpha_ == alone.alpha_
        np.testing.assert_allclose(
            fitted.predict(X), alone.predict(X), rtol=1e-8, atol=1e-10
        )
    # The grid's cells differ (else nothing was compared).
    assert not np.allclose(
        stacked[0].first_layer_weights_[-1], stacked[2].first_layer_weights_[-1]
    )


def test_features_transformer_and_a_diverging_cell():
    """TwoStepFeatures stacks too; a cell whose steps overflow gets the
    error its fit would raise and is left as it was, the others train on."""
    X, y = make_single_index(120, 10, random_state=1)
    template = TwoStepFeatures(hidden_layer_sizes=12, dtype="float32")
    cells = grid(template, exponents=((0.2, 0.2),), seeds=(0, 1, 2))
    cells[1].set_params(step_size_constants=(1e300, 1e300))  # inf in float32
    out = fit_stacked(cells, X, y)
    assert isinstance(out[1], DivergenceError)
    assert "Lower step_size_constants" in str(out[1])
    assert not hasattr(cells[1], "module_")
    for k in (0, 2):
        alone = clone(cells[k]).fit(X, y)
        np.testing.assert_allclose(
            out[k].transform(X), alone.transform(X), rtol=1e-4, atol=1e-5
        )


def test_cells_must_differ_only_in_the_grid_parameters():
    X, y = make_single_index(60, 5, random_state=0)
    cells = [
        TwoStepFeatureLearner(hidden_layer_sizes=8),
        TwoStepFeatureLearner(hidden_layer_sizes=9),
    ]
    with pytest.raises(ValueError, match="these differ too: 'hidden_layer_sizes'"):
        fit_stacked(cells, X, y)


def halved_tanh(z):
    return torch.tanh(z) / 2


@pytest.mark.parametrize("activation", ["sincos", halved_tanh])
def test_stacked_grid_with_a_new_or_callable_activation_equals_the_fits(activation):
    X, y = make_single_index(160, 12, random_state=1)
    template = TwoStepFeatures(
        hidden_layer_sizes=20, activation=activation, dtype="float64"
    )
    stacked = fit_stacked(grid(template), X, y)
    for fitted, alone in zip(stacked, grid(template), strict=True):
        alone.fit(X, y)
        for a, b in zip(
            fitted.first_layer_weights_, alone.first_layer_weights_, strict=True
        ):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-12)


def test_strategy_rule_stacks_small_fits_on_a_cpu_only():
    """The measured rule: on a CPU the steps are stacked up to N * d = 200 *
    200 first-layer weights, beyond that the cells fit one by one; on a GPU
    always stacked."""
    from sklearn_pt.feature_extraction._two_step_plan import stacked_is_faster

    assert stacked_is_faster("cpu", 200, 200)
    assert not stacked_is_faster("cpu", 201, 200)
    assert not stacked_is_faster(torch.device("cpu"), 400, 400)
    assert stacked_is_faster("cuda", 4000, 4000)


def test_large_grid_on_a_cpu_fits_cell_by_cell(monkeypatch):
    """Beyond the rule's size the cells are fitted one by one (the stacked
    module is never built), with the same outcomes as their own fits,
    a diverging cell included."""
    from sklearn_pt.feature_extraction import _two_step_plan

    def no_stacking(*args, **kwargs):
        raise AssertionError("the stacked module was built")

    monkeypatch.setattr(_two_step_plan, "CPU_STACKED_MAX_WEIGHTS", 0)
    monkeypatch.setattr(_two_step_plan, "StackedTwoLayerNetwork", no_stacking)
    X, y = make_single_index(120, 10, random_state=1)
    template = TwoStepFeatures(hidden_layer_sizes=12, dtype="float64")
    cells = grid(template, exponents=((0.2, 0.2),), seeds=(0, 1, 2))
    cells[1].set_params(step_size_constants=(1e300, 1e300))
    out = fit_stacked(cells, X, y)
    assert isinstance(out[1], DivergenceError)
    assert not hasattr(cells[1], "module_")
    for k in (0, 2):
        alone = clone(cells[k]).fit(X, y)
        np.testing.assert_allclose(out[k].transform(X), alone.transform(X), rtol=RTOL)
