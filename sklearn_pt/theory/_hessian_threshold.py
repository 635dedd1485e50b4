"""The Hessian's aligned outlier of first-layer GD at the plateau, and the
sample ratio ``delta_NN`` at which it appears.

With ``f(x) = (1/m) sum_i a_i sigma(<w_i, x>)`` and the empirical risk
``R = (1/2n) sum_j (f(x_j) - y_j)^2``, the Hessian of ``R`` in the first
layer is the ``(m x m)``-matrix-weighted sample covariance ``H = (1/n)
sum_j M_j (x) x_j x_j^T`` with

``M_j = g_j g_j^T + r_j diag(a_i sigma''(z_ij) / m)``,
``g_j = (a_i sigma'(z_ij) / m)_i``, ``z_j = W x_j``, ``r_j = f(x_j) - y_j``.

At a plateau with ``W`` orthogonal to ``theta*``, ``M_j`` depends on
``(z_j, y_j)`` only, and on the complement of ``span(W)`` the design is
Gaussian: a spectral method with an ``(m x m)``-valued preprocessing. The
functions here solve its bulk (a matrix fixed point), its lower edge and its
outlier along ``theta* (x) v`` (the matrix form of the Lu--Li /
Mondelli--Montanari condition) for a law of ``(G, M)`` given by samples,
``G = <theta*, x>``; :func:`plateau_weights` draws that law from first-layer
GD, and :func:`hessian_threshold` finds the ``delta`` where the outlier
appears. Expectations are weighted averages over the samples.

Read more in the :ref:`User Guide <feature_learning_delta_nn>`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq

from ._phase_retrieval import _check_delta, _edge, _first_positive_root, _limit

__all__ = [
    "aligned_outlier",
    "hessian_threshold",
    "plateau_law",
    "plateau_weights",
    "scalar_aligned_outlier",
    "scalar_outlier_threshold",
    "weighted_lower_edge",
    "weighted_resolvent",
]

_START = 1e-2
"""First point of the branch: ``tau = -tr(S) / m`` at ``_START / scale``,
``scale`` the mean Frobenius norm of ``M`` (``lambda`` about ``-100 scale``,
far below the bulk)."""
_GROWTH = 1.3
"""Ratio of successive ``tau`` on the branch before the fold is bracketed."""
_TAU_MAX = 1e8
"""``tau * scale`` beyond which the branch is taken to have no fold: the
bulk's lower edge is then the limit of ``lambda`` (e.g. 0 for ``M >= 0`` and
``delta <= 1``, where the spectrum has an atom at 0)."""
_NEWTON_TOL = 1e-12
_NEWTON_ITER = 12


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------
def _check_scalar_delta(delta) -> float:
    if np.ndim(delta) != 0:
        raise ValueError(
            f"delta must be one positive real number (the sample ratio n / d); got "
            f"an array of shape {np.shape(delta)}. Call the function once per delta."
        )
    return float(_check_delta(delta))


def _check_weights(weights) -> NDArray[np.float64]:
    try:
        arr = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "weights must be an array of shape (n,) (scalar weights T_j) or "
            f"(n, m, m) (the matrices M_j); got {weights!r}."
        ) from exc
    if arr.ndim == 1:
        arr = arr[:, None, None]
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2] or arr.shape[0] < 1:
        raise ValueError(
            "weights must have shape (n,) or (n, m, m), one m x m matrix M_j per "
            f"sample; got shape {arr.shape}. Stack the matrices along the first axis."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("weights must be finite; got NaN or inf entries.")
    if not np.allclose(arr, arr.transpose(0, 2, 1), rtol=1e-10, atol=0.0):
        raise ValueError(
            "weights must be symmetric matrices M_j (a Hessian's weights are); pass "
            "(M + M.transpose(0, 2, 1)) / 2 if the asymmetry is rounding."
        )
    return 0.5 * (arr + arr.transpose(0, 2, 1))


def _check_samples(values, n: int, name: str, what: str) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(
            f"{name} must have shape (n,) = ({n},), one {what} per sample of "
            f"weights; got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got NaN or inf entries.")
    return arr


def _check_probabilities(sample_weight, n: int) -> NDArray[np.float64]:
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    w = _check_samples(sample_weight, n, "sample_weight", "probability weight")
    if np.any(w < 0) or w.sum() <= 0:
        raise ValueError(
            "sample_weight must be non-negative with a positive sum (it is "
            "normalised to probabilities); pass None for equal weights."
        )
    return w / w.sum()


def _check_lower(values, n: int) -> NDArray[np.float64]:
    """Scalar weights: shape (n,) or (n, 1, 1)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape == (n, 1, 1):
        arr = arr.reshape(n)
    return _check_samples(arr, n, "weights", "scalar weight T_j")


# --------------------------------------------------------------------------
# the matrix fixed point, traced along its branch
# --------------------------------------------------------------------------
@dataclass
class _Point:
    tau: float
    S: NDArray[np.float64]
    lam: float
    slope: float = math.nan
    """``d lam / d tau`` on the branch there."""


