"""Memory that XLA:CPU's runtime allocates outside its memory analysis.

``memory_analysis()`` counts XLA's buffers (arguments, outputs,
temporaries). A dot that XLA:CPU runs as a library call (a ``dot``
instruction outside any fusion: a DotThunk, which calls Eigen's tensor
contraction on its thread pool) allocates more: Eigen's parallel contraction
packs its operands into blocks it mallocs per call, and the DotThunk starts
the matmul of every batch element at once. Measured on attention's gradient
split by query chunks (8 heads, the keys' gradient ``dS^T q_chunk``, whose
left operand is contracted on its major dimension, so ynn does not take it):
sixteen packing buffers of 1.06x one head's operands were alive together,
two dots x eight heads, 151 MiB next to XLA's 236 MiB of temporaries
(``bench/bench_race.py --rows attention_fwdbwd``), and the process grew past
the memory limit that XLA's count met.

``dot_scratch_bytes(hlo_text)`` bounds that scratch from the compiled HLO of
the program as it runs (ynn fusions on, as the user compiles it): for every
dot that is not inside a fusion, both operands' bytes (Eigen packs at most
its operands per k-slice, and a k-slice is the whole contraction when it is
short, as in a chunked loop), summed over the dots of one computation (the
thunk executor runs independent dots at the same time), the largest such sum
over computations (a loop body runs one iteration at a time).
"""
from __future__ import annotations

import re

_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s4": 1, "u4": 1, "s16": 2, "u16": 2, "f16": 2,
          "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8,
          "c64": 8, "c128": 16}

# "ENTRY %main.1 (p: f32[2]) -> f32[2] {" / "%body.2 (...) -> (...) {"
_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
# "  %name = f32[8,64]{1,0} opcode(...)..." (ROOT optional)
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\S+?)\s+([\w\-]+)\((.*)$")
_ARRAY = re.compile(r"^([a-z]\w*)\[([0-9,]*)\]")


def _array_bytes(shape: str) -> int:
    """Bytes of an array shape ``f32[8,136,64]{2,1,0}``; 0 for a tuple or
    token (never an operand of a dot)."""
    m = _ARRAY.match(shape)
    if not m or m.group(1) not in _BYTES:
        return 0
    n = 1
    for d in filter(None, m.group(2).split(",")):
        n *= int(d)
    return n * _BYTES[m.group(1)]


def _operands(args: str) -> list[str]:
    """The operand names of ``dot(%a, %b), ...`` (also ``dot(f32[..] %a, ...)``)."""
    depth, end = 0, len(args)
    for i, ch in enumerate(args):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                end = i
                break
            depth -= 1
    return re.findall(r"%([\w.\-]+)", args[:end])


def _computations(hlo_text: str):
    """{computation: [(name, shape, opcode, rest of the line)]}."""
    comps: dict[str, list[tuple[str, str, str, str]]] = {}
    current = None
    for line in hlo_text.splitlines():
        head = _COMPUTATION.match(line)
        if head and "=" not in line.split("(")[0]:
            current = comps.setdefault(head.group(1), [])
            continue
        if line.strip() == "}":
            current = None
            continue
        m = _INSTR.match(line) if current is not None else None
        if m:
            current.append(m.groups())
    return comps


def dot_scratch_bytes(hlo_text: str) -> int:
    """Upper bound of the bytes XLA:CPU's library dots allocate while the
    program runs, outside ``memory_analysis()`` (see the module doc)."""
    comps = _computations(hlo_text)
    fused = set()
    for instrs in comps.values():
        for _, _, opcode, rest in instrs:
            if opcode == "fusion":
                fused.update(re.findall(r"calls=%?([\w.\-]+)", rest))
    best = 0
    for name, instrs in comps.items():
        if name in fused:
            continue  # a dot inside a fusion is emitted code or ynn's, not a library call
        shapes = {n: s for n, s, _, _ in instrs}
        total = 0
        for _, _, opcode, rest in instrs:
            if opcode == "dot":
                total += sum(_array_bytes(shapes.get(o, "")) for o in _operands(rest))
        best = max(best, total)
    return best
