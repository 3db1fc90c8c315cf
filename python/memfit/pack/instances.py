"""Seeded generators of hard buffer-packing instances.

The public challenge files (MiniMalloc's A-E) have a few hundred buffers in a
1,048,576 x 1,048,576 box (times and sizes are multiples of 1024), sizes over
three orders of magnitude, and a capacity equal to the most bytes live at
once. These generators make more of that character, so the packer is tested
and measured on instances it was not tuned on.

Families (``FAMILIES``):

planted: a packing at exactly the capacity exists by construction, and
``Instance.witness`` holds it.
  - ``cut``: the capacity x time box cut recursively into rectangles
    (guillotine cuts), a few small ones dropped as holes.
  - ``sweep``: a sweep over time keeps the address space tiled by live
    buffers and free gaps; when buffers die their space merges with free
    neighbours and is re-cut into new buffers (not guillotine, the shape
    a real allocator leaves).
  - ``sweep-equal``: the sweep with sizes drawn from a few multiples of one
    quantum (many equal sizes).
  - ``sweep-huge``: the sweep where a few buffers take a third to two thirds
    of the capacity for a long time.
  - ``stairs``: the sweep with every lifetime the same length (staircases).

unknown: capacity = the most bytes live at once (sometimes infeasible).
  - ``schedule``: a random program schedule; each op's output lives until
    its last reader, readers mostly near, some far (skip connections).
  - ``nested``: lifetimes mostly nested (calls), some crossing.

Every instance is a list of :class:`memfit.pack.Buffer` plus a capacity; all
of them come from ``random.Random(seed)`` alone, so a (family, seed) pair
always gives the same instance.
"""
from __future__ import annotations

import dataclasses
import random
from typing import Callable, Optional

from .packer import Buffer, best_fit, max_live_bytes

UNIT = 1024          # bytes per size unit and time steps per time unit
GRID = 1024          # capacity and horizon in units: 1024 x 1024 -> 1,048,576
CAPACITY = UNIT * GRID


@dataclasses.dataclass
class Instance:
    """A generated instance. ``witness`` is a packing at ``capacity`` when
    the family plants one (else None)."""

    name: str
    family: str
    seed: int
    buffers: list
    capacity: int
    witness: Optional[list] = None
    # True when no packing at ``capacity`` exists by construction.
    infeasible: bool = False

    @property
    def planted(self) -> bool:
        return self.witness is not None


# ---------------------------------------------------------------------------
# Planted: guillotine cuts


def _cut(rng: random.Random, count: int) -> list:
    """Cuts the GRID x GRID box into ``count`` rectangles (t0, t1, y0, y1)."""
    rects = [(0, GRID, 0, GRID)]
    while len(rects) < count:
        areas = [(r[1] - r[0]) * (r[3] - r[2]) for r in rects]
        i = rng.choices(range(len(rects)), weights=[a ** 0.8 for a in areas])[0]
        t0, t1, y0, y1 = rects[i]
        w, h = t1 - t0, y1 - y0
        if w < 2 and h < 2:
            continue
        # Cut across the longer side more often, at a point away from the ends.
        across_time = w >= 2 and (h < 2 or rng.random() < w / (w + h))
        if across_time:
            c = t0 + _cut_point(rng, w)
            rects[i:i + 1] = [(t0, c, y0, y1), (c, t1, y0, y1)]
        else:
            c = y0 + _cut_point(rng, h)
            rects[i:i + 1] = [(t0, t1, y0, c), (t0, t1, c, y1)]
    return rects


def _cut_point(rng: random.Random, length: int) -> int:
    """A cut in (0, length): uneven more often than not (spreads sizes)."""
    f = rng.betavariate(0.7, 0.7)
    return min(length - 1, max(1, round(f * length)))


