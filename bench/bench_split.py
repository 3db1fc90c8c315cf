"""memfit-split against plain jax.jit, at sizes where jax still fits.

For each program: XLA's accounted bytes (argument + output + temp - alias,
ynn fusions off so XLA counts every buffer), the peak RSS growth of a fresh
subprocess running it once (ynn fusions on, as users run XLA), and the median
of interleaved timings (jax, memfit, jax, memfit, ...; ynn off for both, the
setting the accounted bytes are measured in).

    .venv/bin/python bench/bench_split.py            # all programs, 7 rounds
    .venv/bin/python bench/bench_split.py --quick    # smaller sizes, 5 rounds

The limit given to memfit is 1/8 of what jax needs (--divisor), so every
program is split.
"""
from __future__ import annotations

import argparse
import os
import sys

from memfit.measure import NO_YNN

if __name__ == "__main__":
    # Honest accounted bytes and the setting the times are measured in. Not
    # set when peak_rss_growth's subprocess imports this file: XLA reads the
    # flag once, at backend start, and that run is meant with ynn fusions on.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + NO_YNN).strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import memfit  # noqa: E402
from memfit.measure import interleaved_medians, peak_rss_growth, xla_bytes  # noqa: E402
from memfit.testing.examples import attention, cross_entropy, gaussian_kernel, knn  # noqa: E402

import _results  # noqa: E402  (this script's folder is on sys.path)

MiB = 1024 * 1024


def _normal(key, shape):
    return jax.random.normal(jax.random.PRNGKey(key), shape, jnp.float32)


def make_args(name: str, quick: bool):
    s = 2 if quick else 1
    if name == "knn":
        return knn, (_normal(0, (4096 // s, 8)), _normal(1, (16384 // s, 8)))
    if name == "gaussian_kernel":
        return gaussian_kernel, (_normal(2, (4096 // s, 8)), _normal(3, (16384 // s, 8)),
                                 _normal(4, (16384 // s, 4)))
    if name == "attention":
        n = 4096 // s
        return attention, (_normal(5, (n, 64)), _normal(6, (n, 64)), _normal(7, (n, 64)))
    if name == "cross_entropy":
        b, v = 2048 // s, 32000 // s
        return cross_entropy, (_normal(8, (b, 128)), _normal(9, (128, v)) * 0.05,
                               jax.random.randint(jax.random.PRNGKey(10), (b,), 0, v))
    raise KeyError(name)


def build(name: str, which: str, quick: bool = False, limit: int = 0):
    """(callable, args) for peak_rss_growth's subprocess."""
    f, args = make_args(name, quick)
    if which == "jax":
        return jax.jit(f), args
    return memfit.jit(f, memory_limit=limit, rewrite=False), args


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--no-rss", action="store_true")
    ap.add_argument("--divisor", type=int, default=8,
                    help="memfit's limit is jax's accounted bytes / divisor")
    opts = ap.parse_args()
    rounds = opts.rounds or (5 if opts.quick else 7)
    names = ["knn", "gaussian_kernel", "attention", "cross_entropy"]
    rows = []
    for name in names:
        f, args = make_args(name, opts.quick)
        base = jax.jit(f).lower(*args).compile()
        limit = xla_bytes(base) // opts.divisor
        try:
            split = memfit.jit(f, memory_limit=limit, rewrite=False).lower(*args).compile()
        except memfit.MemfitError as e:
            print(f"... {name}: {str(e).splitlines()[-1].strip()}", file=sys.stderr)
            continue
        want, got = jax.tree_util.tree_leaves(base(*args)), jax.tree_util.tree_leaves(split(*args))
        err = max(float(np.max(np.abs(np.asarray(w, np.float64) - np.asarray(g, np.float64))))
                  / max(float(np.max(np.abs(np.asarray(w, np.float64)))), 1e-30)
                  for w, g in zip(want, got))
        t = interleaved_medians({"jax": lambda: base(*args), "memfit": lambda: split(*args)},
                                repeats=rounds)
        rss = {}
        if not opts.no_rss:
            here = os.path.dirname(os.path.abspath(__file__))
            for which in ("jax", "memfit"):
                rss[which] = _rss(here, name, which, opts.quick, limit)["growth"]
        rows.append((name, limit, xla_bytes(base), xla_bytes(split), t["jax"], t["memfit"],
                     rss.get("jax"), rss.get("memfit"), err))
        print(f"... {name} done", file=sys.stderr, flush=True)

    print(f"\nmemfit-split vs jax.jit (median of {rounds} interleaved runs; "
          f"limit = jax's bytes / {opts.divisor})")
    hdr = (f"{'program':16s} {'limit':>9s} {'jax XLA':>9s} {'memfit XLA':>10s} "
           f"{'jax ms':>8s} {'memfit ms':>9s} {'time ratio':>10s} "
           f"{'jax RSS+':>9s} {'memfit RSS+':>11s} {'max rel err':>11s}")
    print(hdr)
    print("-" * len(hdr))
    fmt = lambda b: "-" if b is None else f"{b / MiB:7.1f}Mi"
    for name, limit, jb, mb, tj, tm, rj, rm, err in rows:
        print(f"{name:16s} {fmt(limit):>9s} {fmt(jb):>9s} {fmt(mb):>10s} "
              f"{tj * 1e3:8.1f} {tm * 1e3:9.1f} {tm / tj:9.2f}x "
              f"{fmt(rj):>9s} {fmt(rm):>11s} {err:11.1e}")


def _rss(here: str, name: str, which: str, quick: bool, limit: int) -> dict:
    # the subprocess imports this file as `bench_split` from `here`
    return peak_rss_growth("bench_split:build", cwd=here, name=name, which=which,
                           quick=quick, limit=limit)


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
