"""Calibrating memfit-split's chunk sizes against XLA's own memory analysis.

memfit-split chooses chunk sizes with its fusion model of XLA and budgets a
loop's modelled temporaries ``temp-margin`` times over (2 by default), because
XLA sometimes materialises inside a loop body what the model fuses. The
margin is right for some programs and twice too careful for others (kNN: the
first compile holds 44 of 64 MiB). memfit.jit therefore compiles, reads what
XLA really allocates (arguments + outputs + temporaries - aliases), and, when
that is far from the limit or over it, splits again with the margin that
would land just under the limit:

    temporaries(margin) ~ c / margin   (chunk size ~ 1 / margin)
    margin' = margin * measured_temporaries / target_temporaries

where the target leaves 5 % of the limit's room free. A loop that memfit
split inside another loop's body (a scan over layers) records the bytes its
model holds outside that body (``outside_bytes``: the layer loop's carried
state, stacked inputs and outputs); those do not shrink with the margin,
so they come off both the measured temporaries and the room first, and
so does what such a loop holds with its smallest chunk (``loop_fixed_bytes``:
the body's whole live-ins and accumulators, which the chunk rule's margin
does not multiply either).
Every candidate is
compiled and measured; the kept one is the largest that XLA says fits (larger
chunks are faster). A candidate is only bigger chunks of the same loops: when
a smaller margin makes the split steps choose more loops (more recomputation,
which measured slower on a transformer step), it is not compiled, and a
program split into several loops (a second pass) is not re-split at all,
unless its loops were split inside a layer loop's body (their chunks are what
the margin changes). At most ``MAX_COMPILES`` compiles; when none fits, the
one of the smallest margin (the biggest chunks) among those whose XLA count
alone is within the limit is kept (the runtime's scratch pushing it over),
else the smallest, and a warning says by how much XLA exceeds the limit.
"""
from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import MemfitError

DEFAULT_MARGIN = 2.0
MIN_MARGIN, MAX_MARGIN = 0.25, 16.0
HEADROOM = 0.05        # aim for limit - 5 % of the room above args + outputs
WORTH_IT = 0.9         # re-split only for a margin at least 10 % smaller
MAX_COMPILES = 3
MAX_SCRATCH_RESPLITS = 2  # more compiles when runtime scratch pushes over
RESCUE_MARGIN = 1.0    # the model as it is, tried when the default margin cannot fit
PREDICTED_MARGIN = 1.0  # the model as it is, compiled first for one top-level loop
DIVISOR_FLOOR = 0.6    # a chunk without a remainder step may be this much smaller
DIVISOR_CEIL = 1.25    # or, for a split into several loops, this much bigger
DIVISOR_TRIES = 3      # passes spent looking for it
SAME_PROGRAM_STEPS = 3  # margin steps past a split already compiled, when over the limit
#: A program memfit did not split, whose modelled peak and XLA's count as it
#: runs (with its runtime scratch) both stay under this share of the limit,
#: is not compiled a second time for the accounting count (``_run_only``).
UNCOUNTED_SHARE = 0.5
#: the attribute of the exact kNN rewrite's loops (their query chunk is
#: sized from the room the margin leaves)
KNN_LOOP = "memfit.knn_loop"


class MemoryLimitWarning(UserWarning):
    """XLA's accounted bytes for memfit's program exceed the memory limit."""


