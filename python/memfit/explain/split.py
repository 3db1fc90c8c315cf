"""What memfit-split did to a program, as a table, as JSON and as a picture.

The facts come from where they are decided, not re-derived here:
* memfit-split writes each loop's plan on the loop (the ``memfit.split``
  attribute: the tensor it splits, the dimension, chunk size and count,
  remainder, kind, modelled peak; lib/Transforms/Split/Split.cpp);
* memfit-rewrite writes the rewrites it applied on the module
  (``memfit.rewrites``);
* memfit-profile gives bytes live at each op, each op tagged with the split
  loop it belongs to (``split_step``);
* memfit.calibrate's Calibration holds the margins tried and XLA's bytes.

``memfit.jit(f, memory_limit=...)`` keeps the record of its last compile:
``f.report()``; files: ``memfit opt --report`` and ``memfit explain``.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..errors import MemfitError
from ..transform import pipeline_for, to_generic, transform
from ..units import parse_memory_size
from .profiling import ProfileReport, profile_text
from .report import format_bytes


@dataclass
class SplitLoop:
    """One loop memfit-split made (its ``memfit.split`` attribute)."""
    step: int
    seed: str            # the op whose result pushed the program over
    seed_shape: list[int]
    seed_element: str
    seed_bytes: int
    location: str        # the user's source line of that op
    dim: int             # the dimension of that result the loop walks
    size: int            # its extent
    chunk: int
    chunks: int          # full chunks (loop trips)
    remainder: int       # elements of the straight-line last step (0: none)
    kind: str            # map | accumulate | online-softmax | online-logsumexp | first-of-two-passes
    modelled_peak: int   # memfit's modelled peak with this chunk, margin included
    temp_margin: float
    #: bytes the model holds outside the loop's block beyond the arguments
    #: and outputs while it runs (a split inside a layer loop's body: the
    #: layer loop's carried state and stacked values); the margin does not
    #: multiply them
    outside_bytes: int = 0
    #: bytes the loop holds whatever its chunk beyond those (a split inside
    #: a layer loop's body: whole live-ins, accumulators); the margin does
    #: not multiply them either
    loop_fixed_bytes: int = 0

    @property
    def seed_type(self) -> str:
        return f"tensor<{'x'.join(map(str, self.seed_shape))}x{self.seed_element}>"


@dataclass
class MarginTried:
    """One temp-margin the split ran with (memfit.calibrate)."""
    margin: float | None
    xla_bytes: int | None  # XLA's argument + output + temp - alias; None: not compiled
    kept: bool
    note: str = ""


@dataclass
class SplitReport:
    """memfit's split of one program under a memory limit, explained."""
    function: str
    memory_limit: int
    fits: bool
    before: ProfileReport                # the program as jax (or the file) gave it
    after: ProfileReport | None = None   # the kept program; None when it does not fit
    loops: list[SplitLoop] = field(default_factory=list)
    rewrites: dict[str, int] = field(default_factory=dict)
    margins: list[MarginTried] = field(default_factory=list)
    xla_bytes_before: int | None = None
    xla_bytes_after: int | None = None
    error: str | None = None
    smallest_reachable: int | None = None  # bytes; set when it does not fit

    def over_limit(self) -> list[dict]:
        """The tensors live at the peak of the program before the split."""
        return list(self.before.largest_at_peak)

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def table(self) -> str:
        return format_split_table(self)

    def plot(self, path: str | None = None, *, dpi: int = 100):
        """The before/after memory timeline (PNG with matplotlib's Agg);
        returns the matplotlib Figure."""
        from .plot import plot_split
        return plot_split(self, path, dpi=dpi)

    def __str__(self) -> str:
        return self.table()


# -- reading what the passes wrote -------------------------------------------

# key = value; MLIR quotes keys that are not identifiers ("reduce-to-dot").
_ENTRY = re.compile(r'"?([\w-]+)"? = ("(?:[^"\\]|\\.)*"|array<i64(?:: [-0-9, ]*)?>|[-+0-9.eE]+)'
                    r'(?: : \w+)?')


