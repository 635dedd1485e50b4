"""
Spectrum of the first-layer weights after two gradient steps
============================================================

Moniri and Hassani (2026) predict that, with step sizes ``eta_i = c_i N^alpha_i``,
the second gradient step adds ``spike_count(alpha1, alpha2)`` outliers to the
singular-value spectrum of the first layer, beyond the rank-one spike of the
first step (Ba et al., 2022). This script

1. draws the spectra of ``W_0``, ``W_1`` and ``W_2`` with the initialisation's
   Marchenko--Pastur (MP) edge, the fitted edge of the actual bulk and the
   outliers marked, with the spectrum of a null run (permuted targets) behind
   ``W_2``;
2. measures the number of outliers added by the second step over a grid of
   ``(alpha1, alpha2)`` with the ``"sincos"`` activation (every Hermite
   coefficient nonzero, so every order of the expansion exists) and shows it
   next to ``Lambda`` and the finite-``N`` prediction
   (:func:`~sklearn_pt.theory.predict_outlier_count` of the mean-field signal
   of :func:`~sklearn_pt.theory.two_step_signal` and the measured bulk);
3. compares the alignment of the second step's update (top-2 right singular
   vectors of ``W_2 - W_1``) with the direction of an ``He_3`` target for
   reused and fresh batches, under ``tanh`` (``c_3 != 0``: the order ``k = 2``
   that carries He_3 exists) and ``gelu`` (``c_3 = 0``, the parity rule's
   negative control);

and prints the activations' Hermite coefficients and measured against
predicted counts. The defaults run in well under a
minute on two CPU cores (``SKLEARN_PT_EXAMPLE_SCALE=small``: ``N = 150`` and
a smaller alignment panel, in seconds). ``--sizes 1000,2000,4000 --device
cuda`` repeats the count sweep at larger widths, to show the trend over ``N``.

Run ``python examples/plot_two_step_spectrum.py --help`` for the options.
"""

import argparse
import os
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # a file is always written; --show opens a window too
import matplotlib.pyplot as plt
import numpy as np

from sklearn_pt.datasets import make_single_index
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.spectral import WeightSpectrum, null_weights, soft_edge_test
from sklearn_pt.theory import (
    hermite_coefficients,
    predict_outlier_count,
    spike_count,
    two_step_signal,
)

ALPHA1 = (0.1, 0.25, 0.375)
ALPHA2 = (0.05, 0.2, 0.35, 0.45)
CONSTANTS = (2.0, 2.0)
COUNT_ACTIVATION = "sincos"
SMALL = os.environ.get("SKLEARN_PT_EXAMPLE_SCALE") == "small"
# N = n and d of the He_3 alignment panel
ALIGNMENT_SIZES = (300, 75) if SMALL else (600, 150)


def added_outliers(N, alpha1, alpha2, seed, *, link="tanh", device="cpu"):
    """Outliers of W_2 minus those of W_1 (Tracy-Widom edge test), N = n = d,
    measured and as the finite-N prediction (mean-field signal vs each bulk)."""
    X, y = make_single_index(N, N, link=link, random_state=seed)
    features = TwoStepFeatures(
        hidden_layer_sizes=N,
        activation=COUNT_ACTIVATION,
        step_size_exponents=(alpha1, alpha2),
        step_size_constants=CONSTANTS,
        random_state=seed,
        device=device,
        dtype="float64",
    ).fit(X, y)
    values = [
        WeightSpectrum.from_estimator(features, step=step).singular_values_
        for step in (1, 2)
    ]
    tests = [soft_edge_test(v) for v in values]
    y_steps = (y - y.mean()) / y.std()  # the steps' standardised targets
    signal = two_step_signal(
        (X, y_steps),
        (X, y_steps),
        features.second_layer_weights_,
        features.step_sizes_,
        COUNT_ACTIVATION,
        initial_weights=features.first_layer_weights_[0],
    )
    first, second = (
        predict_outlier_count(
            S,
            features.first_layer_weights_[step],
            edge=test.edge,
            threshold=test.threshold,
            singular_values=v,
        )
        for step, S, test, v in zip(
            (1, 2), (signal.first, signal.second), tests, values, strict=True
        )
    )
    return tests[1].n_outliers - tests[0].n_outliers, second - first


