"""The one training loop: fit_loop, its steppers and its callbacks."""

import copy
import warnings

import numpy as np
import pytest
import torch

from sklearn_pt._training import (
    Callback,
    DivergenceCheck,
    FirstOrderStepper,
    LossHistory,
    StackedStepper,
    Stepper,
    default_callbacks,
    fit_loop,
    make_optimizer,
)
from sklearn_pt.exceptions import ConvergenceWarning, DivergenceError
from sklearn_pt.nn import ACTIVATIONS
from sklearn_pt.nn._stacked import StackedPartiallyTrainableMLP, append_ones
from sklearn_pt.spectral import HessianMonitor
from tests._train import train_module
from tests.nn.test_stacked import networks


def stacked_networks(**kwargs):
    return StackedPartiallyTrainableMLP.from_modules(networks(**kwargs))


def data(n=50, n_outputs=2, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 4, generator=generator, dtype=torch.float64)
    y = torch.randn(n, n_outputs, generator=generator, dtype=torch.float64)
    return X, y


@pytest.mark.parametrize("solver", ["adam", "sgd", "gd"])
@pytest.mark.parametrize("alpha", [0.0, 3.0])
@pytest.mark.parametrize("n_outputs", [1, 2])
def test_hand_derived_backward_equals_autograd_on_the_stacked_module(
    solver, alpha, n_outputs
):
    """The stacked stepper's optimisation (the module's hand-derived backward
    pass) trains exactly as autograd on the same stacked module: the same
    loss curves and weights, float64, over mini-batches, two hidden layers,
    frozen neurons and weight decay (one output exercises the fused top-layer
    gradient)."""
    X, y = data(n_outputs=n_outputs)
    runs = {}
    for gradients in ("manual", "autograd"):
        batch = stacked_networks(n_outputs=n_outputs)
        stepper = StackedStepper(
            batch,
            append_ones(X),
            y,
            solver=solver,
            learning_rate=0.01,
            alpha=alpha,
            batch_size=16,
            generators=[torch.Generator().manual_seed(k) for k in range(3)],
            gradients=gradients,
        )
        assert stepper.manual == (gradients == "manual")
        curves = [stepper.step(torch.ones(3, dtype=torch.bool)) for _ in range(4)]
        runs[gradients] = (curves, [p.detach().clone() for p in batch.parameters()])
    np.testing.assert_allclose(runs["manual"][0], runs["autograd"][0], rtol=1e-12)
    for manual, auto in zip(runs["manual"][1], runs["autograd"][1], strict=True):
        torch.testing.assert_close(manual, auto, rtol=1e-11, atol=1e-13)
    # ... and the networks did train (else nothing was compared).
    start = [p.detach() for p in stacked_networks(n_outputs=n_outputs).parameters()]
    assert not all(
        torch.equal(a, b) for a, b in zip(start, runs["manual"][1], strict=True)
    )


class CountingStepper(Stepper):
    """K models whose loss at iteration i is losses[k][i - 1]."""

    solver, learning_rate = "gd", 0.5

    def __init__(self, losses):
        self.losses = [list(curve) for curve in losses]
        self.n_models = len(losses)
        self.iteration = 0
        self.stopped = []
        self.stepped = []

    def step(self, active):
        self.stepped.append(active.clone())
        self.iteration += 1
        return [curve[self.iteration - 1] for curve in self.losses]

    def stop_models(self, models):
        self.stopped.append(list(models))

    def initial_losses(self):
        return [curve[0] for curve in self.losses]

    def first_rows_and_outputs(self, k):
        rows = torch.arange(4.0)[:, None]
        return rows, rows  # outputs depend on the rows: no dead end

    def current_losses(self):
        return [curve[self.iteration - 1] for curve in self.losses]


class StopAt(Callback):
    def __init__(self, k, iteration):
        self.k, self.iteration, self.stops = k, iteration, []

    def on_iteration_end(self, loop, k, loss):
        if k == self.k and loop.iteration == self.iteration:
            return "asked to"
        return None

    def on_model_stop(self, loop, k, reason):
        self.stops.append((k, loop.iteration, reason))


