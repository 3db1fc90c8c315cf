"""A hand-made four-op instance whose times are easy to compute by hand (tests, docs).

    op0: b0 (arg, 100 B)        -> b1 (200 B)
    op1: b1                     -> b2 (300 B)
    op2: b2                     -> b3 (100 B)
    op3: b0, b3                 -> b4 (50 B, output)

fast 1000 B/s, slow 100 B/s, copies 100 B/s, no FLOPs: every op is memory-bound.
All slow: 3 + 5 + 4 + 2.5 = 14.5 s.
"""
from __future__ import annotations

from ..core.instance import Buffer, Device, Instance, Op


def tiny_instance(mode: str = "offload", capacity: int = 400, copy_bandwidth: float = 100.0,
                  overlap: bool = True) -> Instance:
    dev = Device("cpu", fast_capacity=1000, fast_bandwidth=1000.0, slow_bandwidth=100.0,
                 copy_bandwidth=copy_bandwidth, flops=1e9, copy_overlaps_compute=overlap)
    ops = [Op(0, "op0", 0.0, [0], [1]), Op(1, "op1", 0.0, [1], [2]),
           Op(2, "op2", 0.0, [2], [3]), Op(3, "op3", 0.0, [0, 3], [4])]
    bufs = [Buffer(0, "b0", 100, 0, 3, [0, 3], "argument"),
            Buffer(1, "b1", 200, 0, 1, [1], "temp"),
            Buffer(2, "b2", 300, 1, 2, [2], "temp"),
            Buffer(3, "b3", 100, 2, 3, [3], "temp"),
            Buffer(4, "b4", 50, 3, 3, [], "output")]
    return Instance("tiny", "main", mode, dev, capacity, ops, bufs)
