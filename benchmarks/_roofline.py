"""A roofline for the benchmarks: counted work against measured limits.

For a callable (one whole strategy of a benchmark, e.g. a stacked sweep) this
counts, in one run of it:

* the matrix-product flops, with torch's
  :class:`~torch.utils.flop_counter.FlopCounterMode` (products only: the
  elementwise passes are counted as bytes, not flops);
* the bytes its aten operations read and write, with a
  :class:`~torch.utils._python_dispatch.TorchDispatchMode` that adds up the
  sizes of every tensor operand of every aten op (inputs read, outputs
  written; an in-place op's tensor both). Views move nothing and are skipped;
  an expanded operand counts its distinct elements once. Each op's operands
  count once per op, as if no cache kept them between ops: an upper bound of
  the traffic to memory, not a measurement of it;
* the shapes of its matrix products, which are then replayed alone on random
  tensors of the same shapes and strides to measure this machine's product
  rate *for those shapes*, in the same run;

and it measures the memory bandwidth of this machine in the same run (an
add, an in-place multiply and a sum over buffers the size of the largest
operand seen, and over 256 MiB buffers). The roofline limit of the callable
is ``max(flops / product rate, bytes / bandwidth)``, taking the highest of
the measured bandwidths (the tightest limit), and a strategy's *fraction of
the roofline* is that limit over its measured wall time: 1 would be a code
doing nothing but its products at their own speed, or nothing but streaming
its operands once.

On a GPU, :func:`published_limits` gives the limits from the vendor's
datasheet instead (see ``benchmarks/README.md``).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode

aten = torch.ops.aten
PRODUCTS = {
    aten.mm.default,
    aten.mm.out,
    aten.bmm.default,
    aten.bmm.out,
    aten.addmm.default,
    aten.addmm.out,
    aten.addmm_.default,
    aten.baddbmm.default,
    aten.baddbmm.out,
    aten.baddbmm_.default,
    aten.addmv.default,
    aten.addmv.out,
    aten.mv.default,
}


def distinct_bytes(tensor: torch.Tensor) -> int:
    """Bytes of the distinct elements of ``tensor`` (a stride-0, expanded,
    dimension counts once)."""
    elements = 1
    for size, stride in zip(tensor.shape, tensor.stride(), strict=True):
        if stride != 0:
            elements *= size
    return elements * tensor.element_size() if tensor.numel() else 0


def _tensors(value) -> list[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


NO_COPY = {aten._unsafe_view.default, aten._reshape_alias.default}


def _is_view(func) -> bool:
    """Whether ``func`` returns an alias of an input that it does not write
    (a view: no bytes move), or is a reshape that never copies."""
    return func in NO_COPY or any(
        ret.alias_info is not None and not ret.alias_info.is_write
        for ret in func._schema.returns
    )


@dataclass
class Counts:
    """What one run of a callable did."""

    flops: int = 0
    bytes: int = 0
    largest_operand: int = 0
    product_bytes: int = 0
    n_ops: int = 0
    bytes_by_op: Counter = field(default_factory=Counter)
    products: Counter = field(default_factory=Counter)


class _OperandBytes(TorchDispatchMode):
    """Adds up the operand sizes of every aten op run under it, and records
    the matrix products' shapes."""

    def __init__(self, counts: Counts) -> None:
        super().__init__()
        self.counts = counts

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if _is_view(func):
            return out
        self.counts.n_ops += 1
        written_args = {
            argument.name
            for argument in func._schema.arguments
            if argument.alias_info is not None and argument.alias_info.is_write
        }
        # Inputs are read; an out= argument is only written, an in-place
        # op's self is read, and written (as the op's output).
        read = _tensors(args) + [
            t
            for name, value in kwargs.items()
            if name not in written_args
            for t in _tensors(value)
        ]
        written = _tensors(out)
        sizes = [distinct_bytes(t) for t in read + written]
        total = sum(sizes)
        self.counts.bytes += total
        self.counts.largest_operand = max([self.counts.largest_operand, *sizes])
        self.counts.bytes_by_op[str(func.overloadpacket.__name__)] += total
        if func in PRODUCTS:
            self.counts.product_bytes += total
            key = (
                func.overloadpacket.default,  # an out= product replayed without
                tuple(
                    (tuple(a.shape), tuple(a.stride()), a.dtype, str(a.device))
                    if isinstance(a, torch.Tensor)
                    else a
                    for a in args
                ),
            )
            self.counts.products[key] += 1
        return out