def _from_rects(rects, holes: float, rng: random.Random):
    """Buffers and witness offsets from rectangles; drops about ``holes`` of
    them (smaller ones more likely) as free space, keeping one column full so
    the live-bytes bound stays at the capacity."""
    keep = list(rects)
    if holes > 0:
        # Drop random rectangles, smaller ones more likely, until about
        # ``holes`` of the area is free; every rectangle crossing one time
        # stays, so that column remains full.
        t = _fullest_time(rects)
        order = sorted(range(len(rects)), key=lambda i: _area(rects[i]) ** 0.5 * rng.random())
        free, drop = 0, set()
        for i in order:
            if free >= holes * GRID * GRID or len(drop) >= len(rects) // 5:
                break
            if not rects[i][0] <= t < rects[i][1] and _area(rects[i]) <= 0.05 * GRID * GRID:
                drop.add(i)
                free += _area(rects[i])
        keep = [r for i, r in enumerate(rects) if i not in drop]
    bufs, offs = [], []
    for k, (t0, t1, y0, y1) in enumerate(keep):
        bufs.append(Buffer(k, t0 * UNIT, t1 * UNIT, (y1 - y0) * UNIT))
        offs.append(y0 * UNIT)
    return bufs, offs


def _fullest_time(rects) -> int:
    """A time unit at which the rectangles cover the most of the column."""
    load = [0] * (GRID + 1)
    for t0, t1, y0, y1 in rects:
        load[t0] += y1 - y0
        load[t1] -= y1 - y0
    best, cur, at = -1, 0, 0
    for t in range(GRID):
        cur += load[t]
        if cur > best:
            best, at = cur, t
    return at


def _area(rect) -> int:
    return (rect[1] - rect[0]) * (rect[3] - rect[2])


def gen_cut(seed: int) -> Instance:
    rng = random.Random(seed)
    rects = _cut(rng, rng.randint(170, 260))
    bufs, offs = _from_rects(rects, rng.uniform(0.03, 0.12), rng)
    return Instance(f"cut-{seed}", "cut", seed, bufs, CAPACITY, offs)


# ---------------------------------------------------------------------------
# Planted: the allocator sweep


@dataclasses.dataclass
class _SweepStyle:
    pieces: Callable[[random.Random, int], list]   # cut a free gap of w units
    lifetime: Callable[[random.Random], int]        # in time units
    idle: float = 0.05                              # chance a gap stays free


def _split_random(rng: random.Random, w: int, least: int = 1) -> list:
    """Cut a gap into pieces of at least ``least`` units, wider gaps into
    more, at uneven points."""
    if w < 2 * least or rng.random() > min(0.85, w / 96):
        return [w]
    c = least + _cut_point(rng, w - 2 * least + 2) - 1
    return _split_random(rng, c, least) + _split_random(rng, w - c, least)


def _split_spread(rng: random.Random, w: int, least: int = 2) -> list:
    """Cut a gap into pieces of at least ``least`` units whose sizes are
    log-uniform: a piece cut off a gap is as likely to be 2-4 units as
    256-512, so one column holds sizes over two to three orders of magnitude
    (uniform cut points make most pieces of one order)."""
    if w < 2 * least or rng.random() > min(0.85, w / 96):
        return [w]
    c = _loguniform(rng, least, w - least)
    rest = _split_spread(rng, w - c, least)
    return [c] + rest if rng.random() < 0.5 else rest + [c]


def _split_quantum(quanta: list) -> Callable[[random.Random, int], list]:
    def split(rng: random.Random, w: int) -> list:
        out, left = [], w
        while left > 0:
            fits = [q for q in quanta if q <= left]
            if not fits:
                out.append(left)  # a remainder piece
                break
            q = rng.choice(fits)
            out.append(q)
            left -= q
        rng.shuffle(out)
        return out
    return split


def _loguniform(rng: random.Random, lo: float, hi: float) -> int:
    return max(1, round(lo * (hi / lo) ** rng.random()))


