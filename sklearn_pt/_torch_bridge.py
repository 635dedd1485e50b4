"""What every sklearn_pt estimator needs between NumPy and torch.

One module holds what every estimator needs between its validated NumPy
arrays and its ``torch.nn.Module`` (the training itself is
:mod:`sklearn_pt._training`):

* :func:`resolve_device` and :func:`resolve_dtype` turn the ``device`` and
  ``dtype`` parameters into torch objects, failing early with the fix;
* :func:`make_generator` turns ``random_state`` into a local
  :class:`torch.Generator`, so that no global random state is read or written;
* :func:`as_tensor` is the single NumPy -> torch conversion;
* :func:`solve_ridge` is the closed-form ridge readout;
* :func:`predict_numpy` evaluates a module in chunks and returns NumPy on CPU.

Design notes
------------
The data live on the training device for the whole fit, and mini-batches are
drawn by slicing one random permutation of the row indices per epoch (no
``Dataset``/``DataLoader``, no per-sample Python work). Losses are summed on the
device and read back once per iteration, so a GPU is synchronised once per
epoch, not once per batch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from numbers import Integral, Real

import numpy as np
import torch

from ._chunks import chunk_slices
from ._compat import Interval, StrOptions
from ._training import SOLVERS
from .nn._random import make_generator

__all__ = [
    "TORCH_PARAMETER_CONSTRAINTS",
    "TRAINING_PARAMETER_CONSTRAINTS",
    "DeviceString",
    "as_tensor",
    "make_generator",
    "predict_numpy",
    "resolve_device",
    "resolve_dtype",
    "row_chunks",
    "solve_ridge",
]

DTYPES = {"float32": torch.float32, "float64": torch.float64}
_DEVICE_PATTERN = re.compile(r"(auto|cpu|cuda(:\d+)?)")
_PREDICT_CHUNK_ROWS = 65_536
_RIDGE_CHUNK_ELEMENTS = 2**22
"""Entries of the features :func:`solve_ridge` centres in float64 at a time
(32 MiB)."""


class DeviceString(StrOptions):
    """Parameter constraint: ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    A :class:`StrOptions` that also accepts ``"cuda:N"`` for any index ``N``.
    """

    def __init__(self):
        super().__init__({"auto", "cpu", "cuda"})

    def is_satisfied_by(self, val) -> bool:
        return isinstance(val, str) and _DEVICE_PATTERN.fullmatch(val) is not None

    def __str__(self) -> str:
        return "a str among {'auto', 'cpu', 'cuda', 'cuda:N'}"


TORCH_PARAMETER_CONSTRAINTS = {
    "device": [DeviceString()],
    "dtype": [StrOptions(set(DTYPES))],
}
"""The constraints of the ``device`` and ``dtype`` parameters, the one
definition every estimator merges into its own."""

TRAINING_PARAMETER_CONSTRAINTS = {
    "solver": [StrOptions(set(SOLVERS))],
    "alpha": [Interval(Real, 0, None, closed="left")],
    "batch_size": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "shuffle": ["boolean"],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
    **TORCH_PARAMETER_CONSTRAINTS,
}
"""Constraints of the engine's parameters, merged into each estimator's own."""


def resolve_device(device: str) -> torch.device:
    """Turn a ``device`` parameter into a :class:`torch.device`.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda"} or "cuda:N"
        ``"auto"`` picks the current CUDA device when one is available, else the
        CPU.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If a CUDA device is asked for and this torch build or machine has none.

    Examples
    --------
    >>> from sklearn_pt._torch_bridge import resolve_device
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r} was requested but CUDA is not available "
                f"(torch {torch.__version__}, CUDA build: {torch.version.cuda}). "
                "Use device='cpu', or device='auto' to use a GPU only when one "
                "is present, or install a CUDA build of torch."
            )
        count = torch.cuda.device_count()
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(
                f"device={device!r} was requested but only {count} CUDA "
                f"device(s) are visible (cuda:0 to cuda:{count - 1}). Pass one of "
                "those, or device='cuda' for the current device."
            )
    return resolved


def resolve_dtype(dtype: str) -> torch.dtype:
    """Turn a ``dtype`` parameter (``"float32"`` or ``"float64"``) into torch's."""
    return DTYPES[dtype]