@dataclass
class Attempt:
    margin: float
    text: str
    compiled: Any
    xla_bytes: int | None       # argument + output + temp - alias
    fixed_bytes: int | None     # argument + output - alias
    pass_s: float
    compile_s: float
    #: bytes the runtime allocates outside XLA's count (memfit.runtime_scratch)
    #: in the program as the user runs it; None: not measured
    scratch_bytes: int | None = None
    #: the executable that runs: compiled with the user's flags, or with
    #: ``run_options`` (``_compile_as_run``)
    run_compiled: Any = None
    #: XLA's count (argument + output + temp - alias) of ``run_compiled``;
    #: None: not compiled separately or no analysis
    run_xla_bytes: int | None = None
    #: why ``run_compiled`` was compiled with other options than the user's
    #: (None: the user's flags)
    run_options: str | None = None
    #: False when ``xla_bytes`` is XLA's count of the executable as it runs
    #: (``_run_only``), not of an accounting compile (ynn fusions off)
    accounted: bool = True

    @property
    def counted_bytes(self) -> int | None:
        """XLA's count of the program as accounted (ynn fusions off) or as it
        runs (the user's flags), whichever is larger. They differ: on the
        SGPR gradient the executable with ynn fusions on assigns 216.9 MiB
        of buffers where the accounting compile assigns 143.2 MiB, and the
        limit bounds what the process holds."""
        if self.xla_bytes is None:
            return None
        return max(self.xla_bytes, self.run_xla_bytes or 0)

    @property
    def total_bytes(self) -> int | None:
        """XLA's count plus the runtime's scratch (what the limit bounds)."""
        if self.xla_bytes is None:
            return None
        return self.counted_bytes + (self.scratch_bytes or 0)


@dataclass
class Calibration:
    """What memfit.jit tried: one Attempt per compile, and the one kept."""
    limit: int
    attempts: list[Attempt] = field(default_factory=list)
    chosen: int = 0
    # (margin or None when no split was run, why, pass seconds)
    skipped: list[tuple[float | None, str, float]] = field(default_factory=list)
    #: read from memfit's calibration cache (memfit.compile_cache): the one
    #: attempt is the kept program with the counts measured when it was written
    cached: bool = False

    @property
    def kept(self) -> Attempt:
        return self.attempts[self.chosen]

    @property
    def pass_seconds(self) -> float:
        """memfit's passes over every margin tried, compiled or not."""
        return sum(a.pass_s for a in self.attempts) + sum(s for _, _, s in self.skipped)

    def summary(self) -> str:
        parts = []
        for i, a in enumerate(self.attempts):
            mb = "?" if a.xla_bytes is None else f"{a.xla_bytes / 2**20:.1f} MiB"
            if a.run_options:
                mb += f" (runs with {a.run_options}: {a.run_xla_bytes / 2**20:.1f} MiB)"
            elif a.run_xla_bytes is not None and a.run_xla_bytes > a.xla_bytes:
                mb += f" ({a.run_xla_bytes / 2**20:.1f} MiB as it runs)"
            if a.scratch_bytes:
                mb += f" + {a.scratch_bytes / 2**20:.1f} MiB runtime scratch"
            parts.append(f"margin {a.margin:.3g}: {mb}" + (" (kept)" if i == self.chosen else ""))
        parts += [why if m is None else f"margin {m:.3g}: {why}" for m, why, _ in self.skipped]
        return f"limit {self.limit / 2**20:.1f} MiB; " + ", ".join(parts)


def _xla_bytes(compiled) -> tuple[int | None, int | None]:
    try:
        m = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - a backend without memory analysis
        return None, None
    if m is None:
        return None, None
    fixed = m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
    return int(fixed + m.temp_size_in_bytes), int(fixed)


def next_margin(a: Attempt, limit: int) -> float | None:
    """The margin that would bring `a`'s temporaries to the target, or None
    when `a` cannot tell (no analysis, no temporaries, no room). What the
    model holds outside the split loops' blocks (``_outside_bytes``) does
    not scale with the margin: it comes off the temporaries and the room."""
    if a.xla_bytes is None or a.fixed_bytes is None:
        return None
    outside = _outside_bytes(a.text)
    temps = a.total_bytes - a.fixed_bytes - outside  # temporaries and scratch: ~ chunk size
    room = (limit - a.fixed_bytes) / (1.0 + HEADROOM) - outside
    if temps <= 0 or room <= 0:
        return None
    return min(MAX_MARGIN, max(MIN_MARGIN, a.margin * temps / room))


def _program(text: str) -> str:
    """The module without the attributes that name the margin: memfit.pipeline
    and each loop's memfit.split record (its margin and modelled peak)."""
    text = re.sub(r'memfit\.pipeline = "[^"]*"', "", text)
    return re.sub(r"memfit\.split = \{[^{}]*\}", "", text)


def _split_loops(text: str) -> int:
    """Loops memfit-split made: each carries its ``memfit.split`` record.
    The program's own loops and the rewrites' (the exact kNN's, whose
    two-level form depends on the room the margin leaves) carry none, so
    no second run of memfit's passes is needed to tell them apart."""
    return len(re.findall(r"\bmemfit\.split = \{", text))


