"""Plan-menu local search: improve any solution of menu plans, at any size.

The game's polish (learned/play.py ``polish_batch``) completes every tried
change by replaying the rest of the game, so a pass costs about the square
of the buffer count in game steps: affordable up to a few hundred buffers,
not at the 1,000-4,000 buffers of the big programs (data/msa/, a 2,048-move
game step is tens of milliseconds). This search keeps every other buffer's
plan as it is instead and times each change with the cost model itself
(``model.Clock``, its incremental view: ``model.simulate``'s events, the
ops between two copies summed at once, each change swept from the last
snapshot before it; 0.2-0.3 ms per change at 1,400 buffers), so a pass
costs one such evaluation per (buffer, menu plan) pair that fits. The
state, the layout and the try/apply/undo of a move are the engine's
(msa.solvers.moves, shared with repack).

A move changes one buffer's plan to another plan of its menu
(``plans.build_menus``: the plans the heuristic, the game and CP-SAT choose
from) where the bytes resident at every op stay within the capacity; a pass
visits the buffers once, largest access benefit first, and takes each
buffer's best move that makes the program faster. Nothing is ever accepted
that makes it slower, so the result is never slower than the start.

In placement mode a move must also find the buffer an offset where its
rectangles meet no other buffer's (``plans.FastMemory.fit``: every other
buffer stays where it is); with ``compact``, once no move pays, the layout
is compacted downwards (``moves.Engine.compact``: plans and time unchanged,
the free space gathered at the top) and the passes go on (the learned
agent's default above the 256-move bucket); msa.solvers.repack is the
placement search that also moves the others (relayouts, the exact
packer), at a cost that grows much faster.

``iterate`` runs the descent again and again from random kicks (an iterated
local search); in placement mode its ``layout_rounds`` kick the layout too
(``_Search.eject``: one buffer into fast memory, every buffer in its way
out; ``_Search.relayout_kick``: a neighbourhood re-placed in a random order)
and descend with ``_Search.relayout`` moves (a change that fits the bytes
but not the layout, made to fit by re-placing the buffers in its way).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..core.instance import Instance
from ..core.model import simulate
from ..core.solution import Solution
from .moves import MIN_GAIN, Engine


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


def _visit_order(inst: Instance, picker) -> list[int]:
    """Buffers by how much their accesses gain from fast memory (most first):
    the changes most likely to pay are tried while the game is still open."""
    gain = np.zeros(inst.num_buffers)
    for t in range(inst.num_ops):
        for b in inst.accesses(t):
            gain[b] += picker.use_reduction(b, t)
    return [int(b) for b in np.argsort(-gain, kind="stable")]


#: Pair moves: the blockers tried per blocked change (largest first).
PAIR_BLOCKERS = 4
#: ``_Search.layout_kick``: the share of ejections (the rest re-lay out a
#: neighbourhood).
EJECT_SHARE = 0.6


class _Search(Engine):
    """The search's state (``moves.Engine``: each buffer's menu choice and
    offset, the layout they take and the clock that times them), the time
    now (``best``), the visiting order and what the search did."""

    def __init__(self, inst: Instance, sol: Solution):
        super().__init__(inst, sol)
        self.best = self.clock.time()
        self.order = _visit_order(inst, self.picker)
        self.stats = Stats(start_time=simulate(inst, self.current).estimated_time)

    def time(self, changes) -> float:
        self.stats.tried += 1
        return super().time(changes)

    def single(self, b: int) -> bool:
        """b's best plan change that fits and makes the program faster."""
        self.lift(b)
        pick, pick_time, pick_at = None, self.best, None
        for i, pl in enumerate(self.plan[b]):
            if i == self.choice[b]:
                continue
            at = self.fit(b, pl.intervals(), self.offset[b]) if i else None
            if i and at is None:
                continue
            t = self.time([(b, i)])
            if t < pick_time * (1 - MIN_GAIN):
                pick, pick_time, pick_at = i, t, at
        if pick is None:
            self.drop(b)
            return False
        self.set(b, pick, pick_at)
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
        self.lift(b)
        best = (None, self.best)
        for i, pl in enumerate(self.plan[b]):
            if (i == 0 or i == self.choice[b]
                    or self.fit(b, pl.intervals(), self.offset[b]) is not None
                    or self.time([(b, i)]) >= self.best * (1 - MIN_GAIN)):
                continue
            for c in self._blockers(b, pl.intervals()):
                self.lift(c)
                for q in range(len(self.plan[c])):
                    if q == self.choice[c]:
                        continue
                    at_c = self.fit(c, self.intervals(c, q), self.offset[c]) if q else None
                    if q and at_c is None:
                        continue
                    if q:
                        self._add(c, self.intervals(c, q), at_c)
                    at_b = self.fit(b, pl.intervals(), self.offset[b])
                    if q:
                        self.mem.remove(self.size[c], self.intervals(c, q), c)
                    if at_b is None:
                        continue
                    t = self.time([(b, i), (c, q)])
                    if t < best[1] * (1 - MIN_GAIN):
                        best = ((i, at_b, c, q, at_c), t)
                self.drop(c)
        if best[0] is None:
            self.drop(b)
            return False
        i, at_b, c, q, at_c = best[0]
        self.lift(c)
        self.set(c, q, at_c)
        self.set(b, i, at_b)
        self.best = best[1]
        return True

    def state(self) -> tuple:
        """The plans, offsets and time now (``restore`` returns to them)."""
        return (*super().state(), self.best)

    def restore(self, state: tuple) -> None:
        super().restore(state)
        self.best = state[2]

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
            self.lift(b)
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
            at = self.fit(b, pl.intervals()) if i else None
            if i == 0 or at is not None:
                options.append((i, at))
        if not options:
            self.drop(b)
            return False
        i, at = options[int(rng.integers(len(options)))]
        self.set(b, i, at)
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
        self.lift(b)
        r = self.mem.rects
        meet = self.mem.meeting(ivs)
        ys = [y for y in sorted({0} | {int(y) for y in r[meet, 3]}) if y + size <= cap]
        if not ys:
            self.drop(b)
            return frozenset()
        evicted = {y: sorted({int(c) for c in r[meet & (r[:, 2] < y + size) & (y < r[:, 3]), 4]})
                   for y in ys}
        if rng.random() < 0.5:
            cost = {y: sum(self.inst.buffers[c].size for c in evicted[y]) for y in ys}
            least = min(cost.values())
            ys = [y for y in ys if cost[y] == least]
        y = ys[int(rng.integers(len(ys)))]
        for c in evicted[y]:
            self.lift(c)
            self.set(c, 0, None)
        self.set(b, i, y)
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
            self.lift(b)
        changed = set()
        for b in moved:
            if b not in pick and self.choice[b]:
                at = self.fit(b, self.intervals(b))
                if at is not None:
                    self.offset[b] = at
                    self.drop(b)
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
        self.lift(b)
        cands = []
        for i, pl in enumerate(self.plan[b]):
            ivs = pl.intervals()
            if (i == 0 or i == self.choice[b] or not self.fits_bytes(b, ivs)
                    or self.fit(b, ivs, self.offset[b]) is not None):
                continue
            t = self.time([(b, i)])
            if t < self.best * (1 - MIN_GAIN):
                cands.append((t, i))
        for t, i in sorted(cands):
            ivs = self.plan[b][i].intervals()
            way = sorted({int(c) for c in self.mem.rects[self.mem.meeting(ivs), 4]})
            for order in (sorted(way, key=lambda c: (self.offset[c], c)),
                          sorted(way, key=lambda c: (-self.inst.buffers[c].size, c))):
                for c in order:
                    self.lift(c)
                at = self.placed_first([(b, ivs)] + [(c, self.intervals(c)) for c in order])
                for c in order:
                    self.drop(c)
                if at is not None:
                    placed = dict(zip([b] + order, at))
                    for c in way:
                        self.lift(c)
                        self.offset[c] = placed[c]
                        self.drop(c)
                    self.set(b, i, placed[b])
                    self.best = t
                    return True
        self.drop(b)
        return False


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
    (``moves.Engine.compact``, counted as a pass) and the passes go on, unless
    nothing changed since the last compaction); stops early when a pass
    changes nothing or ``time_limit`` seconds have passed (checked between
    buffers). In placement mode a moved buffer keeps its offset where it
    still fits, else takes the lowest free one (``plans.FastMemory.fit``). Returns the
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
        if s.best < best[2] * (1 - MIN_GAIN):
            best = s.state()
    return best