class _Branch:
    """The physical branch of ``S^-1 = lam I - E[M (I - S M / delta)^-1]``
    below the bulk, parametrised by ``tau = -tr(S) / m`` (regular through
    the fold in ``lam``, the lower edge)."""

    def __init__(self, weights, probabilities, delta):
        self.M, self.p, self.delta = weights, probabilities, delta
        self.m = weights.shape[1]
        self.eye = np.eye(self.m)
        self.scale = float(probabilities @ np.linalg.norm(weights, axis=(1, 2)))
        if self.scale == 0.0:
            self.scale = 1.0
        rows, cols = np.triu_indices(self.m)
        self.rows, self.cols = rows, cols
        basis = np.zeros((len(rows), self.m, self.m))
        basis[np.arange(len(rows)), rows, cols] = 1.0
        basis[np.arange(len(rows)), cols, rows] = 1.0
        self.basis = basis.reshape(len(rows), -1).T  # (m^2, k)
        self.points: list[_Point] = []
        self.edge: _Point | None = None

    # the terms A_j = M_j (I - S M_j / delta)^-1 = (I - M_j S / delta)^-1 M_j
    def terms(self, S):
        return np.linalg.solve(self.eye - self.M @ S / self.delta, self.M)

    def admissible(self, S) -> bool:
        """S negative definite, every ``I - S M_j / delta`` with positive
        eigenvalues (the branch that starts at ``S = 0``)."""
        try:
            L = np.linalg.cholesky(-S)
        except np.linalg.LinAlgError:
            return False
        C = L.T @ self.M @ L / self.delta
        try:  # I + C positive definite for every j
            np.linalg.cholesky(self.eye + C)
        except np.linalg.LinAlgError:
            return False
        return True

    def lam_matrix(self, S, A):
        return np.linalg.inv(S) + np.einsum("j,jab->ab", self.p, A)

    def _kron(self, X):
        """Matrix of ``E -> X E X`` on row-major ``vec``."""
        m = self.m
        return np.einsum("ij,kl->iljk", X, X).reshape(m * m, m * m)

    def _jacobian(self, S, A):
        """Of ``(S^-1 + E[A] - lam I, tr S + m tau)`` in ``(hvec S, lam)``:
        ``E -> -S^-1 E S^-1 + E[A E A] / delta``."""
        m, k = self.m, len(self.rows)
        V = A.reshape(len(A), -1)
        expected = (V * self.p[:, None]).T @ V  # (ij),(kl): A_ij A_kl
        kron_a = expected.reshape(m, m, m, m).transpose(0, 3, 1, 2)
        kron_a = kron_a.reshape(m * m, m * m)
        full = -self._kron(np.linalg.inv(S)) + kron_a / self.delta
        jac = np.zeros((k + 1, k + 1))
        jac[:k, :k] = (full @ self.basis)[self.rows * m + self.cols]
        jac[:k, k] = -(self.rows == self.cols).astype(float)
        jac[k, :k] = (self.rows == self.cols).astype(float)
        return jac

    def solve(self, tau, start: _Point, before: _Point | None = None):
        """Newton on ``(S, lam)``: ``S^-1 + E[A] = lam I``, ``tr S = -m tau``,
        from ``start`` (extrapolated linearly from ``before`` when given);
        None when it fails or lands off the branch (:meth:`admissible`)."""
        m, k = self.m, len(self.rows)
        S, lam = start.S * (tau / start.tau), start.lam
        if before is not None and before.tau != start.tau:
            slope = (tau - start.tau) / (start.tau - before.tau)
            guess = start.S + slope * (start.S - before.S)
            S = guess * (-m * tau / np.trace(guess))
            lam = start.lam + slope * (start.lam - before.lam)
            if not _negative_definite(S):
                S, lam = start.S * (tau / start.tau), start.lam
        for _ in range(_NEWTON_ITER):
            A = self.terms(S)
            residual_m = self.lam_matrix(S, A) - lam * self.eye
            residual = np.append(
                residual_m[self.rows, self.cols], np.trace(S) + m * tau
            )
            size = np.abs(residual[:-1]).max() / (abs(lam) + self.scale)
            size = max(size, abs(residual[-1]) / max(tau, 1e-300))
            jac = self._jacobian(S, A)
            if size < _NEWTON_TOL:
                if not self.admissible(S):
                    return None
                # the tangent: jac (dS, dlam) = -(0, ..., 0, m) d tau
                rhs = np.zeros(k + 1)
                rhs[k] = -m
                try:
                    slope = float(np.linalg.solve(jac, rhs)[k])
                except np.linalg.LinAlgError:
                    slope = 0.0
                return _Point(tau, S, float(lam), slope)
            try:
                step = np.linalg.solve(jac, residual)
            except np.linalg.LinAlgError:
                return None
            for _ in range(30):  # damp into the negative definite matrices
                dS = np.zeros((m, m))
                dS[self.rows, self.cols] = step[:k]
                dS[self.cols, self.rows] = step[:k]
                if _negative_definite(S - dS):
                    break
                step = step / 2
            else:
                return None
            S, lam = S - dS, lam - step[k]
        return None

    def trace(self, stop_at_lam=None):
        """March ``tau`` up from ``_START / scale`` until the slope turns
        negative (the first fold, :meth:`_refine_fold`) or ``lam`` exceeds
        ``stop_at_lam``."""
        tau = _START / self.scale
        S = -tau * self.eye
        lam = float(np.trace(self.lam_matrix(S, self.terms(S)))) / self.m
        point = self.solve(tau, _Point(tau, S, lam))
        if point is None:
            raise RuntimeError("The bulk's fixed point did not converge far below it.")
        self.points = [point]
        factor = _GROWTH
        while True:
            last = self.points[-1]
            if stop_at_lam is not None and last.lam >= stop_at_lam:
                return
            if last.tau * self.scale > _TAU_MAX:
                self.edge = last
                return
            before = self.points[-2] if len(self.points) > 1 else None
            new = self.solve(last.tau * factor, last, before)
            if new is None:
                factor = math.sqrt(factor)
                if factor - 1.0 < 1e-7:  # at a pole of an atom: lam -> -inf
                    self.edge = last
                    return
                continue
            if new.slope <= 0 or new.lam < last.lam:  # past the fold
                self._refine_fold(last, new)
                return
            secant = (new.lam - last.lam) / (new.tau - last.tau)
            if secant < 0.9 * min(last.slope, new.slope):
                # the slope dipped in between: a fold may hide there
                factor = math.sqrt(factor)
                continue
            self.points.append(new)
            factor = min(factor * factor, _GROWTH)

    def _refine_fold(self, low: _Point, high: _Point):
        """The fold between ``low`` (``lam`` rising) and ``high`` (past it):
        the root of the slope, by ``brentq``, points solved from ``low``."""
        if not math.isfinite(low.slope) or low.slope <= 0:
            self.edge = low
            return
        cache = {}

        def slope(tau):
            point = self.solve(tau, low)
            if point is None:  # beyond an atom's pole: past the fold
                return -1.0
            cache[tau] = point
            return point.slope

        if slope(high.tau) > 0:  # lam fell without the slope changing sign
            high_tau = high.tau
            while slope(high_tau) > 0 and high_tau - low.tau > 1e-9 * low.tau:
                high_tau = 0.5 * (low.tau + high_tau)
            if slope(high_tau) > 0:
                self.edge = low
                return
        else:
            high_tau = high.tau
        tau = brentq(slope, low.tau, high_tau, xtol=1e-10 * low.tau)
        edge = cache.get(tau) or self.solve(tau, low)
        self.edge = low if edge is None or edge.lam < low.lam else edge

    def point_at(self, tau):
        """The branch at ``tau``: Newton from the nearest known point below
        (the branch is traced upwards), in smaller steps where that fails."""
        known = sorted([*self.points, self.edge], key=lambda q: q.tau)
        below = [q for q in known if q.tau <= tau] or known[:1]
        start = below[-1]
        point = self.solve(tau, start)
        substeps = 2
        while point is None and substeps <= 64:
            point = start
            for t in np.geomspace(start.tau, tau, substeps + 1)[1:]:
                point = self.solve(t, point)
                if point is None:
                    break
            substeps *= 4
        if point is None:
            raise RuntimeError(
                f"The bulk's fixed point did not converge at tau={tau:.6g} on its "
                "branch; the law may have atoms too close to its lower edge."
            )
        return point


