"""The library's stacked training against its peers, side by side.

1. **A sweep of 16 networks** (bench_sweep's workload, one split: 16
   trainable proportions P in [0, 1], width 512, d=20, 2000 training rows,
   batch 200, Adam at 1e-3, ``alpha=1e-4``, ``--epochs`` epochs, float32).
   Every method starts from the same 16 initial networks and masks (built by
   ``PartiallyTrainableRegressor.plan_fit``) and draws the same row orders
   (each network's own generator); the frozen neurons get no gradient.

   * ``library stacked``: the library's stacked training
     (``StackedPartiallyTrainableMLP`` trained by a ``StackedStepper``, what
     ``proportion_curve(strategy="stacked")`` runs per split);
   * ``torch.func vmap``: ``stack_module_state`` + ``vmap(grad(loss))`` over
     16 ``nn.Sequential`` copies, the gradients masked, fused Adam over the
     stacked parameters (torch's model-ensembling recipe);
   * ``16 plain loops``: one autograd loop with fused Adam per network.

   The three are checked first to give the same fits (training-set
   predictions equal to ``--atol``), then timed interleaved.
2. **One fit at P = 1**: ``PartiallyTrainableRegressor.fit`` against a plain
   torch loop with fused Adam and skorch (``bench_engine.py``'s candidates
   and workload; not checked equal: each draws its own initialisation).
3. **Hessian spectrum**: ``hessian_spectrum(method="lanczos")`` against
   curvlinops' ``HessianLinearOperator`` with the same ARPACK call
   (``scipy.sparse.linalg.eigsh``, 6 eigenvalues from both ends, ``tol=0``)
   on ``bench_hessian.py``'s workload at 1000, 4000 and 16000 parameters
   (``--quick``: the first two), checked to give the same eigenvalues first,
   when curvlinops is installed (it is not a dependency of the project:
   ``pip install curvlinops-for-pytorch --no-deps``; skipped with the reason
   printed otherwise).

Run by hand (not in CI)::

    OMP_NUM_THREADS=1 python benchmarks/bench_peers.py [--epochs 10]
        [--repeats 5] [--device cpu] [--quick]
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import warnings
from functools import partial

import bench_hessian
import numpy as np
import torch
from _timing import interleaved_medians, print_table
from bench_sweep import make_data, make_estimator
from torch.func import functional_call, grad, stack_module_state, vmap

from sklearn_pt._training import StackedStepper, fit_loop
from sklearn_pt.nn import StackedPartiallyTrainableMLP, append_ones

N_TRAIN, N_PROPORTIONS, BATCH, LR, ALPHA = 2000, 16, 200, 1e-3, 1e-4


class Start:
    """The 16 initial networks, their masks and generators' states, and the
    training tensors, as ``plan_fit`` builds them."""

    def __init__(self, epochs: int, device: str, width: int) -> None:
        X, y = make_data(2 * N_TRAIN)
        plans = [
            make_estimator(epochs, device, width)
            .set_params(trainable_proportion=p)
            .plan_fit(X[:N_TRAIN], y[:N_TRAIN])
            for p in np.linspace(0.0, 1.0, N_PROPORTIONS)
        ]
        self.modules = [plan.module for plan in plans]
        self.states = [plan.generator.get_state() for plan in plans]
        self.X, self.y = plans[0].X, plans[0].y
        self.epochs = epochs
        self.weight_decay = ALPHA / N_TRAIN
        # The library scales each weight matrix's penalty by the mean square
        # of its inputs at initialisation (docs/defaults.rst, defaults_penalty).
        self.penalty_scales = torch.tensor(
            [[scale for _, scale in m.penalty_scales(self.X)] for m in self.modules],
            dtype=self.X.dtype,
            device=self.X.device,
        )
        layers = [m.hidden_layers[0] for m in self.modules]
        self.masks = torch.stack([lay.trainable_mask for lay in layers])
        self.initial = [
            (
                lay.weight.detach().clone(),
                lay.bias.detach().clone(),
                m.readout.weight.detach().clone(),
                m.readout.bias.detach().clone(),
            )
            for lay, m in zip(layers, self.modules, strict=True)
        ]

    def generators(self) -> list[torch.Generator]:
        generators = []
        for state in self.states:
            generator = torch.Generator()
            generator.set_state(state)
            generators.append(generator)
        return generators

    def orders(self, generators):
        """Per epoch, the (K, n) row orders, as the library draws them."""
        n = len(self.X)
        return [
            torch.stack([torch.randperm(n, generator=g) for g in generators])
            for _ in range(self.epochs)
        ]


def library_stacked(start: Start) -> torch.Tensor:
    batch = StackedPartiallyTrainableMLP.from_modules(
        [copy.deepcopy(m) for m in start.modules]
    )
    stepper = StackedStepper(
        batch,
        append_ones(start.X),  # the first layer's bias input
        start.y,
        generators=start.generators(),
        learning_rate=LR,
        alpha=ALPHA,
        batch_size=BATCH,
    )
    fit_loop(stepper, max_iter=start.epochs, callbacks=[])
    inputs = append_ones(start.X).expand(batch.n_models, -1, -1)
    return batch.predict(inputs)[..., 0]


def _sequential(weight, bias, readout_weight, readout_bias) -> torch.nn.Module:
    module = torch.nn.Sequential(
        torch.nn.Linear(weight.shape[1], weight.shape[0]),
        torch.nn.ReLU(),
        torch.nn.Linear(weight.shape[0], readout_weight.shape[0]),
    ).to(weight.device, weight.dtype)
    with torch.no_grad():
        for param, value in zip(
            module.parameters(),
            (weight, bias, readout_weight, readout_bias),
            strict=True,
        ):
            param.copy_(value)
    return module


def _loss(outputs, y, first_weight, readout_weight, weight_decay, scales):
    """The library's loss: half the mean squared error plus half the weight
    decay times the squared weights (not the biases), each matrix's scaled
    by ``scales`` (the mean square of its inputs at initialisation)."""
    penalty = (
        scales[0] * first_weight.square().sum()
        + scales[1] * readout_weight.square().sum()
    )
    return 0.5 * (outputs - y).square().mean() + 0.5 * weight_decay * penalty


def torch_func_vmap(start: Start) -> torch.Tensor:
    modules = [_sequential(*initial) for initial in start.initial]
    params, buffers = stack_module_state(modules)
    skeleton = copy.deepcopy(modules[0]).to("meta")

    def loss(p, b, x, y, scales):
        outputs = functional_call(skeleton, (p, b), (x,))
        return _loss(
            outputs, y, p["0.weight"], p["2.weight"], start.weight_decay, scales
        )

    gradients = vmap(grad(loss))
    optimizer = torch.optim.Adam(list(params.values()), lr=LR, fused=True)
    mask = start.masks.to(start.X.dtype)
    for order in start.orders(start.generators()):
        for index in order.split(BATCH, dim=1):
            x = start.X[index]
            y = start.y[index]
            g = gradients(params, buffers, x, y, start.penalty_scales)
            g["0.weight"].mul_(mask[:, :, None])
            g["0.bias"].mul_(mask)
            for name, param in params.items():
                param.grad = g[name]
            optimizer.step()
    with torch.no_grad():
        outputs = vmap(lambda p, b: functional_call(skeleton, (p, b), (start.X,)))(
            params, buffers
        )
    return outputs[..., 0]


def plain_loops(start: Start) -> torch.Tensor:
    orders = start.orders(start.generators())
    outputs = []
    for k, initial in enumerate(start.initial):
        module = _sequential(*initial)
        optimizer = torch.optim.Adam(module.parameters(), lr=LR, fused=True)
        mask = start.masks[k].to(start.X.dtype)
        for order in orders:
            for index in order[k].split(BATCH):
                optimizer.zero_grad()
                loss = _loss(
                    module(start.X[index]),
                    start.y[index],
                    module[0].weight,
                    module[2].weight,
                    start.weight_decay,
                    start.penalty_scales[k],
                )
                loss.backward()
                module[0].weight.grad.mul_(mask[:, None])
                module[0].bias.grad.mul_(mask)
                optimizer.step()
        with torch.no_grad():
            outputs.append(module(start.X)[:, 0])
    return torch.stack(outputs)


SWEEP = {
    "library stacked": library_stacked,
    "torch.func vmap": torch_func_vmap,
    "16 plain loops": plain_loops,
}


def sweep_peers(args) -> dict[str, float]:
    start = Start(args.epochs, args.device, args.width)
    print(
        f"1. {N_PROPORTIONS} networks (P in [0, 1]), width {args.width}, d=20, "
        f"{N_TRAIN} rows, batch {BATCH}, {args.epochs} epochs of Adam, "
        f"alpha={ALPHA}, float32, device={args.device}, "
        f"torch threads={torch.get_num_threads()}"
    )
    outputs = {name: fit(start) for name, fit in SWEEP.items()}
    reference = outputs["library stacked"]
    scale = float(reference.abs().max())
    for name, out in outputs.items():
        gap = float((out - reference).abs().max()) / scale
        print(f"max |predictions {name} - library| / max |prediction| = {gap:.1e}")
        if not gap <= args.rtol:
            raise SystemExit(f"{name} does not fit as the library does")
    runs = {name: partial(fit, start) for name, fit in SWEEP.items()}
    medians = interleaved_medians(runs, repeats=args.repeats, device=args.device)
    print_table(medians, "library stacked", speed_up=False)
    return {
        name: medians[name] / medians["library stacked"]
        for name in ("torch.func vmap", "16 plain loops")
    }


def single_fit_peers(args) -> dict[str, float]:
    import bench_engine

    names = [
        "plain torch loop, fused Adam",
        "PartiallyTrainableRegressor P=1",
        "skorch NeuralNetRegressor",
    ]
    if importlib.util.find_spec("skorch") is None:
        print("skorch is not installed: skipped")
        names.pop()
    X, y = bench_engine.make_data()
    runs = {
        name: partial(bench_engine.CANDIDATES[name], X, y, args.device)
        for name in names
    }
    for run in runs.values():
        run()
    print(
        f"2. one fit: n={bench_engine.N_SAMPLES} d={bench_engine.N_FEATURES} "
        f"width={bench_engine.WIDTH} epochs={bench_engine.EPOCHS} "
        f"batch={bench_engine.BATCH}, device={args.device}"
    )
    medians = interleaved_medians(runs, repeats=args.repeats, device=args.device)
    print_table(medians, "plain torch loop, fused Adam", speed_up=False)
    ours = medians["PartiallyTrainableRegressor P=1"]
    return {name: medians[name] / ours for name in names}


def hessian_peers(args) -> str:
    """``hessian_spectrum`` against curvlinops' Hessian operator with the same
    ARPACK call, on ``bench_hessian.py``'s workload; the ratios, as text."""
    if importlib.util.find_spec("curvlinops") is None:
        reason = "curvlinops is not installed (not a dependency of the project)"
        print(f"3. hessian_spectrum vs curvlinops + eigsh: {reason}: skipped")
        return "curvlinops skipped (not installed)"
    params = bench_hessian.QUICK_PARAMS if args.quick else bench_hessian.PARAMS
    print(
        f"3. hessian_spectrum(method='lanczos') vs curvlinops "
        f"HessianLinearOperator + scipy eigsh: the {bench_hessian.K} extreme "
        f"eigenvalues (half from each end, tol=0) of FirstLayerGDRegressor on "
        f"phase retrieval, d={bench_hessian.N_FEATURES}, "
        f"n={bench_hessian.N_SAMPLES}, float64, device={args.device}"
    )
    ratios = []
    for n_params in params:
        runs = hessian_candidates(n_params, args.device)
        eigenvalues = {name: run() for name, run in runs.items()}
        reference = eigenvalues["hessian_spectrum"]
        gap = np.abs(eigenvalues["curvlinops + eigsh"] - reference).max()
        gap /= np.abs(reference).max()
        print(f"{n_params} parameters: max eigenvalue difference / norm = {gap:.1e}")
        if not gap <= args.rtol:
            raise SystemExit("curvlinops + eigsh gives other eigenvalues")
        medians = interleaved_medians(runs, repeats=args.repeats, device=args.device)
        print_table(medians, "hessian_spectrum", speed_up=False)
        ratios.append(medians["curvlinops + eigsh"] / medians["hessian_spectrum"])
    text = ", ".join(f"{r:.1f}x" for r in ratios)
    return f"curvlinops + eigsh {text} at {', '.join(map(str, params))} parameters"


