"""Stacked proportion sweeps: each split's fits of a proportion grid trained
as one stacked model.

:func:`stacked_validation_curves` is
:func:`~sklearn_pt.model_selection.proportion_curve` with
``strategy="stacked"``: for each cross-validation split it fits the clones of
the grid with :func:`~sklearn_pt.model_selection.fit_stacked` (each ends
fitted as its own ``fit`` would leave it, to rounding: about 1e-12 relative in
float64) and scores them, the R^2 of all the networks from one stacked
prediction.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring, r2_score
from sklearn.model_selection import check_cv
from sklearn.utils import indexable

from .._base import validate_input
from .._compat import _safe_indexing, validate_data
from .._progress import progress_bar, quiet_fit, warn_convergence
from .._torch_bridge import as_tensor
from ..exceptions import DivergenceError
from ..nn import PartiallyTrainableMLP, StackedPartiallyTrainableMLP, append_ones
from ._stacked import fit_stacked, stacked_fit_unsupported

__all__ = ["stacked_validation_curves"]


def stacked_validation_curves(
    estimator,
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
    """``validation_curve`` for every seed, with each split's fits stacked.

    For each cross-validation split, the ``len(param_range) *
    len(random_states)`` clones (``random_state`` set first, then
    ``param_name``, as the sequential path does) are fitted together with
    :func:`~sklearn_pt.model_selection.fit_stacked` and scored with
    ``scoring``. The splits are computed
    once and used for every seed (the same as the sequential path whenever the
    splitter is deterministic). A fit that diverges scores NaN, as with
    ``validation_curve``'s ``error_score=np.nan``.

    Parameters
    ----------
    estimator : PartiallyTrainableRegressor
    X, y : array-like
    param_name : str
        One of the estimator's ``_stacked_parameters``.
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
    >>> from sklearn_pt.model_selection._stacked_curves import stacked_validation_curves
    >>> from sklearn_pt.neural_network import PartiallyTrainableRegressor
    >>> X = np.random.default_rng(0).normal(size=(60, 3))
    >>> train, test = stacked_validation_curves(
    ...     PartiallyTrainableRegressor((8,), max_iter=3), X, X[:, 0] ** 2,
    ...     param_name="trainable_proportion", param_range=[0.0, 1.0],
    ...     random_states=[0, 1], cv=2)
    >>> test.shape
    (2, 2, 2)
    """
    reason = stacked_fit_unsupported(estimator, param_name)
    if reason is not None:
        raise ValueError(f"strategy='stacked' cannot run this sweep: {reason}.")
    X, y = indexable(X, y)
    splits = list(check_cv(cv, y, classifier=False).split(X, y))
    scorer = check_scoring(estimator, scoring=scoring)
    stacked_r2 = scoring is None or (isinstance(scoring, str) and scoring == "r2")
    shape = (len(param_range), len(random_states), len(splits))
    train_scores, test_scores = np.full(shape, np.nan), np.full(shape, np.nan)
    failures, convergence = [], []
    bar = progress_bar(
        len(splits), desc="proportion_curve (stacked splits)", enabled=verbose
    )
    for split, (train, test) in enumerate(splits):
        X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
        X_test, y_test = _safe_indexing(X, test), _safe_indexing(y, test)
        models = [
            _configured(estimator, param_name, value, seed)
            for value in param_range
            for seed in random_states
        ]
        outcomes, messages = quiet_fit(
            lambda models=models, X_t=X_train, y_t=y_train: fit_stacked(
                models, X_t, y_t
            )
        )
        # The stacked fit warns once per split ("k of K networks: ..."); keep
        # its reason for each fit that ran all its iterations (the stacked
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
                outcomes, X_scored, y_scored, scorer, stacked_r2
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


def _scores(outcomes, X, y, scorer, r2) -> np.ndarray:
    """Each network's score on ``(X, y)``, NaN for those that diverged.

    With ``r2`` (the scorer is the R^2) and networks that are
    :class:`~sklearn_pt.nn.PartiallyTrainableMLP` s, the R^2 of all of them
    is computed at once (:func:`_r2_scores`).
    """
    scores = np.full(len(outcomes), np.nan)
    fitted = [k for k, m in enumerate(outcomes) if not isinstance(m, DivergenceError)]
    if not fitted:
        return scores
    if r2 and all(
        isinstance(getattr(outcomes[k], "module_", None), PartiallyTrainableMLP)
        for k in fitted
    ):
        scores[fitted] = _r2_scores([outcomes[k] for k in fitted], X, y)
    else:
        scores[fitted] = [scorer(outcomes[k], X, y) for k in fitted]
    return scores


def _r2_scores(estimators, X, y) -> np.ndarray:
    """``score(X, y)`` of the fitted ``estimators``: one stacked prediction
    and one :func:`~sklearn.metrics.r2_score` call for all (the same R^2 to
    rounding), instead of one ``predict`` and one ``r2_score`` per network."""
    estimator = estimators[0]
    X = validate_input(
        validate_data, estimator, X, reset=False, dtype=[np.float64, np.float32]
    )
    stacked = StackedPartiallyTrainableMLP.from_modules(
        [model.module_ for model in estimators]
    )
    reference = stacked.readout
    inputs = estimator.module_.preprocess(
        as_tensor(X, device=reference.device, dtype=reference.dtype)
    )
    predictions = stacked.predict(append_ones(inputs).expand(stacked.n_models, -1, -1))
    predictions = predictions.cpu().numpy().astype(X.dtype, copy=False)
    n_models, n_rows, n_outputs = predictions.shape
    raw = r2_score(  # one column per network and output
        np.tile(np.asarray(y).reshape(n_rows, -1), n_models),
        predictions.transpose(1, 0, 2).reshape(n_rows, -1),
        multioutput="raw_values",
    )
    return raw.reshape(n_models, n_outputs).mean(axis=1)


def _configured(estimator, param_name, value, seed):
    params = {} if seed is None else {"random_state": seed}
    params[param_name] = value  # after the seed, as in the sequential path
    return clone(estimator).set_params(**params)
