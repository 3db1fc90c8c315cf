"""Buffer packing: offsets for buffers with known lifetimes.

Each buffer is live over the half-open time range ``[lower, upper)`` and needs
``size`` bytes. Packing gives every buffer an ``offset`` so that buffers live
at the same time never overlap in ``[offset, offset + size)``. With a capacity
the packer finds offsets below it or proves there are none; without one it
minimises the peak (largest ``offset + size``). The search runs in C++
(``memfit._core.pack``); see docs/packing.md.

    from memfit.pack import Buffer, pack, read_csv
    result = pack(read_csv("trace.csv"), capacity=1 << 20, time_limit=10)
    if result.packed:
        print(result.peak, result.offsets)

CSV format (as in MiniMalloc's benchmarks): a header with ``id,lower,upper,size``
(other columns are ignored), one buffer per line; the output adds ``offset``.
Command line: ``memfit pack FILE.csv [--capacity BYTES] [--time-limit S]
[--cpu-time] [-o OUT.csv]``.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import re
import sys
from typing import Iterable, Optional, Sequence, TextIO, Union

__all__ = [
    "Buffer",
    "PackResult",
    "CsvFormatError",
    "read_csv",
    "write_csv",
    "parse_capacity",
    "pack",
    "best_fit",
    "max_live_bytes",
    "add_subcommand",
    "main_pack",
]

REQUIRED_COLUMNS = ("id", "lower", "upper", "size")

# Exit codes of `memfit pack`.
EXIT_PACKED = 0
EXIT_BAD_INPUT = 1
EXIT_INFEASIBLE = 3
EXIT_TIMEOUT = 4

_INT64_MAX = (1 << 63) - 1


@dataclasses.dataclass(frozen=True)
class Buffer:
    """A buffer live over ``[lower, upper)`` needing ``size`` bytes."""

    id: Union[int, str]
    lower: int
    upper: int
    size: int


@dataclasses.dataclass
class PackResult:
    """What :func:`pack` found.

    ``status`` is ``"packed"``, ``"infeasible"`` (proven: no placement fits
    the capacity) or ``"timeout"`` (no packing found and none ruled out within
    the time limit). ``offsets[i]`` belongs to ``buffers[i]`` (empty unless
    packed). ``lower_bound`` is the most bytes live at one time; in
    peak-minimising mode ``optimal`` says whether ``peak`` is proven minimal
    and ``proven_lower_bound`` is the best proven bound. ``proof`` says why
    an infeasible result holds: ``"live-bytes"`` (more bytes live at one
    time than the capacity), ``"buffer-too-large"``, ``"search-exhausted"``
    (the exhaustive search ruled out every placement) or ``"section"`` (the
    buffers of one time section, cut to it, have no placement; the message
    names the section); empty otherwise.
    """

    status: str
    buffers: list[Buffer]
    offsets: list[int]
    peak: int
    lower_bound: int
    proven_lower_bound: int
    optimal: bool
    capacity: int | None
    message: str
    seconds: float
    nodes: int
    proof: str = ""

    @property
    def packed(self) -> bool:
        return self.status == "packed"

    @property
    def ratio(self) -> float:
        """peak / lower_bound (1.0 when nothing needs memory)."""
        if not self.packed:
            return math.nan
        return self.peak / self.lower_bound if self.lower_bound else 1.0

    def offset_by_id(self) -> dict:
        return {b.id: o for b, o in zip(self.buffers, self.offsets)}


class CsvFormatError(ValueError):
    """A malformed buffer CSV; the message names the file and line."""


# ---------------------------------------------------------------------------
# Input checks and CSV


def _check_buffers(buffers: Sequence[Buffer], where=None) -> None:
    """Raise ValueError naming the first malformed buffer.

    ``where(i)`` gives a prefix such as ``"trace.csv:7: "`` for buffer i.
    """
    seen: dict = {}
    for i, b in enumerate(buffers):
        pre = where(i) if where else ""
        for name in ("lower", "upper", "size"):
            v = getattr(b, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{pre}buffer {b.id!r}: {name} must be an integer, got {v!r}")
            if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
                raise ValueError(f"{pre}buffer {b.id!r}: {name} {v} does not fit in 64 bits")
        if b.size < 0:
            raise ValueError(f"{pre}buffer {b.id!r}: size must not be negative, got {b.size}")
        if b.upper <= b.lower:
            raise ValueError(
                f"{pre}buffer {b.id!r}: upper ({b.upper}) must be greater than lower ({b.lower})")
        if b.id in seen:
            first = seen[b.id]
            pre_first = where(first) if where else f"buffer #{first}: "
            raise ValueError(f"{pre}duplicate buffer id {b.id!r} (first at {pre_first.rstrip(': ')})")
        seen[b.id] = i


def _as_buffers(buffers: Iterable) -> list[Buffer]:
    out = []
    for i, b in enumerate(buffers):
        if isinstance(b, Buffer):
            out.append(b)
        elif isinstance(b, dict):
            try:
                out.append(Buffer(b["id"], b["lower"], b["upper"], b["size"]))
            except KeyError as e:
                raise ValueError(f"buffer #{i}: missing key {e.args[0]!r}") from None
        else:
            try:
                bid, lower, upper, size = b
            except (TypeError, ValueError):
                raise ValueError(
                    f"buffer #{i}: expected a Buffer, a dict or an (id, lower, upper, size) "
                    f"tuple, got {b!r}") from None
            out.append(Buffer(bid, lower, upper, size))
    return out


def _parse_int(text: str, column: str, where: str) -> int:
    t = text.strip()
    if not re.fullmatch(r"[+-]?\d+", t):
        raise CsvFormatError(f"{where}column {column!r}: {text!r} is not an integer")
    v = int(t)
    if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
        raise CsvFormatError(f"{where}column {column!r}: {v} does not fit in 64 bits")
    return v


def read_csv(source: Union[str, "os.PathLike[str]", TextIO]) -> list[Buffer]:
    """Buffers from a CSV file (path or open text file).

    Raises :class:`CsvFormatError` naming the line for a missing header or
    column, a value that is not an integer, a negative size, an upper bound
    not above the lower one, or a duplicate id. Ids that are integers become
    ints; others stay strings.
    """
    if hasattr(source, "read"):
        name = getattr(source, "name", "<input>")
        return _read_csv_text(source, str(name))
    with open(source, newline="") as f:
        return _read_csv_text(f, str(source))


def _read_csv_text(f: TextIO, name: str) -> list[Buffer]:
    reader = csv.reader(f)
    header = None
    header_line = 0
    for row in reader:
        if any(cell.strip() for cell in row):
            header = [c.strip() for c in row]
            header_line = reader.line_num
            break
    if header is None:
        raise CsvFormatError(f"{name}: empty file: expected a header 'id,lower,upper,size'")
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise CsvFormatError(
            f"{name}:{header_line}: header lacks column(s) {', '.join(missing)} "
            f"(expected id,lower,upper,size; got {','.join(header)})")
    col = {c: header.index(c) for c in REQUIRED_COLUMNS}
    buffers: list[Buffer] = []
    lines: list[int] = []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        line = reader.line_num
        where = f"{name}:{line}: "
        if len(row) < len(header):
            raise CsvFormatError(
                f"{where}expected {len(header)} values ({','.join(header)}), got {len(row)}")
        raw_id = row[col["id"]].strip()
        if raw_id == "":
            raise CsvFormatError(f"{where}column 'id' is empty")
        bid: Union[int, str] = int(raw_id) if re.fullmatch(r"[+-]?\d+", raw_id) else raw_id
        lower = _parse_int(row[col["lower"]], "lower", where)
        upper = _parse_int(row[col["upper"]], "upper", where)
        size = _parse_int(row[col["size"]], "size", where)
        buffers.append(Buffer(bid, lower, upper, size))
        lines.append(line)
    try:
        _check_buffers(buffers, where=lambda i: f"{name}:{lines[i]}: ")
    except ValueError as e:
        raise CsvFormatError(str(e)) from None
    return buffers


def write_csv(dest: Union[str, "os.PathLike[str]", TextIO], buffers: Sequence[Buffer],
              offsets: Sequence[int]) -> None:
    """Write ``id,lower,upper,size,offset`` rows."""
    if len(offsets) != len(buffers):
        raise ValueError(f"{len(buffers)} buffers but {len(offsets)} offsets")
    if hasattr(dest, "write"):
        _write_rows(dest, buffers, offsets)
        return
    with open(dest, "w", newline="") as f:
        _write_rows(f, buffers, offsets)


def _write_rows(f: TextIO, buffers, offsets) -> None:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(("id", "lower", "upper", "size", "offset"))
    for b, o in zip(buffers, offsets):
        w.writerow((b.id, b.lower, b.upper, b.size, o))


_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
}


def parse_capacity(value: Union[int, str]) -> int:
    """Bytes in ``value``: an integer (0 allowed), or a string such as
    ``"1048576"``, ``"1MiB"``, ``"1.5GB"`` (KB/MB/GB: powers of 1000;
    KiB/MiB/GiB: powers of 1024)."""
    if isinstance(value, bool):
        raise ValueError(f"capacity must be a byte count, not {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"capacity must not be negative, got {value}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"capacity must be a byte count or a string like '1MiB', not {value!r}")
    text = value.strip().replace("_", "")
    if re.fullmatch(r"\d+", text):
        return int(text)
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(
            f"capacity {value!r} is not a byte count (examples: 1048576, 1MiB, 1.5GB)")
    number, unit = m.group(1), m.group(2).lower()
    try:
        # Prefer memfit's own parser where it exists, for the same rules
        # everywhere; it rejects zero, which plain integers above allow.
        from ..units import parse_memory_size
        return int(parse_memory_size(f"{number}{m.group(2)}"))
    except ImportError:
        pass
    except (ValueError, AttributeError, TypeError):
        pass
    scaled = float(number) * _UNITS[unit]
    if scaled != int(scaled):
        raise ValueError(f"capacity {value!r} is not a whole number of bytes")
    return int(scaled)


# ---------------------------------------------------------------------------
# Packing


def _core():
    from .. import _core as core
    if not hasattr(core, "pack"):
        raise RuntimeError("memfit._core was built without the packer (lib/Packing)")
    return core


def _cxx_ids(buffers: Sequence[Buffer]) -> list[int]:
    ids = [b.id for b in buffers]
    if all(isinstance(i, int) and not isinstance(i, bool) and -(1 << 63) <= i <= _INT64_MAX
           for i in ids):
        return ids
    return list(range(len(buffers)))


def pack(buffers: Iterable, capacity: Union[int, str, None] = None, time_limit: float = 60.0,
         *, node_limit: int = 0, cpu_time: bool = False,
         max_table_entries: Optional[int] = None) -> PackResult:
    """Pack ``buffers`` (Buffer objects, dicts or (id, lower, upper, size)
    tuples).

    With ``capacity`` (bytes, or a string like ``"1MiB"``): status
    ``"packed"`` with every ``offset + size <= capacity``, ``"infeasible"``
    when proven impossible, or ``"timeout"``. Without it: minimise the peak
    (``"packed"``, ``optimal`` telling whether the peak is proven minimal;
    ``"timeout"`` only when not even best-fit finished within the limit). ``node_limit`` (search nodes, 0 for none) makes a run
    independent of machine speed. With ``cpu_time``, ``time_limit`` (and
    ``seconds``) count CPU time of the calling thread instead of wall-clock
    time, so a loaded machine gives the search the same time.
    ``max_table_entries`` bounds the search's memory (table entries, 2**26
    by default): a problem whose exhaustive search needs more is searched by
    the time-order searches alone, which find packings but prove nothing
    (docs/packing.md, "Limits"). Malformed
    buffers raise ValueError.
    The GIL is released while the C++ search runs.
    """
    bufs = _as_buffers(buffers)
    _check_buffers(bufs)
    cap = None if capacity is None else parse_capacity(capacity)
    if not (isinstance(time_limit, (int, float)) and time_limit >= 0 and math.isfinite(time_limit)):
        raise ValueError(f"time_limit must be a non-negative number of seconds, got {time_limit!r}")
    if not isinstance(node_limit, int) or node_limit < 0:
        raise ValueError(f"node_limit must be a non-negative integer, got {node_limit!r}")
    if max_table_entries is not None and (not isinstance(max_table_entries, int)
                                          or max_table_entries < 0):
        raise ValueError("max_table_entries must be a non-negative integer, got "
                         f"{max_table_entries!r}")
    if cap is not None:
        for b in bufs:
            if b.size > cap:
                lb = max_live_bytes(bufs)
                return PackResult("infeasible", bufs, [], 0, lb, lb, False, cap,
                                  f"infeasible: buffer {b.id!r} needs {b.size} bytes, more "
                                  f"than the capacity {cap}", 0.0, 0, "buffer-too-large")
    core = _core()
    r = core.pack([*_cxx_ids(bufs)], [b.lower for b in bufs], [b.upper for b in bufs],
                  [b.size for b in bufs], cap, float(time_limit), node_limit,
                  bool(cpu_time), max_table_entries)
    if r["status"] == "invalid":
        raise ValueError(r["message"])
    return PackResult(
        status=r["status"], buffers=bufs, offsets=list(r["offsets"]), peak=r["peak"],
        lower_bound=r["lower_bound"], proven_lower_bound=r["proven_lower_bound"],
        optimal=bool(r["optimal"]), capacity=cap, message=r["message"],
        seconds=r["seconds"], nodes=r["nodes"], proof=r["proof"])


def best_fit(buffers: Iterable) -> tuple[list[int], int]:
    """The best-fit baseline in C++: (offsets, peak)."""
    bufs = _as_buffers(buffers)
    _check_buffers(bufs)
    r = _core().pack_best_fit(_cxx_ids(bufs), [b.lower for b in bufs],
                              [b.upper for b in bufs], [b.size for b in bufs])
    return list(r["offsets"]), r["peak"]


def max_live_bytes(buffers: Iterable) -> int:
    """The most bytes live at one time (a lower bound on any peak)."""
    events = []
    for b in _as_buffers(buffers):
        if b.size:
            events.append((b.lower, 1, b.size))
            events.append((b.upper, 0, -b.size))  # ends before starts
    events.sort()
    cur = best = 0
    for _, _, d in events:
        cur += d
        best = max(best, cur)
    return best


# ---------------------------------------------------------------------------
# Command line


def add_subcommand(subparsers) -> argparse.ArgumentParser:
    """Register ``memfit pack`` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "pack",
        help="place buffers with known lifetimes at offsets (dynamic storage allocation)",
        description=(
            "Read buffers (CSV with columns id,lower,upper,size; lifetimes are "
            "[lower, upper)) and give each an offset so that buffers live at the "
            "same time do not overlap. With --capacity: find offsets within it or "
            "prove there are none. Without: minimise the peak and report it with "
            "the lower bound (most bytes live at one time). Exit status: 0 packed, "
            f"{EXIT_BAD_INPUT} bad input, {EXIT_INFEASIBLE} proven infeasible, "
            f"{EXIT_TIMEOUT} time limit reached without a packing."))
    p.add_argument("file", help="buffer CSV (id,lower,upper,size), or - for stdin")
    p.add_argument("--capacity", default=None,
                   help="bytes available, e.g. 1048576 or 1MiB (default: minimise the peak)")
    p.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                   help="seconds to search (default 60)")
    p.add_argument("--node-limit", type=int, default=0, metavar="N",
                   help="search nodes to explore at most (default 0: no limit)")
    p.add_argument("--cpu-time", action="store_true",
                   help="count --time-limit in CPU time of the search, not wall-clock time")
    p.add_argument("-o", "--output", default=None, metavar="OUT.csv",
                   help="write id,lower,upper,size,offset rows here (- for stdout)")
    p.set_defaults(func=main_pack)
    return p


