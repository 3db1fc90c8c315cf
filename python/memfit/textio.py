"""Reading and writing the text files memfit's commands take and give: one
place for both, so that command modules import it rather than each other."""
from __future__ import annotations

import sys
from pathlib import Path

from .errors import MemfitError


def read_text(path: str) -> str:
    """The file's text; ``-`` reads stdin. A file that cannot be read is a
    MemfitError that names it."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text()
    except OSError as e:
        raise MemfitError(f"cannot read {path}: {e.strerror}") from None


def write_text(path: str | None, text: str) -> None:
    """Writes ``text`` to ``path``; None or ``-`` writes stdout."""
    if path in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(path).write_text(text)
