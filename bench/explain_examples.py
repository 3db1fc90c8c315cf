"""Draws the README's split pictures (docs/explain/*.png) and prints the
reports: memfit.jit(...).report() for the kNN and the attention example.
Compile-only (shapes, no data), so it runs in seconds at any size.

    .venv/bin/python bench/explain_examples.py
"""
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import memfit  # noqa: E402
from memfit.testing import examples  # noqa: E402

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


if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        report = explain(name)
        print(f"== {name}: {CASES[name][1]}\n{report.table()}\n")
        report.plot(str(OUT / f"{name}.png"), dpi=80)
        print(f"wrote {OUT / f'{name}.png'} ({(OUT / f'{name}.png').stat().st_size} bytes)\n")
