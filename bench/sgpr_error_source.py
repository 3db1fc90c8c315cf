"""Where the float32 SGPR bound's error on ill-conditioned data comes from.

bench_race's `sgpr_ill` row finds every float32 contender (memfit, the
hand-chunked versions) 1.6-1.7e-4 off a float64 reference. This computes
the textbook bound (A = L^-1 Kuf / sigma per chunk) on the same data in
float64, in float32, and in float64 except for Kuu's Cholesky factor taken
in float32: if the last is already above 1e-5, no float32 program of this
algebra can be within 1e-5, whatever it chunks.

    .venv/bin/python bench/sgpr_error_source.py 100000
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import solve_triangular

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_race as br  # noqa: E402


def bound(z, ls, var, s2, x, y, dt, chol_dt, block=2_000):
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


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    (z, log_ls, log_var, log_noise), x, y = br._sgpr_args(False, "ill")
    x, y = x[:n], y[:n]
    ls, var, s2 = jnp.exp(log_ls), jnp.exp(log_var), jnp.exp(log_noise)
    ref = bound(z, ls, var, s2, x, y, jnp.float64, jnp.float64)
    for name, dt, cd in [("all float32", jnp.float32, jnp.float32),
                         ("float64, Kuu's Cholesky in float32", jnp.float64, jnp.float32)]:
        b = bound(z, ls, var, s2, x, y, dt, cd)
        print(f"N={n:,} M={z.shape[0]:,} {name}: bound rel err vs float64 {abs(b - ref) / abs(ref):.2e}")


if __name__ == "__main__":
    main()
