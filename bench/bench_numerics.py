"""The numerics contract at scale: memfit against float64, next to jax.

Two tables, both in docs/rewrites.md:

1. kNN recall of the true (float64) 5 nearest neighbours, the issue's four
   data sets (50,000 points, 500 queries, float32, memory_limit 8 MiB): plain
   jax.jit, memfit.jit (rewrites on, the default), memfit.jit(rewrite=False),
   and the expansion alone (`fast-distance`, opt-in) to show what the exact
   rewrite guards against.
2. memfit.testing.oracle over every program (rewrite or split shape) x data family x
   --seeds seeds: cases, cases where memfit breaks the contract (memfit's
   error > FACTOR x jax's + FLOOR_ULPS ulps, or a row of indices wrong where
   jax's is right), and the worst memfit / jax error ratio.

    .venv/bin/python bench/bench_numerics.py               # 40 seeds: 2,160 cases
    .venv/bin/python bench/bench_numerics.py --seeds 4 --skip-recall
"""
from __future__ import annotations

import argparse
import sys
import collections
import time

import jax
import jax.numpy as jnp
import numpy as np

import memfit
from memfit.measure import cpu_model
from memfit.testing import oracle

import _results  # noqa: E402  (this script's folder is on sys.path)


def knn5(x, q):
    d = jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, -1)
    return jax.lax.top_k(-d, 5)[1]


RECALL_ROWS = (("2-D, uniform in [0, 10]^2", 2, 0.0),
               ("2-D, uniform in [100, 110]^2", 2, 100.0),
               ("3-D, uniform in [1000, 1010]^3", 3, 1000.0),
               ("1-D, uniform in [0, 10]", 1, 0.0))


def recall_table(n=50_000, m=500, limit="8MiB"):
    rng = np.random.default_rng(0)
    contenders = {
        "plain jax.jit": jax.jit(knn5),
        "memfit.jit": memfit.jit(knn5, memory_limit=limit),
        "memfit.jit(rewrite=False)": memfit.jit(knn5, memory_limit=limit, rewrite=False),
        "fast-distance (opt-in)": memfit.jit(
            knn5, passes="memfit-inline,memfit-rewrite{fast-distance=true},"
                         f"memfit-split{{memory-limit={memfit.parse_memory_size(limit)}}}"),
    }
    print(f"| data | {' | '.join(contenders)} |")
    print("|---|" + "---|" * len(contenders))
    for name, d, offset in RECALL_ROWS:
        x = (offset + 10 * rng.random((n, d))).astype(np.float32)
        q = (offset + 10 * rng.random((m, d))).astype(np.float32)
        truth = np.argsort(oracle.sqdist64(q, x), axis=1, kind="stable")[:, :5]
        cells = []
        for f in contenders.values():
            got = np.asarray(f(x, q))
            cells.append(np.mean([len(set(a) & set(b)) / 5 for a, b in zip(got, truth)]))
        print(f"| {name} | " + " | ".join(f"{c:.4f}" for c in cells) + " |", flush=True)


def oracle_table(seeds: int):
    runner = oracle.Runner()
    stats = collections.defaultdict(lambda: [0, 0, 0.0])
    t0 = time.time()
    for p in oracle.PROGRAMS:
        for fam in oracle.FAMILIES:
            for s in range(seeds):
                o = runner.case(p, fam, 1000 + s)  # not the test suite's seeds
                st = stats[(p.name, p.what, fam)]
                st[0] += 1
                st[1] += not o.ok
                floor = 0.0 if p.indices else oracle.FLOOR_ULPS * oracle.EPS32
                denom = max(o.jax_error, floor, 1e-300)
                st[2] = max(st[2], o.memfit_error / denom if o.memfit_error else 0.0)
    print(f"\n{sum(v[0] for v in stats.values())} cases in {time.time() - t0:.0f} s; "
          f"contract: memfit error <= {oracle.FACTOR} x jax's + {oracle.FLOOR_ULPS} ulp "
          "(values), indices right wherever jax's are")
    print("| program | exercises | family | cases | memfit breaks contract | "
          "worst memfit / max(jax, floor) |")
    print("|---|---|---|---|---|---|")
    for (name, what, fam), (n, bad, worst) in stats.items():
        print(f"| {name} | {what} | {fam} | {n} | {bad} | {worst:.2f} |")
    print(f"\ntotal broken: {sum(v[1] for v in stats.values())}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--skip-recall", action="store_true")
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}, jax {jax.__version__}, "
          "default XLA flags (ynn on)\n")
    if not args.skip_recall:
        recall_table()
    oracle_table(args.seeds)


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
