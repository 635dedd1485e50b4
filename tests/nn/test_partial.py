import numpy as np
import pytest
import torch
from skorch import NeuralNetRegressor
from skorch.callbacks import EpochScoring

from sklearn_pt.nn import (
    PartiallyTrainableLinear,
    PartiallyTrainableMLP,
    he_normal_init,
    project_to_sphere,
    random_trainable_mask,
    spherical_biased_relu_init,
)


def test_spherical_biased_relu_init():
    g = torch.Generator().manual_seed(0)
    weight, bias = spherical_biased_relu_init(7, 2000, init_scale=3.0, generator=g)
    torch.testing.assert_close(weight.norm(dim=1), torch.ones(2000))
    thresholds = -bias
    assert thresholds.min() >= -3.0 and thresholds.max() <= 3.0
    # Uniform on [-3, 3]: mean 0 and variance 3 (9 / 3), to Monte-Carlo accuracy.
    assert abs(float(thresholds.mean())) < 4 * (3.0 / 2000) ** 0.5
    assert float(thresholds.var()) == pytest.approx(3.0, rel=0.1)
    # Directions are isotropic: the mean direction is near zero.
    assert float(weight.mean(0).norm()) < 4 * (1 / 2000) ** 0.5


def test_he_normal_init_scale():
    weight, bias = he_normal_init(400, 300, generator=torch.Generator().manual_seed(0))
    assert float(weight.var()) == pytest.approx(2 / 400, rel=0.05)
    assert torch.count_nonzero(bias) == 0


@pytest.mark.parametrize(
    "proportion, expected", [(0.0, 0), (0.25, 2), (0.35, 4), (0.5, 5), (1.0, 10)]
)
def test_random_trainable_mask_counts(proportion, expected):
    mask = random_trainable_mask(10, proportion, generator=torch.Generator())
    assert mask.dtype == torch.bool  # counts use round(): halves go to even
    assert int(mask.sum()) == expected


def test_project_to_sphere_keeps_zero_rows():
    x = torch.tensor([[3.0, 4.0], [0.0, 0.0]])
    torch.testing.assert_close(project_to_sphere(x), torch.tensor([[0.6, 0.8], [0, 0]]))


def make_layer(mask):
    g = torch.Generator().manual_seed(0)
    weight = torch.randn(len(mask), 3, generator=g)
    bias = torch.randn(len(mask), generator=g)
    return PartiallyTrainableLinear(weight, bias, torch.tensor(mask)), weight, bias


def test_layer_splits_parameters_and_buffers():
    mask = [True, False, True, False, False]
    layer, weight, bias = make_layer(mask)
    params = dict(layer.named_parameters())
    assert set(params) == {"weight_trainable", "bias_trainable"}
    assert params["weight_trainable"].shape == (2, 3)
    assert {"frozen_weight", "frozen_bias", "trainable_index"} <= set(
        dict(layer.named_buffers())
    )
    torch.testing.assert_close(layer.weight, weight)
    torch.testing.assert_close(layer.bias, bias)
    assert layer.trainable_mask.tolist() == mask
    x = torch.randn(4, 3)
    torch.testing.assert_close(layer(x), x @ weight.T + bias)


def test_layer_gradients_reach_only_trainable_neurons():
    mask = [True, False, True, False, False]
    layer, weight, _ = make_layer(mask)
    layer(torch.randn(6, 3)).square().sum().backward()
    assert layer.weight_trainable.grad is not None
    assert torch.count_nonzero(layer.weight_trainable.grad) > 0
    assert layer.frozen_weight.grad is None
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.5)
    optimizer.step()
    frozen_rows = ~torch.tensor(mask)
    assert torch.equal(layer.weight[frozen_rows], weight[frozen_rows])
    assert not torch.equal(layer.weight[~frozen_rows], weight[~frozen_rows])


def test_layer_weight_is_computed_from_the_parameters_and_differentiable():
    """``weight`` behaves as a parametrised weight: a penalty written on it
    reaches the trainable rows (their own gradient) and nothing else, and it
    follows edits of the parameters."""
    mask = torch.tensor([True, False, True, False, False])
    layer, weight, _ = make_layer(mask.tolist())
    layer.weight.square().sum().backward()
    torch.testing.assert_close(layer.weight_trainable.grad, 2 * weight[mask])
    with torch.no_grad():
        layer.weight_trainable.add_(1.0)
    torch.testing.assert_close(layer.weight[mask], weight[mask] + 1.0)
    assert torch.equal(layer.weight[~mask], weight[~mask])


