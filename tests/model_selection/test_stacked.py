"""fit_stacked: one entry point that stacks the fits of every paper's sweep."""

import numpy as np
import pytest
import torch
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import Ridge

from sklearn_pt._training import DivergenceCheck, FitPlan, StackedFit
from sklearn_pt.datasets import make_single_index
from sklearn_pt.exceptions import DivergenceError
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.model_selection import fit_stacked
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)

RTOL = 1e-9  # float64: the same arithmetic in another order
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

GRIDS = {
    "partial": (
        PartiallyTrainableRegressor((16,), max_iter=15, dtype="float64"),
        [
            {"trainable_proportion": p, "random_state": s}
            for p in (0.0, 0.5)
            for s in (0, 1)
        ],
    ),
    "first_layer": (
        FirstLayerGDRegressor(
            hidden_layer_sizes=4, activation="quadratic", max_iter=30, dtype="float64"
        ),
        [{"random_state": s} for s in (0, 1, 2)],
    ),
    "two_step": (
        TwoStepFeatureLearner(hidden_layer_sizes=24, dtype="float64"),
        [
            {"step_size_exponents": e, "random_state": s}
            for e in ((0.0, 0.0), (0.3, 0.45))
            for s in (0, 1)
        ],
    ),
    "two_step_features": (
        TwoStepFeatures(hidden_layer_sizes=24, dtype="float64"),
        [{"step_size_exponents": (0.2, 0.3), "random_state": s} for s in (0, 1)],
    ),
}


def outputs(estimator, X):
    if hasattr(estimator, "predict"):
        return estimator.predict(X)
    return estimator.transform(X)


@pytest.mark.parametrize("name", GRIDS)
def test_fit_stacked_equals_each_fit(name):
    template, grid = GRIDS[name]
    X, y = make_single_index(160, 12, random_state=0)
    estimators = [clone(template).set_params(**params) for params in grid]
    fitted = fit_stacked(estimators, X, y)
    assert all(f is e for f, e in zip(fitted, estimators, strict=True))
    results = []
    for estimator, params in zip(fitted, grid, strict=True):
        alone = clone(template).set_params(**params).fit(X, y)
        result = outputs(estimator, X)
        np.testing.assert_allclose(result, outputs(alone, X), rtol=RTOL, atol=1e-10)
        results.append(result)
    # The grid's fits differ (else nothing was compared).
    assert not np.allclose(results[0], results[-1])


@pytest.mark.parametrize("name", GRIDS)
def test_each_stacked_class_names_its_parameters(name):
    """One class attribute says what may differ; the grids vary only that."""
    template, grid = GRIDS[name]
    names = type(template)._stacked_parameters
    assert "random_state" in names
    assert names <= set(template.get_params())
    assert all(set(params) <= names for params in grid)


def test_callbacks_see_the_stacked_networks_after_every_iteration():
    """A callback of fit_stacked runs after each of the max_iter epochs and
    sees the stacked networks that train (P = 0 with the ridge readout is a
    closed form: not stacked); it does not change the fits."""
    from sklearn_pt._training import Callback

    template, grid = GRIDS["partial"]
    template = clone(template).set_params(readout="ridge")
    X, y = make_single_index(120, 5, random_state=0)

    class Seen(Callback):
        def __init__(self):
            self.iterations, self.n_models = [], set()

        def on_step_end(self, loop):
            self.iterations.append(loop.iteration)
            self.n_models.add(loop.stepper.module.n_models)

    seen = Seen()
    with_callback = fit_stacked(
        [clone(template).set_params(**p) for p in grid], X, y, callbacks=[seen]
    )
    without = fit_stacked([clone(template).set_params(**p) for p in grid], X, y)
    assert seen.iterations == list(range(1, template.max_iter + 1))
    assert seen.n_models == {sum(p["trainable_proportion"] > 0 for p in grid)}
    for a, b in zip(with_callback, without, strict=True):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_a_diverging_fit_is_left_as_it_was_and_the_others_fit():
    X, y = make_single_index(120, 10, random_state=1)
    estimators = [
        TwoStepFeatureLearner(hidden_layer_sizes=12, random_state=s, dtype="float32")
        for s in (0, 1)
    ]
    estimators[1].set_params(step_size_constants=(1e300, 1e300))  # inf in float32
    fitted = fit_stacked(estimators, X, y)
    assert isinstance(fitted[1], DivergenceError)
    assert not hasattr(estimators[1], "module_")
    assert fitted[0] is estimators[0] and hasattr(estimators[0], "module_")


