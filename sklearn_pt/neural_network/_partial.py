"""PartiallyTrainableRegressor: from random features (P=0) to a fully
trainable network (P=1)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._base import TorchEstimatorMixin, keep_state_on_error
from .._compat import Interval, StrOptions, _fit_context, validate_data
from .._engine import (
    TRAINING_PARAMETER_CONSTRAINTS,
    as_tensor,
    make_generator,
    predict_numpy,
    resolve_device,
    resolve_dtype,
    train_module,
)
from ..nn import PartiallyTrainableMLP, project_to_sphere

__all__ = ["PartiallyTrainableRegressor"]


def _check_hidden_layer_sizes(hidden_layer_sizes) -> tuple[int, ...]:
    sizes = np.atleast_1d(np.asarray(hidden_layer_sizes))
    if sizes.ndim != 1 or sizes.size == 0 or not np.issubdtype(sizes.dtype, np.integer):
        raise ValueError(
            "hidden_layer_sizes must be a positive int or a non-empty sequence of "
            f"positive ints, e.g. (256,); got {hidden_layer_sizes!r}."
        )
    if (sizes < 1).any():
        raise ValueError(
            f"hidden_layer_sizes must be positive; got {hidden_layer_sizes!r}."
        )
    return tuple(int(s) for s in sizes)


def _check_trainable_proportion(trainable_proportion, n_layers: int) -> np.ndarray:
    proportions = np.atleast_1d(np.asarray(trainable_proportion, dtype=float))
    if proportions.ndim != 1 or proportions.size not in (1, n_layers):
        raise ValueError(
            "trainable_proportion must be a float in [0, 1] or one float per hidden "
            f"layer ({n_layers} here); got {trainable_proportion!r}."
        )
    if not np.all((proportions >= 0) & (proportions <= 1)):
        raise ValueError(
            "trainable_proportion must lie in [0, 1] (0: random features, 1: fully "
            f"trainable); got {trainable_proportion!r}."
        )
    return np.broadcast_to(proportions, (n_layers,)).copy()


class PartiallyTrainableRegressor(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
    """ReLU network in which a proportion ``P`` of the hidden neurons is trained.

    The first hidden layer is made of spherical biased-ReLU features
    ``relu(<w_j, x> - b_j)``, ``w_j ~ Uniform(S^{d-1})``,
    ``b_j ~ Uniform[-init_scale, init_scale]``. In every hidden layer
    ``round(P * width)`` neurons have trainable incoming weights and biases;
    the others stay at their random initial values. The linear readout is
    always trained. ``P = 0`` is a random-features regression, ``P = 1`` a fully
    trained network; in between, training error falls fast for small ``P``
    and then saturates (the paper's phase transition).

    Parameters
    ----------
    hidden_layer_sizes : int or tuple of int, default=(256,)
        Width of each hidden layer. Deeper layers (beyond the first) use He
        initialisation.
    trainable_proportion : float or tuple of float, default=1.0
        ``P`` in [0, 1], for all hidden layers or one value per layer.
    init_scale : float, default=1.0
        ``tau``, the range of the first layer's thresholds. The paper's regime
        is ``tau >= 1``; ``tau = 1`` is the well-matched case, larger values
        waste neurons that are always on or off for inputs on the sphere.
    trainable_selection : {"random"}, default="random"
        How the trainable neurons are chosen: uniformly at random.
        (``"leverage"``, ridge leverage score sampling, is not available yet.)
    project_to_sphere : bool, default=True
        Project every input row onto the unit sphere before the network (the
        paper's setting, the same map as
        :class:`~sklearn.preprocessing.Normalizer`). Set to False for general
        data, for example after a :class:`~sklearn.preprocessing.StandardScaler`.
    solver : {"adam", "sgd", "gd", "lbfgs"}, default="adam"
        ``"adam"`` and ``"sgd"`` (Nesterov momentum 0.9) use mini-batches,
        ``"gd"`` is plain full-batch gradient descent and ``"lbfgs"`` full-batch
        L-BFGS.
    alpha : float, default=1e-4
        L2 penalty ``alpha / (2 n) * ||W||^2`` on the weight matrices.
    batch_size : int or "auto", default="auto"
        Mini-batch size; ``"auto"`` is ``min(200, n_samples)``.
    learning_rate_init : float, default=1e-3
        Step size of ``"adam"``, ``"sgd"`` and ``"gd"``.
    max_iter : int, default=200
        Maximum number of epochs (steps for ``"gd"`` and ``"lbfgs"``).
    tol : float, default=1e-4
        Training stops when the loss has not improved by ``tol`` for
        ``n_iter_no_change`` consecutive iterations.
    n_iter_no_change : int, default=10
        See ``tol``.
    shuffle : bool, default=True
        Shuffle the samples every epoch.
    random_state : int, RandomState instance or None, default=None
        Controls initialisation, neuron selection and batch order, through a
        local ``torch.Generator``; no global random state is used. Pass an int
        for reproducible results.
    verbose : int, default=0
        Print the loss after each iteration when positive.
    device : {"cpu", "auto", "cuda"} or "cuda:N", default="cpu"
        Where to train. ``"auto"`` uses a GPU when one is available.
    dtype : {"float32", "float64"}, default="float32"
        Floating-point precision of the network.

    Attributes
    ----------
    module_ : PartiallyTrainableMLP
        The trained network, on ``device_``.
    trainable_masks_ : list of ndarray of bool
        One mask per hidden layer; true for the trainable neurons.
    loss_curve_ : list of float
        Training loss (half mean squared error plus penalty) per iteration.
    n_iter_ : int
        Number of iterations run.
    n_outputs_ : int
        Number of outputs.
    device_ : torch.device
        The device the network lives on.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column names.

    See Also
    --------
    sklearn.neural_network.MLPRegressor : Fully trainable MLP of scikit-learn.
    sklearn_pt.nn.PartiallyTrainableMLP : The underlying torch module.

    Notes
    -----
    Training minimises ``0.5 * mean((f(x) - y)^2) + alpha / (2 n) ||W||^2`` with
    the library's single training engine. Inputs are projected onto the sphere
    when ``project_to_sphere=True``, in ``fit`` and in ``predict``.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> X, y = make_regression(n_samples=200, n_features=5, random_state=0)
    >>> reg = PartiallyTrainableRegressor(hidden_layer_sizes=(64,),
    ...     trainable_proportion=0.25, max_iter=20, random_state=0)
    >>> reg.fit(X, y / y.std()).trainable_masks_[0].sum()
    np.int64(16)
    >>> reg.predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints: ClassVar[dict] = {
        "hidden_layer_sizes": [
            "array-like",
            Interval(Integral, 1, None, closed="left"),
        ],
        "trainable_proportion": ["array-like", Interval(Real, 0, 1, closed="both")],
        "init_scale": [Interval(Real, 0, None, closed="neither")],
        "trainable_selection": [StrOptions({"random"})],
        "project_to_sphere": ["boolean"],
        **TRAINING_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        hidden_layer_sizes=(256,),
        *,
        trainable_proportion=1.0,
        init_scale=1.0,
        trainable_selection="random",
        project_to_sphere=True,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate_init=1e-3,
        max_iter=200,
        tol=1e-4,
        n_iter_no_change=10,
        shuffle=True,
        random_state=None,
        verbose=0,
        device="cpu",
        dtype="float32",
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.trainable_proportion = trainable_proportion
        self.init_scale = init_scale
        self.trainable_selection = trainable_selection
        self.project_to_sphere = project_to_sphere
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose
        self.device = device
        self.dtype = dtype

    @keep_state_on_error
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the network to ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.

        Returns
        -------
        self : PartiallyTrainableRegressor
            The fitted estimator.
        """
        X, y = validate_data(
            self,
            X,
            y,
            multi_output=True,
            y_numeric=True,
            dtype=[np.float64, np.float32],
        )
        sizes = _check_hidden_layer_sizes(self.hidden_layer_sizes)
        proportions = _check_trainable_proportion(self.trainable_proportion, len(sizes))
        device = resolve_device(self.device)
        dtype = resolve_dtype(self.dtype)
        generator = make_generator(self.random_state)

        y_2d = y.reshape(len(y), -1)
        module = PartiallyTrainableMLP(
            X.shape[1],
            y_2d.shape[1],
            hidden_layer_sizes=sizes,
            trainable_proportion=proportions,
            init_scale=self.init_scale,
            random_state=generator,
            dtype=dtype,
        ).to(device)
        X_t = self._preprocess(as_tensor(X, device=device, dtype=dtype))
        y_t = as_tensor(y_2d, device=device, dtype=dtype)
        result = train_module(
            module,
            X_t,
            y_t,
            solver=self.solver,
            learning_rate_init=self.learning_rate_init,
            alpha=self.alpha,
            batch_size=self.batch_size,
            max_iter=self.max_iter,
            tol=self.tol,
            n_iter_no_change=self.n_iter_no_change,
            shuffle=self.shuffle,
            generator=generator,
            verbose=self.verbose,
        )
        self.module_ = module
        self.trainable_masks_ = [
            layer.trainable_mask.numpy() for layer in module.hidden_layers
        ]
        self.loss_curve_ = result.loss_curve
        self.n_iter_ = result.n_iter
        self.n_outputs_ = y_2d.shape[1]
        self.device_ = device
        self._y_is_1d = y.ndim == 1
        return self

    def _preprocess(self, X):
        return project_to_sphere(X) if self.project_to_sphere else X

    def predict(self, X):
        """Predict with the trained network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Same number of dimensions as the ``y`` given to ``fit``, and the
            floating dtype of ``X`` (the network computes in ``dtype``).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        prediction = predict_numpy(self.module_, X, transform=self._preprocess)
        prediction = prediction.astype(X.dtype, copy=False)
        return prediction.ravel() if self._y_is_1d else prediction

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
