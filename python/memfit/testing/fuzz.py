"""A seeded fuzzer for memfit-split: random small StableHLO programs over
every element type and the op families memfit's op table knows, each split
at limits from tiny to generous, then checked against XLA.

A case is one program (written by jax, or generic StableHLO text made here
for what jax does not write) at one memory limit. Its outcome is one of

  refused    memfit raised MemfitError whose message carries a location;
             the input text is untouched (transform returns a new text)
  split      memfit changed the program; jaxlib verified it and XLA ran it
             with the original's results (within float rounding)
  unchanged  the program already fitted, or memfit left it as it was
  xla-differs memfit's output equals jax's op-by-op evaluation of the
             original, and XLA's fused compile of the original differs from
             both (seen: XLA:CPU in jaxlib 0.12 returns -128 for jnp.min of an
             int8 outer product; bench/fuzz_split.py lists such cases)
  crash      the process running memfit died (a signal, an abort)
  wrong      results differ, jaxlib rejected memfit's output, or the error
             had no location or was not a MemfitError

Programs XLA itself cannot run (an op jax does not allow on that type) are
still split, and only have to be refused cleanly or come back verified.

Cases run in a worker subprocess (``python -m memfit.testing.fuzz --worker``) that
prints one line per case; when it dies, the case it had started is counted
as a crash and a new worker resumes after it. ``run()`` is the harness;
``bench/fuzz_split.py`` and ``test/python/test_fuzz.py`` call it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

KiB = 1024
# From below any program's arguments to well above its peak.
LIMITS = (256, 1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB, 1024 * KiB)

DTYPES = ("float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
          "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "bool", "complex64", "complex128")

OUTCOMES = ("refused", "split", "unchanged", "xla-differs", "crash", "wrong")

# XLA may evaluate a chunk of a 16- or 8-bit float program at another
# precision than the whole (it fuses and upcasts differently), so values
# that tie within rounding can rank differently: for these types, integer
# outputs (top-k, argsort, argmax indices) are checked through the values
# they come with, not exactly. Every other type compares integers exactly.
LOW_PRECISION = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")

# Test hook: the worker aborts when it starts the program of this index.
SELF_TEST_ABORT = "MEMFIT_FUZZ_SELF_TEST_ABORT"


# -- the generated programs ---------------------------------------------------

def _kind(dtype) -> str:
    import numpy as np
    if dtype == np.bool_:
        return "bool"
    if np.issubdtype(dtype, np.complexfloating):
        return "complex"
    if np.issubdtype(dtype, np.integer):
        return "uint" if np.issubdtype(dtype, np.unsignedinteger) else "int"
    return "float"


def _array(rng, dtype, shape):
    import numpy as np
    k = _kind(dtype)
    if k == "bool":
        return rng.random(shape) < 0.5
    if k == "complex":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if k == "uint":  # high bits set, so unsigned and signed order differ
        return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)
    if k == "int":
        return rng.integers(-20, 21, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _outer(x, y, kind):
    """The big tensor: a combination of every x_i with every y_j."""
    a, b = x[:, None], y[None, :]
    return a ^ b if kind in ("bool", "uint") else a * b + a


def _unary(jnp, p, kind, rng):
    ops = {"float": [jnp.sin, jnp.tanh, lambda v: jnp.exp(-v * v), jnp.abs, jnp.negative],
           "complex": [jnp.exp, jnp.cos, jnp.conj, lambda v: v * v, jnp.negative],
           "int": [jnp.negative, jnp.abs, lambda v: v * v, lambda v: v >> 1],
           "uint": [lambda v: v >> 3, lambda v: v * v, jnp.invert],
           "bool": [jnp.logical_not]}[kind]
    return ops[rng.integers(len(ops))](p)


@dataclass
class Program:
    family: str
    dtype: str
    fn: object = None          # a jax function, or
    text: str | None = None    # generic StableHLO text (function @main)
    args: tuple = ()
    note: str = ""
    results: tuple = ()        # generic text: (shape, dtype) of each result


def _fam_elementwise(rng, dt, jnp, lax):
    n, m = rng.integers(4, 96, 2)
    k = _kind(dt)
    axis = int(rng.integers(-1, 2))

    def f(x, y):
        p = _unary(jnp, _outer(x, y, k), k, rng)
        return p if axis < 0 else (jnp.any(p, axis) if k == "bool" else jnp.sum(p, axis))
    return f, (_array(rng, dt, (n,)), _array(rng, dt, (m,)))


REDUCERS = ("sum", "prod", "max", "min", "and", "or", "argmax", "argmin")


def _fam_reduce(rng, dt, jnp, lax):
    n, m = rng.integers(4, 96, 2)
    k = _kind(dt)
    r = REDUCERS[rng.integers(len(REDUCERS))]
    if k == "bool" and r in ("sum", "prod"):
        r = "and"
    if k != "bool" and r in ("and", "or") and k not in ("int", "uint"):
        r = "max"
    if k == "complex" and r in ("argmax", "argmin"):
        r = "sum"
    axis = int(rng.integers(0, 2))

    def f(x, y):
        p = _outer(x, y, k)
        if r == "sum":
            return jnp.sum(p, axis)
        if r == "prod":
            return jnp.prod(p, axis)
        if r in ("max", "min"):
            if k == "complex":  # jax's lexicographic reducer body
                init = jnp.array(-jnp.inf if r == "max" else jnp.inf, p.dtype)
                return lax.reduce(p, init, lax.max if r == "max" else lax.min, (axis,))
            return jnp.max(p, axis) if r == "max" else jnp.min(p, axis)
        if r in ("and", "or"):
            op = lax.bitwise_and if r == "and" else lax.bitwise_or
            init = jnp.array(-1 if k == "int" else (True if k == "bool" else 0), p.dtype)
            if r == "and" and k == "uint":
                init = jnp.array(jnp.iinfo(p.dtype).max, p.dtype)
            if r == "or" and k == "bool":
                init = jnp.array(False)
            return lax.reduce(p, init, op, (axis,))
        return (jnp.argmax if r == "argmax" else jnp.argmin)(p, axis)
    return f, (_array(rng, dt, (n,)), _array(rng, dt, (m,))), r


def _fam_dot(rng, dt, jnp, lax):
    if _kind(dt) == "bool":
        return None
    b, n, c, m = rng.integers(1, 24, 4)
    batch = rng.random() < 0.5

    def f(x, y):
        if batch:
            return jnp.einsum("bnc,bcm->bnm", x, y)
        return jnp.einsum("nc,cm->nm", x[0], y[0])
    return f, (_array(rng, dt, (b, n, c)), _array(rng, dt, (b, c, m)))


def _fam_layout(rng, dt, jnp, lax):
    n, m = rng.integers(2, 80, 2)
    k = _kind(dt)
    which = rng.integers(4)

    def f(x, y):
        p = _outer(x, y, k)
        if which == 0:
            return jnp.transpose(p).reshape(-1)[: n * m // 2]
        if which == 1:
            return jnp.pad(p, ((1, 0), (0, 2)))[1:, ::2]
        if which == 2:
            return jnp.concatenate([p, p[:, :1]], axis=1)
        return p.reshape(n * m)[::-1].reshape(m, n)
    return f, (_array(rng, dt, (n,)), _array(rng, dt, (m,)))


def _fam_sort(rng, dt, jnp, lax):
    n, m = rng.integers(2, 96, 2)
    k = _kind(dt)
    top = int(rng.integers(1, m + 1))
    which = rng.integers(3)
    if which == 2 and k in ("bool", "complex"):
        which = 0

    def f(x, y):
        p = _outer(x, y, k)
        if which == 0:
            return jnp.sort(p, axis=1)[:, :top]
        if which == 1:
            return jnp.argsort(p, axis=1, stable=True)[:, :top]
        return lax.top_k(p, top)
    return f, (_array(rng, dt, (n,)), _array(rng, dt, (m,)))


def _fam_dynamic(rng, dt, jnp, lax):
    import numpy as np
    n, m = rng.integers(3, 80, 2)
    k = _kind(dt)
    s = int(rng.integers(1, n))
    which = rng.integers(2)

    def f(x, y, i):
        p = _outer(x, y, k)
        if which == 0:
            return lax.dynamic_slice(p, (i, jnp.int32(0)), (s, m))
        return lax.dynamic_update_slice(p, p[:s] if k == "bool" else p[:s] * p[:s],
                                        (i, jnp.int32(0)))
    i = np.int32(rng.integers(0, n))
    return f, (_array(rng, dt, (n,)), _array(rng, dt, (m,)), i)


def _fam_gather(rng, dt, jnp, lax):
    import numpy as np
    n, m = rng.integers(3, 80, 2)
    k = _kind(dt)
    idx = rng.integers(0, n, int(rng.integers(1, 2 * n))).astype(np.int32)
    scatter = rng.random() < 0.5

    def f(x, y, ix):
        p = _outer(x, y, k)
        if not scatter:
            return p[ix]
        upd = p[: len(idx)] if len(idx) <= n else p[ix]
        return p.at[ix].set(upd) if k == "bool" else p.at[ix].add(upd)
    return f, (_array(rng, dt, (n,)), _array(rng, dt, (m,)), idx)


SEGMENT_OPS = ("sum", "max", "min", "prod", "set", "lookup", "lookup_grad")


def _fam_segment(rng, dt, jnp, lax):
    """Scatters and gathers as ML code writes them: a segment reduction of
    a computed [n, m] into a few segments (jax.ops.segment_*: thousands of
    repeated indices at real sizes, several per segment here), `.at[ids].set`
    (which a split along the rows must refuse), an embedding lookup of an
    argument table by n indices combined with the computed rows and reduced
    over m, and a lookup's transpose (its gradient: a scatter-add)."""
    import jax
    import numpy as np
    n, m = rng.integers(4, 96, 2)
    segments = int(rng.integers(1, 12))
    k = _kind(dt)
    op = SEGMENT_OPS[rng.integers(len(SEGMENT_OPS))]
    ids = rng.integers(0, segments, n).astype(np.int32)

    def f(x, y, ids, table):
        p = _outer(x, y, k)
        if op in ("sum", "max", "min", "prod"):
            seg = getattr(jax.ops, "segment_" + op)
            return seg(p, ids, num_segments=segments)
        if op == "set":
            return table.at[ids].set(p)
        if op == "lookup":
            rows = table[ids]
            both = rows ^ p if k in ("bool", "uint") else rows * p + rows
            return jnp.any(both, 1) if k == "bool" else jnp.sum(both, 1)
        return jax.vjp(lambda t: t[ids], table)[1](p)[0]
    return (f, (_array(rng, dt, (n,)), _array(rng, dt, (m,)), ids,
                _array(rng, dt, (segments, m))), op)


