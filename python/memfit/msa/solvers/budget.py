"""A wall-clock budget shared by the stages of one solve (``memfit assign
--time-budget``).

One deadline, ``time.perf_counter()`` based like msa.solvers.localsearch's, so
that a method made of stages (a heuristic start, a search, local search after
it) hands what is left to the next stage instead of each stage having a limit
of its own. ``Budget(None)`` never expires.
"""
from __future__ import annotations

import time


class Budget:
    """``seconds`` of wall time from construction (None: unbounded)."""

    def __init__(self, seconds: float | None):
        if seconds is not None and not seconds > 0:
            raise ValueError(f"time budget must be > 0 seconds, got {seconds!r}")
        self.seconds = seconds
        self.start = time.perf_counter()
        self.deadline = None if seconds is None else self.start + seconds

    def left(self) -> float | None:
        """Seconds left (never below 0), or None when unbounded."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.perf_counter())

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


UNBOUNDED = Budget(None)