def _outside_bytes(text: str) -> int:
    """The most bytes any split loop's model holds beyond the arguments and
    outputs that do not shrink with the margin: outside its block (its
    ``outside_bytes``: a loop split inside a layer loop's body) and, in such
    a body, what it holds with its smallest chunk (``loop_fixed_bytes``:
    whole live-ins, accumulators); 0 for loops at the function's top level."""
    found = []
    for rec in re.findall(r"memfit\.split = \{[^{}]*\}", text):
        fields = dict(re.findall(r"\b(outside_bytes|loop_fixed_bytes) = (\d+)", rec))
        found.append(sum(int(v) for v in fields.values()))
    return max(found, default=0)


def _loop_chunks(text: str) -> list[tuple[int, int, int, int] | None]:
    """(dim, chunk, remainder, size) of each split loop's record; None for a
    record that does not say."""
    found = []
    for rec in re.findall(r"memfit\.split = \{[^{}]*\}", text):
        fields = dict(re.findall(r"\b(dim|chunk|remainder|size) = (\d+)", rec))
        found.append(tuple(int(fields[k]) for k in ("dim", "chunk", "remainder", "size"))
                     if len(fields) == 4 else None)
    return found


def _without_remainder(text: str, margin: float, split) -> tuple[str, float] | None:
    """(text, margin) of the same one-loop split with a chunk that divides
    its dimension, no smaller than ``DIVISOR_FLOOR`` of ``text``'s chunk,
    or None. A chunk that leaves a remainder makes memfit-split emit the
    remainder step, a second copy of the loop's body outside the loop: XLA
    compiles every kernel of the body twice. On an LLM head's
    cross-entropy gradient (2,048 rows, chunk 384 + 128) the chunk of 256
    compiled in 0.6x the time (the executable that runs and the count alike)
    and ran in 0.88x. A larger margin gives smaller chunks (fewer bytes):
    the margin is scaled by chunk / divisor, and by what the split then
    chose, up to ``DIVISOR_TRIES`` passes."""
    loops = _loop_chunks(text)
    if len(loops) != 1 or loops[0] is None or _outside_bytes(text) != 0:
        return None
    dim, chunk, remainder, size = loops[0]
    if remainder == 0 or chunk <= 1:
        return None
    lowest = DIVISOR_FLOOR * chunk
    divisor = next((k for k in range(chunk, 0, -1) if size % k == 0), 1)
    if divisor < lowest:
        return None
    m = margin * chunk / divisor
    for _ in range(DIVISOR_TRIES):
        if m > MAX_MARGIN:
            return None
        try:
            other = split(m)
        except MemfitError:
            return None
        got = _loop_chunks(other)
        if len(got) != 1 or got[0] is None or got[0][0] != dim or _split_loops(other) != 1:
            return None
        c, r = got[0][1], got[0][2]
        if r == 0 and lowest <= c <= chunk:
            return other, m
        m *= c / divisor  # a bigger chunk than wanted: a larger margin, and back
    return None


