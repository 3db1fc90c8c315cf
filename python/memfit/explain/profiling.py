"""memfit-profile's report: the fusion-aware memory profile of a module.

Its own module so that memfit.api (which profiles what memfit.jit compiles)
and memfit.explain.split (which reports a split) both read it without importing
each other.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .. import _core
from ..errors import MemfitError


@dataclass
class ProfileReport:
    """memfit-profile's result for one function."""
    name: str
    argument_bytes: int
    output_bytes: int
    peak_bytes: int
    peak_op: str
    peak_location: str
    largest_at_peak: list[dict] = field(default_factory=list)
    timeline: list[dict] = field(default_factory=list)
    #: sharded over a mesh (sdy): every byte count is one device's
    per_device: bool = False

    def table(self) -> str:
        from .report import format_profile_table
        return format_profile_table(self)

    def __str__(self) -> str:
        return self.table()


def profile_text(text: str, *, top: int = 5) -> list[ProfileReport]:
    """Profiles every function of a StableHLO module (generic or pretty)."""
    from ..transform import to_generic
    result = _core.profile(to_generic(text), top, True)
    if not result["ok"]:
        raise MemfitError("memfit: profiling failed", result["diagnostics"])
    data = json.loads(result["output"])
    return [ProfileReport(**f) for f in data["functions"]]
