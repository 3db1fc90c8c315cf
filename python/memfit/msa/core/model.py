"""The cost model: what a solution means and how long it takes.

This is the one definition: the validator reports it, the game (game.py)
evaluates it over fixed-shape jax.numpy arrays and the exact solver
(exact.py) encodes it as CP-SAT constraints, both from the terms defined
here (``copy_seconds``, ``compute_seconds``, ``access_seconds``).
test_msa_cost_model.py runs all three on the same random instances and
solutions: the game agrees to float32 precision, CP-SAT to its integer
ticks (exact.py: every duration is rounded down to a tick, so its time is
at most one tick per duration term below this one). docs/msa.md states the
model in prose.

Residency of a buffer ``b`` in fast memory (op-index time, inclusive):

* home ``[start, evict_after]`` (or ``[start, end]``) when ``space == "fast"``;
* one window ``[s_k, r_k]`` per prefetch ``k`` (sorted by use), where ``r_k``
  is the last use of ``b`` before the next prefetch's use (the last use of
  ``b`` for the last prefetch).

An access of ``b`` by op ``t`` (operand or result) is *fast* when ``t`` is in
the home interval or in ``[u_k, r_k]`` for some prefetch ``k`` (while the copy
is in flight, ``s_k <= t < u_k``, the op reads slow memory).

Time: ops run in schedule order. Copies are events too, ordered by the key
``(op, phase, use, buffer)``: a prefetch is issued before op ``s`` (phase 0),
the op runs (phase 1), an eviction is issued after op ``e`` (phase 2).

* op ``t``: waits until every prefetch whose use is ``t`` is done (a stall),
  then runs for ``weight * max(flops / F, sum size / bandwidth)``.
* copy of ``b``: ``size / copy_bandwidth`` times the weight of its use op (a
  prefetch) or of its eviction op. With ``copy_overlaps_compute`` a copy
  starts when issued, when its direction's queue is free (one FIFO queue per
  direction) and, for a prefetch, when the buffer's eviction is done; it runs
  alongside the ops. Without it, the copy runs on the ops' clock (blocking).
* estimated time = when the last op and the last copy are done.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .instance import Instance
from .solution import BufferAssignment


@dataclass
class Plan:
    """A buffer's resolved residency (what the validator and game compute)."""
    home: tuple[int, int] | None                  # [lo, hi] inclusive, or None
    windows: list[tuple[int, int, int]] = field(default_factory=list)  # (s, u, r)
    evict: int | None = None                      # eviction issued after this op

    def intervals(self) -> list[tuple[int, int]]:
        out = [self.home] if self.home else []
        return out + [(s, r) for (s, _, r) in self.windows]

    def resident(self, t: int) -> bool:
        return any(lo <= t <= hi for lo, hi in self.intervals())

    def fast_at(self, t: int) -> bool:
        if self.home and self.home[0] <= t <= self.home[1]:
            return True
        return any(u <= t <= r for (_, u, r) in self.windows)


def resolve(inst: Instance, a: BufferAssignment) -> Plan:
    """Plan of one (already checked) assignment."""
    buf = inst.buffers[a.id]
    home = None
    if a.space == "fast":
        home = (buf.start, buf.end if a.evict_after is None else a.evict_after)
    pfs = sorted(a.prefetches, key=lambda p: p.use)
    windows = []
    for k, p in enumerate(pfs):
        nxt = pfs[k + 1].use if k + 1 < len(pfs) else None
        served = [u for u in buf.uses if u >= p.use and (nxt is None or u < nxt)]
        windows.append((p.start, p.use, max(served) if served else p.use))
    return Plan(home, windows, a.evict_after if a.space == "fast" else None)


# -- the terms of the time (game.py and exact.py take theirs from here) --------

def copy_seconds(inst: Instance, b: int, op: int) -> float:
    """A copy of buffer b, scheduled with op ``op``: it moves the buffer once
    per execution of that op."""
    return inst.buffers[b].size / inst.device.copy_bandwidth * inst.ops[op].weight


def compute_seconds(inst: Instance, t: int) -> float:
    """One execution of op t at the device's FLOP rate."""
    return inst.ops[t].flops / inst.device.flops


def access_seconds(inst: Instance, b: int, fast: bool) -> float:
    """One execution's access of buffer b from fast or slow memory."""
    dev = inst.device
    return inst.buffers[b].size / (dev.fast_bandwidth if fast else dev.slow_bandwidth)


def op_seconds(inst: Instance, t: int, fast: dict[int, bool]) -> float:
    """Roofline time of op t given which of its accesses are fast:
    ``weight * max(compute, sum of accesses)``."""
    mem = 0.0
    for b in inst.accesses(t):
        mem += access_seconds(inst, b, fast.get(b, False))
    return inst.ops[t].weight * max(compute_seconds(inst, t), mem)


@dataclass
class Timing:
    estimated_time: float
    compute_time: float          # sum of op times
    stall_time: float            # waiting for prefetches (and blocking copies)
    copy_time: float             # total copy-engine busy time
    op_times: list[float]
    op_starts: list[float]


def simulate(inst: Instance, plans: dict[int, Plan]) -> Timing:
    """Estimated time of a set of plans (buffers without a plan are slow)."""
    overlap = inst.device.copy_overlaps_compute
    events: list[tuple] = []
    for b, pl in plans.items():
        for (s, u, _r) in pl.windows:
            events.append((s, 0, u, b, "pf"))
        if pl.evict is not None:
            events.append((pl.evict, 2, 0, b, "ev"))
    for t in range(inst.num_ops):
        events.append((t, 1, 0, 0, "op"))
    events.sort(key=lambda e: e[:4])

    clock = qh = qd = 0.0
    pf_done: dict[tuple[int, int], float] = {}
    ev_done: dict[int, float] = {}
    compute = stall = copy_busy = 0.0
    op_times = [0.0] * inst.num_ops
    op_starts = [0.0] * inst.num_ops
    for (t, _ph, u, b, kind) in events:
        if kind == "pf":
            d = copy_seconds(inst, b, u)
            copy_busy += d
            if overlap:
                st = max(clock, qh, ev_done.get(b, 0.0))
                qh = pf_done[(b, u)] = st + d
            else:
                st = max(clock, ev_done.get(b, 0.0))
                stall += st + d - clock
                clock = pf_done[(b, u)] = st + d
        elif kind == "ev":
            d = copy_seconds(inst, b, t)
            copy_busy += d
            if overlap:
                st = max(clock, qd)
                qd = ev_done[b] = st + d
            else:
                stall += d
                clock = ev_done[b] = clock + d
        else:
            fast = {}
            wait = clock
            for x in inst.accesses(t):
                pl = plans.get(x)
                if pl is None:
                    continue
                fast[x] = pl.fast_at(t)
                for (s, uu, _r) in pl.windows:
                    if uu == t:
                        wait = max(wait, pf_done[(x, uu)])
            stall += wait - clock
            clock = wait
            d = op_seconds(inst, t, fast)
            op_starts[t] = clock
            op_times[t] = d
            compute += d
            clock += d
    total = max(clock, qh, qd)
    stall += total - clock
    return Timing(total, compute, stall, copy_busy, op_times, op_starts)
