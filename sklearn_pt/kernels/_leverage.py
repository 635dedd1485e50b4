"""Ridge leverage scores of random features."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import TypeVar

import numpy as np
import torch

from .._chunks import chunk_slices

__all__ = ["reg_for_degrees_of_freedom", "ridge_leverage_scores"]

ArrayOrTensor = TypeVar("ArrayOrTensor", np.ndarray, torch.Tensor)


def _check_reg(reg) -> float:
    if isinstance(reg, torch.Tensor) and reg.numel() == 1:
        reg = reg.item()
    if isinstance(reg, np.ndarray) and reg.size == 1:
        reg = reg.item()
    if (
        not isinstance(reg, Real)
        or isinstance(reg, bool)
        or not np.isfinite(reg)
        or reg <= 0
    ):
        raise ValueError(
            f"reg must be a positive finite number; got {reg!r}. Pass a ridge "
            "regularisation strength such as reg=1e-3."
        )
    return float(reg)


def _to_tensor(features) -> tuple[torch.Tensor, bool]:
    """Return ``features`` as a real tensor (a floating tensor keeps its
    dtype, anything else becomes float64) and whether it came as one."""
    if isinstance(features, torch.Tensor):
        if features.is_complex() or features.dtype == torch.bool:
            raise ValueError(
                f"features must be a real tensor; got dtype {features.dtype}."
            )
        if not features.is_floating_point():
            return features.detach().to(torch.float64), True
        return features.detach(), True
    try:
        arr = np.asarray(features)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ValueError(
            "features must be a 2-D array or tensor of shape "
            f"(n_samples, n_features); got {type(features).__name__}."
        ) from exc
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"features must hold real numbers; got an array of dtype {arr.dtype}."
        )
    dtype = arr.dtype if arr.dtype.kind == "f" else np.float64
    return torch.from_numpy(np.ascontiguousarray(arr, dtype=dtype)), False


def _output_dtype(features) -> torch.dtype | np.dtype:
    if isinstance(features, torch.Tensor):
        return features.dtype if features.is_floating_point() else torch.float64
    arr = np.asarray(features)
    return arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float64)


COLUMN_CHUNK_ELEMENTS = 2**22
"""Entries of the features converted to float64 at a time (32 MiB): the
Gram matrix and the scores are built over column chunks of this size, so
that no float64 copy of the whole feature matrix is held."""


@dataclass(frozen=True)
class ReLUFeatures:
    """The feature matrix ``relu(inputs @ weight.T + bias)``, evaluated a
    column or a row chunk at a time, so that it is never held whole (the
    leverage scores of a large candidate pool read it by columns,
    :func:`~sklearn_pt._torch_bridge.solve_ridge` by rows)."""

    inputs: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor

    @property
    def shape(self) -> tuple[int, int]:
        return self.inputs.shape[0], self.weight.shape[0]

    @property
    def device(self) -> torch.device:
        return self.inputs.device

    @property
    def dtype(self) -> torch.dtype:
        return self.inputs.dtype

    def rows(self, rows: slice) -> torch.Tensor:
        """The features of the inputs ``rows``, in the inputs' dtype."""
        return torch.addmm(self.bias, self.inputs[rows], self.weight.T).relu_()

    def columns(self, columns: slice) -> torch.Tensor:
        """The features of the candidates ``columns``, in float64."""
        weight, bias = self.weight[columns], self.bias[columns]
        return torch.addmm(bias, self.inputs, weight.T).relu_().to(torch.float64)

    def materialize(self) -> torch.Tensor:
        """The whole matrix, in the inputs' dtype."""
        return self.rows(slice(None))


def _column_chunks(phi):
    """Column slices of ``phi`` (a tensor or :class:`ReLUFeatures`) in
    float64, about :data:`COLUMN_CHUNK_ELEMENTS` entries each."""
    n_samples, n_features = phi.shape
    for columns in chunk_slices(n_features, n_samples, COLUMN_CHUNK_ELEMENTS):
        if isinstance(phi, ReLUFeatures):
            yield columns, phi.columns(columns)
        else:
            yield columns, phi[:, columns].to(torch.float64)


def _gram(phi) -> tuple[torch.Tensor, bool]:
    """The smaller float64 Gram matrix of ``phi`` (``Phi^T Phi`` or ``Phi
    Phi^T``), summed over chunks, and whether it is the features' side."""
    n_samples, n_features = phi.shape
    feature_side = n_samples >= n_features
    size = n_features if feature_side else n_samples
    gram = torch.zeros(size, size, dtype=torch.float64, device=phi.device)
    if feature_side:
        if isinstance(phi, ReLUFeatures):  # no larger than its Gram matrix
            phi = phi.materialize()
        for rows in chunk_slices(n_samples, size, COLUMN_CHUNK_ELEMENTS):
            part = phi[rows].to(torch.float64)
            gram.addmm_(part.T, part)
    else:
        for _, columns in _column_chunks(phi):
            gram.addmm_(columns, columns.T)
    return gram, feature_side