def test_fit_loop_stops_each_model_on_its_own():
    """Model 0 diverges at iteration 2, model 1 is stopped at 3 by a
    callback, model 2 runs to max_iter: each curve ends where it stopped,
    the stepper is told which stopped, and the later callbacks are not asked
    about a model an earlier one stopped."""
    curves = [[1.0, np.inf, 1.0, 1.0], [1.0, 0.9, 0.8, 0.7], [1.0, 0.5, 0.4, 0.3]]
    stepper = CountingStepper(curves)
    stop = StopAt(1, 3)
    never_asked = StopAt(0, 2)
    with pytest.warns(ConvergenceWarning, match=r"^1 of 3 networks: solver='gd'"):
        outcomes = fit_loop(
            stepper,
            max_iter=4,
            # [DivergenceCheck(), stop, never_asked, EarlyStopping, MaxIterWarning]
            callbacks=default_callbacks(tol=0.0, extra=[stop, never_asked]),
        )
    assert isinstance(outcomes[0], DivergenceError)
    assert "iteration 2" in str(outcomes[0]) and "learning_rate_init=0.5" in str(
        outcomes[0]
    )
    assert outcomes[1].n_iter == 3 and outcomes[1].converged
    assert outcomes[1].loss_curve == [1.0, 0.9, 0.8]
    assert outcomes[2].n_iter == 4 and not outcomes[2].converged
    assert stepper.stopped == [[0], [1]]
    assert stop.stops == [(1, 3, "asked to")] and never_asked.stops == [
        (1, 3, "asked to")
    ]
    assert [a.tolist() for a in stepper.stepped[-2:]] == [
        [False, True, True],
        [False, False, True],
    ]


def test_divergence_check_after_training():
    """A last loss ten times the first fails the model; final=False and
    relative=False leave such a run alone."""
    curves = [[1.0, 5.0, 20.0]]
    (outcome,) = fit_loop(
        CountingStepper(curves), max_iter=3, callbacks=[DivergenceCheck()]
    )
    assert isinstance(outcome, DivergenceError) and "to 20" in str(outcome)
    for check in (DivergenceCheck(final=False), DivergenceCheck(relative=False)):
        (outcome,) = fit_loop(CountingStepper(curves), max_iter=3, callbacks=[check])
        assert outcome.loss_curve == [1.0, 5.0, 20.0]
    blow_up = [[1.0, 2e6, 1.0]]
    (outcome,) = fit_loop(
        CountingStepper(blow_up), max_iter=3, callbacks=[DivergenceCheck()]
    )
    assert isinstance(outcome, DivergenceError) and outcome is not None
    (outcome,) = fit_loop(
        CountingStepper(blow_up),
        max_iter=3,
        callbacks=[DivergenceCheck(relative=False)],
    )
    assert outcome.n_iter == 3


