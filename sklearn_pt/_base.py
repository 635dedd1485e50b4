"""What every sklearn_pt estimator shares beyond the engine: input errors that
say the fix, state kept on a failed ``fit``, portable pickling, and tags."""

from __future__ import annotations

import copy
import functools
import warnings

import numpy as np
import torch
from sklearn import get_config

from ._config import torch_threads_applied
from ._torch_bridge import make_generator, resolve_device, resolve_dtype
from .exceptions import DeviceFallbackWarning

__all__ = [
    "TorchEstimatorMixin",
    "check_parameters",
    "fit_keeping_states",
    "keep_state_on_error",
    "validate_input",
]


def keep_state_on_error(fit):
    """Decorate ``fit`` so that an exception restores the estimator's attributes.

    A ``fit`` that fails (bad input, a diverging loss, an interrupt) leaves a
    fitted estimator exactly as it was, and an unfitted one unfitted. Every
    public estimator of the library decorates its ``fit`` with it; the
    wrapper is marked ``keeps_state_on_error = True`` so that tests can check.

    Parameters
    ----------
    fit : callable
        The ``fit`` method to wrap.

    Returns
    -------
    callable
        ``fit``, restoring ``self.__dict__`` (a shallow copy taken on entry)
        when it raises.

    Examples
    --------
    >>> from sklearn_pt._base import keep_state_on_error
    >>> class Counter:
    ...     @keep_state_on_error
    ...     def fit(self, fail):
    ...         self.calls_ = getattr(self, "calls_", 0) + 1
    ...         if fail:
    ...             raise ValueError("no")
    ...         return self
    >>> counter = Counter().fit(False)
    >>> try:
    ...     counter.fit(True)
    ... except ValueError:
    ...     pass
    >>> counter.calls_
    1
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            _restore_state(self, saved)
            raise

    wrapper.keeps_state_on_error = True
    return wrapper


def check_parameters(estimator) -> None:
    """``estimator._validate_params()``, unless scikit-learn's configuration
    skips parameter validation, as it does inside a ``fit`` decorated with
    ``_fit_context``: a ``plan_fit`` called by ``fit`` then does not validate
    the parameters a second time, and one called on its own does.

    Parameters
    ----------
    estimator : BaseEstimator
        With ``_parameter_constraints``.
    """
    if not get_config()["skip_parameter_validation"]:
        estimator._validate_params()


def _restore_state(estimator, state: dict) -> None:
    estimator.__dict__.clear()
    estimator.__dict__.update(state)


def fit_keeping_states(estimators, fit) -> list:
    """``fit(estimators)`` for a fit of many estimators at once (a stacked
    sweep), with :func:`keep_state_on_error`'s promise for each of them.

    Parameters
    ----------
    estimators : list of estimators
    fit : callable
        ``fit(estimators)`` returns one outcome per estimator: the estimator,
        fitted, or the exception its own ``fit`` would have raised.

    Returns
    -------
    list
        The outcomes. An estimator whose outcome is an exception is left as
        it was before; if ``fit`` raises, every estimator is.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn_pt._base import fit_keeping_states
    >>> def fit(estimators):
    ...     estimators[0].coef_ = 1.0
    ...     estimators[1].coef_ = 2.0
    ...     return [estimators[0], ValueError("diverged")]
    >>> models = [Ridge(), Ridge()]
    >>> outcomes = fit_keeping_states(models, fit)
    >>> models[0].coef_, hasattr(models[1], "coef_")
    (1.0, False)
    """
    saved = [dict(estimator.__dict__) for estimator in estimators]
    try:
        outcomes = fit(estimators)
    except BaseException:
        for estimator, state in zip(estimators, saved, strict=True):
            _restore_state(estimator, state)
        raise
    for estimator, state, outcome in zip(estimators, saved, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            _restore_state(estimator, state)
    return outcomes


_INPUT_FIXES = (
    (
        "features, but",
        "Pass {X} with the columns seen in fit, in the same order, or fit the "
        "estimator again on the new features.",
    ),
    (
        "contains infinity",
        "Replace or drop the infinite values first (np.isfinite marks the "
        "finite entries).",
    ),
    (
        "y contains NaN",
        "Drop the samples whose target is missing, e.g. keep = ~np.isnan(y), "
        "and fit on X[keep], y[keep].",
    ),
    (
        "contains NaN",
        "Drop or impute the missing values first, e.g. with "
        "sklearn.impute.SimpleImputer.",
    ),
    (
        "0 sample(s)",
        "Pass at least one sample: {X} must have shape {shape}.",
    ),
    (
        "0 feature(s)",
        "Pass at least one feature: {X} must have shape {shape}.",
    ),
    (
        "inconsistent numbers of samples",
        "X and y must have one row per sample: check that they come from the "
        "same data set and were subset in the same way.",
    ),
    (
        "Found array with dim",
        "{X} must be 2-D, of shape {shape}: flatten the extra axes first, e.g. "
        "{X}.reshape(len({X}), -1).",
    ),
    (
        "Complex data not supported",
        "{inputs} must be real: pass np.real({X}), or the real and imaginary "
        "parts as separate columns, np.hstack([{X}.real, {X}.imag]).",
    ),
    (
        "convert string to float",
        "{inputs} must be numeric: encode string or categorical columns first, "
        "e.g. with sklearn.preprocessing.OrdinalEncoder or OneHotEncoder.",
    ),
    (
        "must be a string or a",
        "{inputs} must be numeric arrays: convert object columns to numbers "
        "first, e.g. with sklearn.preprocessing.OrdinalEncoder.",
    ),
)
"""Substrings of scikit-learn's input-validation messages and the fix added."""