def _scores(phi, gram, feature_side: bool, shift: float) -> torch.Tensor:
    """The ridge leverage scores at ``shift = n reg``, in float64, from
    :func:`_gram`'s matrix (overwritten; see :func:`ridge_leverage_scores`,
    Notes)."""
    if feature_side:
        s, vectors = torch.linalg.eigh(gram)
        s = s.clamp_min_(0.0)
        return vectors.square_() @ (s / (s + shift))
    gram.diagonal().add_(shift)
    factor = torch.linalg.cholesky(gram, out=gram)
    scores = torch.empty(phi.shape[1], dtype=torch.float64, device=phi.device)
    for columns, chunk in _column_chunks(phi):
        solved = torch.linalg.solve_triangular(factor, chunk, upper=False)
        scores[columns] = solved.square_().sum(0)
    return scores


def ridge_leverage_scores(features: ArrayOrTensor, reg: float) -> ArrayOrTensor:
    """Ridge leverage score of each random feature on the training inputs.

    Parameters
    ----------
    features : ndarray or torch.Tensor of shape (n_samples, n_features)
        Feature matrix ``Phi``: column ``i`` is random feature ``i`` evaluated
        at the ``n_samples`` training inputs.
    reg : float
        Ridge regularisation ``lambda > 0``; it is scaled by ``n_samples``.

    Returns
    -------
    scores : ndarray or torch.Tensor of shape (n_features,)
        ``l_i = [Phi^T Phi (Phi^T Phi + n * reg * I)^-1]_ii``, in ``[0, 1]``.
        Same kind as ``features`` (a tensor stays on its device); floating
        inputs keep their dtype, integer inputs give float64.

    Raises
    ------
    ValueError
        If ``features`` is not a non-empty 2-D real array with finite
        entries, or ``reg`` is not a positive finite number.

    See Also
    --------
    sklearn_pt.kernels.BiasedReLUKernel : Limit kernel of the features.

    Notes
    -----
    The scores sum to the effective degrees of freedom
    ``tr[Phi^T Phi (Phi^T Phi + n reg I)^-1] = sum_j s_j / (s_j + n reg)``,
    ``s_j`` the eigenvalues of ``Phi^T Phi``. They are computed in float64
    on the cheaper side:

    - ``n_samples >= n_features``: with ``Phi^T Phi = V diag(s) V^T``,
      ``l_i = sum_j V_ij^2 s_j / (s_j + n reg)``;
    - ``n_samples < n_features``: by the push-through identity
      ``Phi^T Phi (Phi^T Phi + n reg I)^-1 = Phi^T (Phi Phi^T + n reg I)^-1 Phi``,
      so with the Cholesky factor ``L L^T = Phi Phi^T + n reg I``,
      ``l_i = ||L^-1 phi_i||^2`` (``phi_i`` column ``i``): no
      eigendecomposition, and the features are read a column chunk at a
      time, so no float64 copy of ``Phi`` is held.

    Both avoid explicit inverses and stay bounded for rank-deficient
    ``Phi``; eigenvalues below zero from rounding are set to zero and the
    scores are clipped to ``[0, 1]`` against rounding. Sampling the
    trainable neurons proportionally to these scores gives the mismatch
    ``kappa_1 = 1`` in the theory of [1]_; the scores are the finite-sample
    version of the ridge leverage function of [2]_.

    References
    ----------
    .. [1] He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features
       to Fully Trainable Networks".
    .. [2] Bach (2017), "On the equivalence between kernel quadrature rules
       and random feature expansions", JMLR 18(21).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.kernels import ridge_leverage_scores
    >>> rng = np.random.default_rng(0)
    >>> Phi = rng.normal(size=(50, 8))
    >>> scores = ridge_leverage_scores(Phi, reg=1.0)
    >>> scores.shape
    (8,)
    >>> bool(np.all((scores > 0) & (scores < 1)))
    True
    >>> s = np.linalg.eigvalsh(Phi.T @ Phi)
    >>> bool(np.isclose(scores.sum(), np.sum(s / (s + 50 * 1.0))))
    True
    """
    lam = _check_reg(reg)
    out_dtype = _output_dtype(features)
    phi, is_tensor = _to_tensor(features)
    if phi.ndim != 2 or phi.shape[0] == 0 or phi.shape[1] == 0:
        raise ValueError(
            "features must be a non-empty 2-D array of shape (n_samples, "
            f"n_features); got shape {tuple(phi.shape)}. Reshape a single sample "
            "with features.reshape(1, -1)."
        )
    if not bool(torch.isfinite(phi).all()):
        raise ValueError(
            "features contains NaN or infinite values; remove or impute them "
            "before computing leverage scores."
        )
    n_samples, _ = phi.shape
    scores = _scores(phi, *_gram(phi), n_samples * lam).clamp_(0.0, 1.0)
    if is_tensor:
        return scores.to(out_dtype)
    return scores.numpy().astype(out_dtype, copy=False)


