"""The memory-space-assignment instance format (version 1).

An *instance* is one scheduled program seen as buffers over time: the ops in
schedule order, the buffers they read and write, the device's memories and
the capacity of fast memory. It is written by the C++ pass
``memfit-export-buffers`` (or by :mod:`memfit.msa.io.synthetic` for tests) and
read by every solver, the validator, the game and the plots.

JSON layout (all sizes in bytes, bandwidths in bytes/s, compute in FLOP/s)::

    {"version": 1,
     "program": "knn.mlir",          # where it came from (free text)
     "function": "main",             # the function that was scheduled
     "mode": "offload" | "placement",
     "device": {"name": "h200" | "tpu-like" | "cpu",
                "fast_capacity": int,      # bytes of fast memory on the device
                "fast_bandwidth": float,   # B/s, ops reading/writing fast memory
                "slow_bandwidth": float,   # B/s, ops reading/writing slow memory directly
                "copy_bandwidth": float,   # B/s per direction, async copies fast<->slow
                "flops": float,            # FLOP/s
                "copy_overlaps_compute": bool},
     "capacity": int,                # bytes of fast memory this instance may use
     "ops": [{"id": int,             # == position in the schedule (0, 1, 2, ...)
              "name": str, "location": str,
              "flops": float,        # per execution
              "weight": float,       # executions (trip count of a split loop; 1 otherwise)
              "operands": [int],     # buffer ids read
              "results": [int]}],    # buffer ids written
     "buffers": [{"id": int,         # == position in the list (0, 1, 2, ...)
                  "name": str,
                  "size": int,
                  "start": int,      # producer op; 0 for arguments
                  "end": int,        # last op that uses it (inclusive; == start if unused)
                  "uses": [int],     # ops that read it, ascending, no repeats
                  "kind": "argument" | "output" | "temp"}]}

Consistency rules that :func:`validate_instance` checks (and the exporter must
keep): op ids and buffer ids are 0..n-1 in list order; every buffer except an
argument is a result of some op, and ``start`` is the first op that writes
it; an argument has ``start == 0``; a buffer may be written again by later
ops (an in-place update, e.g. a loop's carried value; arguments included);
``uses`` are exactly the ops that list the buffer as an operand, ascending;
``end == max(uses + [start])``; no op reads a buffer before it is produced
(``uses`` > ``start`` for non-arguments). A write at an op is an access at
that op (it costs ``size / bandwidth`` like a read); residency is only
accounted over ``[start, end]``, so an in-place write after the last read is
costed but does not hold fast memory. Unknown extra fields (e.g. an op's
``bytes``) are ignored.

Time model (the one the validator, the game and the exact solver share)::

    time(op) = weight * max(flops / device.flops,
                            sum over the op's operands and results b of
                                size(b) / bandwidth(space of b at op))

See ``docs/msa.md`` for the whole cost model (copies, stalls).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...errors import MemfitError

VERSION = 1
MODES = ("offload", "placement")
DEVICE_NAMES = ("h200", "tpu-like", "cpu")
KINDS = ("argument", "output", "temp")


class InstanceError(MemfitError):
    """An instance (or solution) file does not follow the schema."""


@dataclass(frozen=True)
class Device:
    name: str
    fast_capacity: int
    fast_bandwidth: float
    slow_bandwidth: float
    copy_bandwidth: float
    flops: float
    copy_overlaps_compute: bool = True


# Round numbers for the devices memfit talks about. The exporter may write its
# own; these are what the synthetic generators and the CLI default to.
DEVICE_PRESETS: dict[str, Device] = {
    # Offload on a GPU: fast = HBM3e (141 GB), slow = pinned host memory over
    # PCIe 5 / C2C. Ops can read host memory directly but slowly.
    "h200": Device("h200", fast_capacity=141 * 10**9, fast_bandwidth=4.8e12,
                   slow_bandwidth=5.0e10, copy_bandwidth=5.0e10, flops=9.89e14,
                   copy_overlaps_compute=True),
    # Placement on a scratchpad machine: fast = on-chip scratchpad,
    # slow = HBM.
    "tpu-like": Device("tpu-like", fast_capacity=128 * 2**20, fast_bandwidth=1.6e13,
                       slow_bandwidth=1.2e12, copy_bandwidth=6.0e11, flops=2.75e14,
                       copy_overlaps_compute=True),
    # A CPU: fast = last-level cache, slow = DRAM. Copies are done by the cores.
    "cpu": Device("cpu", fast_capacity=32 * 2**20, fast_bandwidth=4.0e11,
                  slow_bandwidth=5.0e10, copy_bandwidth=2.5e10, flops=1.0e12,
                  copy_overlaps_compute=False),
}


@dataclass
class Op:
    id: int
    name: str
    flops: float
    operands: list[int]
    results: list[int]
    weight: float = 1.0
    location: str = ""


@dataclass
class Buffer:
    id: int
    name: str
    size: int
    start: int
    end: int
    uses: list[int]
    kind: str = "temp"


@dataclass
class Instance:
    program: str
    function: str
    mode: str
    device: Device
    capacity: int
    ops: list[Op]
    buffers: list[Buffer]
    version: int = VERSION

    # -- derived -----------------------------------------------------------
    @property
    def num_ops(self) -> int:
        return len(self.ops)

    @property
    def num_buffers(self) -> int:
        return len(self.buffers)

    def accesses(self, op: int) -> list[int]:
        """Buffers the op touches (operands then results, no repeats).

        Cached on first use: do not edit ``ops`` after calling it."""
        cache = self.__dict__.get("_accesses")
        if cache is None or len(cache) != len(self.ops):
            cache = [list(dict.fromkeys(list(o.operands) + list(o.results))) for o in self.ops]
            self.__dict__["_accesses"] = cache
        return cache[op]

    def access_ops(self, b: int) -> list[int]:
        """Ops that read or write buffer b, ascending."""
        cache = self.__dict__.get("_access_ops")
        if cache is None or len(cache) != len(self.buffers):
            cache = [[] for _ in self.buffers]
            for t in range(len(self.ops)):
                for x in self.accesses(t):
                    cache[x].append(t)
            self.__dict__["_access_ops"] = cache
        return cache[b]

    def available_from(self, b: int) -> int:
        """First op at whose start buffer ``b``'s data exists (for a copy)."""
        buf = self.buffers[b]
        return 0 if buf.kind == "argument" else buf.start + 1

    # -- I/O ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "program": self.program,
            "function": self.function,
            "mode": self.mode,
            "device": asdict(self.device),
            "capacity": self.capacity,
            "ops": [asdict(o) for o in self.ops],
            "buffers": [asdict(b) for b in self.buffers],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.dumps())

    @classmethod
    def from_dict(cls, d: Any, *, check: bool = True) -> "Instance":
        _check_schema(d)
        dev = d["device"]
        inst = cls(
            program=d["program"], function=d["function"], mode=d["mode"],
            device=Device(name=dev["name"], fast_capacity=int(dev["fast_capacity"]),
                          fast_bandwidth=float(dev["fast_bandwidth"]),
                          slow_bandwidth=float(dev["slow_bandwidth"]),
                          copy_bandwidth=float(dev["copy_bandwidth"]),
                          flops=float(dev["flops"]),
                          copy_overlaps_compute=bool(dev["copy_overlaps_compute"])),
            capacity=int(d["capacity"]),
            ops=[Op(id=o["id"], name=o["name"], flops=float(o["flops"]),
                    operands=list(o["operands"]), results=list(o["results"]),
                    weight=float(o.get("weight", 1.0)), location=o.get("location", ""))
                 for o in d["ops"]],
            buffers=[Buffer(id=b["id"], name=b["name"], size=int(b["size"]),
                            start=b["start"], end=b["end"], uses=list(b["uses"]),
                            kind=b["kind"]) for b in d["buffers"]],
            version=d["version"])
        if check:
            validate_instance(inst)
        return inst

    @classmethod
    def loads(cls, text: str) -> "Instance":
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise InstanceError(f"instance is not JSON: {e}") from None
        return cls.from_dict(d)

    @classmethod
    def load(cls, path: str | Path) -> "Instance":
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise InstanceError(f"cannot read {path}: {e.strerror}") from None
        try:
            return cls.loads(text)
        except InstanceError as e:
            raise InstanceError(f"{path}: {e}") from None


