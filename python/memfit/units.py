"""Memory sizes as users write them: 268435456, "256MiB", "1.5GB"."""
from __future__ import annotations

from . import _core


def parse_memory_size(value: int | str) -> int:
    """Bytes in ``value``.

    Integers are bytes. Strings take a unit: B, KB/MB/GB/TB (powers of 1000)
    or KiB/MiB/GiB/TiB (powers of 1024). Zero, negative, malformed and
    unknown units raise ValueError saying what is wrong.
    """
    if isinstance(value, bool):
        raise ValueError(f"memory size must be bytes or a string like '256MiB', not {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError(f"memory size {value} must be positive")
        return value
    if isinstance(value, str):
        return _core.parse_memory_size(value)
    raise ValueError(f"memory size must be bytes or a string like '256MiB', not {value!r}")
