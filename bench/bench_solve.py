"""Loop-invariant triangular solves: memfit-rewrite's blocked substitution
against the per-chunk solve jax runs, and against the whole inverse.

A scan solves every chunk of right-hand sides against one Cholesky factor
(the SGPR statistic's loop), in jax's default configuration, interleaved:

* jax: `solve_triangular` per chunk (XLA:CPU calls LAPACK's trsm through
  `lapack_strsm_ffi`, copying operands to column-major on every call);
* memfit: the same program through `memfit-rewrite` (invariant-solve:
  the diagonal blocks' inverses once, GEMMs per chunk, one refinement step);
* inverse: the factor's whole inverse once, a GEMM per chunk, written by
  hand (what the issue measured as the fast form).

Accuracy columns: each one's error against float64 over jax's, on an
ill-conditioned RBF factor of the same size (inducing points spread over
[-3, 3]^3, lengthscale 4, jitter 1e-5); the accuracy contract (docs/numerics.md) allows 4x.

    .venv/bin/python bench/bench_solve.py           # ~3 min on 2 cores
    .venv/bin/python bench/bench_solve.py --quick
"""
from __future__ import annotations

import argparse
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import solve_triangular

import memfit
from memfit.measure import cpu_model, interleaved_medians
from memfit.testing.oracle import relative_error

import _results  # noqa: E402  (this script's folder is on sys.path)

SHAPES = [(125, 2000), (250, 2500), (500, 2500), (1000, 500), (1000, 2500), (2000, 1000)]
CHUNKS = 4


def per_chunk(l, li, bs):
    def step(acc, b):
        a = solve_triangular(l, b, lower=True)
        return acc + a @ a.T, None
    return jax.lax.scan(step, jnp.zeros((l.shape[0],) * 2, l.dtype), bs)[0]


def whole_inverse(l, li, bs):
    def step(acc, b):
        a = li @ b
        return acc + a @ a.T, None
    return jax.lax.scan(step, jnp.zeros((l.shape[0],) * 2, l.dtype), bs)[0]


def _kernel(a, b, ls):
    return np.exp(-0.5 * ((a[:, None] - b[None]) ** 2).sum(-1) / ls ** 2)


def problem(m, n, seed=0):
    """An ill-conditioned RBF factor and CHUNKS chunks of kernel columns."""
    rng = np.random.default_rng(seed)
    z = rng.uniform(-3, 3, (m, 3))
    l64 = np.linalg.cholesky(_kernel(z, z, 4.0) + 1e-5 * np.eye(m))
    b64 = np.stack([_kernel(z, rng.uniform(-3, 3, (n, 3)), 4.0) for _ in range(CHUNKS)])
    return l64, b64


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    _results.add_write_flag(ap)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    shapes = SHAPES[:3] if args.quick else SHAPES
    print(f"CPU: {cpu_model()}; jax defaults; {CHUNKS} chunks a loop; "
          f"median of {args.rounds} interleaved runs")
    print("| factor M | chunk | jax per-chunk solve | memfit / jax | inverse / jax "
          "| memfit err / jax's | inverse err / jax's |")
    print("|---|---|---|---|---|---|---|")
    for m, n in shapes:
        l64, b64 = problem(m, n)
        l, bs = jnp.asarray(l64, jnp.float32), jnp.asarray(b64, jnp.float32)
        li = solve_triangular(l, jnp.eye(m, dtype=jnp.float32), lower=True)
        fj = jax.jit(per_chunk)
        fm = memfit.jit(per_chunk, passes="memfit-inline,memfit-rewrite")
        fi = jax.jit(whole_inverse)
        assert "trsm" not in fm.lower(l, li, bs).as_text().split("stablehlo.while")[1] \
            .split("stablehlo.return")[1], "memfit left the solve in the loop"
        t = interleaved_medians({"jax": lambda: fj(l, li, bs), "memfit": lambda: fm(l, li, bs),
                                 "inverse": lambda: fi(l, li, bs)}, repeats=args.rounds)
        ref = sum(np.linalg.solve(l64, b) @ np.linalg.solve(l64, b).T for b in b64)
        ej = relative_error(fj(l, li, bs), ref)
        em, ei = relative_error(fm(l, li, bs), ref), relative_error(fi(l, li, bs), ref)
        print(f"| {m} | {n} | {t['jax'] * 1e3:.1f} ms | {t['memfit'] / t['jax']:.2f}x "
              f"| {t['inverse'] / t['jax']:.2f}x | {em / ej:.2f} | {ei / ej:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
