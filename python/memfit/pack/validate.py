"""An independent check of a packing, in plain Python.

It shares no code with the C++ packer: tests and benchmarks use it to confirm
that what the packer returns is a packing.
"""
from __future__ import annotations

from typing import Optional, Sequence


def packing_errors(buffers: Sequence, offsets: Sequence[int],
                   capacity: Optional[int] = None, limit: int = 10) -> list[str]:
    """Problems with ``offsets`` for ``buffers`` (objects with id, lower,
    upper, size; lifetimes half-open), at most ``limit`` of them; empty when
    the packing is valid: every offset is a non-negative integer, every
    buffer ends at or below ``capacity`` (when given), and no two buffers
    live at the same time share a byte."""
    errors: list[str] = []
    if len(offsets) != len(buffers):
        return [f"{len(buffers)} buffers but {len(offsets)} offsets"]
    for b, o in zip(buffers, offsets):
        if not isinstance(o, int) or isinstance(o, bool):
            errors.append(f"buffer {b.id!r}: offset {o!r} is not an integer")
        elif o < 0:
            errors.append(f"buffer {b.id!r}: negative offset {o}")
        elif capacity is not None and o + b.size > capacity:
            errors.append(f"buffer {b.id!r}: ends at {o + b.size}, above the capacity {capacity}")
        if len(errors) >= limit:
            return errors
    if errors:
        return errors
    # Sweep over buffers in order of start time; compare each with the
    # buffers started earlier that are still live when it starts.
    order = sorted((i for i, b in enumerate(buffers) if b.size > 0),
                   key=lambda i: buffers[i].lower)
    live: list[int] = []
    for i in order:
        b = buffers[i]
        live = [j for j in live if buffers[j].upper > b.lower]
        lo, hi = offsets[i], offsets[i] + b.size
        for j in live:
            c = buffers[j]
            if offsets[j] < hi and lo < offsets[j] + c.size:
                errors.append(
                    f"buffers {c.id!r} [{c.lower}, {c.upper}) at {offsets[j]}+{c.size} and "
                    f"{b.id!r} [{b.lower}, {b.upper}) at {lo}+{b.size} are live at the same "
                    f"time and overlap")
                if len(errors) >= limit:
                    return errors
        live.append(i)
    return errors


def check_packing(buffers: Sequence, offsets: Sequence[int],
                  capacity: Optional[int] = None) -> None:
    """Raise AssertionError describing the first problems, if any."""
    errors = packing_errors(buffers, offsets, capacity)
    if errors:
        raise AssertionError("invalid packing:\n  " + "\n  ".join(errors))


def peak_of(buffers: Sequence, offsets: Sequence[int]) -> int:
    return max((o + b.size for b, o in zip(buffers, offsets)), default=0)


def max_live(buffers: Sequence) -> int:
    """Most bytes live at one time, by brute force over the start times."""
    best = 0
    for t in sorted({b.lower for b in buffers}):
        best = max(best, sum(b.size for b in buffers if b.lower <= t < b.upper))
    return best
