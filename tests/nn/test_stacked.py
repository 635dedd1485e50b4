"""The stacked module against the networks it is stacked from."""

import pytest
import torch

from sklearn_pt._training import FixedEntries
from sklearn_pt.nn import PartiallyTrainableMLP
from sklearn_pt.nn._stacked import StackedPartiallyTrainableMLP, append_ones


def seeded():
    return torch.Generator().manual_seed(0)


def networks(proportions=(0.0, 0.4, 1.0), sizes=(12, 7), n_outputs=2):
    return [
        PartiallyTrainableMLP(
            4,
            n_outputs,
            hidden_layer_sizes=sizes,
            trainable_proportion=p,
            random_state=seed,
            dtype=torch.float64,
        )
        for seed, p in enumerate(proportions)
    ]


def test_forward_matches_each_network():
    nets = networks()
    batch = StackedPartiallyTrainableMLP.from_modules(nets)
    x = torch.randn(3, 9, 4, generator=seeded(), dtype=torch.float64)
    out = batch(x)
    assert out.shape == (3, 9, 2) and batch.n_models == 3
    for k, net in enumerate(nets):
        torch.testing.assert_close(out[k], net(x[k]), rtol=1e-12, atol=1e-12)
    for mask, depth in zip(batch.trainable_masks, range(2), strict=True):
        for k, net in enumerate(nets):
            assert torch.equal(mask[k], net.hidden_layers[depth].trainable_mask)


@pytest.mark.parametrize("max_elements", [2**22, 20])
def test_predict_matches_forward(max_elements):
    """The no-autograd evaluation in reusable buffers is the forward pass,
    also chunked (20 elements: one row of the widest layer per chunk, the
    last chunk shorter) and on inputs shared by all networks."""
    nets = networks()
    batch = StackedPartiallyTrainableMLP.from_modules(nets)
    x = torch.randn(3, 9, 4, generator=seeded(), dtype=torch.float64)
    for inputs in (x, x[0].expand(3, -1, -1)):
        out = batch.predict(append_ones(inputs), max_elements=max_elements)
        assert out.shape == (3, 9, 2) and not out.requires_grad
        for k, net in enumerate(nets):
            torch.testing.assert_close(out[k], net(inputs[k]), rtol=1e-12, atol=1e-12)


def test_squared_weight_norms_count_trainable_rows_only():
    nets = networks()
    batch = StackedPartiallyTrainableMLP.from_modules(nets)
    expected = torch.stack(
        [sum(p.square().sum() for p in net.parameters() if p.ndim >= 2) for net in nets]
    )
    torch.testing.assert_close(batch.squared_weight_norms(), expected)


def test_restore_keeps_frozen_rows_and_stopped_models_bitwise():
    """Adam with weight decay and a zero gradient still moves every weight;
    the training's FixedEntries (from the module's update masks) must undo
    that for frozen rows and stopped networks."""
    batch = StackedPartiallyTrainableMLP.from_modules(networks())
    optimizer = torch.optim.Adam(batch.parameters(), lr=0.1, weight_decay=1.0)
    fixed = FixedEntries(batch.parameters(), batch.update_masks(), batch.n_models)
    x = torch.randn(3, 5, 4, generator=seeded(), dtype=torch.float64)

    def step():
        optimizer.zero_grad()
        batch(x).square().sum().backward()
        optimizer.step()
        fixed.restore_()

    before = [w.detach().clone() for w in batch.hidden_weights]
    step()
    for weight, start, mask in zip(
        batch.hidden_weights, before, batch.trainable_masks, strict=True
    ):
        assert torch.equal(weight[~mask], start[~mask])
        assert not torch.equal(weight[mask], start[mask])
    masks = [mask.clone() for mask in batch.trainable_masks]
    fixed.stop([1])
    stopped = [p.detach()[1].clone() for p in batch.parameters()]
    running = [p.detach()[2].clone() for p in batch.parameters()]
    for _ in range(3):
        step()
    for param, at_stop, other in zip(batch.parameters(), stopped, running, strict=True):
        assert torch.equal(param[1], at_stop)
        assert not torch.equal(param[2], other)
    for mask, before in zip(batch.trainable_masks, masks, strict=True):
        assert torch.equal(mask, before)  # stopping does not change the masks


