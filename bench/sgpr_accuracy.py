"""The SGPR bound's error against float64, form by form, at any N.

    .venv/bin/python bench/sgpr_accuracy.py [N] [bench|long|ill] [--write]
    .venv/bin/python bench/sgpr_accuracy.py --error-source [N]

Prints the relative error of the bound (M=1,000, bench_race's data set
`bench`, `long` or `ill`) computed by plain jax, memfit.jit at a limit that
splits it (with and without its algebraic rewrites), memfit.jit at a limit
that does not split it (the rewrites alone), and bench_race's two accurate
hand-chunked forms, each against bench_race's float64 reference. Plain jax
needs about 70 KiB x N of memory. Defaults: N = 50,000, data `long`.

``--error-source`` asks where the float32 error on the ill-conditioned data
(`ill`) comes from: bench_race's `sgpr_ill` row finds every float32
contender 1.6-1.7e-4 off float64. It computes the textbook bound
(A = L^-1 Kuf / sigma per chunk) on that data in float64, in float32, and in
float64 except for Kuu's Cholesky factor taken in float32: if the last is
already above 1e-5, no float32 program of this algebra can be within 1e-5,
whatever it chunks. Default N = 100,000.
"""
import argparse
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import solve_triangular

import memfit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402
import bench_race as br  # noqa: E402


def forms(n: int, data: str) -> None:
    """Each form's relative error of the bound against float64."""
    warnings.simplefilter("ignore")  # jax and memfit notes on the big compiles
    br._sgpr_sizes = lambda quick: (n, 1_000)
    params, x, y = br._sgpr_args(False, data)
    ref = br._bound64(params, x, y)
    f = br.sgpr_bound
    fns = {
        "plain jax": jax.jit(f),
        "memfit.jit, 256 MiB": memfit.jit(f, memory_limit="256MiB"),
        "memfit.jit, 256 MiB, rewrite=False": memfit.jit(f, memory_limit="256MiB", rewrite=False),
        "memfit.jit, 8 GiB (rewrites, no split)": memfit.jit(f, memory_limit="8GiB"),
        "hand-chunked, L^-1 formed once": jax.jit(
            lambda p, x, y: br.sgpr_bound_chunked_inverse(p, x, y, 2_500)),
        "hand-chunked, per-chunk solve": jax.jit(
            lambda p, x, y: br.sgpr_bound_chunked_same(p, x, y, 2_500)),
    }
    print(f"SGPR bound, N={n:,} M=1,000, data {data!r}; float64 bound {ref:.8g}")
    for name, fn in fns.items():
        v = float(fn(params, x, y))
        print(f"  {name:42s} {abs(v - ref) / abs(ref):.2e}", flush=True)


def textbook_bound(z, ls, var, s2, x, y, dt, chol_dt, block=2_000):
    """The textbook bound in dtype ``dt``, Kuu's Cholesky in ``chol_dt``."""
    z, x, y = (jnp.asarray(np.asarray(a), dt) for a in (z, x, y))
    ls, var, s2 = (jnp.asarray(np.asarray(a), dt) for a in (ls, var, s2))
    m = z.shape[0]
    kuu = br._rbf(z, z, ls, var) + br.JITTER * jnp.eye(m, dtype=dt)
    l = jnp.linalg.cholesky(kuu.astype(chol_dt)).astype(dt)

    def step(acc, c):
        xc, yc = c
        ac = solve_triangular(l, br._rbf(z, xc, ls, var), lower=True) / jnp.sqrt(s2)
        kd = var * jnp.ones(xc.shape[0], dt)
        return (acc[0] + ac @ ac.T, acc[1] + ac @ yc, acc[2] + kd.sum(), acc[3] + yc @ yc), None

    zero = (jnp.zeros((m, m), dt), jnp.zeros((m,), dt), jnp.zeros((), dt), jnp.zeros((), dt))
    n = x.shape[0]
    chunks = (x.reshape(n // block, block, -1), y.reshape(n // block, block))
    (aat, ay, kds, yy), _ = jax.lax.scan(step, zero, chunks)
    return float(br._bound_from(n, l, s2, aat, ay, yy, kds))


def error_source(n: int) -> None:
    """The textbook bound on the ill-conditioned data, in float32 and with
    only Kuu's Cholesky factor in float32, against float64."""
    jax.config.update("jax_enable_x64", True)
    (z, log_ls, log_var, log_noise), x, y = br._sgpr_args(False, "ill")
    x, y = x[:n], y[:n]
    ls, var, s2 = jnp.exp(log_ls), jnp.exp(log_var), jnp.exp(log_noise)
    ref = textbook_bound(z, ls, var, s2, x, y, jnp.float64, jnp.float64)
    for name, dt, cd in [("all float32", jnp.float32, jnp.float32),
                         ("float64, Kuu's Cholesky in float32", jnp.float64, jnp.float32)]:
        b = textbook_bound(z, ls, var, s2, x, y, dt, cd)
        print(f"N={n:,} M={z.shape[0]:,} {name}: bound rel err vs float64 "
              f"{abs(b - ref) / abs(ref):.2e}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("n", nargs="?", type=int, default=None, help="data points N")
    ap.add_argument("data", nargs="?", choices=("bench", "long", "ill"), default="long")
    ap.add_argument("--error-source", action="store_true",
                    help="the float32 error's source on the ill-conditioned data instead")
    args = ap.parse_args()
    if args.error_source:
        error_source(args.n or 100_000)
    else:
        forms(args.n or 50_000, args.data)
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__, ("--error-source",)))
