"""FirstLayerGDRegressor: gradient descent on the first layer of a two-layer
network with a fixed second layer, monitored for feature learning."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from .._base import (
    TorchEstimatorMixin,
    check_parameters,
    keep_state_on_error,
    validate_input,
)
from .._compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
)
from .._torch_bridge import TORCH_PARAMETER_CONSTRAINTS, as_tensor, predict_numpy
from .._training import (
    Callback,
    DivergenceCheck,
    FitPlan,
    LossHistory,
    PrintLog,
    StackedFit,
    warn_if_collapsed,
)
from ..decomposition import SpectralEstimator
from ..feature_extraction._two_step_plan import check_width
from ..metrics import neuron_overlap
from ..metrics._overlap import best_neuron_cosine
from ..nn import (
    ACTIVATIONS,
    FirstLayerNetwork,
    StackedFirstLayerNetwork,
    half_squared_error,
)
from ..spectral import HessianMonitor

__all__ = ["ACTIVATIONS", "FirstLayerGDRegressor"]


def width_and_learning_rate(estimator) -> tuple[int, float]:
    """``m`` and the GD step size of a :class:`FirstLayerGDRegressor`."""
    width = check_width(estimator.hidden_layer_sizes, symbol="m", example=8)
    return width, float(estimator.learning_rate_init)


def _second_layer(second_layer, width: int) -> np.ndarray:
    if isinstance(second_layer, str):
        if second_layer == "ones":
            return np.ones(width)
        return np.where(np.arange(width) % 2 == 0, 1.0, -1.0)  # "signs"
    a = np.asarray(second_layer, dtype=np.float64)
    if a.shape != (width,):
        raise ValueError(
            f"second_layer must have shape (width,) = ({width},); got an array of "
            f"shape {a.shape}. Pass 'ones', 'signs' or one weight per neuron."
        )
    if not np.all(np.isfinite(a)):
        raise ValueError("second_layer must be finite.")
    return a


class FirstLayerGDRegressor(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
    """Two-layer network whose first layer is trained by full-batch GD.

    The model is ``f(x) = (1/m) sum_{j=1}^m a_j sigma(<w_j, x>)`` with a small
    width ``m`` and a *fixed* second layer ``a``; only ``W = (w_j)`` is
    trained, by plain full-batch gradient descent
    ``W <- W - learning_rate_init * grad L(W)`` on
    ``L(W) = 0.5 * mean_i (f(x_i) - y_i)^2``, for exactly ``max_iter``
    steps. This is the setting in which Montanari and Wang (2026) show that
    GD learns the latent direction of phase retrieval (``y = <theta*, x>^2``)
    only above a sample ratio ``delta_NN``: when, after a first phase of
    overfitting, the Hessian of the empirical risk develops a negative
    outlier eigenvalue whose eigenvector points towards ``theta*``.

    ``fit`` accepts a held-out set and the true directions, and records the
    train loss, test loss, overlap and (optionally) the smallest Hessian
    eigenvalues along the trajectory in ``history_``.

    Parameters
    ----------
    hidden_layer_sizes : int or tuple of one int, default=(8,)
        The width ``m``, the number of hidden neurons (one hidden layer; the
        name and format of :class:`~sklearn.neural_network.MLPRegressor`).
        The paper's networks are narrow; scale ``learning_rate_init`` with
        ``m`` when changing it (below).
    activation : {"gelu", "quadratic", "relu", "tanh", "softplus", "hermite2", \
"hermite3"} or callable, default="gelu"
        ``sigma`` (:data:`sklearn_pt.nn.ACTIVATIONS`; ``"quadratic"`` is
        ``z^2``, the paper's quadratic network); a callable maps a tensor to
        a tensor elementwise and must be picklable (a module-level function)
        for the estimator to be.
    second_layer : {"ones", "signs"} or array-like of shape (width,), \
default="ones"
        The fixed ``a``: all ones, alternating ``+1, -1, +1, ...``, or given.
    init : {"random", "spectral"}, estimator or array-like of shape \
(width, n_features), default="random"
        ``"random"``: rows ``w_j ~ N(0, I_d / d)``. ``"spectral"``: the
        random rows with their component in the span of the spectral
        estimate of :class:`~sklearn_pt.decomposition.SpectralEstimator`
        (default settings: one direction, optimal preprocessing) replaced by
        ``N(0, 1)`` coordinates in that span, so that every neuron starts
        with an ``O(1)`` overlap with the spectral estimate (and the neurons
        still differ). An unfitted estimator with ``fit(X, y)`` and a
        ``directions_`` attribute of shape ``(n_features, k)`` (such as a
        ``SpectralEstimator`` with other settings) is used in the same way,
        after cloning. An array gives ``W`` itself.
    learning_rate_init : float, default=0.5
        GD step size (fixed; the name of ``MLPRegressor``). Because of the
        ``1/m`` in ``f``, the gradient with respect to one neuron scales like
        ``1/m``, so stable steps grow with the width: for phase retrieval
        with unit-variance inputs, about ``0.04 * m`` for the quadratic
        activation (whose curvature grows with the weights; larger steps
        diverge at small ``delta``) and up to ``0.25 * m`` for GeLU.
    max_iter : int, default=1000
        Number of GD steps; all are run (no early stopping). Raise it when
        ``history_`` shows the test loss still falling at the end.
    hessian_every : int, default=None
        When set, record the ``hessian_k`` smallest eigenvalues of the
        training-risk Hessian (Lanczos on Hessian-vector products, see
        :func:`~sklearn_pt.spectral.hessian_spectrum`) at iteration 0 and
        every ``hessian_every`` iterations. Off by default: each record costs
        a Lanczos run.
    hessian_k : int, default=3
        Number of smallest Hessian eigenvalues recorded.
    random_state : int, RandomState instance or None, default=None
        Controls the initialisation through a local ``torch.Generator``; no
        global random state is used.
    verbose : int, default=0
        Print the training loss after each step when positive.
    device : {"cpu", "auto", "cuda"} or "cuda:N", default="cpu"
        Where to train.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the network. The default is float64, unlike the library's
        other estimators, because small Hessian eigenvalues (and the overlaps
        of tiny initial components) need it; the networks are small.

    Attributes
    ----------
    module_ : FirstLayerNetwork
        The trained network, on ``device_``.
    first_layer_weights_ : ndarray of shape (m, n_features)
        The trained first-layer weights ``W`` (rows ``w_j``).
    coefs_ : list of two ndarray
        As :class:`~sklearn.neural_network.MLPRegressor`'s: ``[W.T, a[:, None]
        / m]``, of shapes ``(n_features, m)`` and ``(m, 1)``; ``W`` itself is
        ``first_layer_weights_``.
    intercepts_ : list of two ndarray
        Zeros of shapes ``(m,)`` and ``(1,)``: the network has no biases.
    second_layer_ : ndarray of shape (width,)
        The fixed second layer ``a``.
    history_ : dict of ndarray
        Indexed by iteration ``t = 0, ..., n_iter_`` (``t = 0`` is the
        initialisation; every value is measured at the weights after ``t``
        steps):

        - ``"iteration"``: ``t``;
        - ``"train_loss"``: ``0.5 * mean (f - y)^2`` on the training set;
        - ``"test_loss"``: the same on ``eval_set`` (only with ``eval_set``);
        - ``"overlap"``: :func:`neuron_overlap` of ``W`` with
          ``true_directions`` (only with ``true_directions``);
        - ``"hessian_iteration"`` (shape (r,)), ``"hessian_eigenvalues"``
          (shape (r, hessian_k), ascending) and, with ``true_directions``,
          ``"hessian_overlap"`` (shape (r, hessian_k)): the overlap of each
          eigenvector with the latent directions (see
          :func:`~sklearn_pt.metrics.eigenvector_overlap`); only with
          ``hessian_every``.
    loss_curve_ : list of float
        ``history_["train_loss"][:-1]``, the loss before each step, as
        reported by the training engine.
    n_iter_ : int
        Number of GD steps run (``max_iter``).
    device_ : torch.device
        The device the network lives on.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    sklearn_pt.decomposition.SpectralEstimator : The spectral baseline.
    sklearn_pt.spectral.hessian_spectrum : Hessian spectrum of a fitted model.
    sklearn_pt.model_selection.sample_ratio_curve : Success rate against
        ``delta = n / d``.

    Notes
    -----
    With the quadratic activation and ``a = 1``, ``f(x) = x^T (W^T W / m) x``
    and the first GD steps follow the spectral method with identity
    preprocessing. Training uses the library's single engine
    (``solver="gd"``, no early stopping).

    At moderate ``d`` the negative Hessian eigenvalue along ``theta*`` is
    already there at initialisation above the threshold, before the test
    loss drops; below it the most negative eigenvalues belong to
    eigenvectors localised on the largest responses (what the tests' sizes
    show: :ref:`defaults_finite_size`). At finite ``d`` the overlap grows
    smoothly with ``delta``, and a success criterion such as "overlap >
    0.5" crosses at smaller ``delta`` than the asymptotic ``delta_NN`` (it
    moves up with ``d``).

    References
    ----------
    Montanari, Wang (2026), "Phase Transitions for Feature Learning in Neural
    Networks".

    Examples
    --------
    >>> from sklearn_pt.datasets import make_phase_retrieval
    >>> from sklearn_pt.neural_network import FirstLayerGDRegressor
    >>> X, y, theta = make_phase_retrieval(1500, 100, random_state=0,
    ...                                    return_directions=True)
    >>> reg = FirstLayerGDRegressor(hidden_layer_sizes=4, activation="quadratic",
    ...                             learning_rate_init=0.25, max_iter=300,
    ...                             random_state=0)
    >>> reg.fit(X[:1000], y[:1000], eval_set=(X[1000:], y[1000:]),
    ...         true_directions=theta)
    FirstLayerGDRegressor(...)
    >>> bool(reg.history_["overlap"][-1] > 0.9)
    True
    >>> bool(reg.history_["test_loss"][-1] < 0.1 * reg.history_["test_loss"][0])
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "hidden_layer_sizes": [
            "array-like",
            Interval(Integral, 1, None, closed="left"),
        ],
        "activation": [StrOptions(set(ACTIVATIONS)), callable],
        "second_layer": [StrOptions({"ones", "signs"}), "array-like"],
        "init": [StrOptions({"random", "spectral"}), HasMethods(["fit"]), "array-like"],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "hessian_every": [Interval(Integral, 1, None, closed="left"), None],
        "hessian_k": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        **TORCH_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        hidden_layer_sizes=(8,),
        *,
        activation="gelu",
        second_layer="ones",
        init="random",
        learning_rate_init=0.5,
        max_iter=1000,
        hessian_every=None,
        hessian_k=3,
        random_state=None,
        verbose=0,
        device="cpu",
        dtype="float64",
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.second_layer = second_layer
        self.init = init
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.hessian_every = hessian_every
        self.hessian_k = hessian_k
        self.random_state = random_state
        self.verbose = verbose
        self.device = device
        self.dtype = dtype

    _stacked_parameters: ClassVar[frozenset] = frozenset(
        {"random_state", "hidden_layer_sizes", "learning_rate_init"}
    )
    """The parameters in which fits stacked by
    :func:`~sklearn_pt.model_selection.fit_stacked` may differ (the widths
    stack padded to the widest, each with its own step size)."""
    _stacks_datasets: ClassVar[bool] = True
    """Stacked fits may each take their own training set (of one shape)."""

    def _stacked_fit_unsupported(self) -> str | None:
        """Why this estimator's fits cannot be stacked, or None."""
        if not isinstance(self.init, str):
            return "init is an estimator or an array, not 'random' or 'spectral'"
        if self.hessian_every is not None:
            return "hessian_every records Hessian spectra during the fit"
        if self.verbose:
            return "verbose prints every iteration of each fit"
        if not isinstance(self.activation, str):
            return "a callable activation"
        return None

    @keep_state_on_error
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, eval_set=None, true_directions=None):
        """Train the first layer by full-batch gradient descent.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs (the theory assumes ``x ~ N(0, I_d)``).
        y : array-like of shape (n_samples,)
            Targets.
        eval_set : tuple (X_test, y_test), default=None
            Held-out data whose loss is recorded at every iteration in
            ``history_["test_loss"]``.
        true_directions : array-like of shape (n_features,) or \
(n_features, k), default=None
            The latent directions ``Theta*``; their overlap with ``W`` is
            recorded at every iteration in ``history_["overlap"]`` (and that
            of the Hessian eigenvectors with ``hessian_every``).

        Returns
        -------
        self : FirstLayerGDRegressor
            The fitted estimator.
        """
        plan = self.plan_fit(X, y, eval_set=eval_set, true_directions=true_directions)
        return plan.complete(plan.run())

    def plan_fit(self, X, y, *, eval_set=None, true_directions=None) -> FitPlan:
        """Validate the data and build what :meth:`fit` trains, untrained.

        The protocol of every torch-backed estimator (``fit`` is
        ``plan.complete(plan.run())``).

        Parameters
        ----------
        X, y, eval_set, true_directions
            As for :meth:`fit`.

        Returns
        -------
        FitPlan
            The initial network, the full-batch GD stepper, the callbacks
            (recorders of ``history_`` among them) and how the fitted
            attributes are set from the result.
        """
        check_parameters(self)
        X, y = validate_input(
            validate_data, self, X, y, y_numeric=True, dtype=[np.float64, np.float32]
        )
        n_features = X.shape[1]
        width, learning_rate = width_and_learning_rate(self)
        device, dtype, generator = self._torch_context()
        activation = ACTIVATIONS.get(self.activation, self.activation)
        second_layer = _second_layer(self.second_layer, width)
        directions = self._check_directions(true_directions, n_features)
        test = self._check_eval_set(eval_set, device, dtype)

        weight = self._initial_weight(X, y, width, generator)
        module = FirstLayerNetwork(
            torch.as_tensor(weight, dtype=dtype),
            torch.as_tensor(second_layer, dtype=dtype),
            activation,
        ).to(device)
        X_t = as_tensor(X, device=device, dtype=dtype)
        y_t = as_tensor(y, device=device, dtype=dtype)

        def finish(plan, result):
            with torch.no_grad():
                outputs = plan.module(plan.X)
            warn_if_collapsed(outputs, plan.y, fix=self._collapse_fix(result))
            history = {}
            for callback in plan.callbacks:
                if hasattr(callback, "fitted_history"):
                    history.update(callback.fitted_history())
            return self._set_fitted(plan.module, second_layer, history, result, device)

        callbacks = self._callbacks(module, X_t, y_t, test, directions)
        stackable = self._stacked_fit_unsupported() is None
        return FitPlan(
            module=module,
            finish=finish,
            stepper_params={"solver": "gd", "learning_rate": learning_rate},
            max_iter=self.max_iter,
            callbacks=callbacks,
            X=X_t,
            y=y_t,
            generator=generator,
            stack=_stack_plans if stackable else None,
        )

    def _collapse_fix(self, result) -> str:
        """What to change when a fit learned nothing (:class:`CollapseWarning`):
        more steps while the loss still fell, else a smaller step."""
        curve = result.loss_curve
        if len(curve) > 1 and curve[-1] < curve[0]:
            return (
                f"The loss was still falling: raise max_iter (now {self.max_iter}) "
                "or learning_rate_init."
            )
        return (
            f"Lower learning_rate_init (now {self.learning_rate_init:g}), or use "
            "another random_state, more hidden units or a smooth activation such "
            "as 'gelu'."
        )

    def _callbacks(self, module, X_t, y_t, test, directions) -> list[Callback]:
        """What runs beside full-batch GD: the divergence checks (no early
        stopping: exactly ``max_iter`` steps), the log with ``verbose``, the
        test loss and overlap at every iteration (``eval_set``,
        ``true_directions``), the Hessian spectra (``hessian_every``) and
        the training-loss history, whose ``fitted_history()`` make
        ``history_``."""
        callbacks = [DivergenceCheck(), *([PrintLog()] if self.verbose else [])]
        if test is not None or directions is not None:
            callbacks.append(_TrajectoryRecorder(module, test, directions))
        if self.hessian_every is not None:
            if self.hessian_k >= module.weight.numel():
                raise ValueError(
                    f"hessian_k={self.hessian_k} must be smaller than the number of "
                    f"trained weights, width * n_features = {module.weight.numel()}."
                )
            callbacks.append(
                _HessianHistory(
                    module,
                    X_t,
                    y_t,
                    every=self.hessian_every,
                    k=self.hessian_k,
                    directions=directions,
                    random_state=0,
                )
            )
        return [*callbacks, LossHistory()]

    def _set_fitted(self, module, second_layer, history, result, device):
        """Store the fitted attributes (shared with the stacked sweep fit)."""
        self.module_ = module
        weight = module.weight.detach().cpu().numpy().copy()
        self.first_layer_weights_ = weight
        self.coefs_ = [weight.T.copy(), (second_layer / weight.shape[0])[:, None]]
        self.intercepts_ = [np.zeros(weight.shape[0]), np.zeros(1)]
        self.second_layer_ = second_layer
        self.history_ = history
        self.loss_curve_ = result.loss_curve
        self.n_iter_ = result.n_iter
        self.device_ = device
        return self

    def _check_directions(self, true_directions, n_features):
        if true_directions is None:
            return None
        directions = check_array(true_directions, ensure_2d=False, dtype=np.float64)
        if directions.shape[0] != n_features or directions.ndim > 2:
            raise ValueError(
                "true_directions must have shape (n_features,) or (n_features, k) "
                f"with n_features={n_features}; got shape {directions.shape}."
            )
        return directions.reshape(n_features, -1)

    def _check_eval_set(self, eval_set, device, dtype):
        if eval_set is None:
            return None
        if not isinstance(eval_set, tuple | list) or len(eval_set) != 2:
            raise ValueError(
                "eval_set must be a pair (X_test, y_test); got "
                f"{type(eval_set).__name__}."
            )
        X_test = validate_input(
            validate_data, self, eval_set[0], reset=False, dtype=np.float64
        )
        y_test = check_array(eval_set[1], ensure_2d=False, dtype=np.float64)
        if y_test.shape != (X_test.shape[0],):
            raise ValueError(
                f"eval_set's y_test must have shape ({X_test.shape[0]},); got "
                f"{y_test.shape}."
            )
        return (
            as_tensor(X_test, device=device, dtype=dtype),
            as_tensor(y_test, device=device, dtype=dtype),
        )

    def _initial_weight(self, X, y, width, generator) -> np.ndarray:
        n_features = X.shape[1]
        if not isinstance(self.init, str) and not hasattr(self.init, "fit"):
            weight = check_array(self.init, dtype=np.float64)
            if weight.shape != (width, n_features):
                raise ValueError(
                    "init must have shape (width, n_features) = "
                    f"({width}, {n_features}); got {weight.shape}."
                )
            return weight.copy()
        weight = torch.randn(
            width, n_features, generator=generator, dtype=torch.float64
        ).numpy() / np.sqrt(n_features)
        if self.init == "random":
            return weight
        spectral = SpectralEstimator() if self.init == "spectral" else clone(self.init)
        directions = np.asarray(spectral.fit(X, y).directions_, dtype=np.float64)
        directions = np.linalg.qr(directions.reshape(n_features, -1))[0]
        coordinates = torch.randn(
            width, directions.shape[1], generator=generator, dtype=torch.float64
        ).numpy()
        weight = weight - (weight @ directions) @ directions.T
        return weight + coordinates @ directions.T

    def predict(self, X):
        """Predict with the trained network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            In the floating dtype of ``X``.
        """
        check_is_fitted(self)
        X = validate_input(
            validate_data, self, X, reset=False, dtype=[np.float64, np.float32]
        )
        return predict_numpy(self.module_, X).astype(X.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A fixed second layer and the 1/m scaling restrict the model to
        # averages of one activation (with "ones", no linear functions at
        # all for even activations): it is a model of feature learning, not a
        # general-purpose regressor, and need not reach R^2 > 0.5 on
        # scikit-learn's generic regression data.
        tags.regressor_tags.poor_score = True
        return tags


class _TrajectoryRecorder(Callback):
    """The test loss (``eval_set``) and the overlap with the latent
    directions (``true_directions``) of the first-layer weights, before
    training and after each iteration.

    The weights are kept as training goes and evaluated a chunk of
    iterations at a time (one batched product with the test inputs, one
    vectorised overlap), not one small product per iteration; a chunk holds
    at most about 2**22 numbers of weights or test outputs.
    """

    def __init__(self, module, test, directions):
        self.module, self.test, self.directions = module, test, directions
        self.losses: list[torch.Tensor] = []
        self.overlap: list[np.ndarray] = []
        self._pending: list[torch.Tensor] = []
        width, n_features = module.weight.shape
        n_test = 0 if test is None else test[0].shape[0]
        self._chunk = max(1, 2**22 // (width * max(n_features, n_test)))

    def _flush(self) -> None:
        if not self._pending:
            return
        weights = torch.stack(self._pending)  # (chunk, width, d)
        self._pending = []
        if self.test is not None:
            X_test, y_test = self.test
            with torch.no_grad():
                outputs = self.module._outputs(torch.matmul(weights, X_test.mT))
                self.losses.append(half_squared_error(outputs, y_test, dim=-1))
        if self.directions is not None:
            weights = weights.cpu().numpy()
            self.overlap.append(_neuron_overlaps(weights, self.directions))

    def record(self, weight: torch.Tensor | None = None) -> None:
        """Keep the first layer now: the module's, or ``weight`` (a stacked
        fit's own slice, :class:`_StackedTrajectories`)."""
        weight = self.module.weight if weight is None else weight
        self._pending.append(weight.detach().clone())
        if len(self._pending) >= self._chunk:
            self._flush()

    def on_train_begin(self, loop) -> None:
        self.record()

    def on_iteration_end(self, loop, k, loss):
        self.record()

    def on_train_end(self, loop) -> None:
        self._flush()

    def fitted_history(self) -> dict:
        history = {}
        if self.test is not None:
            losses = torch.cat(self.losses).cpu().to(torch.float64).numpy()
            history["test_loss"] = losses
        if self.directions is not None:
            history["overlap"] = np.concatenate(self.overlap)
        return history


def _neuron_overlaps(weights: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """:func:`~sklearn_pt.metrics.neuron_overlap` of each of the stacked
    first layers ``weights`` (shape ``(T, width, d)``), vectorised for one
    direction."""
    W = np.asarray(weights, dtype=np.float64)
    if directions.shape[1] > 1:
        return np.array([neuron_overlap(w, directions) for w in W])
    return best_neuron_cosine(W, directions[:, 0])


class _HessianHistory(HessianMonitor):
    """The :class:`HessianMonitor` of ``hessian_every``, its record under
    ``history_``'s keys."""

    def fitted_history(self) -> dict:
        history = {
            "hessian_iteration": np.array(self.history["iteration"]),
            "hessian_eigenvalues": np.array(self.history["eigenvalues"]),
        }
        if "overlaps" in self.history:
            history["hessian_overlap"] = np.array(self.history["overlaps"])
        return history


class _StackedTrajectories(Callback):
    """Each stacked fit's :class:`_TrajectoryRecorder` (None: a fit without
    one), fed that fit's own rows of the stacked first layers after each of
    its iterations, as its recorder would see them in a fit alone."""

    def __init__(self, module, recorders):
        self.module, self.recorders = module, recorders

    def _record(self, k: int) -> None:
        recorder = self.recorders[k]
        if recorder is not None:
            width = recorder.module.weight.shape[0]
            recorder.record(self.module.weight[k, :width])

    def on_train_begin(self, loop) -> None:
        for k in range(len(self.recorders)):
            self._record(k)

    def on_iteration_end(self, loop, k, loss):
        self._record(k)

    def on_train_end(self, loop) -> None:
        for recorder in self.recorders:
            if recorder is not None:
                recorder.on_train_end(loop)


def _stack_plans(plans) -> StackedFit:
    """The stacking of :class:`FirstLayerGDRegressor` fit plans: their first
    layers as one ``(K, m, d)`` tensor (widths padded to the widest,
    :meth:`~sklearn_pt.nn.StackedFirstLayerNetwork.from_networks`), one
    full-batch GD step for all with each plan's step size, on each plan's
    data set or, when every plan has the same one, on that one shared (one
    product with the data per step for all); each plan's loss history
    handed back, its trajectory (``eval_set``, ``true_directions``) recorded
    as it trains."""
    if len({plan.X.shape for plan in plans}) != 1:
        raise ValueError("Cannot stack these fits: the data sets differ in shape.")
    module = StackedFirstLayerNetwork.from_networks([plan.module for plan in plans])
    history = LossHistory()
    recorders = [
        next((c for c in plan.callbacks if isinstance(c, _TrajectoryRecorder)), None)
        for plan in plans
    ]

    def hand_back(outcomes) -> None:
        for k, plan in enumerate(plans):
            width = plan.module.weight.shape[0]
            with torch.no_grad():
                plan.module.weight.copy_(module.weight[k, :width])
            plan.callbacks[-1].adopt(history, k)  # its LossHistory

    first = plans[0]
    shared = all(
        torch.equal(plan.X, first.X) and torch.equal(plan.y, first.y)
        for plan in plans[1:]
    )
    data = (
        {"X": first.X, "y": first.y}
        if shared
        else {
            "X": torch.stack([plan.X for plan in plans]),
            "y": torch.stack([plan.y for plan in plans]),
        }
    )
    rates = [plan.stepper_params["learning_rate"] for plan in plans]
    return StackedFit(
        module=module,
        stepper_args={
            **data,
            "generators": [None] * len(plans),  # full batch: no row order
            "per_model_data": not shared,
            **first.stepper_params,
            "learning_rate": rates[0] if len(set(rates)) == 1 else rates,
        },
        max_iter=first.max_iter,
        callbacks=[DivergenceCheck(), _StackedTrajectories(module, recorders), history],
        hand_back=hand_back,
    )
