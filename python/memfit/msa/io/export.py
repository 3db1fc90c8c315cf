"""Exporting a StableHLO program as a memory-space-assignment instance.

``export_buffers(text, device, capacity, mode)`` runs the C++ pass
``memfit-export-buffers`` (after ``memfit-inline``) and returns the instance
as a dict in the schema of :mod:`memfit.msa.core.instance`. The command line::

    memfit export-buffers PROGRAM.mlir --device h200 --capacity 50% \\
        [--mode offload] -o INSTANCE.json

is added to memfit's CLI by :func:`add_subcommands`.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ...errors import MemfitError

DEVICES = ("h200", "tpu-like", "cpu")
MODES = ("offload", "placement")


def _option_text(value: Any) -> str:
    text = str(value)
    if any(c in text for c in " {}=\"'"):
        raise MemfitError(f"memfit export-buffers: option value {text!r} may not contain "
                          "spaces, braces, quotes or '='")
    return text


def export_pipeline(output: str, device: str = "h200", capacity: int | str = "50%",
                    mode: str = "offload", program: str | None = None,
                    function: str | None = None) -> str:
    """The pass pipeline that writes the instance to ``output``."""
    if device not in DEVICES:
        raise MemfitError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
    if mode not in MODES:
        raise MemfitError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    opts = [f"device={device}", f"capacity={_option_text(capacity)}", f"mode={mode}",
            f"output={_option_text(output)}"]
    if program:
        opts.append(f"program={_option_text(program)}")
    if function:
        opts.append(f"function={_option_text(function)}")
    return "memfit-inline,memfit-export-buffers{" + " ".join(opts) + "}"


def export_buffers(text: str, device: str = "h200", capacity: int | str = "50%",
                   mode: str = "offload", *, program: str | None = None,
                   function: str | None = None) -> dict:
    """The instance (a dict, schema of memfit.msa.core.instance) for the program in
    ``text`` (StableHLO, generic or pretty). ``capacity`` is bytes, a size
    ("2GiB"), or a percentage of the function's fusion-aware peak ("50%")."""
    from ...transform import transform
    if isinstance(capacity, (int, float)) and not isinstance(capacity, bool):
        capacity = str(int(capacity))
    fd, path = tempfile.mkstemp(prefix="memfit-instance-", suffix=".json")
    os.close(fd)
    try:
        transform(text, export_pipeline(path, device, capacity, mode, program, function),
                  record_pipeline=False)
        return json.loads(Path(path).read_text())
    finally:
        Path(path).unlink(missing_ok=True)


def instance_stats(inst: dict, *, min_bytes: int = 0) -> dict:
    """Counts and bytes of an instance's buffers by kind, and its peaks.

    ``values`` counts the SSA values the buffers stand for (a buffer written
    in place, or a loop carry, is one buffer of several values: XLA's buffer
    assignment lists each value). ``peak`` is the largest sum of sizes of
    buffers live ([start, end]) at one op, with the instance's intervals;
    ``peak_xla_lifetimes`` keeps arguments live throughout and outputs live
    to the end, as XLA's argument + output + temp bytes do. Buffers under
    ``min_bytes`` are left out of the counts (not of the peaks)."""
    bufs = inst["buffers"]
    out: dict[str, Any] = {}
    for kind in ("argument", "output", "temp"):
        sel = [b for b in bufs if b["kind"] == kind and b["size"] >= min_bytes]
        out[kind + "s"] = len(sel)
        out[kind + "_bytes"] = sum(b["size"] for b in sel)
    sel = [b for b in bufs if b["size"] >= min_bytes]
    out["buffers"] = len(sel)
    out["values"] = sum(b.get("values", 1) for b in sel)
    out["total_bytes"] = sum(b["size"] for b in sel)
    out["value_bytes"] = sum(b["size"] * b.get("values", 1) for b in sel)
    n = len(inst["ops"])

    def peak(interval) -> int:
        delta = [0] * (n + 2)
        for b in bufs:
            s, e = interval(b)
            delta[s] += b["size"]
            delta[e + 1] -= b["size"]
        live = best = 0
        for d in delta:
            live += d
            best = max(best, live)
        return best

    last = max(n - 1, 0)
    out["peak"] = peak(lambda b: (b["start"], b["end"]))
    out["peak_xla_lifetimes"] = peak(
        lambda b: (b["start"], last if b["kind"] in ("argument", "output") else b["end"]))
    return out


# -- command line -------------------------------------------------------------

def cmd_export_buffers(args) -> int:
    from ...textio import read_text, write_text
    inst = export_buffers(read_text(args.file), args.device, args.capacity, args.mode,
                          program=args.program or Path(args.file).name,
                          function=args.function)
    write_text(args.output, json.dumps(inst, indent=1) + "\n")
    if args.output not in (None, "-"):
        s = instance_stats(inst)
        print(f"{args.output}: {len(inst['ops'])} ops, {s['buffers']} buffers "
              f"({s['arguments']} arguments, {s['outputs']} outputs, {s['temps']} temps), "
              f"peak {s['peak']} B, capacity {inst['capacity']} B", file=sys.stderr)
    return 0


def add_subcommands(subparsers) -> None:
    """Adds ``export-buffers`` to memfit's command line."""
    p = subparsers.add_parser(
        "export-buffers",
        help="write a StableHLO function's schedule and buffers as a "
             "memory-space-assignment instance (JSON)")
    p.add_argument("file", help="StableHLO module text (generic or pretty), or - for stdin")
    p.add_argument("--device", default="h200", choices=DEVICES,
                   help="device preset (default h200)")
    p.add_argument("--capacity", default="50%",
                   help="fast-memory capacity: bytes, a size (2GiB) or a percentage of "
                        "the function's peak (default 50%%)")
    p.add_argument("--mode", default="offload", choices=MODES,
                   help="offload (device vs host) or placement (scratchpad vs HBM)")
    p.add_argument("--function", default=None, help="function to export (default main)")
    p.add_argument("--program", default=None,
                   help="program name recorded in the instance (default: the file name)")
    p.add_argument("-o", "--output", default=None, help="instance file (default stdout)")
    p.set_defaults(func=cmd_export_buffers)