def _negative_definite(S) -> bool:
    try:
        np.linalg.cholesky(-S)
    except np.linalg.LinAlgError:
        return False
    return True


def _branch(weights, probabilities, delta, stop_at_lam=None) -> _Branch:
    branch = _Branch(weights, probabilities, delta)
    branch.trace(stop_at_lam)
    return branch


def _largest_ratio(branch, point, signal2, probabilities):
    """``max eig(S E[(G^2 - 1) A])``: 1 where the aligned outlier sits."""
    A = branch.terms(point.S)
    B = np.einsum("j,jab->ab", probabilities * (signal2 - 1.0), A)
    return float(np.max(np.linalg.eigvals(point.S @ B).real))


# --------------------------------------------------------------------------
# public functions: the law given by samples
# --------------------------------------------------------------------------
def weighted_resolvent(weights, delta, lam, *, sample_weight=None):
    """The bulk's matrix resolvent ``S(lam)`` below its lower edge.

    The ``m x m`` solution ``S`` of the fixed point
    ``S^-1 = lam I - E[M (I - S M / delta)^-1]`` on the branch that tends
    to ``I / lam`` as ``lam -> -inf``: the deterministic equivalent of the
    ``m x m`` blocks of ``(lam - K)^-1`` averaged over the ``p``
    coordinates, for ``K = (1/n) sum_j M_j (x) xi_j xi_j^T``, ``xi_j ~ N(0,
    I_p)`` independent of ``M_j``, ``n / p = delta``.

    Parameters
    ----------
    weights : array-like of shape (n,) or (n, m, m)
        Samples of the symmetric weight ``M`` (scalars for ``m = 1``).
    delta : float
        The sample ratio ``n / p``, positive.
    lam : float
        Below :func:`weighted_lower_edge`.
    sample_weight : array-like of shape (n,), default=None
        Probabilities of the samples (normalised); None: equal.

    Returns
    -------
    S : ndarray of shape (m, m)
        Symmetric, negative definite.

    See Also
    --------
    weighted_lower_edge : Where the branch ends.

    Notes
    -----
    The fixed point follows from the rank-``m`` leave-one-out updates of
    ``K``: with ``U_j = I_m (x) xi_j``, ``(lam - K)^-1 U_j = (lam - K_-j)^-1
    U_j (I - M_j U_j^T (lam - K_-j)^-1 U_j / n)^-1`` and ``U_j^T (lam -
    K_-j)^-1 U_j / n -> S / delta``. The branch is traced in ``tau = -tr(S)
    / m`` by Newton's method on ``(S, lam)`` (analytic Jacobian ``-S^-1 E
    S^-1 + E[A E A] / delta``, ``A = M (I - S M / delta)^-1``), from
    ``tau = 10^-2 / E||M||_F`` up; ``S`` at ``lam`` is the point where the
    branch reaches ``lam``, by ``brentq`` in ``tau``. Expectations are the
    ``sample_weight`` averages over the samples.

    References
    ----------
    .. [1] Montanari, Wang (2026), "Phase Transitions for Feature Learning in
       Neural Networks".
    .. [2] Lu, Li (2020), "Phase transitions of spectral initialization for
       high-dimensional non-convex estimation", Information and Inference.

    Examples
    --------
    Constant ``M = 1``: ``S`` solves ``1/S = lam - 1 / (1 - S / delta)``.

    >>> from sklearn_pt.theory import weighted_resolvent
    >>> S = weighted_resolvent([1.0], 4.0, -1.0)[0, 0]
    >>> round(float(S), 6), round(float(1 / S + 1 / (1 - S / 4)), 6)
    (-0.531129, -1.0)
    """
    M = _check_weights(weights)
    delta = _check_scalar_delta(delta)
    p = _check_probabilities(sample_weight, len(M))
    if not isinstance(lam, Real) or not math.isfinite(lam):
        raise ValueError(f"lam must be a finite real number; got {lam!r}.")
    branch = _branch(M, p, delta, stop_at_lam=lam)
    points = [*branch.points, *([branch.edge] if branch.edge is not None else [])]
    if points[-1].lam < lam:
        raise ValueError(
            f"lam must lie below the bulk's lower edge {points[-1].lam:.6g} "
            f"(delta={delta:g}); got lam={lam!r}. Pass a smaller lam (see "
            "weighted_lower_edge)."
        )
    index = next(i for i, q in enumerate(points) if q.lam >= lam)
    if index == 0:
        return _resolvent_far(M, p, delta, lam)
    low, high = points[index - 1], points[index]

    def gap(tau):
        return branch.solve(tau, low).lam - lam

    tau = brentq(gap, low.tau, high.tau, xtol=1e-14 * high.tau, rtol=1e-13)
    return branch.solve(tau, low).S


