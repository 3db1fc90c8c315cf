"""The split reports of the kNN and attention examples, and their pictures.

Prints memfit.jit(...).report() for each example and draws its memory
timeline into docs/explain/<name>.png (README and docs/explain.md show them).
Compile-only (shapes, no data), so it runs in seconds at any size.

    .venv/bin/python bench/explain_examples.py [knn] [attention] [--no-plot] [--write]
"""
import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import memfit  # noqa: E402
from memfit.testing import examples  # noqa: E402

import _results  # noqa: E402  (this script's folder is on sys.path)

OUT = Path(__file__).resolve().parents[1] / "docs/explain"


def knn(x, y):
    return examples.knn(x, y, 10)


CASES = {
    # name: (function, argument shapes, memory limit)
    "knn": (knn, [(2000, 32), (200_000, 32)], "64MiB"),
    "attention": (examples.attention, [(16384, 64)] * 3, "64MiB"),
}


def explain(name: str) -> memfit.SplitReport:
    fun, shapes, limit = CASES[name]
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    f = memfit.jit(fun, memory_limit=limit)
    f.lower(*args)
    return f.report()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("cases", nargs="*", metavar="NAME",
                    help=f"which examples, of {', '.join(CASES)} (default: all)")
    ap.add_argument("--no-plot", action="store_true", help="print the reports only")
    args = ap.parse_args()
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown example {unknown[0]!r}; known: {', '.join(CASES)}")
    for name in args.cases or CASES:
        report = explain(name)
        print(f"== {name}: {CASES[name][1]}\n{report.table()}\n")
        if not args.no_plot:
            report.plot(str(OUT / f"{name}.png"), dpi=80)
            print(f"wrote docs/explain/{name}.png\n", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
