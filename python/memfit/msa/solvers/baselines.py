"""Baselines the heuristic must beat: all-slow, greedy-by-size, random."""
from __future__ import annotations

import numpy as np

from ..core.instance import Instance
from ..core.plans import FastMemory, build_menus
from ..core.solution import NOTES, BufferAssignment, Solution


def all_slow(inst: Instance) -> Solution:
    return Solution.all_slow(inst, "slow")


def greedy_by_size(inst: Instance) -> Solution:
    """Largest buffers first, each kept in fast memory for its whole lifetime if
    it fits (best-fit offset in placement mode), else slow. No copies."""
    mem = FastMemory(inst)
    out = []
    for b in sorted(range(inst.num_buffers), key=lambda b: (-inst.buffers[b].size, b)):
        buf = inst.buffers[b]
        ivs = [(buf.start, buf.end)]
        if inst.mode == "placement":
            off = mem.best_fit(buf.size, ivs)
            if off is None:
                out.append(BufferAssignment(b, "slow"))
                continue
        elif not mem.fits_capacity(buf.size, ivs):
            out.append(BufferAssignment(b, "slow"))
            continue
        else:
            off = None
        mem.add(buf.size, ivs, off)
        out.append(BufferAssignment(b, "fast", off))
    out.sort(key=lambda a: a.id)
    return Solution(inst.mode, "greedy", out, NOTES[inst.mode])


def random_assignment(inst: Instance, seed: int = 0) -> Solution:
    """Random order; each buffer takes a random plan from its menu (slow
    included) at the lowest free offset, or slow when that does not fit."""
    rng = np.random.default_rng(seed)
    _, menus = build_menus(inst)
    mem = FastMemory(inst)
    out: dict[int, BufferAssignment] = {}
    for b in rng.permutation(inst.num_buffers):
        b = int(b)
        buf = inst.buffers[b]
        m = menus[b][int(rng.integers(0, len(menus[b])))]
        ivs = m.intervals(inst, b)
        off = None
        ok = bool(ivs)
        if ok and inst.mode == "placement":
            offs = mem.lowest_offsets(buf.size, ivs, 1) if mem.fits_capacity(buf.size, ivs) else []
            ok = bool(offs)
            off = offs[0] if offs else None
        elif ok:
            ok = mem.fits_capacity(buf.size, ivs)
        if not ok:
            out[b] = BufferAssignment(b, "slow")
            continue
        mem.add(buf.size, ivs, off)
        out[b] = m.assignment(b, off)
    return Solution(inst.mode, "random", [out[b] for b in range(inst.num_buffers)], NOTES[inst.mode])
