"""memfit's one exception type: what went wrong, and where."""
from __future__ import annotations


class MemfitError(Exception):
    """A memfit pass or the hand-over to XLA failed.

    ``diagnostics`` holds MLIR's messages as dicts with ``severity``,
    ``message``, ``location`` (MLIR's) and ``source_line`` (the user's
    ``file:line:col`` when jax recorded it).
    """

    def __init__(self, message: str, diagnostics: list[dict] | None = None):
        self.diagnostics = list(diagnostics or [])
        lines = [message]
        for d in self.diagnostics:
            where = d.get("location", "")
            line = f"  {where}: {d.get('severity', 'error')}: {d.get('message', '')}"
            if d.get("source_line"):
                line += f"\n    at {d['source_line']}"
            lines.append(line)
        super().__init__("\n".join(lines))
