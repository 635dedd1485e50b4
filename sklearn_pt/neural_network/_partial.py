"""PartiallyTrainableRegressor: from random features (P=0) to a fully
trainable network (P=1)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._base import (
    TorchEstimatorMixin,
    check_parameters,
    keep_state_on_error,
    validate_input,
)
from .._compat import Interval, StrOptions, _fit_context, validate_data
from .._torch_bridge import (
    TRAINING_PARAMETER_CONSTRAINTS,
    as_tensor,
    predict_numpy,
    solve_ridge,
)
from .._training import (
    FIRST_ORDER_SOLVERS,
    FitPlan,
    StackedFit,
    TrainingResult,
    default_callbacks,
    half_squared_error,
    penalty,
    warn_if_collapsed,
)
from ..kernels import ridge_leverage_scores
from ..kernels._leverage import ReLUFeatures, leverage_scores_at_degrees_of_freedom
from ..nn import (
    PartiallyTrainableMLP,
    StackedPartiallyTrainableMLP,
    append_ones,
    project_to_sphere,
    random_trainable_mask,
    spherical_biased_relu_init,
)

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


_LEVERAGE_MAX_SAMPLES = 10_000
LEVERAGE_DEGREES_OF_FREEDOM = 10.0
"""Effective degrees of freedom of the leverage scores for
``leverage_reg="auto"``: the scores are computed at the ridge parameter where
they sum to this number (:func:`~sklearn_pt.kernels.reg_for_degrees_of_freedom`),
few enough that they favour the features the whole data set uses. See
:ref:`defaults_leverage` for how it was chosen."""


def _leverage_first_layer(
    X, width, n_trainable, *, init_scale, pool_size, reg, generator, draws=None
) -> tuple[torch.Tensor, torch.Tensor]:
    """First-layer weights whose first ``n_trainable`` rows are drawn by ridge
    leverage score sampling from a pool of candidates, the rest those of the
    usual initialisation.

    The usual width-``width`` initialisation is drawn first, so the frozen
    neurons at any P are those of the random-features network (P = 0) of the
    same seed. The trainable rows are the first ``n_trainable`` candidates of
    :func:`_leverage_order`.
    """
    drawn = _leverage_order(
        X,
        width,
        n_trainable,
        generator=generator,
        init_scale=init_scale,
        pool_size=pool_size,
        reg=reg,
        draws=draws,
    )
    return leading_candidates(*drawn, n_trainable)


def leading_candidates(weight, bias, pool_w, pool_b, order, k: int):
    """The layer ``(weight, bias)`` (copied) with its first ``k`` rows
    replaced by the first ``k`` candidates of ``order`` in the pool: what
    :func:`_leverage_order`'s draws give at ``k`` trainable neurons."""
    weight, bias = weight.clone(), bias.clone()
    if k:
        chosen = order[:k]
        weight[:k], bias[:k] = pool_w[chosen], pool_b[chosen]
    return weight, bias


def _leverage_order(X, width, n_trainable, *, generator, draws=None, **settings):
    """:func:`_draw_leverage_order`, replayed from ``draws`` (a dict shared by
    the fits of one stacked sweep on one training set) when it holds the
    draws of this generator state and these settings (its ``init_scale``,
    ``pool_size`` and ``reg``); the generator is left as the draws leave it."""
    if draws is None or n_trainable == 0:
        return _draw_leverage_order(
            X, width, n_trainable, generator=generator, **settings
        )
    key = (generator.get_state().numpy().tobytes(), width, *sorted(settings.items()))
    if key not in draws:
        drawn = _draw_leverage_order(
            X, width, n_trainable, generator=generator, **settings
        )
        draws[key] = (drawn, generator.get_state())
    (weight, bias, pool_w, pool_b, order), state = draws[key]
    generator.set_state(state)
    return weight.clone(), bias.clone(), pool_w, pool_b, order


