"""One vocabulary: the table of docs/vocabulary.rst against the estimators.

The table (``docs/vocabulary.csv``, rendered by ``docs/vocabulary.rst``)
lists every public parameter of every public estimator; a name shared by
several estimators has one meaning there, one kind of constraint here and the
defaults the table gives. The names the library retired are rejected.
"""

import ast
import csv
import importlib
import inspect
import pkgutil
import re
from numbers import Integral
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.gaussian_process.kernels import Kernel

import sklearn_pt
from sklearn_pt._compat import Interval, InvalidParameterError, StrOptions
from sklearn_pt.datasets import make_single_index, make_sphere_regression
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.neural_network import (
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)

TABLE = Path(__file__).resolve().parents[1] / "docs" / "vocabulary.csv"
_CLASS_ROLE = re.compile(r":class:`~(sklearn_pt(?:\.\w+)+)\.(\w+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def public_estimators() -> dict[str, type]:
    """Every estimator class (or kernel, which has ``get_params`` too) in the
    ``__all__`` of a public subpackage, by name."""
    found = {}
    for info in pkgutil.iter_modules(sklearn_pt.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"sklearn_pt.{info.name}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, (BaseEstimator, Kernel)):
                found[name] = obj
    return found


ESTIMATORS = public_estimators()


def read_table() -> list[dict]:
    with TABLE.open(newline="") as file:
        rows = list(csv.reader(file, delimiter="|"))
    header, body = rows[0], rows[1:]
    assert header == [
        "Parameter",
        "Estimators",
        "Meaning",
        "Default",
        "scikit-learn / skorch counterpart",
    ]
    assert all(len(row) == len(header) for row in body), "a cell holds a '|'"
    table = []
    for parameter, estimators, meaning, default, counterpart in body:
        (name,) = _LITERAL.fullmatch(parameter).groups()
        classes = _CLASS_ROLE.findall(estimators)
        assert classes, f"row {name!r} names no estimator"
        table.append(
            {
                "name": name,
                "classes": classes,
                "meaning": meaning,
                "defaults": [_literal(text) for text in _LITERAL.findall(default)],
                "counterpart": counterpart,
            }
        )
    return table


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


TABLE_ROWS = read_table()


def default_of(cls, name):
    return inspect.signature(cls.__init__).parameters[name].default


def test_every_estimator_is_found():
    # The discovery sees the estimators the table is about.
    assert {
        "PartiallyTrainableRegressor",
        "TwoStepFeatureLearner",
        "FirstLayerGDRegressor",
        "TwoStepFeatures",
        "SpectralEstimator",
        "BiasedReLUFeatures",
        "BiasedReLUKernel",
        "WeightSpectrum",
    } <= set(ESTIMATORS)


def test_table_lists_every_public_parameter_and_nothing_else():
    listed = {(row["name"], name) for row in TABLE_ROWS for _, name in row["classes"]}
    actual = {
        (parameter, name)
        for name, cls in ESTIMATORS.items()
        for parameter in cls().get_params(deep=False)
    }
    assert sorted(listed - actual) == [], "listed but not a parameter"
    assert sorted(actual - listed) == [], "a parameter missing from the table"


def test_table_rows_are_one_per_name_sorted_and_name_real_classes():
    names = [row["name"] for row in TABLE_ROWS]
    assert names == sorted(set(names))
    for row in TABLE_ROWS:
        for module, name in row["classes"]:
            assert getattr(importlib.import_module(module), name) is ESTIMATORS[name]
        assert row["meaning"] and row["counterpart"] and row["defaults"]


@pytest.mark.parametrize("row", TABLE_ROWS, ids=lambda row: row["name"])
def test_defaults_are_those_of_the_table(row):
    # A single default in the table is every listed estimator's; several
    # defaults are each some listed estimator's, and every estimator has one.
    defaults = [default_of(ESTIMATORS[name], row["name"]) for _, name in row["classes"]]
    for default in defaults:
        assert any(_same(default, given) for given in row["defaults"]), (
            f"{row['name']}: default {default!r} is not in the table's "
            f"{row['defaults']!r}"
        )
    for given in row["defaults"]:
        assert any(_same(default, given) for default in defaults)


def _same(a, b) -> bool:
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return type(a) is type(b) and a == b
    return bool(np.isclose(a, b, rtol=1e-12, atol=0)) and type(a) is type(b)


def _kind(constraint):
    """What a constraint accepts, up to the options of a string choice (the
    options are the estimator's own, e.g. its activations; the table's
    meaning says them)."""
    if isinstance(constraint, Interval):
        number = "int" if constraint.type is Integral else "real"
        return (number, constraint.left, constraint.right, constraint.closed)
    if isinstance(constraint, StrOptions):
        return None
    if callable(constraint) and not isinstance(constraint, type):
        return getattr(constraint, "__name__", type(constraint).__name__)
    return constraint if isinstance(constraint, str) else type(constraint).__name__


def constraint_kinds(cls, name):
    kinds = {_kind(c) for c in cls._parameter_constraints[name]}
    return sorted((k for k in kinds if k is not None), key=repr)


SHARED = [row for row in TABLE_ROWS if len(row["classes"]) > 1]


@pytest.mark.parametrize("row", SHARED, ids=lambda row: row["name"])
def test_a_shared_name_has_one_kind_of_constraint(row):
    classes = [  # a kernel validates its own hyperparameters
        ESTIMATORS[name]
        for _, name in row["classes"]
        if hasattr(ESTIMATORS[name], "_parameter_constraints")
    ]
    kinds = {repr(constraint_kinds(cls, row["name"])) for cls in classes}
    assert len(kinds) == 1, f"{row['name']}: {kinds}"


def test_shared_names_include_the_papers_ideas():
    # One name per idea: width, penalty, seeds, devices, step sizes.
    shared = {row["name"] for row in SHARED}
    assert {
        "hidden_layer_sizes",
        "alpha",
        "random_state",
        "device",
        "learning_rate_init",
        "step_batches",
    } <= shared


def test_the_two_step_learner_takes_the_transformers_parameters_and_its_readouts():
    learner = set(TwoStepFeatureLearner().get_params())
    features = set(TwoStepFeatures().get_params())
    assert learner - features == {"alpha", "readout_fraction"}
    assert features < learner
    for name, constraints in TwoStepFeatures._parameter_constraints.items():
        assert TwoStepFeatureLearner._parameter_constraints[name] is constraints
        assert default_of(TwoStepFeatureLearner, name) == default_of(
            TwoStepFeatures, name
        )


# ------------------------------------------------------------ retired names


def test_solver_ridge_is_retired():
    X, y = make_sphere_regression(n_samples=30)
    with pytest.raises(InvalidParameterError, match="'solver' parameter"):
        PartiallyTrainableRegressor(trainable_proportion=0.0, solver="ridge").fit(X, y)


@pytest.mark.parametrize(
    "cls, retired",
    [
        (TwoStepFeatureLearner, {"ridge_alpha": 1.0}),
        (TwoStepFeatureLearner, {"batch": "fresh"}),
        (TwoStepFeatures, {"batch": "fresh"}),
    ],
)
def test_two_step_retired_names_are_rejected(cls, retired):
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        cls(**retired)
    with pytest.raises(ValueError, match="Invalid parameter"):
        cls().set_params(**retired)


def test_retired_names_are_nowhere():
    for cls in ESTIMATORS.values():
        assert not {"ridge_alpha", "batch"} & set(cls().get_params(deep=False))
    assert not hasattr(sklearn_pt.model_selection, "ProportionCurveResult")
    assert not hasattr(sklearn_pt.spectral, "SoftEdge")
    X, y = make_single_index(60, 5, random_state=0)
    learner = TwoStepFeatureLearner(hidden_layer_sizes=8, alpha=1.0, random_state=0)
    learner.fit(X, y)
    assert learner.alpha_ == 1.0 and not hasattr(learner, "ridge_alpha_")