def _several_without_remainder(text: str, margin: float, split,
                               bigger: bool) -> tuple[str, float] | None:
    """(text, margin) of the same split into several top-level loops (their
    number, dimensions and sizes) with no remainder step in any, or None.
    The margin is steered by the first loop that leaves a remainder, toward
    the divisor of its dimension next above its chunk (up to
    ``DIVISOR_CEIL`` x; only with ``bigger``: the first split, margin 2,
    whose room XLA's count has not yet measured), then the one next below
    (down to ``DIVISOR_FLOOR`` x), as ``_without_remainder`` does for one
    loop, up to ``DIVISOR_TRIES`` passes in all. The other loops' chunks
    follow from the same margin. On the held-out pre-LN block (6,144 rows;
    chunks 224 + 96 and 192 at margin 2) margin 1.75 gives 256 and 256: XLA
    counted 108.9 MiB instead of 113.2, compiled the count in 0.59x the time
    and the executable in 0.83x (227 kernels -> 160), and the step ran in
    the same time (6.28 s). A chunk below the remainder's (margin 2.24: 192
    and 192) ran 2-6 % slower: bigger is tried first."""
    loops = _loop_chunks(text)
    if len(loops) < 2 or None in loops or _outside_bytes(text) != 0:
        return None
    j = next((i for i, loop in enumerate(loops) if loop[2]), None)
    if j is None:
        return None
    _, chunk, _, size = loops[j]
    shape = [(loop[0], loop[3]) for loop in loops]
    up = next((c for c in range(chunk + 1, int(DIVISOR_CEIL * chunk) + 1) if size % c == 0), None)
    down = next((c for c in range(chunk - 1, 0, -1) if size % c == 0), None)
    targets = ([(up, margin / DIVISOR_CEIL, margin)] if bigger and up else []) + (
        [(down, margin, margin / DIVISOR_FLOOR)] if down and down >= DIVISOR_FLOOR * chunk else [])
    passes = DIVISOR_TRIES
    for want, low, high in targets:
        m = margin * chunk / want
        while passes and low <= m <= high:
            passes -= 1
            try:
                other = split(m)
            except MemfitError:
                break
            got = _loop_chunks(other)
            if (None in got or [(g[0], g[3]) for g in got] != shape
                    or _split_loops(other) != len(loops) or _outside_bytes(other) != 0):
                break  # other loops: not this split with other chunks
            if all(g[2] == 0 for g in got):
                # A margin step can change the chunk rule's pick by more
                # than the margin (a loop of 13 rows went to 3): every
                # loop's chunk must stay near its own.
                near = all(DIVISOR_FLOOR * c <= g[1] <= DIVISOR_CEIL * c
                           for (_, c, _, _), g in zip(loops, got))
                return (other, m) if near else None
            m *= got[j][1] / want
    return None


def _fits(a: Attempt, limit: int) -> bool:
    return a.xla_bytes is not None and a.total_bytes <= limit


def _why_not_compile(cal: Calibration, text: str) -> str | None:
    """Why the program split with a new margin is not worth a compile."""
    if any(_program(a.text) == _program(text) for a in cal.attempts):
        return "same program"
    first = cal.attempts[0]
    if _fits(first, cal.limit) and _split_loops(text) > _split_loops(first.text):
        # Not just bigger chunks: the split steps chose other, more loops
        # (more recomputation), which measured slower on a transformer step.
        return "more loops than the first split; not compiled"
    return None


def _next_margin_to_try(cal: Calibration) -> float | None:
    last = cal.attempts[-1]
    if len(cal.attempts) == MAX_COMPILES:
        return None
    first = cal.attempts[0]
    if (len(cal.attempts) == 1 and _fits(first, cal.limit)
            and _split_loops(first.text) > 1 and _outside_bytes(first.text) == 0):
        # Split into several loops (a second pass): on every such program
        # measured (transformer step, SGPR gradient) a smaller margin made
        # the steps choose other loops, so the re-split would only cost pass
        # time (21 % of XLA's compile on the SGPR gradient).
        cal.skipped.append((None, "several loops: kept without a re-split", 0.0))
        return None
    m = next_margin(last, cal.limit)
    if m is None or (_fits(last, cal.limit) and m > last.margin * WORTH_IT):
        return None  # cannot tell, or already close to the limit
    if any(abs(a.margin - m) < 1e-3 * m for a in cal.attempts):
        return None
    return m