def _draw_leverage_order(
    X, width, n_trainable, *, init_scale, pool_size, reg, generator
):
    """The initialisation, the pool and the pool's leverage-sampling order.

    Returns ``(weight, bias, pool_w, pool_b, order)``: the usual
    width-``width`` initialisation, then (for ``n_trainable > 0``) a pool of
    ``pool_size`` spherical biased-ReLU candidates and an ordering of the
    pool whose first ``k`` entries are a sample of ``k`` candidates without
    replacement with probability proportional to their ridge leverage scores
    (Bach, 2017), for every ``k``. The scores are computed on (at most
    ``_LEVERAGE_MAX_SAMPLES`` random rows of) the training inputs, with
    ``reg="auto"`` at :data:`LEVERAGE_DEGREES_OF_FREEDOM` degrees of freedom.
    The order is an exponential race (sort ``E_i / l_i``, ``E_i`` standard
    exponential), which gives the successive weighted draws without
    replacement in one pass; so the neurons selected at a smaller ``P`` are
    among those selected at a larger ``P`` of the same seed. For
    ``n_trainable == 0`` the pool and order are None.
    """
    d, dtype = X.shape[1], X.dtype
    weight, bias = spherical_biased_relu_init(
        d, width, init_scale=init_scale, generator=generator, dtype=dtype
    )
    if n_trainable == 0:  # nothing to select (P = 0): the usual initialisation
        return weight, bias, None, None, None
    pool_w, pool_b = spherical_biased_relu_init(
        d, pool_size, init_scale=init_scale, generator=generator, dtype=dtype
    )
    if X.shape[0] > _LEVERAGE_MAX_SAMPLES:
        rows = torch.randperm(X.shape[0], generator=generator)[:_LEVERAGE_MAX_SAMPLES]
        X = X[rows.to(X.device)]
    features = ReLUFeatures(X, pool_w.to(X.device), pool_b.to(X.device))
    if reg == "auto":
        scores = _auto_leverage_scores(features)
    else:
        scores = ridge_leverage_scores(features.materialize(), reg)
    scores = scores.cpu().to(torch.float64)
    # Dead candidates (always off on these inputs) have score 0; a floor keeps
    # sampling without replacement possible when fewer than n_trainable live.
    weights = scores.clamp_min(1e-12 * max(float(scores.max()), 1e-300))
    race = torch.empty(pool_size, dtype=torch.float64).exponential_(generator=generator)
    order = torch.argsort(race / weights, stable=True)
    return weight, bias, pool_w, pool_b, order


def _auto_leverage_scores(features: ReLUFeatures) -> torch.Tensor:
    """Leverage scores at :data:`LEVERAGE_DEGREES_OF_FREEDOM` degrees of
    freedom (at most half the rank the candidates reach on these inputs)."""
    n_samples, n_candidates = features.shape
    degrees = min(LEVERAGE_DEGREES_OF_FREEDOM, 0.5 * min(n_samples, n_candidates))
    try:
        return leverage_scores_at_degrees_of_freedom(features, degrees)[0]
    except ValueError:  # rank-deficient (few inputs, many dead candidates)
        features = features.materialize()
        rank = int(torch.linalg.matrix_rank(features.to(torch.float64)))
        if rank < 2:  # a rank-one pool: any reg gives proportional scores
            return ridge_leverage_scores(features, 1.0)
        return leverage_scores_at_degrees_of_freedom(features, 0.5 * rank)[0]


