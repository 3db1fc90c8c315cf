"""Where memfit's split kNN spends its time, against the hand-written two-level form.

memfit.jit's kNN (the bench_race row: N=200k points, M=2k queries, D=32,
k=10, 64 MiB) is the exact kNN rewrite's two-level loop: query chunks and
point tiles sized by Analysis/KnnTiles from a measured time model, the L2
size and the memory limit (printed: its query chunk and tile). The
hand-written two-level form below is the reference it was built from.

This bench times, side by side in one interleaved run (jax defaults):

* memfit.jit at the row's limit;
* replicas of memfit's loop body in plain jax at a chunk of C queries, cut
  after each stage (``--stages``): the GEMM and the key block maxima
  (stage 1), + top_k of the maxima (stage 2), + the candidates' top_k and
  the exact recompute (everything), to show where the time goes;
* a hand-written **two-level** exact kNN: an outer loop over query chunks of
  C, an inner loop over point tiles of NB so that the [C, NB] distance tile
  stays in the core's L2 cache (C * NB * 4 bytes about 1.3 MB); the inner
  loop keeps only each block's maximum (blocks of B points, integer keys
  of lax.top_k's order), the data is centred per tile (no centred copy of
  x), then the KB best blocks' points get their exact distances (the
  program's own formula), top_k of those, and a certificate per row (every
  point of an unpicked block has expanded distance >= the KB-th block's
  maximum, so its true distance is >= that minus the rounding bound of
  memfit's kNN rewrite); uncertified rows are recomputed exactly in a
  while loop. Its index sets are checked against plain jax;
* faiss ``IndexFlatL2.search`` (``make bench-deps``).

    .venv/bin/python bench/bench_knn_tiles.py                 # the race's row
    .venv/bin/python bench/bench_knn_tiles.py --m 500 --d 128 --c 100
    .venv/bin/python bench/bench_knn_tiles.py --stages        # + stage replicas
    .venv/bin/python bench/bench_knn_tiles.py --check         # exactness, hard data

    .venv/bin/python bench/bench_knn_tiles.py --data offset --d 3   # low-dim, far from 0

``--sweep`` times memfit's tile pick (Analysis/KnnTiles) against a 3 x 3
grid of chunk and tile sizes around it, in the hand form, one interleaved
run per shape (docs/speed.md).

    .venv/bin/python bench/bench_knn_tiles.py --sweep --repeats 3

``--floor`` measures memfit.jit against its floor on held-out shapes
(FLOOR_SHAPES: N 50k-1M, D 3-256, k 1-100; uniform, clustered, offset and
Gaussian data; limit 64 MiB + the arguments): the GEMM alone at memfit's own
chunks and tiles (the tile loop writing its [C, NB] values, no maxima, no
top_k), and bench_race's hand-chunked ``lax.map`` over 50 queries, as
ratios side by side; the index sets of the first 200 rows against plain
jax. ``--breakdown`` adds the hand replica of memfit's loop at its tiles cut
after each stage (STOPS); ``--layouts`` times the tile loop's block maxima
in the layouts of LAYOUTS instead, ``--blocks 4,5,10,20`` the hand replica
at those block sizes (what Analysis/KnnTiles's per-candidate cost is fitted
to).

    .venv/bin/python bench/bench_knn_tiles.py --floor --repeats 3
    .venv/bin/python bench/bench_knn_tiles.py --floor --breakdown --shapes 0,2
    .venv/bin/python bench/bench_knn_tiles.py --floor --layouts --shapes 0,2
    .venv/bin/python bench/bench_knn_tiles.py --floor --blocks 4,5,10,20 --shapes 3
"""
from __future__ import annotations

import argparse
import os
import sys
import re
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import memfit
from memfit.measure import ACCOUNTING_OPTIONS, cpu_model, xla_bytes

import _results  # noqa: E402  (this script's folder is on sys.path)

MiB = 1024 * 1024


def knn_plain(k):
    def knn(q, x):
        d = jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, -1)
        return lax.top_k(-d, k)
    return knn


def _keys(v):
    """int32 keys whose order is lax.top_k's total order of float32 values
    (the map is its own inverse)."""
    bits = lax.bitcast_convert_type(v, jnp.int32)
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


def _from_keys(kk):
    return lax.bitcast_convert_type(_keys(kk), jnp.float32)