def count_sweep(sizes, seeds, device):
    """Measured and finite-N added outliers, each of shape
    (len(sizes), len(ALPHA1), len(ALPHA2), seeds)."""
    counts = np.zeros((2, len(sizes), len(ALPHA1), len(ALPHA2), seeds), dtype=int)
    for s, N in enumerate(sizes):
        start = time.perf_counter()
        for i, a1 in enumerate(ALPHA1):
            for j, a2 in enumerate(ALPHA2):
                for seed in range(seeds):
                    counts[:, s, i, j, seed] = added_outliers(
                        N, a1, a2, seed, device=device
                    )
        print(f"N = {N}: {time.perf_counter() - start:.1f} s")
    return counts


def print_counts(sizes, counts):
    measured, finite = counts
    predicted = spike_count(np.array(ALPHA1)[:, None], np.array(ALPHA2)[None, :])
    print(
        "\nOutliers added by the second step: measured / finite-N (per seed) vs Lambda"
    )
    print(
        f"{'alpha1':>6} {'alpha2':>6} {'Lam':>4} "
        + " ".join(f"N={N:<12}" for N in sizes)
    )
    for i, a1 in enumerate(ALPHA1):
        for j, a2 in enumerate(ALPHA2):
            cells = " ".join(
                f"{','.join(str(c) for c in measured[s, i, j])}/"
                f"{','.join(str(c) for c in finite[s, i, j]):<10}"
                for s in range(len(sizes))
            )
            print(f"{a1:>6} {a2:>6} {predicted[i, j]:>4} {cells}")
    for s, N in enumerate(sizes):
        print(
            f"N = {N}: measured == Lambda in "
            f"{100 * np.mean(measured[s] == predicted[:, :, None]):.0f}% of the runs, "
            f"== finite-N in {100 * np.mean(measured[s] == finite[s]):.0f}%"
        )
    return predicted


