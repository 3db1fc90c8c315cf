"""An XLA-style memory-space-assignment heuristic.

It follows openxla/xla's memory_space_assignment (MSA) in structure; the code
below is written from reading it, not copied. What each piece mirrors:

* **Configurations** — four passes, sort order x copies on/off, and the
  fastest result under the cost model is kept. This sweep is memfit's
  addition (XLA runs once, with the configuration its flags select; "copies
  off" is MSA with ``max_outstanding_prefetches = max_outstanding_evictions
  = 0``, and without copies nothing limits how long a buffer may stay, so
  ``CanAllocateInAlternateMemoryNoCopy`` is not applied; the size-ordered,
  copies-off pass is therefore greedy-by-size plus repacking, and the
  heuristic never loses to greedy-by-size by construction). Measured on 180
  random instances, the single memory-boundedness
  pass with copies lost to greedy-by-size on 6 (by at most 5%, a buffer split
  across a gap blocks smaller buffers that greedy keeps); the sweep lost on
  none.
* **Order** — ``MemoryBoundednessBufferIntervalComparator::GetTuple``
  ``MemoryBoundednessBufferIntervalComparator::GetTuple``
  (buffer_interval_comparator.cc): buffers sorted by
  ``(-memory boundedness, -size, -duration, latest use, start, id)``, where
  memory boundedness is ``CostAnalysis::GetMemoryBoundedness``
  (cost_analysis.cc): the alternate-memory benefit at the defining op, combined
  with each use's benefit (summed while both are positive, else the maximum),
  divided by ``sqrt(size)``. ``GetAlternateMemoryBenefit`` is the memory time
  saved for a memory-bound op (times the trip count, XLA's while-nest
  multiplier) and ``memory time - compute time`` (negative) for a compute-bound
  one. The second order is the decreasing-size order of
  ``GlobalDecreasingSizeBestFitHeap`` (MSA's order without a cost analysis).
* **Per buffer** — the order of attempts in ``MsaAlgorithm::AllocateSegment``
  (algorithm.cc): first keep it in alternate memory with no copy
  (``AllocateInAlternateMemoryNoCopy``, guarded by
  ``CanAllocateInAlternateMemoryNoCopy``); failing that, keep it until an
  access, evict it (``Evict``) and prefetch it back for the next use
  (``Prefetch``); failing that, leave it in default memory and prefetch it for
  its first use; failing that, default (slow) memory.
* **Chunks** — placement mode takes the best-fit chunk over the plan's time
  intervals, as ``GlobalDecreasingSizeBestFitHeap::FindChunkCandidate`` does
  (smallest free gap that holds the buffer); offload mode only counts bytes
  per op against the capacity (XLA picks device offsets itself).
* **Repacking** — when best-fit finds no chunk although the bytes fit
  (fragmentation), re-place everything chosen so far plus the new buffer with
  a decreasing-size best-fit heap, as ``MemorySpaceAssignmentBestFitRepacker``
  does when MSA runs out of chunks (at most ``max_repacks`` times, XLA's
  ``max_repacks`` option).
* **Prefetch intervals** — ``CostAnalysisPrefetchIntervalPicker`` (see
  plans.Picker): the preferred start first, then the latest one.
* **Copy bandwidth budget** — ``AsynchronousCopyResource``: every op offers its
  elapsed time to each copy direction; a prefetch must find its copy time
  among the ops it overlaps (``s .. u-1``), an eviction among ``e+1 .. u-1``,
  or the plan is rejected (``HasEnoughResource`` / ``ConsumeResource``).

Left out (and why):

* MSA allocates per *use segment* and may evict and prefetch a buffer several
  times; here a buffer picks one plan from the shared menu (plans.py: keep,
  one eviction + prefetch across one of its two longest gaps, or prefetch
  from slow), so the exact solver's bound covers what this produces.
* Sliced prefetches,
  cross-program prefetch, sort-order overrides, memory-bound loop
  optimization, scoped (reserved) memory, aliasing / in-place ops, while and
  conditional nesting (a split loop is one weighted op here), and the retry
  loop that re-runs allocation with a larger eviction interval.
* Elapsed times (picker, copy budget) are memfit's roofline with everything
  in slow memory, standing in for XLA's HloCostAnalysis-based
  ``GetInstructionElapsed`` (no pipeline overhead term, no transcendentals).
  When copies do not overlap compute (the ``cpu`` device) a copy plan is
  taken only if its estimated speed-up exceeds the copy time (XLA has no
  such mode).
"""
from __future__ import annotations

import time

import numpy as np

from ..core.instance import Instance
from ..core.model import op_seconds
from ..core.order import buffer_order, size_order
from ..core.plans import FastMemory, MenuPlan, Picker, build_menus
from ..core.solution import NOTES, Solution


class _CopyBudget:
    """AsynchronousCopyResource, one per copy direction."""

    def __init__(self, per_op: np.ndarray):
        self.avail = per_op.astype(np.float64).copy()

    def has(self, lo: int, hi: int, need: float) -> bool:
        return need <= 0 or (hi >= lo and self.avail[lo:hi + 1].sum() >= need * (1 - 1e-9))

    def consume(self, lo: int, hi: int, need: float) -> None:
        for t in range(lo, hi + 1):
            take = min(self.avail[t], need)
            self.avail[t] -= take
            need -= take
            if need <= 0:
                break


