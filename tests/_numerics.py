"""One tolerance for results that may take different BLAS kernels.

A matrix product sums its terms in an order that the BLAS library picks at
run time: MKL's AVX-512 and AVX2 code paths, ``gemv`` for a one-row chunk
against ``gemm`` for many rows, one thread against two, a stacked ``bmm``
against K separate ``mm``. The sums then differ in their last bits, so two
such computations agree to a few units in the last place of their dtype,
not bitwise; on another CPU a bitwise assertion fails where the math is
right (a one-row chunk's float64 prediction differed by 1.1e-16 on a Xeon
with AVX-512). Bitwise equality is asserted only where the same call runs
twice (determinism) or where no arithmetic happens (copies, masks, frozen
entries).
"""

import numpy as np
import torch

KERNEL_ULPS = 64
"""How many units in the last place (``eps`` of the dtype, relative to the
largest magnitude compared) two kernel paths may differ by, for one
evaluation: a dot product of length ``k`` accumulates at most about
``sqrt(k)`` rounding errors in a random order, and the widths here are at
most a few thousand."""


def kernel_tolerance(dtype, ulps: float = KERNEL_ULPS) -> float:
    """``ulps * eps(dtype)``: the relative tolerance of :func:`assert_same_math`."""
    if isinstance(dtype, torch.dtype):
        return ulps * torch.finfo(dtype).eps
    return ulps * np.finfo(np.dtype(dtype)).eps


def assert_same_math(actual, desired, *, ulps: float = KERNEL_ULPS, dtype=None):
    """Assert two results of the same math computed through possibly
    different BLAS kernels agree to ``ulps`` units in the last place.

    The tolerance is relative to the largest magnitude of ``desired`` (an
    absolute floor), so entries near zero, where a cancellation leaves only
    rounding, do not fail on a relative test.

    Parameters
    ----------
    actual, desired : array-like or torch.Tensor
        Same shape. Tensors are moved to NumPy on the CPU.
    ulps : float, default=KERNEL_ULPS
        Units in the last place allowed.
    dtype : numpy or torch dtype, optional
        The precision the results were computed in; by default ``desired``'s.
    """
    a, b = (
        x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
        for x in (actual, desired)
    )
    tolerance = kernel_tolerance(b.dtype if dtype is None else dtype, ulps)
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance * scale)
