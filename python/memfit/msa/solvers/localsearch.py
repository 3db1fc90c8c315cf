"""Plan-menu local search: improve any solution of menu plans, at any size.

The game's polish (learned/play.py ``polish_batch``) completes every tried
change by replaying the rest of the game, so a pass costs about the square
of the buffer count in game steps: affordable up to a few hundred buffers,
not at the 1,000-4,000 buffers of the big programs (data/msa/, a 2,048-move
game step is tens of milliseconds). This search keeps every other buffer's
plan as it is instead and times each change with the cost model itself
(``_Clock``: ``model.simulate``'s events, the ops between two copies summed
at once, each change swept from the last snapshot before it; 0.2-0.3 ms per
change at 1,400 buffers), so a pass costs one such evaluation per (buffer,
menu plan) pair that fits.

A move changes one buffer's plan to another plan of its menu
(``plans.build_menus``: the plans the heuristic, the game and CP-SAT choose
from) where the bytes resident at every op stay within the capacity; a pass
visits the buffers once, largest access benefit first, and takes each
buffer's best move that makes the program faster. Nothing is ever accepted
that makes it slower, so the result is never slower than the start.

In placement mode a move must also find the buffer an offset where its
rectangles meet no other buffer's (``_Layout``: every other buffer stays
where it is); with ``compact``, once no move pays, the layout is compacted
downwards (``_Search.compact``: plans and time unchanged, the free space
gathered at the top) and the passes go on (the learned agent's default above
the 256-move bucket); msa.solvers.repack
is the placement search that also moves the others (relayouts, the exact
packer), at a cost that grows much faster.

``iterate`` runs the descent again and again from random kicks (an iterated
local search); in placement mode its ``layout_rounds`` kick the layout too
(``_Search.eject``: one buffer into fast memory, every buffer in its way
out; ``_Search.relayout_kick``: a neighbourhood re-placed in a random order)
and descend with ``_Search.relayout`` moves (a change that fits the bytes
but not the layout, made to fit by re-placing the buffers in its way).
"""
from __future__ import annotations

import bisect
import time
from dataclasses import dataclass

import numpy as np

from ..core.instance import Instance
from ..core.model import Plan, access_seconds, compute_seconds, copy_seconds, simulate
from ..core.plans import build_menus, menu_index
from ..core.solution import Solution


@dataclass
class Stats:
    passes: int = 0              # passes run
    tried: int = 0               # changes simulated
    accepted: int = 0            # changes kept
    compactions: int = 0         # placement layouts compacted (``compact``)
    start_time: float = 0.0      # estimated time of the start solution
    final_time: float = 0.0
    seconds: float = 0.0         # wall time of the search
    stopped: str = ""            # "converged" | "passes" | "time limit"


