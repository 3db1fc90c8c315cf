"""Fuzzes memfit-split: random small StableHLO programs over every element
type and op family, each split at several limits from 256 B to 1 MiB, run
by XLA against the original (memfit/testing/fuzz.py says what each outcome means).

    .venv/bin/python bench/fuzz_split.py [--programs N] [--seed S] [--limits K] [--jobs J]
        [--families segment/embedding,gather/scatter]

Prints the outcome tables by element type and by op family, the time, the
cases where XLA's compile of the original disagrees with jax's op-by-op
run of it (memfit's output matching the latter), and every crash or wrong
result; exits 1 if there was any.
"""
from __future__ import annotations

import argparse
import sys

from memfit.testing import fuzz

import _results  # noqa: E402  (this script's folder is on sys.path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--programs", type=int, default=1870)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limits", type=int, default=3, help="limits per program")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes at a time")
    ap.add_argument("--families", default="",
                    help="comma-separated families to run (of the first N programs)")
    a = ap.parse_args()
    families = tuple(f for f in a.families.split(",") if f)
    r = fuzz.run(seed=a.seed, programs=a.programs, per_program=a.limits, jobs=a.jobs,
                 families=families)
    print(f"{a.programs} programs ({r.skipped} that jax does not write for their type "
          f"skipped), {len(r.cases)} cases, {r.seconds:.0f} s\n")
    print(r.table("dtype"), "\n")
    print(r.table("family"), "\n")
    for c in r.cases:
        if c["outcome"] == "xla-differs":
            print("XLA's original disagrees with its op-by-op run:", c)
    for c in r.failures():
        print(c)
    return 1 if r.failures() else 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
