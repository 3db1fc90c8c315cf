"""memfit-rewrite{batched-gemv}: in split loops, a batched matrix-vector dot
whose matrix's batch dimensions do not lead is a multiply + reduce
(lib/Transforms/Rewrites/BatchedGemv.cpp).

On a KV-cache decode step (examples.kv_cache_decode: q [B, H, D] against
[B, S, H, D] caches, einsum "bhd,bshd->bhs" and "bhs,bshd->bhd"), split by
memfit.jit at a sixteenth of jax's temporaries: both of the loop's dots
become reduces, XLA's bytes stay under the limit and memfit's model counts
what XLA allocates, the results match jax's and the float64 contract, and
XLA's compiled loop has no dot left to copy a cache chunk for. A program
that fits is left alone.
"""
from __future__ import annotations

import re

import jax
import numpy as np

import memfit
from memfit.api import _modelled_peak
from memfit.explain.split import applied_rewrites
from memfit.measure import xla_bytes
from memfit.testing import examples
from memfit.testing.oracle import EPS32, FACTOR, FLOOR_ULPS, float64_outputs, relative_error
from numerics import split_pipeline

MiB = 1024 * 1024


def decode_args(bsz=8, s=2048, h=8, d=64):
    rng = np.random.default_rng(3)
    small = lambda: rng.standard_normal((bsz, h, d)).astype(np.float32)  # noqa: E731
    cache = lambda: (rng.standard_normal((bsz, s, h, d)) * 4).astype(np.float32)  # noqa: E731
    return small() * 8, small(), small(), cache(), cache(), np.int32(s // 3)


def limit_for(fn, args, divisor=16):
    m = jax.jit(fn).lower(*args).compile().memory_analysis()
    fixed = m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
    return fixed + m.temp_size_in_bytes // divisor


def split(fn, args, limit, batched_gemv=True):
    return split_pipeline(fn, args, limit, None if batched_gemv else "batched-gemv")


def test_the_decode_steps_dots_become_reduces():
    args = decode_args()
    fn = examples.kv_cache_decode
    _, text = split(fn, args, limit_for(fn, args))
    assert "stablehlo.while" in text
    assert applied_rewrites(text).get("batched-gemv", 0) >= 2
    assert text.count("memfit.batched_gemv") >= 2


def test_the_compiled_loop_has_no_dot():
    # XLA:CPU copies a dot's matrix batch-first; the reduces read it as it is.
    args = decode_args()
    fn = examples.kv_cache_decode
    limit = limit_for(fn, args)
    for on in (True, False):
        compiled, _ = split(fn, args, limit, batched_gemv=on)
        hlo = compiled.as_text()
        bodies = re.findall(r"body=(%[\w.-]+)", hlo)
        assert bodies
        has_dot = any(" dot(" in text for name, text in _computations(hlo) if name in bodies)
        assert has_dot != on, on


def _computations(hlo):
    """(name, text) of each computation of a compiled HLO module."""
    out = []
    for block in re.split(r"\n(?=\S)", hlo):
        m = re.match(r"(?:ENTRY )?(%[\w.-]+)", block)
        if m:
            out.append((m.group(1), block))
    return out


def test_memfit_jit_fits_the_limit_within_the_contract():
    args = decode_args()
    fn = examples.kv_cache_decode
    limit = limit_for(fn, args)
    base = jax.jit(fn).lower(*args).compile()
    fitted = memfit.jit(fn, memory_limit=limit)
    lowered = fitted.lower(*args)
    text = lowered.as_text()
    assert "batched-gemv" in applied_rewrites(text)
    compiled = lowered.compile()
    assert xla_bytes(compiled) <= limit < xla_bytes(base)
    # memfit's model counts what XLA allocates for the rewritten program
    assert abs(_modelled_peak(text) / xla_bytes(compiled) - 1) < 0.05
    want = [np.asarray(o, np.float64) for o in jax.tree_util.tree_leaves(float64_outputs(fn, args))]
    for w, j, m in zip(want, jax.tree_util.tree_leaves(base(*args)),
                       jax.tree_util.tree_leaves(fitted(*args))):
        assert relative_error(m, j) <= 1e-5
        ej, em = relative_error(j, w), relative_error(m, w)
        assert em <= max(FACTOR * ej, FLOOR_ULPS * EPS32), (em, ej)


def test_a_program_that_fits_is_left_alone():
    args = decode_args(bsz=2, s=256)
    _, text = split(examples.kv_cache_decode, args, 256 * MiB)
    assert "stablehlo.while" not in text
    assert "batched-gemv" not in applied_rewrites(text)
    assert "memfit.batched_gemv" not in text
