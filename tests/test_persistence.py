"""Persistence of every fitted estimator: pickle and joblib round-trips,
CPU-only pickled state, loading a GPU model where there is no GPU, and safe
``torch.load`` calls in the library."""

import ast
import pickle
from pathlib import Path

import joblib
import numpy as np
import pytest
import torch
from sklearn.base import clone

import sklearn_pt
from sklearn_pt._base import TorchEstimatorMixin
from sklearn_pt.exceptions import DeviceFallbackWarning
from tests.test_bad_input import (
    ESTIMATORS,
    estimator_id,
    fit_estimator,
    make_data,
    output_of,
)

all_estimators = pytest.mark.parametrize("estimator", ESTIMATORS, ids=estimator_id)
torch_estimators = pytest.mark.parametrize(
    "estimator",
    [e for e in ESTIMATORS if isinstance(e, TorchEstimatorMixin)],
    ids=estimator_id,
)


def tensors_in(obj, seen=None):
    """Every torch tensor reachable from ``obj`` through containers, module
    parameters and buffers, and object attributes."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from tensors_in(value, seen)
    elif isinstance(obj, list | tuple | set | frozenset):
        for value in obj:
            yield from tensors_in(value, seen)
    elif isinstance(obj, torch.nn.Module):
        for tensor in (*obj.parameters(), *obj.buffers()):
            yield from tensors_in(tensor, seen)
        yield from tensors_in(vars(obj), seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        yield from tensors_in(vars(obj), seen)


def test_tensors_in_finds_module_tensors_inside_containers():
    module = torch.nn.Linear(2, 3)
    found = list(tensors_in({"a": [module], "b": (torch.zeros(1),)}))
    assert len(found) == 3  # weight, bias, the zeros


@all_estimators
def test_pickle_and_joblib_round_trips(estimator, tmp_path):
    X, y = make_data()
    fitted = fit_estimator(clone(estimator), X, y)
    expected = output_of(fitted, X)
    restored = pickle.loads(pickle.dumps(fitted))
    assert output_of(restored, X).tobytes() == expected.tobytes()
    joblib.dump(fitted, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib")
    assert output_of(loaded, X).tobytes() == expected.tobytes()
    assert loaded.get_params() == fitted.get_params()


@all_estimators
def test_pickled_state_holds_only_cpu_tensors(estimator):
    X, y = make_data()
    fitted = fit_estimator(clone(estimator), X, y)
    state = fitted.__getstate__()
    tensors = list(tensors_in(state))
    if isinstance(estimator, TorchEstimatorMixin):
        assert tensors, "the walk must reach the fitted module's tensors"
    assert all(t.device.type == "cpu" for t in tensors)
    # The pickle itself holds the same state.
    restored = pickle.loads(pickle.dumps(fitted))
    assert all(t.device.type == "cpu" for t in tensors_in(vars(restored)))


@torch_estimators
def test_model_from_a_missing_gpu_loads_on_the_cpu(estimator, no_cuda):
    X, y = make_data()
    fitted = fit_estimator(clone(estimator), X, y)
    expected = output_of(fitted, X)
    fitted.device_ = torch.device("cuda:0")  # as if it had been fitted there
    with pytest.warns(DeviceFallbackWarning, match=r"fitted on cuda:0.*on the CPU"):
        restored = pickle.loads(pickle.dumps(fitted))
    assert restored.device_ == torch.device("cpu")
    assert output_of(restored, X).tobytes() == expected.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize(
    "estimator",
    [e for e in ESTIMATORS if "device" in e.get_params()],
    ids=estimator_id,
)
def test_gpu_model_pickles_on_cpu_and_loads_without_cuda(estimator, monkeypatch):
    X, y = make_data()
    params = {"device": "cuda"}
    if "dtype" in estimator.get_params():
        params["dtype"] = "float64"
    fitted = fit_estimator(clone(estimator).set_params(**params), X, y)
    on_gpu = output_of(fitted, X)
    if isinstance(fitted, TorchEstimatorMixin):
        assert fitted.device_.type == "cuda"
        live = [t for t in tensors_in(vars(fitted)) if t.device.type == "cuda"]
        assert live, "the fitted model must live on the GPU"
    assert all(t.device.type == "cpu" for t in tensors_in(fitted.__getstate__()))
    payload = pickle.dumps(fitted)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    if isinstance(fitted, TorchEstimatorMixin):
        with pytest.warns(DeviceFallbackWarning, match="loaded on the CPU"):
            restored = pickle.loads(payload)
        assert restored.device_ == torch.device("cpu")
        assert all(t.device.type == "cpu" for t in tensors_in(vars(restored)))
    else:
        restored = pickle.loads(payload)
    # GPU and CPU kernels agree up to float64 rounding, not bitwise.
    np.testing.assert_allclose(output_of(restored, X), on_gpu, rtol=1e-9, atol=1e-12)


def torch_load_calls(source: str):
    """``torch.load(...)`` calls in Python source, as AST nodes."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "load"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "torch"
        ):
            yield node


def test_torch_load_call_finder_sees_calls():
    source = "import torch\ntorch.load(f, weights_only=True)\ntorch.load(g)\n"
    assert [call.lineno for call in torch_load_calls(source)] == [2, 3]


def test_every_torch_load_in_the_library_passes_weights_only_true():
    package = Path(sklearn_pt.__file__).parent
    unsafe = []
    for path in sorted(package.rglob("*.py")):
        for call in torch_load_calls(path.read_text()):
            safe = any(
                k.arg == "weights_only"
                and isinstance(k.value, ast.Constant)
                and k.value.value is True
                for k in call.keywords
            )
            if not safe:
                unsafe.append(f"{path.relative_to(package)}:{call.lineno}")
    assert not unsafe, f"torch.load without weights_only=True: {unsafe}"
