"""memfit-rewrite{scale-after-dot}: in split loops, scale a dot's result,
not its operand (lib/Transforms/Rewrites/ScaleAfterDot.cpp).

dot(x * broadcast(c), y) -> dot(x, y) * broadcast(c) when c varies only
along dimensions the result keeps and the result is smaller than x. In
split attention, forward (P = e / rowsum: the [chunk, d] output is divided,
not the [chunk, S] probabilities) and backward (dS's 1/sqrt(d) moves onto
dS k and dS^T q). Checks: it applies there (memfit.rewrites records it),
results match jax and a float64 reference with it on and off, and a
program that fits is left alone.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from memfit.explain.split import applied_rewrites
from numerics import split_pipeline
from test_minor_contraction import attention, attention_grad, attention_grad64, normal, rel_err

MiB = 1024 * 1024


def attention64(q, k, v):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    s = np.einsum("hqd,hkd->hqk", q, k) / 8.0
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("hqk,hkd->hqd", p / p.sum(-1, keepdims=True), v)


def split(f, args, limit, scale_after_dot):
    return split_pipeline(f, args, limit, None if scale_after_dot else "scale-after-dot")


def check(f, args, limit, ref):
    want = jax.jit(f)(*args)
    want = want if isinstance(want, tuple) else (want,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    for on in (True, False):
        c, text = split(f, args, limit, on)
        assert "stablehlo.while" in text
        assert ("scale-after-dot" in applied_rewrites(text)) == on
        got = c(*args)
        got = got if isinstance(got, tuple) else (got,)
        for g, w, r in zip(got, want, ref):
            assert rel_err(g, w) <= 1e-5, on
            assert rel_err(g, r) <= 4 * rel_err(w, r) + 16 * np.finfo(np.float32).eps, on


def test_attention_forward():
    args = tuple(normal(i, (2, 1024, 64)) for i in range(3))
    check(attention, args, 4 * MiB, attention64(*args))


def test_attention_forward_and_backward():
    args = tuple(normal(i, (2, 1024, 64)) for i in range(4))
    check(attention_grad, args, 8 * MiB, attention_grad64(*args))


def test_a_program_that_fits_is_left_alone():
    args = tuple(normal(i, (2, 64, 64)) for i in range(3))
    c, text = split(attention, args, 64 * MiB, True)
    assert "stablehlo.while" not in text and not applied_rewrites(text)
