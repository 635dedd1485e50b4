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
:func:`train_batched` runs the one training loop
(:func:`sklearn_pt._training.fit_loop`) with a stacked stepper, and so
reproduces :func:`sklearn_pt._training.train_module` model by model: the same
initial weights and trainable neurons (each network is built by
:class:`~sklearn_pt.nn.PartiallyTrainableMLP` from its own generator, as in
``fit``), the same mini-batch order (one permutation per epoch drawn from each
network's generator), the same optimiser (torch's SGD and Adam are elementwise,
so one optimiser on stacked tensors is ``K`` independent ones; the weight decay
``alpha / n`` is applied to the weight matrices only), the same loss curve, the
same ``tol``/``n_iter_no_change`` stopping rule per network and the same
divergence checks. A stopped network's weights are kept fixed, and so are
frozen rows (restored after each step, bitwise). What differs is the order of
floating-point operations inside the batched matrix products and in the
hand-derived backward pass
(:meth:`~sklearn_pt.nn._batched.BatchedPartiallyTrainableMLP.squared_error_gradients_`,
tested against autograd on the same stacked module), so results agree to
rounding: about 1e-12 relative in float64.
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

from .._base import fit_keeping_states, validate_input
from .._compat import _safe_indexing, validate_data
from .._engine import as_tensor
from .._progress import progress_bar, quiet_fit, warn_convergence
from .._training import (
    FIRST_ORDER_SOLVERS,
    StackedStepper,
    TrainingResult,
    default_callbacks,
    fit_loop,
)
from ..exceptions import DivergenceError
from ..neural_network import PartiallyTrainableRegressor
from ..neural_network._partial import leverage_order_cache
from ..nn._batched import BatchedPartiallyTrainableMLP, append_ones

__all__ = [
    "BATCHED_PARAMETERS",
    "BATCHED_SOLVERS",
    "batched_unsupported_reason",
    "batched_validation_curves",
    "fit_batched",
    "train_batched",
]

BATCHED_SOLVERS = FIRST_ORDER_SOLVERS
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
    name = type(estimator).__name__
    if not hasattr(estimator, "plan_fit"):
        return (
            f"the estimator is a {name}, not a PartiallyTrainableRegressor or "
            "another estimator with a fit plan to stack (pipelines are not batched)"
        )
    if param_name not in BATCHED_PARAMETERS:
        return (
            f"param_name={param_name!r} changes more than the initial network "
            f"(batched parameters: {_quoted(BATCHED_PARAMETERS)})"
        )
    params = estimator.get_params(deep=False)
    if param_name not in params:
        return f"a {name} has no parameter {param_name!r}"
    solver = params.get("solver")
    if solver not in BATCHED_SOLVERS:
        return (
            f"solver={solver!r} is not elementwise (batched solvers: "
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
    max_iter: int = 200,
    callbacks: Sequence | None = None,
    solver: str = "adam",
    learning_rate_init: float = 1e-3,
    alpha: float = 0.0,
    batch_size: int | str = "auto",
    shuffle: bool = True,
    gradients: str = "auto",
) -> list[TrainingResult | DivergenceError]:
    """Train the ``K`` networks of ``module`` on ``(X, y)``, each as
    :func:`~sklearn_pt._training.train_module` would train it alone: one
    :func:`~sklearn_pt._training.fit_loop` over a
    :class:`~sklearn_pt._training.StackedStepper`.

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
    max_iter : int, default=200
    callbacks : sequence of Callback, optional
        Default: :func:`~sklearn_pt._training.default_callbacks`.
    solver : {"adam", "sgd", "gd"}, default="adam"
    learning_rate_init, alpha, batch_size, shuffle
        As in :func:`~sklearn_pt._training.make_stepper`.
    gradients : {"auto", "manual", "autograd"}, default="auto"
        The stacked module's hand-derived backward pass, or autograd.

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
    stepper = StackedStepper(
        module,
        append_ones(X),  # the first layer's bias input
        y,
        solver=solver,
        learning_rate=learning_rate_init,
        alpha=alpha,
        batch_size=batch_size,
        shuffle=shuffle,
        generators=generators,
        gradients=gradients,
    )
    if callbacks is None:
        callbacks = default_callbacks()
    return fit_loop(stepper, max_iter=max_iter, callbacks=callbacks)


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
    batches = []

    def fit(estimators):
        outcomes, batch = _fit_as_one_batch(estimators, X, y)
        batches.append(batch)
        return outcomes

    return fit_keeping_states(estimators, fit), batches[0]


def _fit_as_one_batch(estimators, X, y) -> tuple[list, BatchedPartiallyTrainableMLP]:
    """The body of :func:`_fit_batched`: each estimator's fit plan
    (``plan_fit``), their training replaced by one stacked loop, each plan
    completed with its network's outcome."""
    plans = []
    with leverage_order_cache():  # one pool and scoring per seed, not per P
        for estimator in estimators:
            plan = estimator.plan_fit(X, y)
            if plan.stacking is None:
                raise ValueError(
                    f"These estimators cannot be fitted as a batch: "
                    f"{type(estimator).__name__}'s fits cannot be stacked."
                )
            if plans:  # equal preprocessing: one copy of the training tensors
                plan.X, plan.y = plans[0].X, plans[0].y
            plans.append(plan)
    template = plans[0]
    # Plans whose fit is a closed-form solve (readout="ridge" without a
    # trainable hidden neuron) are not trained, as fit does not train them.
    trained = [k for k, plan in enumerate(plans) if plan.trains]
    outcomes = [None if plan.trains else plan.run() for plan in plans]
    if trained:
        batch = template.stacking.from_modules([plans[k].module for k in trained])
        results = train_batched(
            batch,
            template.X,
            template.y,
            generators=[plans[k].generator for k in trained],
            max_iter=template.max_iter,
            callbacks=template.callbacks,
            **template.stepper_params,
        )
        batch.copy_to_modules([plans[k].module for k in trained])
        for k, result in zip(trained, results, strict=True):
            outcomes[k] = result
    fitted = [
        outcome if isinstance(outcome, DivergenceError) else plan.complete(outcome)
        for plan, outcome in zip(plans, outcomes, strict=True)
    ]
    # Every network, its final readout included, for the batched scoring.
    return fitted, template.stacking.from_modules([plan.module for plan in plans])


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
    inputs = estimator.module_.preprocess(
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
