"""The one place that hands a module between jax and memfit.

jax 0.12 has no public hook for a custom pass pipeline inside ``jax.jit``.
memfit lowers with ``jax.jit(...).lower`` (which resolves pytrees, static
arguments, shardings and donation), takes the StableHLO out in generic form
with locations, and puts the transformed module back into the same
``Lowered`` object before ``.compile()``: the compiled executable then keeps
jax's calling convention. That last step touches a private attribute
(``Lowered._lowering._hlo``), so the jax version is checked here, at import.
"""
from __future__ import annotations

import copy

import jax

from .errors import MemfitError

SUPPORTED_JAX = ("0.12.",)

if not jax.__version__.startswith(SUPPORTED_JAX):
    raise ImportError(
        f"memfit's jax integration supports jax {', '.join(v + 'x' for v in SUPPORTED_JAX)}; "
        f"this is jax {jax.__version__}. memfit.transform() still works on StableHLO text; "
        "install jax==0.12.* for memfit.jit."
    )

from jax._src.interpreters import mlir as _jmlir  # noqa: E402
from jax._src.lib.mlir import ir as _ir  # noqa: E402


def module_text(lowered, debug_info: bool = True) -> str:
    """The lowered StableHLO in generic form, with jax's source locations
    (``debug_info=False``: without them, the program alone)."""
    module = lowered.compiler_ir("stablehlo")
    return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=debug_info)


def _compile_args(lowered) -> dict:
    return getattr(getattr(lowered, "_lowering", None), "compile_args", None) or {}


def shardings(lowered) -> str:
    """The shardings jax compiles the program for (they name the devices,
    which the module text of a one-device program does not)."""
    args = _compile_args(lowered)
    return repr((args.get("in_shardings"), args.get("out_shardings")))


def executable_is_portable(lowered) -> bool:
    """Whether the executable of ``lowered`` can be serialized and loaded
    in another process: no host callbacks (Python functions of this
    process) and no side effects ordered through them."""
    args = _compile_args(lowered)
    return bool(args) and not any(args.get(k) for k in (
        "host_callbacks", "ordered_effects", "unordered_effects", "keepalive"))


def parse_in_jax(text: str):
    """Parses memfit's output with jaxlib, which registers StableHLO and runs
    its verifier: a malformed rewrite fails here, not inside XLA."""
    ctx = _jmlir.make_ir_context()
    try:
        with ctx:
            module = _ir.Module.parse(text)
            if not module.operation.verify():
                raise MemfitError("jaxlib's verifier rejected memfit's output")
    except MemfitError:
        raise
    except Exception as e:
        raise MemfitError(f"jaxlib rejected memfit's output module: {e}") from None
    return module


def replace_module(lowered, text: str):
    """Puts ``text`` into ``lowered`` so that ``lowered.compile()`` compiles it."""
    lowering = getattr(lowered, "_lowering", None)
    if lowering is None or not hasattr(lowering, "_hlo"):
        raise MemfitError(
            f"this jax ({jax.__version__}) does not expose Lowered._lowering._hlo; "
            "memfit.jit cannot hand its module to XLA")
    # jax caches and shares the lowering between jax.jit calls with the same
    # signature: transform a private copy, or a later plain jax.jit(f) would
    # be handed memfit's executable.
    private = copy.copy(lowering)
    private._hlo = parse_in_jax(text)
    private._executable = None  # never reuse an executable of the old module
    lowered._lowering = private
    return lowered


def is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def compile_text(text: str):
    """XLA's executable for module text alone (no Lowered: a file), on jax's
    default backend's first device. Its ``get_compiled_memory_stats()`` has
    the fields of ``Compiled.memory_analysis()``."""
    from jax._src.lib import xla_client as xc
    from jax.extend.backend import get_backend
    try:
        return get_backend().compile_and_load(
            text, xc.DeviceList(tuple(jax.devices()[:1])), xc.CompileOptions())
    except Exception as e:  # jaxlib raises its own error types
        raise MemfitError(f"XLA could not compile the module: {e}") from None
