"""The speed race: memfit.jit against hand-chunked jax, KeOps and FAISS.

One table from one run. Every row is a program written plainly (with
broadcasting, whole matrices) and the contenders that compute the same thing:

* kNN (N data points, M queries, D=32, k=10): plain jax, a hand-chunked
  ``jax.lax.map`` over query blocks, memfit.jit at 64 MiB, pykeops
  ``LazyTensor.argKmin`` (CPU) and faiss-cpu ``IndexFlatL2.search``;
* SGPR collapsed bound (Titsias) + gradient: plain jax (where it fits) and a
  hand-chunked version that accumulates Kuf Kuf^T, Kuf y and the diagonal term
  over chunks of N; memfit at 256 MiB;
* softmax attention, 8 heads, forward, and forward + backward: plain jax where
  it fits, hand-written query-chunked attention (``lax.map``; under
  ``jax.checkpoint`` for the backward), memfit at 512 MiB;
* sizes that jax cannot run on this 24 GiB machine (kNN N=1,000,000
  M=10,000; attention 1 head S=65,536; memfit at 512 MiB): jax's need from a
  compile-only ``memory_analysis()`` (never run), then memfit's single run, in
  the subprocess that measures its RSS (so ynn on).

Columns: the median of interleaved runs (``memfit.measure.interleaved_medians``:
jax, hand, memfit, ... in turn) in jax's default configuration, as users run
it (ynn fusions on); memfit's time over each contender's (the goal says what
it has to be), the limit given to memfit, XLA's accounted bytes (argument +
output + temp - alias) of the same program compiled with ynn fusions off
(their scratch is not counted otherwise; memfit.jit calibrates against that
count too; for memfit, plus its bound of the packing scratch of the dots XLA:CPU
runs as Eigen calls, ``memfit.runtime_scratch``, which its calibration adds to
that count), the peak resident-set growth of a fresh subprocess running the
variant once (default flags; ``memfit.measure.peak_rss_growth``) and memfit's
pass time over XLA's compile time of the transformed module. The CPU model
is printed: speed ratios differ between CPUs.

A row whose memfit variant cannot be built (today: the SGPR gradient) prints
``not split: <memfit's error>`` and is not timed (``--time-unsplit`` times its
other contenders anyway); it turns into a timed row once memfit splits it.
Plain jax is never run when its accounted bytes exceed ``--run-cap`` (the OOM
killer would end the bench); its need is still listed.

    .venv/bin/python bench/bench_race.py            # full sizes: 29 min on 2 shared cores,
                                                    # 16 of them attention fwd+bwd
    .venv/bin/python bench/bench_race.py --quick    # small sizes, < 2 min
    .venv/bin/python bench/bench_race.py --rows knn,attention_fwd

pykeops and faiss-cpu are optional (``make bench-deps``); without them their
variants print "not installed".
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.scipy.linalg import solve_triangular  # noqa: E402

import memfit  # noqa: E402
from memfit.testing import examples  # noqa: E402
from memfit.measure import (ACCOUNTING_OPTIONS, cpu_model, interleaved_medians,  # noqa: E402
                            peak_rss_growth, xla_bytes)

import _results  # noqa: E402  (this script's folder is on sys.path)

MiB = 1024 * 1024
GiB = 1024 * MiB
K = 10  # neighbours


def _normal(seed, shape):
    # numpy, not jax.random: XLA's temporaries of generating a big argument
    # stay resident in the subprocess and the run reuses them, which hid the
    # RSS growth of memfit's kNN at N=1,000,000 entirely (0 MiB)
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, np.float32))


# --------------------------------------------------------------------- kNN

def knn(q, x):
    """k nearest data points of every query, written with broadcasting."""
    d = jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, -1)          # [M, N]
    return jax.lax.top_k(-d, K)


def knn_chunked(q, x, block):
    """Hand-chunked: lax.map over blocks of queries, one [block, N] at a time."""
    xx = jnp.sum(x * x, -1)

    def one(qb):
        d = jnp.sum(qb * qb, -1)[:, None] + xx[None, :] - 2.0 * (qb @ x.T)
        return jax.lax.top_k(-d, K)

    m = q.shape[0]
    vals, idx = jax.lax.map(one, q.reshape(m // block, block, q.shape[1]))
    return vals.reshape(m, K), idx.reshape(m, K)


def knn_keops(q, x):
    from pykeops.numpy import LazyTensor
    d = ((LazyTensor(q[:, None, :]) - LazyTensor(x[None, :, :])) ** 2).sum(-1)
    return d.argKmin(K, dim=1)


def _knn_sizes(big: bool, quick: bool):
    if big:  # jax needs M * N * 4 bytes for the distances alone
        return (50_000, 5_000) if quick else (1_000_000, 10_000)
    return (20_000, 200) if quick else (200_000, 2_000)


def _knn_args(big, quick):
    n, m = _knn_sizes(big, quick)
    return _normal(1, (m, 32)), _normal(2, (n, 32))


def _knn_check(outs: dict) -> str:
    """Index sets of every contender against the reference, except near-ties."""
    ref_name = "plain jax" if "plain jax" in outs else "hand-chunked"
    q, x = outs["_args"]
    q, x = np.asarray(q, np.float64), np.asarray(x, np.float64)

    def idx_of(o):
        return np.asarray(o[1] if isinstance(o, (tuple, list)) else o).reshape(q.shape[0], K)

    ref = idx_of(outs[ref_name])
    notes = []
    for name, o in outs.items():
        if name in ("_args", ref_name):
            continue
        got = idx_of(o)
        diff = [i for i in range(q.shape[0]) if set(got[i]) != set(ref[i])]
        bad = 0
        for i in diff:  # equal sorted true distances = the sets differ only by ties
            dg = np.sort(np.sum((x[got[i]] - q[i]) ** 2, -1))
            dr = np.sort(np.sum((x[ref[i]] - q[i]) ** 2, -1))
            bad += not np.allclose(dg, dr, rtol=1e-5, atol=1e-5 * max(dr[-1], 1.0))
        notes.append(f"{name}: {len(diff)} of {q.shape[0]} queries differ"
                     + (f", {bad} NOT near-ties" if bad else (", all near-ties" if diff else "")))
    return f"indices vs {ref_name}: " + "; ".join(notes)


def row_knn(quick: bool, big: bool = False):
    n, m = _knn_sizes(big, quick)
    if big:
        limit = "32MiB" if quick else "512MiB"
        name = f"kNN big N={n:,} M={m:,} D=32 k={K}"
    else:
        limit = "8MiB" if quick else "64MiB"
        name = f"kNN N={n:,} M={m:,} D=32 k={K}"
    block = 50
    var = [Variant("plain jax", "jax", lambda: (jax.jit(knn), _knn_args(big, quick))),
           Variant("memfit", "memfit",
                   lambda: (memfit.jit(knn, memory_limit=limit), _knn_args(big, quick)),
                   limit=limit)]
    if big:
        return Row(f"knn_big", name, var, goals={}, big=True)

    def keops():
        q, x = (np.asarray(a) for a in _knn_args(big, quick))
        return (lambda: knn_keops(q, x)), ()

    def faiss_():
        import faiss
        q, x = (np.asarray(a) for a in _knn_args(big, quick))
        index = faiss.IndexFlatL2(x.shape[1])
        index.add(x)  # building the flat index copies x; only the search is timed
        return (lambda: index.search(q, K)), ()

    var[1:1] = [Variant(f"hand-chunked (lax.map, {block} queries)", "jax",
                        lambda: (jax.jit(lambda q, x: knn_chunked(q, x, block)),
                                 _knn_args(big, quick)), ref="hand-chunked")]
    var += [Variant("pykeops argKmin (CPU)", "ext", keops, needs="pykeops"),
            Variant("faiss IndexFlatL2", "ext", faiss_, needs="faiss")]
    return Row("knn", name, var,
               goals={"hand-chunked": ("<=", 0.50), "pykeops argKmin (CPU)": ("<=", 0.25),
                      "faiss IndexFlatL2": ("<=", 0.25)},
               check=_knn_check)


def row_knn_fits(quick: bool):
    """A kNN that fits: memfit's rewrites alone (exact kNN through a GEMM,
    two-stage top-k), the limit far above the need."""
    n, m = (20_000, 200) if quick else (50_000, 1_000)

    def args():
        return _normal(6, (m, 32)), _normal(7, (n, 32))

    return Row("knn_fits", f"kNN that fits N={n:,} M={m:,} D=32 k={K}", [
        Variant("plain jax", "jax", lambda: (jax.jit(knn), args())),
        Variant("memfit", "memfit", lambda: (memfit.jit(knn, memory_limit="8GiB"), args()),
                limit="8GiB"),
    ], goals={"plain jax": ("<=", 0.50)}, check=_knn_check)


def row_knn_big(quick: bool):
    return row_knn(quick, big=True)


# -------------------------------------------------------------------- SGPR

JITTER = 1e-4


def _rbf(a, b, ls, var):
    """RBF kernel written with broadcasting: [len(a), len(b)]."""
    return var * jnp.exp(-0.5 * jnp.sum(((a[:, None, :] - b[None, :, :]) / ls) ** 2, -1))


def _unpack(params):
    z, log_ls, log_var, log_noise = params
    return z, jnp.exp(log_ls), jnp.exp(log_var), jnp.exp(log_noise)


def _bound_from(n, l, s2, aat, ay, yy, kdiag_sum):
    """Titsias' collapsed bound from A A^T, A y (A = L^-1 Kuf / sigma)."""
    m = aat.shape[0]
    lb = jnp.linalg.cholesky(jnp.eye(m, dtype=aat.dtype) + aat)
    c = solve_triangular(lb, ay, lower=True) / jnp.sqrt(s2)
    return (-0.5 * n * jnp.log(2 * jnp.pi) - jnp.sum(jnp.log(jnp.diag(lb)))
            - 0.5 * n * jnp.log(s2) - 0.5 * yy / s2 + 0.5 * jnp.dot(c, c)
            - 0.5 * kdiag_sum / s2 + 0.5 * jnp.trace(aat))