def count(fn) -> tuple[Counts, object]:
    """Run ``fn()`` once, counting its product flops and operand bytes;
    return the counts and what ``fn`` returned."""
    counts = Counts()
    flop_counter = FlopCounterMode(display=False)
    with flop_counter, _OperandBytes(counts):
        result = fn()
    counts.flops = flop_counter.get_total_flops()
    return counts, result


def _replay_args(spec, generator):
    args = []
    for a in spec:
        if isinstance(a, tuple) and len(a) == 4 and isinstance(a[2], torch.dtype):
            shape, stride, dtype, device = a
            size = 1 + sum((s - 1) * st for s, st in zip(shape, stride, strict=True))
            base = torch.rand(max(size, 1), generator=generator, dtype=dtype)
            args.append(base.to(device).as_strided(shape, stride))
        else:
            args.append(a)
    return args


def _median_seconds(fn, device: str, *, min_time: float = 0.02) -> float:
    fn()
    calls = 1
    while True:
        _sync(device)
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        _sync(device)
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        calls *= 4
    samples = []
    for _ in range(3):
        _sync(device)
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        _sync(device)
        samples.append((time.perf_counter() - start) / calls)
    return sorted(samples)[1]


def _sync(device: str) -> None:
    if str(device).startswith("cuda") and torch.cuda.is_available():
        torch.cuda.synchronize()


def product_rate(counts: Counts, device: str = "cpu") -> float:
    """This machine's rate, in flop/s, for the products ``counts`` recorded:
    each distinct shape replayed alone, weighted by how often it ran (the
    time the products alone would take, all together)."""
    generator = torch.Generator().manual_seed(0)
    total_flops = total_seconds = 0.0
    for (func, spec), times in counts.products.items():
        args = _replay_args(spec, generator)
        flop_counter = FlopCounterMode(display=False)
        with flop_counter:
            func(*args)
        flops = flop_counter.get_total_flops()
        if flops == 0:
            continue
        total_flops += flops * times
        seconds = _median_seconds(lambda f=func, a=args: f(*a), device)
        total_seconds += seconds * times
    return total_flops / total_seconds if total_seconds else float("nan")