def reg_for_degrees_of_freedom(features, degrees_of_freedom: float) -> float:
    """The ridge parameter at which the leverage scores sum to a given number.

    The scores of :func:`ridge_leverage_scores` sum to the effective degrees
    of freedom ``d(reg) = sum_j s_j / (s_j + n reg)`` (``s_j`` the eigenvalues
    of ``Phi^T Phi``), which falls from the rank of ``Phi`` to 0 as ``reg``
    grows. This returns the ``reg`` with ``d(reg) = degrees_of_freedom``: a
    regularisation stated in units that do not depend on the scale of the
    features, the number of candidates or of samples.

    Parameters
    ----------
    features : ndarray or torch.Tensor of shape (n_samples, n_features)
        Feature matrix ``Phi`` (as for :func:`ridge_leverage_scores`).
    degrees_of_freedom : float
        Target sum of the scores, in ``(0, rank(Phi))``.

    Returns
    -------
    reg : float
        Found by bisection on ``log(reg)`` to a relative precision of about
        ``1e-10`` in ``d(reg)``.

    Raises
    ------
    ValueError
        If ``degrees_of_freedom`` is not positive or not below the rank of
        ``Phi`` (no finite positive ``reg`` reaches it).

    Notes
    -----
    Bach (2017) samples features by the ridge leverage function at the
    ``lambda`` whose degrees of freedom the number of sampled features can
    afford (``m`` of order ``d(lambda) log d(lambda)``); choosing ``reg`` by
    its degrees of freedom follows that rule without a scale to guess.

    References
    ----------
    Bach (2017), "On the equivalence between kernel quadrature rules and
    random feature expansions", JMLR 18(21).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.kernels import reg_for_degrees_of_freedom, ridge_leverage_scores
    >>> Phi = np.random.default_rng(0).normal(size=(50, 8))
    >>> reg = reg_for_degrees_of_freedom(Phi, 3.0)
    >>> round(float(ridge_leverage_scores(Phi, reg).sum()), 6)
    3.0
    """
    phi, _ = _to_tensor(features)
    if phi.ndim != 2 or phi.shape[0] == 0 or phi.shape[1] == 0:
        raise ValueError(
            "features must be a non-empty 2-D array of shape (n_samples, "
            f"n_features); got shape {tuple(phi.shape)}."
        )
    s = torch.linalg.eigvalsh(_gram(phi)[0]).clamp_min(0.0)
    return (
        _shift_for_degrees_of_freedom(s, degrees_of_freedom, phi.shape) / (phi.shape[0])
    )


def _shift_for_degrees_of_freedom(s, degrees_of_freedom, shape) -> float:
    """The shift ``n reg`` at which ``sum s / (s + shift)`` is the target."""
    top = float(s.max())
    rank = int((s > top * max(shape) * 1e-15).sum()) if top else 0
    target = float(degrees_of_freedom)
    if not 0 < target < rank:
        raise ValueError(
            f"degrees_of_freedom must lie in (0, {rank}), the rank of the "
            f"features; got {degrees_of_freedom!r}. Ask for fewer degrees of "
            "freedom or give more samples and candidates."
        )

    def dof(log_shift: float) -> float:
        return float((s / (s + math.exp(log_shift))).sum())

    # d falls from ~rank to 0 as the shift runs over the spectrum.
    low, high = math.log(top) - 80.0, math.log(top) + 40.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if dof(middle) > target:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return math.exp(0.5 * (low + high))


def leverage_scores_at_degrees_of_freedom(
    features: torch.Tensor | ReLUFeatures, degrees_of_freedom: float
) -> tuple[torch.Tensor, float]:
    """:func:`ridge_leverage_scores` at :func:`reg_for_degrees_of_freedom`'s
    ``reg``, from the eigenvalues of one Gram matrix: ``(scores, reg)``, the
    scores a float64 tensor on the features' device."""
    phi = features if isinstance(features, ReLUFeatures) else features.detach()
    gram, feature_side = _gram(phi)
    s = torch.linalg.eigvalsh(gram).clamp_min_(0.0)
    shift = _shift_for_degrees_of_freedom(s, degrees_of_freedom, phi.shape)
    scores = _scores(phi, gram, feature_side, shift).clamp_(0.0, 1.0)
    return scores, shift / phi.shape[0]
