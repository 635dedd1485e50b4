import numpy as np
import pytest
import torch

from sklearn_pt._training import DivergenceCheck, FunctionCallback
from sklearn_pt.datasets import make_phase_retrieval
from sklearn_pt.metrics import eigenvector_overlap
from sklearn_pt.neural_network import FirstLayerGDRegressor
from sklearn_pt.nn import ACTIVATIONS, FirstLayerNetwork, half_squared_error
from sklearn_pt.nn._activations import activation_second_derivative
from sklearn_pt.spectral import (
    HessianMonitor,
    _hessian,
    hessian_spectrum,
)
from tests._train import train_module


def small_network(activation=torch.nn.functional.gelu, width=3, n_features=12):
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(width, n_features, generator=generator, dtype=torch.float64)
    second_layer = torch.tensor([1.0, -0.5, 2.0][:width], dtype=torch.float64)
    module = FirstLayerNetwork(weight / n_features**0.5, second_layer, activation)
    X, y = make_phase_retrieval(80, n_features, random_state=0)
    return module, X, y


def reference_hessian(module, X, y):
    """Dense Hessian by torch.autograd.functional.hessian, independently of the
    double-backward products of the library."""
    X_t = torch.as_tensor(X)
    y_t = torch.as_tensor(y)

    def risk(weight):
        hidden = module.activation(X_t @ weight.T)
        prediction = hidden @ module.second_layer / weight.shape[0]
        return 0.5 * torch.mean((prediction - y_t) ** 2)

    weight = module.weight.detach().clone()
    hessian = torch.autograd.functional.hessian(risk, weight)
    size = weight.numel()
    return hessian.reshape(size, size).numpy()


