"""The numerics contract the split tests share: floats within `tol` times the
output's largest magnitude, integers (indices) identical unless told not."""
from __future__ import annotations

import copy

import jax
import numpy as np

import memfit
from memfit import _jax_handover as handover
from memfit.measure import xla_bytes
from memfit.transform import pipeline_for


def assert_matches(want, got, tol: float = 1e-5, exact_ints: bool = True) -> None:
    """Compares two pytrees of arrays leaf by leaf."""
    want, got = jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = np.asarray(w), np.asarray(g)
        assert w.shape == g.shape and w.dtype == g.dtype, (w.shape, g.shape, w.dtype, g.dtype)
        if np.issubdtype(w.dtype, np.integer) and exact_ints:
            np.testing.assert_array_equal(g, w)
            continue
        wide = np.complex128 if np.iscomplexobj(w) else np.float64
        w64, g64 = w.astype(wide), g.astype(wide)
        scale = max(float(np.max(np.abs(w64))), 1e-30)
        err = float(np.max(np.abs(w64 - g64)))
        assert err <= tol * scale, (err, tol * scale)


def split_within(fn, args, limit: int, *, min_ratio: float, rewrite: bool = False):
    """memfit.jit(fn) under ``limit``: checks that the program has a loop,
    that XLA's bytes are within the limit and that plain jax.jit needs at
    least ``min_ratio`` times the limit. Returns (jax's compiled program,
    memfit's jitted function, jax's bytes, memfit's bytes)."""
    base = jax.jit(fn).lower(*args).compile()
    fitted = memfit.jit(fn, memory_limit=limit, rewrite=rewrite)
    lowered = fitted.lower(*args)
    assert "stablehlo.while" in lowered.as_text()
    base_bytes, split_bytes = xla_bytes(base), xla_bytes(lowered.compile())
    assert split_bytes <= limit, (split_bytes, limit)
    assert base_bytes >= min_ratio * limit, (base_bytes, limit)
    return base, fitted, base_bytes, split_bytes


def split_pipeline(fn, args, limit: int, rewrite_off: str | None = None):
    """memfit's pipeline at ``limit`` (margin 2, no calibration), with the
    memfit-rewrite option ``rewrite_off`` (e.g. "scale-after-dot") off in
    both of its runs: the compiled program and its text."""
    p = pipeline_for(memory_limit=limit)
    assert p.count("memfit-rewrite{") == 2
    if rewrite_off:
        p = p.replace("memfit-rewrite{", f"memfit-rewrite{{{rewrite_off}=false ")
    lowered = jax.jit(fn).lower(*args)
    lowered._lowering = copy.copy(lowered._lowering)
    text = memfit.transform(handover.module_text(lowered), p)
    return handover.replace_module(lowered, text).compile(), text