_SHAPES = {
    "X": "(n_samples, n_features)",
    "Y": "(n_samples_Y, n_features)",
    "W": "(N, d), one row per neuron",
}


def _input_fix(message: str, name: str) -> str | None:
    if "impute" in message:  # scikit-learn already says what to do
        return None
    for pattern, fix in _INPUT_FIXES:
        if pattern in message:
            inputs = "X and y" if name == "X" else name
            shape = _SHAPES.get(name, "(n_rows, n_columns)")
            return fix.format(X=name, inputs=inputs, shape=shape)
    return None


def validate_input(validate, *args, name: str = "X", **kwargs):
    """Call a scikit-learn validator and add the fix to the error it raises.

    scikit-learn's messages say what is wrong with an input ("Input X contains
    infinity ...", "Found array with dim 3 ...") but often not what to do;
    this keeps the message, as a prefix, and the exception type (so that
    scikit-learn's estimator checks still match them), and appends the fix.

    Parameters
    ----------
    validate : callable
        The validator, e.g. ``validate_data`` or
        :func:`~sklearn.utils.check_array`.
    *args, **kwargs
        Passed to ``validate``.
    name : str, default="X"
        How the fix calls the validated array (``"X"``: the data of ``fit``,
        ``predict`` or ``transform``, with ``y``).

    Returns
    -------
    object
        What ``validate`` returns.

    Raises
    ------
    ValueError or TypeError
        The validator's error, with the fix appended when one is known; the
        original exception is chained as ``__cause__``. With
        ``y_numeric=True``, a ValueError when ``y`` is not numeric (strings).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.utils import check_array
    >>> from sklearn_pt._base import validate_input
    >>> try:
    ...     validate_input(check_array, np.ones((2, 2, 2)))
    ... except ValueError as exc:
    ...     print(exc)
    Found array with dim 3, while dim <= 2 is required. X must be 2-D, of shape \
(n_samples, n_features): flatten the extra axes first, e.g. X.reshape(len(X), -1).
    """
    try:
        validated = validate(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        fix = _input_fix(str(exc), name)
        if fix is None or type(exc) not in (ValueError, TypeError):
            raise
        raise type(exc)(f"{exc} {fix}") from exc
    if kwargs.get("y_numeric"):
        _check_numeric_target(validated[1])
    return validated


def _check_numeric_target(y) -> None:
    """Raise a ValueError naming the fix when a regressor's ``y`` is not numeric.

    scikit-learn's ``y_numeric=True`` converts an object ``y`` to float but
    passes string arrays through, which then fail deep inside torch.
    """
    dtype = np.asarray(y).dtype
    if dtype.kind not in "biuf":
        raise ValueError(
            f"y must be numeric; got an array of dtype {dtype}. "
            "Convert it first, e.g. np.asarray(y, dtype=float); categorical "
            "targets need a classifier."
        )


def _cpu_copy(module: torch.nn.Module) -> torch.nn.Module:
    """A deep copy of ``module`` whose tensors are on the CPU.

    Tensors are copied to the CPU directly (through the ``deepcopy`` memo), so
    no second copy is made on the accelerator.
    """
    memo = {}
    for tensor in (*module.parameters(), *module.buffers()):
        cpu = tensor.detach().cpu()
        if isinstance(tensor, torch.nn.Parameter):
            cpu = torch.nn.Parameter(cpu.clone(), requires_grad=tensor.requires_grad)
        memo[id(tensor)] = cpu
    return copy.deepcopy(module, memo)


def _on_cpu(module: torch.nn.Module) -> bool:
    return all(
        t.device.type == "cpu" for t in (*module.parameters(), *module.buffers())
    )


class TorchEstimatorMixin:
    """Mixin for estimators holding fitted ``torch.nn.Module`` attributes.

    * Pickles hold CPU tensors, so a model fitted on a GPU loads on a CPU-only
      machine. On loading, the modules go back to ``device_`` when it exists
      there; otherwise they stay on the CPU, ``device_`` becomes ``cpu`` and a
      :class:`~sklearn_pt.exceptions.DeviceFallbackWarning` says so.
    * Results are bitwise reproducible on the CPU; on other devices some torch
      kernels are not, hence the ``non_deterministic`` tag.
    * ``fit``, ``predict`` and ``transform`` of every subclass run with the
      torch threads set by :func:`sklearn_pt.config_context`
      (``torch_threads``), restored when they return.

    Notes
    -----
    *Determinism* (the one place where the library documents it). On the
    CPU, the same ``random_state`` gives bitwise-identical fitted weights and
    predictions, across fits, processes and pickle round-trips, for a given
    machine, torch build and number of threads; ``fit`` neither reads nor
    changes the global torch, NumPy or Python random states (every draw uses a
    local generator from :func:`~sklearn_pt._torch_bridge.make_generator`, on the
    CPU, so the *initialisation* is the same on every device). On a GPU the
    arithmetic is not bitwise reproducible: cuBLAS reductions, atomic-add
    kernels (e.g. in backward passes of indexing) and the choice of
    algorithms by problem size change the summation order between runs and
    between devices, so results agree with the CPU's only up to rounding
    (about ``1e-6`` relative in float32, ``1e-12`` in float64) and such
    differences can grow over many training steps. The estimators therefore
    set scikit-learn's ``non_deterministic`` tag whenever ``device`` is not
    ``"cpu"`` (``"auto"`` included). ``torch.use_deterministic_algorithms``
    narrows, but does not close, the gap; the library does not set it,
    because it changes global state.
    """

    _THREADED_METHODS = ("fit", "predict", "transform", "fit_transform")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls._THREADED_METHODS:
            method = cls.__dict__.get(name)
            if callable(method):
                setattr(cls, name, torch_threads_applied(method))

    def _torch_context(self) -> tuple[torch.device, torch.dtype, torch.Generator]:
        """The ``device``, ``dtype`` and ``random_state`` parameters as torch
        objects: where to fit, in which precision, and the local generator
        every random draw of the fit comes from (the start of every ``fit``).
        """
        return (
            resolve_device(self.device),
            resolve_dtype(self.dtype),
            make_generator(self.random_state),
        )

    def __getstate__(self):
        state = super().__getstate__()
        for key, value in state.items():
            if isinstance(value, torch.nn.Module) and not _on_cpu(value):
                state[key] = _cpu_copy(value)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        device = getattr(self, "device_", None)
        if device is None or device.type == "cpu":
            return
        try:
            resolve_device(str(device))
        except ValueError:
            warnings.warn(
                f"This {type(self).__name__} was fitted on {device}, which is not "
                "available here; it was loaded on the CPU and will predict there.",
                DeviceFallbackWarning,
                stacklevel=2,
            )
            self.device_ = torch.device("cpu")
            return
        for value in vars(self).values():
            if isinstance(value, torch.nn.Module):
                value.to(device)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.device != "cpu"
        return tags