def _choose(cal: Calibration, warn: bool = True) -> None:
    """Keeps the largest program that fits; else the largest that XLA's count
    alone fits, else the smallest, with a warning."""
    fitting = [i for i, a in enumerate(cal.attempts) if _fits(a, cal.limit)]
    if fitting:
        # the largest by XLA's count: the biggest chunks
        cal.chosen = max(fitting, key=lambda i: cal.attempts[i].counted_bytes)
        return
    known = [i for i, a in enumerate(cal.attempts) if a.xla_bytes is not None]
    # XLA's count within the limit: the one of the smallest margin (the
    # biggest chunks; the runtime scratch pushes each over). Not the most
    # bytes: a larger margin can make the split steps take other loops that
    # XLA counts more bytes for at smaller chunks (a CLIP loss's gradient:
    # a nested loop of 2 rows, 28.1 MiB, against 27.0 MiB at margin 1.09
    # with chunks of a hundred rows). Else the smallest.
    within = [i for i in known if cal.attempts[i].counted_bytes <= cal.limit]
    if within:
        cal.chosen = min(within, key=lambda i: cal.attempts[i].margin)
    else:
        cal.chosen = min(known, key=lambda i: cal.attempts[i].total_bytes) if known else 0
    kept = cal.kept
    if warn and kept.xla_bytes is not None:
        scratch = (f" plus {kept.scratch_bytes / 2**20:.1f} MiB of runtime scratch"
                   if kept.scratch_bytes else "")
        warnings.warn(
            f"memfit: XLA accounts {kept.counted_bytes / 2**20:.1f} MiB{scratch} for the split "
            f"program, over the memory limit of {cal.limit / 2**20:.1f} MiB "
            f"({cal.summary()}); " + (
                "XLA's count alone is within it: the runtime's library-dot scratch, which "
                "does not shrink with the chunks, pushes it over"
                if kept.counted_bytes <= cal.limit else
                "memfit's model underestimated XLA's temporaries"),
            MemoryLimitWarning, stacklevel=5)


def _attempt(cal: Calibration, margin: float, split, compile_text, step: float = 1.0) -> bool:
    """Splits with ``margin`` and compiles it; False when there is nothing
    (new) to compile: the split failed or would not be worth it. A ``step``
    above 1 (a program over the limit needs smaller chunks) multiplies a
    margin whose split is a program already compiled, up to
    ``SAME_PROGRAM_STEPS`` times: the chunk rule rounds a chunk down to its
    tile and to a divisor of the dimension, so a small step of the margin
    can land on the chunk it came from."""
    for _ in range(SAME_PROGRAM_STEPS + 1 if step > 1.0 else 1):
        t0 = time.perf_counter()
        try:
            text = split(margin)
        except MemfitError:
            if not cal.attempts:
                raise
            return False  # a more careful margin that cannot fit: keep what we have
        text, margin = _divisor_chunk(cal, text, margin, split)
        t1 = time.perf_counter()
        why = _why_not_compile(cal, text) if cal.attempts else None
        if not why:
            _compile_attempt(cal, margin, text, t1 - t0, compile_text)
            return True
        cal.skipped.append((margin, why, t1 - t0))
        if why != "same program" or margin * step > MAX_MARGIN:
            return False
        margin *= step
    return False


def _divisor_chunk(cal: Calibration, text: str, margin: float, split,
                   bigger: bool = False) -> tuple[str, float]:
    """``text`` and ``margin``, or the split without a remainder step
    (``_without_remainder``, ``_several_without_remainder``), noted in
    ``cal.skipped``."""
    t0 = time.perf_counter()
    loops = _loop_chunks(text)
    found = (_without_remainder(text, margin, split) if len(loops) == 1 else
             _several_without_remainder(text, margin, split, bigger))
    if found is None:
        return text, margin
    chunks = ", ".join(str(c) for _, c, _, _ in loops)
    left = ", ".join(f"{r} of {n}" for _, _, r, n in loops)
    new_chunks = ", ".join(str(c) for _, c, _, _ in _loop_chunks(found[0]))
    plural = "s" if len(loops) > 1 else ""
    cal.skipped.append((margin, f"chunk{plural} {chunks} leave{'' if plural else 's'} {left}: "
                                f"margin {found[1]:.3g}'s chunk{plural} {new_chunks} "
                                f"compiled instead", time.perf_counter() - t0))
    return found


def _compile_attempt(cal: Calibration, margin: float, text: str, pass_s: float,
                     compile_text) -> None:
    t0 = time.perf_counter()
    compiled = compile_text(text)
    total, fixed = _xla_bytes(compiled)
    cal.attempts.append(Attempt(margin, text, compiled, total, fixed, pass_s,
                                time.perf_counter() - t0))