def _attr_dicts(text: str, name: str) -> list[dict[str, Any]]:
    """Every ``name = {k = v, ...}`` in module text, values as Python."""
    out = []
    for body in re.findall(re.escape(name) + r" = \{([^{}]*)\}", text):
        d = {}
        for key, val in _ENTRY.findall(body):
            d[key] = _value(val)
        out.append(d)
    return out


def _value(s: str) -> Any:
    """An attribute value as MLIR prints it: string, i64 array, number."""
    if s.startswith('"'):
        return json.loads(s)
    if s.startswith("array<"):
        return [int(v) for v in re.findall(r"-?\d+", s.partition(":")[2])]
    return int(s) if re.fullmatch(r"[-+]?\d+", s) else float(s)


def split_loops(text: str) -> list[SplitLoop]:
    """The loops memfit-split made in module text, in the order they were made."""
    seen: dict[int, SplitLoop] = {}
    for d in _attr_dicts(text, "memfit.split"):
        loop = SplitLoop(**d)
        seen.setdefault(loop.step, loop)
    return [seen[k] for k in sorted(seen)]


def applied_rewrites(text: str) -> dict[str, int]:
    """memfit-rewrite's record: rewrite name -> times applied."""
    found = _attr_dicts(text, "memfit.rewrites")
    return dict(found[0]) if found else {}


_REACHABLE = re.compile(r"smallest limit memfit can reach is [^(]*\((\d+) bytes\)")


def smallest_reachable(error: MemfitError) -> int | None:
    """The smallest limit memfit-split says it can reach (largest over the
    functions that do not fit), from its diagnostics."""
    found = [int(m) for m in _REACHABLE.findall(str(error))]
    return max(found) if found else None


def _entry(text: str) -> ProfileReport:
    reports = profile_text(text)
    main = [r for r in reports if r.name == "main"]
    return (main or reports)[0]


# -- building reports ----------------------------------------------------------

def build_report(base: str, limit: int, *, kept: str | None = None,
                 error: MemfitError | None = None, margins: list[MarginTried] = (),
                 xla_before: int | None = None, xla_after: int | None = None) -> SplitReport:
    """The report for module text ``base`` split into ``kept`` (or failed
    with ``error``)."""
    before = _entry(base)
    rep = SplitReport(function=before.name, memory_limit=limit, fits=kept is not None,
                      before=before, margins=list(margins), xla_bytes_before=xla_before,
                      xla_bytes_after=xla_after)
    if kept is not None:
        rep.after = _entry(kept)
        rep.loops = split_loops(kept)
        rep.rewrites = applied_rewrites(kept)
    if error is not None:
        rep.error = str(error)
        rep.smallest_reachable = smallest_reachable(error)
    return rep


def explain_text(text: str, memory_limit, *, rewrite: bool = True,
                 temp_margin: float | None = None,
                 xla: bool = False) -> tuple[SplitReport, str | None]:
    """Splits module text as ``memfit opt --memory-limit`` does; returns the
    report and the split text (None when the limit cannot be met). With
    ``xla``, both programs are compiled by XLA for its bytes (no calibration:
    files keep the given margin)."""
    limit = parse_memory_size(memory_limit)
    base = to_generic(text)
    margin = MarginTried(temp_margin if temp_margin is not None else 2.0, None, True,
                         "not calibrated (files keep their margin)")
    before = _xla_bytes_of_text(base) if xla else None
    try:
        kept = transform(base, pipeline_for(None, limit, rewrite, temp_margin=temp_margin))
    except MemfitError as e:
        margin.kept = False
        return build_report(base, limit, error=e, margins=[margin], xla_before=before), None
    after = _xla_bytes_of_text(kept) if xla else None
    margin.xla_bytes = after
    return build_report(base, limit, kept=kept, margins=[margin], xla_before=before,
                        xla_after=after), kept


def _xla_bytes_of_text(text: str) -> int:
    from .. import _jax_handover as handover
    from ..measure import xla_bytes
    return xla_bytes(handover.compile_text(text))


def margins_of(cal) -> list[MarginTried]:
    """memfit.calibrate.Calibration as report rows."""
    rows = [MarginTried(a.margin, a.xla_bytes, i == cal.chosen)
            for i, a in enumerate(cal.attempts)]
    rows += [MarginTried(m, None, False, why) for m, why, _ in cal.skipped]
    return rows


