"""The cost model: what a solution means and how long it takes.

This is the one definition: the validator reports it (``simulate``), the
local search times its moves with its incremental view (``Clock``, here),
the game (game.py) evaluates it over fixed-shape jax.numpy arrays and the
exact solver (exact.py) encodes it as CP-SAT constraints, both from the
terms defined here (``copy_seconds``, ``compute_seconds``,
``access_seconds``). test_msa_cost_model.py runs them on the same random
instances and solutions: ``Clock`` agrees to 1e-12, the game to float32
precision, CP-SAT to its integer ticks (exact.py: every duration is rounded
down to a tick, so its time is at most one tick per duration term below
this one). docs/msa.md states the model in prose.

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

import bisect
from dataclasses import dataclass, field

import numpy as np

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


# -- the incremental view (the local search times its moves with it) ----------

class Clock:
    """The incremental view of ``simulate``: its estimated time, evaluated
    fast for a few changed buffers at a time (the local search's moves):
    the same events in the same order, but the ops between two copy events
    are summed at once (a cumulative sum of the op times), so a change
    costs the copies' events plus an array pass instead of a Python step
    per op; and a change is swept only from the last snapshot of the
    current plans' sweep before the first event it affects (``time``).
    test_msa_cost_model.py checks it against ``simulate``."""

    def __init__(self, inst: Instance, plans: dict[int, Plan]):
        self.inst = inst
        n = inst.num_ops
        self.weight = np.array([op.weight for op in inst.ops], np.float64)
        self.compute = np.array([compute_seconds(inst, t) for t in range(n)], np.float64)
        self.overlap = inst.device.copy_overlaps_compute
        self.ops_of = [np.array(inst.access_ops(b), np.int64) for b in range(inst.num_buffers)]
        self.mem = np.zeros(n, np.float64)
        self.events: dict[int, list[tuple]] = {}
        self._base: _BaseSweep | None = None
        for b in range(inst.num_buffers):
            self.mem[self.ops_of[b]] += self._access(b, plans.get(b))
            self.events[b] = self._events(b, plans.get(b))

    def _access(self, b: int, pl: Plan | None) -> np.ndarray:
        """Seconds of each access of b (at self.ops_of[b]) under plan ``pl``."""
        ops = self.ops_of[b]
        fast = np.zeros(len(ops), bool) if pl is None else np.array([pl.fast_at(int(t)) for t in ops])
        return np.where(fast, access_seconds(self.inst, b, True), access_seconds(self.inst, b, False))

    def _events(self, b: int, pl: Plan | None) -> list[tuple]:
        """b's copies as ``simulate`` orders them: (op, phase, use, buffer, seconds)."""
        if pl is None:
            return []
        out = [(s, 0, u, b, copy_seconds(self.inst, b, u)) for (s, u, _r) in pl.windows]
        if pl.evict is not None:
            out.append((pl.evict, 2, 0, b, copy_seconds(self.inst, b, pl.evict)))
        return out

    def _change(self, mem: np.ndarray, events: dict, b: int, old: Plan | None,
                new: Plan | None) -> None:
        """Buffer b's plan ``old`` replaced by ``new`` in ``mem`` and ``events``."""
        mem[self.ops_of[b]] += self._access(b, new) - self._access(b, old)
        events[b] = self._events(b, new)

    def time(self, changes=()) -> float:
        """Estimated time now, or with ``changes`` made: [(buffer, its plan
        now, its new plan)] (a plan None: slow). A change's events are
        swept from the last snapshot of the current plans' sweep before the
        first event it affects (its own events, the waits they add or drop,
        the ops whose time it changes); the events before that are the same
        and give the same state, so the result is the full sweep's, bit for
        bit, for about half the events on average."""
        base = self._base_sweep()
        if not changes:
            return base.time
        mem, events = self.mem.copy(), {}
        for b, old, new in changes:
            self._change(mem, events, b, old, new)
        op_time = self.weight * np.maximum(self.compute, mem)
        changed = np.nonzero(op_time != base.op_time)[0]
        t0 = int(changed[0]) if len(changed) else self.inst.num_ops
        removed = [e for b in events for e in self.events[b]]
        added = [e for evs in events.values() for e in evs]
        uses = dict(base.uses)
        for sign, evs in ((-1, removed), (1, added)):
            for (_t, ph, u, _b, _d) in evs:
                if ph == 0:
                    uses[u] = uses.get(u, 0) + sign
        removed += [(u, 1, 0, 0, 0.0) for u, c in uses.items() if c == 0 and base.uses.get(u)]
        added += [(u, 1, 0, 0, 0.0) for u, c in uses.items() if c > 0 and not base.uses.get(u)]
        # (t0, 1) sorts before every event that sweeps op t0 (its wait, an
        # eviction after it, a prefetch before a later op)
        first = min([(t0, 1)] + removed + added)
        k, state = base.snapshot_before(bisect.bisect_left(base.events, first))
        suffix = base.events[k:]
        for e in removed:
            at = bisect.bisect_left(suffix, e)
            if at == len(suffix) or suffix[at] != e:
                raise RuntimeError(f"BUG: the incremental clock lost the event {e} of a changed buffer")
            del suffix[at]
        for e in added:
            bisect.insort(suffix, e)
        cum = np.concatenate([[0.0], np.cumsum(op_time)])
        return self._sweep(suffix, cum.tolist(), op_time.tolist(), state)

    #: the current plans' sweep keeps its state every SNAPSHOT_EVERY events
    SNAPSHOT_EVERY = 32

    def _base_sweep(self) -> "_BaseSweep":
        """The current plans' events in sweep order, their time and the
        sweep's snapshots (rebuilt after a change is accepted)."""
        if self._base is None:
            copies = [e for evs in self.events.values() for e in evs]
            uses: dict[int, int] = {}
            for (_t, ph, u, _b, _d) in copies:
                if ph == 0:
                    uses[u] = uses.get(u, 0) + 1
            events = sorted(copies + [(u, 1, 0, 0, 0.0) for u in uses])
            op_time = self.weight * np.maximum(self.compute, self.mem)
            cum = np.concatenate([[0.0], np.cumsum(op_time)])
            snaps: list = []
            t = self._sweep(events, cum.tolist(), op_time.tolist(), None, snaps)
            self._base = _BaseSweep(events, op_time, uses, snaps, t)
        return self._base

    def _sweep(self, events: list[tuple], cum: list, op_time: list, state,
               snaps: list | None = None) -> float:
        """``model.simulate``'s clock over ``events`` (sorted), from
        ``state`` (a snapshot: ops before ``nxt`` done, the clock, the copy
        queues' ends, the prefetches' and evictions' done times; None: the
        start). ``snaps``: the state before every SNAPSHOT_EVERY-th event
        is appended there. Comparisons instead of max() and plain floats
        instead of numpy scalars: this loop is most of the search's time at
        1,000+ buffers."""
        nxt, clock, qh, qd, pf, ev = state if state is not None else (0, 0.0, 0.0, 0.0, {}, {})
        pf_done, ev_done = dict(pf), dict(ev)     # use op -> its last prefetch done; buffer -> eviction done
        overlap = self.overlap
        every = self.SNAPSHOT_EVERY
        for k, (t, ph, u, b, d) in enumerate(events):
            if snaps is not None and k % every == 0:
                snaps.append((nxt, clock, qh, qd, dict(pf_done), dict(ev_done)))
            if ph == 0:                           # prefetch issued before op t
                clock += cum[t] - cum[nxt]
                nxt = t
                start = clock
                e = ev_done.get(b, 0.0)
                if e > start:
                    start = e
                if overlap:
                    if qh > start:
                        start = qh
                    qh = done = start + d
                else:
                    clock = done = start + d
                prev = pf_done.get(u)
                if prev is None or done > prev:
                    pf_done[u] = done
            elif ph == 1:                         # op t waits for its prefetches
                clock += cum[t] - cum[nxt]
                p = pf_done[t]
                if p > clock:
                    clock = p
                clock += op_time[t]
                nxt = t + 1
            else:                                 # eviction issued after op t
                clock += cum[t + 1] - cum[nxt]
                nxt = t + 1
                if overlap:
                    qd = ev_done[b] = (clock if clock > qd else qd) + d
                else:
                    clock = ev_done[b] = clock + d
        clock += cum[-1] - cum[nxt]
        return max(clock, qh, qd)

    def accept(self, b: int, old: Plan | None, new: Plan | None) -> None:
        self._change(self.mem, self.events, b, old, new)
        self._base = None


@dataclass
class _BaseSweep:
    """The current plans' sweep (``Clock._base_sweep``)."""
    events: list            # sorted (op, phase, use, buffer, seconds); waits are (op, 1, 0, 0, 0.0)
    op_time: np.ndarray
    uses: dict              # use op -> prefetches issued for it
    snaps: list             # the state before events 0, SNAPSHOT_EVERY, 2 SNAPSHOT_EVERY, ...
    time: float

    def snapshot_before(self, p: int):
        """(k, state): the last snapshot at or before event ``p``."""
        i = min(p // Clock.SNAPSHOT_EVERY, len(self.snaps) - 1)
        return (i * Clock.SNAPSHOT_EVERY, self.snaps[i]) if i >= 0 else (0, None)