# -- schema -----------------------------------------------------------------

def _fail(where: str, msg: str) -> None:
    raise InstanceError(f"{where}: {msg}")


def _want(d: Any, key: str, types: tuple, where: str) -> Any:
    if not isinstance(d, dict):
        _fail(where, f"expected an object, got {type(d).__name__}")
    if key not in d:
        _fail(where, f"missing field '{key}'")
    v = d[key]
    # bool is an int in Python; never accept it where a number is wanted.
    if isinstance(v, bool) and bool not in types:
        _fail(f"{where}.{key}", f"expected {'/'.join(t.__name__ for t in types)}, got bool")
    if not isinstance(v, types):
        _fail(f"{where}.{key}",
              f"expected {'/'.join(t.__name__ for t in types)}, got {type(v).__name__} ({v!r})")
    return v


def _int_list(d: dict, key: str, where: str) -> list:
    v = _want(d, key, (list,), where)
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, int):
            _fail(f"{where}.{key}[{i}]", f"expected int, got {x!r}")
    return v


def _check_schema(d: Any) -> None:
    """Field presence and types; consistency is checked by validate_instance."""
    w = "instance"
    if not isinstance(d, dict):
        _fail(w, f"expected a JSON object, got {type(d).__name__}")
    ver = _want(d, "version", (int,), w)
    if ver != VERSION:
        _fail(f"{w}.version", f"this memfit reads version {VERSION}, the file is version {ver}")
    _want(d, "program", (str,), w)
    _want(d, "function", (str,), w)
    mode = _want(d, "mode", (str,), w)
    if mode not in MODES:
        _fail(f"{w}.mode", f"expected one of {MODES}, got {mode!r}")
    dev = _want(d, "device", (dict,), w)
    name = _want(dev, "name", (str,), "device")
    if name not in DEVICE_NAMES:
        _fail("device.name", f"expected one of {DEVICE_NAMES}, got {name!r}")
    _want(dev, "fast_capacity", (int,), "device")
    for k in ("fast_bandwidth", "slow_bandwidth", "copy_bandwidth", "flops"):
        v = _want(dev, k, (int, float), "device")
        if not v > 0:
            _fail(f"device.{k}", f"must be > 0, got {v}")
    _want(dev, "copy_overlaps_compute", (bool,), "device")
    cap = _want(d, "capacity", (int,), w)
    if cap < 0:
        _fail(f"{w}.capacity", f"must be >= 0, got {cap}")
    ops = _want(d, "ops", (list,), w)
    for i, o in enumerate(ops):
        ow = f"ops[{i}]"
        _want(o, "id", (int,), ow)
        _want(o, "name", (str,), ow)
        fl = _want(o, "flops", (int, float), ow)
        if fl < 0:
            _fail(f"{ow}.flops", f"must be >= 0, got {fl}")
        if "weight" in o:
            wt = _want(o, "weight", (int, float), ow)
            if not wt > 0:
                _fail(f"{ow}.weight", f"must be > 0, got {wt}")
        if "location" in o:
            _want(o, "location", (str,), ow)
        _int_list(o, "operands", ow)
        _int_list(o, "results", ow)
    bufs = _want(d, "buffers", (list,), w)
    for i, b in enumerate(bufs):
        bw = f"buffers[{i}]"
        _want(b, "id", (int,), bw)
        _want(b, "name", (str,), bw)
        sz = _want(b, "size", (int,), bw)
        if sz < 0:
            _fail(f"{bw}.size", f"must be >= 0, got {sz}")
        _want(b, "start", (int,), bw)
        _want(b, "end", (int,), bw)
        _int_list(b, "uses", bw)
        kind = _want(b, "kind", (str,), bw)
        if kind not in KINDS:
            _fail(f"{bw}.kind", f"expected one of {KINDS}, got {kind!r}")