def _resolvent_far(M, p, delta, lam):
    """``S`` far below the bulk, by fixed-point iteration from ``I / lam``."""
    eye = np.eye(M.shape[1])
    S = eye / lam
    for _ in range(1000):
        A = np.linalg.solve(eye - M @ S / delta, M)
        new = np.linalg.inv(lam * eye - np.einsum("j,jab->ab", p, A))
        if np.abs(new - S).max() <= 1e-15 * np.abs(S).max():
            return new
        S = new
    return S


def weighted_lower_edge(weights, delta, *, sample_weight=None) -> float:
    """The lower edge of the bulk of ``(1/n) sum_j M_j (x) x_j x_j^T``.

    The largest ``lam`` reached by the branch of :func:`weighted_resolvent`:
    ``lam(tau)`` along ``tau = -tr(S) / m`` increases from ``-inf`` and
    folds at the edge.

    Parameters
    ----------
    weights : array-like of shape (n,) or (n, m, m)
        Samples of the symmetric weight ``M``.
    delta : float
        The sample ratio ``n / p``, positive.
    sample_weight : array-like of shape (n,), default=None
        Probabilities of the samples; None: equal.

    Returns
    -------
    edge : float

    See Also
    --------
    weighted_resolvent, aligned_outlier

    Notes
    -----
    For ``m = 1`` the branch is ``lam(s) = 1/s + E[T / (1 - s T / delta)]``,
    ``s < 0``, and the edge is its maximum, ``-min_{mu} psi_{-T}(mu)`` in
    Lu and Li's notation (:func:`scalar_aligned_outlier`). For constant
    ``M = c > 0`` it is Marchenko--Pastur's ``c (1 - delta^-1/2)^2``
    (``delta > 1``; for ``delta <= 1`` the branch has no fold and the edge is
    its limit 0, the atom of the ``p - n`` null directions); for ``c < 0``,
    ``c (1 + delta^-1/2)^2``. The edge is the *first* fold: ``tau`` grows
    by up to 30% a step, with the slope ``d lam / d tau`` of each point from
    the Newton Jacobian; a step is shortened where the secant falls below
    both end slopes (a fold and a gap of the spectrum may hide inside it),
    and the fold is the root of the slope, by ``brentq``, once a step lands
    past it. With samples (atoms) the branch
    folds before the first pole ``det(I - S M_j / delta) = 0``, where
    ``lam -> -inf``: the edge then tracks the most extreme samples, as the
    eigenvalues of sample-localised eigenvectors do.

    References
    ----------
    .. [1] Lu, Li (2020), "Phase transitions of spectral initialization for
       high-dimensional non-convex estimation", Information and Inference.

    Examples
    --------
    >>> from sklearn_pt.theory import weighted_lower_edge
    >>> round(weighted_lower_edge([1.0], 4.0), 6)  # (1 - 1/2)^2
    0.25
    >>> round(weighted_lower_edge([-1.0], 4.0), 6)  # -(1 + 1/2)^2
    -2.25
    """
    M = _check_weights(weights)
    delta = _check_scalar_delta(delta)
    p = _check_probabilities(sample_weight, len(M))
    return _branch(M, p, delta).edge.lam


