"""The local-improvement engine the plan-menu searches share.

localsearch (moves timed by the cost model's incremental view) and repack
(moves whose offsets are re-derived by relayouts and the packer) improve a
solution by the same kind of move: one buffer, or a few, changed to another
plan of its menu (``plans.build_menus``: the plans the heuristic, the game
and CP-SAT choose from), every other buffer kept as it is, and placed where
its rectangles meet no other buffer's. ``Engine`` holds what both need:

* the state: each buffer's menu choice and offset, the layout they take (a
  ``plans.FastMemory``, the one layout helper) and the clock that times them
  (``model.Clock``, the cost model's incremental view);
* a move as try, apply or undo: ``lift`` takes a buffer out of the layout,
  ``fit`` finds it an offset over a plan's intervals, ``time`` times a set
  of changes without making them, ``set`` makes one (the buffer lifted) and
  ``drop`` puts a lifted buffer back as it was;
* ``first_fit``, the relayout both searches build from (buffers placed in a
  given order, each at the lowest free offset), and ``compact`` (every fast
  buffer moved down in the order of its offset: plans and time unchanged);
* ``state``/``restore`` and the solution.

The game's polish and pair passes (learned/play.py) try the same changes of
plan but as moves of the game, completed by replaying the rest of the game
in jax, batched over games; they share the menus and the cost model, not
this state (docs/msa.md, *Solvers*).
"""
from __future__ import annotations

import numpy as np

from ..core.instance import Instance
from ..core.model import Clock
from ..core.plans import FastMemory, build_menus, menu_index
from ..core.solution import Solution

#: A move is taken only when it makes the program faster by more than this
#: fraction (so that rounding cannot make a search cycle).
MIN_GAIN = 1e-9


class OutsideMenu(ValueError):
    """A buffer's assignment is not a plan of its menu: these searches move
    between menu plans only."""

    def __init__(self, b: int):
        super().__init__(f"buffer {b}: its assignment is not a plan of its menu "
                         "(plans.build_menus); the local search moves between menu plans only")
        self.buffer = b


def menu_choices(menus, sol: Solution) -> np.ndarray:
    """Menu index of each buffer's assignment in ``sol`` (``OutsideMenu``
    for one outside its menu)."""
    by_id = sol.by_id()
    out = np.zeros(len(menus), np.int64)
    for b, menu in enumerate(menus):
        i = menu_index(menu, by_id[b])
        if i is None:
            raise OutsideMenu(b)
        out[b] = i
    return out


def first_fit(mem: FastMemory, items) -> list[int] | None:
    """Each ``(owner, size, intervals)`` of ``items``, in order, at the
    lowest offset free in ``mem`` over all its intervals, added to ``mem``
    (a size 0 at offset 0, taking no room): the offsets, or None at the first
    that finds no room (``mem`` then holds the ones placed before it)."""
    out = []
    for c, size, ivs in items:
        at = mem.fit(size, ivs)
        if at is None:
            return None
        mem.add(size, ivs, at if size else None, c)
        out.append(at)
    return out


