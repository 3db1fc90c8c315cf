"""The memory-space-assignment solution format (version 1).

One format for every solver (heuristic, exact, baselines, the game), the
validator and the emitter::

    {"version": 1, "mode": "offload" | "placement", "method": "heuristic",
     "buffers": [{"id": int,
                  "space": "fast" | "slow",   # where the producer writes it
                  "offset": int | null,       # placement only (score-only)
                  "prefetches": [{"use": op, "start": op}],   # score-only
                  "evict_after": op | null}],
     "notes": "..."}

Meaning (docs/msa.md has the full cost model):

* ``space == "fast"``: resident in fast memory from ``start`` through
  ``evict_after`` (or through ``end`` when ``evict_after`` is null). With
  ``evict_after = e`` the buffer is copied to slow memory when op ``e`` ends and
  its fast memory is free from op ``e + 1``.
* ``space == "slow"``: written to slow memory; ``evict_after`` must be null.
* each prefetch ``{"use": u, "start": s}`` copies the buffer from slow to fast
  memory, issued when op ``s`` starts, needed when op ``u`` starts
  (``s < u``, ``u`` one of the buffer's uses). The copy is resident from ``s``
  through the last use before the next prefetch's use (or through ``end``).
  Uses ``u`` ... are served from fast memory; uses outside home and windows
  read slow memory directly.
* in placement mode every fast residency (home and prefetch windows) sits at
  ``offset``.

What XLA honours (offload mode, through ``annotate_device_placement``): the
per-buffer decision to keep on device (``space == "fast"``, no eviction) or
offload after ``evict_after`` and bring back before the first prefetched use.
XLA schedules the copies and picks offsets itself: ``offset`` and the
prefetch ``start`` ops are score-only, as is everything in placement mode.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .instance import VERSION, InstanceError, MODES

SPACES = ("fast", "slow")

NOTES = {
    "offload": ("offload mode: XLA honours 'space' and 'evict_after' (keep on device, or "
                "move to pinned host after evict_after and back to device before the "
                "prefetched uses); prefetch 'start' ops and offsets are score-only "
                "(XLA schedules copies and picks offsets itself)."),
    "placement": ("placement mode: offsets and prefetch windows are score-only; they are "
                  "checked by memfit's validator and scored by its cost model, "
                  "not emitted to XLA."),
}


@dataclass
class Prefetch:
    use: int
    start: int


@dataclass
class BufferAssignment:
    id: int
    space: str = "slow"
    offset: int | None = None
    prefetches: list[Prefetch] = field(default_factory=list)
    evict_after: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "space": self.space, "offset": self.offset,
                "prefetches": [{"use": p.use, "start": p.start} for p in self.prefetches],
                "evict_after": self.evict_after}


@dataclass
class Solution:
    mode: str
    method: str
    buffers: list[BufferAssignment]
    notes: str = ""
    version: int = VERSION

    @classmethod
    def all_slow(cls, inst, method: str = "slow") -> "Solution":
        return cls(inst.mode, method, [BufferAssignment(b.id) for b in inst.buffers],
                   NOTES[inst.mode])

    def by_id(self) -> dict[int, BufferAssignment]:
        return {a.id: a for a in self.buffers}

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "mode": self.mode, "method": self.method,
                "buffers": [a.to_dict() for a in self.buffers],
                "notes": self.notes or NOTES.get(self.mode, "")}

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.dumps())

    @classmethod
    def from_dict(cls, d: Any) -> "Solution":
        def fail(where, msg):
            raise InstanceError(f"{where}: {msg}")
        if not isinstance(d, dict):
            fail("solution", "expected a JSON object")
        for k in ("version", "mode", "method", "buffers"):
            if k not in d:
                fail("solution", f"missing field '{k}'")
        if d["version"] != VERSION:
            fail("solution.version", f"expected {VERSION}, got {d['version']!r}")
        if d["mode"] not in MODES:
            fail("solution.mode", f"expected one of {MODES}, got {d['mode']!r}")
        if not isinstance(d["buffers"], list):
            fail("solution.buffers", "expected a list")
        out = []
        for i, b in enumerate(d["buffers"]):
            w = f"solution.buffers[{i}]"
            if not isinstance(b, dict):
                fail(w, "expected an object")
            if not isinstance(b.get("id"), int) or isinstance(b.get("id"), bool):
                fail(w + ".id", f"expected int, got {b.get('id')!r}")
            sp = b.get("space", "slow")
            if sp not in SPACES:
                fail(w + ".space", f"expected one of {SPACES}, got {sp!r}")
            off = b.get("offset")
            if off is not None and (not isinstance(off, int) or isinstance(off, bool)):
                fail(w + ".offset", f"expected int or null, got {off!r}")
            ev = b.get("evict_after")
            if ev is not None and (not isinstance(ev, int) or isinstance(ev, bool)):
                fail(w + ".evict_after", f"expected int or null, got {ev!r}")
            pfs = []
            for j, p in enumerate(b.get("prefetches") or []):
                if not (isinstance(p, dict) and isinstance(p.get("use"), int)
                        and isinstance(p.get("start"), int)):
                    fail(f"{w}.prefetches[{j}]", f"expected {{'use': int, 'start': int}}, got {p!r}")
                pfs.append(Prefetch(p["use"], p["start"]))
            out.append(BufferAssignment(b["id"], sp, off, pfs, ev))
        return cls(d["mode"], str(d["method"]), out, str(d.get("notes", "")), d["version"])

    @classmethod
    def loads(cls, text: str) -> "Solution":
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as e:
            raise InstanceError(f"solution is not JSON: {e}") from None

    @classmethod
    def load(cls, path: str | Path) -> "Solution":
        try:
            return cls.loads(Path(path).read_text())
        except OSError as e:
            raise InstanceError(f"cannot read {path}: {e.strerror}") from None