def _run_only(cal: Calibration, margin: float, text: str, pass_s: float,
              run_only) -> Attempt | None:
    """For a program without memfit's loops, with ``run_only = (compile_run,
    scratch, modelled_peak)``: compiles it as it runs, and keeps that as the
    attempt when the fusion model's peak and XLA's count of the executable
    that runs, with its runtime scratch, are both under ``UNCOUNTED_SHARE``
    of the limit. The accounting compile (ynn fusions off) would be a
    second compile of the same program. On the race's programs that fit
    and the held-out ones, its count was 0.66-1.09x the count as it runs
    and 0.75-1.13x the model's, so neither is near half; where either is
    over that share, the accounting compile runs as for any split, and the
    executable compiled here is the one that runs (not compiled again).
    Returns that attempt (kept in ``cal`` when it counts), or None when
    nothing was compiled."""
    compile_run, scratch, modelled_peak = run_only
    if _split_loops(text) or modelled_peak(text) > UNCOUNTED_SHARE * cal.limit:
        return None
    t0 = time.perf_counter()
    run = compile_run(text)
    total, fixed = _xla_bytes(run)
    a = Attempt(margin, text, run, total, fixed, pass_s, time.perf_counter() - t0,
                scratch_bytes=scratch(run), run_compiled=run, run_xla_bytes=total,
                accounted=False)
    if total is not None and a.total_bytes <= UNCOUNTED_SHARE * cal.limit:
        cal.attempts.append(a)
        cal.skipped.append((None, "counted as it runs: the model's peak and XLA's count are "
                                  "under half the limit", 0.0))
    return a


def _predicts_its_margin(text: str) -> bool:
    """Whether the fusion model's own margin is the one to compile first:
    for one loop memfit-split made at the function's top level, or for the
    exact kNN's two-level loop (``memfit.knn_loop``) in a program memfit-split
    left alone. Both size one chunk from the room the margin leaves. The
    kNN rewrite reads a margin below 1 as 1, so on the race's kNN (64 MiB)
    margin 1 is the program the search kept after margin 2's compile (42.8
    then 45.4 MiB, the second at margin 0.96)."""
    loops = _split_loops(text)
    if loops == 0:
        return KNN_LOOP in text
    return loops == 1 and _outside_bytes(text) == 0


def _first_attempt(cal: Calibration, split, compile_text, run_only=None) -> None:
    """Compiles the first split: the fusion model's own prediction (margin
    1, ``PREDICTED_MARGIN``) for a program split into one loop at the
    function's top level or holding the exact kNN's loop alone
    (``_predicts_its_margin``), else the default margin's. One loop's chunk is
    what the margin sizes, and on every such split measured (the race's
    attention rows, the exact kNN's callers, an LLM head's cross-entropy)
    the calibrated margin landed at 0.9-1.2: starting from the model's own
    margin, one compile usually lands within ``WORTH_IT`` of the target,
    where margin 2 took a second (or third) compile to get there. XLA's
    count of that compile corrects the model when it does not (the next
    margin follows from it as from any attempt). Programs split into
    several loops, or inside a layer loop's body, keep margin 2 first: a
    smaller margin there changes which loops the split makes. Raises
    margin 2's MemfitError when margin 2 cannot fit in the model."""
    t0 = time.perf_counter()
    text = split(DEFAULT_MARGIN)
    t1 = time.perf_counter()
    margin, pass_s = DEFAULT_MARGIN, t1 - t0
    if _predicts_its_margin(text):
        try:
            predicted = split(PREDICTED_MARGIN)
        except MemfitError:
            predicted = None
        t2 = time.perf_counter()
        if (predicted is not None and _split_loops(predicted) == _split_loops(text)
                and _program(predicted) != _program(text)):
            cal.skipped.append((DEFAULT_MARGIN, "split, not compiled: the model's own "
                                                "margin compiled first", pass_s))
            text, margin, pass_s = predicted, PREDICTED_MARGIN, t2 - t1
        else:
            why = ("cannot fit in the model" if predicted is None else "same program"
                   if _program(predicted) == _program(text) else "more loops")
            cal.skipped.append((PREDICTED_MARGIN, f"{why}; margin 2 compiled first", t2 - t1))
    if _split_loops(text):
        text, margin = _divisor_chunk(cal, text, margin, split, bigger=True)
    run = _run_only(cal, margin, text, pass_s, run_only) if run_only else None
    if run is not None and cal.attempts:
        return
    _compile_attempt(cal, margin, text, pass_s, compile_text)
    if run is not None:  # over the share: counted as any split, runs what was compiled
        cal.attempts[-1].run_compiled, cal.attempts[-1].run_xla_bytes = (run.run_compiled,
                                                                         run.run_xla_bytes)
        cal.attempts[-1].scratch_bytes = run.scratch_bytes