def _sweep(rng: random.Random, style: _SweepStyle, huge: int = 0):
    """Tiles [0, GRID) at every time with live buffers and free gaps.

    ``cells`` is the current column: [y0, y1, end_time or None if free,
    buffer start]. At every event time, buffers that end free their cell;
    adjacent free cells merge; each free cell is then (unless it idles)
    re-cut into new buffers. At time 0 the column is filled completely, so
    the live-bytes bound equals the capacity."""
    cells = [[0, GRID, None, 0]]
    rects = []
    t = 0
    while t < GRID:
        for c in cells:
            if c[2] is not None and c[2] <= t:
                rects.append((c[3], c[2], c[0], c[1]))
                c[2] = None
        merged = []
        for c in cells:
            if merged and merged[-1][2] is None and c[2] is None:
                merged[-1][1] = c[1]
            else:
                merged.append(list(c))
        cells = []
        for c in merged:
            if c[2] is not None or (t > 0 and rng.random() < style.idle):
                cells.append(c)
                continue
            w = c[1] - c[0]
            if huge > 0 and w >= GRID // 3 and rng.random() < 0.5:
                parts = [rng.randint(GRID // 3, min(w, 2 * GRID // 3))]
                parts += [w - parts[0]] if w > parts[0] else []
                huge -= 1
            else:
                parts = style.pieces(rng, w)
            y = c[0]
            for p in parts:
                life = style.lifetime(rng) * (4 if p >= GRID // 3 else 1)
                cells.append([y, y + p, min(GRID, t + life), t])
                y += p
        live_ends = [c[2] for c in cells if c[2] is not None]
        t = min(live_ends) if live_ends else t + 1
    for c in cells:
        if c[2] is not None:
            rects.append((c[3], c[2], c[0], c[1]))
    return rects


def _gen_sweep(family: str, seed: int, style_of, holes: float = 0.0) -> Instance:
    # Stretch or shrink the lifetimes until the count lands in the challenge
    # range (140 to 320 buffers); every draw comes from the seed.
    stretch = 1.0
    for attempt in range(40):
        rng = random.Random(seed * 1009 + attempt)
        style, huge = style_of(rng, stretch)
        bufs, offs = _from_rects(_sweep(rng, style, huge), holes, rng)
        if len(bufs) > 320:
            stretch *= 1.25
        elif len(bufs) < 140:
            stretch /= 1.25
        else:
            break
    return Instance(f"{family}-{seed}", family, seed, bufs, CAPACITY, offs)


def _holes(seed: int) -> float:
    """The share of the area left free by dropping buffers (0 to 10%)."""
    return random.Random(seed + 0x5EED).uniform(0.0, 0.10)


def _lifetimes(lo: float, hi: float, stretch: float):
    return lambda rng: _loguniform(rng, lo * stretch, hi * stretch)


def gen_sweep(seed: int) -> Instance:
    return _gen_sweep("sweep", seed, lambda rng, k: (
        _SweepStyle(_split_spread, _lifetimes(8, rng.uniform(150, 500), k),
                    rng.uniform(0.0, 0.1)), 0), _holes(seed))


def gen_slivers(seed: int) -> Instance:
    """The sweep with gaps cut down to single units (a third of the buffers
    are slivers of at most 4 units)."""
    return _gen_sweep("slivers", seed, lambda rng, k: (
        _SweepStyle(_split_random, _lifetimes(8, rng.uniform(150, 500), k),
                    rng.uniform(0.0, 0.1)), 0), _holes(seed))


def gen_sweep_equal(seed: int) -> Instance:
    def style(rng, k):
        q = rng.choice([16, 24, 32, 48])
        quanta = [q * m for m in rng.sample([1, 2, 3, 4, 6, 8], 3)]
        return _SweepStyle(_split_quantum(quanta), _lifetimes(8, rng.uniform(150, 400), k),
                           rng.uniform(0.0, 0.08)), 0
    return _gen_sweep("sweep-equal", seed, style, _holes(seed))


def gen_sweep_huge(seed: int) -> Instance:
    return _gen_sweep("sweep-huge", seed, lambda rng, k: (
        _SweepStyle(_split_spread, _lifetimes(6, rng.uniform(100, 300), k),
                    rng.uniform(0.0, 0.08)), rng.randint(2, 4)), _holes(seed))


def gen_stairs(seed: int) -> Instance:
    """One lifetime length for all; the first buffers end at staggered times
    so that the births stay staggered (staircases, not columns)."""
    def style(rng, k):
        life = max(2, round(rng.randint(40, 160) * k))

        def lifetime(r):
            return life if r.random() < 0.9 else r.randint(1, life)
        return _SweepStyle(_split_spread, lifetime, rng.uniform(0.0, 0.06)), 0
    return _gen_sweep("stairs", seed, style, _holes(seed))


# ---------------------------------------------------------------------------
# Feasibility unknown: capacity = the most bytes live at once


def _sized(rng: random.Random) -> int:
    """Sizes log-uniform over 1 to 512 units (three orders of magnitude)."""
    return _loguniform(rng, 1, 512) * UNIT


def _at_live_bound(family: str, seed: int, spans, rng) -> Instance:
    bufs = [Buffer(k, lo * UNIT, hi * UNIT, _sized(rng)) for k, (lo, hi) in enumerate(spans)]
    return Instance(f"{family}-{seed}", family, seed, bufs, max_live_bytes(bufs))


def gen_schedule(seed: int) -> Instance:
    """A program of ``n`` ops in order; op i's output lives from i until its
    last reader, a few ops later, sometimes far later (skip connections)."""
    rng = random.Random(seed)
    n = rng.randint(150, 260)
    spans = []
    for i in range(n):
        last = i + 1 + int(rng.expovariate(1 / 3))
        if rng.random() < 0.12:
            last = i + rng.randint(10, n // 2)
        spans.append((i, min(n + 1, last + 1)))
    return _at_live_bound("schedule", seed, spans, rng)


def gen_nested(seed: int) -> Instance:
    """Calls: a buffer opened inside another closes first, except that a few
    outlive their parent (crossing lifetimes)."""
    rng = random.Random(seed)
    n = rng.randint(150, 260)
    spans, stack, t = [], [], 0
    while len(spans) + len(stack) < n:
        t += 1
        if stack and rng.random() < 0.45:
            lo = stack.pop()
            hi = t + (rng.randint(1, 20) if rng.random() < 0.15 else 0)
            spans.append((lo, hi + 1))
        else:
            stack.append(t)
    while stack:
        t += 1
        spans.append((stack.pop(), t + 1))
    return _at_live_bound("nested", seed, spans, rng)


# ---------------------------------------------------------------------------
# Infeasible by construction: capacity = the most bytes live at once

# Small instances with no packing at the most bytes live at once (each found
# by random search; test_pack.py and test_pack_instances.py confirm with
# CP-SAT that each needs one byte more): (live bytes, (lower, upper, size)).
CORES = (
    (20, ((7, 9, 2), (7, 9, 3), (4, 6, 3), (2, 3, 12), (4, 8, 2), (6, 7, 9),
          (1, 6, 4), (5, 9, 8), (3, 4, 6), (3, 5, 10))),
    (37, ((6, 8, 3), (8, 10, 9), (6, 9, 4), (7, 10, 12), (4, 5, 12), (4, 7, 11),
          (5, 10, 10), (5, 6, 10), (3, 4, 12), (3, 8, 6))),
    (34, ((3, 4, 6), (0, 4, 8), (5, 9, 11), (4, 6, 11), (0, 5, 6), (3, 7, 8),
          (1, 2, 4), (6, 9, 12), (0, 3, 11), (3, 5, 2), (7, 8, 4), (2, 6, 4))),
    (20, ((2, 3, 7), (1, 4, 8), (2, 6, 5), (3, 7, 3), (4, 7, 9), (7, 8, 3),
          (8, 10, 7), (7, 9, 6), (4, 8, 3), (6, 8, 1), (7, 9, 7))),
    (23, ((3, 5, 2), (2, 3, 7), (6, 9, 1), (2, 6, 7), (8, 10, 2), (6, 8, 8),
          (4, 8, 9), (3, 6, 4), (1, 4, 8), (5, 8, 3), (1, 5, 1))),
)


def _slack(load: list, cap: int, lo: int, hi: int) -> int:
    return cap - max(load[lo:hi])


def _add_load(load: list, lo: int, hi: int, size: int) -> None:
    for t in range(lo, hi):
        load[t] += size


def _tighten(rng: random.Random, spans: list, load: list, cap: int, moves: int) -> None:
    """Moves that only add constraints without raising the most bytes live
    at once: a new buffer in free space, a buffer living longer, a buffer
    growing. Whatever was unpackable at ``cap`` stays unpackable."""
    horizon = len(load)
    for _ in range(moves):
        kind = rng.random()
        if kind < 0.6:
            lo = rng.randrange(horizon - 1)
            hi = min(horizon, lo + _loguniform(rng, 1, horizon // 4))
            room = _slack(load, cap, lo, hi)
            if room > 0:
                size = _loguniform(rng, 1, room)
                spans.append([lo, hi, size])
                _add_load(load, lo, hi, size)
        elif kind < 0.8:
            b = rng.choice(spans)
            hi = min(horizon, b[1] + rng.randint(1, 8))
            if hi > b[1] and _slack(load, cap, b[1], hi) >= b[2]:
                _add_load(load, b[1], hi, b[2])
                b[1] = hi
        else:
            b = rng.choice(spans)
            grow = min(_slack(load, cap, b[0], b[1]), _loguniform(rng, 1, 64))
            if grow > 0:
                _add_load(load, b[0], b[1], grow)
                b[2] += grow


def _gen_blocked(family: str, seed: int, moves: tuple) -> Instance:
    """A core scaled up (sizes to about GRID units, each time step to 8-40
    units, shifted in time), then tightened. Scaling keeps a core unpackable
    (divide a packing's offsets by the factor), and so does every move of
    _tighten, so no packing at the capacity exists."""
    rng = random.Random(seed)
    live, rows = rng.choice(CORES)
    k = GRID // live
    step = rng.randint(8, 40)
    shift = rng.randint(0, GRID - 10 * step)
    cap = live * k
    spans = [[shift + lo * step, shift + hi * step, size * k] for lo, hi, size in rows]
    load = [0] * GRID
    for lo, hi, size in spans:
        _add_load(load, lo, hi, size)
    _tighten(rng, spans, load, cap, rng.randint(*moves))
    rng.shuffle(spans)
    bufs = [Buffer(i, lo * UNIT, hi * UNIT, size * UNIT) for i, (lo, hi, size) in enumerate(spans)]
    return Instance(f"{family}-{seed}", family, seed, bufs, cap * UNIT, infeasible=True)


def gen_blocked(seed: int) -> Instance:
    """Small enough (about 15 to 40 buffers) for CP-SAT to confirm."""
    return _gen_blocked("blocked", seed, (20, 60))


def gen_blocked_large(seed: int) -> Instance:
    """The same with a hundred to two hundred buffers around the core."""
    return _gen_blocked("blocked-large", seed, (250, 500))


FAMILIES: dict = {
    "cut": gen_cut,
    "sweep": gen_sweep,
    "slivers": gen_slivers,
    "sweep-equal": gen_sweep_equal,
    "sweep-huge": gen_sweep_huge,
    "stairs": gen_stairs,
    "schedule": gen_schedule,
    "nested": gen_nested,
    "blocked": gen_blocked,
    "blocked-large": gen_blocked_large,
}
INFEASIBLE_FAMILIES = ("blocked", "blocked-large")
PLANTED_FAMILIES = ("cut", "sweep", "slivers", "sweep-equal", "sweep-huge", "stairs")

# Seeds: development (used while tuning the search) and held-out (only for
# judging). They never overlap.
DEV_SEEDS = range(0, 100000)
HELDOUT_SEEDS = range(1000000, 1100000)


def generate(family: str, seed: int) -> Instance:
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")
    return FAMILIES[family](seed)


def is_hard(inst: Instance) -> bool:
    """Needs a search: best-fit does not fit the capacity."""
    _, peak = best_fit(inst.buffers)
    return peak > inst.capacity


def hard_set(split: str = "dev", per_family: int = 8, families=None,
             first_seed: Optional[int] = None) -> list:
    """The first ``per_family`` hard instances of each family, in seed order,
    from the development or the held-out seeds, or from ``first_seed`` on
    when given (at most 50 seeds tried per instance wanted)."""
    seeds = {"dev": DEV_SEEDS, "heldout": HELDOUT_SEEDS}.get(split)
    if seeds is None:
        raise ValueError(f"split must be 'dev' or 'heldout', got {split!r}")
    if first_seed is not None:
        seeds = range(first_seed, first_seed + 50 * per_family)
    out = []
    for family in families or FAMILIES:
        found = 0
        for seed in seeds[:50 * per_family]:
            if found >= per_family:
                break
            inst = generate(family, seed)
            if is_hard(inst):
                out.append(inst)
                found += 1
    return out
