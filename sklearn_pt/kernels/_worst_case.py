"""The worst case over an RKHS ball of the best approximation by features."""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg
import torch

from .._torch_bridge import as_tensor

__all__ = ["worst_case_approximation_error"]

DENSE_MAX_POINTS = 1024
"""Up to this many points the top eigenvalue comes from a dense
decomposition; above it from Lanczos (ARPACK), one product with the Gram
matrix per iteration."""


def worst_case_approximation_error(features, gram, *, tol: float = 1e-8) -> float:
    """Largest squared error of the best approximation by ``features`` of a
    function in the unit ball of an RKHS, on ``n`` points.

    ``sup_{||f||_H <= 1} min_a (1/n) sum_i (f(x_i) - (Phi a)_i)^2``: the
    quantity the partially trainable networks' approximation bound is about
    (a supremum over the RKHS unit ball), where a single target only bounds
    it from below.

    Parameters
    ----------
    features : ndarray or Tensor of shape (n_samples, n_features)
        ``Phi``: each column a feature evaluated at the ``n`` points (the
        readout, a linear combination of them, is fitted on those points).
    gram : ndarray or Tensor of shape (n_samples, n_samples)
        The kernel's Gram matrix ``K`` on the same points.
    tol : float, default=1e-8
        Relative tolerance of the Lanczos iteration (above
        :data:`DENSE_MAX_POINTS` points).

    Returns
    -------
    float
        ``lambda_max(P K P) / n``, ``P`` the orthogonal projection onto the
        complement of the features' span.

    Notes
    -----
    On the points, a function of the unit ball takes the values ``K c`` with
    ``c^T K c <= 1`` (its projection onto the kernel sections at the points
    has the same values and a smaller norm), so with ``u = K^(1/2) c`` the
    supremum is that of ``(1/n) ||P K^(1/2) u||^2`` over ``||u|| <= 1``:
    ``lambda_max(K^(1/2) P K^(1/2)) / n``, which has the eigenvalues of ``P K
    P``. The span is taken from the features' singular vectors above
    ``1e-13`` of the largest singular value times ``max(n, n_features)``
    (dead and collinear features add nothing). With no features it is the
    top eigenvalue of ``K / n``; with features spanning the top ``k``
    eigenvectors of ``K``, its ``k + 1``-th.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks". Bach (2017), "On the equivalence between kernel
    quadrature rules and random feature expansions", JMLR 18(21).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.kernels import worst_case_approximation_error
    >>> K = np.diag([3.0, 2.0, 1.0])
    >>> round(worst_case_approximation_error(np.zeros((3, 0)), K), 6)
    1.0
    >>> round(worst_case_approximation_error(np.eye(3)[:, :1], K), 6)
    0.666667
    """
    phi, kernel = (
        as_tensor(a, device=torch.device("cpu"), dtype=torch.float64).detach()
        for a in (features, gram)
    )
    n = kernel.shape[0]
    if kernel.ndim != 2 or kernel.shape != (n, n) or n == 0:
        raise ValueError(
            f"gram must be a square (n_samples, n_samples) matrix; got shape "
            f"{tuple(kernel.shape)}."
        )
    if phi.ndim != 2 or phi.shape[0] != n:
        raise ValueError(
            f"features must have shape (n_samples, n_features) with n_samples = "
            f"{n}, the gram's size; got shape {tuple(phi.shape)}."
        )
    if not (torch.isfinite(phi).all() and torch.isfinite(kernel).all()):
        raise ValueError("features and gram must be finite; remove NaN or inf.")
    basis = phi.new_zeros((n, 0))
    if phi.shape[1]:
        left, singular, _ = torch.linalg.svd(phi, full_matrices=False)
        if singular[0] > 0:
            basis = left[:, singular > singular[0] * max(phi.shape) * 1e-13]

    def residual_product(v: torch.Tensor) -> torch.Tensor:
        v = v - basis @ (basis.T @ v)
        v = kernel @ v
        return v - basis @ (basis.T @ v)

    if n <= DENSE_MAX_POINTS:
        top = float(
            torch.linalg.eigvalsh(residual_product(torch.eye(n, dtype=torch.float64)))[
                -1
            ]
        )
    else:
        operator = scipy.sparse.linalg.LinearOperator(
            (n, n),
            matvec=lambda v: residual_product(torch.from_numpy(v).view(n, -1)).numpy(),
            dtype=np.float64,
        )
        top = float(scipy.sparse.linalg.eigsh(operator, k=1, which="LA", tol=tol)[0][0])
    return max(top, 0.0) / n
