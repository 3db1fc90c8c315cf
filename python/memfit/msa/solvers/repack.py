"""Repack: plan-level local search whose offsets are re-derived, by greedy
relayouts and the exact packer (placement mode).

The game places each buffer at one of its ``K`` lowest skyline offsets at
the moment the buffer is decided, so some layouts (CP-SAT's optimum among
them: docs/msa.md, *Where the default misses CP-SAT's optimum*) cannot be
played, and no search or polish over game moves reaches them. This pass
works on plans only and re-derives the offsets:

1. from a valid solution, every one-buffer change of plan (any menu plan of
   ``plans.build_menus``; every other buffer keeps its plan) is timed in one
   batch by the game's jitted cost model (``game.estimated_time``, vmapped);
2. the changes that make the solution faster, fastest first, are checked
   for capacity per op (bytes resident at each op: a necessary condition
   that rules most out without a packer call), then given offsets:
   * *in place*: every other buffer keeps its offset and the changed buffer
     goes to the lowest free offset over all its residency intervals (0 or a
     top of a rectangle it meets: any free offset slides down to one of
     those, so this is exact for one buffer among fixed others);
   * else *relayouts*: all buffers re-placed that way, the changed ones
     first and then the others in the order of their offsets (a compaction
     downwards), or all by decreasing size;
   * else *repack*: ``memfit.pack.pack`` places all fast rectangles under the
     capacity at once, bounded by ``node_limit`` search nodes (so the result
     is the same on any machine and under any load);
3. the first change that gets offsets and that the validator (float64)
   times faster is accepted; repeat until no change helps.

The state (each buffer's plan and offset, the layout they take) is the
engine's (msa.solvers.moves, shared with the local search), and the
placements above are its ``first_fit``.

If no single change helps, pairs are tried: one of the improving changes
that did not fit, together with a change of another buffer, resident at the
same time, to a plan resident at fewer of those ops (the capacity the first
needs).

A buffer with two residency intervals (a ``split`` plan: home, then a
prefetch window after the eviction) must keep one offset for both, which the
packer (one interval per buffer) cannot express. It is first packed as its
*hull* (``[start, end]``, the gap included): conservative (the gap is not
lent to others), and any hull packing is a valid layout; but the hull is
ruled out by live bytes whenever the layout uses the gap (on every call
measured on the validation and training instances). Then the intervals are
packed as separate buffers (a relaxation) and a buffer whose two pieces got
two offsets is re-placed at one offset among the others (or all buffers in
the packer's address order): exact when it succeeds, which is rare (1 of
241 calls measured); the relayouts above find most of the layouts.

The output is never slower than the input (every step is accepted only on
the validator's time) and always validates (checked; an invalid layout is a
bug and raises).

``lay_out`` gives a whole plan set offsets (e.g. the plans of the offload
relaxation the learned agent plays with ``relax=True``) by a search over
first-fit orders (``_Search.order_layout``), which lays out plan sets with
split buffers that the relayouts and the packer above miss; with
``order_evals``, repack itself tries it on a change the relayouts cannot
place.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..core.instance import Instance
from ..core.plans import FastMemory, menu_index
from ..core.solution import Solution
from ..core.validator import validate
from .moves import MIN_GAIN, Engine, OutsideMenu, first_fit

#: Packer search nodes per call: bounds its time (a 40-rectangle packing
#: takes a few hundred nodes; a proof of infeasibility may need many more)
#: and makes the pass deterministic.
NODE_LIMIT = 20_000
#: Packer calls per round (one accepted change): the candidates are tried
#: fastest first, so a round stops at the first that packs.
MAX_PACKS_PER_ROUND = 48
#: Rounds (accepted changes) at most.
MAX_ROUNDS = 64
#: Pairs: the fastest improving changes that did not fit, each paired with
#: every lighter plan of every other buffer resident at the same time.
PAIR_FIRSTS = 16
#: First-fit layouts tried by ``order_layout`` for one plan set (a count,
#: not a time: the same result on any machine and under any load).
ORDER_EVALS = 3000


@dataclass
class RepackStats:
    rounds: int = 0             # accepted changes
    singles: int = 0            # of them one-buffer changes
    pairs: int = 0              # of them pairs
    in_place: int = 0           # placed without the packer, others where they were
    compact: int = 0            # by a greedy relayout
    pack_calls: int = 0
    packed: int = 0
    ordered: int = 0            # laid out by order_layout
    evaluated: int = 0          # candidate plan sets timed
    cpu_seconds: float = 0.0
    time_before: float = 0.0
    time_after: float = 0.0
    note: str = ""


_BATCH_TIME = None


class _Timer:
    """The game's cost model over many plan choices of one instance, batched."""

    def __init__(self, inst: Instance):
        import jax
        from ..core import game
        self.spec = game.encode(inst)
        self.B = int(self.spec.arrays.order.shape[0])
        global _BATCH_TIME
        if _BATCH_TIME is None:       # one jitted function: compiled once per bucket shape
            _BATCH_TIME = jax.jit(jax.vmap(game.estimated_time, in_axes=(None, 0)))
        self._f = _BATCH_TIME

    def __call__(self, choices: np.ndarray) -> np.ndarray:
        n = len(choices)
        if n == 0:
            return np.zeros(0)
        out = []
        for i in range(0, n, 1024):
            chunk = choices[i:i + 1024]
            m = 1 << max(3, int(np.ceil(np.log2(len(chunk)))))   # few compiled shapes
            pad = np.zeros((m, self.B), np.int32)
            pad[:len(chunk), :chunk.shape[1]] = chunk
            out.append(np.asarray(self._f(self.spec.arrays, pad))[:len(chunk)])
        return np.concatenate(out).astype(np.float64)