def validate_instance(inst: Instance) -> None:
    """Raise InstanceError naming the first inconsistency, if any."""
    n_ops, n_bufs = len(inst.ops), len(inst.buffers)
    if inst.mode not in MODES:
        _fail("instance.mode", f"expected one of {MODES}, got {inst.mode!r}")
    producer: dict[int, int] = {}
    readers: dict[int, list[int]] = {b: [] for b in range(n_bufs)}
    for i, o in enumerate(inst.ops):
        if o.id != i:
            _fail(f"ops[{i}].id", f"is {o.id}; op ids must equal their schedule position {i}")
        for k, lst in (("operands", o.operands), ("results", o.results)):
            for j, b in enumerate(lst):
                if not 0 <= b < n_bufs:
                    _fail(f"ops[{i}].{k}[{j}]", f"buffer {b} does not exist ({n_bufs} buffers)")
        for b in o.results:
            # a buffer written again later is an in-place update (a loop's
            # carried value); its producer is the first writer
            producer.setdefault(b, i)
        for b in dict.fromkeys(o.operands):
            readers[b].append(i)
    for i, b in enumerate(inst.buffers):
        bw = f"buffers[{i}] ({b.name!r})"
        if b.id != i:
            _fail(bw + ".id", f"is {b.id}; buffer ids must equal their list position {i}")
        if b.kind == "argument":
            if b.start != 0:
                _fail(bw + ".start", f"is {b.start}; arguments start at 0")
        else:
            if i not in producer:
                _fail(bw, f"kind {b.kind!r} but no op lists it as a result "
                          "(use kind 'argument' for inputs)")
            if b.start != producer[i]:
                _fail(bw + ".start", f"is {b.start} but op {producer[i]} produces it")
        if list(b.uses) != readers[i]:
            _fail(bw + ".uses", f"is {b.uses} but the ops reading it are {readers[i]}")
        if b.kind != "argument" and any(u <= b.start for u in b.uses):
            _fail(bw + ".uses", f"op {min(b.uses)} reads it before/at its producer {b.start}")
        want_end = max(list(b.uses) + [b.start])
        if b.end != want_end:
            _fail(bw + ".end", f"is {b.end}; expected {want_end} (last use, or start if unused)")
        if not 0 <= b.start < max(n_ops, 1):
            _fail(bw + ".start", f"op {b.start} does not exist ({n_ops} ops)")


def load_instance(path: str | Path) -> Instance:
    return Instance.load(path)
