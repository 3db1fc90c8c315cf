"""memfit-split: online softmax (attention split along the KEY axis).

softmax(q k^T) v is split by keys with a running max m, running sum l and
accumulator acc when no split by query rows fits the limit: at these sizes
even one query row of scores (with its exp, counted twice by the chunk rule)
does not fit next to the arguments (k and v are narrow, d = 4, and long).
Checks: XLA's argument + output + temp - alias (ynn fusions off, conftest.py)
within the limit, jax's own bytes >= 8x the limit, results equal jax's within
1e-5 x max|out|; rows whose keys are all masked give NaN exactly where jax
does (jax's softmax of an all -inf row is NaN: exp(-inf - -inf)).
"""
from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np

import memfit
from memfit import _jax_handover as handover
from memfit.measure import xla_bytes

KiB = 1024


def compile_split(f, args, limit):
    lowered = jax.jit(f).lower(*args)
    lowered._lowering = copy.copy(lowered._lowering)
    text = memfit.transform(handover.module_text(lowered),
                            f"memfit-inline,memfit-split{{memory-limit={limit}}}")
    return handover.replace_module(lowered, text).compile(), text


def check(f, args, limit, *, online=True, min_ratio=8.0):
    base = jax.jit(f).lower(*args).compile()
    split, text = compile_split(f, args, limit)
    assert "stablehlo.while" in text
    # The online softmax's -inf guard (compare EQ) is there iff it was used.
    assert ("comparison_direction EQ" in text) == online
    base_bytes, split_bytes = xla_bytes(base), xla_bytes(split)
    assert split_bytes <= limit, (split_bytes, limit)
    assert base_bytes >= min_ratio * limit, (base_bytes, limit)
    w = np.asarray(base(*args), np.float64)
    g = np.asarray(split(*args), np.float64)
    assert w.shape == g.shape
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    ok = ~np.isnan(w)
    if ok.any():
        scale = max(float(np.max(np.abs(w[ok]))), 1e-30)
        assert float(np.max(np.abs(w[ok] - g[ok]))) <= 1e-5 * scale
    return w


def normal(key, shape):
    return jax.random.normal(jax.random.PRNGKey(key), shape, jnp.float32)


def attention(q, k, v):
    return jax.nn.softmax(q @ k.T, -1) @ v


def causal(fill):
    def f(q, k, v):
        s = q @ k.T
        qi = jnp.arange(s.shape[0])[:, None]
        ki = jnp.arange(s.shape[1])[None, :]
        return jax.nn.softmax(jnp.where(qi >= ki, s, fill), -1) @ v
    return f


def qkv(sq, sk, d=4, dv=4, lead=()):
    return (normal(0, (*lead, sq, d)), normal(1, (*lead, sk, d)) * 2.0,
            normal(2, (*lead, sk, dv)))


def test_single_head_by_keys():
    # args 2 MiB; one query row of scores is 256 KiB: rows cannot fit 2.25 MiB
    check(attention, qkv(64, 65536), 2300 * KiB)


def test_non_dividing_keys():
    check(attention, qkv(64, 65531), 2300 * KiB)


def test_multi_head_bshd():
    # jax.nn.dot_product_attention: [B, S, H, D], softmax over keys of each head
    q, k, v = (normal(0, (2, 64, 3, 4)), normal(1, (2, 16381, 3, 4)),
               normal(2, (2, 16381, 3, 4)))
    check(jax.nn.dot_product_attention, (q, k, v), 3200 * KiB)


def test_multi_head_einsum_bhsd():
    def f(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k)
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), v)
    check(f, qkv(64, 16381, lead=(2, 3)), 3200 * KiB)


def test_causal_mask_all_masked_chunks():
    # Only keys <= query (< 64 of 65531) are visible: every chunk after the
    # first has all its keys masked (-inf) and must add nothing, not NaN.
    w = check(causal(-jnp.inf), qkv(64, 65531), 2300 * KiB)
    assert not np.isnan(w).any()


def test_fully_masked_rows_are_nan_like_jax():
    # Strictly causal: query 0 sees no key. jax gives NaN for that row
    # (0/0 after the loop here: l = acc = 0), finite values elsewhere.
    def f(q, k, v):
        s = q @ k.T
        qi = jnp.arange(s.shape[0])[:, None]
        ki = jnp.arange(s.shape[1])[None, :]
        return jax.nn.softmax(jnp.where(qi > ki, s, -jnp.inf), -1) @ v
    w = check(f, qkv(64, 65531), 2300 * KiB)
    assert np.isnan(w[0]).all() and not np.isnan(w[1:]).any()


def test_large_negative_mask():
    check(causal(jnp.finfo(jnp.float32).min), qkv(64, 65531), 2300 * KiB)


def test_query_split_suffices_no_online_softmax():
    # 2048 x 4096 scores (32 MiB) under 4 MiB: rows fit, no running max.
    check(attention, qkv(2048, 4096), 4 * 1024 * KiB, online=False, min_ratio=4.0)


def test_dot_product_attention_is_causal():
    q, k, v = (normal(0, (2, 64, 3, 4)), normal(1, (2, 16381, 3, 4)),
               normal(2, (2, 16381, 3, 4)))
    f = lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True)
    check(f, (q, k, v), 3200 * KiB)