class _Search:
    """Repack's search on the engine's state (``moves.Engine``: each
    buffer's menu choice and offset, and the layout they take): the
    candidate changes are timed in batches and given offsets here, and an
    accepted one is applied to the engine."""

    def __init__(self, inst: Instance, sol: Solution, node_limit: int,
                 relayout: bool = True, t_valid: float = float("inf"), order_evals: int = 0):
        self.inst = inst
        self.order_evals = order_evals
        self.node_limit = node_limit
        self.relayout_on = relayout
        self.t_valid = t_valid          # the validator's time of the current layout
        self.engine = Engine(inst, sol)
        self.menus = self.engine.menus
        n, T = inst.num_buffers, max(inst.num_ops, 1)
        self.size = np.array([b.size for b in inst.buffers], np.int64)
        # residency intervals and per-op masks of every menu plan
        self.ivs = [[m.intervals(inst, b) for m in menu] for b, menu in enumerate(self.menus)]
        self.res = []
        for b in range(n):
            rows = np.zeros((len(self.menus[b]), T), bool)
            for q, ivs in enumerate(self.ivs[b]):
                for lo, hi in ivs:
                    rows[q, lo:hi + 1] = True
            self.res.append(rows)
        self.stats = RepackStats()

    @property
    def choice(self) -> np.ndarray:
        return self.engine.choice

    def offsets(self) -> np.ndarray:
        """Each buffer's offset now, -1 where it takes no room (slow, or size 0)."""
        e = self.engine
        return np.array([e.offset[b] if e.choice[b] and self.size[b] > 0 else -1
                         for b in range(len(self.menus))], np.int64)

    def _resident(self, choice, order) -> list:
        """``moves.first_fit``'s items: the buffers of ``order`` that take
        room under ``choice``."""
        return [(b, int(self.size[b]), self.ivs[b][int(choice[b])]) for b in order
                if self.ivs[b][int(choice[b])] and self.size[b] > 0]

    # -- solutions ----------------------------------------------------------
    def solution(self, choice, offset, method) -> Solution:
        out = []
        for b, menu in enumerate(self.menus):
            m = menu[int(choice[b])]
            off = None
            if m.kind != "slow":
                off = int(offset[b]) if offset[b] >= 0 else 0     # size 0: anywhere
            out.append(m.assignment(b, off))
        return Solution(self.inst.mode, method, out, "")

    def apply(self, choice, offset) -> None:
        """Make ``choice`` and ``offset`` (-1: no room) the engine's state."""
        e, old = self.engine, self.offsets()
        moved = [b for b in range(len(self.menus))
                 if choice[b] != e.choice[b] or offset[b] != old[b]]
        for b in moved:
            e.lift(b)
        for b in moved:
            e.set(b, int(choice[b]), int(offset[b]) if offset[b] >= 0 else 0)

    # -- feasibility --------------------------------------------------------
    def live_after(self, changes) -> np.ndarray:
        """Bytes resident at each op once ``changes`` are made."""
        live = self.engine.mem.live.copy()
        for b, q in changes:
            live += (self.res[b][q].astype(np.int64) - self.res[b][self.choice[b]]) * self.size[b]
        return live

    def bytes_ok(self, changes) -> bool:
        return bool((self.live_after(changes) <= self.inst.capacity).all())

    def in_place(self, changes):
        """Offsets with every unchanged buffer where it is, the changed ones
        each at the lowest offset free over all its intervals (None: no
        room)."""
        e = self.engine
        for b, _ in changes:
            e.lift(b)
        choice = self.choice.copy()
        for b, q in changes:
            choice[b] = q
        items = self._resident(choice, [b for b, _ in changes])
        at = e.placed_first([(b, ivs) for b, _, ivs in items])
        for b, _ in changes:
            e.drop(b)
        offset = self.offsets()
        offset[[b for b, _ in changes]] = -1
        return _placed(offset, items, at)

    def relayout(self, choice, order):
        """Every resident buffer placed in ``order`` at the lowest offset free
        over all its intervals (exact per buffer; None: one finds no room)."""
        items = self._resident(choice, order)
        return _placed(np.full(len(self.menus), -1, np.int64), items,
                       first_fit(FastMemory(self.inst), items))

    def compact(self, choice, changes):
        """Greedy relayouts: the changed buffers first, then the others in
        the order of their offsets now (a compaction downwards); else all
        by decreasing size."""
        moved = [b for b, _ in changes]
        now = self.offsets()
        rest = sorted((b for b in range(len(self.menus)) if b not in moved),
                      key=lambda b: (now[b], b))
        for order in (moved + rest,
                      sorted(range(len(self.menus)), key=lambda b: (-self.size[b], b))):
            offset = self.relayout(choice, order)
            if offset is not None:
                return offset
        return None

    def repack(self, choice):
        """Offsets for all resident buffers from the packer (None: none found)."""
        from ...pack.packer import Buffer, max_live_bytes, pack
        hull, pieces, two = [], [], False
        for b in range(len(self.menus)):
            ivs = self.ivs[b][int(choice[b])]
            if not ivs or self.size[b] == 0:
                continue
            lo, hi = min(i[0] for i in ivs), max(i[1] for i in ivs)
            hull.append(Buffer(b, lo, hi + 1, int(self.size[b])))
            two |= len(ivs) > 1
            for k, (l, h) in enumerate(ivs):
                pieces.append(Buffer(f"{b}.{k}", l, h + 1, int(self.size[b])))
        tries = [("hull", hull)] + ([("pieces", pieces)] if two else [])
        for kind, bufs in tries:
            if bufs and max_live_bytes(bufs) > self.inst.capacity:
                continue      # (the hull of a split buffer covers its gap)
            self.stats.pack_calls += 1
            r = pack(bufs, self.inst.capacity, time_limit=60.0, node_limit=self.node_limit,
                     cpu_time=True)
            if not r.packed:
                continue
            offset = self._glue(choice, bufs, r.offsets, kind)
            if offset is not None:
                self.stats.packed += 1
                return offset
        return None

    def _glue(self, choice, bufs, offs, kind):
        """The packer's offsets per buffer; a split buffer whose two pieces got
        two offsets is re-placed at the lowest offset free over both of its
        intervals among all the others (largest first; None: no room)."""
        offset = np.full(len(self.menus), -1, np.int64)
        torn = set()
        for buf, o in zip(bufs, offs):
            b = buf.id if kind == "hull" else int(buf.id.split(".")[0])
            if offset[b] >= 0 and offset[b] != o:
                torn.add(b)
            offset[b] = o
        if not torn:
            return offset
        mem = FastMemory(self.inst)
        for b in range(len(self.menus)):
            if offset[b] >= 0 and b not in torn:
                mem.add(int(self.size[b]), self.ivs[b][int(choice[b])], int(offset[b]))
        torn = sorted(torn, key=lambda b: (-self.size[b], b))
        at = first_fit(mem, self._resident(choice, torn))
        if at is None:
            # all buffers again, in the packer's address order (a torn
            # buffer at its lower piece's offset)
            low = {}
            for buf, o in zip(bufs, offs):
                b2 = int(buf.id.split(".")[0])
                low[b2] = min(low.get(b2, o), o)
            return self.relayout(choice, sorted(low, key=lambda x: (low[x], x)))
        offset[torn] = at
        return offset

    def order_layout(self, choice, evals: int = ORDER_EVALS, seed: int = 0,
                     repair: bool = False):
        """Offsets for ``choice`` by a search over first-fit orders (None:
        none found in ``evals`` layouts; with ``repair``, the lowest layout
        found instead, each buffer whose top is above the capacity made slow
        in ``choice``, in place: a valid layout of fewer fast buffers). Each
        order places every resident buffer, in turn, at the lowest offset
        free over all its intervals, with no ceiling; an order is kept when its height (the highest top)
        is no greater, and the search stops at the first order whose height
        fits the capacity. Starts: decreasing size, decreasing area, by
        start; then moves one buffer (half the time the highest one, else
        any) to a random earlier place in the order. Why: a split buffer's
        two intervals share one offset, which the packer cannot express
        (its hull packing rules out the gap), and one fixed order often
        fails where another fits (CP-SAT's own optimal layouts are first-fit
        in the order of their offsets)."""
        ids = [b for b in range(len(self.menus))
               if self.ivs[b][int(choice[b])] and self.size[b] > 0]
        items = [(int(self.size[b]), self.ivs[b][int(choice[b])]) for b in ids]
        rng = np.random.default_rng(seed)
        n, cap = len(items), self.inst.capacity
        start = [min(lo for lo, _ in ivs) for _, ivs in items]
        span = [sum(hi - lo + 1 for lo, hi in ivs) for _, ivs in items]
        starts = [sorted(range(n), key=lambda i: (-items[i][0], start[i], i)),
                  sorted(range(n), key=lambda i: (-items[i][0] * span[i], i)),
                  sorted(range(n), key=lambda i: (start[i], -items[i][0], i))]
        best = None
        for k in range(evals):
            order = starts[k] if k < len(starts) else _moved_earlier(items, *best, rng)
            offs, height = _first_fit_height(items, order)
            if best is None or height <= best[1]:
                best = (order, height, offs)
            if height <= cap:
                self.stats.ordered += 1
                offset = np.full(len(self.menus), -1, np.int64)
                offset[ids] = offs
                return offset
        if not repair or best is None:
            return None
        offset = np.full(len(self.menus), -1, np.int64)
        for i, b in enumerate(ids):
            if best[2][i] + items[i][0] <= cap:
                offset[b] = best[2][i]
            else:
                choice[b] = 0           # the menu's slow plan
        return offset

    # -- one round ----------------------------------------------------------
    def try_changes(self, cands, times, t_now, budget) -> bool:
        """Try candidate change sets fastest first (at most ``budget`` packer
        calls); apply the first that gets offsets and is faster by the
        validator. Returns whether one was applied."""
        for i in np.argsort(times, kind="stable"):
            if times[i] >= t_now * (1 - MIN_GAIN):
                break
            changes = cands[i]
            if not self.bytes_ok(changes):
                continue
            choice = self.choice.copy()
            for b, q in changes:
                choice[b] = q
            offset = self.in_place(changes)
            where = "in place"
            if offset is None and self.relayout_on:
                offset = self.compact(choice, changes)
                where = "compact"
            if offset is None and self.order_evals:
                offset = self.order_layout(choice, self.order_evals)
                where = "ordered"
            if offset is None and self.relayout_on:
                if budget <= 0:
                    continue
                budget -= 1
                offset = self.repack(choice)
                where = "repack"
            if offset is None:
                continue
            sol = self.solution(choice, offset, "repack")
            v = validate(self.inst, sol)
            if not v.valid:
                raise RuntimeError(f"BUG: repack ({where}) produced an invalid layout for "
                                   f"{self.inst.program}: {v.summary()}")
            if v.estimated_time >= self.t_valid * (1 - MIN_GAIN):
                continue      # the float32 model's gain is not real
            self.apply(choice, offset)
            self.t_valid = v.estimated_time
            self.stats.in_place += where == "in place"
            self.stats.compact += where == "compact"
            return True
        return False