def _standardise_training_target(
    y: np.ndarray,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """``(y - mean) / std`` per output column, and ``(offset, scale)``, one
    value per output, that give the raw targets back as
    ``standardised * scale + offset``.

    A column without spread (one sample, or a constant target) is left as it
    is: centring it would ask the network to output exactly zero, where any
    step away from its small initial output reads as a rising loss. (The
    two-step learner's ``standardise_targets`` does centre a constant ``y``:
    its gradient steps use the centred labels and carry no map back.)
    """
    if not np.issubdtype(y.dtype, np.floating):
        y = y.astype(np.float64)
    y_2d = y.reshape(len(y), -1)
    offset = y_2d.mean(axis=0)
    scale = y_2d.std(axis=0)
    spread = scale > 10 * np.finfo(y.dtype).eps * np.maximum(np.abs(offset), 1.0)
    offset = np.where(spread, offset, 0.0)
    scale = np.where(spread, scale, 1.0)
    standardised = ((y_2d - offset) / scale).reshape(y.shape).astype(y.dtype)
    return standardised, (offset, scale)


def _fold_target_map(module, offset, scale) -> None:
    """Make ``module`` predict raw targets: ``f <- f * scale + offset``, by
    scaling the readout (exact up to rounding)."""
    readout = module.readout
    with torch.no_grad():
        scale_t, offset_t = (
            torch.as_tensor(v, dtype=readout.bias.dtype, device=readout.bias.device)
            for v in (scale, offset)
        )
        readout.weight.mul_(scale_t[:, None])
        readout.bias.mul_(scale_t).add_(offset_t)


def _has_trainable_hidden(module) -> bool:
    return any(layer.trainable_index.numel() for layer in module.hidden_layers)


def _fit_ridge_readout(module, X, y, alpha) -> TrainingResult:
    """Closed-form readout of a random-features module (no hidden training)."""
    with torch.no_grad():
        features = module.features(X)
        coef, intercept = solve_ridge(features, y, alpha)
        module.readout.weight.copy_(coef)
        module.readout.bias.copy_(intercept)
        objective = half_squared_error(module.readout(features), y) + penalty(
            [coef], alpha / len(X)
        )
    return TrainingResult(loss_curve=[float(objective)], n_iter=1, converged=True)


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
        Width of each hidden layer; one layer is the paper's model. Deeper
        layers (beyond the first) use He initialisation. Wider layers
        approximate better and cost proportionally more per epoch.
    trainable_proportion : float or tuple of float, default=1.0
        ``P`` in [0, 1], for all hidden layers or one value per layer: the
        share of each layer's neurons whose incoming weights train. The
        default trains every neuron; lower it to move towards random
        features (``P = 0``), or sweep it with
        :func:`~sklearn_pt.model_selection.proportion_curve`.
    init_scale : float, default=1.0
        ``tau``, the range of the first layer's thresholds. The paper's regime
        is ``tau >= 1``; ``tau = 1`` is the well-matched case, larger values
        waste neurons that are always on or off for inputs on the sphere.
    trainable_selection : {"random", "leverage"}, default="random"
        How the trainable neurons of the first hidden layer are chosen.
        ``"random"``: uniformly among the ``width`` initial neurons.
        ``"leverage"``: ridge leverage score sampling (Bach, 2017), the
        selection the approximation bound is about: draw
        ``leverage_pool_size`` candidate features, compute their ridge
        leverage scores ``l_i = [Phi^T Phi (Phi^T Phi + n reg I)^-1]_ii`` on
        the training inputs (at most 10,000 random rows), sample the
        ``round(P * width)`` trainable neurons without replacement with
        probability proportional to the scores; the frozen neurons are those
        of the random-features network (P = 0) of the same seed. Trainable
        neurons are the first rows of the layer. Deeper layers always select
        at random.
    leverage_pool_size : int or None, default=None
        Number of candidates for ``"leverage"``; None means ten times the
        width of the first hidden layer (whatever P, so that the pool
        represents the leverage density even when few neurons are chosen).
    leverage_reg : float or "auto", default="auto"
        Ridge parameter ``reg`` of the leverage scores (only with
        ``trainable_selection="leverage"``). ``"auto"``: the ``reg`` at which
        the scores sum to 10 effective degrees of freedom
        (:func:`~sklearn_pt.kernels.reg_for_degrees_of_freedom`), a
        regularisation that does not depend on the scale of the features or
        the size of the pool; see :ref:`defaults_leverage` for how it was
        chosen. A float fixes ``reg``: a small one (e.g. ``1e-3`` with a
        pool of ten times the width) leaves hundreds of degrees of freedom,
        where the scores favour features that single out a few inputs.
    project_to_sphere : bool, default=False
        Project every input row onto the unit sphere before the network (the
        paper's setting, the same map as
        :class:`~sklearn.preprocessing.Normalizer`). Off by default: general
        data, after a :class:`~sklearn.preprocessing.StandardScaler`, keeps
        the signal its norms carry (see :ref:`defaults_partial`). Set it to
        True for the paper's design.
    solver : {"adam", "sgd", "gd", "lbfgs"}, default="adam"
        How the network is trained by gradient. ``"adam"`` and ``"sgd"``
        (Nesterov momentum 0.9) use mini-batches, ``"gd"`` is plain
        full-batch gradient descent and ``"lbfgs"`` full-batch L-BFGS. The
        default suits most uses; the full-batch ``"gd"`` and ``"lbfgs"``
        take one step per iteration on the whole data set (small data sets,
        or the papers' plain gradient descent). The closed-form fit of the
        random-features model is ``readout="ridge"`` with
        ``trainable_proportion=0``.
    readout : {"gradient", "ridge"}, default="gradient"
        How the output layer is fitted. ``"gradient"``: trained by ``solver``
        together with the hidden neurons. ``"ridge"``: after the hidden
        neurons are trained, the output layer is re-solved in closed form on
        the trained last-hidden-layer features (ridge regression with penalty
        ``alpha`` and an unpenalised intercept, as
        :class:`~sklearn.linear_model.Ridge`), which gives the best readout of
        the learned features for the training objective. When no hidden
        neuron is trainable (``trainable_proportion=0``) nothing is trained by
        gradient and the fit is exactly the random-features ridge solution.
        This is the readout the approximation theory is about.
    normalize_y : bool, default=True
        Train on the targets standardised per output (mean 0, variance 1 on
        the training set), and map the predictions back (the map is folded
        into the readout, so ``module_`` predicts raw targets), as
        :class:`~sklearn.gaussian_process.GaussianProcessRegressor`'s
        ``normalize_y``. The initial network outputs values of order one
        around zero and ``learning_rate_init`` is an absolute step, so this
        makes the fit independent of the target's mean and scale (see
        :ref:`defaults_partial`). Set it to False to train on the raw
        targets, as the papers' experiments do (their targets are of order
        one).
    alpha : float, default=7.0
        L2 penalty ``alpha / (2 n) * sum_W m_W ||W||^2`` on the weight
        matrices (trainable rows; biases are not penalised) beside the half
        mean squared error, each scaled by ``m_W``, the mean square of the
        inputs it multiplies at initialisation: ridge in
        :class:`~sklearn.linear_model.Ridge`'s units on inputs of unit mean
        square, so that the penalty does not depend on the inputs' scale (on
        the sphere it does not erase the trainable neurons,
        :ref:`defaults_penalty`). The default lets the loss criterion stop
        training on general data before it overfits (see
        :ref:`defaults_partial`). Raise it when the model overfits; the
        papers' reproductions, which study the training error, use
        ``1e-4``. The closed-form readout (``readout="ridge"``) is
        :class:`~sklearn.linear_model.Ridge` with ``alpha`` itself.
    batch_size : int or "auto", default="auto"
        Mini-batch size of ``"adam"`` and ``"sgd"`` (the full-batch ``"gd"``
        and ``"lbfgs"`` ignore it); ``"auto"`` is ``min(200, n_samples)``.
    learning_rate_init : float, default=1e-3
        Step size of ``"adam"``, ``"sgd"`` and ``"gd"``. Lower it when a fit
        raises :class:`~sklearn_pt.exceptions.DivergenceError` (whose message
        names a step size that fits).
    max_iter : int, default=1000
        Maximum number of epochs (full-batch steps for ``"gd"``, L-BFGS
        iterations for ``"lbfgs"``). Reaching it before the stopping
        criterion holds raises a
        :class:`~sklearn.exceptions.ConvergenceWarning`; raise it (or
        ``tol``) then.
    tol : float, default=1e-4
        ``"adam"``, ``"sgd"``, ``"gd"``: training stops when the loss has not
        improved by ``tol`` for ``n_iter_no_change`` consecutive iterations.
        ``"lbfgs"``: one L-BFGS run for the whole fit (curvature history and
        strong-Wolfe line search kept) stops when the largest gradient entry
        is at most ``tol`` (as ``gtol`` of
        :class:`~sklearn.neural_network.MLPRegressor`'s L-BFGS) or an
        iteration lowers the loss by a relative 2.2e-9 or less (scipy's
        L-BFGS-B default ``ftol``).
        With ``"adam"``, ``"sgd"`` or ``"gd"``, ``tol=0`` and
        ``n_iter_no_change=max_iter`` force the whole budget of ``max_iter``
        iterations; ``"lbfgs"`` may still stop early on the relative
        decrease.
    n_iter_no_change : int, default=10
        See ``tol``; ignored by ``"lbfgs"``.
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
        Floating-point precision of the network. float64 for reference
        computations that compare fits to many digits; it is slower.

    Attributes
    ----------
    module_ : PartiallyTrainableMLP
        The trained network, on ``device_``: the whole map from raw inputs to
        predictions (it projects onto the sphere itself when
        ``project_to_sphere``, and predicts targets on their own scale with
        ``normalize_y``), so ``module_(torch.as_tensor(X))`` is ``predict(X)``.
    trainable_masks_ : list of ndarray of bool
        One mask per hidden layer; true for the trainable neurons.
    coefs_ : list of ndarray
        As :class:`~sklearn.neural_network.MLPRegressor`'s: ``coefs_[i]`` of
        shape ``(fan_in, fan_out)`` maps layer ``i`` to layer ``i + 1``, the
        last one the readout (mapping to the raw targets, also with
        ``normalize_y=True``). The first layer acts on the inputs after the
        projection onto the sphere when ``project_to_sphere=True``. Read from
        ``module_`` (NumPy copies on the CPU).
    intercepts_ : list of ndarray
        The biases, ``intercepts_[i]`` of shape ``(fan_out,)``.
    loss_curve_ : list of float
        Training loss (half mean squared error plus penalty) per iteration,
        on the standardised targets when ``normalize_y=True``. With
        ``readout="ridge"`` it is the curve of the gradient training, before
        the readout is re-solved; when nothing is trained by gradient it
        holds the one objective of the closed-form fit.
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
    Training minimises ``0.5 * mean((f(x) - y)^2) + alpha / (2 n) sum_W m_W
    ||W||^2`` (``m_W`` the mean square of the inputs of weight matrix ``W``
    at initialisation, see ``alpha``) with the library's single training
    engine (``y`` standardised when
    ``normalize_y=True``; ``tol`` is then relative to a unit-variance
    target). Inputs are projected onto the sphere when
    ``project_to_sphere=True``, in ``fit`` and in ``predict``.

    The defaults are chosen for general data after a
    :class:`~sklearn.preprocessing.StandardScaler`; the paper's design
    (``project_to_sphere=True``, ``alpha=1e-4``, ``normalize_y=False``, a
    forced budget with ``tol=0`` and ``n_iter_no_change=max_iter``) is a few
    parameters away, and every reproduction passes it explicitly. See
    :ref:`defaults_partial` for how they were chosen. With
    ``readout="ridge"`` the closed-form readout is the same with and
    without ``normalize_y`` (ridge is linear in ``y``); only the gradient
    training of the hidden layers sees the standardised targets.

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Bach (2017), "On the equivalence between kernel quadrature rules and random
    feature expansions", JMLR 18.

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
        "trainable_selection": [StrOptions({"random", "leverage"})],
        "leverage_pool_size": [Interval(Integral, 1, None, closed="left"), None],
        "leverage_reg": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "project_to_sphere": ["boolean"],
        "normalize_y": ["boolean"],
        **TRAINING_PARAMETER_CONSTRAINTS,
        "readout": [StrOptions({"gradient", "ridge"})],
    }

    def __init__(
        self,
        hidden_layer_sizes=(256,),
        *,
        trainable_proportion=1.0,
        init_scale=1.0,
        trainable_selection="random",
        leverage_pool_size=None,
        leverage_reg="auto",
        project_to_sphere=False,
        solver="adam",
        readout="gradient",
        normalize_y=True,
        alpha=7.0,
        batch_size="auto",
        learning_rate_init=1e-3,
        max_iter=1000,
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
        self.leverage_pool_size = leverage_pool_size
        self.leverage_reg = leverage_reg
        self.project_to_sphere = project_to_sphere
        self.solver = solver
        self.readout = readout
        self.normalize_y = normalize_y
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

    _stacked_parameters: ClassVar[frozenset] = frozenset(
        {
            "trainable_proportion",
            "random_state",
            "init_scale",
            "trainable_selection",
            "leverage_pool_size",
        }
    )
    """The parameters in which fits stacked by
    :func:`~sklearn_pt.model_selection.fit_stacked` may differ: they choose
    the initial network (its weights and which neurons train), not how it
    trains."""

    @classmethod
    def _plan_stacked(cls, models, datasets) -> list[FitPlan]:
        """The plans of a stacked fit (:func:`~sklearn_pt.model_selection.fit_stacked`):
        the fits of one seed on one training set at several ``P`` share one
        leverage pool and scoring, drawn once (the draws do not depend on
        ``P``)."""
        draws_by_data: dict[int, dict] = {}
        return [
            model._plan_fit(X, y, leverage_draws=draws_by_data.setdefault(id(X), {}))
            for model, (X, y) in zip(models, datasets, strict=True)
        ]

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
        plan = self.plan_fit(X, y)
        return plan.complete(plan.run())

    def plan_fit(self, X, y) -> FitPlan:
        """Validate ``(X, y)`` and build what :meth:`fit` trains, untrained.

        The protocol of every torch-backed estimator (``fit`` is
        ``plan.complete(plan.run())``); the plan's ``stack`` trains many
        plans as one :class:`~sklearn_pt.nn.StackedPartiallyTrainableMLP`
        (:func:`~sklearn_pt.model_selection.fit_stacked`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        FitPlan
            The initial network, its training tensors (projected onto the
            sphere with ``project_to_sphere``), the solver's settings, the
            callbacks, and how the fitted attributes are set from the result.
        """
        return self._plan_fit(X, y)

    def _plan_fit(self, X, y, *, leverage_draws: dict | None = None) -> FitPlan:
        """:meth:`plan_fit`, replaying the leverage draws held in
        ``leverage_draws`` (see :meth:`_plan_stacked`)."""
        check_parameters(self)
        X, y, target_map = self._validate_training_data(X, y)
        sizes = _check_hidden_layer_sizes(self.hidden_layer_sizes)
        _check_trainable_proportion(self.trainable_proportion, len(sizes))
        device, dtype, generator = self._torch_context()
        y_2d = y.reshape(len(y), -1)
        # Training sees the projected inputs once (the module projects only
        # after fit, where module_ is the whole map from raw X).
        X_t = self._preprocess(as_tensor(X, device=device, dtype=dtype))
        y_t = as_tensor(y_2d, device=device, dtype=dtype)
        module = self._build_module(X_t, y_2d.shape[1], generator, leverage_draws)
        closed_form_only = self._readout_in_closed_form_only(module)

        def finish(plan, result):
            if not closed_form_only:
                result = self._finish_readout(plan.module, plan.X, plan.y, result)
            if closed_form_only or result.converged:  # else max_iter warned
                with torch.no_grad():
                    outputs = plan.module(plan.X)
                warn_if_collapsed(outputs, plan.y, fix=self._collapse_fix())
            self._set_fitted(plan.module, result, y, device, target_map)
            return self

        return FitPlan(
            module=module,
            finish=finish,
            stepper_params={
                "solver": self.solver,
                "learning_rate": self.learning_rate_init,
                "alpha": self.alpha,
                "batch_size": self.batch_size,
                "shuffle": self.shuffle,
            },
            closed_form=(
                (
                    lambda plan: _fit_ridge_readout(
                        plan.module, plan.X, plan.y, self.alpha
                    )
                )
                if closed_form_only
                else None
            ),
            max_iter=self.max_iter,
            callbacks=self._callbacks(),
            X=X_t,
            y=y_t,
            generator=generator,
            stack=_stack_plans if self.solver in FIRST_ORDER_SOLVERS else None,
        )

    def _stacked_fit_unsupported(self) -> str | None:
        """Why this estimator's fits cannot be stacked, or None."""
        if self.solver not in FIRST_ORDER_SOLVERS:
            return (
                f"solver={self.solver!r} is not elementwise (stacked solvers: "
                + ", ".join(repr(s) for s in FIRST_ORDER_SOLVERS)
                + ")"
            )
        return None

    def _callbacks(self) -> list:
        """What stops, checks and reports training (a fit plan's callbacks,
        also those of a stacked fit): divergence checks, the log with
        ``verbose``, early stopping on ``tol``/``n_iter_no_change`` and the
        warning at ``max_iter``."""
        return default_callbacks(
            tol=self.tol, n_iter_no_change=self.n_iter_no_change, verbose=self.verbose
        )

    def _collapse_fix(self) -> str:
        """What to change when a fit learned nothing (:class:`CollapseWarning`)."""
        alpha = f"alpha (now {self.alpha:g})"
        if self.solver in FIRST_ORDER_SOLVERS:
            return (
                f"Lower learning_rate_init (now {self.learning_rate_init:g}) or "
                f"{alpha}, or use another random_state or more hidden units."
            )
        return f"Lower {alpha}, or use more hidden units or another random_state."

    def _readout_in_closed_form_only(self, module) -> bool:
        """Whether the fit is the closed-form readout alone: ``readout="ridge"``
        with no trainable hidden neuron in ``module``."""
        return self.readout == "ridge" and not _has_trainable_hidden(module)

    def _finish_readout(self, module, X_t, y_t, result) -> TrainingResult:
        """After gradient training: with ``readout="ridge"``, re-solve the
        output layer in closed form on the trained features (the training
        curve is kept). A network whose hidden neurons were all frozen gets
        the closed-form fit's result, as if it had not been trained."""
        if self.readout != "ridge":
            return result
        ridge = _fit_ridge_readout(module, X_t, y_t, self.alpha)
        return result if _has_trainable_hidden(module) else ridge

    def _validate_training_data(self, X, y) -> tuple[np.ndarray, np.ndarray, tuple]:
        """``fit``'s validation of ``(X, y)`` (in :meth:`plan_fit`): float
        arrays, ``n_features_in_`` and feature names recorded; with
        ``normalize_y``, ``y`` standardised. Returns ``(X, y, target_map)``:
        ``target_map`` is the ``(offset, scale)`` that :meth:`_set_fitted`
        folds into the readout, or None."""
        X, y = validate_input(
            validate_data,
            self,
            X,
            y,
            multi_output=True,
            y_numeric=True,
            dtype=[np.float64, np.float32],
        )
        if not self.normalize_y:
            return X, y, None
        return X, *_standardise_training_target(y)

    def _build_module(
        self, X_t, n_outputs, generator, leverage_draws=None
    ) -> PartiallyTrainableMLP:
        """The initial network for inputs ``X_t`` (already preprocessed, on the
        device): trainable neurons chosen as ``trainable_selection`` says, every
        draw from ``generator`` (or replayed from ``leverage_draws``)."""
        sizes = _check_hidden_layer_sizes(self.hidden_layer_sizes)
        proportions = _check_trainable_proportion(self.trainable_proportion, len(sizes))
        masks, first_layer = None, None
        if self.trainable_selection == "leverage":
            n_trainable = round(proportions[0] * sizes[0])
            first_layer = _leverage_first_layer(
                X_t,
                sizes[0],
                n_trainable,
                init_scale=self.init_scale,
                pool_size=self.leverage_pool_size or 10 * sizes[0],
                reg=self.leverage_reg,
                generator=generator,
                draws=leverage_draws,
            )
            masks = [torch.arange(sizes[0]) < n_trainable] + [
                random_trainable_mask(width, p, generator=generator)
                for width, p in zip(sizes[1:], proportions[1:], strict=True)
            ]
        return PartiallyTrainableMLP(
            X_t.shape[1],
            n_outputs,
            hidden_layer_sizes=sizes,
            trainable_proportion=proportions,
            init_scale=self.init_scale,
            trainable_masks=masks,
            first_layer_init=first_layer,
            random_state=generator,
            dtype=X_t.dtype,
            device=X_t.device,
        )

    def _set_fitted(self, module, result, y, device, target_map=None) -> None:
        """The fitted attributes, from the trained ``module`` (on ``device``),
        the engine's ``result`` and the validated targets ``y``; the
        ``(offset, scale)`` of standardised targets is folded into the
        readout here."""
        if target_map is not None:
            _fold_target_map(module, *target_map)
        module.project_inputs = self.project_to_sphere
        self.module_ = module
        self.trainable_masks_ = [
            layer.trainable_mask.numpy() for layer in module.hidden_layers
        ]
        self.loss_curve_ = result.loss_curve
        self.n_iter_ = result.n_iter
        self.n_outputs_ = 1 if y.ndim == 1 else y.shape[1]
        self.device_ = device
        self._y_is_1d = y.ndim == 1

    def _preprocess(self, X):
        return project_to_sphere(X) if self.project_to_sphere else X

    @property
    def coefs_(self) -> list[np.ndarray]:
        check_is_fitted(self)
        layers = self._layers()
        return [layer.weight.detach().cpu().numpy().T.copy() for layer in layers]

    @property
    def intercepts_(self) -> list[np.ndarray]:
        check_is_fitted(self)
        return [layer.bias.detach().cpu().numpy().copy() for layer in self._layers()]

    def _layers(self) -> list:
        return [*self.module_.hidden_layers, self.module_.readout]

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
        X = validate_input(
            validate_data, self, X, reset=False, dtype=[np.float64, np.float32]
        )
        prediction = predict_numpy(self.module_, X)
        prediction = prediction.astype(X.dtype, copy=False)
        return prediction.ravel() if self._y_is_1d else prediction

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


def _stack_plans(plans) -> StackedFit:
    """The stacking of :class:`PartiallyTrainableRegressor` fit plans: their
    networks as one stacked module, trained on the (one) training set by
    mini-batches drawn from each plan's generator, with the first plan's
    callbacks (they follow every model)."""
    template = plans[0]
    for plan in plans[1:]:
        if not (torch.equal(plan.X, template.X) and torch.equal(plan.y, template.y)):
            raise ValueError(
                "PartiallyTrainableRegressor fits are stacked on one training "
                "set; got different data. Stack the fits of each data set apart."
            )
        plan.X, plan.y = template.X, template.y  # one copy of the data
    module = StackedPartiallyTrainableMLP.from_modules([plan.module for plan in plans])
    params = template.stepper_params

    def hand_back(outcomes) -> None:
        module.copy_to_modules([plan.module for plan in plans])

    return StackedFit(
        module=module,
        stepper_args={
            "X": append_ones(template.X),  # the first layer's bias input
            "y": template.y,
            "generators": [plan.generator for plan in plans],
            **params,
        },
        max_iter=template.max_iter,
        callbacks=template.callbacks,
        hand_back=hand_back,
    )