def bandwidths(largest_operand: int, device: str = "cpu") -> dict[str, float]:
    """Bytes/s of three memory-bound passes, counted as :func:`count` counts
    them, on float32 buffers of ``largest_operand`` bytes (the working set of
    the counted code) and of 256 MiB: ``torch.add(a, b, out=c)`` (3 buffers
    per call), an in-place ``a.mul_(1.0)`` (read and written) and ``a.sum()``
    (read)."""
    rates = {}
    for size_label, n_bytes in (
        ("working set", largest_operand),
        ("256 MiB", 256 * 2**20),
    ):
        n = max(n_bytes // 4, 1024)
        for name, rate in _pass_rates(n, device).items():
            rates[f"{name} {size_label}"] = rate
    return rates


def _pass_rates(n: int, device: str) -> dict[str, float]:
    a, b, c = (torch.rand(n, device=device) for _ in range(3))
    passes = {
        "add": (lambda: torch.add(a, b, out=c), 3),
        "mul_": (lambda: a.mul_(1.0), 2),
        "sum": (lambda: a.sum(), 1),
    }
    return {
        name: buffers * 4 * n / _median_seconds(fn, device)
        for name, (fn, buffers) in passes.items()
    }


@dataclass
class Limits:
    """A machine's limits for one strategy's products and passes."""

    flops_per_s: float
    bytes_per_s: float
    source: str


def measured_limits(counts: Counts, device: str = "cpu") -> Limits:
    """This machine's product rate for ``counts``' shapes and its best
    measured bandwidth, measured now."""
    rate = product_rate(counts, device)
    bws = bandwidths(counts.largest_operand, device)
    best = max(bws, key=bws.get)
    text = ", ".join(f"{k} {v / 1e9:.0f}" for k, v in bws.items())
    return Limits(
        rate,
        bws[best],
        f"measured now: products {rate / 1e9:.0f} GFLOP/s for these shapes; "
        f"GB/s {text} (the roofline takes {best})",
    )


# Published dense limits of one H200 SXM (NVIDIA H200 Tensor Core GPU
# datasheet, 2024): FP32 67 TFLOPS (no tensor cores), TF32 tensor core
# 989 TFLOPS *with sparsity*, i.e. 494.5 dense; HBM3e 4.8 TB/s.
H200 = {
    "fp32": Limits(67e12, 4.8e12, "H200 SXM datasheet: FP32 67 TFLOPS, 4.8 TB/s"),
    "tf32": Limits(494.5e12, 4.8e12, "H200 SXM datasheet: TF32 dense 494.5 TFLOPS"),
}


def limit_seconds(counts: Counts, limits: Limits) -> float:
    """``max(flops / rate, bytes / bandwidth)``."""
    return max(counts.flops / limits.flops_per_s, counts.bytes / limits.bytes_per_s)


def serial_limit_seconds(counts: Counts, limits: Limits) -> float:
    """``flops / rate + (bytes outside the products) / bandwidth``: the
    limit when the passes between the products cannot overlap them (one CPU
    thread does one thing at a time)."""
    other = counts.bytes - counts.product_bytes
    return counts.flops / limits.flops_per_s + other / limits.bytes_per_s


def print_roofline(
    rows: dict[str, tuple[Counts, Limits, float]],
    *,
    steps: dict[str, int] | None = None,
) -> dict[str, float]:
    """Print one row per strategy (counted work, its limits, its measured
    median wall time and the fraction of the roofline it reaches) and return
    the fractions. ``steps``: optimiser steps of a strategy, to print the
    work per step too."""
    steps = steps or {}
    print(
        f"{'strategy':14s} {'GFLOP':>7s} {'GB moved':>9s} {'product':>9s} "
        f"{'bandwidth':>10s} {'limit s':>8s} {'measured s':>10s} {'fraction':>8s} "
        f"{'serial':>7s}"
    )
    fractions = {}
    for name, (counts, limits, measured) in rows.items():
        limit = limit_seconds(counts, limits)
        fractions[name] = limit / measured
        serial = serial_limit_seconds(counts, limits) / measured
        print(
            f"{name:14s} {counts.flops / 1e9:7.2f} {counts.bytes / 1e9:9.2f} "
            f"{limits.flops_per_s / 1e9:6.0f} GF {limits.bytes_per_s / 1e9:7.0f} GB "
            f"{limit:8.3f} {measured:10.3f} {fractions[name]:8.0%} {serial:7.0%}"
        )
    print(
        "  limit = max(GFLOP / product rate, GB / bandwidth); fraction = limit / "
        "measured; serial: the same with\n  the products and the other passes "
        "added instead (no overlap, as on one CPU thread)"
    )
    for name, (counts, limits, _) in rows.items():
        print(f"  {name}: {limits.source}")
        if name in steps:
            n = steps[name]
            print(
                f"  {name}: {n} optimiser steps; the whole run over its steps (scoring "
                f"included): {counts.flops / n / 1e6:.1f} MFLOP, "
                f"{counts.bytes / n / 1e6:.1f} MB of operands per step"
            )
        print(f"  {name}: {counts.n_ops} aten ops (views not counted)")
        top = ", ".join(
            f"{op} {b / counts.bytes:.0%}"
            for op, b in counts.bytes_by_op.most_common(5)
        )
        print(f"  {name}: bytes by op: {top}")
    return fractions


def report(
    runs: dict, medians: dict[str, float], device: str, *, steps=None
) -> dict[str, float]:
    """Count each of ``runs`` (name: callable, run once more, counted),
    measure this machine's limits for it now, and print the roofline table
    against the ``medians`` the benchmark measured; return the fractions.
    On a GPU the published H200 FP32 limits are printed beside them."""
    rows, published = {}, {}
    for name, fn in runs.items():
        counts, _ = count(fn)
        rows[name] = (counts, measured_limits(counts, device), medians[name])
        published[name] = (counts, H200["fp32"], medians[name])
    print("roofline (flops and bytes counted in one run of each strategy):")
    fractions = print_roofline(rows, steps=steps)
    if str(device).startswith("cuda"):
        print("against the published H200 SXM FP32 limits:")
        print_roofline(published)
    return fractions
