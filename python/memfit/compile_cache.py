"""memfit.jit's persistent calibration cache.

A calibrated ``memfit.jit`` compiles its split program several times (the
calibration's memory counts, then the executable that runs). The result of
that search depends only on the program, the limit and the software and
machine that compiled it, so it is kept on disk: one entry per key, holding
the kept module text, the margin and XLA's counts measured for it, and the
serialized executable where jax can serialize it. A second process with the
same program and limit reads the entry and compiles nothing (or once, in the
run configuration, when there is no executable in the entry).

The key is a SHA-256 over the program (jax's StableHLO without source
locations, as jax's own cache key leaves them out), the limit and memfit's
options, the shardings, the accounting compile options, ``XLA_FLAGS``, jax's
configuration, the versions of memfit, jax and jaxlib, the backend and its devices, the CPU
(executables are compiled for its instruction set) and the size and
modification time of memfit's own files (so a rebuilt or edited memfit never
reads an older build's entries).

Where: ``$MEMFIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/memfit``, else
``~/.cache/memfit``. ``MEMFIT_CACHE=0`` (or an empty ``MEMFIT_CACHE_DIR``)
turns it off, ``memfit.jit(..., cache=False)`` for one function;
``MEMFIT_CACHE_EXECUTABLES=0`` keeps the records but not the executables.
An entry that cannot be read (truncated, edited, from an incompatible
writer) is ignored with a ``CacheWarning`` and written again; a directory
that cannot be written only warns. Loading an executable runs code from the
cache directory: it must be as trusted as jax's compilation cache.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 1
_OFF = ("0", "off", "false", "no")

#: What the cache did in this process (tests and benches read it):
#: ``hits``, ``misses``, ``errors`` (entries ignored), ``writes``,
#: ``executables`` (hits that loaded a serialized executable).
stats: Counter = Counter()


class CacheWarning(UserWarning):
    """An entry of memfit's calibration cache was ignored or not written."""


def directory() -> Path | None:
    """The cache directory, or None when the cache is off."""
    if os.environ.get("MEMFIT_CACHE", "").strip().lower() in _OFF:
        return None
    chosen = os.environ.get("MEMFIT_CACHE_DIR")
    if chosen is not None:
        return Path(chosen).expanduser() if chosen.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memfit"


def executables_enabled() -> bool:
    return os.environ.get("MEMFIT_CACHE_EXECUTABLES", "").strip().lower() not in _OFF


