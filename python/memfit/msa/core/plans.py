"""Per-buffer plan menus, the prefetch interval picker, and fast-memory bookkeeping.

The solution format can say more than any solver here searches over. The
heuristic, the game and the exact solver all choose, per buffer, one plan from
the same small *menu*, so that the exact solver's bound is a bound over exactly
the family the other solvers choose from:

* ``slow``: never in fast memory (menu index 0, always present);
* ``keep``: fast for the whole lifetime ``[start, end]``;
* ``split``: fast from ``start`` through an access ``a_i``, evicted after it,
  prefetched back before the next use ``a_{i+1}`` and kept through ``end``
  (one per long gap between accesses, ``max_gaps`` of them, largest first);
* ``prefetch``: written to slow memory, prefetched before the first use and
  kept through ``end`` (XLA's prefetch of a buffer that lives in default
  memory, e.g. an argument).

Each copy plan comes with up to two window starts chosen by the picker below
(the preferred one first, then the latest one).

The picker mirrors XLA's ``CostAnalysisPrefetchIntervalPicker``
(xla/service/memory_space_assignment/prefetch_interval_picker.cc):
``LatestPrefetchStartTime`` (the latest start whose overlapped elapsed time,
plus the use's speed-up, is at least ``min_overlap_ratio`` times the copy
time), ``PreferredPrefetchStartTime`` (the start whose overlapped elapsed time
is closest to ``preferred_overlap_ratio`` times the copy time), and the
earliest start bounded by ``max_overlap_to_mem_size_async_copy_ratio`` times
the time to copy all of fast memory. The logical-interval elapsed time is the
sum of the ops' roofline times with every access in slow (default) memory, as
XLA's ``GetLogicalIntervalElapsed`` sums ``GetInstructionElapsed``. (With the
all-fast roofline instead, windows look too short and copies are rejected:
the heuristic on an exported MLP training step was 41% slower.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .instance import Instance
from .model import Plan, access_seconds, compute_seconds, op_seconds
from .solution import BufferAssignment, Prefetch

# XLA's defaults for the picker (xla/debug_options_flags.cc,
# xla_tpu_msa_* / memory_space_assignment options).
MIN_OVERLAP_RATIO = 1.0
PREFERRED_OVERLAP_RATIO = 1.5
MAX_OVERLAP_TO_MEM_SIZE_RATIO = 10.0


@dataclass(frozen=True)
class MenuPlan:
    kind: str                      # slow | keep | split | prefetch
    evict: int | None = None       # split: evict after this op
    use: int | None = None         # split/prefetch: the first prefetched use
    start: int | None = None       # split/prefetch: window start op

    def assignment(self, b: int, offset: int | None = None) -> BufferAssignment:
        if self.kind == "slow":
            return BufferAssignment(b, "slow")
        if self.kind == "keep":
            return BufferAssignment(b, "fast", offset)
        pf = [Prefetch(self.use, self.start)]
        if self.kind == "split":
            return BufferAssignment(b, "fast", offset, pf, self.evict)
        return BufferAssignment(b, "slow", offset, pf, None)

    def plan(self, inst: Instance, b: int) -> Plan:
        buf = inst.buffers[b]
        if self.kind == "slow":
            return Plan(None)
        if self.kind == "keep":
            return Plan((buf.start, buf.end))
        win = [(self.start, self.use, buf.end)]
        if self.kind == "split":
            return Plan((buf.start, self.evict), win, self.evict)
        return Plan(None, win, None)

    def intervals(self, inst: Instance, b: int) -> list[tuple[int, int]]:
        return self.plan(inst, b).intervals()


class Picker:
    """XLA's cost-analysis prefetch interval picker over this instance."""

    def __init__(self, inst: Instance, min_ratio: float = MIN_OVERLAP_RATIO,
                 preferred_ratio: float = PREFERRED_OVERLAP_RATIO,
                 max_ratio: float = MAX_OVERLAP_TO_MEM_SIZE_RATIO):
        self.inst = inst
        self._reductions: dict[int, dict[int, float]] = {}    # op -> use_reduction per buffer
        n = inst.num_ops
        # XLA's logical-interval elapsed: every op with all its accesses in
        # default (slow) memory (CostAnalysis::GetInstructionElapsed).
        self.slow = np.array([op_seconds(inst, t, {}) for t in range(n)], dtype=np.float64)
        self.fast = np.array([op_seconds(inst, t, {b: True for b in inst.accesses(t)})
                              for t in range(n)], dtype=np.float64)
        self.ref = self.slow
        self.cum = np.concatenate([[0.0], np.cumsum(self.ref)])
        self.min_ratio, self.preferred_ratio = min_ratio, preferred_ratio
        self.max_elapsed = max_ratio * inst.capacity / inst.device.copy_bandwidth

    def elapsed(self, s: int, u: int) -> float:
        """Time of ops s .. u-1 (those a copy issued before op s overlaps)."""
        return float(self.cum[u] - self.cum[s])

    def use_reduction(self, b: int, u: int) -> float:
        """How much faster op u gets when b is read from fast memory."""
        red = self._reductions.get(u)
        if red is None:
            red = self._reductions[u] = self._op_reductions(u)
        return red[b]

    #: rows of access sums formed at once by _op_reductions
    REDUCTION_ROWS = 256

    def _op_reductions(self, u: int) -> dict[int, float]:
        """``use_reduction`` of every buffer op u accesses, computed as
        ``op_seconds`` does it, bit for bit: row j sums the accesses in
        order, access j fast and the others slow (``np.cumsum`` adds in
        sequence, as ``op_seconds``' loop does), so an op with A accesses
        costs one A x A array pass instead of A calls of A steps each (the
        RNN programs' ops of up to 385 accesses made the menus take seconds)."""
        inst = self.inst
        acc = inst.accesses(u)
        slow = np.array([access_seconds(inst, x, False) for x in acc], np.float64)
        fast = np.array([access_seconds(inst, x, True) for x in acc], np.float64)
        w, compute = inst.ops[u].weight, compute_seconds(inst, u)
        base = w * max(compute, float(np.cumsum(slow)[-1])) if len(acc) else 0.0
        out: dict[int, float] = {}
        for lo in range(0, len(acc), self.REDUCTION_ROWS):
            rows = np.arange(lo, min(lo + self.REDUCTION_ROWS, len(acc)))
            m = np.broadcast_to(slow, (len(rows), len(acc))).copy()
            m[np.arange(len(rows)), rows] = fast[rows]
            for j, total in zip(rows.tolist(), np.cumsum(m, axis=1)[:, -1].tolist()):
                out[acc[j]] = base - w * max(compute, total)
        return out

    def windows(self, b: int, lo: int, u: int) -> list[int]:
        """Window starts in [lo, u-1] to try, preferred first, then latest."""
        if lo > u - 1:
            return []
        copy = self.inst.buffers[b].size / self.inst.device.copy_bandwidth * self.inst.ops[u].weight
        red = self.use_reduction(b, u)
        # The elapsed times of windows lo .. u-1, formed as ``elapsed`` forms
        # each (the same float operations, so the same choices to the bit),
        # at once: a window scan is otherwise a Python loop per op.
        el = self.cum[u] - self.cum[lo:u]
        # LatestPrefetchStartTime
        ok = np.flatnonzero(el + red >= self.min_ratio * copy)
        latest = lo + int(ok[-1]) if len(ok) else lo
        # earliest: the copy may not be resident longer than max_elapsed
        within = np.flatnonzero(el[:latest - lo] <= self.max_elapsed)
        earliest = lo + int(within[0]) if len(within) else latest
        # PreferredPrefetchStartTime (earliest on ties)
        want = self.preferred_ratio * copy
        best = earliest + int(np.argmin(np.abs(want - el[earliest - lo:latest - lo + 1])))
        return list(dict.fromkeys([best, latest]))

    def can_keep(self, b: int) -> bool:
        """CanAllocateInAlternateMemoryNoCopy: lifetime short enough to keep."""
        buf = self.inst.buffers[b]
        return self.elapsed(buf.start, buf.end + 1) < self.max_elapsed


