"""memfit's output for compilers other than memfit.jit's own XLA path.

memfit writes ordinary StableHLO, so any StableHLO compiler can take it:

* ``run_xla(text, *args)`` / ``load_xla(text)``: compile module text with
  jax's XLA (the path for StableHLO from another producer, e.g. torch-mlir)
  and run it on jax's first device; ``xla_bytes_of(text)`` is XLA's
  argument + output + temp - alias.
* ``compile_iree(text)`` / ``run_iree(text, *args)`` / ``load_iree(text)``: IREE
  (``iree-base-compiler`` / ``iree-base-runtime``, the ``memfit[iree]``
  extra) on the CPU (llvm-cpu). ``iree_blockers(text)`` lists what IREE
  cannot compile (custom calls, such as jax's LAPACK calls, which only
  jaxlib's XLA implements); ``compile_iree`` refuses such a module with a
  MemfitError that names each call and its location instead of IREE's
  internal error.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ._optional import require
from .errors import MemfitError

@dataclass(frozen=True)
class Blocker:
    """An op IREE cannot compile: what it is and where the user wrote it."""
    op: str
    target: str
    location: str

    def __str__(self) -> str:
        return f"{self.op} @{self.target} at {self.location}"


def _walk(op, func=""):
    """(op, name of its function) for every op under ``op``."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation  # an OpView's .name may be its sym_name
                name = func
                if inner.name == "func.func":
                    name = str(inner.attributes["sym_name"]).strip('"')
                yield inner, name
                yield from _walk(inner, name)


def _parse(text: str):
    """The module in jaxlib's MLIR (StableHLO registered), unverified."""
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir
    from .transform import to_generic
    ctx = jmlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    try:
        with ctx:
            return ctx, ir.Module.parse(to_generic(text))
    except Exception as e:  # jaxlib raises MLIRError with the diagnostics
        raise MemfitError(f"could not parse the StableHLO text: {e}") from None


def _location(loc) -> str:
    """The innermost file:line of an MLIR location, else its text."""
    text = str(loc)
    found = re.findall(r'"([^"]+)":(\d+):(\d+)', text)
    if found:
        path, line, col = found[0]
        return f"{path}:{line}:{col}"
    named = re.findall(r'loc\("([^"]+)"', text)
    return f"'{named[0]}'" if named else text


def iree_blockers(text: str) -> list[Blocker]:
    """The ops of ``text`` that IREE cannot compile: every
    ``stablehlo.custom_call`` (jax writes LAPACK's cholesky, triangular solve
    and eigh as calls into jaxlib, which IREE does not have)."""
    ctx, module = _parse(text)
    out = []
    with ctx:
        for op, func in _walk(module.operation):
            if op.name != "stablehlo.custom_call":
                continue
            target = str(op.attributes["call_target_name"]).strip('"')
            where = _location(op.location)
            if func and ":" not in where:  # jax names LAPACK calls without a line
                where = f"{where} in @{func}"
            out.append(Blocker(op.name, target, where))
    return out


def check_for_iree(text: str) -> None:
    """MemfitError naming every op of ``text`` that IREE cannot compile."""
    blockers = iree_blockers(text)
    if not blockers:
        return
    lapack = any(b.target.startswith("lapack_") for b in blockers)
    lines = "\n".join(f"  {b}" for b in blockers)
    why = ("jax's LAPACK calls (jnp.linalg.cholesky, solve_triangular, eigh) are "
           "implemented inside jaxlib's XLA only" if lapack else
           "custom calls are implemented by the compiler that wrote them")
    raise MemfitError(
        f"IREE cannot compile this module: it has {len(blockers)} custom call(s) that "
        f"IREE does not implement ({why}):\n{lines}\n"
        "Run it with XLA (memfit.jit, or memfit.consumers.run_xla), or write those "
        "parts without the custom calls (e.g. a Cholesky solve written with lax ops).")


def compile_iree(text: str, *, cpu: str = "host") -> bytes:
    """IREE's VM flatbuffer for module text (llvm-cpu backend); first checks
    that IREE can compile every op (check_for_iree)."""
    compiler = require("iree.compiler", "compiling memfit's output with IREE")
    check_for_iree(text)
    try:
        return compiler.compile_str(
            text, target_backends=["llvm-cpu"], input_type="stablehlo",
            extra_args=[f"--iree-llvmcpu-target-cpu={cpu}"])
    except compiler.CompilerToolError as e:
        raise MemfitError(f"IREE could not compile the module: {e}") from None


def _module_name(text: str) -> str:
    """The runtime module's name: the MLIR module's sym_name (jax writes
    jit_<function>), else IREE's default."""
    m = re.search(r'"builtin.module"\(\) <\{[^}]*sym_name = "([^"]+)"', text)
    if not m:
        m = re.search(r'^module @([\w.$]+)', text, re.M)
    return m.group(1) if m else "module"


def load_iree(text: str, *, function: str = "main", vmfb: bytes | None = None):
    """``text`` compiled with IREE (or its ``vmfb``) and loaded on IREE's
    local CPU driver: a function of numpy arrays that returns a list of
    numpy arrays."""
    runtime = require("iree.runtime", "running memfit's output with IREE")
    vmfb = compile_iree(text) if vmfb is None else vmfb
    ctx = runtime.SystemContext(config=runtime.Config("local-task"))
    ctx.add_vm_module(runtime.VmModule.copy_buffer(ctx.instance, vmfb))
    entry = getattr(ctx.modules, _module_name(text))[function]

    def call(*args):
        result = entry(*[np.asarray(a) for a in args])
        if not isinstance(result, (tuple, list)):
            result = (result,)
        return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in result]
    call.context = ctx  # keeps the runtime alive with the function
    return call


def run_iree(text: str, *args, function: str = "main", vmfb: bytes | None = None):
    """Compiles ``text`` with IREE (or takes its ``vmfb``) and calls
    ``function`` with numpy ``args``; returns a list of numpy arrays."""
    return load_iree(text, function=function, vmfb=vmfb)(*args)


def load_xla(text: str):
    """``text`` compiled with jax's XLA for jax's first device (the path for
    StableHLO from torch-mlir and other producers): a function of arrays
    that returns a list of numpy arrays."""
    import jax
    from ._jax_handover import compile_text
    executable = compile_text(text)
    device = jax.devices()[0]

    def call(*args):
        out = executable.execute_sharded([jax.device_put(a, device) for a in args])
        return [np.asarray(r[0]) for r in out.disassemble_into_single_device_arrays()]
    call.executable = executable
    return call


def run_xla(text: str, *args):
    """Compiles module text with jax's XLA and runs it on jax's first device;
    returns a list of numpy arrays."""
    return load_xla(text)(*args)


def xla_bytes_of(text: str) -> int:
    """XLA's argument + output + temp - alias for module text (CPU: honest
    only with ynn fusions off, see memfit.measure)."""
    from ._jax_handover import compile_text
    from .measure import xla_bytes
    return xla_bytes(compile_text(text))