def _sha256(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@functools.lru_cache(maxsize=1)
def _cpu() -> str:
    """The CPU's model and instruction-set flags (a CPU executable uses them)."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags"))]
        return _sha256("".join(sorted(set(lines))))
    except OSError:
        return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def _memfit_build() -> str:
    """Size and modification time of memfit's Python and native files: an
    edited or rebuilt memfit (same version number) has other keys."""
    from . import _core
    roots = {Path(__file__).parent, Path(_core.__file__).parent}
    stamps = []
    for root in sorted(roots):
        for p in sorted(root.rglob("*")):
            if p.suffix in (".py", ".so") or ".so." in p.name:
                try:
                    st = p.stat()
                except OSError:
                    continue
                stamps.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
    return _sha256("\n".join(stamps))


def _environment() -> dict:
    import jax
    import jaxlib

    from . import _core
    backend = jax.devices()[0].client  # not jax.extend: importing it takes 0.1 s
    return {
        "format": FORMAT,
        "memfit": _core.__version__, "memfit_build": _memfit_build(),
        "jax": jax.__version__, "jaxlib": jaxlib.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "jax_config": dict(jax.config.values),
        "backend": [backend.platform, backend.platform_version],
        "devices": [d.device_kind for d in jax.devices()],
        "cpu": _cpu(),
    }


def key(parts: dict) -> str:
    """The entry's name: parts (program, limit, options...) and the environment."""
    return _sha256(json.dumps({"parts": parts, "env": _environment()}, sort_keys=True,
                              default=str))


@dataclass
class Entry:
    """A cache entry as read: the record (JSON), the kept module text and
    the serialized executable (None when the entry has none)."""
    record: dict
    text: str
    executable: bytes | None


_NEEDED = {"margin": float, "text_sha256": str, "xla_bytes": int, "fixed_bytes": int,
           "memory": dict}


class Slot:
    """One key in one cache directory."""

    def __init__(self, root: Path, name: str):
        self.root, self.name = root, name
        self.path = root / name[:2] / f"{name}.json"
        self.exe_path = self.path.with_suffix(".exe")

    def load(self) -> Entry | None:
        """The entry, or None (missing: a miss; unreadable: a warning too).
        A hit counts once the entry is used (``used``)."""
        if not self.path.exists():
            stats["misses"] += 1
            return None
        try:
            record = json.loads(self.path.read_text())
            for field, kind in _NEEDED.items():
                if not isinstance(record.get(field), kind):
                    raise ValueError(f"field {field!r} missing or not {kind.__name__}")
            if record.get("format") != FORMAT:
                raise ValueError(f"format {record.get('format')!r}, not {FORMAT}")
            text = self.path.with_suffix(".mlir").read_text()
            if _sha256(text) != record["text_sha256"]:
                raise ValueError("the module text does not match its checksum")
            exe = None
            if record.get("executable_sha256") and executables_enabled():
                exe = self.exe_path.read_bytes()
                if _sha256(exe) != record["executable_sha256"]:
                    raise ValueError("the executable does not match its checksum")
        except (OSError, ValueError, TypeError, UnicodeDecodeError) as e:
            self.ignore(e)
            return None
        return Entry(record, text, exe)

    def used(self, entry: Entry) -> None:
        """Counts a hit: ``entry`` gave the executable that runs."""
        stats["hits"] += 1
        if entry.executable is not None:
            stats["executables"] += 1

    def ignore(self, why: BaseException) -> None:
        """An entry that cannot be used: warn, count, and calibrate afresh."""
        stats["errors"] += 1
        warnings.warn(f"memfit: ignoring the calibration cache entry {self.path}: "
                      f"{type(why).__name__}: {why}", CacheWarning, stacklevel=4)

    def save(self, record: dict, text: str, executable: bytes | None) -> None:
        """Writes the entry (each file atomically; the record last, so a
        reader never sees a record whose files are not complete)."""
        record = dict(record, format=FORMAT, text_sha256=_sha256(text),
                      executable_sha256=_sha256(executable) if executable else None)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _write(self.path.with_suffix(".mlir"), text.encode())
            if executable:
                _write(self.exe_path, executable)
            _write(self.path, json.dumps(record, indent=1, default=str).encode())
        except OSError as e:
            warnings.warn(f"memfit: could not write the calibration cache entry {self.path}: "
                          f"{e}", CacheWarning, stacklevel=4)
            return
        stats["writes"] += 1


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def slot(parts: dict) -> Slot | None:
    """The slot for these parts in the cache directory, or None when off."""
    root = directory()
    return None if root is None else Slot(root, key(parts))


def serialize(compiled) -> tuple[bytes | None, list[int] | None]:
    """(payload, device ids) of a jax executable, or (None, None) when jax
    cannot serialize it (constant arguments, host callbacks, a backend
    without serialization)."""
    if not executables_enabled():
        return None, None
    from jax.experimental import serialize_executable
    try:
        payload, _, _ = serialize_executable.serialize(compiled)
        devices = [d.id for d in compiled.runtime_executable().local_devices()]
    except Exception:  # noqa: BLE001 - any refusal means: no executable in the entry
        return None, None
    return payload, devices


def deserialize(payload: bytes, devices: list[int], lowered) -> Any:
    """The executable of ``payload`` for the calling convention of
    ``lowered`` (its argument and result trees), on the devices it was
    compiled for."""
    import jax
    from jax.experimental import serialize_executable
    by_id = {d.id: d for d in jax.devices()}
    return serialize_executable.deserialize_and_load(
        payload, lowered.in_tree, lowered.out_tree,
        execution_devices=[by_id[i] for i in devices])