class _Clock:
    """``model.simulate``'s estimated time, evaluated fast for one changed
    buffer at a time: the same events in the same order, but the ops
    between two copy events are summed at once (a cumulative sum of the op
    times), so a change costs the copies' events plus an array pass instead
    of a Python step per op; and a change is swept only from the last
    snapshot of the current plans' sweep before the first event it affects
    (``time``). test_msa_localsearch.py checks it against
    ``model.simulate``."""

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
                raise RuntimeError(f"BUG: the clock lost the event {e} of a changed buffer")
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
    """The current plans' sweep (``_Clock._base_sweep``)."""
    events: list            # sorted (op, phase, use, buffer, seconds); waits are (op, 1, 0, 0, 0.0)
    op_time: np.ndarray
    uses: dict              # use op -> prefetches issued for it
    snaps: list             # the state before events 0, SNAPSHOT_EVERY, 2 SNAPSHOT_EVERY, ...
    time: float

    def snapshot_before(self, p: int):
        """(k, state): the last snapshot at or before event ``p``."""
        i = min(p // _Clock.SNAPSHOT_EVERY, len(self.snaps) - 1)
        return (i * _Clock.SNAPSHOT_EVERY, self.snaps[i]) if i >= 0 else (0, None)


def _start_choice(inst: Instance, menus, sol: Solution) -> np.ndarray:
    """Menu index of each buffer's assignment in ``sol``; an error for one
    outside its menu (this search only moves between menu plans)."""
    by_id = sol.by_id()
    out = np.zeros(inst.num_buffers, np.int64)
    for b in range(inst.num_buffers):
        i = menu_index(menus[b], by_id[b])
        if i is None:
            raise ValueError(f"buffer {b}: its assignment is not a plan of its menu "
                             "(plans.build_menus); the local search moves between menu plans only")
        out[b] = i
    return out


def _visit_order(inst: Instance, picker) -> list[int]:
    """Buffers by how much their accesses gain from fast memory (most first):
    the changes most likely to pay are tried while the game is still open."""
    gain = np.zeros(inst.num_buffers)
    for t in range(inst.num_ops):
        for b in inst.accesses(t):
            gain[b] += picker.use_reduction(b, t)
    return [int(b) for b in np.argsort(-gain, kind="stable")]


class _Bytes:
    """Offload mode's capacity: the bytes resident at each op."""

    def __init__(self, inst: Instance):
        self.inst = inst
        self.live = np.zeros(max(inst.num_ops, 1), np.int64)

    def add(self, b: int, intervals, offset=None) -> None:
        for lo, hi in intervals:
            self.live[lo:hi + 1] += self.inst.buffers[b].size

    def remove(self, b: int, intervals) -> None:
        for lo, hi in intervals:
            self.live[lo:hi + 1] -= self.inst.buffers[b].size

    def fits_bytes(self, b: int, intervals) -> bool:
        """Whether b's bytes fit over ``intervals`` beside the others'."""
        size, cap = self.inst.buffers[b].size, self.inst.capacity
        return all((self.live[lo:hi + 1] + size <= cap).all() for lo, hi in intervals)

    def fit(self, b: int, intervals, prefer=None):
        """True where b fits over ``intervals`` beside the others (offload
        mode has no offsets), else None."""
        return True if self.fits_bytes(b, intervals) else None


class _Layout(_Bytes):
    """Placement mode's capacity: every fast buffer a rectangle (its residency
    intervals x [offset, offset + size)), none overlapping, all below the
    capacity. A moved buffer keeps its offset where that still fits, else
    takes the lowest free one (0 or the top of a rectangle it meets in time:
    any free offset slides down to one of those)."""

    def __init__(self, inst: Instance):
        super().__init__(inst)
        self.rects = np.zeros((0, 5), np.int64)          # lo, hi, y0, y1, buffer

    def add(self, b: int, intervals, offset=None) -> None:
        super().add(b, intervals)
        size = self.inst.buffers[b].size
        new = [(lo, hi, offset, offset + size, b) for lo, hi in intervals if size]
        if new:
            self.rects = np.concatenate([self.rects, np.array(new, np.int64)])

    def remove(self, b: int, intervals) -> None:
        super().remove(b, intervals)
        self.rects = self.rects[self.rects[:, 4] != b]

    def meeting(self, intervals) -> np.ndarray:
        """Which rectangles meet ``intervals`` in time (a mask over ``rects``)."""
        r = self.rects
        meet = np.zeros(len(r), bool)
        for lo, hi in intervals:
            meet |= (r[:, 0] <= hi) & (lo <= r[:, 1])
        return meet

    def fit(self, b: int, intervals, prefer=None):
        """The offset b takes over ``intervals`` (``prefer`` if free), or None."""
        if not self.fits_bytes(b, intervals):
            return None
        size, cap = self.inst.buffers[b].size, self.inst.capacity
        meet = self.meeting(intervals)
        y0, y1 = self.rects[meet, 2], self.rects[meet, 3]
        if (prefer is not None and prefer + size <= cap
                and not ((prefer < y1) & (y0 < prefer + size)).any()):
            return int(prefer)
        return _lowest_gap(y0, y1, size, cap)


def _lowest_gap(y0: np.ndarray, y1: np.ndarray, size: int, cap: int):
    """The lowest offset where ``[offset, offset + size)`` meets none of the
    spans ``[y0, y1)`` and ends by ``cap``, or None: a sweep over the spans
    by their starts (an array pass, where testing every span top against
    every span cost the square of the spans met)."""
    if len(y0) == 0:
        return 0 if size <= cap else None
    order = np.argsort(y0, kind="stable")
    y0, y1 = y0[order], y1[order]
    top = np.maximum.accumulate(y1)
    start = np.concatenate([[0], top[:-1]])      # nothing below span i reaches above this
    gap = np.nonzero(y0 - start >= size)[0]
    if len(gap):
        return int(start[gap[0]])
    return int(top[-1]) if top[-1] + size <= cap else None


#: Pair moves: the blockers tried per blocked change (largest first).
PAIR_BLOCKERS = 4
#: ``_Search.layout_kick``: the share of ejections (the rest re-lay out a
#: neighbourhood).
EJECT_SHARE = 0.6


class _Search:
    """The search's state: each buffer's menu choice and offset, the space
    they take and the clock that times them."""

    def __init__(self, inst: Instance, sol: Solution):
        self.inst = inst
        picker, self.menus = build_menus(inst)
        self.choice = _start_choice(inst, self.menus, sol)
        self.plan = [[m.plan(inst, b) for m in self.menus[b]] for b in range(inst.num_buffers)]
        self.space = _Layout(inst) if inst.mode == "placement" else _Bytes(inst)
        self.offset = {a.id: a.offset for a in sol.buffers}
        for b in range(inst.num_buffers):
            if self.choice[b]:
                if inst.mode == "placement" and self.offset[b] is None:
                    raise ValueError(f"buffer {b}: a fast plan without an offset in placement mode")
                self.space.add(b, self.intervals(b), self.offset[b])
        if (self.space.live > inst.capacity).any():
            raise ValueError("localsearch.improve: the start solution exceeds the capacity")
        self.current = {b: self.plan[b][self.choice[b]]
                        for b in range(inst.num_buffers) if self.choice[b]}
        self.clock = _Clock(inst, self.current)
        self.best = self.clock.time()
        self.order = _visit_order(inst, picker)
        self.stats = Stats(start_time=simulate(inst, self.current).estimated_time)

    def intervals(self, b: int, i: int | None = None):
        return self.plan[b][self.choice[b] if i is None else i].intervals()

    def _lift(self, b: int) -> None:
        """Take b out of the space (its choice unchanged)."""
        if self.choice[b]:
            self.space.remove(b, self.intervals(b))

    def _drop(self, b: int) -> None:
        """Put b back into the space at its choice and offset."""
        if self.choice[b]:
            self.space.add(b, self.intervals(b), self.offset[b])

    def _set(self, b: int, i: int, at) -> None:
        """Choose plan i for b (lifted) at offset ``at``, then drop it."""
        new = self.plan[b][i] if i else None
        self.clock.accept(b, self.current.get(b), new)
        self.choice[b] = i
        if i:
            self.current[b] = new
        else:
            self.current.pop(b, None)
        self.offset[b] = at if i and self.inst.mode == "placement" else None
        self._drop(b)

    def _time(self, changes) -> float:
        """The time with ``changes`` [(b, plan index)] made (others as they are)."""
        self.stats.tried += 1
        return self.clock.time([(b, self.current.get(b), self.plan[b][i] if i else None)
                                for b, i in changes])

    def single(self, b: int) -> bool:
        """b's best plan change that fits and makes the program faster."""
        self._lift(b)
        pick, pick_time, pick_at = None, self.best, None
        for i, pl in enumerate(self.plan[b]):
            if i == self.choice[b]:
                continue
            at = self.space.fit(b, pl.intervals(), self.offset[b]) if i else None
            if i and at is None:
                continue
            t = self._time([(b, i)])
            if t < pick_time * (1 - 1e-9):
                pick, pick_time, pick_at = i, t, at
        if pick is None:
            self._drop(b)
            return False
        self._set(b, pick, pick_at)
        self.best = pick_time
        return True

    def _blockers(self, b: int, intervals) -> list[int]:
        """The PAIR_BLOCKERS largest fast buffers resident with ``intervals``."""
        meet = [c for c, pl in self.current.items() if c != b and any(
            lo <= h and l <= hi for lo, hi in intervals for l, h in pl.intervals())]
        meet.sort(key=lambda c: -self.inst.buffers[c].size)
        return meet[:PAIR_BLOCKERS]

    def pair(self, b: int) -> bool:
        """A change of b that does not fit but would make the program faster,
        made to fit by a change of one buffer in its way: the best such pair
        that makes the program faster."""
        self._lift(b)
        best = (None, self.best)
        for i, pl in enumerate(self.plan[b]):
            if (i == 0 or i == self.choice[b]
                    or self.space.fit(b, pl.intervals(), self.offset[b]) is not None
                    or self._time([(b, i)]) >= self.best * (1 - 1e-9)):
                continue
            for c in self._blockers(b, pl.intervals()):
                self._lift(c)
                for q in range(len(self.plan[c])):
                    if q == self.choice[c]:
                        continue
                    at_c = self.space.fit(c, self.intervals(c, q), self.offset[c]) if q else None
                    if q and at_c is None:
                        continue
                    if q:
                        self.space.add(c, self.intervals(c, q), at_c)
                    at_b = self.space.fit(b, pl.intervals(), self.offset[b])
                    if q:
                        self.space.remove(c, self.intervals(c, q))
                    if at_b is None:
                        continue
                    t = self._time([(b, i), (c, q)])
                    if t < best[1] * (1 - 1e-9):
                        best = ((i, at_b, c, q, at_c), t)
                self._drop(c)
        if best[0] is None:
            self._drop(b)
            return False
        i, at_b, c, q, at_c = best[0]
        self._lift(c)
        self._set(c, q, at_c)
        self._set(b, i, at_b)
        self.best = best[1]
        return True

    def compact(self) -> None:
        """Placement: every fast buffer re-placed at the lowest free offset,
        in the order of their offsets (a compaction downwards). Each buffer
        lands at or below its old offset (the ones placed before it lie at
        or below theirs, so its old place is still free), so it always fits;
        the plans, and so the time, stay as they are: only the free space
        is gathered at the top, where a blocked change may now fit."""
        fast = sorted((b for b in range(self.inst.num_buffers) if self.choice[b]),
                      key=lambda b: (self.offset[b], b))
        for b in fast:
            self._lift(b)
        for b in fast:
            at = self.space.fit(b, self.intervals(b))
            if at is None or at > self.offset[b]:
                raise RuntimeError(f"BUG: compaction moved buffer {b} up or out "
                                   f"({self.offset[b]} -> {at})")
            self.offset[b] = at
            self._drop(b)

    def state(self) -> tuple:
        """The plans and offsets now (``restore`` returns to them)."""
        return self.choice.copy(), dict(self.offset), self.best

    def restore(self, state: tuple) -> None:
        """Back to a ``state()``: the space and the clock rebuilt from its
        plans and offsets (cheap at the sizes ``iterate`` runs on)."""
        choice, offset, best = state
        self.choice, self.offset = choice.copy(), dict(offset)
        self.space = _Layout(self.inst) if self.inst.mode == "placement" else _Bytes(self.inst)
        for b in range(self.inst.num_buffers):
            self._drop(b)
        self.current = {b: self.plan[b][self.choice[b]]
                        for b in range(self.inst.num_buffers) if self.choice[b]}
        self.clock = _Clock(self.inst, self.current)
        self.best = best

    def kick(self, rng: np.random.Generator, size: int) -> frozenset:
        """A random change of ``size`` buffers whose lifetimes meet a random
        buffer's (itself one of them), each to a random other plan of its
        menu that fits (slow included), made whether it pays or not: the
        coordinated changes the descent cannot reach one buffer at a time
        start this way. Returns the buffers changed."""
        c = int(rng.integers(self.inst.num_buffers))
        near = self._near(c)
        pick = [c] + [int(b) for b in rng.permutation(near)[:size - 1]]
        changed = set()
        for b in pick:
            self._lift(b)
            if self._random_plan(b, rng, other=True):
                changed.add(b)
        self.best = self.clock.time()
        return frozenset(changed)

    def _near(self, c: int) -> list[int]:
        """The buffers other than c whose lifetimes meet c's."""
        bufs = self.inst.buffers
        return [b for b in range(self.inst.num_buffers)
                if b != c and bufs[b].start <= bufs[c].end and bufs[c].start <= bufs[b].end]

    def _random_plan(self, b: int, rng: np.random.Generator, other: bool) -> bool:
        """b (lifted) to a random plan of its menu that fits at the lowest
        free offset, slow included (``other``: not its current plan), then
        dropped; False (b dropped as it was) when there is none."""
        options = []
        for i, pl in enumerate(self.plan[b]):
            if other and i == self.choice[b]:
                continue
            at = self.space.fit(b, pl.intervals()) if i else None
            if i == 0 or at is not None:
                options.append((i, at))
        if not options:
            self._drop(b)
            return False
        i, at = options[int(rng.integers(len(options)))]
        self._set(b, i, at)
        return True

    def layout_kick(self, rng: np.random.Generator, size: int) -> frozenset:
        """Placement mode's kick (``iterate``'s layout rounds): an ejection
        with probability EJECT_SHARE, else a re-layout of a neighbourhood.
        Returns the buffers changed."""
        if rng.random() < EJECT_SHARE:
            return self.eject(rng)
        return self.relayout_kick(rng, size)

    def eject(self, rng: np.random.Generator) -> frozenset:
        """A random buffer to a random other fast plan at one of the offsets
        it could take (0 or the top of a rectangle it meets in time; half the
        time one that evicts the fewest bytes), every fast buffer in its way
        made slow: the trade of one large buffer for several small ones that
        CP-SAT's placement optima make and that moves of one or two buffers
        at fixed offsets cannot (docs/msa.md, *Layout rounds*). Returns it
        and the evicted buffers (the next descent refills the space around
        them)."""
        b = int(rng.integers(self.inst.num_buffers))
        fast = [i for i in range(1, len(self.plan[b])) if i != self.choice[b]]
        if not fast:
            return self.kick(rng, 1)
        i = fast[int(rng.integers(len(fast)))]
        ivs = self.plan[b][i].intervals()
        size, cap = self.inst.buffers[b].size, self.inst.capacity
        self._lift(b)
        r = self.space.rects
        meet = self.space.meeting(ivs)
        ys = [y for y in sorted({0} | {int(y) for y in r[meet, 3]}) if y + size <= cap]
        if not ys:
            self._drop(b)
            return frozenset()
        evicted = {y: sorted({int(c) for c in r[meet & (r[:, 2] < y + size) & (y < r[:, 3]), 4]})
                   for y in ys}
        if rng.random() < 0.5:
            cost = {y: sum(self.inst.buffers[c].size for c in evicted[y]) for y in ys}
            least = min(cost.values())
            ys = [y for y in ys if cost[y] == least]
        y = ys[int(rng.integers(len(ys)))]
        for c in evicted[y]:
            self._lift(c)
            self._set(c, 0, None)
        self._set(b, i, y)
        self.best = self.clock.time()
        return frozenset([b, *evicted[y]])

    def relayout_kick(self, rng: np.random.Generator, size: int) -> frozenset:
        """A random buffer and ``size - 1`` others whose lifetimes meet its
        lifetime to random other plans, and every fast buffer living with it
        lifted and re-placed with them in a random order, each at the lowest
        free offset (its plan kept where it still fits, else a random one
        that does): a kick that moves the layout, where ``kick`` keeps every
        unkicked buffer where it is. Returns the buffers whose plans changed."""
        c = int(rng.integers(self.inst.num_buffers))
        near = self._near(c)
        pick = {c, *(int(b) for b in rng.permutation(near)[:size - 1])}
        moved = sorted(pick | {b for b in near if self.choice[b]})
        moved = [int(b) for b in rng.permutation(moved)]
        for b in moved:
            self._lift(b)
        changed = set()
        for b in moved:
            if b not in pick and self.choice[b]:
                at = self.space.fit(b, self.intervals(b))
                if at is not None:
                    self.offset[b] = at
                    self._drop(b)
                    continue
            if self._random_plan(b, rng, other=b in pick):
                changed.add(b)
        self.best = self.clock.time()
        return frozenset(changed)

    def relayout(self, b: int) -> bool:
        """Placement: b's fastest change that fits the bytes but not the
        layout, made to fit by re-placing the fast buffers in its way (b at
        the lowest free offset among the others, then they, in the order of
        their offsets or else by decreasing size, each at the lowest free
        offset): a move of one plan and several offsets."""
        self._lift(b)
        cands = []
        for i, pl in enumerate(self.plan[b]):
            ivs = pl.intervals()
            if (i == 0 or i == self.choice[b] or not self.space.fits_bytes(b, ivs)
                    or self.space.fit(b, ivs, self.offset[b]) is not None):
                continue
            t = self._time([(b, i)])
            if t < self.best * (1 - 1e-9):
                cands.append((t, i))
        for t, i in sorted(cands):
            ivs = self.plan[b][i].intervals()
            way = sorted({int(c) for c in self.space.rects[self.space.meeting(ivs), 4]})
            for order in (sorted(way, key=lambda c: (self.offset[c], c)),
                          sorted(way, key=lambda c: (-self.inst.buffers[c].size, c))):
                placed = self._place_first(b, ivs, order)
                if placed is not None:
                    for c in way:
                        self._lift(c)
                        self.offset[c] = placed[c]
                        self._drop(c)
                    self._set(b, i, placed[b])
                    self.best = t
                    return True
        self._drop(b)
        return False

    def _place_first(self, b: int, ivs, order: list[int]) -> dict | None:
        """The offsets of b (lifted, over ``ivs``) and of the buffers of
        ``order`` when they are lifted and re-placed, b first, each at the
        lowest free offset, or None where one does not fit; the space is
        left as it was either way."""
        for c in order:
            self._lift(c)
        placed, put = {}, []
        for c, iv in [(b, ivs)] + [(c, self.intervals(c)) for c in order]:
            at = self.space.fit(c, iv)
            if at is None:
                break
            self.space.add(c, iv, at)
            placed[c] = at
            put.append((c, iv))
        for c, iv in put:
            self.space.remove(c, iv)
        for c in order:
            self._drop(c)
        return placed if len(placed) == len(order) + 1 else None

    def solution(self, sol: Solution) -> Solution:
        return Solution(self.inst.mode, sol.method,
                        [self.menus[b][int(self.choice[b])].assignment(b, self.offset[b])
                         for b in range(self.inst.num_buffers)], sol.notes)


def _descend(s: _Search, passes: int, pairs: bool, compact: bool, deadline: float | None,
             frozen: frozenset = frozenset(), relayout: bool = False) -> None:
    """Up to ``passes`` passes of best-improvement per buffer (``improve``'s
    search, below) on ``s``; no move starts from a buffer in ``frozen``
    (a pair move may still change one as the blocker it moves aside);
    ``deadline``: a ``time.perf_counter()`` value, checked between buffers;
    ``relayout`` (placement): a pass of ``_Search.relayout`` moves after the
    single and pair moves stop paying, before a compaction."""
    stats = s.stats
    compact = compact and s.inst.mode == "placement"
    relayout = relayout and s.inst.mode == "placement"
    move, since_compaction = s.single, 1     # the start's layout is not compacted
    for _ in range(passes):
        stats.passes += 1
        if move == s.compact:
            s.compact()
            stats.compactions += 1
            move, since_compaction = s.single, 0
            continue
        changed = False
        for b in s.order:
            if deadline is not None and time.perf_counter() > deadline:
                stats.stopped = "time limit"
                return
            if b not in frozen and move(b):
                changed = True
                stats.accepted += 1
                since_compaction += 1
        if changed:
            move = s.single
        elif pairs and move == s.single:
            move = s.pair
        elif relayout and move in (s.single, s.pair):
            move = s.relayout
        elif compact and since_compaction:
            move = s.compact
        else:
            stats.stopped = "converged"
            return
    stats.stopped = "passes"


def improve(inst: Instance, sol: Solution, *, passes: int = 2, pairs: bool = False,
            compact: bool = False, time_limit: float | None = None) -> tuple[Solution, Stats]:
    """``sol`` (valid, every assignment a menu plan) improved by up to
    ``passes`` passes of best-improvement per buffer (above; ``pairs``: a
    pass that changes nothing is followed by one of pair moves, ``_Search.
    pair``; ``compact``, placement mode: then the layout is compacted
    (``_Search.compact``, counted as a pass) and the passes go on, unless
    nothing changed since the last compaction); stops early when a pass
    changes nothing or ``time_limit`` seconds have passed (checked between
    buffers). In placement mode a moved buffer keeps its offset where it
    still fits, else takes the lowest free one (``_Layout``). Returns the
    solution and what the search did."""
    t0 = time.perf_counter()
    s = _Search(inst, sol)
    _descend(s, passes, pairs, compact, None if time_limit is None else t0 + time_limit)
    return _finish(s, sol, t0)


def _finish(s: _Search, sol: Solution, t0: float) -> tuple[Solution, Stats]:
    s.stats.final_time = simulate(s.inst, s.current).estimated_time
    s.stats.seconds = time.perf_counter() - t0
    return s.solution(sol), s.stats


def iterate(inst: Instance, sol: Solution, *, rounds: int, kick: tuple[int, int] = (2, 10),
            seed: int = 0, passes: int = 20, pairs: bool = True, compact: bool = True,
            time_limit: float | None = None, settle_pairs: bool = True,
            layout_rounds: int = 0) -> tuple[Solution, Stats]:
    """Iterated local search: ``improve``'s descent from ``sol``, then
    ``rounds`` times: from the best solution found, a kick (``_Search.kick``:
    between ``kick[0]`` and ``kick[1]`` buffers living together changed at
    random), a descent in which no move starts from a kicked buffer (so it
    does not simply undo the kick; ``_descend``'s ``frozen``), a descent
    with all free, and the result kept if it is faster than the best. Why:
    the games the agent misses CP-SAT's optimum on are 4-10 coordinated
    changes from it (docs/msa.md), each of them alone no faster, beyond the
    one- and two-buffer moves of the descent and the game's polish. Seeded
    (``seed``) and counted in rounds, so deterministic; never slower than
    ``sol``'s descent (``time_limit``: stop between buffers once it has
    passed). ``settle_pairs=False``: the frozen descent uses single moves
    only (cheaper, and slower results on the dev instances: docs/msa.md).

    ``layout_rounds`` (placement mode; ignored in offload mode): then that
    many rounds more from the best, each kicked by ``_Search.layout_kick``
    (an ejection or a re-layout of a neighbourhood: the layouts CP-SAT's
    placement optima have, which kicks at fixed offsets do not reach) and
    descended with ``_Search.relayout`` moves too, drawn from a generator of
    their own seeded by ``seed``."""
    if rounds < 0 or layout_rounds < 0:
        raise ValueError(f"localsearch.iterate: rounds must be >= 0, got {rounds} "
                         f"and {layout_rounds} layout rounds")
    if not 1 <= kick[0] <= kick[1]:
        raise ValueError(f"localsearch.iterate: kick must be (low, high) with 1 <= low <= high, "
                         f"got {tuple(kick)}")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    rng = np.random.default_rng(seed)
    s = _Search(inst, sol)
    _descend(s, passes, pairs, compact, deadline)
    best = s.state()
    best = _rounds(s, best, rounds, lambda: s.kick(rng, _kick_size(rng, kick)),
                   settle_pairs, passes, pairs, compact, deadline)
    if layout_rounds and inst.mode == "placement":
        rng = np.random.default_rng(seed)
        s.restore(best)
        _descend(s, passes, pairs, compact, deadline, relayout=True)
        best = min(best, s.state(), key=lambda st: st[2])
        best = _rounds(s, best, layout_rounds, lambda: s.layout_kick(rng, _kick_size(rng, kick)),
                       True, passes, pairs, compact, deadline, relayout=True)
    s.restore(best)
    return _finish(s, sol, t0)


def _kick_size(rng: np.random.Generator, kick: tuple[int, int]) -> int:
    return int(rng.integers(kick[0], kick[1] + 1))


def _rounds(s: _Search, best: tuple, rounds: int, kick, settle_pairs: bool, passes: int,
            pairs: bool, compact: bool, deadline: float | None, relayout: bool = False) -> tuple:
    """``iterate``'s rounds from the state ``best``: each a ``kick()``, a
    descent in which no move starts from a kicked buffer, a free descent;
    returns the fastest state seen (``best`` when none was faster)."""
    for _ in range(rounds):
        if deadline is not None and time.perf_counter() > deadline:
            break
        s.restore(best)
        frozen = kick()
        _descend(s, passes, pairs and settle_pairs, compact and settle_pairs, deadline, frozen,
                 relayout)
        _descend(s, passes, pairs, compact, deadline, relayout=relayout)
        if s.best < best[2] * (1 - 1e-9):
            best = s.state()
    return best