def test_copy_to_modules_round_trip():
    nets = networks()
    batch = StackedPartiallyTrainableMLP.from_modules(nets)
    with torch.no_grad():  # move the trainable entries only, as training does
        for weight, bias, mask in zip(
            batch.hidden_weights,
            batch.hidden_biases,
            batch.trainable_masks,
            strict=True,
        ):
            weight.add_(mask.unsqueeze(2))
            bias.add_(mask)
        batch.readout_weight.add_(1.0)
        batch.readout_bias.add_(1.0)
    targets = networks()
    batch.copy_to_modules(targets)
    x = torch.randn(6, 4, generator=seeded(), dtype=torch.float64)
    for k, (net, target) in enumerate(zip(nets, targets, strict=True)):
        torch.testing.assert_close(target(x), batch(x.expand(3, -1, -1))[k])
        for layer, moved in zip(net.hidden_layers, target.hidden_layers, strict=True):
            frozen = ~layer.trainable_mask
            assert torch.equal(moved.weight[frozen], layer.weight[frozen])


def test_shapes_must_agree():
    mixed = networks(proportions=(0.5,)) + networks(proportions=(0.5,), sizes=(12,))
    with pytest.raises(ValueError, match="same layer sizes"):
        StackedPartiallyTrainableMLP.from_modules(mixed)
    with pytest.raises(ValueError, match="one entry per hidden layer"):
        StackedPartiallyTrainableMLP(
            [torch.zeros(1, 2, 2)], [], [], torch.zeros(1, 1, 2), torch.zeros(1, 1)
        )


