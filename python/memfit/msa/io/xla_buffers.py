"""What XLA really allocates for a jitted function: its buffer assignment.

Used to check memfit-export-buffers against XLA (docs/msa-export.md). The
compile dumps XLA's ``*buffer-assignment.txt`` through per-compile debug
options (``compiler_options={"xla_dump_to": ...}``), so the process-wide
``XLA_FLAGS`` need not change; set
``XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=`` before importing jax so
that XLA:CPU counts its dot scratch (DESIGN.md).

Counted as XLA's buffers: every value of a parameter, output or temp
allocation that is a real array, i.e. not a tuple (pointer table), not a
while/conditional phi (an alias of the loop's buffer), and not a constant or
a thread-local scalar of a reducer. The peak is XLA's own total:
argument + output + temp bytes of ``memory_analysis()``.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

_ALLOC = re.compile(r"^allocation (\d+): size (\d+)(.*)$")
_VALUE = re.compile(r"^\s*value: <(\d+) (\S+)(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\): (.*)$")


def parse_buffer_assignment(text: str) -> list[dict]:
    """Allocations of a ``*buffer-assignment.txt`` dump, each with its values."""
    allocs: list[dict] = []
    for line in text.splitlines():
        m = _ALLOC.match(line)
        if m:
            rest = m.group(3)
            kind = ("parameter" if ", parameter " in rest else
                    "constant" if "constant" in rest else
                    "thread-local" if "thread-local" in rest else
                    "output" if "output shape" in rest else "temp")
            allocs.append({"id": int(m.group(1)), "size": int(m.group(2)),
                           "kind": kind, "live_out": "maybe-live-out" in rest, "values": []})
            continue
        if line.startswith("Total bytes") or line.startswith("Used values"):
            break
        m = _VALUE.match(line)
        if m and allocs:
            allocs[-1]["values"].append({
                "id": int(m.group(1)), "name": m.group(2), "phi": "(phi)" in line,
                "size": int(m.group(3)), "offset": int(m.group(4)),
                "shape": m.group(5).strip()})
    return allocs


def _compile_uncached(lowered, options: dict):
    """``lowered.compile(options)`` past jax's persistent cache: its key leaves
    the dump options out, so a hit would load an executable and XLA would write
    no dump. jax decides once per process whether that cache is used; the
    resets make it decide again, under the user's own settings afterwards."""
    from jax._src import compilation_cache
    from jax._src import config as jax_config
    compilation_cache.reset_cache()
    try:
        with jax_config.enable_compilation_cache(False):
            return lowered.compile(compiler_options=options)
    finally:
        compilation_cache.reset_cache()


def xla_buffer_stats(fun, *args, min_bytes: int = 0, text: str | None = None,
                     **jit_kwargs) -> dict[str, Any]:
    """XLA:CPU's buffers for ``jax.jit(fun)(*args)`` (or for the module
    ``text`` compiled in its place, e.g. memfit's split of it): counts and
    bytes of argument, output and temp values, and XLA's peak (argument +
    output + temp allocation bytes). Values under ``min_bytes`` are left out
    of the counts."""
    import jax
    lowered = jax.jit(fun, **jit_kwargs).lower(*args)
    if text is not None:
        from ... import _jax_handover as handover
        lowered = handover.replace_module(lowered, text)
    with tempfile.TemporaryDirectory(prefix="memfit-xla-dump-") as d:
        compiled = _compile_uncached(lowered, {"xla_dump_to": d,
                                               "xla_dump_hlo_as_text": True})
        dumps = sorted(Path(d).glob("*buffer-assignment.txt"),
                       key=lambda p: p.stat().st_mtime)
        if not dumps:
            raise RuntimeError("XLA wrote no buffer-assignment dump")
        allocs = parse_buffer_assignment(dumps[-1].read_text())
    mem = compiled.memory_analysis()
    out: dict[str, Any] = {"arguments": 0, "argument_bytes": 0, "outputs": 0,
                           "output_bytes": 0, "temps": 0, "temp_bytes": 0}
    for a in allocs:
        if a["kind"] in ("constant", "thread-local"):
            continue
        for v in a["values"]:
            if v["phi"] or v["shape"].startswith("(") or v["size"] < max(min_bytes, 1):
                continue
            kind = ("argument" if a["kind"] == "parameter" else
                    "output" if a["kind"] == "output" or a["live_out"] else "temp")
            out[kind + "s"] += 1
            out[kind + "_bytes"] += v["size"]
    out["buffers"] = out["arguments"] + out["outputs"] + out["temps"]
    out["values"] = out["buffers"]
    out["total_bytes"] = out["argument_bytes"] + out["output_bytes"] + out["temp_bytes"]
    out["value_bytes"] = out["total_bytes"]
    out["peak"] = (mem.argument_size_in_bytes + mem.output_size_in_bytes
                   + mem.temp_size_in_bytes)
    out["temp_allocation"] = mem.temp_size_in_bytes
    return out
