"""The torch layer stands on its own: every torch module is in sklearn_pt.nn,
which imports nothing from scikit-learn or the estimators."""

import subprocess
import sys

import pytest
import torch

import sklearn_pt.nn as nn


def test_importing_nn_loads_no_scikit_learn_and_no_estimator_code():
    code = (
        "import sys, sklearn_pt.nn; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'"
        " or (m.startswith('sklearn_pt.') and not m.startswith('sklearn_pt.nn')"
        " and m != 'sklearn_pt._config')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_every_public_module_class_is_a_torch_module():
    classes = [getattr(nn, name) for name in nn.__all__]
    protocols = {nn.StackedModule, nn.HandDerivedGradients}
    classes = [c for c in classes if isinstance(c, type) and c not in protocols]
    assert {c.__name__ for c in classes} >= {
        "FirstLayerNetwork",
        "FeatureMap",
        "TwoLayerNetwork",
        "PartiallyTrainableMLP",
        "StackedPartiallyTrainableMLP",
        "StackedFirstLayerNetwork",
        "StackedTwoLayerNetwork",
    }
    assert all(issubclass(c, torch.nn.Module) for c in classes)


def test_make_generator_accepts_a_generator_and_keeps_sklearn_seeds():
    from sklearn.utils import check_random_state

    from sklearn_pt.nn._random import make_generator

    generator = torch.Generator().manual_seed(3)
    assert make_generator(generator) is generator
    seed = int(check_random_state(7).randint(2**31 - 1))
    expected = torch.rand(3, generator=torch.Generator().manual_seed(seed))
    torch.testing.assert_close(torch.rand(3, generator=make_generator(7)), expected)
    with pytest.raises(ValueError, match="cannot be used to seed"):
        make_generator("seven")


def test_modules_take_torch_factory_keywords():
    """device/dtype/generator as torch's factory keywords: the draws are made
    on the CPU from the generator, so the network is the same on any device."""
    kwargs = dict(hidden_layer_sizes=(6,), trainable_proportion=0.5)
    a = nn.PartiallyTrainableMLP(
        3,
        dtype=torch.float64,
        device="cpu",
        random_state=torch.Generator().manual_seed(1),
        **kwargs,
    )
    b = nn.PartiallyTrainableMLP(
        3, dtype=torch.float64, random_state=torch.Generator().manual_seed(1), **kwargs
    )
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert p.device.type == "cpu" and p.dtype == torch.float64
        assert torch.equal(p, q)
    if torch.cuda.is_available():
        c = nn.PartiallyTrainableMLP(
            3,
            dtype=torch.float64,
            device="cuda",
            random_state=torch.Generator().manual_seed(1),
            **kwargs,
        )
        for p, q in zip(c.parameters(), b.parameters(), strict=True):
            assert p.device.type == "cuda" and torch.equal(p.cpu(), q)


def test_every_stacked_module_has_the_stacked_protocol():
    """The three stacked modules are StackedModules (what StackedStepper
    trains); the two with a hand-derived pass say so by their type."""
    nets = [nn.PartiallyTrainableMLP(3, hidden_layer_sizes=(4,)) for _ in range(2)]
    weight, a = torch.randn(2, 4, 3), torch.ones(4)
    modules = [
        nn.StackedPartiallyTrainableMLP.from_modules(nets),
        nn.StackedFirstLayerNetwork(weight, a, torch.tanh),
        nn.StackedTwoLayerNetwork(weight, torch.ones(2, 4), "tanh", None),
    ]
    assert all(isinstance(m, nn.StackedModule) for m in modules)
    assert [m.n_models for m in modules] == [2, 2, 2]
    assert [isinstance(m, nn.HandDerivedGradients) for m in modules] == [
        True,
        True,
        False,
    ]
    assert not isinstance(nets[0], nn.StackedModule)
