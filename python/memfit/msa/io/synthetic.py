"""Small random scheduled programs, so the solvers can be tested without the exporter.

``random_instance(seed, ...)`` builds a schedule of ops in topological order:
each op reads one to three earlier buffers (mostly recent ones, sometimes an
old one, which gives long-lived buffers with gaps worth an eviction), writes
one result, and has a FLOP count that makes some ops compute-bound and some
memory-bound. A few ops carry a weight (a split loop's trip count). The
capacity is a fraction of the peak live bytes, so something must be left out.
"""
from __future__ import annotations

import numpy as np

from ..core.instance import DEVICE_PRESETS, Buffer, Device, Instance, Op, validate_instance


def random_instance(seed: int = 0, *, num_ops: int = 24, num_args: int = 4,
                    mode: str = "placement", device: str | Device | None = None,
                    capacity_fraction: float = 0.4, size_range=(2**16, 2**22),
                    loop_fraction: float = 0.15) -> Instance:
    rng = np.random.default_rng(seed)
    if device is None:
        device = "tpu-like" if mode == "placement" else "h200"
    dev = DEVICE_PRESETS[device] if isinstance(device, str) else device
    lo, hi = np.log2(size_range[0]), np.log2(size_range[1])

    def rand_size() -> int:
        return int(2 ** rng.uniform(lo, hi)) // 256 * 256 + 256

    buffers: list[Buffer] = []
    ops: list[Op] = []
    for a in range(num_args):
        buffers.append(Buffer(a, f"arg{a}", rand_size(), 0, 0, [], "argument"))
    for t in range(num_ops):
        avail = [b.id for b in buffers if b.kind == "argument" or b.start < t]
        k = int(rng.integers(1, 4))
        chosen: list[int] = []
        for _ in range(k):
            if rng.random() < 0.7 and len(avail) > 0:
                pick = avail[-1 - int(rng.integers(0, min(3, len(avail))))]
            else:
                pick = avail[int(rng.integers(0, len(avail)))]
            if pick not in chosen:
                chosen.append(pick)
        res = len(buffers)
        buffers.append(Buffer(res, f"t{t}", rand_size(), t, t, [], "temp"))
        bytes_touched = sum(buffers[b].size for b in chosen) + buffers[res].size
        # Arithmetic intensity spread around the device's ridge point
        # (flops/fast_bandwidth .. flops/slow_bandwidth), so that some ops are
        # compute-bound everywhere, some only when their operands are fast.
        ridge_fast = dev.flops / dev.fast_bandwidth
        ridge_slow = dev.flops / dev.slow_bandwidth
        intensity = 2 ** rng.uniform(np.log2(ridge_fast) - 2, np.log2(ridge_slow) + 1)
        weight = float(rng.integers(2, 9)) if rng.random() < loop_fraction else 1.0
        ops.append(Op(t, f"op{t}", float(intensity * bytes_touched), chosen, [res],
                      weight, f"synthetic.py:{t}"))
    # uses / ends; unused temps of the last ops become outputs.
    for o in ops:
        for b in o.operands:
            buffers[b].uses.append(o.id)
    for b in buffers:
        b.uses = sorted(set(b.uses))
        b.end = max(b.uses + [b.start])
        if b.kind == "temp" and (not b.uses or b.end == num_ops - 1):
            b.kind = "output"
    # Peak live bytes: the capacity is a fraction of it.
    live = np.zeros(num_ops, dtype=np.int64)
    for b in buffers:
        live[b.start:b.end + 1] += b.size
    cap = int(capacity_fraction * live.max())
    cap = min(cap, dev.fast_capacity)
    inst = Instance(program=f"synthetic-{seed}", function="main", mode=mode, device=dev,
                    capacity=cap, ops=ops, buffers=buffers)
    validate_instance(inst)
    return inst


def instance_suite(quick: bool = True) -> list[Instance]:
    """The synthetic instances every solver is tested and benched on."""
    out = []
    sizes = [(16, 3), (24, 4), (32, 5)] if quick else [(16, 3), (24, 4), (32, 5), (48, 6), (64, 8)]
    for mode in ("placement", "offload"):
        for i, (n, a) in enumerate(sizes):
            for frac in (0.25, 0.5):
                seed = 1000 * (mode == "offload") + 10 * i + int(frac * 4)
                out.append(random_instance(seed, num_ops=n, num_args=a, mode=mode,
                                           capacity_fraction=frac))
    # A CPU-like device whose copies do not overlap compute.
    out.append(random_instance(77, num_ops=20, num_args=3, mode="placement", device="cpu",
                               capacity_fraction=0.4))
    out.append(random_instance(78, num_ops=20, num_args=3, mode="offload", device="cpu",
                               capacity_fraction=0.4))
    for k, inst in enumerate(out):
        inst.program = f"synthetic-{k:02d}-{inst.mode}-{inst.device.name}-n{inst.num_ops}"
    return out