def aligned_outlier(weights, signal, delta, *, sample_weight=None) -> float | None:
    """The outlier below the bulk along ``theta* (x) v``, or None.

    For ``H = (1/n) sum_j M_j (x) x_j x_j^T`` with ``x_j = G_j theta* +
    xi_j``: the smallest ``lam`` below :func:`weighted_lower_edge` at which
    ``det(I - S(lam) E[(G^2 - 1) M (I - S(lam) M / delta)^-1]) = 0``.

    Parameters
    ----------
    weights : array-like of shape (n,) or (n, m, m)
        Samples of the symmetric weight ``M``.
    signal : array-like of shape (n,)
        The matching samples of ``G = <theta*, x>``.
    delta : float
        The sample ratio ``n / p``, positive.
    sample_weight : array-like of shape (n,), default=None
        Probabilities of the samples; None: equal.

    Returns
    -------
    eigenvalue : float or None
        The limit of the outlier eigenvalue; None when there is none.

    See Also
    --------
    scalar_aligned_outlier : The ``m = 1`` case in closed form.
    hessian_threshold : The ``delta`` at which it appears at the plateau.

    Notes
    -----
    Assumptions: ``M`` depends on ``x`` only through ``G^2`` and a part
    independent of ``(G, xi)`` (so the sign of ``G`` is independent of the
    rest and the cross terms ``j != k`` of the Schur complement vanish), and
    ``xi`` is Gaussian, independent of ``(G, M)``. The Schur complement of
    the ``theta* (x) R^m`` block gives ``det(lam I - E[G^2 M (I - S M /
    delta)^-1]) = 0``; with the fixed point ``lam I = S^-1 + E[M (I - S M /
    delta)^-1]`` that is the determinant above. The branch of
    :func:`weighted_resolvent` is scanned from ``lam = -inf`` for the first
    ``tau`` where the largest eigenvalue of ``S E[(G^2 - 1) A]`` (real: ``S``
    is definite) reaches 1, refined by ``brentq``; a pair of roots between
    two scanned points (30% apart in ``tau``) would be missed. For a
    *negative* outlier of a Hessian pass its ``M``; for the largest
    eigenvalue of a spectral method with preprocessing ``T``, pass ``-T``
    and negate.

    References
    ----------
    .. [1] Montanari, Wang (2026), "Phase Transitions for Feature Learning in
       Neural Networks".
    .. [2] Lu, Li (2020), "Phase transitions of spectral initialization for
       high-dimensional non-convex estimation", Information and Inference.
    .. [3] Mondelli, Montanari (2019), "Fundamental limits of weak recovery
       with applications to phase retrieval", Foundations of Computational
       Mathematics.

    Examples
    --------
    ``T = -1`` where ``G^2 = 4`` (probability 0.2), else 0: the outlier
    appears above ``delta = 1 / (0.2 * 3^2) = 0.556``.

    >>> import numpy as np
    >>> from sklearn_pt.theory import aligned_outlier
    >>> G = np.array([2.0, 0.5, 0.5, 0.5, 0.5])
    >>> T = np.where(G == 2.0, -1.0, 0.0)
    >>> print(aligned_outlier(T, G, 0.5))
    None
    >>> round(aligned_outlier(T, G, 1.0), 4)  # -(1 + 0.6)(1 + 1/3)
    -2.1333
    """
    M = _check_weights(weights)
    signal = _check_samples(signal, len(M), "signal", "G = <theta*, x>")
    delta = _check_scalar_delta(delta)
    p = _check_probabilities(sample_weight, len(M))
    return _outlier(_branch(M, p, delta), signal**2, p)


def _outlier(branch, signal2, p):
    points = [*branch.points, branch.edge]
    previous = None
    for point in points:
        if _largest_ratio(branch, point, signal2, p) >= 1.0:
            if previous is None:
                return point.lam

            def gap(tau):
                point = branch.point_at(tau)
                return _largest_ratio(branch, point, signal2, p) - 1

            tau = brentq(gap, previous.tau, point.tau, xtol=1e-11 * point.tau)
            return branch.point_at(tau).lam
        previous = point
    return None


@dataclass(frozen=True)
class _SampleLaw:
    """The law of ``(s, z)`` given by samples, as the Lu--Li solver of
    :mod:`._phase_retrieval` reads a preprocessing: ``z`` attains its
    supremum (an atom), so ``edge`` is set."""

    values: NDArray[np.float64]
    signal2: NDArray[np.float64]
    probabilities: NDArray[np.float64]
    supremum: float
    edge: float