def _rescue(cal: Calibration, split, compile_text, error: MemfitError) -> None:
    """When the default margin cannot fit the limit in the model, XLA may
    still: the margin doubles every temporary of a loop, and inside a layer
    loop's body most of them are full-size buffers the model counts exactly
    (accumulators, their partial products, live-ins), which do not shrink
    with the chunk. The model without a margin (1) is compiled and kept
    when XLA's count is within the limit, or the margin the measurement
    points to between 1 and 2 is tried once; otherwise ``error`` (margin
    2's, with the floor it reports) reaches the user."""
    for margin in (RESCUE_MARGIN, None):
        if margin is None:
            if not cal.attempts or cal.attempts[-1].xla_bytes is None:
                break
            margin = next_margin(cal.attempts[-1], cal.limit)
            if margin is None or not RESCUE_MARGIN < margin < DEFAULT_MARGIN:
                break
        try:
            text = split(margin)
        except MemfitError:
            break
        t0 = time.perf_counter()
        compiled = compile_text(text)
        total, fixed = _xla_bytes(compiled)
        cal.attempts.append(Attempt(margin, text, compiled, total, fixed, 0.0,
                                    time.perf_counter() - t0))
        if _fits(cal.attempts[-1], cal.limit):
            cal.skipped.append((DEFAULT_MARGIN, "cannot fit in the model; rescued by XLA's "
                                                "count at a smaller margin", 0.0))
            return
    raise error


def _between(fit: Attempt, over: Attempt, limit: int) -> float | None:
    """The margin at which the bytes reach the target, on the curve
    bytes(margin) = a + b / margin through two measured splits: one that
    fits and a bigger one that does not. (Scratch and temporaries both
    shrink with the chunk, but not in proportion to it: a single point's
    ``next_margin`` overshot the limit by 0.5 % on attention's gradient.)"""
    x0, x1 = 1.0 / fit.margin, 1.0 / over.margin
    if x1 <= x0 or fit.fixed_bytes is None:
        return None
    b = (over.total_bytes - fit.total_bytes) / (x1 - x0)
    a = fit.total_bytes - b * x0
    target = fit.fixed_bytes + (limit - fit.fixed_bytes) / (1.0 + HEADROOM)
    if b <= 0 or target <= a:
        return None
    return min(MAX_MARGIN, max(MIN_MARGIN, b / (target - a)))


def _compile_as_run(cal: Calibration, a: Attempt, compile_run, compile_lean, scratch) -> None:
    """Compiles ``a`` as it will run, and sets its runtime scratch: with the
    user's flags, or, for a split program whose executable XLA assigns more
    bytes under those flags than under the accounting options and which
    then does not fit the limit (``_needs_lean``), with ``compile_lean``
    when that is smaller. (jax's default ynn fusions on CPU fuse differently
    from the accounting compile; on the SGPR gradient they materialise
    broadcasts that the split meant to stay fused.) A program memfit did not
    split runs as the user compiles it, whatever its size."""
    a.run_compiled = compile_run(a.text) if compile_run else a.compiled
    a.scratch_bytes = scratch(a.run_compiled)
    if a.run_compiled is a.compiled:
        return
    a.run_xla_bytes = _xla_bytes(a.run_compiled)[0]
    if compile_lean is None or not _needs_lean(cal, a):
        return
    lean_compiled, lean_name = compile_lean(a.text)
    lean_bytes = _xla_bytes(lean_compiled)[0]
    if lean_bytes is not None and lean_bytes < a.run_xla_bytes:
        a.run_compiled, a.run_xla_bytes, a.run_options = lean_compiled, lean_bytes, lean_name
        a.scratch_bytes = scratch(lean_compiled)


