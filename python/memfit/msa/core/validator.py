"""The validator: the one source of truth for feasibility and estimated time.

Every solver's output goes through :func:`validate`. It returns a
:class:`Verdict` with a list of violations (each with a kind, the buffer, the
op and a message) and the estimated time under the cost model of
:mod:`memfit.msa.core.model`.

Violation kinds (one test each in test/python/test_msa_validator.py):

``malformed``     the solution's mode differs from the instance's, a buffer is
                  missing, repeated or unknown
``evict``         ``evict_after`` on a slow buffer, or outside ``[start, end - 1]``
``prefetch``      a prefetch's use is not a use of the buffer or is repeated;
                  its start is before the data exists (``start + 1``, or 0 for an
                  argument), not before its use, inside the home interval or
                  inside the previous prefetch's window; or a prefetch of a
                  buffer that is fast and never evicted
``offset``        placement: a resident buffer with no offset, a negative offset,
                  or ``offset + size > capacity``
``overlap``       placement: two rectangles ``[lo, hi] x [offset, offset + size)``
                  intersect
``capacity``      bytes resident in fast memory at some op exceed the capacity
                  (home intervals up to the eviction, prefetch windows from the
                  copy's start)

A prefetch that is not done when its use starts is not a violation: the use
waits, and the wait is counted in ``stall_time``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .instance import Instance
from .model import Plan, Timing, resolve, simulate
from .solution import BufferAssignment, Solution

KINDS = ("malformed", "evict", "prefetch", "offset", "overlap", "capacity")


@dataclass
class Violation:
    kind: str
    buffer: int | None
    op: int | None
    message: str

    def __str__(self) -> str:
        where = []
        if self.buffer is not None:
            where.append(f"buffer {self.buffer}")
        if self.op is not None:
            where.append(f"op {self.op}")
        return f"{self.kind} ({', '.join(where)}): {self.message}"


@dataclass
class Verdict:
    valid: bool
    violations: list[Violation]
    estimated_time: float | None
    compute_time: float | None = None
    stall_time: float | None = None
    copy_time: float | None = None
    peak_fast_bytes: int = 0
    all_slow_time: float | None = None
    timing: Timing | None = field(default=None, repr=False)

    def summary(self) -> str:
        lines = [f"valid: {'yes' if self.valid else 'no'} ({len(self.violations)} violations)"]
        for v in self.violations[:20]:
            lines.append(f"  {v}")
        if len(self.violations) > 20:
            lines.append(f"  ... {len(self.violations) - 20} more")
        if self.estimated_time is not None:
            lines.append(f"compute time: {self.compute_time:.6g} s, stalls: {self.stall_time:.6g} s, "
                         f"copy engine busy: {self.copy_time:.6g} s")
            lines.append(f"peak fast memory: {self.peak_fast_bytes} bytes")
            if self.all_slow_time:
                lines.append(f"all-slow time: {self.all_slow_time:.6g} s "
                             f"(speedup {self.all_slow_time / self.estimated_time:.3f}x)")
            lines.append(f"estimated time: {self.estimated_time:.9g}")
        return "\n".join(lines)


def _check_buffer(inst: Instance, a: BufferAssignment, out: list[Violation]) -> bool:
    """Per-buffer rules; returns False when the buffer cannot be resolved."""
    buf = inst.buffers[a.id]
    ok = True
    if a.space == "slow" and a.evict_after is not None:
        out.append(Violation("evict", a.id, a.evict_after,
                             "evict_after is set on a slow buffer (nothing to evict)"))
        ok = False
    if a.space == "fast" and a.evict_after is not None and not buf.start <= a.evict_after < buf.end:
        out.append(Violation("evict", a.id, a.evict_after,
                             f"evict_after must be in [start, end - 1] = [{buf.start}, {buf.end - 1}]"))
        ok = False
    if a.prefetches and a.space == "fast" and a.evict_after is None:
        out.append(Violation("prefetch", a.id, a.prefetches[0].use,
                             "prefetch of a buffer that stays in fast memory (no evict_after)"))
        ok = False
    seen: set[int] = set()
    pfs = sorted(a.prefetches, key=lambda p: p.use)
    avail = inst.available_from(a.id)
    if a.space == "fast" and a.evict_after is not None:
        avail = max(avail, a.evict_after + 1)
    prev_r = None
    for k, p in enumerate(pfs):
        if p.use not in buf.uses:
            out.append(Violation("prefetch", a.id, p.use,
                                 f"op {p.use} is not a use of the buffer (uses {buf.uses})"))
            ok = False
            continue
        if p.use in seen:
            out.append(Violation("prefetch", a.id, p.use, "two prefetches for the same use"))
            ok = False
            continue
        seen.add(p.use)
        if not avail <= p.start < p.use:
            out.append(Violation("prefetch", a.id, p.start,
                                 f"prefetch for use {p.use} starts at op {p.start}; it must start in "
                                 f"[{avail}, {p.use - 1}] (after the data exists"
                                 f"{' and the eviction is issued' if a.evict_after is not None else ''}, "
                                 "before the use)"))
            ok = False
        if prev_r is not None and p.start <= prev_r:
            out.append(Violation("prefetch", a.id, p.start,
                                 f"prefetch for use {p.use} starts at op {p.start}, inside the previous "
                                 f"prefetch's window (resident through op {prev_r})"))
            ok = False
        nxt = pfs[k + 1].use if k + 1 < len(pfs) else None
        served = [u for u in buf.uses if u >= p.use and (nxt is None or u < nxt)]
        prev_r = max(served) if served else p.use
    if inst.mode == "placement":
        resident = a.space == "fast" or bool(a.prefetches)
        if resident:
            if a.offset is None:
                out.append(Violation("offset", a.id, None, "resident in fast memory but no offset"))
            elif a.offset < 0 or a.offset + buf.size > inst.capacity:
                out.append(Violation("offset", a.id, None,
                                     f"[{a.offset}, {a.offset + buf.size}) is outside fast memory "
                                     f"[0, {inst.capacity})"))
    return ok


def validate(inst: Instance, sol: Solution) -> Verdict:
    out: list[Violation] = []
    if sol.mode != inst.mode:
        out.append(Violation("malformed", None, None,
                             f"solution is for mode {sol.mode!r}, instance is {inst.mode!r}"))
    by_id: dict[int, BufferAssignment] = {}
    for a in sol.buffers:
        if not 0 <= a.id < inst.num_buffers:
            out.append(Violation("malformed", a.id, None, "no such buffer in the instance"))
        elif a.id in by_id:
            out.append(Violation("malformed", a.id, None, "buffer listed twice"))
        else:
            by_id[a.id] = a
    for b in range(inst.num_buffers):
        if b not in by_id:
            out.append(Violation("malformed", b, None, "buffer missing from the solution"))

    plans: dict[int, Plan] = {}
    for b, a in by_id.items():
        if _check_buffer(inst, a, out):
            pl = resolve(inst, a)
            if pl.home or pl.windows:
                plans[b] = pl

    # capacity at every op
    n = inst.num_ops
    live = [0] * max(n, 1)
    for b, pl in plans.items():
        for lo, hi in pl.intervals():
            for t in range(lo, hi + 1):
                live[t] += inst.buffers[b].size
    for t in range(n):
        if live[t] > inst.capacity:
            out.append(Violation("capacity", None, t,
                                 f"{live[t]} bytes resident in fast memory, capacity {inst.capacity}"))
    peak = max(live) if live else 0

    # placement: rectangles must not intersect
    if inst.mode == "placement":
        rects = []
        for b, pl in plans.items():
            off = by_id[b].offset
            if off is None or inst.buffers[b].size == 0:
                continue
            for lo, hi in pl.intervals():
                rects.append((lo, hi, off, off + inst.buffers[b].size, b))
        rects.sort()
        reported: set[tuple[int, int]] = set()
        for i, (lo, hi, y0, y1, b) in enumerate(rects):
            for (lo2, hi2, z0, z1, b2) in rects[i + 1:]:
                if lo2 > hi:
                    break
                if b2 != b and z0 < y1 and y0 < z1 and (min(b, b2), max(b, b2)) not in reported:
                    reported.add((min(b, b2), max(b, b2)))
                    out.append(Violation(
                        "overlap", b, lo2,
                        f"buffer {b} [{lo},{hi}]x[{y0},{y1}) and buffer {b2} "
                        f"[{lo2},{hi2}]x[{z0},{z1}) overlap from op {lo2}"))

    structural = any(v.kind in ("malformed", "evict", "prefetch") for v in out)
    timing = None if structural else simulate(inst, plans)
    slow = simulate(inst, {})
    return Verdict(valid=not out, violations=out,
                   estimated_time=timing.estimated_time if timing else None,
                   compute_time=timing.compute_time if timing else None,
                   stall_time=timing.stall_time if timing else None,
                   copy_time=timing.copy_time if timing else None,
                   peak_fast_bytes=peak, all_slow_time=slow.estimated_time, timing=timing)


def estimated_time(inst: Instance, sol: Solution) -> float:
    """Validate and return the time; raise ValueError listing violations if invalid."""
    v = validate(inst, sol)
    if not v.valid:
        raise ValueError("invalid solution:\n" + v.summary())
    return v.estimated_time