def hessian_candidates(n_params: int, device: str):
    """The two ways to the spectrum of the Hessian of ``0.5 * mean((f(X) -
    y) ** 2)``, as callables returning its sorted extreme eigenvalues (the
    network fitted first, as in ``bench_hessian.py``)."""
    from curvlinops import HessianLinearOperator
    from scipy.sparse.linalg import eigsh

    from sklearn_pt.datasets import make_phase_retrieval
    from sklearn_pt.neural_network import FirstLayerGDRegressor
    from sklearn_pt.spectral import hessian_spectrum

    X, y = make_phase_retrieval(
        bench_hessian.N_SAMPLES, bench_hessian.N_FEATURES, random_state=0
    )
    regressor = FirstLayerGDRegressor(
        hidden_layer_sizes=n_params // bench_hessian.N_FEATURES,
        max_iter=bench_hessian.FIT_ITERATIONS,
        random_state=0,
        device=device,
    ).fit(X, y)
    module = regressor.module_
    inputs = torch.as_tensor(X, dtype=torch.float64, device=device)
    with torch.no_grad():
        shape = module(inputs).shape
    targets = torch.as_tensor(y, dtype=torch.float64, device=device).reshape(shape)
    trained = [p for p in module.parameters() if p.requires_grad]
    start = np.random.default_rng(0).standard_normal(sum(p.numel() for p in trained))

    def library():
        spectrum = hessian_spectrum(
            regressor, X, y, k=bench_hessian.K, which="both", method="lanczos"
        )
        return np.sort(spectrum.eigenvalues)

    def curvlinops():
        # MSELoss is mean((f - y)^2): twice the library's objective.
        operator = HessianLinearOperator(
            module,
            torch.nn.MSELoss(),
            trained,
            [(inputs, targets)],
            check_deterministic=False,
        ).to_scipy()
        values = eigsh(operator, k=bench_hessian.K, which="BE", v0=start, tol=0)[0]
        return np.sort(values) / 2

    runs = {"hessian_spectrum": library, "curvlinops + eigsh": curvlinops}
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.epochs, args.repeats = 3, 2
    warnings.simplefilter("ignore")
    sweep = sweep_peers(args)
    single = single_fit_peers(args)
    hessian = hessian_peers(args)
    single_text = ", ".join(
        f"{name} {ratio:.2f}x" for name, ratio in single.items() if "P=1" not in name
    )
    print(
        f"RESULT: peers take, relative to the library ({args.device}): sweep of 16: "
        f"torch.func vmap {sweep['torch.func vmap']:.2f}x, 16 plain loops "
        f"{sweep['16 plain loops']:.2f}x; one fit at P=1: {single_text}; {hessian}"
    )


if __name__ == "__main__":
    main()
