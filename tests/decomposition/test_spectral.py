import functools

import numpy as np
import pytest

from sklearn_pt.datasets import make_multi_index, make_phase_retrieval
from sklearn_pt.decomposition import (
    SpectralEstimator,
    optimal_preprocessing,
    spectral_matrix,
)
from sklearn_pt.metrics import subspace_overlap

SEEDS = range(5)


@functools.cache
def phase_retrieval(delta, seed, n_features=300):
    return make_phase_retrieval(
        int(delta * n_features), n_features, random_state=seed, return_directions=True
    )


def overlaps(delta, **params):
    values = []
    for seed in SEEDS:
        X, y, theta = phase_retrieval(delta, seed)
        values.append(SpectralEstimator(**params).fit(X, y).overlap(theta))
    return np.array(values)


def test_recovers_theta_above_and_not_below_the_weak_recovery_threshold():
    # delta_u = 1/2. Measured at d = 300 over seeds 0-4: overlaps 0.76-0.82 at
    # delta = 3 and 0.02-0.26 at delta = 0.2.
    assert overlaps(3.0).min() > 0.5
    assert overlaps(0.2).max() < 0.5


def test_optimal_preprocessing_beats_identity_and_trimming():
    # Measured at delta = 3, d = 300 (seeds 0-4): optimal 0.79, trimming 0.54,
    # identity 0.48 on average.
    optimal = overlaps(3.0).mean()
    assert optimal > overlaps(3.0, preprocessing="identity").mean() + 0.15
    assert optimal > overlaps(3.0, preprocessing="trimming").mean() + 0.1


def test_optimal_preprocessing_formula():
    y = np.array([0.0, 0.5, 1.0, 2.0, 100.0])
    delta = 2.0
    c = np.sqrt(delta / 0.5)
    np.testing.assert_allclose(optimal_preprocessing(y, delta), (y - 1) / (y + c - 1))
    # At the threshold delta_u = 1/2 it is 1 - 1/y, and it stays bounded above
    # by 1 (below the threshold the constant is held at 1).
    np.testing.assert_allclose(optimal_preprocessing(y[1:], 0.5), 1 - 1 / y[1:])
    assert optimal_preprocessing(np.zeros(1), 0.5) == pytest.approx(-1e8)
    np.testing.assert_allclose(
        optimal_preprocessing(y, 0.1), optimal_preprocessing(y, 0.5)
    )
    assert np.all(optimal_preprocessing(np.linspace(0, 1e6, 101), 5.0) < 1)
    # Negative responses count as zero.
    assert optimal_preprocessing(np.array([-3.0]), delta) == optimal_preprocessing(
        np.array([0.0]), delta
    )


def test_preprocessing_choices_match_their_formulas():
    X, y = make_phase_retrieval(200, 10, random_state=0)
    identity = SpectralEstimator(preprocessing="identity").fit(X, y)
    callable_identity = SpectralEstimator(preprocessing=lambda v: v).fit(X, y)
    np.testing.assert_allclose(identity.directions_, callable_identity.directions_)
    eigenvalues, vectors = np.linalg.eigh(X.T @ (X * y[:, None]) / len(X))
    assert identity.eigenvalues_[0] == pytest.approx(eigenvalues[-1])
    assert abs(vectors[:, -1] @ identity.directions_[:, 0]) == pytest.approx(1.0)

    cut = 2.0 * np.abs(y).mean()
    trimmed = SpectralEstimator(preprocessing="trimming", trimming_threshold=2.0)
    manual = SpectralEstimator(preprocessing=lambda v: np.where(v <= cut, v, 0.0))
    np.testing.assert_allclose(
        trimmed.fit(X, y).directions_, manual.fit(X, y).directions_
    )
    optimal = SpectralEstimator().fit(X, y)
    by_hand = SpectralEstimator(
        preprocessing=lambda v: optimal_preprocessing(v / v.mean(), 20.0)
    ).fit(X, y)
    np.testing.assert_allclose(optimal.directions_, by_hand.directions_)
    best = SpectralEstimator(preprocessing="max-overlap").fit(X, y)
    by_hand = SpectralEstimator(preprocessing=lambda v: 1.0 - v.mean() / v).fit(X, y)
    np.testing.assert_allclose(best.directions_, by_hand.directions_)


def test_fitted_attributes_and_transform():
    X, y, theta = make_multi_index(
        3000, 30, n_directions=2, link="he2", random_state=0, return_directions=True
    )
    spectral = SpectralEstimator(n_components=2, preprocessing="identity").fit(X, y)
    D = spectral.directions_
    assert D.shape == (30, 2) and spectral.components_.shape == (2, 30)
    np.testing.assert_allclose(D.T @ D, np.eye(2), atol=1e-12)
    assert spectral.eigenvalues_[0] >= spectral.eigenvalues_[1]
    assert np.all(D[np.abs(D).argmax(axis=0), [0, 1]] > 0)  # sign convention
    np.testing.assert_allclose(spectral.transform(X), X @ D)
    assert spectral.transform(X.astype(np.float32)).dtype == np.float32
    assert spectral.overlap(theta) > 0.9
    assert list(spectral.get_feature_names_out()) == [
        "spectralestimator0",
        "spectralestimator1",
    ]


def test_errors_say_what_to_do():
    X, y = make_phase_retrieval(50, 5, random_state=0)
    with pytest.raises(ValueError, match=r"positive mean.*preprocessing='identity'"):
        SpectralEstimator().fit(X, y - 10)
    with pytest.raises(ValueError, match="n_components=6 must be at most n_features=5"):
        SpectralEstimator(n_components=6).fit(X, y)
    with pytest.raises(ValueError, match="one value per response"):
        SpectralEstimator(preprocessing=lambda v: v[:-1]).fit(X, y)


def test_spectral_matrix_and_subspace_overlap():
    rng = np.random.default_rng(0)
    X, values = rng.normal(size=(20, 4)), rng.normal(size=20)
    expected = sum(v * np.outer(x, x) for x, v in zip(X, values, strict=True)) / 20
    np.testing.assert_allclose(spectral_matrix(X, values), expected)

    a = rng.normal(size=6)
    assert subspace_overlap(a, 3 * a) == pytest.approx(1.0)
    basis = np.linalg.qr(rng.normal(size=(6, 3)))[0]
    assert subspace_overlap(basis[:, :2], basis[:, 2]) == pytest.approx(0.0, abs=1e-12)
    # A vector inside a plane has overlap 1 with it, in either order.
    assert subspace_overlap(basis[:, :2], basis[:, 0] + basis[:, 1]) == pytest.approx(1)
    assert subspace_overlap(basis[:, 0] + basis[:, 1], basis[:, :2]) == pytest.approx(1)
    with pytest.raises(ValueError, match="different dimensions"):
        subspace_overlap(np.ones(3), np.ones(4))
