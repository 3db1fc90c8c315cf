"""Programs that tests run in a fresh subprocess through
memfit.measure.peak_rss_growth (``rss_programs:<name>``): each returns
(callable, arguments)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import memfit


def _attention(q, k, v):
    s = jnp.einsum("hqd,hkd->hqk", q, k) / np.float32(np.sqrt(q.shape[-1]))
    return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, -1), v)


def attention_grad(heads: int, seq: int, limit: str):
    """memfit.jit of multi-head attention's gradient (the cotangent an
    argument), as bench_race.py's attention forward+backward row."""
    def f(q, k, v, g):
        return jax.grad(lambda q, k, v: jnp.sum(_attention(q, k, v) * g),
                        argnums=(0, 1, 2))(q, k, v)
    rng = np.random.default_rng(0)
    args = tuple(jnp.asarray(rng.standard_normal((heads, seq, 64), np.float32))
                 for _ in range(4))
    return memfit.jit(f, memory_limit=limit), args
