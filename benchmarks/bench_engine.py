"""Training-engine overhead: our ``fit`` against a hand-written torch loop.

Same two-layer ReLU model (d=20, width 512, one output), data (n=4000) and
schedule (20 epochs of Adam, batch 128, learning rate 1e-3) for

* ``plain torch loop``: the reference, a minimal loop over a random permutation
  with torch's default Adam; and the same loop with ``fused=True`` Adam (what
  the engine uses), to show the engine's own overhead;
* ``PartiallyTrainableRegressor`` (P=1, and P=0.5 for the masked path);
* ``skorch.NeuralNetRegressor`` on a plain ``nn.Sequential``;
* ``sklearn.neural_network.MLPRegressor`` (NumPy).

Run by hand (not in CI)::

    python benchmarks/bench_engine.py [--repeats 7] [--device cpu]

It prints the median wall time of each and its ratio to the plain loop, all
measured in the same process, interleaved repeat by repeat.
"""

from __future__ import annotations

import argparse
import warnings
from functools import partial

import numpy as np
import torch
from _timing import interleaved_medians, print_table
from sklearn.neural_network import MLPRegressor
from skorch import NeuralNetRegressor

from sklearn_pt.neural_network import PartiallyTrainableRegressor

N_SAMPLES, N_FEATURES, WIDTH, EPOCHS, BATCH, LR = 4000, 20, 512, 20, 128, 1e-3


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_SAMPLES, N_FEATURES)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    return X, y.astype(np.float32)


def plain_module() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(N_FEATURES, WIDTH), torch.nn.ReLU(), torch.nn.Linear(WIDTH, 1)
    )


def plain_loop(X, y, device, fused=None):
    generator = torch.Generator().manual_seed(0)
    model = plain_module().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR, fused=fused)
    X_t = torch.as_tensor(X, device=device)
    y_t = torch.as_tensor(y[:, None], device=device)
    for _ in range(EPOCHS):
        order = torch.randperm(len(X_t), generator=generator).to(device)
        for index in order.split(BATCH):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(X_t[index]), y_t[index])
            loss.backward()
            optimizer.step()
    float(loss)  # wait for the device


def ours(proportion):
    def run(X, y, device):
        PartiallyTrainableRegressor(
            hidden_layer_sizes=(WIDTH,),
            trainable_proportion=proportion,
            solver="adam",
            learning_rate_init=LR,
            batch_size=BATCH,
            max_iter=EPOCHS,
            tol=0.0,
            n_iter_no_change=EPOCHS + 1,
            alpha=0.0,
            project_to_sphere=True,
            random_state=0,
            device=device,
        ).fit(X, y)

    return run


def skorch_net(X, y, device):
    NeuralNetRegressor(
        plain_module,
        optimizer=torch.optim.Adam,
        lr=LR,
        max_epochs=EPOCHS,
        batch_size=BATCH,
        train_split=None,
        iterator_train__shuffle=True,
        device=device,
        verbose=0,
    ).fit(X, y[:, None])


def sklearn_mlp(X, y, device):
    MLPRegressor(
        hidden_layer_sizes=(WIDTH,),
        solver="adam",
        learning_rate_init=LR,
        batch_size=BATCH,
        max_iter=EPOCHS,
        tol=0.0,
        n_iter_no_change=EPOCHS + 1,
        alpha=0.0,
        random_state=0,
    ).fit(X, y)


CANDIDATES = {
    "plain torch loop": plain_loop,
    "plain torch loop, fused Adam": lambda X, y, device: plain_loop(X, y, device, True),
    "PartiallyTrainableRegressor P=1": ours(1.0),
    "PartiallyTrainableRegressor P=0.5": ours(0.5),
    "skorch NeuralNetRegressor": skorch_net,
    "sklearn MLPRegressor": sklearn_mlp,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--only", nargs="*", default=None, help="names to run (default: all)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="2 repeats (for run_all.py)"
    )
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    X, y = make_data()
    names = [n for n in CANDIDATES if args.only is None or n in args.only]
    names = ["plain torch loop", *[n for n in names if n != "plain torch loop"]]
    warnings.simplefilter("ignore")
    runs = {name: partial(CANDIDATES[name], X, y, args.device) for name in names}
    for run in runs.values():  # warm-up: imports, allocator, first-call costs
        run()
    medians = interleaved_medians(runs, repeats=repeats, device=args.device)
    print(
        f"n={N_SAMPLES} d={N_FEATURES} width={WIDTH} epochs={EPOCHS} batch={BATCH} "
        f"device={args.device} torch={torch.__version__} "
        f"threads={torch.get_num_threads()} repeats={repeats}"
    )
    reference = print_table(medians, "plain torch loop", speed_up=False)
    key = "PartiallyTrainableRegressor P=1"
    if key in medians:
        ratio = medians[key] / reference
        print(
            f"RESULT: {key} takes {ratio:.2f}x the time of the plain torch loop "
            f"({args.device})"
        )


if __name__ == "__main__":
    main()