def sgpr_bound(params, x, y):
    """Plain: Kuf and A = L^-1 Kuf / sigma are [M, N] matrices."""
    z, ls, var, s2 = _unpack(params)
    m = z.shape[0]
    kuu = _rbf(z, z, ls, var) + JITTER * jnp.eye(m, dtype=z.dtype)
    l = jnp.linalg.cholesky(kuu)
    kuf = _rbf(z, x, ls, var)
    a = solve_triangular(l, kuf, lower=True) / jnp.sqrt(s2)
    kdiag = var * jnp.exp(-0.5 * jnp.sum(((x - x) / ls) ** 2, -1))  # k(x_i, x_i)
    return _bound_from(x.shape[0], l, s2, a @ a.T, a @ y, jnp.dot(y, y), jnp.sum(kdiag))


def sgpr_bound_chunked(params, x, y, block):
    """Hand-chunked over N: accumulates Kuf Kuf^T, Kuf y, sum k(x,x) and y.y
    per chunk (the chunk's contribution under jax.checkpoint, so the gradient
    recomputes Kuf per chunk instead of keeping it), then forms
    A A^T = L^-1 (Kuf Kuf^T) L^-T / s2 and A y = L^-1 Kuf y / sigma."""
    z, ls, var, s2 = _unpack(params)
    m, n = z.shape[0], x.shape[0]
    kuu = _rbf(z, z, ls, var) + JITTER * jnp.eye(m, dtype=z.dtype)
    l = jnp.linalg.cholesky(kuu)

    @jax.checkpoint
    def part(z, ls, var, xc, yc):
        kc = _rbf(z, xc, ls, var)
        kdiag = var * jnp.exp(-0.5 * jnp.sum(((xc - xc) / ls) ** 2, -1))
        return kc @ kc.T, kc @ yc, jnp.sum(kdiag), jnp.dot(yc, yc)

    def step(acc, chunk):
        got = part(z, ls, var, *chunk)
        return tuple(a + g for a, g in zip(acc, got)), None

    zero = (jnp.zeros((m, m), x.dtype), jnp.zeros((m,), x.dtype),
            jnp.zeros((), x.dtype), jnp.zeros((), x.dtype))
    chunks = (x.reshape(n // block, block, x.shape[1]), y.reshape(n // block, block))
    (kk, ky, kdiag_sum, yy), _ = jax.lax.scan(step, zero, chunks)
    li_kk = solve_triangular(l, kk, lower=True)
    aat = solve_triangular(l, li_kk.T, lower=True).T / s2  # L^-1 KK L^-T / s2
    ay = solve_triangular(l, ky, lower=True) / jnp.sqrt(s2)
    return _bound_from(n, l, s2, aat, ay, yy, kdiag_sum)


def sgpr_bound_chunked_same(params, x, y, block):
    """Hand-chunked over N with the plain program's own algebra: A_c = L^-1
    Kuf_c / sigma per chunk (a triangular solve of every chunk), accumulating
    A A^T and A y under jax.checkpoint. What a user gets by chunking their own
    code without re-deriving it; `sgpr_bound_chunked` is the re-derived one."""
    z, ls, var, s2 = _unpack(params)
    m, n = z.shape[0], x.shape[0]
    kuu = _rbf(z, z, ls, var) + JITTER * jnp.eye(m, dtype=z.dtype)
    l = jnp.linalg.cholesky(kuu)

    @jax.checkpoint
    def part(l, z, ls, var, s2, xc, yc):
        ac = solve_triangular(l, _rbf(z, xc, ls, var), lower=True) / jnp.sqrt(s2)
        kdiag = var * jnp.exp(-0.5 * jnp.sum(((xc - xc) / ls) ** 2, -1))
        return ac @ ac.T, ac @ yc, jnp.sum(kdiag), jnp.dot(yc, yc)

    def step(acc, chunk):
        got = part(l, z, ls, var, s2, *chunk)
        return tuple(a + g for a, g in zip(acc, got)), None

    zero = (jnp.zeros((m, m), x.dtype), jnp.zeros((m,), x.dtype),
            jnp.zeros((), x.dtype), jnp.zeros((), x.dtype))
    chunks = (x.reshape(n // block, block, x.shape[1]), y.reshape(n // block, block))
    (aat, ay, kdiag_sum, yy), _ = jax.lax.scan(step, zero, chunks)
    return _bound_from(n, l, s2, aat, ay, yy, kdiag_sum)


def sgpr_bound_chunked_inverse(params, x, y, block):
    """Hand-chunked over N with the plain algebra and the factor's inverse
    formed once: A_c = (L^-1) Kuf_c / sigma, a GEMM per chunk (the issue's
    fast form; its accuracy is what the float64 check reports)."""
    z, ls, var, s2 = _unpack(params)
    m, n = z.shape[0], x.shape[0]
    kuu = _rbf(z, z, ls, var) + JITTER * jnp.eye(m, dtype=z.dtype)
    li = solve_triangular(jnp.linalg.cholesky(kuu), jnp.eye(m, dtype=z.dtype), lower=True)

    @jax.checkpoint
    def part(li, z, ls, var, s2, xc, yc):
        ac = li @ _rbf(z, xc, ls, var) / jnp.sqrt(s2)
        kdiag = var * jnp.exp(-0.5 * jnp.sum(((xc - xc) / ls) ** 2, -1))
        return ac @ ac.T, ac @ yc, jnp.sum(kdiag), jnp.dot(yc, yc)

    def step(acc, chunk):
        got = part(li, z, ls, var, s2, *chunk)
        return tuple(a + g for a, g in zip(acc, got)), None

    zero = (jnp.zeros((m, m), x.dtype), jnp.zeros((m,), x.dtype),
            jnp.zeros((), x.dtype), jnp.zeros((), x.dtype))
    chunks = (x.reshape(n // block, block, x.shape[1]), y.reshape(n // block, block))
    (aat, ay, kdiag_sum, yy), _ = jax.lax.scan(step, zero, chunks)
    return _bound_from(n, None, s2, aat, ay, yy, kdiag_sum)


def _sgpr_sizes(quick):
    return (20_000, 125) if quick else (500_000, 1_000)


# The SGPR data sets: the bench's (well-conditioned Kuu), and two
# ill-conditioned ones. "long": a lengthscale of 3.0 over the same points,
# cond(Kuu + jitter) 6.5e4 at M=1,000 (numpy, float64): the re-derived
# algebra, which squares it, returns NaN in float32, while the textbook
# algebra stays within 1e-5 of float64 (the issue's own example). "ill":
# the inducing points drawn close together (0.3 of the data's spread) and a
# lengthscale of 2.5, cond 7.1e6, near float32's 1/eps: even Kuu's float32
# Cholesky factor puts every float32 contender 1e-4 off float64.
SGPR_DATA = {"bench": (1.0, 1.5), "long": (1.0, 3.0), "ill": (0.3, 2.5)}
SGPR_DATA_NAMES = {"bench": "the bench's data", "long": "long lengthscale (Kuu cond 6.5e4)",
                   "ill": "ill-conditioned Kuu (cond 7.1e6)"}


def _sgpr_args(quick, data="bench"):
    """(params, x, y) for one of SGPR_DATA: inducing points spread over the
    data (scaled towards their centre for "ill"), and its lengthscale."""
    n, m = _sgpr_sizes(quick)
    d = 8
    x = jnp.asarray(np.random.default_rng(3).random((n, d), np.float32) * 6 - 3)
    y = jnp.sin(x).sum(-1) + 0.1 * _normal(4, (n,))
    z = x[:: n // m][:m] + 0.01 * _normal(5, (m, d))
    scale, ls = SGPR_DATA[data]
    if scale != 1.0:
        z = scale * z
    params = (z, jnp.log(jnp.full((d,), ls, jnp.float32)), jnp.zeros((), jnp.float32),
              jnp.log(jnp.asarray(0.05, jnp.float32)))
    return params, x, y


def _bound64(params, x, y):
    """The bound in float64 (the plain program's algebra, chunked so that
    it fits): the reference every contender's bound is judged against."""
    with jax.enable_x64(True):
        p64, x64, y64 = jax.tree_util.tree_map(
            lambda a: jnp.asarray(np.asarray(a), jnp.float64), (params, x, y))
        f = jax.jit(lambda p, x, y: sgpr_bound_chunked_same(p, x, y, 2_000))
        return float(f(p64, x64, y64))


def _sgpr_check(outs: dict) -> str:
    """Agreement with the reference contender, and every contender's bound
    against float64 (the issue's rule: within 1e-5 relative)."""
    params, x, y = outs["_args"]
    ref = _bound64(params, x, y)
    errs = []
    for name, o in outs.items():
        if name == "_args":
            continue
        b = float(np.asarray(jax.tree_util.tree_leaves(o)[0]))
        rel = abs(b - ref) / abs(ref) if np.isfinite(b) else float("inf")
        errs.append(f"{name}: {'NaN' if np.isnan(b) else f'{rel:.1e}'}"
                    + ("" if rel <= 1e-5 else " (over 1e-5)"))
    return _close_check(outs) + f"; bound vs float64 ({ref:.6g}): " + "; ".join(errs)


def row_sgpr(quick: bool, data: str = "bench"):
    n, m = _sgpr_sizes(quick)
    block = 2_000 if quick else 2_500  # 2,500: the gradient fits 256 MiB too (231 MiB)
    limit = "16MiB" if quick else "256MiB"
    plain = jax.value_and_grad(sgpr_bound)
    hand = jax.value_and_grad(lambda p, x, y: sgpr_bound_chunked(p, x, y, block))
    same = jax.value_and_grad(lambda p, x, y: sgpr_bound_chunked_same(p, x, y, block))
    inverse = jax.value_and_grad(lambda p, x, y: sgpr_bound_chunked_inverse(p, x, y, block))
    args = lambda: _sgpr_args(quick, data)  # noqa: E731
    key = "sgpr" if data == "bench" else f"sgpr_{data}"
    return Row(key, f"SGPR bound + grad N={n:,} M={m:,} D=8, {SGPR_DATA_NAMES[data]}", [
        Variant("plain jax", "jax", lambda: (jax.jit(plain), args())),
        Variant(f"hand-chunked, re-derived (Kuf Kuf^T per chunk, {block:,} points)", "jax",
                lambda: (jax.jit(hand), args()), ref="re-derived"),
        Variant(f"hand-chunked, the plain algebra (L^-1 Kuf per chunk, {block:,} points)",
                "jax", lambda: (jax.jit(same), args()), ref="hand-chunked"),
        Variant(f"hand-chunked, the plain algebra with L^-1 formed once (a GEMM per chunk, "
                f"{block:,} points)", "jax", lambda: (jax.jit(inverse), args()),
                ref="hand-inverse"),
        Variant("memfit", "memfit",
                lambda: (memfit.jit(plain, memory_limit=limit), args()), limit=limit),
    ], goals={"hand-chunked": ("<=", 1.05), "hand-inverse": ("<=", 1.05),
              "re-derived": ("report", None)},
        check=_sgpr_check)


def row_sgpr_ill(quick: bool):
    return row_sgpr(quick, "ill")


def row_sgpr_long(quick: bool):
    return row_sgpr(quick, "long")


# --------------------------------------------------------------- attention

def attention(q, k, v):
    """softmax(Q K^T / sqrt(d)) V per head; q, k, v: [H, S, d]."""
    s = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(q.shape[-1]).astype(np.float32)
    return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, -1), v)


def attention_chunked(q, k, v, block, remat=False):
    """Hand-written: lax.map over blocks of queries, [H, block, S] scores each."""
    h, s, d = q.shape
    one = (lambda qb: attention(qb, k, v))
    if remat:
        one = jax.checkpoint(one)
    qb = q.reshape(h, s // block, block, d).transpose(1, 0, 2, 3)
    out = jax.lax.map(one, qb)                                     # [n, H, block, d]
    return out.transpose(1, 0, 2, 3).reshape(h, s, d)


def _attn_sizes(quick, big=False):
    if big:
        return (1, 8_192) if quick else (1, 65_536)
    return (4, 1_024) if quick else (8, 16_384)


def _attn_args(quick, big=False, grad=False):
    h, s = _attn_sizes(quick, big)
    args = tuple(_normal(i, (h, s, 64)) for i in (6, 7, 8))
    return args + ((_normal(9, (h, s, 64)),) if grad else ())


def _attn_grad(att):
    def f(q, k, v, g):  # the cotangent g is an input: a real backward pass
        return jax.grad(lambda q, k, v: jnp.sum(att(q, k, v) * g), argnums=(0, 1, 2))(q, k, v)
    return f


def row_attention(quick: bool, grad: bool = False, big: bool = False):
    h, s = _attn_sizes(quick, big)
    block = 128 if grad else 256
    limit = "16MiB" if quick else "512MiB"
    plain = _attn_grad(attention) if grad else attention
    hand = (_attn_grad(lambda q, k, v: attention_chunked(q, k, v, block, remat=True)) if grad
            else (lambda q, k, v: attention_chunked(q, k, v, block)))
    what = "forward + backward" if grad else "forward"
    args = lambda: _attn_args(quick, big, grad)
    var = [Variant("plain jax", "jax", lambda: (jax.jit(plain), args())),
           Variant(f"hand-written chunked ({block} queries"
                   + (", checkpointed)" if grad else ")"), "jax",
                   lambda: (jax.jit(hand), args()), ref="hand-chunked"),
           Variant("memfit", "memfit", lambda: (memfit.jit(plain, memory_limit=limit), args()),
                   limit=limit)]
    key = "attention_" + ("big" if big else "fwdbwd" if grad else "fwd")
    name = f"attention {what}, {h} heads S={s:,} d=64"
    if big:
        return Row(key, name + " (big)", [var[0], var[2]], goals={}, big=True)
    return Row(key, name, var, goals={"hand-chunked": ("<=", 1.00)}, check=_close_check)


def row_attention_fwd(quick):
    return row_attention(quick)


def row_attention_fwdbwd(quick):
    return row_attention(quick, grad=True)


def row_attention_big(quick):
    return row_attention(quick, big=True)


# ------------------------------------------------------------- transformer

def _transformer_params(d):
    """examples.transformer_params' shapes, drawn with numpy (see _normal)."""
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d),
              "w1": (d, 4 * d), "w2": (4 * d, d)}
    p = {k: _normal(20 + i, sh) / np.float32(np.sqrt(sh[0]))
         for i, (k, sh) in enumerate(shapes.items())}
    p.update(g1=jnp.ones(d), b1=jnp.zeros(d), g2=jnp.ones(d), b2=jnp.zeros(d))
    return p


def row_transformer(quick: bool):
    """A transformer block's SGD step (2 heads, d=64) at a limit 10x below
    jax's need (jax: 1.53 GiB at S=8,192, measured compile-only)."""
    s, d = (1_024, 64) if quick else (8_192, 64)
    limit = "5MiB" if quick else "150MiB"
    step = lambda p, x, t: examples.transformer_train_step(p, x, t, heads=2)
    args = lambda: (_transformer_params(d), _normal(10, (s, d)), _normal(11, (s, d)))
    return Row("transformer", f"transformer block SGD step, 2 heads S={s:,} d={d}", [
        Variant("plain jax", "jax", lambda: (jax.jit(step), args())),
        Variant("memfit", "memfit", lambda: (memfit.jit(step, memory_limit=limit), args()),
                limit=limit),
    ], goals={}, check=_close_check)


# ------------------------------------------------- programs that fit

def _fits_row(key, program, plain, args):
    """A program that fits: memfit.jit with a limit far above its need must
    leave it as it is (no loop, no rewrite) and cost <= 1.02x plain jax."""
    kept_of = []  # the memfit.jit made for the run, for the check's report

    def made():
        fn = memfit.jit(plain, memory_limit="8GiB")
        kept_of.append(fn)
        return fn, args()

    def check(outs):
        fn, a = kept_of[-1], outs["_args"]
        rep = fn.report()
        same = (memfit.measure.hlo_without_metadata(fn.lower(*a).compile().as_text())
                == memfit.measure.hlo_without_metadata(jax.jit(plain).lower(*a).compile()
                                                       .as_text()))
        what = (f"memfit kept {len(rep.loops)} loops, rewrites {rep.rewrites or 'none'}, "
                f"XLA bytes {_fmt_bytes(rep.xla_bytes_before)} -> "
                f"{_fmt_bytes(rep.xla_bytes_after)}, compiled HLO "
                + ("identical to jax's" if same else "differs from jax's"))
        return what + "; " + _close_check(outs)

    return Row(key, program + " (fits; memfit at 8 GiB)", [
        Variant("plain jax", "jax", lambda: (jax.jit(plain), args())),
        Variant("memfit", "memfit", made, limit="8GiB"),
    ], goals={"plain jax": ("<=", 1.02)}, check=check)


def row_fits_transformer(quick: bool):
    s, d = (256, 64) if quick else (1_024, 64)
    step = lambda p, x, t: examples.transformer_train_step(p, x, t, heads=2)  # noqa: E731
    return _fits_row("fits_transformer", f"transformer block SGD step, 2 heads S={s:,} d={d}",
                     step, lambda: (_transformer_params(d), _normal(10, (s, d)),
                                    _normal(11, (s, d))))


def row_fits_attention(quick: bool):
    h, s = (2, 512) if quick else (4, 2_048)
    return _fits_row("fits_attention", f"attention forward + backward, {h} heads S={s:,} d=64",
                     _attn_grad(attention),
                     lambda: tuple(_normal(i, (h, s, 64)) for i in (6, 7, 8, 9)))


def row_fits_sgpr(quick: bool):
    n, m = (5_000, 64) if quick else (20_000, 125)

    def args():
        x = jnp.asarray(np.random.default_rng(3).random((n, 8), np.float32) * 6 - 3)
        y = jnp.sin(x).sum(-1) + 0.1 * _normal(4, (n,))
        z = x[:: n // m][:m] + 0.01 * _normal(5, (m, 8))
        return ((z, jnp.log(jnp.full((8,), 1.5, jnp.float32)), jnp.zeros((), jnp.float32),
                 jnp.log(jnp.asarray(0.05, jnp.float32))), x, y)
    return _fits_row("fits_sgpr", f"SGPR bound + grad N={n:,} M={m:,} D=8",
                     jax.value_and_grad(sgpr_bound), args)


def _close_check(outs: dict) -> str:
    ref_name = "plain jax" if "plain jax" in outs else next(
        k for k in outs if k.startswith("hand"))
    want = [np.asarray(w, np.float64) for w in jax.tree_util.tree_leaves(outs[ref_name])]
    notes = []
    for name, o in outs.items():
        if name in ("_args", ref_name):
            continue
        got = [np.asarray(g, np.float64) for g in jax.tree_util.tree_leaves(o)]
        err = max(float(np.max(np.abs(w - g))) / max(float(np.max(np.abs(w))), 1e-30)
                  for w, g in zip(want, got))
        notes.append(f"{name}: max rel err {err:.1e}")
    return f"vs {ref_name}: " + "; ".join(notes)


# ------------------------------------------------------------------ rows

@dataclass
class Variant:
    name: str
    kind: str                  # "jax" | "memfit" | "ext"
    make: Callable             # () -> (callable, args)
    ref: str = ""              # the goal key this variant is ("hand-chunked")
    limit: str = ""
    needs: str = ""            # optional module


@dataclass
class Row:
    key: str
    program: str
    variants: list
    goals: dict = field(default_factory=dict)   # goal key -> (op, bound)
    check: Callable | None = None
    big: bool = False          # jax compile-only; memfit timed once in the subprocess


# cheapest first: rows print as they finish
ROWS = [row_knn, row_knn_fits, row_fits_transformer, row_fits_attention, row_fits_sgpr,
        row_transformer, row_sgpr, row_sgpr_long, row_sgpr_ill, row_knn_big, row_attention_fwd,
        row_attention_big, row_attention_fwdbwd]
ROW_KEYS = ["knn", "knn_fits", "fits_transformer", "fits_attention", "fits_sgpr",
            "transformer", "sgpr", "sgpr_long", "sgpr_ill", "knn_big", "attention_fwd", "attention_big",
            "attention_fwdbwd"]


def build(row: str, variant: str, quick: bool = False):
    """(callable, args) for peak_rss_growth's subprocess."""
    spec = ROWS[ROW_KEYS.index(row)](quick)
    return next(v for v in spec.variants if v.name == variant).make()


def _one_line(e: BaseException) -> str:
    diags = getattr(e, "diagnostics", None)
    msg = diags[0].get("message", "") if diags else str(e)
    msg = " ".join(msg.split()).replace("memfit-split: ", "")
    msg = msg.replace(os.path.dirname(os.path.abspath(__file__)) + os.sep, "")
    # the head names the op, the tail the smallest limit memfit can reach
    return msg if len(msg) <= 260 else msg[:150] + " ... " + msg[-105:]


def _compile(fn, args, is_memfit=False):
    """(what runs, XLA's accounted bytes with ynn fusions off, memfit's times:
    its passes over every margin it tried, XLA's compile of the kept program,
    and how many compiles the calibration made)."""
    if not is_memfit:
        lowered = fn.lower(*args)
        return lowered.compile(), xla_bytes(lowered.compile(compiler_options=ACCOUNTING_OPTIONS)), None
    t = time.perf_counter()
    fn.lower(*args)  # calibrates with ynn off, compiles the kept program to run
    total = time.perf_counter() - t
    cal = fn.last_calibration
    return fn, xla_bytes(cal.kept.compiled), {
        "pass_s": cal.pass_seconds, "compile_s": cal.kept.compile_s,
        "compiles": len(cal.attempts), "total_s": total, "scratch": cal.kept.scratch_bytes}


def _rss(row: str, variant: str, quick: bool, timeout: float) -> dict:
    # the subprocess imports this file as `bench_race` from its folder
    return peak_rss_growth("bench_race:build", timeout=timeout,
                           cwd=os.path.dirname(os.path.abspath(__file__)),
                           row=row, variant=variant, quick=quick)


def run_row(spec: Row, opts) -> tuple[list[dict], list[str]]:
    """One table line per variant, and notes (checks, errors)."""
    lines, notes, runnable, outs = [], [], {}, {}
    mf_failed = False
    for v in spec.variants:
        line = {"program": spec.program, "variant": v.name, "limit": v.limit, "v": v}
        lines.append(line)
        if v.needs:
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # KeOps' CUDA warning
                    __import__(v.needs)
            except ImportError:
                line["note"] = f"{v.needs} not installed (make bench-deps)"
                continue
        try:
            fn, args = v.make()
            if v.kind == "ext":
                runnable[v.name] = (fn, args)
                continue
            compiled, accounted, times = _compile(fn, args, v.kind == "memfit")
        except memfit.MemfitError as e:
            line["note"] = f"not split: {_one_line(e)}"
            mf_failed = True
            continue
        except Exception as e:  # noqa: BLE001 - a row must not end the bench
            line["note"] = f"failed: {type(e).__name__}: {_one_line(e)}"
            mf_failed |= v.kind == "memfit"
            continue
        line["xla"] = accounted
        if times:
            line.update(times)
        if v.kind == "jax" and (spec.big or line["xla"] > opts.run_cap * GiB):
            line["note"] = "compile-only, never run: " + (
                "needs more than this machine's 24 GiB" if line["xla"] > 24 * GiB else
                f"needs more than --run-cap {opts.run_cap:g} GiB" if not spec.big else
                "the big row")
            continue
        runnable[v.name] = (compiled, args)
    if mf_failed and not opts.time_unsplit:
        for line in lines:
            if line["variant"] in runnable:
                line.setdefault("note", "not timed: memfit did not split this row")
        return lines, notes
    if spec.big:  # memfit alone: one run, in the subprocess that measures its RSS
        for line in lines:
            if line["variant"] in runnable:
                r = _rss(spec.key, line["variant"], opts.quick, opts.timeout)
                line["time"], line["rss"], line["runs"] = r["seconds"], r["growth"], 1
        return lines, notes
    # results once (and the first run of every contender), then the check
    # (this first run of every contender is also the timing's warm-up)
    outs["_args"] = next(a for _, a in runnable.values() if a)
    for name, (fn, args) in runnable.items():
        outs[name] = jax.block_until_ready(fn(*args))
    if spec.check and len(runnable) > 1:
        try:
            notes.append(spec.check(outs))
        except Exception as e:  # noqa: BLE001
            notes.append(f"check failed: {type(e).__name__}: {e}")
    del outs
    med = interleaved_medians({n: (lambda f=f, a=a: f(*a)) for n, (f, a) in runnable.items()},
                              repeats=opts.rounds, warmup=0)
    for line in lines:
        if line["variant"] in med:
            line["time"], line["runs"] = med[line["variant"]], opts.rounds
            if not opts.no_rss:
                try:
                    line["rss"] = _rss(spec.key, line["variant"], opts.quick,
                                       opts.timeout)["growth"]
                except Exception as e:  # noqa: BLE001
                    notes.append(f"RSS of {line['variant']}: {_one_line(e)[-200:]}")
    return lines, notes


def _fmt_bytes(b):
    if b is None:
        return "-"
    return f"{b / GiB:.2f} GiB" if b >= GiB else f"{b / MiB:.1f} MiB"


HEADER = ("| program | variant | time (s) | memfit / this | goal | limit | XLA bytes "
          "| peak RSS+ | pass / compile |\n|---|---|---|---|---|---|---|---|---|")


def table(rows: list[tuple[Row, list[dict]]]) -> tuple[str, list[str]]:
    """Markdown lines (no header) and the goals missed."""
    out, missed = [], []
    for spec, lines in rows:
        mf = next((ln for ln in lines if ln["v"].kind == "memfit"), None)
        t_mf = mf.get("time") if mf else None
        for ln in lines:
            v = ln["v"]
            goal = spec.goals.get(v.ref or v.name)
            ratio = gtxt = ""
            if v.kind != "memfit" and t_mf and ln.get("time"):
                r = t_mf / ln["time"]
                ratio = f"{r:.2f}x"
                if goal and goal[0] == "<=":
                    ok = r <= goal[1]
                    gtxt = f"<= {goal[1]:g}x " + ("met" if ok else "MISSED")
                    if not ok:
                        missed.append(f"{spec.program}: memfit / {v.name} = {r:.2f}x "
                                      f"(goal <= {goal[1]:g}x; {t_mf:.3f} s vs {ln['time']:.3f} s)")
                elif goal:
                    gtxt = "report"
            elif goal:
                gtxt = (f"<= {goal[1]:g}x" if goal[0] == "<=" else "report")
            if v.kind == "memfit" and ln.get("xla") is not None:
                lim = memfit.parse_memory_size(v.limit)
                ok = ln["xla"] <= lim
                gtxt = f"fits {v.limit}: " + ("yes" if ok else "NO")
                if not ok:
                    missed.append(f"{spec.program}: memfit's XLA bytes "
                                  f"{_fmt_bytes(ln['xla'])} > limit {v.limit}")
                if ln.get("rss") is not None:
                    gtxt += "; RSS+ " + ("within" if ln["rss"] <= lim else "OVER")
                    if ln["rss"] > lim:
                        missed.append(f"{spec.program}: memfit's RSS+ {_fmt_bytes(ln['rss'])} "
                                      f"> limit {v.limit} (ynn on)")
            pc = ""
            if "pass_s" in ln:
                frac = ln["pass_s"] / ln["compile_s"]
                pc = (f"{ln['pass_s']:.2f} / {ln['compile_s']:.2f} s = {frac:.0%} "
                      f"({ln['compiles']} compiles: {ln['total_s']:.1f} s)")
                if frac > 0.10:
                    missed.append(f"{spec.program}: memfit pass time {ln['pass_s']:.2f} s = "
                                  f"{frac:.0%} of XLA's compile {ln['compile_s']:.2f} s (goal <= 10%)")
            scratch = (f" + {_fmt_bytes(ln['scratch'])} dot scratch" if ln.get("scratch")
                       else "")
            t = f"{ln['time']:.3f}" if ln.get("time") is not None else "-"
            if ln.get("runs") == 1:
                t += " (1 run, ynn on)"
            vname = v.name + (f" — {ln['note']}" if ln.get("note") else "")
            out.append(f"| {spec.program} | {vname} | {t} | {ratio or '-'} | {gtxt or '-'} "
                       f"| {v.limit or '-'} | {_fmt_bytes(ln.get('xla'))}{scratch} "
                       f"| {_fmt_bytes(ln.get('rss'))} | {pc or '-'} |")
            if v.kind == "memfit" and ln.get("note", "").startswith(("not split", "failed")):
                missed.append(f"{spec.program}: {ln['note']}")
    return "\n".join(out), missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _results.add_write_flag(ap)
    ap.add_argument("--quick", action="store_true", help="small sizes (< 2 min)")
    ap.add_argument("--rows", default=",".join(ROW_KEYS),
                    help=f"comma-separated subset of {','.join(ROW_KEYS)}")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved runs (>= 5)")
    ap.add_argument("--no-rss", action="store_true")
    ap.add_argument("--run-cap", type=float, default=12.0,
                    help="GiB of accounted bytes above which plain jax is only compiled")
    ap.add_argument("--time-unsplit", action="store_true",
                    help="time the other contenders of rows memfit cannot split")
    ap.add_argument("--timeout", type=float, default=900, help="per RSS subprocess (s)")
    opts = ap.parse_args()
    keys = [k.strip() for k in opts.rows.split(",") if k.strip()]
    for k in keys:
        if k not in ROW_KEYS:
            ap.error(f"unknown row {k!r}; rows: {', '.join(ROW_KEYS)}")
    t0 = time.perf_counter()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; jax {jax.__version__}; "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}\n")
    print(f"memfit race ({'quick' if opts.quick else 'full'} sizes; time: median of "
          f"{opts.rounds} interleaved runs after one warm-up, jax defaults (ynn on); memfit / "
          f"this: memfit's time over the variant's; XLA bytes: argument + output + temp - "
          f"alias, compiled with ynn off (memfit: + its estimate of XLA:CPU's library dots' "
          f"packing scratch, memfit.runtime_scratch, which its calibration counts); peak RSS+: fresh subprocess, one run, default "
          f"flags; pass / compile: "
          f"memfit's passes (every margin tried) vs XLA's compile of the kept program, "
          f"then the calibration's compiles and memfit.jit's whole lower(); "
          f"{os.cpu_count()} cores)\n", flush=True)
    print(HEADER, flush=True)
    missed, notes = [], []
    for key in keys:
        spec = ROWS[ROW_KEYS.index(key)](opts.quick)
        t = time.perf_counter()
        lines, row_notes = run_row(spec, opts)
        text, row_missed = table([(spec, lines)])
        print(text, flush=True)
        missed += row_missed
        notes += [f"{spec.program}: {n}" for n in row_notes]
        print(f"... {spec.key} done in {time.perf_counter() - t:.0f} s", file=sys.stderr,
              flush=True)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    if notes:
        print("\nchecks:")
        for n in notes:
            print(f"- {n}")
    if missed:
        print("\nmissed:")
        for m in missed:
            print(f"- {m}")


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