def _fam_control(rng, dt, jnp, lax):
    import numpy as np
    n, m = rng.integers(3, 80, 2)
    k = _kind(dt)
    which = rng.integers(2)

    def f(x, y, i):
        p = _outer(x, y, k)
        if which == 0:
            def body(_, c):
                return c ^ p if k in ("bool", "uint") else c + p
            return lax.fori_loop(0, 3, body, p)
        branches = [lambda v: v, lambda v: _unary(jnp, v, k, np.random.default_rng(0))]
        return lax.switch(i, branches, p)
    return f, (_array(rng, dt, (n,)), _array(rng, dt, (m,)), np.int32(rng.integers(0, 2)))


def _fam_custom_call(rng, dt, jnp, lax):
    if dt.name not in ("float32", "float64", "complex64", "complex128"):
        return None
    n = int(rng.integers(2, 24))

    def f(a):
        h = a @ jnp.conj(a.T) + n * jnp.eye(n, dtype=a.dtype)
        return jnp.linalg.cholesky(h)
    return f, (_array(rng, dt, (n, n)),)


def _fam_rewrite(rng, dt, jnp, lax):
    """What memfit-rewrite matches: squared distances, a sum of a product,
    a matrix chain, a nearest-neighbour top-k."""
    if _kind(dt) == "bool":
        return None
    n, m, d = (int(v) for v in rng.integers(2, 64, 3))
    which = int(rng.integers(4))
    if which == 3 and _kind(dt) == "complex":
        which = 0

    def f(x, y):
        if which == 0:
            return jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, -1)
        if which == 1:
            return jnp.sum(x[:, None, :] * y[None, :, :], -1)
        if which == 2:
            return x @ (y.T @ y) @ x[0]
        return lax.top_k(-jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, -1), min(3, m))
    return f, (_array(rng, dt, (n, d)), _array(rng, dt, (m, d)))


