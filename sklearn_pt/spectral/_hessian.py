"""Spectra of the empirical-risk Hessian by Hessian-vector products.

The Hessian of ``L(W) = 0.5 * mean_i (f(x_i; W) - y_i)^2`` with respect to the
trained weights is never formed: :func:`hessian_spectrum` hands SciPy's
Lanczos solver (:func:`scipy.sparse.linalg.eigsh`) a
:class:`~scipy.sparse.linalg.LinearOperator` whose product is one
Hessian-vector product (HVP), computed by double backward through a graph
built once, or derived by hand where the module offers it (a
:class:`~sklearn_pt.nn.FirstLayerNetwork` with a named activation). Memory
is that of one backward pass plus ``O(#params)`` per Lanczos vector; the
dense Hessian (``O(#params^2)``) is built only for ``method="dense"``, the
reference the tests compare against.

:class:`HessianMonitor` is an engine callback that records the smallest
eigenvalues (and, given the latent directions, the overlap of their
eigenvectors with them) every few iterations of a training run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import torch
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.utils import Bunch, check_array
from threadpoolctl import threadpool_limits

from .._compat import Interval, StrOptions, validate_params
from .._torch_bridge import as_tensor, make_generator
from .._training import Callback, half_squared_error
from ..metrics import eigenvector_overlap

__all__ = ["HessianMonitor", "hessian_spectrum"]

_DENSE_CHUNK = 256
"""Hessian rows computed per batched product for ``method="dense"``."""


def _resolve_module(estimator_or_module):
    """The module that maps raw inputs to the predictions."""
    if isinstance(estimator_or_module, torch.nn.Module):
        return estimator_or_module
    name = type(estimator_or_module).__name__
    not_predictor = getattr(estimator_or_module, "_module_is_not_the_predictor", None)
    if not_predictor is not None:
        raise TypeError(
            f"hessian_spectrum needs the network that makes the predictions, "
            f"and {name}.module_ is not it: {not_predictor}"
        )
    module = getattr(estimator_or_module, "module_", None)
    if not isinstance(module, torch.nn.Module):
        raise TypeError(
            "hessian_spectrum needs a torch.nn.Module or a fitted sklearn_pt "
            f"network estimator with a module_ attribute; got {name}. Fit the "
            "estimator first (kernels, features and spectral estimators have no "
            "network Hessian)."
        )
    return module


class _HessianOperator:
    """Products with the Hessian of ``loss(module(X), y)`` w.r.t. its trained
    parameters, flattened in ``module.parameters()`` order.

    The gradient graph is built once, when a product first needs it; each
    product is then one backward pass through it (``retain_graph=True``). A
    module that derives the products by hand (a
    :class:`~sklearn_pt.nn.FirstLayerNetwork` with a named activation, for
    the default loss) serves the products, single and batched (the dense
    Hessian's), without that graph.
    """

    def __init__(self, module, X, y, loss):
        self.parameters = [p for p in module.parameters() if p.requires_grad]
        if not self.parameters:
            raise ValueError(
                "The module has no trainable parameters (requires_grad=True): "
                "there is no Hessian to compute."
            )
        self.shapes = [p.shape for p in self.parameters]
        self.sizes = [p.numel() for p in self.parameters]
        self.size = sum(self.sizes)
        reference = self.parameters[0]
        self.device, self.dtype = reference.device, reference.dtype
        with torch.enable_grad():
            output = module(X)
            self._value = loss(output, y.reshape(output.shape))
        self.loss = float(self._value.detach())
        # By hand: autograd's double backward re-derives sigma' and sigma''
        # at every product (timings: docs/defaults.rst, "Spectra").
        hand = getattr(module, "squared_error_hessian_product", None)
        self._hand_product = None
        if hand is not None and loss is half_squared_error:
            if len(self.parameters) == 1 and self.parameters[0] is module.weight:
                self._hand_product = hand(X, y)

    @functools.cached_property
    def gradient(self) -> torch.Tensor:
        """The flattened gradient, with its graph (built on first use)."""
        with torch.enable_grad():
            gradients = torch.autograd.grad(
                self._value, self.parameters, create_graph=True
            )
        return torch.cat([g.reshape(-1) for g in gradients])

    def product(self, v: torch.Tensor, *, batched: bool = False) -> torch.Tensor:
        """``H @ v`` for one vector, or ``V @ H`` for a batch of rows."""
        if self._hand_product is not None:
            return self._hand_product(v)
        grads = torch.autograd.grad(
            self.gradient,
            self.parameters,
            grad_outputs=v,
            retain_graph=True,
            is_grads_batched=batched,
            allow_unused=True,
        )
        parts = []
        for g, p in zip(grads, self.parameters, strict=True):
            if g is None:
                shape = (v.shape[0], p.numel()) if batched else (p.numel(),)
                g = torch.zeros(shape, dtype=self.dtype, device=self.device)
            parts.append(g.reshape(v.shape[0], -1) if batched else g.reshape(-1))
        return torch.cat(parts, dim=-1)

    def linear_operator(self) -> LinearOperator:
        def matvec(vector):
            v = torch.as_tensor(np.ravel(vector), dtype=self.dtype, device=self.device)
            return self.product(v).detach().cpu().to(torch.float64).numpy()

        return LinearOperator((self.size, self.size), matvec=matvec, dtype=np.float64)

    def dense(self) -> np.ndarray:
        """The full ``(size, size)`` Hessian, by batched products with the
        identity's rows; symmetrised."""
        blocks = []
        for start in range(0, self.size, _DENSE_CHUNK):
            stop = min(start + _DENSE_CHUNK, self.size)
            eye = torch.zeros(stop - start, self.size, dtype=self.dtype)
            eye[torch.arange(stop - start), torch.arange(start, stop)] = 1.0
            rows = self.product(eye.to(self.device), batched=True)
            blocks.append(rows.detach().cpu().to(torch.float64).numpy())
        hessian = np.concatenate(blocks)
        return 0.5 * (hessian + hessian.T)


def _first_layer_blocks(module, n_features: int) -> list[tuple[int, int, int]]:
    """``(offset, n_rows, n_features)`` of every trained parameter whose last
    axis has length ``n_features`` (the first-layer weights)."""
    blocks, offset = [], 0
    for p in module.parameters():
        if not p.requires_grad:
            continue
        if p.ndim == 2 and p.shape[-1] == n_features:
            blocks.append((offset, p.shape[0], n_features))
        offset += p.numel()
    return blocks


def _lanczos(operator: _HessianOperator, k, which, tol, maxiter, generator):
    size = operator.size
    if k >= size:
        raise ValueError(
            f"k={k} eigenvalues were asked for by Lanczos but the Hessian is only "
            f"{size} x {size}; use k < {size} or method='dense'."
        )
    v0 = torch.randn(size, generator=generator, dtype=torch.float64).numpy()
    # ARPACK's own work is level-1/2 BLAS on vectors of length #params, too
    # small for threads (timings: docs/defaults.rst, "Spectra"). The products
    # themselves run in torch, with its own threads.
    with threadpool_limits(limits=1, user_api="blas"):
        return _eigsh(operator, k, which, tol, maxiter, v0)


def _eigsh(operator, k, which, tol, maxiter, v0):
    size = operator.size
    linear = operator.linear_operator()
    ncv = min(size, max(2 * k + 1, 40))
    solve = dict(k=k, v0=v0, ncv=ncv, tol=tol, maxiter=maxiter)
    if which != "smallest":
        mode = {"largest": "LA", "both": "BE"}[which]
        return eigsh(linear, which=mode, **solve)
    # ARPACK stops when every residual is below tol * |eigenvalue|. The smallest
    # eigenvalues of a Hessian often sit in a cluster near 0 (flat directions of
    # an overparametrised network), where that criterion asks for an absolute
    # accuracy far below the arithmetic's and Lanczos runs for thousands of
    # products. The run is therefore on sigma * I - H (the same Krylov spaces),
    # sigma ~ ||H||, which makes the accuracy tol * ||H||.
    (sigma,) = np.abs(eigsh(linear, k=1, which="LM", v0=v0, tol=1e-3)[0])
    sigma = max(float(sigma), np.finfo(np.float64).tiny)

    def shifted(vector):
        return sigma * np.ravel(vector) - linear.matvec(vector)

    flipped = LinearOperator((size, size), matvec=shifted, dtype=np.float64)
    values, vectors = eigsh(flipped, which="LA", **solve)
    return sigma - values, vectors


def _dense(operator: _HessianOperator, k, which):
    """The ``k`` eigenpairs of the dense Hessian that ``which`` names. One end
    is asked of LAPACK by index (``subset_by_index``: no full
    decomposition); both ends come from the full one."""
    hessian, size = operator.dense(), operator.size
    k = min(k, size)
    if which == "smallest":
        return scipy.linalg.eigh(hessian, subset_by_index=[0, k - 1])
    if which == "largest":
        return scipy.linalg.eigh(hessian, subset_by_index=[size - k, size - 1])
    eigenvalues, eigenvectors = scipy.linalg.eigh(hessian)
    # as eigsh's "BE": half from each end, the extra one from the top
    low = k // 2
    keep = np.unique(np.r_[np.arange(low), np.arange(size - (k - low), size)])
    return eigenvalues[keep], eigenvectors[:, keep]


@validate_params(
    {
        "estimator_or_module": [object],
        "X": ["array-like"],
        "y": ["array-like"],
        "k": [Interval(Integral, 1, None, closed="left")],
        "which": [StrOptions({"both", "smallest", "largest"})],
        "method": [StrOptions({"lanczos", "dense"})],
        "loss": [callable, None],
        "directions": ["array-like", None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "maxiter": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def hessian_spectrum(
    estimator_or_module,
    X,
    y,
    *,
    k: int = 10,
    which: str = "both",
    method: str = "lanczos",
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    directions=None,
    tol: float = 0.0,
    maxiter: int | None = None,
    random_state=0,
) -> Bunch:
    """Extreme eigenvalues and eigenvectors of the empirical-risk Hessian.

    The Hessian is taken with respect to the trained parameters (those with
    ``requires_grad=True``, flattened in ``module.parameters()`` order) of
    ``L = loss(f(X), y)``, by default ``0.5 * mean((f(X) - y)^2)``, the
    objective the library's estimators minimise (without their L2 penalty).

    Parameters
    ----------
    estimator_or_module : fitted estimator or torch.nn.Module
        A fitted sklearn_pt estimator (its ``module_``, the whole map from
        raw inputs to predictions, preprocessing such as the sphere
        projection of
        :class:`~sklearn_pt.neural_network.PartiallyTrainableRegressor`
        included), or a module computing the prediction from ``X`` directly.
    X : array-like of shape (n_samples, n_features)
        The data of the empirical risk (usually the training set).
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets, reshaped to the module's output.
    k : int, default=10
        Number of eigenpairs.
    which : {"both", "smallest", "largest"}, default="both"
        ``"smallest"``/``"largest"``: the ``k`` algebraically smallest/largest
        eigenvalues. ``"both"``: ``k`` eigenvalues from the two ends, half
        from each (the extra one from the top when ``k`` is odd), as
        :func:`~scipy.sparse.linalg.eigsh` with ``which="BE"``.
    method : {"lanczos", "dense"}, default="lanczos"
        ``"lanczos"``: implicitly restarted Lanczos (ARPACK, through
        :func:`~scipy.sparse.linalg.eigsh`) on Hessian-vector products
        computed by double backward (by hand for a first-layer network with
        a named activation and the default loss); memory ``O(#params)``
        beyond one backward pass. ``"dense"``: the full Hessian and
        :func:`scipy.linalg.eigh`, memory ``O(#params^2)``; only for small
        networks, as a reference.
    loss : callable, default=None
        ``loss(prediction, target)``, a scalar; None is half the mean squared
        error.
    directions : array-like of shape (n_features, k_directions), default=None
        Latent directions ``Theta``. When given, the result also holds the
        overlap of each eigenvector with them (see
        :func:`~sklearn_pt.metrics.eigenvector_overlap`), computed on the
        trained parameters of shape ``(n_rows, n_features)`` (the first-layer
        weights).
    tol : float, default=0.0
        Accuracy of the Lanczos eigenvalues (0: machine precision), relative
        to the spectral norm ``||H||`` for ``which="smallest"`` (the smallest
        eigenvalues are computed as the largest of ``||H|| I - H``, so that a
        cluster of near-zero eigenvalues does not stall Lanczos) and to each
        eigenvalue otherwise.
    maxiter : int, default=None
        Maximum number of Lanczos restarts (ARPACK's default when None).
    random_state : int, RandomState instance or None, default=0
        Seeds the Lanczos starting vector (drawn from a local generator).

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``eigenvalues`` (ndarray of shape (k,), ascending), ``eigenvectors``
        (ndarray of shape (n_params, k), unit columns), ``overlaps`` (ndarray
        of shape (k,), only with ``directions``), ``loss`` (the empirical
        risk, a float) and ``n_params``.

    See Also
    --------
    HessianMonitor : The same spectrum recorded along a training run.
    sklearn_pt.spectral.WeightSpectrum : Singular values of the weights.

    Notes
    -----
    Each Lanczos product costs one backward pass through the gradient graph,
    which is built once; for a :class:`~sklearn_pt.nn.FirstLayerNetwork`
    with a named activation and the default loss it is derived by hand
    (``sigma'`` and ``sigma''`` in closed form, computed once; two products
    with the data), faster than autograd's (:ref:`defaults_spectra`). In
    float32 the eigenvalues are accurate to about ``1e-6`` relative to the
    largest; use float64 modules to resolve small eigenvalues. The
    eigenvalues of a saddle's Hessian below zero (a *negative outlier*) are
    the directions along which gradient descent escapes (Montanari and
    Wang, 2026).

    References
    ----------
    Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural
    Networks".

    Lehoucq, Sorensen, Yang (1998), "ARPACK Users' Guide".

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.datasets import make_phase_retrieval
    >>> from sklearn_pt.neural_network import FirstLayerGDRegressor
    >>> from sklearn_pt.spectral import hessian_spectrum
    >>> X, y, theta = make_phase_retrieval(200, 10, random_state=0,
    ...                                    return_directions=True)
    >>> reg = FirstLayerGDRegressor(4, max_iter=5, random_state=0).fit(X, y)
    >>> lanczos = hessian_spectrum(reg, X, y, k=4, which="smallest")
    >>> dense = hessian_spectrum(reg, X, y, k=4, which="smallest",
    ...                          method="dense")
    >>> bool(abs(lanczos.eigenvalues - dense.eigenvalues).max() < 1e-8)
    True
    >>> lanczos.eigenvectors.shape
    (40, 4)
    """
    module = _resolve_module(estimator_or_module)
    X_t, y_t = _tensors(module, X, y)
    if directions is not None:
        directions = check_array(directions, ensure_2d=False, dtype=np.float64)
        directions = directions.reshape(X_t.shape[1], -1)
    return _spectrum(
        module,
        X_t,
        y_t,
        k=k,
        which=which,
        method=method,
        loss=loss,
        directions=directions,
        tol=tol,
        maxiter=maxiter,
        generator=make_generator(random_state),
    )


def _tensors(module, X, y):
    """``X`` and ``y`` as tensors on the module's device and dtype."""
    reference = next(iter(module.parameters()))
    device, dtype = reference.device, reference.dtype
    X_t = as_tensor(check_array(X, dtype=np.float64), device=device, dtype=dtype)
    y = check_array(y, ensure_2d=False, dtype=np.float64)
    y_t = as_tensor(y, device=device, dtype=dtype)
    if y_t.shape[0] != X_t.shape[0]:
        raise ValueError(
            f"X and y have different numbers of samples: {X_t.shape[0]} and "
            f"{y_t.shape[0]}."
        )
    return X_t, y_t


def _spectrum(
    module, X, y, *, k, which, method, loss, directions, tol, maxiter, generator
) -> Bunch:
    """:func:`hessian_spectrum` on tensors already on the module's device."""
    operator = _HessianOperator(module, X, y, loss or half_squared_error)
    if method == "dense":
        eigenvalues, eigenvectors = _dense(operator, k, which)
    else:
        eigenvalues, eigenvectors = _lanczos(
            operator, k, which, tol, maxiter, generator
        )
    order = np.argsort(eigenvalues)
    result = Bunch(
        eigenvalues=eigenvalues[order],
        eigenvectors=eigenvectors[:, order],
        loss=operator.loss,
        n_params=operator.size,
    )
    if directions is not None:
        blocks = _first_layer_blocks(module, X.shape[1])
        result.overlaps = eigenvector_overlap(result.eigenvectors, directions, blocks)
    return result


class HessianMonitor(Callback):
    """Training callback recording the Hessian's smallest eigenvalues.

    Before training (iteration 0) and every ``every`` iterations, the ``k``
    smallest eigenvalues of the Hessian of the empirical risk on ``(X, y)``
    are computed by Lanczos on Hessian-vector products
    (:func:`hessian_spectrum`) and appended to :attr:`history`, with the
    overlap of their eigenvectors with the latent directions when those are
    given. It is a callback of the training loop
    (:func:`sklearn_pt._training.fit_loop`), as
    :class:`~sklearn_pt.neural_network.FirstLayerGDRegressor` uses it with
    ``hessian_every``; outside that loop, call :meth:`record` before
    training and the monitor itself, ``monitor(iteration, loss)``, after
    each iteration.

    Parameters
    ----------
    module : torch.nn.Module
        The network being trained.
    X, y : torch.Tensor or array-like
        The training data, as the module sees them.
    every : int, default=10
        Record every ``every`` iterations.
    k : int, default=3
        Number of smallest eigenvalues.
    directions : array-like of shape (n_features, k_directions), default=None
        Latent directions for the eigenvector overlaps.
    loss : callable, default=None
        The training loss (half the mean squared error when None).
    tol : float, default=1e-4
        Accuracy of the eigenvalues, relative to the spectral norm of the
        Hessian (see :func:`hessian_spectrum`).
    random_state : int, RandomState instance or None, default=0
        Seeds the Lanczos starting vectors.

    Attributes
    ----------
    history : dict
        ``"iteration"`` (list of int), ``"eigenvalues"`` (list of ndarray of
        shape (k,)), and ``"overlaps"`` (list of ndarray of shape (k,)) when
        ``directions`` is given.

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.spectral import HessianMonitor
    >>> module = torch.nn.Linear(3, 1, dtype=torch.float64)
    >>> X = torch.randn(20, 3, generator=torch.Generator().manual_seed(0),
    ...                 dtype=torch.float64)
    >>> monitor = HessianMonitor(module, X, X[:, :1], every=1, k=2)
    >>> monitor(1, 0.0)
    False
    >>> monitor.history["iteration"], monitor.history["eigenvalues"][0].shape
    ([1], (2,))
    """

    def __init__(
        self,
        module: torch.nn.Module,
        X,
        y,
        *,
        every: int = 10,
        k: int = 3,
        directions=None,
        loss: Callable | None = None,
        tol: float = 1e-4,
        random_state=0,
    ):
        self.module = module
        self.every = every
        self.k = k
        self.loss = loss
        self.tol = tol
        if torch.is_tensor(X) and torch.is_tensor(y):
            self._X, self._y = X, y
        else:
            self._X, self._y = _tensors(module, X, y)
        self._directions = None
        if directions is not None:
            directions = check_array(directions, ensure_2d=False, dtype=np.float64)
            self._directions = directions.reshape(self._X.shape[1], -1)
        self._generator = make_generator(random_state)
        self.history = {"iteration": [], "eigenvalues": []}
        if directions is not None:
            self.history["overlaps"] = []

    def record(self, iteration: int) -> None:
        """Compute and store the spectrum now, as that of ``iteration``."""
        result = _spectrum(
            self.module,
            self._X,
            self._y,
            k=self.k,
            which="smallest",
            method="lanczos",
            loss=self.loss,
            directions=self._directions,
            tol=self.tol,
            maxiter=None,
            generator=self._generator,
        )
        self.history["iteration"].append(iteration)
        self.history["eigenvalues"].append(result.eigenvalues)
        if self._directions is not None:
            self.history["overlaps"].append(result.overlaps)

    def __call__(self, iteration: int, loss: float) -> bool:
        """Record when ``iteration`` is a multiple of ``every``; never stops."""
        if iteration % self.every == 0:
            self.record(iteration)
        return False

    def on_train_begin(self, loop) -> None:
        """Record iteration 0, unless :meth:`record` already has."""
        if not self.history["iteration"]:
            self.record(0)

    def on_iteration_end(self, loop, k: int, loss: float) -> None:
        self(loop.iteration, loss)