def test_cache_blocks_follow_the_module_constant_on_cpu(monkeypatch):
    """block_bytes="auto" reads CACHE_BLOCK_BYTES at each call on a CPU: with
    it at 1 byte the last layer runs one network at a time (a one-network
    activations buffer) and gives the gradients of the unblocked step."""
    import sklearn_pt.nn._stacked as stacked

    nets = networks(proportions=(0.0, 0.4, 1.0), sizes=(12,), n_outputs=1)
    x = append_ones(torch.randn(3, 9, 4, generator=seeded(), dtype=torch.float64))
    y = torch.randn(3, 9, 1, generator=seeded(), dtype=torch.float64)
    results = []
    for block_bytes in (None, 1):
        monkeypatch.setattr(stacked, "CACHE_BLOCK_BYTES", block_bytes)
        batch = StackedPartiallyTrainableMLP.from_modules(nets)
        workspace = stacked.Workspace()
        losses = batch.squared_error_gradients_(x, y, workspace=workspace)
        hidden = workspace.buffer("top_hidden", (1, 9, 12), like=batch.readout)
        results.append((losses, [p.grad for p in batch.parameters()], hidden))
    (unblocked, grads, whole), (blocked, block_grads, one) = results
    assert whole.untyped_storage().nbytes() == 3 * 9 * 12 * 8
    assert one.untyped_storage().nbytes() == 9 * 12 * 8
    torch.testing.assert_close(blocked, unblocked, rtol=1e-12, atol=1e-14)
    for grad, block_grad in zip(grads, block_grads, strict=True):
        torch.testing.assert_close(block_grad, grad, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "proportions, sizes, n_outputs",
    [
        ((0.0, 0.4, 1.0), (12,), 1),  # one product for the last layer
        ((0.0, 0.4, 1.0), (12, 7), 2),  # backpropagation through two layers
        (((0.0, 0.5), (0.0, 1.0)), (12, 7), 1),  # only the last layer trains
        (((0.5, 0.0), (1.0, 0.0)), (12, 7), 1),  # last layer frozen everywhere
        ((0.0, 0.0), (12, 7), 3),  # random features: the readout only
    ],
)
@pytest.mark.parametrize(
    "max_elements, weight_decay, block_bytes",
    [(2**22, 0.0, None), (2**22, 0.3, 1), (1, 0.3, 200)],
)
def test_squared_error_gradients_match_autograd(
    proportions, sizes, n_outputs, max_elements, weight_decay, block_bytes
):
    """The hand-derived backward pass gives autograd's losses and gradients
    (with the optimiser's weight decay added to every weight), also when it
    splits the rows into chunks (max_elements=1: one row at a time) and the
    networks into cache blocks (block_bytes=1: one network at a time; 200
    bytes with one row: blocks of 2 and 1 of the 3 networks); a layer frozen
    in every network gets no gradient at all."""
    nets = networks(proportions=proportions, sizes=sizes, n_outputs=n_outputs)
    batch = StackedPartiallyTrainableMLP.from_modules(nets)
    generator = seeded()
    x = torch.randn(len(nets), 9, 4, generator=generator, dtype=torch.float64)
    y = torch.randn(len(nets), 9, n_outputs, generator=generator, dtype=torch.float64)

    expected = 0.5 * (batch(x) - y).square().mean(dim=(1, 2))
    # the optimiser's L2 weight decay: every weight, frozen or not, no bias
    weights = [*batch.hidden_weights, batch.readout_weight]
    penalty = sum(weight.square().sum() for weight in weights)
    penalty = 0.5 * weight_decay * penalty
    (expected.sum() + penalty).backward()
    reference = [p.grad.clone() for p in batch.parameters()]
    batch.zero_grad(set_to_none=True)
    for _ in range(2):  # the second call reuses the buffers and .grad tensors
        losses = batch.squared_error_gradients_(
            append_ones(x),
            y,
            weight_decay=weight_decay,
            max_elements=max_elements,
            block_bytes=block_bytes,
        )
    torch.testing.assert_close(losses, expected.detach(), rtol=1e-12, atol=1e-14)
    for name, param in batch.named_parameters():
        grad = reference.pop(0)
        if param.grad is None:
            depth = int(name.rsplit(".", 1)[-1])
            assert not batch.trainable_masks[depth].any(), name
            continue
        torch.testing.assert_close(param.grad, grad, rtol=1e-12, atol=1e-14)


def test_penalty_scales_are_each_networks_and_weight_the_norms(monkeypatch):
    """The stacked penalty is each network's: the mean squares of every
    weight's inputs (shared or per-network inputs, in chunks of rows), and
    the scaled squared norms and their gradient."""
    from sklearn_pt.nn import _partial

    nets = networks()
    batch = StackedPartiallyTrainableMLP.from_modules(nets)
    x = 2.0 * torch.randn(3, 9, 4, generator=seeded(), dtype=torch.float64)
    for shared in (False, True):
        inputs = x[0].expand(3, -1, -1) if shared else x
        given = append_ones(x[0] if shared else x)
        # One chunk of rows, or several (the last shorter): 4 rows of the
        # plain networks, 1 row of the widest layer for the stacked one.
        for rows, elements in ((8_192, 2**22), (4, 36)):
            monkeypatch.setattr(_partial, "PENALTY_SCALE_ROWS", rows)
            scales = batch.penalty_scales(given, max_elements=elements)
            each = [net.penalty_scales(inputs[k]) for k, net in enumerate(nets)]
            for k, pairs in enumerate(each):
                expected = torch.tensor([s for _, s in pairs], dtype=torch.float64)
                got = torch.stack([s[k] for s in scales])
                torch.testing.assert_close(got, expected, rtol=1e-12, atol=0)
    norms = torch.stack(
        [
            sum(scale * p.square().sum() for p, scale in pairs if p.numel())
            for pairs in each
        ]
    )
    torch.testing.assert_close(batch.squared_weight_norms(scales), norms)
    # add_weight_decay_ with per-network coefficients is that penalty's gradient.
    for param in batch.parameters():
        param.grad = torch.zeros_like(param)
    batch.add_weight_decay_([0.3 * s for s in scales])
    penalty = 0.15 * batch.squared_weight_norms(scales).sum()
    grads = torch.autograd.grad(penalty, [*batch.layers, batch.readout])
    masks = [m.unsqueeze(1) for m in batch.trainable_masks]
    for param, grad, mask in zip(batch.layers, grads[:-1], masks, strict=True):
        torch.testing.assert_close(param.grad[:, :-1] * mask, grad[:, :-1])
    torch.testing.assert_close(batch.readout.grad, grads[-1])