def _exact_row(q0, x, k, nb):
    """The program's own formula for one query, tile by tile (the [N, D]
    difference is never whole)."""
    n, dim = x.shape

    def tile(j, d):
        j0 = jnp.minimum(j * nb, n - nb)  # the last tile clamped
        xt = lax.dynamic_slice(x, (j0, 0), (nb, dim))
        return lax.dynamic_update_slice(d, jnp.sum((q0[None, :] - xt) ** 2, -1), (j0,))

    d = lax.fori_loop(0, -(-n // nb), tile, jnp.zeros((n,), x.dtype))
    return lax.top_k(-d, k)


def knn_two_level(k, c, nb, b, kb, part=0, stop=5):
    """Exact kNN in a two-level loop (module docstring), the structure
    memfit emits (except that memfit picks from long rows of block maxima
    in two stages, TwoStageTopK's model; here one top_k); returns (values,
    indices) as lax.top_k(-d, k), and the number of uncertified rows. ``part``: rows whose candidates are made at
    once (0: the whole chunk). ``stop`` cuts it after a stage (STOPS, for
    --floor's breakdown); 5 is the whole kNN."""
    part = part or c

    def f(q, x):
        m, dim = q.shape
        n = x.shape[0]
        assert n % b == 0 and nb % b == 0 and c <= m and nb <= n and part <= c, (m, c, n, nb, b)
        # as memfit's loops: a last chunk, tile or part that does not fit
        # evenly starts early (clamped) and recomputes part of the one before
        chunks, tiles, parts = -(-m // c), -(-n // nb), -(-c // part)
        u = 2.0 ** -24
        expanded_bound = 2.0 * (2.0 * dim + 9.0) * u
        direct_bound = 2.0 * (dim + 3.0) * u
        mu = jnp.mean(x, 0)

        def candidates(maxima, q0, qq, max_norm):
            # the kb blocks with the largest maxima of 2 q.x - |x|^2; |q|^2
            # minus the kb-th is the kb-th smallest expanded distance
            rows = q0.shape[0]
            yes = jnp.ones((rows,), bool)
            if stop == 1:  # the maxima read once (a max), nothing else
                v = jnp.broadcast_to(_from_keys(jnp.max(maxima, 1))[:, None], (rows, k))
                return v, jnp.zeros((rows, k), jnp.int32), yes
            top, blocks = lax.top_k(_from_keys(maxima), kb)
            if stop == 2:
                return top[:, :k], blocks[:, :k], yes
            pos = (jnp.sort(blocks, 1)[:, :, None] * b + jnp.arange(b)).reshape(-1, kb * b)
            d = jnp.sum((q0[:, None, :] - x[pos]) ** 2, -1)
            if stop == 3:  # every distance read (a min): none sliced away
                v = jnp.broadcast_to(jnp.min(d, 1)[:, None], (rows, k))
                return v, pos[:, :k], yes
            v, at = lax.top_k(-d, k)
            if stop == 4:
                return v, jnp.take_along_axis(pos, at, 1), yes
            # the last of each top_k as a min, not a slice at kb - 1 / k - 1:
            # with that slice XLA:CPU sorts the whole row instead of its TopK
            lower = (qq - jnp.min(top, 1) - expanded_bound * (qq + max_norm)) * (1.0 - direct_bound)
            good = (lower > -jnp.min(v, 1)) & jnp.all(d == d, 1)
            return v, jnp.take_along_axis(pos, at, 1), good

        def chunk(i, acc):
            vals, idxs, ok = acc
            start = jnp.minimum(i * c, m - c)
            q0 = lax.dynamic_slice(q, (start, 0), (c, dim))
            qc = q0 - mu
            qq = jnp.sum(qc * qc, 1)

            def tile(j, carry):
                maxima, max_norm = carry
                j0 = jnp.minimum(j * nb, n - nb)  # a multiple of b: n % b == nb % b == 0
                # the centred tile and its norms made once (an optimization
                # barrier): left to fusion, XLA:CPU's ynn fusion of the GEMM
                # recomputes them for every row block of the output (1.6x)
                xt = lax.dynamic_slice(x, (j0, 0), (nb, dim)) - mu
                xt, xx = lax.optimization_barrier((xt, jnp.sum(xt * xt, 1)))
                s = 2.0 * (qc @ xt.T) - xx[None, :]  # -expanded + |q|^2
                # the maxima made on their own (a barrier): fused into the
                # in-place update, XLA:CPU reduces on one thread
                mx = lax.optimization_barrier(jnp.max(_keys(s).reshape(c, nb // b, b), 2))
                return (lax.dynamic_update_slice(maxima, mx, (0, j0 // b)),
                        jnp.maximum(max_norm, jnp.max(xx)))

            maxima, max_norm = lax.fori_loop(
                0, tiles, tile, (jnp.zeros((c, n // b), jnp.int32), jnp.float32(-jnp.inf)))

            def one_part(r, acc):
                vals, idxs, ok = acc
                p0 = jnp.minimum(r * part, c - part)
                v, ix, good = candidates(lax.dynamic_slice(maxima, (p0, 0), (part, n // b)),
                                         lax.dynamic_slice(q0, (p0, 0), (part, dim)),
                                         lax.dynamic_slice(qq, (p0,), (part,)), max_norm)
                return (lax.dynamic_update_slice(vals, v, (start + p0, 0)),
                        lax.dynamic_update_slice(idxs, ix, (start + p0, 0)),
                        lax.dynamic_update_slice(ok, good, (start + p0,)))

            return lax.fori_loop(0, parts, one_part, (vals, idxs, ok))

        init = (jnp.zeros((m, k), q.dtype), jnp.zeros((m, k), jnp.int32), jnp.zeros((m,), bool))
        vals, idxs, ok = lax.fori_loop(0, chunks, chunk, init)
        failed = jnp.sum(~ok)
        order = jnp.argsort(ok, stable=True)  # uncertified rows first

        def repair(r, acc):
            vals, idxs = acc
            row = order[r]
            v, ix = _exact_row(q[row], x, k, nb)
            return vals.at[row].set(v), idxs.at[row].set(ix)

        vals, idxs = lax.fori_loop(0, failed, repair, (vals, idxs))
        return vals, idxs, failed
    return f


STOPS = {1: "tile loop (GEMM + block maxima)", 2: "+ top_k of the maxima",
         3: "+ gathered candidates' exact distances", 4: "+ their top_k and indices",
         5: "+ certificate and repair loop (whole kNN)"}


def gemm_alone(c, nb):
    """The floor: memfit's tile loop (chunks of c queries, tiles of nb
    points, centred per tile) writing each [c, nb] tile of 2 q.x - |x|^2
    (an optimization barrier keeps it whole) and nothing else: no maxima,
    no top_k."""
    def f(q, x):
        m, dim = q.shape
        n = x.shape[0]
        mu = jnp.mean(x, 0)

        def chunk(i, acc):
            start = jnp.minimum(i * c, m - c)
            qc = lax.dynamic_slice(q, (start, 0), (c, dim)) - mu

            def tile(j, acc):
                j0 = jnp.minimum(j * nb, n - nb)
                xt = lax.dynamic_slice(x, (j0, 0), (nb, dim)) - mu
                xt, xx = lax.optimization_barrier((xt, jnp.sum(xt * xt, 1)))
                s = lax.optimization_barrier(2.0 * (qc @ xt.T) - xx[None, :])
                return acc + s[0, 0]

            return lax.fori_loop(0, -(-n // nb), tile, acc)

        return lax.fori_loop(0, -(-m // c), chunk, jnp.float32(0))
    return f


LAYOUTS = {"keys": "memfit's: [C, NB / B, B] integer keys, max over the last dim",
           "points-major": "the GEMM's output [NB, C], max over blocks of its first dim",
           "strided": "[C, B, NB / B] keys, max over the middle dim (strided blocks)",
           "float-max": "[C, NB / B, B] floats after a barrier, a float max",
           "clamped-min": "max(expanded, 0) as int32 bits, an integer min"}


def tile_loop(c, nb, b, layout):
    """Stage 1' alone (the tile loop's block maxima, read once at the end)
    with the maxima made in one of LAYOUTS, for --layouts."""
    def maxima_of(qc, qq, xt, xx):
        if layout == "points-major":
            s = 2.0 * (xt @ qc.T) - xx[:, None]
            return jnp.max(_keys(s).reshape(nb // b, b, c), 1).T
        if layout == "clamped-min":
            s = jnp.maximum(xx[None, :] + qq[:, None] - 2.0 * (qc @ xt.T), 0.0)
            return jnp.min(lax.bitcast_convert_type(s, jnp.int32).reshape(c, nb // b, b), 2)
        s = 2.0 * (qc @ xt.T) - xx[None, :]
        if layout == "strided":
            return jnp.max(_keys(s).reshape(c, b, nb // b), 1)
        if layout == "float-max":
            return _keys(jnp.max(lax.optimization_barrier(s).reshape(c, nb // b, b), 2))
        return jnp.max(_keys(s).reshape(c, nb // b, b), 2)

    def f(q, x):
        m, dim = q.shape
        n = x.shape[0]
        mu = jnp.mean(x, 0)

        def chunk(i, acc):
            qc = lax.dynamic_slice(q, (jnp.minimum(i * c, m - c), 0), (c, dim)) - mu
            qq = jnp.sum(qc * qc, 1)

            def tile(j, maxima):
                j0 = jnp.minimum(j * nb, n - nb)
                xt = lax.dynamic_slice(x, (j0, 0), (nb, dim)) - mu
                xt, xx = lax.optimization_barrier((xt, jnp.sum(xt * xt, 1)))
                mx = lax.optimization_barrier(maxima_of(qc, qq, xt, xx))
                return lax.dynamic_update_slice(maxima, mx, (0, j0 // b))

            maxima = lax.fori_loop(0, -(-n // nb), tile, jnp.zeros((c, n // b), jnp.int32))
            return acc + jnp.max(maxima, 1).sum()

        return lax.fori_loop(0, -(-m // c), chunk, jnp.int32(0))
    return f


def knn_chunked(k, block):
    """bench_race's hand-chunked kNN: lax.map over blocks of queries, one
    [block, N] of expanded distances at a time, one top_k each."""
    def f(q, x):
        xx = jnp.sum(x * x, -1)

        def one(qb):
            d = jnp.sum(qb * qb, -1)[:, None] + xx[None, :] - 2.0 * (qb @ x.T)
            return lax.top_k(-d, k)

        m = q.shape[0]
        vals, idx = lax.map(one, q.reshape(m // block, block, q.shape[1]))
        return vals.reshape(m, k), idx.reshape(m, k)
    return f


CHECKED = 200

# Held-out shapes for --floor (none is the race's): (N, M, D, k, data).
FLOOR_SHAPES = [(500_000, 1_000, 8, 5, "uniform"), (100_000, 2_000, 128, 50, "clustered"),
                (1_000_000, 500, 3, 1, "offset"), (50_000, 4_000, 256, 100, "gauss")]


def make_data(kind, n, m, d, seed=1):
    """Queries and points: Gaussian, uniform in [0, 1]^D, 50 Gaussian
    clusters of spread 0.05, or uniform in [1000, 1001]^D (the expansion's
    hard case)."""
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        q, x = rng.random((m, d)), rng.random((n, d))
    elif kind == "offset":
        q, x = 1000 + rng.random((m, d)), 1000 + rng.random((n, d))
    elif kind == "clustered":
        centres = rng.standard_normal((50, d))
        q = centres[rng.integers(0, 50, m)] + 0.05 * rng.standard_normal((m, d))
        x = centres[rng.integers(0, 50, n)] + 0.05 * rng.standard_normal((n, d))
    else:
        q, x = rng.standard_normal((m, d)), rng.standard_normal((n, d))
    return jnp.asarray(q, jnp.float32), jnp.asarray(x, jnp.float32)


def floor(a):
    """memfit.jit against its floor (gemm_alone at memfit's own chunks and
    tiles) and against bench_race's hand-chunked lax.map, one interleaved
    run per held-out shape; with --breakdown also the hand replica of
    memfit's loop at its tiles, cut after each stage (STOPS)."""
    shapes = FLOOR_SHAPES
    if a.shapes:
        shapes = [shapes[int(i)] for i in a.shapes.split(",")]
    if a.layouts:
        layouts(a, shapes)
        return
    if a.blocks:
        blocks(a, shapes)
        return
    print("| N | M | D | k | data | memfit s | GEMM alone s | hand-chunked s "
          f"| memfit / GEMM | memfit / hand-chunked | of {CHECKED} rows, differing from jax |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    notes = []
    for n, m, d, k, kind in shapes:
        q, x = make_data(kind, n, m, d)
        limit = 64 * MiB + (n + m) * d * 4
        mf = memfit.jit(knn_plain(k), memory_limit=limit)
        c, nb, b, part = memfit_tiles(mf.lower(q, x).as_text(), m, d)
        # plain jax's index sets for the first CHECKED rows (rows are
        # independent; all of them would take minutes at D=256)
        ref = np.sort(np.asarray(jax.jit(knn_plain(k))(q[:CHECKED], x)[1]), 1)
        got = np.sort(np.asarray(mf(q, x)[1])[:CHECKED], 1)
        wrong = int((got != ref).any(1).sum())
        gemm = jax.jit(gemm_alone(c, nb))
        hand = jax.jit(knn_chunked(k, 50))
        fns = {"memfit": lambda: mf(q, x), "gemm": lambda: gemm(q, x),
               "hand": lambda: hand(q, x)}
        if a.breakdown:
            for stop in STOPS:
                g = jax.jit(knn_two_level(k, c, nb, b, k + 8, min(part, c), stop))
                fns[stop] = lambda g=g: g(q, x)
        t, cpu = timed(fns, a.repeats)
        print(f"| {n:,} | {m:,} | {d} | {k} | {kind} | {t['memfit']:.3f} | {t['gemm']:.3f} "
              f"| {t['hand']:.3f} | {t['memfit'] / t['gemm']:.2f}x "
              f"| {t['memfit'] / t['hand']:.2f}x | {wrong} |", flush=True)
        note = [f"N={n:,} M={m:,} D={d} k={k} {kind}: memfit's C={c} NB={nb} B={b} S={part}; "
                f"CPU s memfit {cpu['memfit']:.3f}, GEMM {cpu['gemm']:.3f} "
                f"({cpu['memfit'] / cpu['gemm']:.2f}x); load {os.getloadavg()[0]:.1f}"]
        if a.breakdown:
            note += [f"  hand replica {STOPS[s]}: {t[s]:.3f} s ({t[s] / t['gemm']:.2f}x GEMM), "
                     f"CPU {cpu[s]:.3f} s ({cpu[s] / cpu['gemm']:.2f}x)"
                     for s in STOPS]
        notes.append("\n".join(note))
    print()
    print("\n".join(notes))


def _at_memfits_tiles(n, m, d, k, kind):
    """The shape's data, memfit's tiles (C, NB, B, S) at the floor bench's
    limit, and the GEMM alone at those tiles to time against."""
    q, x = make_data(kind, n, m, d)
    mf = memfit.jit(knn_plain(k), memory_limit=64 * MiB + (n + m) * d * 4)
    tiles = memfit_tiles(mf.lower(q, x).as_text(), m, d)
    gemm = jax.jit(gemm_alone(tiles[0], tiles[1]))
    return q, x, tiles, {"gemm": lambda: gemm(q, x)}


def layouts(a, shapes):
    """--floor --layouts: the tile loop's maxima in each of LAYOUTS at
    memfit's tiles, against the GEMM alone, one interleaved run per shape
    (CPU seconds are the steadier on a loaded machine)."""
    for name, what in LAYOUTS.items():
        print(f"{name}: {what}")
    print()
    _table_header(["N", "M", "D", "data", "C, NB", "GEMM alone s (CPU s)"]
                  + [f"{n} s (CPU s)" for n in LAYOUTS])
    for n, m, d, k, kind in shapes:
        q, x, (c, nb, b, _), fns = _at_memfits_tiles(n, m, d, k, kind)
        for name in LAYOUTS:
            g = jax.jit(tile_loop(c, nb, b, name))
            fns[name] = lambda g=g: g(q, x)
        t, cpu = timed(fns, a.repeats)
        cells = " | ".join(f"{t[v]:.3f} ({cpu[v]:.3f})" for v in LAYOUTS)
        print(f"| {n:,} | {m:,} | {d} | {kind} | {c}, {nb} | {t['gemm']:.3f} ({cpu['gemm']:.3f}) "
              f"| {cells} |", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


def _table_header(columns):
    """A markdown table's header row and separator."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))


def blocks(a, shapes):
    """--floor --blocks: the hand replica of memfit's loop at its C, NB
    (rounded to whole blocks) and S with each block size of --blocks
    (those that divide N), against the GEMM alone, one interleaved run per
    shape; memfit's own B is printed."""
    sizes = [int(v) for v in a.blocks.split(",")]
    _table_header(["N", "M", "D", "k", "data", "memfit's C, NB, B", "GEMM alone CPU s"]
                  + [f"B={b} CPU s (/ GEMM)" for b in sizes])
    for n, m, d, k, kind in shapes:
        q, x, (c, nb, b0, part), fns = _at_memfits_tiles(n, m, d, k, kind)
        for b in sizes:
            if n % b == 0:
                g = jax.jit(knn_two_level(k, c, max(b, nb // b * b), b, k + 8, min(part, c)))
                fns[b] = lambda g=g: g(q, x)
        _, cpu = timed(fns, a.repeats)
        cells = " | ".join(f"{cpu[b]:.3f} ({cpu[b] / cpu['gemm']:.2f}x)" if b in cpu else "-"
                           for b in sizes)
        print(f"| {n:,} | {m:,} | {d} | {k} | {kind} | {c}, {nb}, {b0} | {cpu['gemm']:.3f} "
              f"| {cells} |", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


def stage_replica(k, c, b, kp, level):
    """memfit's loop body in plain jax, cut after a stage: 1 = GEMM + key
    block maxima, 2 = + top_k of the maxima, 3 = + candidates' top_k and
    the exact recompute (no certificate, no remainder chunk)."""
    def f(q, x):
        m, dim = q.shape
        n = x.shape[0]
        mu = jnp.mean(x, 0)
        xc = x - mu
        xx = jnp.sum(xc * xc, 1)

        def step(i, acc):
            q0 = lax.dynamic_slice(q, (i * c, 0), (c, dim))
            qc = q0 - mu
            s = -(jnp.sum(qc * qc, 1)[:, None] + xx[None, :] - 2.0 * (qc @ xc.T))
            blocks = s.reshape(c, n // b, b)
            mx = _from_keys(jnp.max(_keys(blocks), 2))
            if level == 1:
                out = lax.bitcast_convert_type(mx[:, :k], jnp.int32)
            else:
                picked = jnp.sort(lax.top_k(mx, kp)[1], 1)
                if level == 2:
                    out = picked[:, :k]
                else:
                    cand = jnp.take_along_axis(blocks, picked[:, :, None], 1).reshape(c, kp * b)
                    pos = (picked[:, :, None] * b + jnp.arange(b)).reshape(c, kp * b)
                    idx = jnp.take_along_axis(pos, lax.top_k(cand, kp)[1], 1)
                    d = jnp.sum((q0[:, None, :] - x[idx]) ** 2, -1)
                    out = jnp.take_along_axis(idx, jnp.argsort(d, 1, stable=True), 1)[:, :k]
            return lax.dynamic_update_slice(acc, out, (i * c, 0))

        return lax.fori_loop(0, m // c, step, jnp.zeros((m // c * c, k), jnp.int32))
    return f


def timed(fns, repeats):
    """Interleaved runs after one warm-up: median wall seconds and median
    process CPU seconds (both cores together) per variant. On a shared
    machine the CPU time is the steadier of the two."""
    for f in fns.values():
        jax.block_until_ready(f())
    wall = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            w, c = time.perf_counter(), time.process_time()
            jax.block_until_ready(f())
            wall[k].append(time.perf_counter() - w)
            cpu[k].append(time.process_time() - c)
    return ({k: statistics.median(v) for k, v in wall.items()},
            {k: statistics.median(v) for k, v in cpu.items()})


def check_small():
    """The two-level form against lax.top_k on data that is hard for it:
    Gaussian, far from the origin, and a grid full of ties (every row
    fails the certificate there and is recomputed)."""
    rng = np.random.default_rng(0)
    cases = [("Gaussian, D=32", rng.standard_normal((200, 32)), rng.standard_normal((8000, 32))),
             ("offset [1000, 1001]^3", 1000 + rng.random((200, 3)), 1000 + rng.random((8000, 3))),
             ("grid {0..3}^3 (ties)", rng.integers(0, 4, (200, 3)), rng.integers(0, 4, (8000, 3)))]
    for name, q, x in cases:
        q, x = jnp.asarray(q, jnp.float32), jnp.asarray(x, jnp.float32)
        v, i, failed = jax.jit(knn_two_level(10, 100, 1600, 32, 18))(q, x)
        rv, ri = jax.jit(knn_plain(10))(q, x)
        same = bool((np.asarray(i) == np.asarray(ri)).all() and (np.asarray(v) == np.asarray(rv)).all())
        print(f"check {name}: {int(failed)} of 200 rows recomputed; values and indices "
              f"{'identical to' if same else 'DIFFER from'} lax.top_k's")
        # chunks and tiles that do not divide (the last ones clamped, as --sweep's)
        v, i, _ = jax.jit(knn_two_level(10, 120, 1504, 32, 18))(q, x)
        same = bool((np.asarray(i) == np.asarray(ri)).all() and (np.asarray(v) == np.asarray(rv)).all())
        print(f"check {name}, 120-query chunks x 1504-point tiles (clamped): "
              f"{'identical to' if same else 'DIFFER from'} lax.top_k's")


def memfit_tiles(text, m, d):
    """memfit's (C, NB, B, S) read off its lowered program: the rows its
    loops slice ([C, d] queries, [NB, d] points), the [C, NB / B, B] keys,
    and the part of S rows of the [C, N / B] maxima whose candidates are
    made at once (C when there is no such loop)."""
    sizes = sorted({int(c) for c in re.findall(rf"sizes = \[(\d+), {d}\]", text)} - {1})
    for c in sizes:
        for nb in sizes:
            for t, b in re.findall(rf"tensor<{c}x(\d+)x(\d+)xi32>", text):
                if int(t) * int(b) == nb and nb != c:
                    parts = [int(p) for p, w in re.findall(r"sizes = \[(\d+), (\d+)\]", text)
                             if int(p) < c and int(w) > int(t) and int(w) != d]
                    return c, nb, int(b), max(parts, default=c)
    raise SystemExit(f"memfit's tiles not found (loops slice rows of {sizes})")


def sweep(a, q, x):
    """memfit's tile pick against a grid around it, one interleaved run: the
    hand two-level form (the structure memfit emits) at C x {1/2, 1, 2} and
    NB x {1/2, 1, 2} (--scales) of memfit's C and NB (rounded to even slices, NB to
    whole blocks), and memfit.jit itself. A point whose XLA bytes exceed the
    limit could not be memfit's pick (marked)."""
    from memfit.units import parse_memory_size
    mf = memfit.jit(knn_plain(a.k), memory_limit=a.limit)
    c0, nb0, b, part = memfit_tiles(mf.lower(q, x).as_text(), a.m, a.d)
    kb = a.kb or a.k + 8
    limit = parse_memory_size(a.limit)
    print(f"memfit's pick: C={c0} NB={nb0} B={b} S={part}; grid C and NB x {{{a.scales}}}")
    ref = np.sort(np.asarray(mf(q, x)[1]), 1)
    fns, nbytes, wrong = {"memfit.jit": lambda: mf(q, x)}, {}, {}
    nbytes["memfit.jit"] = xla_bytes(mf.lower(q, x).compile(compiler_options=ACCOUNTING_OPTIONS))
    scales = sorted({float(v) for v in a.scales.split(",")} | {1.0})
    for fc in scales:
        for fn in scales:
            # even slices (as memfit balances its own): the count nearest
            # to the scaled size's, then the smallest size that keeps it
            c = c0 if fc == 1 else -(-a.m // max(1, round(a.m / (c0 * fc))))
            nb = nb0 if fn == 1 else b * -(-(a.n // b) // max(1, round(a.n / (nb0 * fn))))
            name = f"C={c} NB={nb}" + (" (model)" if fc == fn == 1 else "")
            g = jax.jit(knn_two_level(a.k, c, nb, b, kb, min(part, c)))
            nbytes[name] = xla_bytes(g.lower(q, x).compile(compiler_options=ACCOUNTING_OPTIONS))
            wrong[name] = int((np.sort(np.asarray(g(q, x)[1]), 1) != ref).any(1).sum())
            fns[name] = lambda g=g: g(q, x)
    t, cpu = timed(fns, a.repeats)
    model = next(n for n in t if n.endswith("(model)"))
    fits = [n for n in t if n != "memfit.jit" and nbytes[n] <= limit]
    best_w, best_c = min(fits, key=t.get), min(fits, key=cpu.get)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print()
    print("| variant | median s | / model | CPU s | CPU / model | XLA bytes | rows differing |")
    print("|---|---|---|---|---|---|---|")
    for name in t:
        over = "" if nbytes[name] <= limit else " (over the limit)"
        print(f"| {name} | {t[name]:.3f} | {t[name] / t[model]:.2f}x | {cpu[name]:.3f} "
              f"| {cpu[name] / cpu[model]:.2f}x | {nbytes[name] / MiB:.1f} MiB{over} "
              f"| {wrong.get(name, 0)} |")
    rank_w = sorted(fits, key=t.get).index(model) + 1 if model in fits else None
    rank_c = sorted(fits, key=cpu.get).index(model) + 1 if model in fits else None
    print(f"\nwithin the limit: model's pick ranks {rank_w} of {len(fits)} by wall time "
          f"({t[model] / t[best_w]:.2f}x the best, {best_w}), {rank_c} by CPU time "
          f"({cpu[model] / cpu[best_c]:.2f}x the best, {best_c})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _results.add_write_flag(ap)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--m", type=int, default=2_000)
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", default="64MiB", help="memfit.jit's memory_limit")
    ap.add_argument("--c", type=int, default=400, help="two-level: queries per chunk")
    ap.add_argument("--nb", type=int, default=800, help="two-level: points per tile")
    ap.add_argument("--b", type=int, default=32, help="two-level: points per block")
    ap.add_argument("--kb", type=int, default=0, help="two-level: blocks kept (0: k + 8)")
    ap.add_argument("--stages", action="store_true", help="also time memfit-body replicas")
    ap.add_argument("--stage-chunk", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--check", action="store_true", help="only the small exactness checks")
    ap.add_argument("--sweep", action="store_true",
                    help="memfit's tile pick against a grid of C and NB around it")
    ap.add_argument("--scales", default="0.5,1,2",
                    help="--sweep: the factors of memfit's C and of its NB (1 is always in)")
    ap.add_argument("--data", choices=["gauss", "offset"], default="gauss",
                    help="Gaussian, or uniform in [1000, 1001]^D (the expansion's hard case)")
    ap.add_argument("--floor", action="store_true",
                    help="held-out shapes: memfit / its GEMM alone and / hand-chunked")
    ap.add_argument("--breakdown", action="store_true",
                    help="--floor: also the hand replica cut after each stage")
    ap.add_argument("--layouts", action="store_true",
                    help="--floor: the tile loop's block maxima in other layouts (LAYOUTS)")
    ap.add_argument("--blocks", default="",
                    help="--floor: the hand replica at these block sizes (e.g. 4,5,10,20)")
    ap.add_argument("--shapes", default="",
                    help="--floor: indices into FLOOR_SHAPES (default all)")
    a = ap.parse_args()
    if a.check:
        check_small()
        return
    if a.floor:
        print(f"CPU: {cpu_model()}, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.1f}; jax {jax.__version__}, default flags; memfit's "
              f"limit: 64 MiB + its arguments; hand-chunked: lax.map over 50 queries")
        floor(a)
        return
    kb = a.kb or a.k + 8
    rng = np.random.default_rng(1)
    if a.data == "offset":
        q = jnp.asarray(1000 + rng.random((a.m, a.d)), jnp.float32)
        x = jnp.asarray(1000 + rng.random((a.n, a.d)), jnp.float32)
    else:
        q = jnp.asarray(rng.standard_normal((a.m, a.d), np.float32))
        x = jnp.asarray(rng.standard_normal((a.n, a.d), np.float32))
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; jax {jax.__version__}, default flags")
    if a.sweep:
        print(f"kNN N={a.n:,} M={a.m:,} D={a.d} k={a.k}, {a.data} data; memfit limit {a.limit}")
        sweep(a, q, x)
        return
    print(f"kNN N={a.n:,} M={a.m:,} D={a.d} k={a.k}, {a.data} data; memfit limit {a.limit}; two-level "
          f"C={a.c} NB={a.nb} B={a.b} KB={kb}")

    plain = jax.jit(knn_plain(a.k))
    ref = np.sort(np.asarray(plain(q, x)[1]), 1)
    mf = memfit.jit(knn_plain(a.k), memory_limit=a.limit)
    two = jax.jit(knn_two_level(a.k, a.c, a.nb, a.b, kb))
    fns = {"memfit.jit": lambda: mf(q, x), "two-level (hand)": lambda: two(q, x)}
    _, idx, failed = two(q, x)
    same = np.all(np.sort(np.asarray(idx), 1) == ref, 1)
    mf_same = np.all(np.sort(np.asarray(mf(q, x)[1]), 1) == ref, 1)
    sizes = sorted({int(c) for c in re.findall(rf"sizes = \[(\d+), {a.d}\]",
                                               mf.lower(q, x).as_text())} - {1})
    print(f"memfit.jit's loops slice rows of {sizes} (query chunk, point tile)")
    nbytes = {"memfit.jit": xla_bytes(mf.lower(q, x).compile(compiler_options=ACCOUNTING_OPTIONS)),
              "two-level (hand)": xla_bytes(two.lower(q, x).compile(
                  compiler_options=ACCOUNTING_OPTIONS))}
    print(f"two-level: {int(failed)} uncertified rows (recomputed); index sets equal to "
          f"jax's in {same.sum()} of {a.m} rows; memfit: {mf_same.sum()} of {a.m}")
    if a.stages:
        c = a.stage_chunk
        for level, name in [(1, "stage 1"), (2, "stages 1-2"), (3, "stages 1-3")]:
            g = jax.jit(stage_replica(a.k, c, 32, 2 * a.k + 8, level))
            fns[f"replica C={c}, {name}"] = (lambda g=g: g(q, x))
    try:
        import faiss
        index = faiss.IndexFlatL2(a.d)
        index.add(np.asarray(x))
        qn = np.asarray(q)
        fns["faiss IndexFlatL2"] = lambda: index.search(qn, a.k)
    except ImportError:
        print("faiss not installed (make bench-deps)")
    t, cpu = timed(fns, a.repeats)
    print()
    print("| variant | median s | / memfit.jit | / faiss | CPU s (2 cores) | CPU / memfit.jit "
          "| XLA bytes (ynn off) |")
    print("|---|---|---|---|---|---|---|")
    for name, s in t.items():
        fa = f"{s / t['faiss IndexFlatL2']:.2f}x" if "faiss IndexFlatL2" in t else "-"
        nb = f"{nbytes[name] / MiB:.1f} MiB" if name in nbytes else ""
        print(f"| {name} | {s:.3f} | {s / t['memfit.jit']:.2f}x | {fa} | {cpu[name]:.3f} "
              f"| {cpu[name] / cpu['memfit.jit']:.2f}x | {nb} |")


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
