"""The orders in which XLA's memory-space assignment considers buffers
(heuristic.py's docstring, *Order*, says what each mirrors). The heuristic
walks them; the game (game.py) decides buffers in ``buffer_order``.
"""
from __future__ import annotations

import math

from .instance import Instance


def _op_parts(inst: Instance, t: int, fast: set[int]) -> tuple[float, float]:
    dev = inst.device
    op = inst.ops[t]
    mem = sum(inst.buffers[b].size / (dev.fast_bandwidth if b in fast else dev.slow_bandwidth)
              for b in inst.accesses(t))
    return op.weight * op.flops / dev.flops, op.weight * mem


def alternate_memory_benefit(inst: Instance, t: int, b: int, slow: dict | None = None) -> float:
    """CostAnalysis::GetAlternateMemoryBenefit for buffer b at op t.
    ``slow``: a cache of each op's all-slow parts, shared by the calls of one
    ``buffer_order`` (an op with k accesses is asked k times: without it
    the order costs the sum of k squared twice over)."""
    if slow is None:
        slow = {}
    if t not in slow:
        slow[t] = _op_parts(inst, t, set())
    compute, mem = slow[t]
    if mem > compute:
        _, mem_alt = _op_parts(inst, t, {b})
        return mem - mem_alt          # weight (trip count) already in both
    return mem - compute


def memory_boundedness(inst: Instance, b: int, slow: dict | None = None) -> float:
    """CostAnalysis::GetMemoryBoundedness (``slow``: alternate_memory_benefit's cache)."""
    buf = inst.buffers[b]
    slow = {} if slow is None else slow
    benefit = None if buf.kind == "argument" else alternate_memory_benefit(inst, buf.start, b,
                                                                           slow)
    for u in buf.uses:
        ub = alternate_memory_benefit(inst, u, b, slow)
        if benefit is None:
            benefit = ub
        elif benefit > 0 and ub > 0:
            benefit += ub
        else:
            benefit = max(benefit, ub)
    if benefit is None:
        benefit = 0.0
    return benefit / math.sqrt(max(buf.size, 1))


def size_order(inst: Instance) -> list[int]:
    """GlobalDecreasingSizeBestFitHeap's spatial order (MSA's order without a
    cost analysis): size, then duration, descending."""
    return sorted(range(inst.num_buffers),
                  key=lambda b: (-inst.buffers[b].size,
                                 -(inst.buffers[b].end - inst.buffers[b].start), b))


def buffer_order(inst: Instance) -> list[int]:
    """MemoryBoundednessBufferIntervalComparator's order."""
    slow = {}

    def key(b):
        buf = inst.buffers[b]
        return (-memory_boundedness(inst, b, slow), -buf.size, -(buf.end - buf.start),
                max(buf.uses, default=0), buf.start, b)
    return sorted(range(inst.num_buffers), key=key)