def alignment(seeds, device):
    """|P theta| on the top-2 right singular vectors of W_2 - W_1 (He_3)."""
    result = {}
    for activation in ("tanh", "gelu"):
        for batch in ("reuse", "fresh"):
            values = []
            for seed in range(seeds):
                X, y, theta = make_single_index(
                    *ALIGNMENT_SIZES,
                    link="he3",
                    random_state=seed,
                    return_directions=True,
                )
                features = TwoStepFeatures(
                    hidden_layer_sizes=ALIGNMENT_SIZES[0],
                    activation=activation,
                    step_size_exponents=(0.375, 0.45),
                    step_size_constants=CONSTANTS,
                    step_batches=batch,
                    random_state=seed,
                    device=device,
                    dtype="float64",
                ).fit(X, y)
                _, W1, W2 = features.first_layer_weights_
                vt = np.linalg.svd(W2 - W1, full_matrices=False)[2]
                values.append(np.linalg.norm(vt[:2] @ np.ravel(theta)))
            result[f"{activation}, {batch}"] = np.array(values)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n")[0])
    parser.add_argument(
        "--N",
        type=int,
        default=150 if SMALL else 400,
        help="width = n = d of panels 1-2",
    )
    parser.add_argument("--sizes", default=None, help="comma-separated widths to sweep")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=".", help="folder for the figure")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    sizes = [int(v) for v in args.sizes.split(",")] if args.sizes else [args.N]
    for name in ("gelu", "tanh", COUNT_ACTIVATION):
        c = hermite_coefficients(name, 5)
        print(f"Hermite coefficients c_0..c_5 of {name}: {np.round(c, 4)}")

    # 1. Spectra after 0, 1 and 2 steps, at a point where spike_count = 1.
    N, (a1, a2) = args.N, (0.25, 0.35)
    X, y = make_single_index(N, N, link="tanh", random_state=0)
    learner = TwoStepFeatures(
        hidden_layer_sizes=N,
        step_size_exponents=(a1, a2),
        step_size_constants=CONSTANTS,
        random_state=0,
        device=args.device,
        dtype="float64",
    ).fit(X, y)
    W_null = null_weights(learner, X, y, random_state=0)

    fig, axes = plt.subplots(2, 3, figsize=(16, 9), layout="constrained")
    for step, ax in enumerate(axes[0]):
        params = {"reference": W_null} if step == 2 else {}
        spectrum = WeightSpectrum.from_estimator(learner, step=step, **params)
        spectrum.plot(ax=ax)
        ax.set_title(
            f"W_{step}: {spectrum.n_outliers_} outlier(s) above the fitted edge"
        )
    by_mp = WeightSpectrum(edge="mp", margin=0.02).fit(learner.first_layer_weights_[2])
    versus_null = WeightSpectrum(edge="max", reference=W_null).fit(
        learner.first_layer_weights_[2]
    )
    print(
        f"N = {N}, (alpha1, alpha2) = ({a1}, {a2}): spike_count = "
        f"{spike_count(a1, a2)}; outliers of W_2 above the MP edge: "
        f"{by_mp.n_outliers_}"
        f", above the fitted edge: {learner.spectrum_.n_outliers_}, above the null "
        f"run's largest singular value: {versus_null.n_outliers_}"
    )

    # 2. Measured vs predicted added outliers over (alpha1, alpha2).
    counts = count_sweep(sizes, args.seeds, args.device)
    predicted = print_counts(sizes, counts)
    extent = (0, len(ALPHA2), 0, len(ALPHA1))
    for ax, grid, title in [
        (axes[1, 0], counts[1, -1].mean(axis=-1), "finite-N prediction"),
        (
            axes[1, 1],
            counts[0, -1].mean(axis=-1),
            f"measured (N = {sizes[-1]}; Lambda in brackets)",
        ),
    ]:
        image = ax.imshow(
            grid, origin="lower", cmap="viridis", vmin=0, vmax=4, extent=extent
        )
        for (i, j), value in np.ndenumerate(grid):
            ax.text(
                j + 0.5,
                i + 0.5,
                f"{value:g} ({predicted[i, j]})",
                ha="center",
                va="center",
                color="w",
            )
        ax.set_xticks(np.arange(len(ALPHA2)) + 0.5, [f"{v:g}" for v in ALPHA2])
        ax.set_yticks(np.arange(len(ALPHA1)) + 0.5, [f"{v:g}" for v in ALPHA1])
        ax.set_xlabel("alpha2")
        ax.set_ylabel("alpha1")
        ax.set_title(f"added outliers ({COUNT_ACTIVATION}), {title}")
    fig.colorbar(image, ax=axes[1, 1], shrink=0.8)

    # 3. Alignment of step 2's update with an He_3 direction.
    aligned = alignment(max(args.seeds, 3 if SMALL else 8), args.device)
    ax = axes[1, 2]
    for k, (label, values) in enumerate(aligned.items()):
        ax.scatter(np.full(values.size, k), values, color=f"C{k}", zorder=3)
        ax.bar(k, values.mean(), color=f"C{k}", alpha=0.4)
        print(
            f"He_3 alignment, {label}: {np.round(values, 3)}, mean {values.mean():.3f}"
        )
    n_align, d_align = ALIGNMENT_SIZES
    ax.axhline(np.sqrt(2 / d_align), color="0.4", ls="--", label="chance sqrt(2/d)")
    ax.set_xticks(range(len(aligned)), list(aligned), fontsize=8)
    ax.set_ylabel("|P theta|, top-2 right vectors of W_2 - W_1")
    ax.set_title(
        f"He_3 target, N = n = {n_align}, d = {d_align}\n"
        "(alpha1, alpha2) = (0.375, 0.45)"
    )
    ax.legend()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "two_step_spectrum.png", dpi=110)
    print(f"wrote {out / 'two_step_spectrum.png'}")
    if args.show:
        plt.switch_backend("TkAgg")
        plt.show()


if __name__ == "__main__":
    main()