def _sample_law(weights, signal, sample_weight) -> _SampleLaw:
    """The law of ``z = -T`` (the lower side of ``T``'s matrix is the upper
    side of ``-T``'s, where Lu and Li's formulas live)."""
    values = -weights
    p = _check_probabilities(sample_weight, len(values))
    top = float(values[p > 0].max())
    return _SampleLaw(values, signal**2, p, top, top)


def _sample_moments(lam, law: _SampleLaw) -> NDArray[np.float64]:
    """The four expectations of ``_phase_retrieval._moments``, over samples."""
    ratio = law.values / (lam - law.values)
    terms = np.stack([ratio, law.signal2 * ratio, ratio**2, law.signal2 * ratio**2])
    return terms @ law.probabilities


def scalar_aligned_outlier(weights, signal, delta, *, sample_weight=None):
    """The ``m = 1`` case of :func:`aligned_outlier`, in Lu and Li's form.

    The outlier below the bulk of ``(1/n) sum_j T_j x_j x_j^T`` along
    ``theta*``, from ``psi(mu) = mu (1/delta + E[z / (mu - z)])`` for ``z =
    -T`` (the lower side of ``T`` is the upper side of ``-T``).

    Parameters
    ----------
    weights : array-like of shape (n,)
        Samples of the scalar weight ``T``.
    signal : array-like of shape (n,)
        The matching samples of ``G = <theta*, x>``.
    delta : float
        The sample ratio ``n / d``, positive.
    sample_weight : array-like of shape (n,), default=None
        Probabilities of the samples; None: equal.

    Returns
    -------
    eigenvalue : float or None
        ``-psi(mu*)``; None when there is no outlier.

    See Also
    --------
    aligned_outlier : Any width ``m``.
    scalar_outlier_threshold : The ``delta`` at which it appears.

    Notes
    -----
    With ``z = -T``, ``tau = max z``, ``mu_bar = argmin_{mu > tau} psi``
    (``psi'(mu) = 1/delta - E[z^2 / (mu - z)^2]``): the outlier exists iff
    ``delta E[z (G^2 - 1) / (mu_bar - z)] > 1`` (equivalently ``psi'(mu*) >
    0`` at the root ``mu*`` of ``delta E[z (G^2 - 1) / (mu - z)] = 1``), and
    the eigenvalue is ``-psi(mu*)``; the lower edge is ``-psi(mu_bar)``.
    Solved by the Lu--Li solver of :func:`spectral_overlap` with the
    expectations taken over the samples. Assumptions as
    :func:`aligned_outlier`.

    References
    ----------
    .. [1] Lu, Li (2020), "Phase transitions of spectral initialization for
       high-dimensional non-convex estimation", Information and Inference.
    .. [2] Mondelli, Montanari (2019), "Fundamental limits of weak recovery
       with applications to phase retrieval", Foundations of Computational
       Mathematics.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory import scalar_aligned_outlier
    >>> G = np.array([2.0, 0.5, 0.5, 0.5, 0.5])
    >>> T = np.where(G == 2.0, -1.0, 0.0)
    >>> round(scalar_aligned_outlier(T, G, 1.0), 4)
    -2.1333
    """
    values = np.asarray(weights, dtype=np.float64)
    n = values.shape[0] if values.ndim else 0
    values = _check_lower(values, n)
    signal = _check_samples(signal, n, "signal", "G = <theta*, x>")
    delta = _check_scalar_delta(delta)
    law = _sample_law(values, signal, sample_weight)
    if law.supremum <= 0:
        raise ValueError(
            "scalar_aligned_outlier needs min(weights) < 0: Lu and Li's formulas "
            "for the side of -T assume sup(-T) > 0. Use aligned_outlier for "
            "non-negative weights."
        )
    limit = _limit(delta, law, _sample_moments)
    return None if limit.lambda_star is None else -float(limit.eigenvalue)


def scalar_outlier_threshold(weights, signal, *, sample_weight=None) -> float:
    """The ``delta`` above which :func:`scalar_aligned_outlier` exists, for a
    law of ``(G, T)`` that does not change with ``delta``.

    Parameters
    ----------
    weights : array-like of shape (n,)
        Samples of the scalar weight ``T``.
    signal : array-like of shape (n,)
        The matching samples of ``G``.
    sample_weight : array-like of shape (n,), default=None
        Probabilities of the samples; None: equal.

    Returns
    -------
    delta : float
        ``inf`` when the margin never turns positive on ``[1e-3, 1e4]``.

    Notes
    -----
    Where ``mu_bar > tau`` the threshold solves ``E[z^2 / (mu - z)^2] =
    E[z (G^2 - 1) / (mu - z)] = 1 / delta`` (``z = -T``); where ``psi'(tau)
    >= 0`` it solves ``delta E[z (G^2 - 1) / (tau - z)] = 1``. Found as the
    first sign change of the margin ``delta E[z (G^2 - 1) / (mu_bar - z)] -
    1`` on the grid of :func:`spectral_threshold`, bisected.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.theory import scalar_outlier_threshold
    >>> G = np.array([2.0, 0.5, 0.5, 0.5, 0.5])
    >>> T = np.where(G == 2.0, -1.0, 0.0)
    >>> round(scalar_outlier_threshold(T, G), 6)  # 1 / (0.2 * 9)
    0.555556
    """
    values = np.asarray(weights, dtype=np.float64)
    n = values.shape[0] if values.ndim else 0
    values = _check_lower(values, n)
    signal = _check_samples(signal, n, "signal", "G = <theta*, x>")
    law = _sample_law(values, signal, sample_weight)
    return _first_positive_root(lambda delta: _edge(delta, law, _sample_moments)[2])