def build_menu(inst: Instance, b: int, picker: Picker, max_gaps: int = 2) -> list[MenuPlan]:
    """The buffer's plans; index 0 is always slow."""
    buf = inst.buffers[b]
    menu = [MenuPlan("slow"), MenuPlan("keep")]
    points = list(buf.uses) if buf.kind == "argument" else [buf.start] + list(buf.uses)
    gaps = []
    for i in range(len(points) - 1):
        a, nxt = points[i], points[i + 1]
        if nxt - a >= 2:
            gaps.append((picker.elapsed(a + 1, nxt), a, nxt))
    gaps.sort(key=lambda g: (-g[0], g[1]))
    for _, a, nxt in gaps[:max_gaps]:
        for s in picker.windows(b, a + 1, nxt):
            menu.append(MenuPlan("split", evict=a, use=nxt, start=s))
    if buf.uses:
        u1 = buf.uses[0]
        for s in picker.windows(b, inst.available_from(b), u1):
            menu.append(MenuPlan("prefetch", use=u1, start=s))
    return menu


def build_menus(inst: Instance, max_gaps: int = 2) -> tuple[Picker, list[list[MenuPlan]]]:
    key = ("_menus", max_gaps, len(inst.ops), len(inst.buffers), inst.capacity)
    cached = inst.__dict__.get("_menus")
    if cached is not None and cached[0] == key:
        return cached[1]
    picker = Picker(inst)
    out = picker, [build_menu(inst, b, picker, max_gaps) for b in range(inst.num_buffers)]
    inst.__dict__["_menus"] = (key, out)
    return out


def menu_index(menu: list[MenuPlan], a: BufferAssignment) -> int | None:
    """The menu entry an assignment corresponds to (None if outside the menu)."""
    for i, m in enumerate(menu):
        x = m.assignment(a.id, a.offset)
        if (x.space == a.space and x.evict_after == a.evict_after
                and [(p.use, p.start) for p in x.prefetches]
                == sorted((p.use, p.start) for p in a.prefetches)):
            return i
    return None