def _needs_lean(cal: Calibration, a: Attempt) -> bool:
    """Whether a lean compile of ``a`` (ynn fusions of dots only) can matter:
    a split program whose executable under the user's flags XLA assigns more
    bytes than the accounting compile, and that, with its runtime scratch,
    is over the limit. One that fits as the user compiles it runs so: the
    limit bounds XLA's larger count plus the scratch, which it meets. (The
    held-out pre-LN block: 117.6 MiB accounted, 123.5 as it runs, 28.6 of
    scratch under 178; its lean compile, 135.1 MiB, took 1.7 s and was not
    kept. The SGPR gradient, over it as it runs, still compiles lean.)"""
    if _split_loops(a.text) == 0 or a.run_xla_bytes is None or a.xla_bytes is None:
        return False
    if a.run_xla_bytes <= a.xla_bytes:
        return False
    if a.total_bytes <= cal.limit:
        cal.skipped.append((a.margin, "fits as it runs: not compiled lean", 0.0))
        return False
    return True


def _fit_runtime_scratch(cal: Calibration, split, compile_text, compile_run, scratch,
                         compile_lean=None) -> None:
    """Measures the runtime scratch of the program that would be kept and
    re-splits while it pushes the program over the limit."""
    resplits = 0
    while True:
        _choose(cal, warn=False)
        kept = cal.kept
        if kept.xla_bytes is None:
            return
        if kept.scratch_bytes is None:
            _compile_as_run(cal, kept, compile_run, compile_lean, scratch)
            continue  # it may no longer be the one to keep
        if resplits == MAX_SCRATCH_RESPLITS:
            return
        over = [a for a in cal.attempts if a.scratch_bytes is not None
                and a.margin < kept.margin and not _fits(a, cal.limit)]
        if _fits(kept, cal.limit):
            if not over:
                return  # the main loop already aimed at the limit
            # between it and the nearest bigger split that the scratch pushed over
            m = _between(kept, max(over, key=lambda a: a.margin), cal.limit)
            if m is None or m > kept.margin * WORTH_IT:
                return
        else:
            m = next_margin(kept, cal.limit)
        if m is None or any(abs(a.margin - m) < 1e-3 * m for a in cal.attempts):
            return
        resplits += 1
        over_limit = not _fits(kept, cal.limit)
        if not _attempt(cal, m, split, compile_text,
                        step=m / kept.margin if over_limit and m > kept.margin else 1.0):
            return


def calibrate(split: Callable[[float], str], compile_text: Callable[[str], Any],
              limit: int, *,
              scratch: Callable[[Any], int] | None = None,
              compile_run: Callable[[str], Any] | None = None,
              compile_lean: Callable[[str], tuple[Any, str]] | None = None,
              modelled_peak: Callable[[str], int] | None = None) -> Calibration:
    """Splits with the default margin, then re-splits with calibrated ones.

    ``split(margin)`` returns the transformed module text (it raises
    MemfitError when the limit cannot be met); ``compile_text(text)`` returns
    XLA's executable for it. Loops are memfit-split's when they carry its
    ``memfit.split`` record (``_split_loops``).
    ``scratch(executable)``, when given, returns the bytes the program takes
    at run time beyond XLA's count; it is read from ``compile_run(text)``,
    the executable as the user runs it (default: ``compile_text``'s).
    ``compile_lean(text)``, when given, returns (executable, a name for its
    options): another way to run a split program, taken when XLA assigns it
    fewer bytes than the user's flags do (``_compile_as_run``).
    ``modelled_peak(text)``, given with ``compile_run`` and ``scratch``, is
    the fusion model's peak of a program: one memfit did not split and that
    stays far under the limit is compiled only as it runs (``_run_only``).
    """
    cal = Calibration(limit)
    try:
        _first_attempt(cal, split, compile_text,
                       (compile_run, scratch, modelled_peak)
                       if modelled_peak and compile_run and scratch else None)
    except MemfitError as error:
        _rescue(cal, split, compile_text, error)
    margin = _next_margin_to_try(cal)
    while margin is not None:
        if not _attempt(cal, margin, split, compile_text):
            break
        margin = _next_margin_to_try(cal)
    if scratch is not None:
        _fit_runtime_scratch(cal, split, compile_text, compile_run, scratch, compile_lean)
    _choose(cal)
    return cal
