"""The packer on long random traces: how it degrades with size.

    .venv/bin/python bench/bench_pack_large.py [--buffers 100000] [--time-limit 10]
                                               [--lifetimes 200,2000,6000]

Each trace has --buffers buffers starting uniformly over 10^6 time steps,
lifetimes uniform in [1, L] and sizes 64 x uniform(1, 1000). Each is packed
at its live-bytes bound (the tightest capacity there is). The table shows
the outcome, the wall time against the limit, and the message, which says
how much of the search the problem's size allowed.
"""
from __future__ import annotations

import argparse
import sys
import random
import time

from memfit.pack import Buffer, best_fit, max_live_bytes, pack
from memfit.pack.validate import check_packing

import _results  # noqa: E402  (this script's folder is on sys.path)


def trace(n: int, longest: int, seed: int = 0) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        lo = rng.randrange(1_000_000)
        out.append(Buffer(i, lo, lo + rng.randint(1, longest), rng.randint(1, 1000) * 64))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--buffers", type=int, default=100_000)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--lifetimes", default="200,2000,6000")
    args = ap.parse_args(argv)
    print(f"{'L':>6} {'live bytes':>11} {'best-fit':>8} {'status':>8} {'time (s)':>8} "
          f"{'nodes':>8}  message")
    for longest in (int(x) for x in args.lifetimes.split(",")):
        bufs = trace(args.buffers, longest)
        live = max_live_bytes(bufs)
        _, bf = best_fit(bufs)
        start = time.monotonic()
        r = pack(bufs, live, time_limit=args.time_limit)
        seconds = time.monotonic() - start
        if r.packed:
            check_packing(bufs, r.offsets, live)
        print(f"{longest:>6} {live:>11} {bf / live:>8.4f} {r.status:>8} {seconds:>8.2f} "
              f"{r.nodes:>8}  {r.message}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
