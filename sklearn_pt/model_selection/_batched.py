"""Batched sweeps: all configurations of a proportion grid trained as one model.

:func:`fit_batched` fits ``K`` :class:`PartiallyTrainableRegressor` clones that
differ only in the parameters that choose the initial network
(:data:`BATCHED_PARAMETERS`: ``trainable_proportion``, ``random_state``,
``init_scale``, ``trainable_selection``, ``leverage_pool_size``) as one
:class:`~sklearn_pt.nn._batched.BatchedPartiallyTrainableMLP`, and returns them
fitted as if each had been fitted on its own. :func:`batched_validation_curves`
uses it for :func:`~sklearn_pt.model_selection.proportion_curve`
(``strategy="batched"``).

Equivalence with sequential fits
--------------------------------
:func:`train_batched` reproduces :func:`sklearn_pt._engine.train_module` model
by model: the same initial weights and trainable neurons (each network is built
by :class:`~sklearn_pt.nn.PartiallyTrainableMLP` from its own generator, as in
``fit``), the same mini-batch order (one permutation per epoch drawn from each
network's generator), the same optimiser (torch's SGD and Adam are elementwise,
so one optimiser on stacked tensors is ``K`` independent ones; the weight decay
``alpha / n`` is applied to the weight matrices only), the same loss curve, the
same ``tol``/``n_iter_no_change`` stopping rule per network and the same
divergence checks. A stopped network's weights are kept fixed, and so are
frozen rows (restored after each step, bitwise). What differs is the order of
floating-point operations inside the batched matrix products and in the
hand-derived backward pass
(:meth:`~sklearn_pt.nn._batched.BatchedPartiallyTrainableMLP.squared_error_gradients_`),
so results agree to rounding: about 1e-12 relative in float64.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import torch
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring, r2_score
from sklearn.model_selection import check_cv
from sklearn.utils import indexable

from .._base import validate_input
from .._compat import _safe_indexing, validate_data
from .._engine import (
    INITIAL_LOSS_ROWS,
    StoppingRule,
    TrainingResult,
    as_tensor,
    divergence_message,
    make_generator,
    make_optimizer,
    resolve_batch_size,
    resolve_device,
    resolve_dtype,
)
from .._progress import progress_bar, quiet_fit, warn_convergence
from ..exceptions import ConvergenceWarning, DivergenceError
from ..neural_network import PartiallyTrainableRegressor
from ..nn._batched import BatchedPartiallyTrainableMLP, append_ones

__all__ = [
    "BATCHED_PARAMETERS",
    "BATCHED_SOLVERS",
    "batched_unsupported_reason",
    "batched_validation_curves",
    "fit_batched",
    "train_batched",
]

BATCHED_SOLVERS = ("adam", "sgd", "gd")
"""Solvers whose update is elementwise, so that stacking models is exact."""
BATCHED_PARAMETERS = (
    "trainable_proportion",
    "random_state",
    "init_scale",
    "trainable_selection",
    "leverage_pool_size",
)
"""Parameters that may differ between the models of one batch: they choose the
initial network (its weights and which neurons train), not how it trains."""


def batched_unsupported_reason(estimator, param_name: str) -> str | None:
    """Why a sweep of ``param_name`` on ``estimator`` cannot be batched.

    Parameters
    ----------
    estimator : estimator
        The estimator :func:`~sklearn_pt.model_selection.proportion_curve` clones.
    param_name : str
        The swept parameter.

    Returns
    -------
    str or None
        None when the sweep can be batched, otherwise the reason.

    Examples
    --------
    >>> from sklearn_pt.model_selection._batched import batched_unsupported_reason
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> print(batched_unsupported_reason(PartiallyTrainableRegressor(),
    ...                                  "trainable_proportion"))
    None
    >>> batched_unsupported_reason(PartiallyTrainableRegressor(solver="lbfgs"),
    ...                            "trainable_proportion")
    "solver='lbfgs' is not elementwise (batched solvers: 'adam', 'sgd', 'gd')"
    """
    if type(estimator) is not PartiallyTrainableRegressor:
        name = type(estimator).__name__
        return (
            f"the estimator is a {name}, not a PartiallyTrainableRegressor "
            "(pipelines and subclasses are not batched)"
        )
    if param_name not in BATCHED_PARAMETERS:
        return (
            f"param_name={param_name!r} changes more than the initial network "
            f"(batched parameters: {_quoted(BATCHED_PARAMETERS)})"
        )
    if estimator.solver not in BATCHED_SOLVERS:
        return (
            f"solver={estimator.solver!r} is not elementwise (batched solvers: "
            f"{_quoted(BATCHED_SOLVERS)})"
        )
    return None


def _quoted(names) -> str:
    return ", ".join(repr(name) for name in names)


def train_batched(
    module: BatchedPartiallyTrainableMLP,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    generators: Sequence[torch.Generator],
    initial_losses: Sequence[float],
    solver: str = "adam",
    learning_rate_init: float = 1e-3,
    alpha: float = 0.0,
    batch_size: int | str = "auto",
    max_iter: int = 200,
    tol: float = 1e-4,
    n_iter_no_change: int = 10,
    shuffle: bool = True,
) -> list[TrainingResult | DivergenceError]:
    """Train the ``K`` networks of ``module`` on ``(X, y)``, each as
    :func:`~sklearn_pt._engine.train_module` would train it alone.

    Parameters
    ----------
    module : BatchedPartiallyTrainableMLP
        Trained in place.
    X : Tensor of shape (n_samples, n_features)
    y : Tensor of shape (n_samples, n_outputs)
        Training data shared by all networks, on the module's device and dtype.
    generators : sequence of K torch.Generator
        Network ``k``'s CPU generator for its mini-batch order (in the state
        ``train_module`` would receive it).
    initial_losses : sequence of K float
        Network ``k``'s loss at initialisation
        (:func:`~sklearn_pt._engine.initial_loss`), the reference of the
        divergence checks.
    solver : {"adam", "sgd", "gd"}, default="adam"
    learning_rate_init, alpha, batch_size, max_iter, tol, n_iter_no_change, shuffle
        As in :func:`~sklearn_pt._engine.train_module`.

    Returns
    -------
    list of TrainingResult or DivergenceError
        Per network, its loss curve and iteration count, or the error
        ``train_module`` would have raised (its weights are then unusable).

    Warns
    -----
    ConvergenceWarning
        Once, if some networks reached ``max_iter`` before the stopping rule.
    """
    if solver not in BATCHED_SOLVERS:
        raise ValueError(
            f"train_batched supports solver in {_quoted(BATCHED_SOLVERS)}; got "
            f"solver={solver!r}. Fit such estimators one by one."
        )
    n_models = module.n_models
    step = _batched_stepper(
        module,
        X,
        y,
        solver=solver,
        learning_rate=learning_rate_init,
        weight_decay=alpha / X.shape[0],
        batch_size=batch_size,
        shuffle=shuffle,
        generators=generators,
    )
    results = [TrainingResult() for _ in range(n_models)]
    outcomes: list[TrainingResult | DivergenceError] = list(results)
    rules = [
        StoppingRule(loss, tol=tol, n_iter_no_change=n_iter_no_change)
        for loss in initial_losses
    ]
    active = torch.ones(n_models, dtype=torch.bool)
    module.start_training()
    for iteration in range(1, max_iter + 1):
        losses = step(active)
        stopped = []
        for k in active.nonzero().flatten().tolist():
            epoch_loss, result = losses[k], results[k]
            result.loss_curve.append(epoch_loss)
            result.n_iter = iteration
            if rules[k].diverged(epoch_loss):
                outcomes[k] = _diverged(
                    epoch_loss, initial_losses[k], iteration, solver, learning_rate_init
                )
                stopped.append(k)
                continue
            if rules[k].converged(epoch_loss):
                result.converged = True
                stopped.append(k)
        if stopped:
            module.stop_models(stopped)
            active[stopped] = False
            if not active.any():
                break
    for k, result in enumerate(results):
        if outcomes[k] is not result:
            continue
        if rules[k].rose(result.loss_curve[-1]):
            outcomes[k] = _diverged(
                result.loss_curve[-1],
                initial_losses[k],
                result.n_iter,
                solver,
                learning_rate_init,
            )
    not_converged = sum(
        1 for r, o in zip(results, outcomes, strict=True) if o is r and not r.converged
    )
    if not_converged:
        warnings.warn(
            f"{not_converged} of {n_models} networks: solver={solver!r} reached "
            f"max_iter={max_iter} iterations before the training loss stopped "
            f"improving by tol={tol}. Increase max_iter, or raise tol to stop "
            "earlier.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return outcomes


def _diverged(loss, initial_loss, iteration, solver, learning_rate) -> DivergenceError:
    return DivergenceError(
        divergence_message(
            loss, initial_loss, iteration, solver, "learning_rate_init", learning_rate
        )
    )


def _batched_stepper(
    module,
    X,
    y,
    *,
    solver,
    learning_rate,
    weight_decay,
    batch_size,
    shuffle,
    generators,
):
    """One epoch (SGD/Adam) or one full-batch step (GD) of all networks.

    The returned callable takes the bool ``(K,)`` mask of networks still
    training and gives each network's objective as a list of floats (entries
    of stopped networks are meaningless).
    """
    # The module adds the weight decay to the gradients: one parameter group.
    groups = [{"params": list(module.parameters())}]
    optimizer = make_optimizer(groups, solver, learning_rate)
    n_models, n_samples = module.n_models, X.shape[0]
    X = append_ones(X)  # the first layer's bias input
    batch_size = resolve_batch_size(batch_size, solver, n_samples)

    def penalty() -> torch.Tensor | float:
        if weight_decay == 0.0:
            return 0.0
        return 0.5 * weight_decay * module.squared_weight_norms()

    def take_step(inputs, targets) -> torch.Tensor:
        losses = module.squared_error_gradients_(
            inputs, targets, weight_decay=weight_decay
        )
        optimizer.step()
        module.restore_fixed_()
        return losses

    def full_batch_step(active) -> list[float]:
        with torch.no_grad():
            start_penalty = penalty()
        losses = take_step(X.expand(n_models, -1, -1), y.expand(n_models, -1, -1))
        return (losses + start_penalty).tolist()

    if batch_size == n_samples:
        return full_batch_step

    sizes = [batch_size] * (n_samples // batch_size)
    if n_samples % batch_size:
        sizes.append(n_samples % batch_size)
    batch_weights = torch.tensor(sizes, dtype=X.dtype, device=X.device) / n_samples
    identity = torch.arange(n_samples)

    def orders(active) -> torch.Tensor:
        """Row order ``(K, n)`` of this epoch, drawn from each network's
        generator (stopped networks draw nothing, as they would not run)."""
        if not shuffle:
            return identity.expand(n_models, -1).to(X.device)
        rows = [
            torch.randperm(n_samples, generator=generators[k]) if running else identity
            for k, running in enumerate(active.tolist())
        ]
        return torch.stack(rows).to(X.device)

    def gather(data, index) -> torch.Tensor:
        return data.index_select(0, index.reshape(-1)).view(*index.shape, -1)

    def epoch(active) -> list[float]:
        batch_losses = [
            take_step(gather(X, index), gather(y, index))
            for index in orders(active).split(batch_size, dim=1)
        ]
        with torch.no_grad():
            mean_loss = batch_weights @ torch.stack(batch_losses)
            return (mean_loss + penalty()).tolist()

    return epoch


def _check_batchable(estimators) -> None:
    """All ``estimators`` must differ only in the batched parameters."""
    if not estimators:
        raise ValueError("fit_batched needs at least one estimator.")
    reason = batched_unsupported_reason(estimators[0], "trainable_proportion")
    if reason is not None:
        raise ValueError(f"These estimators cannot be fitted as a batch: {reason}.")

    def shared(estimator) -> dict:
        params = estimator.get_params(deep=False)
        return {k: v for k, v in params.items() if k not in BATCHED_PARAMETERS}

    reference = shared(estimators[0])
    for estimator in estimators[1:]:
        different = sorted(
            name
            for name, value in shared(estimator).items()
            if not _same_value(value, reference[name])
        )
        if different or type(estimator) is not type(estimators[0]):
            raise ValueError(
                "Estimators fitted as one batch may differ only in "
                f"{_quoted(BATCHED_PARAMETERS)}; these differ too: {different}. "
                "Fit each group of equal parameters as its own batch."
            )


def _same_value(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return a is b


def fit_batched(
    estimators: Sequence[PartiallyTrainableRegressor], X, y
) -> list[PartiallyTrainableRegressor | DivergenceError]:
    """Fit estimators that differ only in the parameters of the initial
    network (:data:`BATCHED_PARAMETERS`) as one batched network.

    Each estimator ends up fitted as ``estimator.fit(X, y)`` would fit it
    (same attributes, weights equal to rounding), but all train together: one
    stacked forward and backward pass and one optimiser step per mini-batch.

    Parameters
    ----------
    estimators : sequence of PartiallyTrainableRegressor
        Unfitted or fitted; their other parameters must be equal, with
        ``solver`` in ``("adam", "sgd", "gd")``. Each network is built from
        the training data as ``fit`` builds it (so ``"leverage"`` selection
        scores its candidates on the same inputs).
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)

    Returns
    -------
    list
        Per estimator, the estimator itself, fitted, or the
        :class:`~sklearn_pt.exceptions.DivergenceError` its ``fit`` would have
        raised (that estimator is then left as it was).

    Raises
    ------
    ValueError
        If the estimators cannot be batched (the message says why).

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.model_selection._batched import fit_batched
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> y = X[:, 0] ** 2
    >>> estimators = [PartiallyTrainableRegressor((16,), trainable_proportion=p,
    ...               max_iter=20, random_state=0, dtype="float64")
    ...               for p in (0.0, 0.5)]
    >>> fitted = fit_batched(estimators, X, y)
    >>> alone = PartiallyTrainableRegressor((16,), trainable_proportion=0.5,
    ...     max_iter=20, random_state=0, dtype="float64").fit(X, y)
    >>> bool(np.allclose(fitted[1].predict(X), alone.predict(X), rtol=1e-10))
    True
    """
    return _fit_batched(estimators, X, y)[0]


def _fit_batched(estimators, X, y) -> tuple[list, BatchedPartiallyTrainableMLP]:
    """:func:`fit_batched`, also returning the trained batch (whose networks
    that diverged hold unusable weights)."""
    estimators = list(estimators)
    _check_batchable(estimators)
    saved = [dict(estimator.__dict__) for estimator in estimators]
    try:
        outcomes, batch = _fit_as_one_batch(estimators, X, y)
    except BaseException:
        for estimator, state in zip(estimators, saved, strict=True):
            _restore_state(estimator, state)
        raise
    for estimator, state, outcome in zip(estimators, saved, outcomes, strict=True):
        if isinstance(outcome, DivergenceError):
            _restore_state(estimator, state)
    return outcomes, batch


def _restore_state(estimator, state: dict) -> None:
    """Undo a failed fit, as :func:`~sklearn_pt._base.keep_state_on_error`."""
    estimator.__dict__.clear()
    estimator.__dict__.update(state)


def _fit_as_one_batch(estimators, X, y) -> tuple[list, BatchedPartiallyTrainableMLP]:
    """The body of :func:`_fit_batched`, mirroring ``fit`` step by step."""
    for estimator in estimators:
        estimator._validate_params()
    template = estimators[0]
    device = resolve_device(template.device)
    dtype = resolve_dtype(template.dtype)
    X_given = X
    X, y = template._validate_training_data(X, y)  # fit's checks and messages
    # The same data for all: the others only record the features they see.
    for estimator in estimators[1:]:
        validate_data(estimator, X_given, skip_check_array=True)
    y_2d = y.reshape(len(y), -1)
    X_t = template._preprocess(as_tensor(X, device=device, dtype=dtype))
    y_t = as_tensor(y_2d, device=device, dtype=dtype)

    generators = [make_generator(e.random_state) for e in estimators]
    modules = [
        e._build_module(X_t, y_2d.shape[1], generator)
        for e, generator in zip(estimators, generators, strict=True)
    ]
    # Networks whose fit is the closed-form readout alone (readout="ridge", no
    # trainable hidden neuron) are not trained, as fit does not train them.
    trained = [
        k
        for k, (e, module) in enumerate(zip(estimators, modules, strict=True))
        if not e._readout_in_closed_form_only(module)
    ]
    outcomes: list = [TrainingResult() for _ in estimators]
    if trained:
        batch = BatchedPartiallyTrainableMLP.from_modules([modules[k] for k in trained])
        results = train_batched(
            batch,
            X_t,
            y_t,
            generators=[generators[k] for k in trained],
            initial_losses=_initial_losses(batch, X_t, y_t),
            **template._training_params(),
        )
        batch.copy_to_modules([modules[k] for k in trained])
        for k, result in zip(trained, results, strict=True):
            outcomes[k] = result
    fitted = []
    for estimator, module, outcome in zip(estimators, modules, outcomes, strict=True):
        if isinstance(outcome, DivergenceError):
            fitted.append(outcome)
            continue
        outcome = estimator._finish_readout(module, X_t, y_t, outcome)
        estimator._set_fitted(module, outcome, y, device)
        fitted.append(estimator)
    # Every network, its final readout included, for the batched scoring.
    return fitted, BatchedPartiallyTrainableMLP.from_modules(modules)


def _initial_losses(batch, X, y) -> list[float]:
    """Each network's :func:`~sklearn_pt._engine.initial_loss`, from one
    batched evaluation on the same rows."""
    rows = slice(0, INITIAL_LOSS_ROWS)
    inputs = append_ones(X[rows]).expand(batch.n_models, -1, -1)
    errors = batch.predict(inputs).sub_(y[rows])
    return errors.square_().mean((1, 2)).mul_(0.5).tolist()


def batched_validation_curves(
    estimator: PartiallyTrainableRegressor,
    X,
    y,
    *,
    param_name: str,
    param_range: Sequence,
    random_states: Sequence,
    cv=None,
    scoring=None,
    verbose: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``validation_curve`` for every seed, with each split's fits batched.

    For each cross-validation split, the ``len(param_range) *
    len(random_states)`` clones (``random_state`` set first, then
    ``param_name``, as the sequential path does) are fitted as one batch with
    :func:`fit_batched` and scored with ``scoring``. The splits are computed
    once and used for every seed (the same as the sequential path whenever the
    splitter is deterministic). A fit that diverges scores NaN, as with
    ``validation_curve``'s ``error_score=np.nan``.

    Parameters
    ----------
    estimator : PartiallyTrainableRegressor
    X, y : array-like
    param_name : str
        One of :data:`BATCHED_PARAMETERS`.
    param_range : sequence
        Values of ``param_name``.
    random_states : sequence of int or None
        ``[None]`` keeps the estimator's own ``random_state``.
    cv, scoring
        As in :func:`~sklearn.model_selection.validation_curve`.
    verbose : int, default=0
        Show a progress bar over the splits on stderr when positive.

    Returns
    -------
    train_scores, test_scores : ndarray of shape (n_values, n_seeds, n_splits)

    References
    ----------
    He, Lao, Lu, Zhang (2026), "Phase Transition from Random Features to Fully
    Trainable Networks".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_pt.model_selection._batched import batched_validation_curves
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> X = np.random.default_rng(0).normal(size=(60, 3))
    >>> train, test = batched_validation_curves(
    ...     PartiallyTrainableRegressor((8,), max_iter=3), X, X[:, 0] ** 2,
    ...     param_name="trainable_proportion", param_range=[0.0, 1.0],
    ...     random_states=[0, 1], cv=2)
    >>> test.shape
    (2, 2, 2)
    """
    reason = batched_unsupported_reason(estimator, param_name)
    if reason is not None:
        raise ValueError(f"strategy='batched' cannot run this sweep: {reason}.")
    X, y = indexable(X, y)
    splits = list(check_cv(cv, y, classifier=False).split(X, y))
    scorer = check_scoring(estimator, scoring=scoring)
    batched_r2 = scoring is None or (isinstance(scoring, str) and scoring == "r2")
    shape = (len(param_range), len(random_states), len(splits))
    train_scores, test_scores = np.full(shape, np.nan), np.full(shape, np.nan)
    failures, convergence = [], []
    bar = progress_bar(
        len(splits), desc="proportion_curve (batched splits)", enabled=verbose
    )
    for split, (train, test) in enumerate(splits):
        X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
        X_test, y_test = _safe_indexing(X, test), _safe_indexing(y, test)
        models = [
            _configured(estimator, param_name, value, seed)
            for value in param_range
            for seed in random_states
        ]
        (outcomes, batch), messages = quiet_fit(
            lambda models=models, X_t=X_train, y_t=y_train: _fit_batched(
                models, X_t, y_t
            )
        )
        # train_batched warns once per split ("k of K networks: ..."); keep
        # its reason for each fit that ran all its iterations (the batched
        # solvers' only way not to stop).
        reasons = [m.split(" networks: ", 1)[-1] for m in messages[:1]]
        convergence += [
            reasons
            if not isinstance(m, DivergenceError) and m.n_iter_ == m.max_iter
            else []
            for m in outcomes
        ]
        failures += [m for m in outcomes if isinstance(m, DivergenceError)]
        for scores, X_scored, y_scored in (
            (train_scores, X_train, y_train),
            (test_scores, X_test, y_test),
        ):
            scores[:, :, split] = _scores(
                outcomes, batch, X_scored, y_scored, None if batched_r2 else scorer
            ).reshape(shape[:2])
        bar.update(1)
    bar.close()
    warn_convergence(convergence, stacklevel=4)  # the caller of proportion_curve
    if failures:
        warnings.warn(
            f"{len(failures)} fits failed out of a total of {train_scores.size}; "
            f"their scores are NaN. First error: {failures[0]}",
            FitFailedWarning,
            stacklevel=2,
        )
    return train_scores, test_scores