def test_schedule_takes_one_gd_step_per_batch_and_step_size():
    """The two-step learner's schedule: step i on the i-th data with the
    i-th step size, as hand-written gradient descent."""
    generator = torch.Generator().manual_seed(0)
    module = torch.nn.Linear(3, 1, dtype=torch.float64)
    start = copy.deepcopy(module)
    batches = [
        (
            torch.randn(n, 3, generator=generator, dtype=torch.float64),
            torch.randn(n, 1, generator=generator, dtype=torch.float64),
        )
        for n in (10, 7)
    ]
    rates = (0.3, 2.0)
    schedule = [(*batch, rate) for batch, rate in zip(batches, rates, strict=True)]
    stepper = FirstOrderStepper(module, *batches[0], solver="gd", schedule=schedule)
    (result,) = fit_loop(stepper, max_iter=2, callbacks=[DivergenceCheck(final=False)])
    w, b = start.weight.detach().clone(), start.bias.detach().clone()
    losses = []
    for (X, y), rate in zip(batches, rates, strict=True):
        residual = X @ w.T + b - y
        losses.append(float(0.5 * (residual**2).mean()))
        w = w - rate * residual.T @ X / len(X)
        b = b - rate * residual.sum(0) / len(X)
    torch.testing.assert_close(module.weight.detach(), w, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(module.bias.detach(), b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(result.loss_curve, losses, rtol=1e-12)
    assert stepper.learning_rate == 2.0


def test_loss_history_adds_the_loss_at_the_final_weights():
    curves = [[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]
    history = LossHistory()
    fit_loop(CountingStepper(curves), max_iter=2, callbacks=[history])
    entry = history.fitted_history(1)
    np.testing.assert_array_equal(entry["iteration"], [0, 1, 2])
    np.testing.assert_array_equal(entry["train_loss"], [6.0, 5.0, 5.0])


def test_hessian_monitor_is_a_callback_recording_iteration_zero_once():
    generator = torch.Generator().manual_seed(0)
    module = torch.nn.Linear(3, 1, dtype=torch.float64)
    X = torch.randn(20, 3, generator=generator, dtype=torch.float64)
    y = X[:, :1] ** 2
    for record_first in (False, True):
        monitor = HessianMonitor(module, X, y, every=2, k=2)
        if record_first:
            monitor.record(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            train_module(
                module,
                X,
                y,
                solver="gd",
                learning_rate_init=0.1,
                max_iter=4,
                callbacks=default_callbacks(extra=[monitor]),
            )
        assert monitor.history["iteration"] == [0, 2, 4]


def test_stacked_stepper_refuses_lbfgs():
    with pytest.raises(ValueError, match="solver='lbfgs'"):
        StackedStepper(
            stacked_networks(), *data(), solver="lbfgs", generators=[None] * 3
        )


@pytest.mark.parametrize("activation", [*ACTIVATIONS, "custom"])
def test_first_layer_stacked_gradient_equals_autograd(activation):
    """The stacked first-layer network's hand-derived gradient (the closed
    form of a named activation's derivative; autograd down to the
    pre-activations for any other callable, then one product) trains as
    autograd through the whole network, each model on its own data."""
    from sklearn_pt.nn._activations import activation_derivative
    from sklearn_pt.nn._stacked import StackedFirstLayerNetwork

    function = torch.sin if activation == "custom" else ACTIVATIONS[activation]
    # every named activation has its closed form; the custom one goes to autograd
    assert (activation_derivative(function) is None) == (activation == "custom")
    generator = torch.Generator().manual_seed(0)
    X = torch.randn(3, 40, 6, generator=generator, dtype=torch.float64)
    y = torch.randn(3, 40, generator=generator, dtype=torch.float64)
    W = torch.randn(3, 4, 6, generator=generator, dtype=torch.float64)
    a = torch.randn(4, generator=generator, dtype=torch.float64)
    curves, weights = {}, {}
    for gradients in ("manual", "autograd"):
        module = StackedFirstLayerNetwork(W.clone(), a, function)
        stepper = StackedStepper(
            module,
            X,
            y,
            solver="gd",
            learning_rate=0.05,
            alpha=2.0,
            generators=[None] * 3,
            per_model_data=True,
            gradients=gradients,
        )
        curves[gradients] = [
            stepper.step(torch.ones(3, dtype=torch.bool)) for _ in range(5)
        ]
        weights[gradients] = module.weight.detach().clone()
    np.testing.assert_allclose(curves["manual"], curves["autograd"], rtol=1e-12)
    torch.testing.assert_close(
        weights["manual"], weights["autograd"], rtol=1e-12, atol=1e-14
    )
    assert not torch.allclose(weights["manual"], W)


def test_stacked_stepper_takes_per_model_data_in_full_batches_only():
    X = torch.zeros(3, 20, 5, dtype=torch.float64)
    with pytest.raises(ValueError, match="full-batch"):
        StackedStepper(
            stacked_networks(),
            X,
            X[..., :2],
            solver="adam",
            batch_size=4,
            generators=[None] * 3,
            per_model_data=True,
        )


@pytest.mark.parametrize(
    "solver, reference, ours",
    [
        ("gd", lambda groups: torch.optim.SGD(groups, lr=0.123), "GradientDescent"),
        (
            "adam",
            lambda groups: torch.optim.Adam(groups, lr=0.123, fused=True),
            "FusedAdam",
        ),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("weight_decay", [0.0, 0.37])
def test_optimizers_take_torchs_steps_bitwise(
    solver, reference, ours, dtype, weight_decay
):
    """The "gd" solver's optimiser is torch's plain SGD update and "adam"'s
    is torch's fused Adam, bit for bit, per group, with fresh .grad tensors
    at every step, a step size changed midway (as a schedule does) and a
    parameter without a gradient at one step (skipped, as torch skips it:
    Adam's moments and step count do not move)."""
    from sklearn_pt._training import _optimizers

    generator = torch.Generator().manual_seed(0)
    start = [torch.randn(5, 7, generator=generator, dtype=dtype), torch.randn(3)]
    start[1] = start[1].to(dtype)
    runs = []
    for make in (reference, lambda groups: make_optimizer(groups, solver, 0.123)):
        params = [torch.nn.Parameter(t.clone()) for t in start]
        optimizer = make(
            [
                {"params": params[:1], "weight_decay": weight_decay},
                {"params": params[1:]},
            ]
        )
        for iteration in range(6):
            optimizer.zero_grad()
            (params[0].sin().sum() * params[1].cos().sum()).backward()
            if iteration == 2:
                params[1].grad = None
            if iteration == 3:
                for group in optimizer.param_groups:
                    group["lr"] = 0.05
            optimizer.step()
        runs.append(params)
    assert isinstance(optimizer, getattr(_optimizers, ours))
    for mine, torchs in zip(runs[1], runs[0], strict=True):
        assert torch.equal(mine, torchs)
    assert not torch.equal(runs[1][0], start[0])


def test_adam_over_mixed_dtypes_falls_back_to_torchs_adam():
    """torch's fused kernel takes one dtype per call: parameters in two
    dtypes get torch.optim.Adam, which groups them, and still train."""
    params = [
        torch.nn.Parameter(torch.ones(3, dtype=torch.float32)),
        torch.nn.Parameter(torch.ones(2, dtype=torch.float64)),
    ]
    optimizer = make_optimizer([{"params": params}], "adam", 0.1)
    assert isinstance(optimizer, torch.optim.Adam)
    (params[0].sum() + params[1].sum()).backward()
    optimizer.step()
    assert all(bool((p < 1).all()) for p in params)


@pytest.mark.parametrize("activation", ["quadratic", "gelu", "relu", "custom"])
def test_one_first_layer_network_trains_as_autograd(activation):
    """FirstOrderStepper takes FirstLayerNetwork's hand-derived gradient by
    default (the squared loss); GD then follows autograd's path to rounding,
    with a schedule of batches and step sizes too."""
    from sklearn_pt.nn import FirstLayerNetwork

    function = torch.sin if activation == "custom" else ACTIVATIONS[activation]
    generator = torch.Generator().manual_seed(0)
    X = torch.randn(50, 6, generator=generator, dtype=torch.float64)
    y = torch.randn(50, generator=generator, dtype=torch.float64)
    W = torch.randn(4, 6, generator=generator, dtype=torch.float64)
    a = torch.randn(4, generator=generator, dtype=torch.float64)
    schedule = [(X[:25], y[:25], 0.05), (X[25:], y[25:], 0.1)] * 3
    curves, weights = {}, {}
    for gradients in ("auto", "autograd"):
        module = FirstLayerNetwork(W.clone(), a, function)
        stepper = FirstOrderStepper(
            module, X, y, solver="gd", schedule=schedule, gradients=gradients
        )
        assert stepper.manual == (gradients == "auto")
        curves[gradients] = [stepper.step() for _ in schedule]
        weights[gradients] = module.weight.detach().clone()
    np.testing.assert_allclose(curves["auto"], curves["autograd"], rtol=1e-12)
    torch.testing.assert_close(
        weights["auto"], weights["autograd"], rtol=1e-12, atol=1e-14
    )
    assert not torch.allclose(weights["auto"], W)


@pytest.mark.parametrize("make", ["one", "stacked"])
def test_steppers_name_their_gradient_modes(make):
    X, y = data()
    with pytest.raises(ValueError, match="gradients must be one of"):
        if make == "one":
            FirstOrderStepper(torch.nn.Linear(4, 2), X, y, gradients="manul")
        else:
            StackedStepper(
                stacked_networks(), X, y, generators=[None] * 3, gradients="manul"
            )


def test_stacked_stepper_names_the_protocol_a_module_lacks():
    X, y = torch.randn(2, 5, 3), torch.randn(2, 5)
    with pytest.raises(TypeError, match="trains a StackedModule; a Linear lacks"):
        StackedStepper(torch.nn.Linear(3, 1), X, y, generators=[None, None])


@pytest.mark.parametrize("loss_name", ["correlation", "squared"])
def test_full_batch_steps_over_row_chunks_equal_the_whole_batch(loss_name, monkeypatch):
    """A full-batch GD step (and the losses the stepper reports) taken over
    row chunks, each weighted by its rows, equals the step on the whole
    batch: every loss is a mean over the rows. ROW_CHUNK_ELEMENTS = 40 with
    a width-8 layer gives chunks of 5 of the 23 rows."""
    from sklearn_pt._training import _losses
    from sklearn_pt.feature_extraction._two_step_plan import LOSSES
    from sklearn_pt.nn import TwoLayerNetwork

    generator = torch.Generator().manual_seed(0)
    X = torch.randn(23, 6, generator=generator, dtype=torch.float64)
    y = torch.randn(23, generator=generator, dtype=torch.float64)
    weight = torch.randn(8, 6, generator=generator, dtype=torch.float64)
    readout = torch.randn(8, generator=generator, dtype=torch.float64)
    runs = {}
    for chunk_elements in (2**23, 40):
        monkeypatch.setattr(_losses, "ROW_CHUNK_ELEMENTS", chunk_elements)
        assert len(_losses.row_chunks(23, 8)) == (1 if chunk_elements > 40 else 5)
        module = TwoLayerNetwork(weight.clone(), readout, torch.tanh)
        stepper = FirstOrderStepper(
            module, X, y, solver="gd", learning_rate=0.5, loss=LOSSES[loss_name]
        )
        curve = [stepper.step()[0] for _ in range(4)]
        curve.append(stepper.current_losses()[0])
        runs[chunk_elements] = (curve, module.feature_map.weight.detach().clone())
    (whole, w_whole), (parts, w_parts) = runs[2**23], runs[40]
    np.testing.assert_allclose(parts, whole, rtol=1e-13, atol=1e-15)
    torch.testing.assert_close(w_parts, w_whole, rtol=1e-13, atol=1e-15)
    assert not torch.equal(w_whole, weight)