class Engine:
    """The state of a plan-menu search over ``inst`` from the valid menu-plan
    solution ``sol``: each buffer's choice (``choice``, a menu index; 0 is
    slow) and offset (``offset``, None where it has none), the layout they
    take (``mem``), the current plans (``current``: buffer -> its Plan, fast
    ones only) and their clock (``clock``)."""

    def __init__(self, inst: Instance, sol: Solution):
        self.inst = inst
        self.picker, self.menus = build_menus(inst)
        self.choice = menu_choices(self.menus, sol)
        self.plan = [[m.plan(inst, b) for m in self.menus[b]] for b in range(inst.num_buffers)]
        self.size = [buf.size for buf in inst.buffers]
        self.placement = inst.mode == "placement"
        self.offset = {a.id: a.offset for a in sol.buffers}
        self.mem = FastMemory(inst)
        for b in range(inst.num_buffers):
            if self.choice[b]:
                if self.placement and self.offset[b] is None:
                    raise ValueError(f"buffer {b}: a fast plan without an offset in placement mode")
                self.drop(b)
        if (self.mem.live > inst.capacity).any():
            raise ValueError("the start solution exceeds the capacity")
        self.current = {b: self.plan[b][self.choice[b]]
                        for b in range(inst.num_buffers) if self.choice[b]}
        self.clock = Clock(inst, self.current)

    def intervals(self, b: int, i: int | None = None):
        """b's residency intervals under plan i (default: its choice)."""
        return self.plan[b][self.choice[b] if i is None else i].intervals()

    # -- one move: try, apply, undo ------------------------------------------
    def lift(self, b: int) -> None:
        """Take b out of the layout (its choice unchanged)."""
        if self.choice[b]:
            self.mem.remove(self.size[b], self.intervals(b), b)

    def drop(self, b: int) -> None:
        """Put b back into the layout at its choice and offset."""
        if self.choice[b]:
            self._add(b, self.intervals(b), self.offset[b])

    def _add(self, b: int, ivs, at) -> None:
        size = self.size[b]
        self.mem.add(size, ivs, at if self.placement and size else None, b)

    def fit(self, b: int, ivs, prefer: int | None = None):
        """Where b fits over ``ivs`` beside the buffers in the layout: its
        offset (``prefer`` where that is free, else the lowest free one) in
        placement mode, True in offload mode (bytes only); None where it
        does not."""
        if self.placement:
            return self.mem.fit(self.size[b], ivs, prefer)
        return True if self.mem.fits_capacity(self.size[b], ivs) else None

    def fits_bytes(self, b: int, ivs) -> bool:
        """Whether b's bytes fit over ``ivs`` beside the others' (any layout)."""
        return self.mem.fits_capacity(self.size[b], ivs)

    def time(self, changes) -> float:
        """The time with ``changes`` [(b, plan index)] made (others as they are)."""
        return self.clock.time([(b, self.current.get(b), self.plan[b][i] if i else None)
                                for b, i in changes])

    def set(self, b: int, i: int, at) -> None:
        """Choose plan i for b (lifted) at offset ``at``, then drop it."""
        new = self.plan[b][i] if i else None
        self.clock.accept(b, self.current.get(b), new)
        self.choice[b] = i
        if i:
            self.current[b] = new
        else:
            self.current.pop(b, None)
        self.offset[b] = at if i and self.placement else None
        self.drop(b)

    # -- relayouts -------------------------------------------------------------
    def placed_first(self, items) -> list[int] | None:
        """The offsets ``first_fit`` gives ``items`` (``(buffer, intervals)``)
        in the layout as it is (lift the buffers to re-place first), or None;
        the layout is left as it is."""
        return first_fit(self.mem.copy(), [(c, self.size[c], ivs) for c, ivs in items])

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
            self.lift(b)
        for b in fast:
            at = self.fit(b, self.intervals(b))
            if at is None or at > self.offset[b]:
                raise RuntimeError(f"BUG: compaction moved buffer {b} up or out "
                                   f"({self.offset[b]} -> {at})")
            self.offset[b] = at
            self.drop(b)

    # -- states and solutions ----------------------------------------------------
    def state(self) -> tuple:
        """The plans and offsets now (``restore`` returns to them)."""
        return self.choice.copy(), dict(self.offset)

    def restore(self, state: tuple) -> None:
        """Back to a ``state()``: the layout and the clock rebuilt from its
        plans and offsets (cheap at the sizes ``iterate`` runs on)."""
        choice, offset = state[:2]
        self.choice, self.offset = choice.copy(), dict(offset)
        self.mem = FastMemory(self.inst)
        for b in range(self.inst.num_buffers):
            self.drop(b)
        self.current = {b: self.plan[b][self.choice[b]]
                        for b in range(self.inst.num_buffers) if self.choice[b]}
        self.clock = Clock(self.inst, self.current)

    def solution(self, sol: Solution) -> Solution:
        """The plans and offsets now, as a solution with ``sol``'s method and notes."""
        return Solution(self.inst.mode, sol.method,
                        [self.menus[b][int(self.choice[b])].assignment(b, self.offset[b])
                         for b in range(self.inst.num_buffers)], sol.notes)
