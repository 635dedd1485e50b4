"""BiasedReLUKernel off the unit sphere: Gram matrices against the sphere and RBF.

Standardised 10-d data (``StandardScaler`` on Gaussian inputs: norms about
``sqrt(10)``, all outside the ball of radius ``init_scale = 1``) need the
clipping correction, a two-dimensional integral per pair; on the sphere
(``Normalizer``) the kernel has a closed form. This times, in one run and on
the same points:

* ``sphere``: ``BiasedReLUKernel()(X / |X|)``, the closed form;
* ``standardised``: ``BiasedReLUKernel()(X)``, the current decomposition
  (per-point one-dimensional moments plus one angular quadrature per pair
  whose caps intersect, with closed-form radial moments);
* ``standardised, previous``: the previous code path, an angular quadrature
  over up to ten arcs per pair with incomplete-beta radial moments (still in
  the module: it computes the gradient ``dk / dlog tau``), at ``--previous``
  rows only (it is about ten times slower);
* ``rbf``: :func:`sklearn.metrics.pairwise.rbf_kernel`, the reference.

Before timing it checks that the two code paths agree on the
``--previous``-row block (relative to the largest entry, at most ``1e-12``).
``RESULT`` gives the standardised time over the sphere's and over RBF's at
``--size`` rows, and the speed-up over the previous path (at the smaller size).

Run by hand (not in CI)::

    OMP_NUM_THREADS=1 python benchmarks/bench_kernel.py [--size 2000] \
        [--previous 400] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import Normalizer, StandardScaler

from sklearn_pt.kernels import BiasedReLUKernel
from sklearn_pt.kernels._biased_relu import _biased_relu_pairs

QUICK_SIZE, QUICK_PREVIOUS = 500, 150
AGREEMENT_RTOL = 1e-12


def seconds(function, repeats: int = 1) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls, and the last result."""
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def previous_path(X: np.ndarray, tau: float) -> np.ndarray:
    """The kernel matrix by the previous code path (angular quadrature)."""
    sq = np.einsum("ij,ij->i", X, X)
    sq1, sq2 = np.broadcast_arrays(sq[:, None], sq[None, :])
    k, _ = _biased_relu_pairs(
        sq1.ravel(), sq2.ravel(), (X @ X.T).ravel(), d=X.shape[1], tau=tau
    )
    return k.reshape(len(X), len(X))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--previous", type=int, default=400)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default="cpu", help="unused: NumPy only")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.previous, args.repeats = QUICK_SIZE, QUICK_PREVIOUS, 1

    rng = np.random.default_rng(0)
    X = StandardScaler().fit_transform(rng.normal(size=(args.size, args.features)))
    sphere = Normalizer().fit_transform(X)
    kernel = BiasedReLUKernel()
    norms = np.linalg.norm(X, axis=1)
    print(
        f"{args.size} x {args.size} Gram matrices, d={args.features}, "
        f"init_scale=1; standardised norms {norms.min():.2f}..{norms.max():.2f}"
    )

    small = X[: args.previous]
    t_prev, k_prev = seconds(lambda: previous_path(small, 1.0))
    t_new_small, k_new = seconds(lambda: kernel(small), args.repeats)
    gap = np.abs(k_new - k_prev).max() / np.abs(k_prev).max()
    if not gap <= AGREEMENT_RTOL:
        raise SystemExit(f"the two code paths differ by {gap:.2e} (relative)")

    t_sphere, _ = seconds(lambda: kernel(sphere), args.repeats)
    t_std, _ = seconds(lambda: kernel(X), args.repeats)
    t_rbf, _ = seconds(lambda: rbf_kernel(X, gamma=1.0 / args.features), args.repeats)

    rows = [
        ("sphere (closed form)", args.size, t_sphere),
        ("standardised", args.size, t_std),
        ("rbf_kernel (reference)", args.size, t_rbf),
        ("standardised", args.previous, t_new_small),
        ("standardised, previous path", args.previous, t_prev),
    ]
    print(f"{'matrix':32s} {'rows':>6s} {'seconds':>9s}")
    for name, n, t in rows:
        print(f"{name:32s} {n:6d} {t:9.3f}")
    print(f"agreement of the two paths at {args.previous} rows: {gap:.1e} (relative)")
    print(
        f"RESULT: standardised / sphere {t_std / t_sphere:.1f}x, standardised / "
        f"rbf {t_std / t_rbf:.0f}x at {args.size} rows; previous / current "
        f"{t_prev / t_new_small:.1f}x at {args.previous} rows"
    )


if __name__ == "__main__":
    main()
