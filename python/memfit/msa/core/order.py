"""The orders in which XLA's memory-space assignment considers buffers
(heuristic.py's docstring, *Order*, says what each mirrors). The heuristic
walks them; the game (game.py) decides buffers in ``buffer_order``.
"""
from __future__ import annotations

import math

from .instance import Instance


def _slow_terms(inst: Instance, t: int) -> list[float]:
    """Each access's seconds at op t, all in slow memory, in access order."""
    dev = inst.device
    return [inst.buffers[b].size / dev.slow_bandwidth for b in inst.accesses(t)]


def _op_parts(inst: Instance, t: int, terms: list[float]) -> tuple[float, float]:
    op = inst.ops[t]
    return op.weight * op.flops / inst.device.flops, op.weight * sum(terms)


def _with_fast(inst: Instance, t: int, terms: list[float], b: int) -> list[float]:
    """``terms`` with b's accesses fast. A copy of the all-slow list with
    b's entries replaced, summed by the same ``sum`` in the same order, so
    the same value to the bit as summing afresh, without an op's whole
    access list walked in Python per buffer (ops of hundreds of accesses
    made the order most of the heuristic's time)."""
    fast = inst.buffers[b].size / inst.device.fast_bandwidth
    out = terms.copy()
    for i, x in enumerate(inst.accesses(t)):
        if x == b:
            out[i] = fast
    return out


def alternate_memory_benefit(inst: Instance, t: int, b: int, slow: dict | None = None) -> float:
    """CostAnalysis::GetAlternateMemoryBenefit for buffer b at op t.
    ``slow``: a cache of each op's all-slow parts, shared by the calls of one
    ``buffer_order`` (an op with k accesses is asked k times: without it
    the order costs the sum of k squared twice over)."""
    if slow is None:
        slow = {}
    if t not in slow:
        terms = _slow_terms(inst, t)
        slow[t] = (*_op_parts(inst, t, terms), terms)
    compute, mem, terms = slow[t]
    if mem > compute:
        _, mem_alt = _op_parts(inst, t, _with_fast(inst, t, terms, b))
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
