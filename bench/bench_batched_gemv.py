"""memfit-rewrite{batched-gemv}: batched matrix-vector dots as multiply +
reduce, interleaved A/B.

Part 1, the two dots of a decode step's attention (q [B, H, D] and the
probabilities [B, H, S] against a [B, S, H, D] cache; B=16, S=4096, H=8,
D=64), written as jnp.einsum (a dot_general) and as broadcast-multiply +
sum, on the whole cache and on 34 chunks of 120 positions in a fori_loop
(the split's chunks). Part 2, the decode step (examples.kv_cache_decode,
the bench_real_programs row) under memfit.jit at that bench's limit (jax's
temporaries / 16), with the rewrite off and on, against jax. ynn fusions
off unless --ynn (bench_real_programs times with them off); prints the
medians, the load average and the CPU.

    .venv/bin/python bench/bench_batched_gemv.py [--rounds 15] [--ynn]
"""
from __future__ import annotations

import argparse
import os
import sys

from memfit.measure import NO_YNN

if __name__ == "__main__" and "--ynn" not in sys.argv:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + NO_YNN).strip()

import warnings  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import _results  # noqa: E402  (this script's folder is on sys.path)
import memfit  # noqa: E402
import memfit.api as api  # noqa: E402
from memfit.explain.split import applied_rewrites  # noqa: E402
from memfit.measure import cpu_model, interleaved_medians, xla_bytes  # noqa: E402
from memfit.testing import examples  # noqa: E402

B, S, H, D, CHUNK = 16, 4096, 8, 64, 120


def scores_dot(q, k):
    return jnp.einsum("bhd,bshd->bhs", q, k)


def values_dot(p, v):
    return jnp.einsum("bhs,bshd->bhd", p, v)


def scores_reduce(q, k):
    return jnp.transpose((q[:, None] * k).sum(-1), (0, 2, 1))


def values_reduce(p, v):
    return (jnp.transpose(p, (0, 2, 1))[..., None] * v).sum(1)


def chunked(scores, values):
    """Both products over CHUNK-position slices of the cache, accumulated."""
    def run(q, k, p):
        def body(i, acc):
            kc = jax.lax.dynamic_slice_in_dim(k, i * CHUNK, CHUNK, 1)
            pc = jax.lax.dynamic_slice_in_dim(p, i * CHUNK, CHUNK, 2)
            return acc + values(pc, kc) + scores(q, kc).sum(-1)[..., None]
        return jax.lax.fori_loop(0, S // CHUNK, body, jnp.zeros((B, H, D), jnp.float32))
    return jax.jit(run)


def dots_against_reduces(rounds):
    r = np.random.default_rng(0)
    q = jnp.asarray(r.standard_normal((B, H, D)), jnp.float32)
    k = jnp.asarray(r.standard_normal((B, S, H, D)), jnp.float32)
    p = jnp.asarray(r.standard_normal((B, H, S)), jnp.float32)
    fs = {
        "whole, dots": jax.jit(lambda q, k, p: (scores_dot(q, k), values_dot(p, k))),
        "whole, multiply + reduce": jax.jit(lambda q, k, p: (scores_reduce(q, k),
                                                             values_reduce(p, k))),
        f"{S // CHUNK} chunks of {CHUNK}, dots": chunked(scores_dot, values_dot),
        f"{S // CHUNK} chunks of {CHUNK}, multiply + reduce": chunked(scores_reduce,
                                                                     values_reduce),
    }
    t = interleaved_medians({n: (lambda f=f: f(q, k, p)) for n, f in fs.items()},
                            repeats=rounds, warmup=2)
    print(f"Both dots of the decode step, B={B} S={S} H={H} D={D}:")
    for n, s in t.items():
        print(f"  {n:40s} {s:.4f} s")


def decode_step(rounds):
    r = np.random.default_rng(5)  # bench_real_programs' row
    small = lambda: r.standard_normal((B, H, D)).astype(np.float32)  # noqa: E731
    cache = lambda: r.standard_normal((B, S, H, D)).astype(np.float32)  # noqa: E731
    args = (small(), small(), small(), cache(), cache(), np.int32(S // 2))
    fn = examples.kv_cache_decode
    base = jax.jit(fn).lower(*args).compile()
    m = base.memory_analysis()
    limit = (m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
             + m.temp_size_in_bytes // 16)
    original = api.pipeline_for
    fs = {"jax": base}
    for on in (False, True):
        def pipeline(*p, **k):
            text = original(*p, **k)
            return text if on else text.replace("memfit-rewrite{",
                                                "memfit-rewrite{batched-gemv=false ")
        api.pipeline_for = pipeline
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = memfit.jit(fn, memory_limit=limit)
            lowered = f.lower(*args)
            compiled = lowered.compile()
        assert ("batched-gemv" in applied_rewrites(lowered.as_text())) == on
        name = f"memfit, batched-gemv {'on' if on else 'off'}"
        loops = [ln.split("at ")[0].strip() for ln in str(f.report()).splitlines()
                 if ln.strip().startswith("1 ")]
        print(f"{name}: XLA {xla_bytes(compiled) / 2**20:.1f} MiB (limit "
              f"{limit / 2**20:.1f} MiB); loop: {' '.join(loops[0].split()) if loops else '-'}")
        fs[name] = compiled
    api.pipeline_for = original
    t = interleaved_medians({n: (lambda c=c: c(*args)) for n, c in fs.items()},
                            repeats=rounds)
    print("kv_cache_decode (bench_real_programs' row):")
    for n, s in t.items():
        print(f"  {n:28s} {s:.3f} s  {s / t['jax']:.2f}x jax")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--ynn", action="store_true", help="jax's default ynn fusions on")
    a = ap.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; ynn fusions "
          f"{'on' if a.ynn else 'off'}; medians of {a.rounds} interleaved rounds; "
          f"load {os.getloadavg()[0]:.2f}")
    dots_against_reduces(a.rounds)
    decode_step(a.rounds)
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__, variants=("--ynn",)))
