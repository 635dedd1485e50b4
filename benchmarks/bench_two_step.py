"""Two gradient steps + spectrum: ``TwoStepFeatureLearner`` against plain NumPy.

At ``N = n = d`` (default 2000; ``n`` is the number of samples that take the
gradient steps, the readout split holds as many again) this times

* ``TwoStepFeatureLearner.fit``: two full-batch steps of the correlation loss
  on ``W`` (gelu, reused batch, default step sizes), the ridge readout on the
  held-out split and the :class:`~sklearn_pt.spectral.WeightSpectrum` of the
  final ``W`` (an SVD in float64), all in float32 otherwise;
* ``numpy: steps + svd``: the reference, the same two updates written out in
  NumPy (``Z = X W^T``, ``G = -(a / sqrt(N)) * (sigma'(Z) * y)^T X / n``,
  ``W -= eta G``) and ``np.linalg.svd`` of the final ``W`` in float64;
* ``numpy: steps + readout + svd``: the same plus the readout (features
  ``sigma(X W^T)`` of the held-out split and a closed-form ridge), i.e. all the
  work ``fit`` does.

The NumPy code starts from the estimator's own ``W_0``, ``a`` and split, and
the benchmark checks, before timing, that it ends with the same singular
values (it stops otherwise) and prints how far the ridge coefficients differ
(the readout split's Gram matrix is ill-conditioned at ``n = N``, so float32
rounding moves them by about ``1e-4`` of their largest). ``RESULT`` gives
the time of ``fit`` over that of ``numpy: steps + readout + svd`` (the same
work; below 1: ours is faster). With ``--device cuda`` the estimator runs on
the GPU (the NumPy references stay on the CPU).

Run by hand (not in CI)::

    python benchmarks/bench_two_step.py [--size 2000] [--repeats 3] \
        [--device cpu] [--quick] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats

import numpy as np
import torch
from _timing import interleaved_medians, print_table
from scipy.special import erf

from sklearn_pt.datasets import make_single_index
from sklearn_pt.neural_network import TwoStepFeatureLearner

QUICK_SIZE, QUICK_REPEATS = 600, 2
RIDGE_ALPHA = 1.0
SINGULAR_VALUE_RTOL = 1e-4
"""Largest difference of singular values, relative to the largest, accepted
between the two implementations: both compute in float32, whose rounding over
sums of 2000 terms is about 1e-5."""


def make_data(size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``2 * size`` samples of a tanh single-index model in ``d = size``."""
    X, y = make_single_index(2 * size, size, link="tanh", random_state=seed)
    return X.astype(np.float32), y.astype(np.float32)


def make_learner(size: int, device: str) -> TwoStepFeatureLearner:
    return TwoStepFeatureLearner(
        hidden_layer_sizes=size, alpha=RIDGE_ALPHA, random_state=0, device=device
    )


def gelu(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + erf(z / math.sqrt(2.0)))


def gelu_derivative(z: np.ndarray) -> np.ndarray:
    """``Phi(z) + z phi(z)``."""
    cdf = 0.5 * (1.0 + erf(z / math.sqrt(2.0)))
    return cdf + z * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def numpy_two_steps(X, y, weight, readout, step_sizes) -> np.ndarray:
    """Two GD steps of ``-(1/n) sum_i y_i a^T gelu(W x_i) / sqrt(N)`` on ``W``
    (reused batch), with ``y`` standardised; float32 throughout."""
    n, width = X.shape[0], weight.shape[0]
    y = ((y - y.mean()) / y.std()).astype(X.dtype)
    scale = (readout / math.sqrt(width)).astype(X.dtype)[:, None]
    for eta in step_sizes:
        slopes = gelu_derivative(X @ weight.T)  # (n, N)
        gradient = -scale * ((slopes * y[:, None]).T @ X) / n  # (N, d)
        weight = weight - X.dtype.type(eta) * gradient
    return weight