def _placed(offset: np.ndarray, items, at) -> np.ndarray | None:
    """``offset`` with the buffer of each ``moves.first_fit`` item at its
    place in ``at`` (None where ``at`` is)."""
    if at is None:
        return None
    for (b, _, _), y in zip(items, at):
        offset[b] = y
    return offset


def _moved_earlier(items, order, height, offs, rng) -> list[int]:
    """``order`` with one item (half the time the one whose top is highest
    in its layout ``offs``, else any) moved to a random earlier place."""
    n = len(order)
    tops = [o + items[i][0] for i, o in enumerate(offs)]
    b = (max(range(n), key=lambda i: (tops[i], rng.random())) if rng.random() < 0.5
         else int(rng.integers(n)))
    out = list(order)
    p = out.index(b)
    out.pop(p)
    out.insert(int(rng.integers(0, p + 1)), b)
    return out


def _first_fit_height(items, order) -> tuple[list[int], int]:
    """Offsets of ``items`` (``(size, intervals)``) placed in ``order``,
    each at the lowest offset free over all its intervals among those placed
    before it (no ceiling), and the height (the highest top). Not
    plans.FastMemory: its offsets stop at the capacity (here the height
    above it is the search's measure), and its per-op byte counts in numpy
    cost more than this sweep over the few rectangles met, thousands of
    layouts a call."""
    placed: list[tuple[int, int, int, int]] = []     # lo, hi, y0, y1
    offs, height = [0] * len(items), 0
    for i in order:
        size, ivs = items[i]
        busy = sorted((y0, y1) for lo, hi, y0, y1 in placed
                      if any(lo <= h and l <= hi for l, h in ivs))
        y = 0
        for y0, y1 in busy:
            if y0 >= y + size:
                break
            y = max(y, y1)
        offs[i] = y
        placed += [(lo, hi, y, y + size) for lo, hi in ivs]
        height = max(height, y + size)
    return offs, height