# --------------------------------------------------------------------------
# the law at the plateau of first-layer GD
# --------------------------------------------------------------------------
def plateau_law(pre_activations, residuals, second_layer, activation):
    """The Hessian weights ``M_j`` of a first-layer network at given
    pre-activations and residuals.

    Parameters
    ----------
    pre_activations : array-like of shape (n, m)
        ``z_j = W x_j``.
    residuals : array-like of shape (n,)
        ``r_j = f(x_j) - y_j``.
    second_layer : array-like of shape (m,)
        The fixed ``a``.
    activation : str
        A name of :data:`sklearn_pt.nn.ACTIVATIONS`.

    Returns
    -------
    weights : ndarray of shape (n, m, m)
        ``M_j = g_j g_j^T + r_j diag(a_i sigma''(z_ij) / m)``, ``g_j = (a_i
        sigma'(z_ij) / m)_i``: the Hessian of ``(1/2n) sum_j (f(x_j) -
        y_j)^2`` in ``W`` is ``(1/n) sum_j M_j (x) x_j x_j^T``.

    Examples
    --------
    >>> from sklearn_pt.theory import plateau_law
    >>> plateau_law([[1.0, -1.0]], [0.5], [1.0, 1.0], "quadratic").tolist()
    [[[1.5, -1.0], [-1.0, 1.5]]]
    """
    import torch

    from ..nn import ACTIVATIONS
    from ..nn._activations import activation_derivative, activation_second_derivative

    if activation not in ACTIVATIONS:
        raise ValueError(
            f"activation must be one of {sorted(ACTIVATIONS)} (sklearn_pt.nn."
            f"ACTIVATIONS, whose derivatives are known); got {activation!r}."
        )
    z = np.asarray(pre_activations, dtype=np.float64)
    if z.ndim != 2:
        raise ValueError(
            f"pre_activations must have shape (n, m); got shape {z.shape}."
        )
    n, m = z.shape
    r = _check_samples(residuals, n, "residuals", "residual f(x_j) - y_j")
    a = np.asarray(second_layer, dtype=np.float64)
    if a.shape != (m,):
        raise ValueError(
            f"second_layer must have shape (m,) = ({m},); got shape {a.shape}."
        )
    function = ACTIVATIONS[activation]
    zt = torch.as_tensor(z)
    first = activation_derivative(function)(zt).numpy()
    second = activation_second_derivative(function)(zt).numpy()
    g = a * first / m
    M = g[:, :, None] * g[:, None, :]
    M[:, np.arange(m), np.arange(m)] += r[:, None] * a * second / m
    return M


def _check_positive_int(value, name, example):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(
            f"{name} must be a positive integer, e.g. {example}; got {value!r}."
        )
    return int(value)


def plateau_weights(
    activation,
    width,
    delta,
    *,
    n_features=400,
    n_seeds=1,
    learning_rate=None,
    max_iter=None,
    random_state=0,
):
    """The law of ``(G, M)`` at the plateau of first-layer GD on phase
    retrieval, from runs at a finite ``d``.

    Each run draws ``n = round(delta * d)`` noiseless phase-retrieval samples
    (:func:`~sklearn_pt.datasets.make_phase_retrieval`), trains
    :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor` with
    ``theta*``'s component of ``W`` held at 0 up to the end of its first
    phase (the experiment's rule,
    :func:`~sklearn_pt.experiments._feature_learning.first_phase_weights`)
    and returns the training set's ``G = <theta*, x_j>`` and ``M_j``
    (:func:`plateau_law`) there; the runs are pooled.

    Parameters
    ----------
    activation : str
        A name of :data:`sklearn_pt.nn.ACTIVATIONS`, e.g. "quadratic".
    width : int
        The width ``m``.
    delta : float
        The sample ratio ``n / d``.
    n_features : int, default=400
        ``d`` of each run. Larger ``d`` gives a law closer to its limit.
    n_seeds : int, default=1
        Runs pooled (seeds ``random_state, random_state + 1, ...``), each
        drawing its data and initialisation.
    learning_rate : float, default=None
        GD step; None: ``0.0375 m`` for "quadratic", ``0.25 m`` otherwise
        (the experiment's steps).
    max_iter : int, default=None
        GD steps at most; None: ``1000 log(d) / log(100)``. The run stops
        at the end of the first phase.
    random_state : int, default=0
        The first seed.

    Returns
    -------
    signal : ndarray of shape (n_seeds * n,)
        ``G_j``.
    weights : ndarray of shape (n_seeds * n, m, m)
        ``M_j``.

    See Also
    --------
    hessian_threshold : The ``delta`` at which the aligned outlier of this
        law appears.

    Examples
    --------
    >>> from sklearn_pt.theory import plateau_weights
    >>> G, M = plateau_weights("quadratic", 2, 2.0, n_features=40, max_iter=50)
    >>> G.shape, M.shape
    ((80,), (80, 2, 2))
    """
    width = _check_positive_int(width, "width", 4)
    d = _check_positive_int(n_features, "n_features", 400)
    n_seeds = _check_positive_int(n_seeds, "n_seeds", 4)
    delta = _check_scalar_delta(delta)
    runs = [
        _plateau_run(activation, width, delta, d, seed, learning_rate, max_iter)
        for seed in range(int(random_state), int(random_state) + n_seeds)
    ]
    return (
        np.concatenate([run.signal for run in runs]),
        np.concatenate([run.weights for run in runs]),
    )


