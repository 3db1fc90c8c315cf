"""memfit's output in other hands: StableHLO from torch-mlir, and IREE.

Part 1, torch-mlir: the programs of test/python/data/torch/ (written by
tools/torch_export/export_programs.py), split by `memfit opt` at 1/8 of
XLA's bytes for the unsplit program (attention: its smallest reachable
limit, rounded up), then compiled and run by XLA: XLA's bytes before and
after, and the median time of the split program over the unsplit one.

Part 2, IREE: jax's kNN, softmax attention and Gaussian-kernel regression,
split at 1/8 of XLA's bytes (`--target iree`), compiled by IREE (llvm-cpu,
host CPU) and by XLA: the split program's median time in IREE over XLA,
and IREE's largest difference from jax's result.

    .venv/bin/python bench/bench_consumers.py [--repeats 7]

Times are medians of interleaved runs (memfit.measure); XLA with ynn
fusions off, the setting its byte counts are honest in.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from memfit.measure import NO_YNN

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + NO_YNN).strip()

import jax  # noqa: E402
import numpy as np  # noqa: E402

import memfit  # noqa: E402
from memfit._jax_handover import module_text  # noqa: E402
from memfit.consumers import load_iree, load_xla, xla_bytes_of  # noqa: E402
from memfit.measure import interleaved_medians  # noqa: E402
from memfit.testing import examples  # noqa: E402

import _results  # noqa: E402  (this script's folder is on sys.path)

MiB = 1024 * 1024
TORCH = Path(__file__).resolve().parents[1] / "test" / "python" / "data" / "torch"
TORCH_SHAPES = {
    "self_attention": ([(2, 1024, 64)], 2.5 * MiB),
    "attention": ([(2, 1024, 64)] * 3, 3.5 * MiB),
    "knn": ([(4096, 16), (256, 16)], None),
    "gaussian_kernel": ([(256, 8), (4096, 8), (4096, 2)], None),
}


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _ratio(fns, repeats):
    t = interleaved_medians(fns, repeats=repeats)
    a, b = list(t.values())
    return b / a, a, b


def torch_rows(repeats):
    print("torch-mlir programs through memfit opt and XLA")
    print(f"{'program':16} {'limit':>10} {'XLA before':>11} {'XLA after':>10} "
          f"{'time after/before':>18}")
    for name, (shapes, limit) in TORCH_SHAPES.items():
        text = (TORCH / f"{name}.mlir").read_text()
        before = xla_bytes_of(text)
        limit = int(limit or before // 8)
        split = memfit.transform(text, memfit.pipeline_for(memory_limit=limit))
        args = [jax.device_put(a) for a in _inputs(shapes)]
        f0, f1 = load_xla(text), load_xla(split)
        r, _, _ = _ratio({"before": lambda: f0(*args), "after": lambda: f1(*args)}, repeats)
        print(f"{name:16} {limit / MiB:9.2f}M {before / MiB:10.2f}M "
              f"{xla_bytes_of(split) / MiB:9.2f}M {r:17.2f}x")


IREE_CASES = examples.CONSUMER_CASES


def iree_rows(repeats):
    print("memfit's split programs (1/8 of XLA's bytes) in IREE and in XLA")
    print(f"{'program':18} {'limit':>9} {'XLA after':>10} {'IREE/XLA time':>14} "
          f"{'max |IREE-jax|':>15}")
    for fn, shapes in IREE_CASES:
        args = _inputs(shapes)
        text = module_text(jax.jit(fn).lower(*args))
        limit = xla_bytes_of(text) // 8
        split = memfit.transform(text, memfit.pipeline_for(memory_limit=limit, target="iree"))
        fi, fx = load_iree(split), load_xla(split)
        dev = [jax.device_put(a) for a in args]
        r, _, _ = _ratio({"xla": lambda: fx(*dev), "iree": lambda: fi(*args)}, repeats)
        want = [np.asarray(w) for w in jax.tree.leaves(jax.jit(fn)(*args))]
        err = max(float(np.max(np.abs(g.astype(np.float64) - w)))
                  for g, w in zip(fi(*args), want) if w.dtype.kind == "f")
        print(f"{fn.__name__:18} {limit / MiB:8.2f}M {xla_bytes_of(split) / MiB:9.2f}M "
              f"{r:13.2f}x {err:15.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    torch_rows(a.repeats)
    print()
    iree_rows(a.repeats)


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