def _scores(outcomes, batch, X, y, scorer) -> np.ndarray:
    """Each network's score on ``(X, y)``, NaN for those that diverged.

    ``scorer=None`` stands for the estimators' own ``score``, the R^2, which is
    computed for all the networks at once (:func:`_r2_scores`).
    """
    scores = np.full(len(outcomes), np.nan)
    fitted = [k for k, m in enumerate(outcomes) if not isinstance(m, DivergenceError)]
    if not fitted:
        return scores
    if scorer is None:
        scores[fitted] = _r2_scores(batch, outcomes[fitted[0]], fitted, X, y)
    else:
        scores[fitted] = [scorer(outcomes[k], X, y) for k in fitted]
    return scores


def _r2_scores(batch, estimator, index, X, y) -> np.ndarray:
    """``score(X, y)`` of the networks ``index`` of ``batch`` (``estimator``
    is one of them, fitted): one batched prediction and one
    :func:`~sklearn.metrics.r2_score` call for all (the same R^2 to rounding),
    instead of one ``predict`` and one ``r2_score`` per network."""
    X = validate_input(
        validate_data, estimator, X, reset=False, dtype=[np.float64, np.float32]
    )
    reference = batch.readout
    inputs = estimator._preprocess(
        as_tensor(X, device=reference.device, dtype=reference.dtype)
    )
    predictions = batch.predict(append_ones(inputs).expand(batch.n_models, -1, -1))
    index = torch.as_tensor(index, device=reference.device)
    predictions = predictions[index].cpu().numpy().astype(X.dtype, copy=False)
    n_models, n_rows, n_outputs = predictions.shape
    raw = r2_score(  # one column per network and output
        np.tile(np.asarray(y).reshape(n_rows, -1), n_models),
        predictions.transpose(1, 0, 2).reshape(n_rows, -1),
        multioutput="raw_values",
    )
    return raw.reshape(n_models, n_outputs).mean(axis=1)


def _configured(estimator, param_name, value, seed) -> PartiallyTrainableRegressor:
    params = {} if seed is None else {"random_state": seed}
    params[param_name] = value  # after the seed, as in the sequential path
    return clone(estimator).set_params(**params)