@dataclass
class _PlateauRun:
    """One run of :func:`plateau_weights`: its data, the fitted clone, the
    first-layer weights at the end of the first phase and the law there."""

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    theta: NDArray[np.float64]
    fitted: object
    weight: object
    step: float
    signal: NDArray[np.float64]
    weights: NDArray[np.float64]


def _plateau_run(activation, width, delta, d, seed, learning_rate, max_iter):
    import torch

    from ..datasets import make_phase_retrieval
    from ..experiments._feature_learning import first_phase_weights, step_budget
    from ..neural_network import FirstLayerGDRegressor

    if learning_rate is None:
        learning_rate = (0.0375 if activation == "quadratic" else 0.25) * width
    if max_iter is None:
        max_iter = step_budget(1000, d)
    n = max(round(delta * d), 1)
    X, y, theta = make_phase_retrieval(n, d, random_state=seed, return_directions=True)
    estimator = FirstLayerGDRegressor(
        width,
        activation=activation,
        learning_rate_init=learning_rate,
        max_iter=max_iter,
        random_state=seed,
    )
    step, weight, fitted = first_phase_weights(estimator, X, y, theta)
    W = weight.detach().cpu().numpy().astype(np.float64)
    a = fitted.second_layer_
    z = X @ W.T
    hidden = fitted.module_.activation(torch.as_tensor(z)).numpy()
    residuals = hidden @ a / width - y
    M = plateau_law(z, residuals, a, activation)
    return _PlateauRun(X, y, theta, fitted, weight, step, X @ np.ravel(theta), M)


def hessian_threshold(
    activation,
    width,
    *,
    deltas=(1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0),
    n_bisections=4,
    n_features=400,
    n_seeds=1,
    random_state=0,
    **plateau,
):
    """``delta_NN``: the sample ratio at which the Hessian at the plateau
    develops its negative outlier along ``theta*``.

    For each ``delta`` tried, the plateau is retrained
    (:func:`plateau_weights`) and :func:`aligned_outlier` is evaluated on its
    law; the threshold is the first ``delta`` of ``deltas`` with an
    outlier, bisected ``n_bisections`` times against the one before.

    Parameters
    ----------
    activation : str
        A name of :data:`sklearn_pt.nn.ACTIVATIONS`, e.g. "quadratic", "gelu".
    width : int
        The width ``m``.
    deltas : sequence of float, default=(1, 2, 3, 4, 6, 8, 12, 16)
        Increasing sample ratios scanned.
    n_bisections : int, default=4
        Bisection steps between the bracketing grid points.
    n_features, n_seeds, random_state
        As :func:`plateau_weights`, for every ``delta``.
    **plateau
        ``learning_rate``, ``max_iter`` of :func:`plateau_weights`.

    Returns
    -------
    delta_nn : float
        ``deltas[0]`` when the outlier is there already; ``inf`` when it
        never is on the grid.

    Notes
    -----
    The plateau law is drawn at a finite ``d`` and changes with ``delta``
    (its own training set), so the outlier's existence is a random function
    of ``delta``; bisection returns one crossing of it. With the squared
    loss the residual ``r ~ c - G^2`` is unbounded, so the lower edge of the
    empirical law tracks its most extreme samples and moves down as the
    pooled sample grows (see the User Guide for what that does to the
    threshold).

    References
    ----------
    Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural
    Networks".

    Examples
    --------
    >>> from sklearn_pt.theory import hessian_threshold
    >>> threshold = hessian_threshold("quadratic", 4, deltas=(2.0, 8.0),
    ...                               n_bisections=1, n_features=40, max_iter=60)
    >>> 0 < threshold <= 8
    True
    """
    grid = np.asarray(deltas, dtype=np.float64)
    if grid.ndim != 1 or grid.size < 1 or np.any(np.diff(grid) <= 0):
        raise ValueError(
            f"deltas must be an increasing sequence of sample ratios; got {deltas!r}."
        )
    for value in grid:
        _check_scalar_delta(float(value))
    n_bisections = int(n_bisections)
    if n_bisections < 0:
        raise ValueError(f"n_bisections must be >= 0; got {n_bisections}.")

    def has_outlier(delta):
        signal, weights = plateau_weights(
            activation,
            width,
            delta,
            n_features=n_features,
            n_seeds=n_seeds,
            random_state=random_state,
            **plateau,
        )
        return aligned_outlier(weights, signal, delta) is not None

    previous = None
    for delta in grid:
        if has_outlier(float(delta)):
            if previous is None:
                return float(delta)
            low, high = previous, float(delta)
            for _ in range(n_bisections):
                middle = 0.5 * (low + high)
                if has_outlier(middle):
                    high = middle
                else:
                    low = middle
            return high
        previous = float(delta)
    return math.inf