def as_tensor(array, *, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """Convert a validated NumPy array to a tensor on ``device``.

    Shares memory with ``array`` when the dtype matches, the array is writable
    and the device is the CPU; copies otherwise (read-only arrays, such as
    memory maps, are copied because torch cannot wrap them safely).
    """
    if isinstance(array, torch.Tensor):
        return array.to(device=device, dtype=dtype)
    array = np.asarray(array)
    if not array.flags.writeable:
        array = np.array(array, dtype=array.dtype)
    return torch.as_tensor(array).to(device=device, dtype=dtype)


def row_chunks(features, max_elements: int | None = None):
    """``(rows, features[rows])`` over consecutive row slices of about
    ``max_elements`` entries each (default ``_RIDGE_CHUNK_ELEMENTS``, 32 MiB
    in float64): of a tensor, or of a feature matrix
    computed on demand (an object with ``shape`` and ``rows(slice)``, such
    as :class:`~sklearn_pt.kernels._leverage.ReLUFeatures`)."""
    n_samples, n_features = features.shape
    max_elements = _RIDGE_CHUNK_ELEMENTS if max_elements is None else max_elements
    take = features.__getitem__ if isinstance(features, torch.Tensor) else features.rows
    for rows in chunk_slices(n_samples, n_features, max_elements):
        yield rows, take(rows)


def solve_ridge(
    features, targets: torch.Tensor, alpha: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Closed-form ridge regression with an unpenalised intercept.

    Minimises ``||features @ coef.T + intercept - targets||^2 + alpha ||coef||^2``
    (the objective of :class:`sklearn.linear_model.Ridge`, and ``2 n`` times the
    training objective of the library's estimators restricted to a linear
    readout). Solved in float64 on the features' device: a Cholesky solve of
    the ``(p, p)`` normal equations for ``alpha > 0`` (built over row chunks,
    so its memory is that of the ``(p, p)`` matrix, not of a copy of the
    features), least squares (minimum norm) for ``alpha = 0``.

    Parameters
    ----------
    features : Tensor of shape (n_samples, n_features), or features on demand
        A tensor, or an object with ``shape``, ``dtype``, ``device`` and
        ``rows(slice)`` (see :func:`row_chunks`), whose rows are then
        computed a chunk at a time and never held whole (``alpha > 0``).
    targets : Tensor of shape (n_samples, n_outputs)
    alpha : float
        Ridge penalty, nonnegative.

    Returns
    -------
    coef : Tensor of shape (n_outputs, n_features)
    intercept : Tensor of shape (n_outputs,)
        In the dtype of ``features``.
    """
    Y = targets.to(torch.float64)
    n_samples, n_features = features.shape
    if isinstance(features, torch.Tensor):
        Phi_mean = features.mean(0, dtype=torch.float64)
    else:
        Phi_mean = sum(
            chunk.sum(0, dtype=torch.float64) for _, chunk in row_chunks(features)
        )
        Phi_mean = Phi_mean / n_samples
    Y_mean = Y.mean(0)
    Y_c = Y - Y_mean
    if alpha > 0:
        # The normal equations summed over row chunks: no centred (or
        # float64) copy of the features is held.
        zeros = functools.partial(
            torch.zeros, dtype=torch.float64, device=features.device
        )
        gram, moments = zeros((n_features, n_features)), zeros((n_features, Y.shape[1]))
        for rows, chunk in row_chunks(features):
            centred = chunk.to(torch.float64) - Phi_mean
            gram.addmm_(centred.T, centred)
            moments.addmm_(centred.T, Y_c[rows])
        gram.diagonal().add_(alpha)
        coef = torch.cholesky_solve(moments, torch.linalg.cholesky(gram))
    else:
        whole = (
            features if isinstance(features, torch.Tensor) else features.materialize()
        )
        Phi_c = whole.to(torch.float64) - Phi_mean
        driver = "gelsd" if Phi_c.is_cpu else None
        coef = torch.linalg.lstsq(Phi_c, Y_c, driver=driver).solution
    intercept = Y_mean - Phi_mean @ coef
    return coef.T.to(features.dtype), intercept.to(features.dtype)


def predict_numpy(
    module: torch.nn.Module,
    X: np.ndarray,
    *,
    transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    chunk_rows: int = _PREDICT_CHUNK_ROWS,
) -> np.ndarray:
    """Evaluate ``module`` on ``X`` chunk by chunk and return a NumPy array.

    The module runs where its parameters are and the result has their dtype.
    At most ``chunk_rows`` rows are on the device at once, so the hidden
    activations of a huge ``X`` are never materialised together.

    A module in a precision below float64 is evaluated with float64 copies of
    its floating-point parameters and buffers, and the output is rounded to
    the module's dtype once, at the end. A matrix product sums in an order
    the BLAS library picks from the number of rows (``gemv`` for one row, a
    different ``gemm`` blocking for 20 rows than for 10), so in float32 a
    row's prediction moves by a few units in the last place with the other
    rows of its batch, which fails scikit-learn's
    ``check_methods_subset_invariance`` (:ref:`defaults_implementation`). In
    float64 those differences are about 1e-16 and vanish in the final
    rounding, so a row's float32 prediction does not depend on its batch
    (unless its float64 value lies within about 1e-16 of a float32 rounding
    boundary). Training is unchanged; a forward pass costs more on a CPU.
    """
    reference = next(iter(_tensors(module)))
    device, dtype = reference.device, reference.dtype
    compute = torch.float64 if torch.finfo(dtype).bits < 64 else dtype
    state = {
        name: tensor.to(compute) if tensor.is_floating_point() else tensor
        for name, tensor in (*module.named_parameters(), *module.named_buffers())
    }
    outputs = []
    with torch.inference_mode():
        for start in range(0, X.shape[0], chunk_rows):
            chunk = as_tensor(
                X[start : start + chunk_rows], device=device, dtype=compute
            )
            if transform is not None:
                chunk = transform(chunk)
            output = torch.func.functional_call(module, state, (chunk,))
            outputs.append(output.to(dtype).cpu().numpy())
    return np.concatenate(outputs)


def _tensors(module: torch.nn.Module) -> Iterable[torch.Tensor]:
    yield from module.parameters()
    yield from module.buffers()