@pytest.mark.parametrize("which", ["smallest", "largest", "both"])
def test_lanczos_eigenvalues_equal_dense_eigh(which):
    module, X, y = small_network()
    reference = np.linalg.eigvalsh(reference_hessian(module, X, y))
    k = 5
    lanczos = hessian_spectrum(module, X, y, k=k, which=which)
    expected = {
        "smallest": reference[:k],
        "largest": reference[-k:],
        "both": np.r_[reference[: k // 2], reference[-(k - k // 2) :]],
    }[which]
    scale = np.abs(reference).max()
    np.testing.assert_allclose(lanczos.eigenvalues, expected, rtol=0, atol=1e-6 * scale)
    # ... and to 1e-6 of each eigenvalue itself.
    np.testing.assert_allclose(lanczos.eigenvalues, expected, rtol=1e-6)
    dense = hessian_spectrum(module, X, y, k=k, which=which, method="dense")
    np.testing.assert_allclose(dense.eigenvalues, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("activation", [*ACTIVATIONS, "custom"])
def test_hand_derived_products_equal_the_reference_hessian(activation):
    """A FirstLayerNetwork with a named activation gives the Lanczos run
    hand-derived Hessian products (sigma' and sigma'' in closed form); they
    equal products with torch.autograd.functional.hessian's matrix, and any
    other callable keeps autograd's double backward."""
    function = torch.sin if activation == "custom" else ACTIVATIONS[activation]
    module, X, y = small_network(function)
    operator = _hessian._HessianOperator(
        module, torch.as_tensor(X), torch.as_tensor(y), half_squared_error
    )
    assert (operator._hand_product is None) == (activation == "custom")
    reference = reference_hessian(module, X, y)
    directions = np.random.default_rng(0).standard_normal((4, operator.size))
    for v in directions:
        product = operator.product(torch.as_tensor(v)).numpy()
        scale = np.abs(reference @ v).max()
        np.testing.assert_allclose(product, reference @ v, rtol=0, atol=1e-12 * scale)
    # Batched, as the dense Hessian takes them (rows V H), and the dense
    # Hessian itself.
    batch = operator.product(torch.as_tensor(directions), batched=True).numpy()
    scale = np.abs(directions @ reference).max()
    np.testing.assert_allclose(batch, directions @ reference, atol=1e-12 * scale)
    scale = np.abs(reference).max()
    np.testing.assert_allclose(operator.dense(), reference, atol=1e-12 * scale)


@pytest.mark.parametrize("which", ["smallest", "largest"])
def test_dense_eigenpairs_of_one_end_equal_the_full_decomposition(which):
    """method="dense" asks LAPACK for one end only (by index); its eigenpairs
    are those of the full decomposition of the reference Hessian."""
    module, X, y = small_network()
    values, vectors = np.linalg.eigh(reference_hessian(module, X, y))
    k = 4
    keep = slice(None, k) if which == "smallest" else slice(-k, None)
    dense = hessian_spectrum(module, X, y, k=k, which=which, method="dense")
    scale = np.abs(values).max()
    np.testing.assert_allclose(dense.eigenvalues, values[keep], atol=1e-12 * scale)
    cosines = np.abs(np.sum(dense.eigenvectors * vectors[:, keep], axis=0))
    np.testing.assert_allclose(cosines, 1.0, atol=1e-8)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_second_derivatives_equal_autograd(activation):
    function = ACTIVATIONS[activation]
    z = torch.linspace(-6.0, 6.0, 1201, dtype=torch.float64)
    z = z[z.abs() > 1e-6].requires_grad_()  # ReLU: not at its kink
    (first,) = torch.autograd.grad(function(z).sum(), z, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), z, allow_unused=True)
    second = torch.zeros_like(z) if second is None else second
    closed_form = activation_second_derivative(function)(z.detach())
    torch.testing.assert_close(closed_form, second, rtol=1e-12, atol=1e-14)


def test_dense_hessian_equals_closed_form_for_quadratic_activation():
    # f = (1/m) sum_j a_j (w_j.x)^2: H_jk = mean_i [g_ij g_ik^T] + delta_jk
    # (2 a_j / m) mean_i r_i x_i x_i^T with g_ij = (2 a_j / m) (w_j.x_i) x_i.
    module, X, y = small_network(activation=torch.square, width=2, n_features=6)
    W = module.weight.detach().numpy()
    a = module.second_layer.numpy()
    m, d = W.shape
    residual = ((X @ W.T) ** 2) @ a / m - y
    grads = (2 * a / m)[None, :, None] * (X @ W.T)[:, :, None] * X[:, None, :]
    grads = grads.reshape(len(X), m * d)
    expected = grads.T @ grads / len(X)
    curvature = (X * residual[:, None]).T @ X / len(X)
    for j in range(m):
        expected[j * d : (j + 1) * d, j * d : (j + 1) * d] += 2 * a[j] / m * curvature
    operator = _hessian._HessianOperator(
        module, torch.as_tensor(X), torch.as_tensor(y), _hessian.half_squared_error
    )
    np.testing.assert_allclose(operator.dense(), expected, rtol=1e-10, atol=1e-12)


def test_eigenvectors_satisfy_the_eigen_equation():
    module, X, y = small_network()
    result = hessian_spectrum(module, X, y, k=4, which="smallest")
    H = reference_hessian(module, X, y)
    for value, vector in zip(result.eigenvalues, result.eigenvectors.T, strict=True):
        assert abs(np.linalg.norm(vector) - 1) < 1e-10
        np.testing.assert_allclose(H @ vector, value * vector, atol=1e-7)


def test_lanczos_never_builds_the_dense_hessian(monkeypatch):
    def forbidden(self):
        raise AssertionError("the dense Hessian was built")

    monkeypatch.setattr(_hessian._HessianOperator, "dense", forbidden)
    X, y = make_phase_retrieval(400, 500, random_state=0)
    reg = FirstLayerGDRegressor(hidden_layer_sizes=8, max_iter=1, random_state=0).fit(
        X, y
    )
    result = hessian_spectrum(reg, X, y, k=2, which="largest", tol=1e-4)
    assert result.n_params == 4000 and result.eigenvectors.shape == (4000, 2)


def test_estimator_and_module_give_the_same_spectrum():
    X, y = make_phase_retrieval(100, 8, random_state=0)
    reg = FirstLayerGDRegressor(hidden_layer_sizes=3, max_iter=3, random_state=0).fit(
        X, y
    )
    from_estimator = hessian_spectrum(reg, X, y, k=3)
    from_module = hessian_spectrum(reg.module_, X, y, k=3)
    np.testing.assert_allclose(from_estimator.eigenvalues, from_module.eigenvalues)
    assert from_estimator.loss == pytest.approx(reg.history_["train_loss"][-1])


def test_results_are_reproducible_and_sorted():
    module, X, y = small_network()
    first = hessian_spectrum(module, X, y, k=4, random_state=3)
    second = hessian_spectrum(module, X, y, k=4, random_state=3)
    np.testing.assert_array_equal(first.eigenvalues, second.eigenvalues)
    assert np.all(np.diff(first.eigenvalues) >= 0)


def test_eigenvector_overlap_measures_the_mass_along_the_directions():
    rng = np.random.default_rng(0)
    d, m = 50, 4
    theta = np.linalg.qr(rng.normal(size=(d, 1)))[0]
    blocks = [(0, m, d)]
    along = np.outer(rng.normal(size=m), theta[:, 0]).reshape(-1)
    across = rng.normal(size=(m, d))
    across -= (across @ theta) @ theta.T
    vectors = np.column_stack([along, across.reshape(-1), along + across.reshape(-1)])
    overlaps = eigenvector_overlap(vectors, theta, blocks)
    expected_mixed = np.linalg.norm(along) / np.linalg.norm(vectors[:, 2])
    np.testing.assert_allclose(overlaps, [1.0, 0.0, expected_mixed], atol=1e-12)
    # Parameters outside the first layer count in the norm only.
    padded = np.vstack([vectors, np.ones((3, 3))])
    norms = np.linalg.norm(vectors, axis=0)
    np.testing.assert_allclose(
        eigenvector_overlap(padded, theta, blocks),
        overlaps * norms / np.sqrt(norms**2 + 3),
        rtol=1e-12,
        atol=1e-15,
    )


def test_eigenvector_overlap_by_hand_with_unnormalised_directions():
    # Two first-layer rows (m=2, d=3) at offset 1, after one other parameter:
    # v = [5 | 1 2 2 | 0 0 4], ||v||^2 = 25 + 9 + 16 = 50.
    v = np.array([[5.0, 1.0, 2.0, 2.0, 0.0, 0.0, 4.0]]).T
    blocks = [(1, 2, 3)]
    # span(e1): V e1 = (1, 0), overlap 1 / sqrt(50), whatever the scale of e1.
    for scale in (2.0, -0.1, 30.0):
        direction = np.array([[scale], [0.0], [0.0]])
        np.testing.assert_allclose(
            eigenvector_overlap(v, direction, blocks), [1 / np.sqrt(50)], rtol=1e-12
        )
    # span(e1, e2) from non-orthogonal, non-unit columns (e1 + e2, 3 e2):
    # ||V [e1 e2]||_F^2 = 1 + 4 + 0 + 0 = 5.
    skewed = np.array([[1.0, 0.0], [1.0, 3.0], [0.0, 0.0]])
    np.testing.assert_allclose(
        eigenvector_overlap(v, skewed, blocks), [np.sqrt(5 / 50)], rtol=1e-12
    )


def test_eigenvector_overlap_depends_on_the_span_only():
    """Scaled and non-orthonormal (full-rank) directions give the overlap of
    their orthonormalised span."""
    rng = np.random.default_rng(1)
    d, m, k = 20, 3, 2
    basis = np.linalg.qr(rng.normal(size=(d, k)))[0]
    blocks = [(2, m, d)]
    vectors = rng.normal(size=(2 + m * d + 4, 5))
    # Half of each vector's first-layer part along the span.
    part = vectors[2 : 2 + m * d].T.reshape(5, m, d)
    part += 3 * (part @ basis) @ basis.T
    vectors[2 : 2 + m * d] = part.reshape(5, -1).T
    reference = eigenvector_overlap(vectors, basis, blocks)
    assert np.all((reference > 0.5) & (reference < 1))
    mixing = np.array([[4.0, 1.5], [0.0, 0.2]])  # invertible, not orthogonal
    for directions in (7.0 * basis, basis @ mixing, basis @ mixing.T):
        np.testing.assert_allclose(
            eigenvector_overlap(vectors, directions, blocks), reference, rtol=1e-12
        )


def test_overlaps_with_directions_are_returned():
    X, y, theta = make_phase_retrieval(100, 8, random_state=0, return_directions=True)
    reg = FirstLayerGDRegressor(hidden_layer_sizes=3, max_iter=2, random_state=0).fit(
        X, y
    )
    result = hessian_spectrum(reg, X, y, k=3, directions=theta)
    assert result.overlaps.shape == (3,)
    # By hand: the only trained parameter is W (3, 8), so each eigenvector is
    # W's perturbation V, flattened row-major, and the overlap is ||V theta||.
    V = result.eigenvectors.T.reshape(3, 3, 8)
    expected = np.linalg.norm(V @ theta, axis=(1, 2))
    np.testing.assert_allclose(result.overlaps, expected, rtol=1e-12)
    # The directions are orthonormalised: a scaled theta gives the same.
    scaled = hessian_spectrum(reg, X, y, k=3, directions=-5 * theta)
    np.testing.assert_allclose(scaled.overlaps, expected, rtol=1e-10)


def test_errors_say_what_to_do():
    X, y = make_phase_retrieval(30, 4, random_state=0)
    with pytest.raises(TypeError, match="Fit the estimator first"):
        hessian_spectrum(FirstLayerGDRegressor(), X, y)
    module, X, y = small_network(width=1, n_features=3)
    with pytest.raises(ValueError, match="method='dense'"):
        hessian_spectrum(module, X[:, :3], y, k=3)
    with pytest.raises(ValueError, match="different numbers of samples"):
        hessian_spectrum(module, X[:, :3], y[:-1], k=1)
    frozen = torch.nn.Linear(3, 1).requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        hessian_spectrum(frozen, X[:, :3], y, k=1)


def test_monitor_records_every_k_iterations():
    module, X, y = small_network()
    theta = np.eye(12)[:, :1]
    monitor = HessianMonitor(module, X, y, every=2, k=2, directions=theta)
    stops = [monitor(iteration, 0.0) for iteration in range(1, 6)]
    assert stops == [False] * 5
    assert monitor.history["iteration"] == [2, 4]
    assert len(monitor.history["eigenvalues"]) == len(monitor.history["overlaps"]) == 2
    # Against the dense eigendecomposition, not the monitor's own Lanczos.
    dense = hessian_spectrum(module, X, y, k=2, which="smallest", method="dense")
    np.testing.assert_allclose(
        monitor.history["eigenvalues"][0], dense.eigenvalues, rtol=1e-6
    )


def test_monitor_follows_training_and_matches_dense_eigh():
    """Recorded along a gradient-descent run, each entry is the dense
    spectrum (and eigenvector overlaps) of the weights at that iteration."""
    module, X, y = small_network()
    theta = np.linalg.qr(np.random.default_rng(0).normal(size=(12, 1)))[0]
    monitor = HessianMonitor(module, X, y, every=3, k=3, directions=theta, tol=1e-10)
    snapshots = {}

    def callback(iteration, loss):
        snapshots[iteration] = module.weight.detach().clone()
        return monitor(iteration, loss)

    snapshots[0] = module.weight.detach().clone()
    monitor.record(0)
    train_module(
        module,
        torch.as_tensor(X),
        torch.as_tensor(y),
        solver="gd",
        learning_rate_init=2.0,
        max_iter=9,
        callbacks=[DivergenceCheck(), FunctionCallback(callback)],  # no early stop
    )
    assert monitor.history["iteration"] == [0, 3, 6, 9]
    spectra = []
    for i, iteration in enumerate(monitor.history["iteration"]):
        weights = FirstLayerNetwork(
            snapshots[iteration], module.second_layer, module.activation
        )
        dense = hessian_spectrum(
            weights, X, y, k=3, which="smallest", method="dense", directions=theta
        )
        scale = np.abs(dense.eigenvalues).max()
        np.testing.assert_allclose(
            monitor.history["eigenvalues"][i], dense.eigenvalues, atol=1e-8 * scale
        )
        np.testing.assert_allclose(
            monitor.history["overlaps"][i], dense.overlaps, atol=1e-6
        )
        spectra.append(dense.eigenvalues)
    # Training moved the spectrum: a monitor stuck at the initial weights fails.
    assert np.abs(spectra[-1] - spectra[0]).max() > 0.1