def main_pack(args) -> int:
    """Run ``memfit pack`` for parsed ``args``; returns the exit status."""
    err = sys.stderr
    try:
        if args.file == "-":
            buffers = _read_csv_text(sys.stdin, "<stdin>")
        else:
            buffers = read_csv(args.file)
        capacity = None if args.capacity is None else parse_capacity(args.capacity)
        if args.time_limit is None or args.time_limit < 0 or not math.isfinite(args.time_limit):
            raise ValueError(f"--time-limit must be a non-negative number, got {args.time_limit}")
        if args.node_limit < 0:
            raise ValueError(f"--node-limit must not be negative, got {args.node_limit}")
        result = pack(buffers, capacity, args.time_limit, node_limit=args.node_limit,
                      cpu_time=args.cpu_time)
    except (OSError, ValueError) as e:
        print(f"memfit pack: error: {e}", file=err)
        return EXIT_BAD_INPUT

    summary = sys.stdout if args.output != "-" else err
    n = len(buffers)
    if result.status == "infeasible":
        why = re.sub(r"^infeasible:\s*", "", result.message)
        print(f"memfit pack: infeasible: no placement of {n} buffers fits in "
              f"{capacity} bytes ({why})", file=err)
        return EXIT_INFEASIBLE
    if result.status == "timeout":
        within = f"within {capacity} bytes " if capacity is not None else ""
        print(f"memfit pack: timeout: no packing of {n} buffers {within}"
              f"found, and none ruled out, in {result.seconds:.1f} s "
              f"(most bytes live at one time: {result.lower_bound}; {result.message})",
              file=err)
        return EXIT_TIMEOUT

    if args.output == "-":
        write_csv(sys.stdout, buffers, result.offsets)
    elif args.output:
        try:
            write_csv(args.output, buffers, result.offsets)
        except OSError as e:
            print(f"memfit pack: error: cannot write {args.output}: {e}", file=err)
            return EXIT_BAD_INPUT
    ratio = f"{result.ratio:.4f}"
    if capacity is not None:
        print(f"packed {n} buffers within {capacity} bytes: peak {result.peak}, "
              f"lower bound {result.lower_bound} (most bytes live at one time), "
              f"ratio {ratio}, {result.seconds:.3f} s", file=summary)
    else:
        proof = ("proven minimal" if result.optimal
                 else f"not proven minimal; proven lower bound {result.proven_lower_bound}")
        print(f"peak {result.peak} bytes for {n} buffers; lower bound {result.lower_bound} "
              f"(most bytes live at one time); ratio {ratio} ({proof}); "
              f"{result.seconds:.3f} s", file=summary)
    return EXIT_PACKED


def main(argv: list[str] | None = None) -> int:
    """``python -m memfit.pack.packer FILE.csv ...`` without the rest of the CLI."""
    parser = argparse.ArgumentParser(prog="memfit")
    add_subcommand(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["pack", *(sys.argv[1:] if argv is None else argv)])
    return main_pack(args)


if __name__ == "__main__":
    sys.exit(main())