def lay_out(inst: Instance, sol: Solution, plans: Solution,
            evals: int = ORDER_EVALS, repair: bool = False) -> Solution | None:
    """``plans``' plans (a solution of the same buffers in either mode, e.g.
    of the offload relaxation) with offsets in placement-mode ``inst``
    (``_Search.order_layout``), or None when none is found (``repair``: the
    lowest layout found, the buffers above the capacity made slow) or a plan
    is outside the menus. ``sol``: a valid solution of ``inst``. The result
    is checked by the validator (an invalid layout is a bug and raises)."""
    try:
        s = _Search(inst, sol, NODE_LIMIT)
    except OutsideMenu:
        return None
    by_id = plans.by_id()
    picks = [menu_index(s.menus[b], by_id[b]) if b in by_id else None
             for b in range(inst.num_buffers)]
    if None in picks:
        return None
    choice = np.array(picks, np.int32)
    offset = s.order_layout(choice, evals, repair=repair)
    if offset is None:
        return None
    out = s.solution(choice, offset, plans.method)
    v = validate(inst, out)
    if not v.valid:
        raise RuntimeError(f"BUG: lay_out produced an invalid layout for {inst.program}: "
                           f"{v.summary()}")
    return out


def repack(inst: Instance, sol: Solution, *, node_limit: int = NODE_LIMIT,
           max_rounds: int = MAX_ROUNDS, max_packs: int = MAX_PACKS_PER_ROUND,
           pairs: bool = True, relayout: bool = True, pair_firsts: int = PAIR_FIRSTS,
           any_first: bool = False, order_evals: int = 0) -> tuple[Solution, RepackStats]:
    """Improves a valid placement-mode solution by plan changes with offsets
    re-derived by the packer (module docstring). Returns ``(solution,
    stats)``; the solution is ``sol`` itself when nothing helped (or the mode
    is offload, or a buffer's plan is outside the menus). ``relayout=False``
    keeps only the in-place placements (every other buffer where it is: for
    comparison, what a 1-opt over plans at fixed offsets reaches)."""
    c0 = time.process_time()
    v0 = validate(inst, sol)
    if not v0.valid:
        raise ValueError("repack needs a valid solution:\n" + v0.summary())
    if inst.mode != "placement":
        return sol, RepackStats(note="offload mode: nothing to repack")
    try:
        s = _Search(inst, sol, node_limit, relayout, v0.estimated_time, order_evals)
    except OutsideMenu as e:
        return sol, RepackStats(note=f"buffer {e.buffer}'s plan is outside the menus")
    s.stats.time_before = v0.estimated_time
    timer = _Timer(inst)
    n = inst.num_buffers
    for _ in range(max_rounds):
        t_now = float(timer(s.choice[None])[0])
        singles = [((b, q),) for b in range(n) for q in range(len(s.menus[b]))
                   if q != s.choice[b]]
        times = timer(_choices(s.choice, singles))
        s.stats.evaluated += len(singles)
        ok = s.try_changes(singles, times, t_now, max_packs)
        if ok:
            s.stats.singles += 1
            s.stats.rounds += 1
            continue
        if not pairs:
            break
        cand = _pairs(s, singles, times, t_now, pair_firsts, any_first)
        if not cand:
            break
        ptimes = timer(_choices(s.choice, cand))
        s.stats.evaluated += len(cand)
        ok = s.try_changes(cand, ptimes, t_now, max_packs)
        if not ok:
            break
        s.stats.pairs += 1
        s.stats.rounds += 1
    s.stats.time_after = s.t_valid
    s.stats.cpu_seconds = time.process_time() - c0
    if s.stats.rounds == 0:
        return sol, s.stats
    out = s.solution(s.choice, s.offsets(), sol.method)
    out.notes = sol.notes
    return out, s.stats


def _choices(choice: np.ndarray, cands) -> np.ndarray:
    out = np.repeat(choice[None], len(cands), axis=0)
    for i, changes in enumerate(cands):
        for b, q in changes:
            out[i, b] = q
    return out


def _pairs(s: _Search, singles, times, t_now, firsts: int = PAIR_FIRSTS,
           any_first: bool = False):
    """Pairs: one of the ``firsts`` fastest one-buffer changes (improving ones
    only, unless ``any_first``) with a change of another buffer to a plan
    resident at fewer of the ops the first change newly needs."""
    order = np.argsort(times, kind="stable")[:firsts]
    heads = [singles[i][0] for i in order if any_first or times[i] < t_now * (1 - MIN_GAIN)]
    out = []
    for b, q in heads:
        need = s.res[b][q] & ~s.res[b][s.choice[b]]
        if not need.any():
            continue
        for c in range(len(s.menus)):
            if c == b or s.size[c] == 0:
                continue
            here = (s.res[c][s.choice[c]] & need).sum()
            if here == 0:
                continue
            for q2 in range(len(s.menus[c])):
                if q2 != s.choice[c] and (s.res[c][q2] & need).sum() < here:
                    out.append(((b, q), (c, q2)))
    return out
