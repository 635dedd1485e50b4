"""The dense parts of the two-step reproduction, against what they replaced.

At the sizes of ``sklearn-pt reproduce two-step --scale medium`` (count cells
``N = n = d`` up to 1600; alignment cells ``N = n = 4 d``), this times each
part the profile found dense, beside the computation it replaced, on the
same matrices in the same run, and checks first that both give the same
result:

* the decomposition of ``WeightSpectrum.fit``: the eigenvalues of ``W^T W``
  and the eigenvectors of only its top ``n_components``, against one full
  ``eigh`` (the same bulk edge and outlier count, the same top vectors up to
  sign);
* ``count_signal_outliers``: the eigenvalues of the smaller Gram matrix,
  against ``np.linalg.svd(compute_uv=False)`` (the same count);
* the top 2 right singular vectors of step 2's update: an index range of the
  Gram matrix's eigenvectors, against the thin SVD;
* the overflow check after a gradient step: Cauchy--Schwarz's bound on the
  sums of squares, against the pre-activations and features formed on the
  step's batch (the same verdict: both pass).

Each is timed with one BLAS and one torch thread (``threadpoolctl``), the
medians of ``--repeats`` interleaved runs. ``RESULT`` gives the summed time of
the replaced computations over that of the new ones at the largest size.

Run by hand (not in CI)::

    python benchmarks/bench_two_step_parts.py [--repeats 3] [--device cpu] [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.linalg  # noqa: F401  (loaded before the thread limit applies to it)
import torch
from _timing import interleaved_medians, print_table
from threadpoolctl import threadpool_limits

from sklearn_pt.feature_extraction._two_step_plan import check_step
from sklearn_pt.spectral import WeightSpectrum
from sklearn_pt.spectral._weights import (
    gram_matrix,
    singular_values,
    top_right_singular_vectors,
)
from sklearn_pt.theory import bbp_threshold, count_signal_outliers

SHAPES = [(1600, 1600), (3200, 800), (6400, 1600)]
QUICK_SHAPES = [(400, 400), (800, 200)]
N_COMPONENTS = WeightSpectrum().n_components


def spiked(n_rows: int, n_cols: int, rng) -> np.ndarray:
    """``N(0, 1/d)`` entries plus a rank-one spike above the bulk."""
    W = rng.standard_normal((n_rows, n_cols)) / np.sqrt(n_cols)
    W[:, 0] += 3.0 * rng.standard_normal(n_rows) / np.sqrt(n_rows)
    return W


def full_eigh_spectrum(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The replaced decomposition: every eigenpair of ``W^T W``."""
    W_t = torch.as_tensor(W)
    values, vectors = torch.linalg.eigh(W_t.T @ W_t)
    return values.flip(0).clamp_min(0).sqrt().numpy(), vectors.flip(1).T.numpy()


def new_spectrum(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The decomposition ``WeightSpectrum.fit`` makes now: every singular
    value and the top ``n_components`` right vectors, from one Gram matrix."""
    W_t = torch.as_tensor(W)
    gram = gram_matrix(W_t)
    values = singular_values(W_t, gram)
    return values, top_right_singular_vectors(W_t, N_COMPONENTS, gram)


def formed_check(weight: torch.Tensor, X: torch.Tensor) -> bool:
    """The replaced overflow check: the batch's pre-activations and features."""
    with torch.no_grad():
        pre = X @ weight.T
        features = torch.tanh(pre)
    return all(bool(torch.isfinite(a.square().sum())) for a in (weight, pre, features))


def check_agreement(W: np.ndarray) -> float:
    """Stop unless the new parts give the replaced parts' results; return
    the Tracy--Widom bulk edge of ``W``."""
    spectrum = WeightSpectrum(edge="tracy-widom").fit(W)
    values, vectors = full_eigh_spectrum(W)
    np.testing.assert_allclose(spectrum.singular_values_, values, atol=1e-10)
    kept = max(spectrum.n_outliers_, 1)
    cosines = np.abs(np.sum(spectrum.components_[:kept] * vectors[:kept], axis=1))
    np.testing.assert_allclose(cosines, 1.0, atol=1e-8)
    # An edge whose BBP threshold is the median singular value: about half
    # of the values count, so the two counts are compared where they can differ.
    n_rows, n_cols = W.shape
    dense = np.linalg.svd(W, compute_uv=False)
    threshold = float(np.median(dense))
    edge = threshold * (1 + np.sqrt(n_rows / n_cols))
    edge /= bbp_threshold(n_rows, n_cols, 1.0)
    expected = int(
        np.sum(
            dense > bbp_threshold(n_rows, n_cols, edge / (1 + np.sqrt(n_rows / n_cols)))
        )
    )
    assert count_signal_outliers(W, edge) == expected, "count differs from the SVD's"
    top = top_right_singular_vectors(torch.as_tensor(W), 2)
    vt = torch.linalg.svd(torch.as_tensor(W), full_matrices=False)[2][:2].numpy()
    np.testing.assert_allclose(np.abs(np.sum(top * vt, axis=1)), 1.0, atol=1e-8)
    return float(spectrum.bulk_edge_)


def parts(W: np.ndarray, X: torch.Tensor, edge: float, device: str) -> dict:
    """Each replaced computation beside its replacement, on ``W``."""
    W_t = torch.as_tensor(W)
    return {
        "spectrum: full eigh": lambda: full_eigh_spectrum(W),
        "spectrum: values + top vectors": lambda: new_spectrum(W),
        "count: svd": lambda: np.linalg.svd(W, compute_uv=False),
        "count: gram eigvalsh": lambda: count_signal_outliers(W, edge),
        "top-2 vectors: svd": lambda: torch.linalg.svd(W_t, full_matrices=False),
        "top-2 vectors: index range": lambda: top_right_singular_vectors(W_t, 2),
        "step check: formed": lambda: formed_check(W_t, X),
        "step check: bound": lambda: check_step(
            W_t, X, "tanh", where="", step_sizes=(1.0, 1.0)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    threadpool_limits(1)
    rng = np.random.default_rng(0)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    repeats = 1 if args.quick else args.repeats
    ratio = float("nan")
    for n_rows, n_cols in shapes:
        W = spiked(n_rows, n_cols, rng)
        edge = check_agreement(W)
        W_t = torch.as_tensor(W)
        X = torch.as_tensor(rng.standard_normal((n_rows, n_cols)))
        assert formed_check(W_t, X)
        runs = parts(W, X, edge, args.device)
        medians = interleaved_medians(runs, repeats=repeats, device=args.device)
        print(f"\nN = {n_rows}, d = {n_cols} (n = N for the step check)")
        print_table(medians, "spectrum: full eigh")
        replaced = ("full eigh", "svd", "formed")
        old = sum(t for name, t in medians.items() if name.split(": ")[1] in replaced)
        new = sum(medians.values()) - old
        ratio = old / new
        print(f"replaced parts {old:.3f} s, new parts {new:.3f} s: {ratio:.2f}x")
    print(f"RESULT: the two-step parts {ratio:.2f}x faster than the replaced ones")


if __name__ == "__main__":
    main()
