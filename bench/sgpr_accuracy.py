"""The SGPR bound's error against float64, form by form, at any N.

    .venv/bin/python bench/sgpr_accuracy.py 50000 long

Prints the relative error of the bound (M=1,000, bench_race's data set
`bench`, `long` or `ill`) computed by plain jax, memfit.jit at a limit that
splits it (with and without its algebraic rewrites), memfit.jit at a limit
that does not split it (the rewrites alone), and bench_race's two accurate
hand-chunked forms, each against bench_race's float64 reference. Plain jax
needs about 70 KiB x N of memory.
"""
import sys
import warnings

import jax

import memfit

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import bench_race as br  # noqa: E402


def main(n: int, data: str) -> None:
    warnings.simplefilter("ignore")  # jax and memfit notes on the big compiles
    br._sgpr_sizes = lambda quick: (n, 1_000)
    params, x, y = br._sgpr_args(False, data)
    ref = br._bound64(params, x, y)
    f = br.sgpr_bound
    forms = {
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
    for name, fn in forms.items():
        v = float(fn(params, x, y))
        print(f"  {name:42s} {abs(v - ref) / abs(ref):.2e}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000,
         sys.argv[2] if len(sys.argv) > 2 else "long")
