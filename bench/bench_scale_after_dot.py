"""memfit-rewrite{scale-after-dot} on split attention, interleaved A/B.

memfit.jit of attention (8 heads, S=16,384, d=64, 512 MiB; with --grad its
forward + backward, the cotangent an input) compiled with and without the
scale-after-dot rewrite, and the hand-written query-chunked version of
bench_race.py, run in turns in one process (jax defaults); prints each
round and the medians' ratios.

    .venv/bin/python bench/bench_scale_after_dot.py [--grad] [--rounds 3] [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import memfit
import memfit.api as api
from memfit.explain.split import applied_rewrites

sys.path.insert(0, str(Path(__file__).parent))
from bench_race import _attn_grad, attention, attention_chunked  # noqa: E402

import _results  # noqa: E402  (this script's folder is on sys.path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--grad", action="store_true", help="forward + backward")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="4 heads, S=2,048, 16 MiB")
    a = ap.parse_args()
    h, s, limit = (4, 2048, "16MiB") if a.quick else (8, 16384, "512MiB")
    block = 128 if a.grad else 256
    plain = _attn_grad(attention) if a.grad else attention
    hand = (_attn_grad(lambda q, k, v: attention_chunked(q, k, v, block, remat=True))
            if a.grad else (lambda q, k, v: attention_chunked(q, k, v, block)))
    args = [jax.random.normal(jax.random.PRNGKey(i), (h, s, 64), jnp.float32)
            for i in range(4 if a.grad else 3)]

    # memfit.jit builds its pipeline with api.pipeline_for: the "off"
    # variant is compiled with the rewrite switched off in both runs of
    # memfit-rewrite (it only ever applies after the split).
    original = api.pipeline_for
    fs = {}
    for on in (True, False):
        def pipeline(*p, **k):
            text = original(*p, **k)
            return text if on else text.replace("memfit-rewrite{",
                                                "memfit-rewrite{scale-after-dot=false ")
        api.pipeline_for = pipeline
        f = memfit.jit(plain, memory_limit=limit)
        text = f.lower(*args).as_text()  # compiles (and calibrates) under this pipeline
        assert ("scale-after-dot" in applied_rewrites(text)) == on
        print(f"scale-after-dot {'on' if on else 'off'}: {f.last_calibration.summary()}",
              flush=True)
        fs[f"memfit, scale-after-dot {'on' if on else 'off'}"] = f
    api.pipeline_for = original
    fs[f"hand-written ({block} queries)"] = jax.jit(hand)

    for f in fs.values():
        jax.block_until_ready(f(*args))
    times = {k: [] for k in fs}
    for r in range(a.rounds):
        for k, f in fs.items():
            t = time.perf_counter()
            jax.block_until_ready(f(*args))
            times[k].append(time.perf_counter() - t)
        print(f"round {r}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()),
              flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    on, off, hd = med.values()
    print(f"medians: on {on:.2f} s, off {off:.2f} s, hand {hd:.2f} s; "
          f"on / hand {on / hd:.2f}x, off / hand {off / hd:.2f}x, on / off {on / off:.2f}x")


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