def _repack(inst: Instance, items) -> dict[int, int] | None:
    """MemorySpaceAssignmentBestFitRepacker: re-place every chosen rectangle
    with a decreasing-size best-fit heap; None if something does not fit."""
    mem = FastMemory(inst)
    out = {}
    for b, size, ivs in sorted(items, key=lambda it: (-it[1], -sum(h - l + 1 for l, h in it[2]), it[0])):
        off = mem.best_fit(size, ivs)
        if off is None:
            return None
        mem.add(size, ivs, off)
        out[b] = off
    return out


CONFIGS = tuple((order, copies) for copies in (True, False)
                for order in ("memory-boundedness", "size"))


def assign(inst: Instance, *, configs=CONFIGS, max_gaps: int = 2,
           max_repacks: int = 32, return_menu: bool = False, deadline: float | None = None):
    """Run the XLA-style pass under each configuration (sort order, copies
    on/off); keep the fastest valid result (scored by the validator).

    ``deadline`` (a ``time.perf_counter()`` value, msa.solvers.budget): checked
    per buffer; once it has passed, the configuration under way stops with the
    buffers placed so far (the others slow: still a valid solution, as every
    placement was checked against capacity) and no further one starts."""
    from ..core.validator import validate
    best = None
    for order, copies in configs:
        sol, menus, choice = _assign_once(inst, order, max_gaps, max_repacks, copies, deadline)
        v = validate(inst, sol)
        if v.valid and (best is None or v.estimated_time < best[0]):
            best = (v.estimated_time, sol, menus, choice)
        if deadline is not None and time.perf_counter() > deadline:
            break
    _, sol, menus, choice = best
    sol.method = "heuristic"
    if return_menu:
        return sol, menus, choice
    return sol


def _assign_once(inst: Instance, order: str, max_gaps: int, max_repacks: int,
                 copies: bool = True, deadline: float | None = None):
    picker, menus = build_menus(inst, max_gaps)
    overlap = inst.device.copy_overlaps_compute
    mem = FastMemory(inst)
    h2d, d2h = _CopyBudget(picker.ref), _CopyBudget(picker.ref)
    fast_acc: list[set[int]] = [set() for _ in range(inst.num_ops)]
    choice = [0] * inst.num_buffers
    offsets: list[int | None] = [None] * inst.num_buffers
    cbw = inst.device.copy_bandwidth
    placed: list[tuple[int, int, list]] = []
    repacks = 0

    def speedup(b: int, plan) -> float:
        gain = 0.0
        for t in inst.access_ops(b):
            if plan.fast_at(t):
                acc = {x: (x in fast_acc[t]) for x in inst.accesses(t)}
                before = op_seconds(inst, t, acc)
                acc[b] = True
                gain += before - op_seconds(inst, t, acc)
        return gain

    for b in (buffer_order(inst) if order == "memory-boundedness" else size_order(inst)):
        if deadline is not None and time.perf_counter() > deadline:
            break
        buf = inst.buffers[b]
        menu = menus[b]
        keep = [i for i, m in enumerate(menu)
                if m.kind == "keep" and (picker.can_keep(b) or not copies)]
        splits = [i for i, m in enumerate(menu) if m.kind == "split"]
        pref = [i for i, m in enumerate(menu) if m.kind == "prefetch"]
        for i in (keep + splits + pref) if copies else keep:
            m: MenuPlan = menu[i]
            plan = m.plan(inst, b)
            ivs = plan.intervals()
            if inst.mode == "placement":
                off = mem.best_fit(buf.size, ivs)
                if off is None and repacks < max_repacks and mem.fits_capacity(buf.size, ivs):
                    # Fragmentation: repack what is placed plus this one.
                    repacks += 1
                    packed = _repack(inst, placed + [(b, buf.size, ivs)])
                    if packed is not None:
                        mem = FastMemory(inst)
                        for (x, sz, xiv) in placed:
                            mem.add(sz, xiv, packed[x])
                            offsets[x] = packed[x]
                        off = packed[b]
                if off is None:
                    continue
            else:
                if not mem.fits_capacity(buf.size, ivs):
                    continue
                off = None
            if m.kind != "keep":
                d_pf = buf.size / cbw * inst.ops[m.use].weight
                d_ev = buf.size / cbw * inst.ops[m.evict].weight if m.kind == "split" else 0.0
                if overlap:
                    if not h2d.has(m.start, m.use - 1, d_pf):
                        continue
                    if m.kind == "split" and not d2h.has(m.evict + 1, m.use - 1, d_ev):
                        continue
                elif speedup(b, plan) <= d_pf + d_ev:
                    continue
                if overlap:
                    h2d.consume(m.start, m.use - 1, d_pf)
                    if m.kind == "split":
                        d2h.consume(m.evict + 1, m.use - 1, d_ev)
            mem.add(buf.size, ivs, off)
            placed.append((b, buf.size, ivs))
            choice[b], offsets[b] = i, off
            for t in inst.access_ops(b):
                if plan.fast_at(t):
                    fast_acc[t].add(b)
            break

    sol = Solution(inst.mode, f"heuristic[{order},{'copies' if copies else 'no-copies'}]",
                   [menus[b][choice[b]].assignment(b, offsets[b]) for b in range(inst.num_buffers)],
                   NOTES[inst.mode])
    return sol, menus, choice