# -- fast-memory bookkeeping ---------------------------------------------------

@dataclass
class FastMemory:
    """What is in fast memory: the bytes resident at each op (``live``)
    and, in placement mode, the placed rectangles (a residency interval x
    ``[offset, offset + size)``), each with its owner (a buffer id, -1 when
    none is given) so that a buffer can be taken out again (``remove``): the
    one layout every solver builds (the heuristic, the baselines, the local
    search's moves, repack's relayouts)."""
    inst: Instance
    live: np.ndarray = field(init=False)

    def __post_init__(self):
        self.live = np.zeros(max(self.inst.num_ops, 1), dtype=np.int64)
        self._arr = np.zeros((16, 5), dtype=np.int64)   # rects, grown by doubling
        self._n = 0

    @property
    def rects(self) -> np.ndarray:
        """The placed rectangles, one row each: lo, hi, y0, y1, owner."""
        return self._arr[:self._n]

    def fits_capacity(self, size: int, intervals) -> bool:
        for lo, hi in intervals:
            if (self.live[lo:hi + 1] + size > self.inst.capacity).any():
                return False
        return True

    def meeting(self, intervals) -> np.ndarray:
        """Which rectangles meet ``intervals`` in time (a mask over ``rects``)."""
        a = self.rects
        hit = np.zeros(len(a), dtype=bool)
        for l, h in intervals:
            hit |= (a[:, 0] <= h) & (l <= a[:, 1])
        return hit

    def _conflicts(self, intervals) -> np.ndarray:
        """Address ranges of placed rectangles that overlap the intervals in time."""
        return self.rects[self.meeting(intervals)][:, 2:4]

    def best_fit(self, size: int, intervals) -> int | None:
        """GlobalDecreasingSizeBestFitHeap::FindChunkCandidate: the smallest free
        gap (over the intervals' time span) that holds ``size``; its lowest offset."""
        if not self.fits_capacity(size, intervals):
            return None
        busy = self._conflicts(intervals)
        cap = self.inst.capacity
        busy = busy[np.argsort(busy[:, 0], kind="stable")]
        y0 = np.concatenate([busy[:, 0], [cap]])
        y1 = np.concatenate([[0], busy[:, 1]])
        pos = np.maximum.accumulate(y1)          # free from here, before rect i
        gap = y0 - pos
        ok = gap >= max(size, 1) if size > 0 else gap >= 0
        if not ok.any():
            return None
        i = int(np.argmin(np.where(ok, gap, np.iinfo(np.int64).max)))
        return int(pos[i])

    def lowest_offsets(self, size: int, intervals, k: int) -> list[int]:
        """The k lowest feasible offsets among 0 and the tops of conflicting rectangles
        (the skyline candidates the game offers)."""
        busy = [(int(a), int(b)) for a, b in self._conflicts(intervals)]
        cands = sorted({0} | {y1 for _, y1 in busy})
        out = []
        for c in cands:
            if c + size > self.inst.capacity:
                break
            if all(not (c < y1 and y0 < c + size) for y0, y1 in busy):
                out.append(c)
                if len(out) == k:
                    break
        return out

    def fit(self, size: int, intervals, prefer: int | None = None) -> int | None:
        """The offset a buffer of ``size`` bytes takes over ``intervals``:
        ``prefer`` if it is free there, else the lowest free offset (0 or
        the top of a rectangle it meets in time: any free offset slides down
        to one of those), or None (no room, or the bytes exceed the capacity
        at some op)."""
        if not self.fits_capacity(size, intervals):
            return None
        cap = self.inst.capacity
        busy = self._conflicts(intervals)
        y0, y1 = busy[:, 0], busy[:, 1]
        if (prefer is not None and prefer + size <= cap
                and not ((prefer < y1) & (y0 < prefer + size)).any()):
            return int(prefer)
        return _lowest_gap(y0, y1, size, cap)

    def add(self, size: int, intervals, offset: int | None = None, owner: int = -1) -> None:
        for lo, hi in intervals:
            self.live[lo:hi + 1] += size
            if offset is not None:
                if self._n == len(self._arr):
                    self._arr = np.concatenate([self._arr, np.zeros_like(self._arr)])
                self._arr[self._n] = (lo, hi, offset, offset + size, owner)
                self._n += 1

    def copy(self) -> "FastMemory":
        out = FastMemory(self.inst)
        out.live, out._arr, out._n = self.live.copy(), self._arr.copy(), self._n
        return out

    def remove(self, size: int, intervals, owner: int) -> None:
        """Take out what ``add(size, intervals, ..., owner)`` put in."""
        for lo, hi in intervals:
            self.live[lo:hi + 1] -= size
        keep = self.rects[self.rects[:, 4] != owner]
        self._arr[:len(keep)] = keep
        self._n = len(keep)


def _lowest_gap(y0: np.ndarray, y1: np.ndarray, size: int, cap: int):
    """The lowest offset where ``[offset, offset + size)`` meets none of the
    spans ``[y0, y1)`` and ends by ``cap``, or None: a sweep over the spans
    by their starts (an array pass, where testing every span top against
    every span costs the square of the spans met)."""
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