JAX_FAMILIES = {
    "elementwise": _fam_elementwise, "reduce": _fam_reduce, "dot_general": _fam_dot,
    "layout": _fam_layout, "sort/top_k": _fam_sort, "dynamic_slice": _fam_dynamic,
    "gather/scatter": _fam_gather, "while/case": _fam_control,
    "custom_call": _fam_custom_call, "rewrite": _fam_rewrite,
    "segment/embedding": _fam_segment,
}

# -- generic text: what jax does not write ------------------------------------

_MLIR_TYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
               "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2", "int8": "i8",
               "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "ui8",
               "uint16": "ui16", "uint32": "ui32", "uint64": "ui64", "bool": "i1",
               "complex64": "complex<f32>", "complex128": "complex<f64>"}

_GENERIC_REDUCERS = ("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                     "stablehlo.minimum", "stablehlo.and", "stablehlo.or")


def _generic_reduce(t, n, m, reducer, combine):
    """x[n] (op) y[m] over an n x m broadcast, reduced along m by `reducer`
    (stablehlo.maximum on complex included), or ranked by chlo.top_k."""
    big = f"tensor<{n}x{m}x{t}>"
    head = f'''"builtin.module"() <{{sym_name = "jit_fuzz"}}> ({{
  "func.func"() <{{function_type = (tensor<{n}x{t}>, tensor<{m}x{t}>) -> RESULT, sym_name = "main", sym_visibility = "public"}}> ({{
  ^bb0(%x: tensor<{n}x{t}>, %y: tensor<{m}x{t}>):
    %0 = "stablehlo.broadcast_in_dim"(%x) <{{broadcast_dimensions = array<i64: 0>}}> : (tensor<{n}x{t}>) -> {big}
    %1 = "stablehlo.broadcast_in_dim"(%y) <{{broadcast_dimensions = array<i64: 1>}}> : (tensor<{m}x{t}>) -> {big}
    %2 = "{combine}"(%0, %1) : ({big}, {big}) -> {big}
'''
    if reducer == "chlo.top_k":
        res = f"(tensor<{n}x2x{t}>, tensor<{n}x2xi32>)"
        body = f'''    %3:2 = "chlo.top_k"(%2) <{{k = 2 : i64}}> : ({big}) -> {res}
    "func.return"(%3#0, %3#1) : {res} -> ()
'''
    else:
        res = f"tensor<{n}x{t}>"
        body = f'''    %3 = "stablehlo.slice"(%2) <{{limit_indices = array<i64: 1, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}}> : ({big}) -> tensor<1x1x{t}>
    %4 = "stablehlo.reshape"(%3) : (tensor<1x1x{t}>) -> tensor<{t}>
    %5 = "stablehlo.reduce"(%2, %4) <{{dimensions = array<i64: 1>}}> ({{
    ^bb0(%a: tensor<{t}>, %b: tensor<{t}>):
      %6 = "{reducer}"(%a, %b) : (tensor<{t}>, tensor<{t}>) -> tensor<{t}>
      "stablehlo.return"(%6) : (tensor<{t}>) -> ()
    }}) : ({big}, tensor<{t}>) -> {res}
    "func.return"(%5) : ({res}) -> ()
'''
    return (head + body + "  }) : () -> ()\n}) : () -> ()\n").replace("RESULT", res)


def _fam_generic(rng, dt, jnp, lax):
    n, m = (int(v) for v in rng.integers(2, 96, 2))
    k = _kind(dt)
    reducer = (_GENERIC_REDUCERS + ("chlo.top_k",))[rng.integers(len(_GENERIC_REDUCERS) + 1)]
    combine = "stablehlo.xor" if k in ("bool", "uint") and rng.random() < 0.5 else \
        ("stablehlo.multiply" if k != "bool" else "stablehlo.and")
    text = _generic_reduce(_MLIR_TYPES[dt.name], n, m, reducer, combine)
    results = (((n, 2), dt), ((n, 2), jnp.dtype("int32"))) if reducer == "chlo.top_k" \
        else (((n,), dt),)
    return text, (_array(rng, dt, (n,)), _array(rng, dt, (m,))), reducer, results


FAMILIES = tuple(JAX_FAMILIES) + ("generic",)


def make_program(seed: int, index: int) -> Program | None:
    """Program `index` of `seed`: families and element types in turn, the rest
    drawn from a generator seeded by (seed, index)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    rng = np.random.default_rng([seed, index])
    family = FAMILIES[index % len(FAMILIES)]
    dtype = DTYPES[index % len(DTYPES)]  # 11 and 17: every pair in 187 programs
    dt = jnp.dtype(dtype)
    builder = _fam_generic if family == "generic" else JAX_FAMILIES[family]
    made = builder(rng, dt, jnp, lax)
    if made is None:
        return None
    note = made[2] if len(made) > 2 else ""
    if family == "generic":
        return Program(family, dtype, text=made[0], args=made[1], note=note, results=made[3])
    return Program(family, dtype, fn=jax.jit(made[0]), args=made[1], note=note)


# -- one case -------------------------------------------------------------------

def _lowered(prog: Program):
    """A jax Lowered whose module is the program (for generic text, a
    placeholder of the same signature whose module is then replaced)."""
    import copy

    import jax
    import jax.numpy as jnp
    from .. import _jax_handover as handover

    if prog.fn is not None:
        lowered = prog.fn.lower(*prog.args)
        lowered._lowering = copy.copy(lowered._lowering)
        return lowered, handover.module_text(lowered)
    stub = jax.jit(lambda *a: tuple(jnp.zeros(s, d) for s, d in prog.results))
    lowered = stub.lower(*prog.args)
    return lowered, prog.text


def _tolerance(dtype, prog: Program) -> float:
    """Relative to max(1, max|want|): reassociating a sum of K terms of
    size ~1 costs up to K * eps; memfit's chunks reassociate."""
    import jax.numpy as jnp
    import numpy as np
    if not jnp.issubdtype(dtype, jnp.inexact):  # ml_dtypes' f8 kinds too
        return 0.0
    terms = sum(int(np.size(a)) for a in prog.args)
    return 16 * float(jnp.finfo(dtype).eps) * terms


def _same(want, got, prog: Program) -> str:
    """'' when every output matches, else what differs."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    want, got = jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got)
    if len(want) != len(got):
        return f"{len(got)} outputs, want {len(want)}"
    for j, (w, g) in enumerate(zip(want, got)):
        w, g = np.asarray(w), np.asarray(g)
        if w.shape != g.shape or w.dtype != g.dtype:
            return f"output {j}: {g.dtype}{g.shape}, want {w.dtype}{w.shape}"
        if not jnp.issubdtype(w.dtype, jnp.inexact) and prog.dtype in LOW_PRECISION:
            continue  # ranks of values that tie within rounding (see LOW_PRECISION)
        tol = _tolerance(w.dtype, prog)
        if tol == 0.0:
            if not np.array_equal(w, g):
                return f"output {j}: {int(np.sum(w != g))} elements differ"
            continue
        wide = np.complex128 if np.iscomplexobj(w) else np.float64
        w64, g64 = w.astype(wide), g.astype(wide)
        both_nan = np.isnan(w64) & np.isnan(g64)
        if np.iscomplexobj(w64):  # one complex infinity, whatever the signs
            both_nan |= np.isinf(w64) & np.isinf(g64)
        finite = np.isfinite(w64)
        scale = max(1.0, float(np.max(np.abs(w64[finite]), initial=0.0)))
        with np.errstate(invalid="ignore"):  # inf - inf where both overflowed
            err = np.where(both_nan | (w64 == g64), 0.0, np.abs(w64 - g64))
        if np.any(np.isnan(err)) or float(np.max(err, initial=0.0)) > tol * scale:
            return f"output {j}: error {float(np.nanmax(err, initial=0.0)):.3g} > {tol * scale:.3g}"
    return ""


def _located(e) -> bool:
    for d in e.diagnostics:
        if d.get("severity") != "error":
            continue
        where = d.get("location", "") or ""
        if (where and "unknown" not in where) or d.get("source_line"):
            return True
    return False


def run_case(prog: Program, limit: int, reference) -> tuple[str, str]:
    """(outcome, detail) of splitting `prog` under `limit`; `reference` is
    the original's results (None when XLA cannot run the original)."""
    from .. import _jax_handover as handover
    from ..errors import MemfitError
    from ..transform import pipeline_for, transform

    lowered, text = _lowered(prog)
    try:
        out = transform(text, pipeline_for(memory_limit=limit), record_pipeline=False)
    except MemfitError as e:
        first = str(e).splitlines()[1:2] or [str(e)]
        return ("refused" if _located(e) else "wrong"), first[0].strip()[:200]
    except Exception as e:  # anything else escaping memfit is a bug
        return "wrong", f"{type(e).__name__}: {e}"[:200]
    changed = "stablehlo.while" in out and "stablehlo.while" not in text
    try:
        compiled = handover.replace_module(lowered, out).compile()
    except Exception as e:
        if reference is None:  # XLA cannot run the original either
            return ("split" if changed else "unchanged"), "verified; XLA rejects the program"
        return "wrong", f"XLA/jaxlib rejected the output: {e}"[:200]
    if reference is None:
        return ("split" if changed else "unchanged"), "verified; XLA rejects the original"
    got = compiled(*prog.args)
    diff = _same(reference, got, prog)
    if diff and prog.fn is not None and not _same(_op_by_op(prog), got, prog):
        return "xla-differs", diff
    if diff:
        return "wrong", diff
    return ("split" if changed else "unchanged"), ""


def _op_by_op(prog: Program):
    """The original evaluated one op at a time (no fusion): a second
    reference, for when XLA's fused original disagrees with memfit."""
    import jax
    with jax.disable_jit():
        return prog.fn(*prog.args)


def reference_results(prog: Program):
    """The original program's results, or None if XLA cannot run it."""
    from .. import _jax_handover as handover
    try:
        if prog.fn is not None:
            return prog.fn(*prog.args)
        lowered, text = _lowered(prog)
        return handover.replace_module(lowered, text).compile()(*prog.args)
    except Exception:
        return None


# -- the worker: one line per case --------------------------------------------

def _case_limits(seed: int, index: int, text: str, per_program: int) -> list[int]:
    """The tiniest and the most generous limit, and the others drawn between
    the program's arguments and outputs and its peak (memfit's profile),
    where a split has work to do."""
    import numpy as np
    from ..api import profile_text
    from ..errors import MemfitError

    rng = np.random.default_rng([seed, index, 1])
    try:
        prof = profile_text(text)[0]
        fixed = prof.argument_bytes + prof.output_bytes
        lo, hi = fixed, max(fixed + 1, prof.peak_bytes)
    except (MemfitError, IndexError):
        lo, hi = LIMITS[0], LIMITS[-1]
    middle = [int(lo + f * (hi - lo)) for f in rng.uniform(0.02, 0.95, max(0, per_program - 2))]
    return sorted({LIMITS[0], LIMITS[-1], *middle})[:max(per_program, 1)]


#: Comma-separated families a worker runs (the others it passes over).
FAMILIES_ENV = "MEMFIT_FUZZ_FAMILIES"


def worker(seed: int, start: int, end: int, per_program: int) -> None:
    import jax
    jax.config.update("jax_enable_x64", True)
    only = [f for f in os.environ.get(FAMILIES_ENV, "").split(",") if f]
    for i in range(start, end):
        if only and FAMILIES[i % len(FAMILIES)] not in only:
            continue
        try:
            prog = make_program(seed, i)
            if prog and prog.fn is not None:
                prog.fn.lower(*prog.args)  # jax may refuse an op on this type
            ref = reference_results(prog) if prog else None
        except Exception:
            prog = None
        if prog is None:
            print(f"SKIP {i}", flush=True)
            continue
        for limit in _case_limits(seed, i, _lowered(prog)[1], per_program):
            head = {"i": i, "family": prog.family, "dtype": prog.dtype, "limit": limit,
                    "note": prog.note, "runs": ref is not None}
            print("START " + json.dumps(head), flush=True)
            if os.environ.get(SELF_TEST_ABORT) == str(i):
                os.abort()
            outcome, detail = run_case(prog, limit, ref)
            print("CASE " + json.dumps({**head, "outcome": outcome, "detail": detail}),
                  flush=True)
    print("DONE", flush=True)


# -- the harness ----------------------------------------------------------------

@dataclass
class Report:
    cases: list[dict] = field(default_factory=list)
    programs: int = 0
    skipped: int = 0   # programs jax would not write for that element type
    seconds: float = 0.0

    def counts(self) -> Counter:
        return Counter(c["outcome"] for c in self.cases)

    def failures(self) -> list[dict]:
        return [c for c in self.cases if c["outcome"] in ("crash", "wrong")]

    def table(self, by: str) -> str:
        """Outcomes per `by` ("dtype" or "family"), as a Markdown table."""
        rows: dict[str, Counter] = {}
        for c in self.cases:
            rows.setdefault(c[by], Counter())[c["outcome"]] += 1
        head = f"| {by} | cases | " + " | ".join(OUTCOMES) + " |"
        lines = [head, "|" + "---|" * (len(OUTCOMES) + 2)]
        for key in sorted(rows):
            r = rows[key]
            lines.append(f"| {key} | {sum(r.values())} | "
                         + " | ".join(str(r[o]) for o in OUTCOMES) + " |")
        t = self.counts()
        lines.append(f"| all | {len(self.cases)} | "
                     + " | ".join(str(t[o]) for o in OUTCOMES) + " |")
        return "\n".join(lines)


def _run_worker(seed, start, end, per_program, timeout, report: Report) -> int:
    """Runs cases [start, end) in one worker; returns the first case not
    finished (end when all were)."""
    cmd = [sys.executable, "-m", "memfit.testing.fuzz", "--worker", str(seed), str(start),
           str(end), str(per_program)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, err, why = p.stdout, p.stderr, f"exit status {p.returncode}"
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, why = "", "timed out"
    pending = None
    for line in out.splitlines():
        word, _, rest = line.partition(" ")
        if word == "SKIP":
            report.skipped += 1
        elif word == "START":
            pending = json.loads(rest)
        elif word == "CASE":
            report.cases.append(json.loads(rest))
            pending = None
        elif word == "DONE":
            return end
    if pending is None:
        raise RuntimeError(f"fuzz worker failed outside a case ({why}): {err[-2000:]}")
    report.cases.append({**pending, "outcome": "crash", "detail": why})
    # Resume after the crashed program (its other limits are not retried).
    return pending["i"] + 1


def run(seed: int = 0, programs: int = 100, per_program: int = 3, jobs: int = 1,
        timeout: int = 3600, families: tuple[str, ...] = ()) -> Report:
    """Fuzzes `programs` programs, each at `per_program` limits, in `jobs`
    worker processes at a time; with `families`, only the programs of those
    families (the others are passed over)."""
    from concurrent.futures import ThreadPoolExecutor

    unknown = set(families) - set(FAMILIES)
    if unknown:
        raise ValueError(f"unknown fuzz families {sorted(unknown)}; known: {FAMILIES}")
    if families:
        os.environ[FAMILIES_ENV] = ",".join(families)
    else:
        os.environ.pop(FAMILIES_ENV, None)

    report = Report(programs=programs)
    t0 = time.time()
    bounds = [programs * j // jobs for j in range(jobs + 1)]

    def span(start: int, end: int) -> None:
        while start < end:
            start = _run_worker(seed, start, end, per_program, timeout, report)
    with ThreadPoolExecutor(jobs) as pool:
        for f in [pool.submit(span, a, b) for a, b in zip(bounds, bounds[1:])]:
            f.result()
    report.cases.sort(key=lambda c: (c["i"], c["limit"]))
    report.seconds = time.time() - t0
    return report


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        worker(*(int(a) for a in sys.argv[2:]))
    else:
        sys.exit("usage: python -m memfit.testing.fuzz --worker SEED START END PER_PROGRAM "
                 "(the harness is memfit.testing.fuzz.run; see bench/fuzz_split.py)")