@pytest.mark.parametrize("mask", [[True] * 4, [False] * 4])
def test_layer_all_or_nothing(mask):
    layer, weight, bias = make_layer(mask)
    x = torch.randn(2, 3)
    torch.testing.assert_close(layer(x), x @ weight.T + bias)
    assert layer.weight_trainable.shape[0] == sum(mask)


def test_layer_rejects_inconsistent_shapes():
    with pytest.raises(ValueError, match="same neurons"):
        PartiallyTrainableLinear(
            torch.zeros(3, 2), torch.zeros(3), torch.ones(4, dtype=bool)
        )


def test_mlp_structure_and_reproducibility():
    kwargs = dict(hidden_layer_sizes=(20, 10), trainable_proportion=(0.5, 0.2))
    net = PartiallyTrainableMLP(4, 2, random_state=0, **kwargs)
    again = PartiallyTrainableMLP(4, 2, random_state=0, **kwargs)
    other = PartiallyTrainableMLP(4, 2, random_state=1, **kwargs)
    counts = [int(layer.trainable_mask.sum()) for layer in net.hidden_layers]
    assert counts == [10, 2]
    for a, b in zip(
        net.state_dict().values(), again.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    assert not torch.equal(net.hidden_layers[0].weight, other.hidden_layers[0].weight)
    assert net(torch.randn(3, 4)).shape == (3, 2)
    torch.testing.assert_close(net.hidden_layers[0].weight.norm(dim=1), torch.ones(20))


def test_mlp_explicit_masks_and_bad_mask_count():
    masks = [np.array([True, False, False])]
    net = PartiallyTrainableMLP(2, hidden_layer_sizes=(3,), trainable_masks=masks)
    assert net.hidden_layers[0].trainable_mask.tolist() == [True, False, False]
    with pytest.raises(ValueError, match="one mask per hidden layer"):
        PartiallyTrainableMLP(2, hidden_layer_sizes=(3, 3), trainable_masks=masks)


def test_mlp_state_dict_round_trip():
    net = PartiallyTrainableMLP(
        3, hidden_layer_sizes=(8,), trainable_proportion=0.5, random_state=0
    )
    other = PartiallyTrainableMLP(
        3, hidden_layer_sizes=(8,), trainable_proportion=0.5, random_state=0
    )
    with torch.no_grad():
        net.readout.weight.add_(1.0)
    other.load_state_dict(net.state_dict())
    x = torch.randn(5, 3)
    torch.testing.assert_close(net(x), other(x))


def test_works_unchanged_inside_skorch():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sin(3 * X[:, :1]).astype(np.float32)
    net = NeuralNetRegressor(
        PartiallyTrainableMLP,
        module__n_features=4,
        module__hidden_layer_sizes=(64,),
        module__trainable_proportion=0.25,
        module__random_state=0,
        optimizer=torch.optim.Adam,
        lr=1e-2,
        max_epochs=15,
        batch_size=64,
        train_split=None,
        callbacks=[("r2", EpochScoring("r2", on_train=True))],
        verbose=0,
    )
    initial = PartiallyTrainableMLP(
        4, hidden_layer_sizes=(64,), trainable_proportion=0.25, random_state=0
    ).hidden_layers[0]
    before = initial.weight
    net.fit(X, y)
    layer = net.module_.hidden_layers[0]
    assert torch.equal(layer.trainable_mask, initial.trainable_mask)
    losses = net.history[:, "train_loss"]
    assert losses[-1] < 0.5 * losses[0]
    assert net.history[-1, "r2"] > net.history[0, "r2"]
    frozen = ~layer.trainable_mask
    assert torch.equal(layer.weight[frozen], before[frozen])
    assert not torch.equal(layer.weight[~frozen], before[~frozen])
    assert net.predict(X).shape == (300, 1)


def test_mlp_first_layer_init():
    weight = torch.eye(3)
    bias = torch.tensor([0.5, -0.5, 0.0])
    net = PartiallyTrainableMLP(
        3, hidden_layer_sizes=(3,), first_layer_init=(weight, bias), random_state=0
    )
    torch.testing.assert_close(net.hidden_layers[0].weight, weight)
    torch.testing.assert_close(net.hidden_layers[0].bias, bias)