@pytest.mark.parametrize(
    "estimators, match",
    [
        ([], "at least one estimator"),
        (
            [TwoStepFeatureLearner(), FirstLayerGDRegressor()],
            "one class; got FirstLayerGDRegressor, TwoStepFeatureLearner",
        ),
        (
            [Ridge(), Ridge()],
            "Ridge fits cannot be stacked .* Fit each on its own",
        ),
        (
            [
                TwoStepFeatureLearner(hidden_layer_sizes=8),
                TwoStepFeatureLearner(hidden_layer_sizes=9),
            ],
            "differ only in 'random_state', 'step_size_constants', "
            "'step_size_exponents'; these differ too: 'hidden_layer_sizes'",
        ),
        (
            [
                PartiallyTrainableRegressor(alpha=0.0),
                PartiallyTrainableRegressor(alpha=1.0),
            ],
            "may differ only in",
        ),
    ],
)
def test_bad_groups_get_a_clear_error(estimators, match):
    X, y = make_single_index(40, 5, random_state=0)
    with pytest.raises(ValueError, match=match):
        fit_stacked(estimators, X, y)


class _StackedLinear(torch.nn.Module):
    """``K`` linear models ``x -> w_k . x`` as one ``(K, d)`` parameter."""

    def __init__(self, weight):
        super().__init__()
        self.weight = torch.nn.Parameter(weight.clone())

    @property
    def n_models(self) -> int:
        return self.weight.shape[0]

    def predict(self, x):
        with torch.no_grad():
            return torch.einsum("knd,kd->kn", x, self.weight)

    def stacked_losses(self, x, y):
        return 0.5 * ((torch.einsum("knd,kd->kn", x, self.weight) - y) ** 2).mean(1)

    def update_masks(self):
        return []

    def squared_weight_norms(self):
        return self.weight.square().sum(1)

    def add_weight_decay_(self, weight_decay):
        self.weight.grad.add_(self.weight.detach(), alpha=weight_decay)

    def make_workspace(self):
        return None


class ToyGD(RegressorMixin, BaseEstimator):
    """A stackable estimator defined in this test file alone: a linear model
    trained by full-batch GD from a random start. Its stacking is its class
    attribute and its plan's ``stack``; nothing else in the library knows it."""

    _stacked_parameters = frozenset({"random_state", "learning_rate"})

    def __init__(self, learning_rate=0.1, max_iter=20, random_state=None):
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y):
        plan = self.plan_fit(X, y)
        return plan.complete(plan.run())

    def plan_fit(self, X, y):
        X_t, y_t = torch.as_tensor(X), torch.as_tensor(y)
        generator = torch.Generator().manual_seed(self.random_state or 0)
        start = torch.randn(X_t.shape[1], generator=generator, dtype=X_t.dtype)
        module = torch.nn.Linear(X_t.shape[1], 1, bias=False, dtype=X_t.dtype)
        with torch.no_grad():
            module.weight.copy_(start)

        def finish(plan, result):
            self.coef_ = plan.module.weight.detach().numpy().ravel().copy()
            self.n_iter_ = result.n_iter
            return self

        return FitPlan(
            module=module,
            finish=finish,
            stepper_params={"solver": "gd", "learning_rate": self.learning_rate},
            max_iter=self.max_iter,
            callbacks=[DivergenceCheck()],
            X=X_t,
            y=y_t[:, None],
            stack=_stack_toys,
        )

    def predict(self, X):
        return np.asarray(X) @ self.coef_


def _stack_toys(plans):
    module = _StackedLinear(torch.stack([p.module.weight.detach()[0] for p in plans]))

    def hand_back(outcomes):
        for k, plan in enumerate(plans):
            with torch.no_grad():
                plan.module.weight.copy_(module.weight[k])

    rates = [p.stepper_params["learning_rate"] for p in plans]
    return StackedFit(
        module=module,
        stepper_args={
            "X": torch.stack([p.X for p in plans]),
            "y": torch.stack([p.y[:, 0] for p in plans]),
            "solver": "gd",
            "learning_rate": rates,
            "generators": [None] * len(plans),
            "per_model_data": True,
        },
        max_iter=plans[0].max_iter,
        callbacks=[DivergenceCheck()],
        hand_back=hand_back,
    )


def test_a_stackable_estimator_needs_only_its_own_file():
    """The generic fit_stacked stacks an estimator it has never heard of,
    from its ``_stacked_parameters`` and its plan's ``stack``: each fit
    equals its own ``fit``, and other parameters may not differ."""
    X, y = make_single_index(80, 6, random_state=0)
    grid = [ToyGD(learning_rate=r, random_state=s) for r in (0.05, 0.2) for s in (0, 1)]
    fitted = fit_stacked([clone(e) for e in grid], X, y)
    for model, alone in zip(fitted, grid, strict=True):
        alone.fit(X, y)
        np.testing.assert_allclose(model.coef_, alone.coef_, rtol=RTOL)
        assert model.n_iter_ == alone.n_iter_ == 20
    assert not np.allclose(fitted[0].coef_, fitted[-1].coef_)
    with pytest.raises(ValueError, match="these differ too: 'max_iter'"):
        fit_stacked([ToyGD(), ToyGD(max_iter=3)], X, y)
