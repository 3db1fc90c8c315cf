"""Programs the foundation tests and bench/bench_profile.py run: each is a
function plus a deterministic argument builder. Kept in one place so that the
accuracy test and the README table measure the same programs."""
from __future__ import annotations

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax


def knn(x, q):
    d = jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    return lax.top_k(-d, 8)


def attention(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    return jax.nn.softmax(s, axis=-1) @ v


def matmul_chain(a, b, c, d):
    return jnp.tanh(a @ b) @ (c @ d)


def gp_solve(x, y):
    # RBF kernel + noise, Cholesky, two triangular solves (LAPACK custom calls).
    d2 = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    k = jnp.exp(-0.5 * d2) + 1e-1 * jnp.eye(x.shape[0], dtype=x.dtype)
    c = jax.scipy.linalg.cho_factor(k, lower=True)
    return jax.scipy.linalg.cho_solve(c, y)


def _mlp(params, x):
    (w1, b1), (w2, b2) = params
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2 + b2


def mlp_step(params, x, y):
    def loss(p):
        return jnp.mean((_mlp(p, x) - y) ** 2)
    g = jax.grad(loss)(params)
    return jax.tree_util.tree_map(lambda p, gp: p - 0.01 * gp, params, g)


def scan_program(xs, w):
    # A loop: a carried state updated by a matmul per step, outputs stacked.
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum(axis=-1)
    h0 = jnp.zeros((xs.shape[1], w.shape[0]), xs.dtype)
    h, ys = lax.scan(step, h0, xs)
    return h, ys


def fori_program(a, b):
    def body(i, acc):
        return acc + jnp.sin(a * i) @ b
    return lax.fori_loop(0, 5, body, jnp.zeros((a.shape[0], b.shape[1]), a.dtype))


def _rng(seed):
    return np.random.default_rng(seed)


def args_knn(scale=1):
    r = _rng(0)
    return (r.standard_normal((2000 * scale, 16), dtype=np.float32),
            r.standard_normal((500 * scale, 16), dtype=np.float32))


def args_attention(scale=1):
    r = _rng(1)
    s, d = 512 * scale, 64
    return tuple(r.standard_normal((s, d), dtype=np.float32) for _ in range(3))


def args_matmul_chain(scale=1):
    r = _rng(2)
    n = 256 * scale
    return (r.standard_normal((n, 2 * n), dtype=np.float32),
            r.standard_normal((2 * n, n), dtype=np.float32),
            r.standard_normal((n, n // 2), dtype=np.float32),
            r.standard_normal((n // 2, n), dtype=np.float32))


def args_gp_solve(scale=1):
    r = _rng(3)
    n = 300 * scale
    return (r.standard_normal((n, 4), dtype=np.float32),
            r.standard_normal((n, 2), dtype=np.float32))


def args_mlp_step(scale=1):
    r = _rng(4)
    b, din, dh, dout = 256 * scale, 64, 512, 16
    f = np.float32
    params = ((r.standard_normal((din, dh), dtype=f) * 0.1, np.zeros(dh, f)),
              (r.standard_normal((dh, dout), dtype=f) * 0.1, np.zeros(dout, f)))
    return (params, r.standard_normal((b, din), dtype=f),
            r.standard_normal((b, dout), dtype=f))


def args_scan(scale=1):
    r = _rng(5)
    return (r.standard_normal((10, 128 * scale, 256), dtype=np.float32),
            r.standard_normal((256, 256), dtype=np.float32) * 0.05)


def args_fori(scale=1):
    r = _rng(6)
    n = 256 * scale
    return (r.standard_normal((n, n), dtype=np.float32),
            r.standard_normal((n, n), dtype=np.float32))


# name -> (function, argument builder)
PROGRAMS = {
    "knn": (knn, args_knn),
    "attention": (attention, args_attention),
    "matmul_chain": (matmul_chain, args_matmul_chain),
    "gp_solve": (gp_solve, args_gp_solve),
    "mlp_step": (mlp_step, args_mlp_step),
    "scan": (scan_program, args_scan),
    "fori_loop": (fori_program, args_fori),
}


def xla_bytes(fun, *args) -> int:
    """XLA's argument + output + temp - alias for jax.jit(fun) on these args."""
    m = jax.jit(fun).lower(*args).compile().memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes
            + m.temp_size_in_bytes - m.alias_size_in_bytes)