def numpy_ridge(features, targets, alpha) -> tuple[np.ndarray, float]:
    """Ridge with an unpenalised intercept, in its dual form (``n < p`` here)."""
    mean, target_mean = features.mean(0), targets.mean()
    centred = features - mean
    gram = centred @ centred.T
    gram[np.diag_indices_from(gram)] += alpha
    coef = centred.T @ np.linalg.solve(gram, targets - target_mean)
    return coef, float(target_mean - mean @ coef)


def numpy_reference(X, y, initial, *, readout: bool):
    """The reference pipeline; returns the singular values, ``V^T`` and the
    ridge coefficients (``None`` without the readout)."""
    weight, second_layer, mask, step_sizes = initial
    weight = numpy_two_steps(X[~mask], y[~mask], weight, second_layer, step_sizes)
    coef = None
    if readout:
        features = gelu(X[mask] @ weight.T)
        coef, _ = numpy_ridge(features, y[mask], RIDGE_ALPHA)
    _, s, vt = np.linalg.svd(weight.astype(np.float64), full_matrices=False)
    return s, vt, coef


def initial_state(learner: TwoStepFeatureLearner):
    """What the NumPy code needs from a fitted learner to follow its run."""
    return (
        learner.first_layer_weights_[0],
        learner.second_layer_weights_,
        learner.readout_mask_,
        learner.step_sizes_,
    )


def check_agreement(learner, X, y) -> tuple[float, float]:
    """Max differences of the singular values and ridge coefficients of the
    fitted learner and the NumPy reference, relative to the largest of each;
    raise when the singular values disagree."""
    s, _, coef = numpy_reference(X, y, initial_state(learner), readout=True)
    ours = learner.spectrum_.singular_values_
    s_diff = float(np.max(np.abs(ours - s)) / s[0])
    ours_coef = learner.readout_.coef_
    coef_diff = float(np.max(np.abs(ours_coef - coef)) / np.max(np.abs(coef)))
    if s_diff > SINGULAR_VALUE_RTOL:
        raise AssertionError(
            f"Singular values differ by {s_diff:.2e} (relative to the largest), "
            f"more than {SINGULAR_VALUE_RTOL:g}: the NumPy reference does not "
            "compute what the estimator does; fix the reference before timing."
        )
    return s_diff, coef_diff


def profile_fit(X, y, size: int, device: str, top: int = 15) -> None:
    """Print the ``top`` functions of one ``fit`` by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    make_learner(size, device).fit(X, y)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=2000, help="N = n = d")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"size {QUICK_SIZE}, {QUICK_REPEATS} repeats",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile one fit")
    args = parser.parse_args(argv)
    size, repeats = args.size, args.repeats
    if args.quick:
        size, repeats = QUICK_SIZE, QUICK_REPEATS
    X, y = make_data(size)

    learner = make_learner(size, args.device).fit(X, y)  # also the warm-up
    initial = initial_state(learner)
    s_diff, coef_diff = check_agreement(learner, X, y)

    candidates = {
        "TwoStepFeatureLearner.fit": lambda: make_learner(size, args.device).fit(X, y),
        "numpy: steps + svd": lambda: numpy_reference(X, y, initial, readout=False),
        "numpy: steps + readout + svd": lambda: numpy_reference(
            X, y, initial, readout=True
        ),
    }
    medians = interleaved_medians(candidates, repeats=repeats, device=args.device)
    print(
        f"N=n=d={size} (readout split n={size}) device={args.device} "
        f"torch={torch.__version__} numpy={np.__version__} "
        f"threads={torch.get_num_threads()} repeats={repeats}"
    )
    print(
        f"agreement (max diff / max): singular values {s_diff:.2e}, "
        f"ridge coefficients {coef_diff:.2e}"
    )
    reference = print_table(medians, "numpy: steps + readout + svd", speed_up=False)
    ratio = medians["TwoStepFeatureLearner.fit"] / reference
    print(
        f"RESULT: TwoStepFeatureLearner.fit {ratio:.2f}x the time of NumPy "
        f"(same work) at N=n=d={size} ({args.device})"
    )
    if args.profile:
        profile_fit(X, y, size, args.device)


if __name__ == "__main__":
    main()
