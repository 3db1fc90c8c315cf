"""Running memfit's C++ pass pipelines over StableHLO text.

With ``isolate=True`` (``transform(...)`` and ``memfit.jit(...)``) the
pipeline runs in a child process. memfit's passes refuse what they cannot
handle with a MemfitError, and a fuzzer (memfit/testing/fuzz.py) checks that
they do; but an MLIR fatal error (an abort or a segmentation fault) cannot be
caught inside the process it happens in. The child imports only memfit's
extension: if it dies, the caller gets a MemfitError naming the signal and
keeps running. The price is a process start per call (about 0.1 s plus the
module's text through a pipe).
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys

from . import _core
from .errors import MemfitError
from .units import parse_memory_size


# memfit-rewrite runs twice around memfit-split: its two-stage top-k comes
# after the split, so that a split loop sees the program's one top_k (and
# merges per-chunk top-k) and the chunks' top_k get the two-stage form.
# The exact kNN in the first memfit-rewrite sizes its two-level loop's query
# chunks to what the limit leaves (pipeline_for adds memory-limit/temp-margin).
REWRITE_OPTIONS_BEFORE_SPLIT = "top-k=false"
REWRITES_AFTER_SPLIT = ("memfit-rewrite{distance=false matrix-chain=false "
                        "reduce-to-dot=false factor-sums=false}")


def pipeline_for(passes: str | None = None, memory_limit: int | str | None = None,
                 rewrite: bool = True, temp_margin: float | None = None,
                 target: str = "xla") -> str:
    """The pass pipeline for a memory limit and/or an explicit pass list.

    ``passes`` is an MLIR pass list ("memfit-inline,memfit-profile"); with a
    ``memory_limit``, memfit inlines calls, applies its algebraic rewrites
    (unless ``rewrite=False``) and splits what does not fit, budgeting loop
    temporaries ``temp_margin`` times over (memfit-split's default, 2, when
    None). ``target="xla"`` also writes the split loops' accumulated dots
    in the form XLA:CPU's ynn fusions take (memfit-split's
    ``minor-contraction``). ``target="iree"`` leaves both out: the two-stage
    top-k rewrite is an XLA:CPU speed-up, and IREE 3.13's llvm-cpu backend
    rejects its batched gather; the dots' form is XLA:CPU's concern.
    """
    if target not in ("xla", "iree"):
        raise ValueError(f"unknown target {target!r}: 'xla' or 'iree'")
    parts = []
    if memory_limit is not None:
        limit = parse_memory_size(memory_limit)
        parts.append("memfit-inline")
        margin = "" if temp_margin is None else f" temp-margin={float(temp_margin)!r}"
        if rewrite:
            parts.append(f"memfit-rewrite{{{REWRITE_OPTIONS_BEFORE_SPLIT} "
                         f"memory-limit={limit}{margin}}}")
        minor = " minor-contraction=true" if target == "xla" else ""
        parts.append(f"memfit-split{{memory-limit={limit}{margin}{minor}}}")
        if rewrite and target == "xla":
            parts.append(REWRITES_AFTER_SPLIT)
    if passes:
        parts.append(passes.strip().strip(","))
    return ",".join(parts)


# Test hook: the child aborts before running the pipeline.
SELF_TEST_ABORT = "MEMFIT_ISOLATED_SELF_TEST_ABORT"


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


# The child loads memfit's extension by its path, without the memfit package
# (which imports jax): one request on stdin, its result on stdout.
_CHILD = """
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("memfit._core", sys.argv[1])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
args = json.load(sys.stdin)
if os.environ.get(sys.argv[2]):
    os.abort()
json.dump(core.run_pipeline(*args), sys.stdout)
"""


def _run_pipeline_isolated(text: str, pipeline: str, generic: bool, debug_info: bool,
                 record_pipeline: bool) -> dict:
    """_core.run_pipeline's result, computed in a child process."""
    request = json.dumps([text, pipeline, generic, debug_info, record_pipeline])
    child = subprocess.run([sys.executable, "-c", _CHILD, _core.__file__, SELF_TEST_ABORT],
                           input=request, capture_output=True, text=True)
    if child.returncode != 0:
        raise MemfitError(
            f"memfit: pipeline '{pipeline}' died in its isolated process "
            f"({_death(child.returncode)}); this process is unaffected",
            [{"severity": "error", "location": "", "message": child.stderr[-2000:].strip()}])
    return json.loads(child.stdout)

def _looks_generic(text: str) -> bool:
    # Generic form quotes op names: "stablehlo.add"(...), "func.func"() ...
    return '"func.func"' in text or '"builtin.module"' in text


def _run_pipeline(text: str, pipeline: str, generic: bool, debug_info: bool,
                  record_pipeline: bool, isolate: bool) -> dict:
    if isolate:
        return _run_pipeline_isolated(text, pipeline, generic, debug_info, record_pipeline)
    return _core.run_pipeline(text, pipeline, generic, debug_info, record_pipeline)


def to_generic(text: str, *, isolate: bool = False) -> str:
    """StableHLO text in generic form (what the C++ passes read).

    Pretty-form StableHLO needs the StableHLO dialect to parse; jaxlib
    registers it, so pretty text is converted through jaxlib.
    """
    if _looks_generic(text):
        return text
    # memfit's own parser reads func/arith in pretty form around StableHLO
    # ops in generic form; only StableHLO's pretty syntax needs jaxlib. Trying
    # memfit first also keeps malformed generic ops away from jaxlib's
    # verifier, which can crash on them (a stablehlo.reduce with one operand
    # segfaults it in jaxlib 0.12).
    own = _run_pipeline(text, "", True, True, False, isolate)
    if own["ok"]:
        return own["output"]
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir

    ctx = jmlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    try:
        with ctx:
            module = ir.Module.parse(text)
    except Exception as e:  # jaxlib raises MLIRError with the diagnostics
        raise MemfitError(f"could not parse the StableHLO text: {e}") from None
    return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)


def transform(text: str, pipeline: str = "", *, generic: bool = True,
              debug_info: bool = True, record_pipeline: bool = True,
              isolate: bool = False) -> str:
    """Runs ``pipeline`` (e.g. "memfit-inline,memfit-profile") over module
    text in generic or pretty form and returns the new module text.

    The result carries a ``memfit.pipeline`` module attribute naming what
    ran. Raises MemfitError, with MLIR's messages and locations, when the
    text does not parse, the pipeline is unknown or a pass fails; the input
    is never half-rewritten. With ``isolate=True`` the passes run in a child
    process: should one still hit an MLIR fatal error,
    the child dies and this raises MemfitError instead of ending the caller.
    """
    if not isinstance(text, str):
        raise TypeError(f"transform() takes module text, not {type(text).__name__}")
    result = _run_pipeline(to_generic(text, isolate=isolate), pipeline, generic, debug_info,
                           record_pipeline, isolate)
    if not result["ok"]:
        what = f"pipeline '{pipeline}'" if pipeline else "parsing the module"
        raise MemfitError(f"memfit: {what} failed", result["diagnostics"])
    return result["output"]
