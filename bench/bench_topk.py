"""The cost model behind memfit-rewrite's two-stage top-k, measured.

lax.top_k over rows of N is timed against the two-stage form (max of blocks
of B, top_k of the maxima, top_k of the k picked blocks' elements) written in
jax the way lib/Transforms/Rewrites/TwoStageTopK.cpp builds it, for a grid of
B, in jax's default configuration (ynn on), interleaved. From the timings it
measures the terms of the model the rewrite uses, per row,

    plain     = p N
    two-stage = a(B) N + c N / B + g (k B + N mod B)

(a(B): the block maxima, fastest at B = 32 on XLA:CPU, also against
longer blocks reduced in groups of 32; c: top_k of the
maxima; g: the candidates; slicing the full blocks off a row that B does
not divide is fused into the maxima, measured as "maxima B=32, N-1"), and then,
for each shape, the best B measured, the B that memfit chooses (``memfit.jit(passes=
"memfit-rewrite")``) and memfit's time over lax.top_k's.

    .venv/bin/python bench/bench_topk.py            # ~3 min on 2 cores
    .venv/bin/python bench/bench_topk.py --quick
"""
from __future__ import annotations

import argparse
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np

import memfit
from memfit.measure import cpu_model, interleaved_medians

import _results  # noqa: E402  (this script's folder is on sys.path)


def _keys(s):
    bits = s if s.dtype == jnp.int32 else jax.lax.bitcast_convert_type(s, jnp.int32)
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


def two_stage(s, k, block):
    """The rewrite's form, in jax (float32 rows)."""
    p, n = s.shape
    full, rem = divmod(n, block)
    blocks = s[:, :full * block].reshape(p, full, block)
    keys = _keys(blocks)
    # the maxima back as f32 (the key map is its own inverse): XLA's fast
    # TopK is f32/f64 only, integer top_k sorts the whole row
    _, picked = jax.lax.top_k(jax.lax.bitcast_convert_type(_keys(jnp.max(keys, -1)), jnp.float32), k)
    picked = jnp.sort(picked, -1)
    cand = jnp.take_along_axis(blocks, picked[:, :, None], 1).reshape(p, k * block)
    pos = (picked[:, :, None] * block + jnp.arange(block)).reshape(p, k * block)
    if rem:
        cand = jnp.concatenate([cand, s[:, full * block:]], 1)
        pos = jnp.concatenate([pos, jnp.broadcast_to(full * block + jnp.arange(rem), (p, rem))], 1)
    v, at = jax.lax.top_k(cand, k)
    return v, jnp.take_along_axis(pos, at, 1)


def chosen_block(text: str) -> int | None:
    """B of memfit's rewrite, read off the block-maxima reduce's operand."""
    m = re.search(r"bitcast_convert.*-> tensor<\d+x\d+x(\d+)xi32>", text)
    return int(m.group(1)) if m else None


def scores(s):
    """A fused producer, as the kNN's distances are (top_k of a parameter
    is about twice as fast as top_k of a fusion's output on XLA:CPU)."""
    return 1.0 - 2.0 * s


def measure(rows, n, k, blocks, repeats):
    s = jnp.asarray(np.random.default_rng(n + k).standard_normal((rows, n), np.float32))
    plain = jax.jit(lambda s: jax.lax.top_k(scores(s), k))
    fns = {"plain": lambda: plain(s)}
    for b in blocks:
        f = jax.jit(lambda s, b=b: two_stage(scores(s), k, b))
        fns[b] = lambda f=f: f(s)
    mf = memfit.jit(lambda s: jax.lax.top_k(scores(s), k), passes="memfit-rewrite")
    fns["memfit"] = lambda: mf(s)
    ref = np.asarray(plain(s)[1])
    for name in list(fns)[1:]:
        assert np.array_equal(np.asarray(fns[name]()[1]), ref), name
    times = interleaved_medians(fns, repeats=repeats)
    return times, chosen_block(mf.lower(s).as_text())


def model_terms(rows, n, k, repeats):
    """ns per element of each term of the rewrite's cost model."""
    s = jnp.asarray(np.random.default_rng(7).standard_normal((rows, n), np.float32))
    cand = jnp.asarray(np.random.default_rng(8).standard_normal((rows, k * 32), np.float32))
    maxima = jnp.asarray(np.random.default_rng(9).standard_normal((rows, n // 32), np.float32))
    fns = {"plain top_k": (jax.jit(lambda s: jax.lax.top_k(scores(s), k)), s, n),
           "top_k of maxima": (jax.jit(lambda m: jax.lax.top_k(m, k)), maxima, n // 32),
           "int32 top_k": (jax.jit(lambda s: jax.lax.top_k(_keys(scores(s)), k)), s, n),
           "candidates": (jax.jit(lambda c: jax.lax.top_k(c, k)), cand, k * 32),
           # a row that 32 does not divide: the slice fuses into the reduction
           "maxima B=32, N-1": (jax.jit(lambda s: jnp.max(_keys(scores(s)[:, :n - 32]).reshape(
               rows, -1, 32), -1)), s[:, 1:], n - 1)}
    for b in (16, 24, 32, 64, 256):
        f = lambda s, b=b: jnp.max(_keys(scores(s))[:, :n - n % b].reshape(rows, -1, b), -1)
        fns[f"maxima B={b}"] = (jax.jit(f), s, n)
    f = lambda s: jnp.max(jnp.max(_keys(scores(s)).reshape(rows, -1, 8, 32), -1), -1)
    fns["maxima B=256 in 32s"] = (jax.jit(f), s, n)
    times = interleaved_medians({name: (lambda f=f, x=x: f(x)) for name, (f, x, _) in fns.items()},
                                repeats=repeats)
    return {name: times[name] / (rows * m) * 1e9 for name, (_, _, m) in fns.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = 32 if args.quick else 64
    shapes = ([(50_000, 10), (50_000, 28)] if args.quick else
              [(30_000, 10), (200_000, 1), (200_000, 10), (200_000, 28),
               (200_000, 100), (1_000_000, 10)])
    print(f"CPU: {cpu_model()}")
    print(f"jax {jax.__version__}, default flags, {rows} rows\n")
    print("model terms (ns per element; lib/Analysis/TopKCost.cpp's constants come from here):")
    for name, ns in model_terms(rows, 204_800, 10, 3 if args.quick else 7).items():
        print(f"  {name:<18} {ns:6.2f}")
    print()
    table = []
    for n, k in shapes:
        grid = [b for b in (16, 32, 64, 128, 256, 1024) if n // b > k]
        times, mine = measure(rows, n, k, grid, repeats=3 if args.quick else 5)
        best = min(grid, key=lambda b: times[b])
        table.append((n, k, times["plain"], best, times[best], mine, times["memfit"]))
    print(f"{'N':>9} {'k':>4} {'top_k ms':>9} {'best B':>7} {'ms':>7} {'memfit B':>9} "
          f"{'memfit ms':>10} {'memfit/top_k':>13}")
    for n, k, tp, best, tb, mine, tm in table:
        print(f"{n:>9} {k:>4} {tp*1e3:>9.1f} {best:>7} {tb*1e3:>7.1f} {str(mine):>9} "
              f"{tm*1e3:>10.1f} {tm/tp:>13.2f}")


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