@pytest.mark.parametrize("activation", ["gelu", "quadratic", "custom"])
def test_first_layer_networks_of_several_widths_on_shared_data(activation):
    """Networks of widths 1, 3 and 4 stacked (padded to 4) on one shared data
    set: each network's loss and gradient are its own, as autograd gives
    them network by network, in the one-product path (a named activation)
    and the general one (a callable); the padded rows get no gradient; and
    GD with one step size per network takes each network's own steps."""
    from sklearn_pt._training import StackedStepper
    from sklearn_pt.nn import ACTIVATIONS, FirstLayerNetwork
    from sklearn_pt.nn._stacked import StackedFirstLayerNetwork

    function = torch.sin if activation == "custom" else ACTIVATIONS[activation]
    generator = seeded()
    x = torch.randn(30, 5, generator=generator, dtype=torch.float64)
    y = torch.randn(30, generator=generator, dtype=torch.float64)
    nets = [
        FirstLayerNetwork(
            torch.randn(m, 5, generator=generator, dtype=torch.float64),
            torch.randn(m, generator=generator, dtype=torch.float64),
            function,
        )
        for m in (1, 3, 4)
    ]
    stacked = StackedFirstLayerNetwork.from_networks(nets)
    assert stacked.weight.shape == (3, 4, 5) and stacked.widths.tolist() == [1, 3, 4]
    shared_x, shared_y = x.expand(3, *x.shape), y.expand(3, *y.shape)
    losses = stacked.squared_error_gradients_(shared_x, shared_y, weight_decay=0.1)
    for k, net in enumerate(nets):
        loss = 0.5 * (net(x) - y).square().mean()
        (loss + 0.05 * net.weight.square().sum()).backward()
        m = net.weight.shape[0]
        torch.testing.assert_close(losses[k], loss.detach(), rtol=1e-12, atol=0)
        torch.testing.assert_close(stacked.weight.grad[k, :m], net.weight.grad)
        assert not stacked.weight.grad[k, m:].any()
    torch.testing.assert_close(stacked(shared_x), torch.stack([n(x) for n in nets]))

    rates = [0.3, 0.1, 0.05]
    stepper = StackedStepper(
        stacked, x, y, solver="gd", learning_rate=rates, generators=[None] * 3
    )
    for _ in range(3):
        stepper.step(torch.ones(3, dtype=torch.bool))
    for k, (net, rate) in enumerate(zip(nets, rates, strict=True)):
        m = net.weight.shape[0]
        for _ in range(3):
            net.weight.grad = None
            (0.5 * (net(x) - y).square().mean()).backward()
            with torch.no_grad():
                net.weight -= rate * net.weight.grad
        torch.testing.assert_close(stacked.weight.detach()[k, :m], net.weight.detach())
        assert not stacked.weight.detach()[k, m:].any()


def test_mixed_widths_need_zero_second_layers_on_the_padding():
    from sklearn_pt.nn._stacked import StackedFirstLayerNetwork

    weight = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match="from_networks"):
        StackedFirstLayerNetwork(weight, torch.ones(3), torch.tanh, widths=[2, 3])
    with pytest.raises(ValueError, match="widths must hold 2 widths"):
        StackedFirstLayerNetwork(weight, torch.ones(3), torch.tanh, widths=[4, 3])