class JitRecord:
    """What memfit.jit's last compile did; the report is built when asked
    (profiles, and one XLA compile of jax's own program for "before")."""

    def __init__(self, base: str, limit: int, compile_plain: Callable[[], Any],
                 compile_text: Callable[[str], Any]):
        self.base, self.limit = base, limit
        self.compile_plain, self.compile_text = compile_plain, compile_text
        self.calibration = None          # memfit.calibrate.Calibration, when calibrated
        self.kept: str | None = None     # the split text, when not calibrated
        self.error: MemfitError | None = None
        self._report: SplitReport | None = None

    def report(self) -> SplitReport:
        if self._report is None:
            self._report = self._build()
        return self._report

    def _build(self) -> SplitReport:
        from ..measure import xla_bytes
        cal = self.calibration
        kept = cal.kept.text if cal is not None else self.kept
        after = None
        if cal is not None and cal.kept.accounted:
            after = cal.kept.xla_bytes
        elif kept is not None:  # counted here as "before" is (ynn fusions off)
            after = xla_bytes(self.compile_text(kept))
        return build_report(self.base, self.limit, kept=kept, error=self.error,
                            margins=margins_of(cal) if cal is not None else [],
                            xla_before=xla_bytes(self.compile_plain()), xla_after=after)


# -- the table -------------------------------------------------------------------

def _loop_rows(loops: list[SplitLoop]) -> list[str]:
    rows = ["  loops:",
            f"    {'step':>4}  {'splits':<34} {'dim':>3} {'size':>8} {'chunk x count':>15}"
            f" {'remainder':>9}  {'kind':<19} {'modelled peak':>13}"]
    for lp in loops:
        rows.append(
            f"    {lp.step:>4}  {lp.seed_type + ' ' + lp.seed.split('.')[-1]:<34} {lp.dim:>3}"
            f" {lp.size:>8} {f'{lp.chunk} x {lp.chunks}':>15} {lp.remainder:>9}  "
            f"{lp.kind:<19} {format_bytes(lp.modelled_peak):>13}")
        if lp.location:
            rows.append(f"          at {lp.location}")
    return rows


def _bytes_or_dash(n: int | None) -> str:
    return "-" if n is None else format_bytes(n)


def _margin_row(m: MarginTried) -> str:
    what = m.note or "not compiled"
    if m.xla_bytes is not None:
        what = f"XLA {format_bytes(m.xla_bytes)}" + (f"  {m.note}" if m.note else "")
    margin = "-" if m.margin is None else f"{m.margin:.3g}"
    return f"    margin {margin:>6}: {what}" + ("  (kept)" if m.kept else "")


def format_split_table(r: SplitReport) -> str:
    verdict = "fits" if r.fits else "does not fit"
    lines = [f"memfit split of @{r.function} under {format_bytes(r.memory_limit)}: {verdict}"]
    after_peak = r.after.peak_bytes if r.after else None
    lines.append(f"  memfit's model (peak):         {format_bytes(r.before.peak_bytes):>12}"
                 f" -> {_bytes_or_dash(after_peak)}")
    lines.append(f"  XLA (argument+output+temp):    {_bytes_or_dash(r.xla_bytes_before):>12}"
                 f" -> {_bytes_or_dash(r.xla_bytes_after)}")
    if not r.fits:
        lines.append(f"  smallest limit memfit can reach: {_bytes_or_dash(r.smallest_reachable)}")
    lines.append(f"  over the limit before: live at the peak ({r.before.peak_op}"
                 + (f", {r.before.peak_location}" if r.before.peak_location else "") + "):")
    for t in r.over_limit():
        loc = f"  {t['location']}" if t.get("location") else ""
        lines.append(f"    {format_bytes(t['bytes']):>12}  {t['type']}  {t['value']}{loc}")
    rewrites = ", ".join(f"{k} x{v}" for k, v in sorted(r.rewrites.items())) or "none"
    lines.append(f"  rewrites applied: {rewrites}")
    if r.loops:
        lines += _loop_rows(r.loops)
    if r.margins:
        lines.append("  temp margins (memfit.calibrate):")
        lines += [_margin_row(m) for m in r.margins]
    if r.error:
        lines.append("  error: " + r.error.replace("\n", "\n  "))
    return "\n".join(lines)
