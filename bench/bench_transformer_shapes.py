"""A transformer block's SGD step on block shapes the race does not use,
memfit.jit at 10x less memory than jax's bytes against plain jax.jit, jax's
default configuration (ynn fusions on, as a user runs it).

Each shape varies what the race's block fixes: the sequence length, the
number and width of the heads, the MLP's width, and pre- or post-layernorm.
Per shape: jax's bytes (XLA's argument + output + temp - alias, ynn fusions
off, counted in a child process), the limit (those bytes / 10; where memfit
refuses it, the smallest limit its error names, + 2%), memfit's
bytes at that limit, and the median of interleaved step times (memfit's
over jax's; issue goal <= 0.85x).

    .venv/bin/python bench/bench_transformer_shapes.py            # all shapes, 5 rounds
    .venv/bin/python bench/bench_transformer_shapes.py --quick    # S / 4, 3 rounds
    .venv/bin/python bench/bench_transformer_shapes.py --write    # also writes
        bench/results/bench_transformer_shapes.txt
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np

import _results
from bench_compile import _layernorm  # the held-out block's, shared
import memfit
from memfit.explain.split import smallest_reachable
from memfit.measure import NO_YNN, cpu_model, interleaved_medians, xla_bytes

MiB = 1024 * 1024

#: name -> (S, width d, heads, MLP factor, layernorm placement)
SHAPES = {
    "S=6144 d=192 4x48 pre": (6144, 192, 4, 4, "pre"),
    "S=4096 d=256 8x32 pre": (4096, 256, 8, 4, "pre"),
    "S=8192 d=128 2x64 post": (8192, 128, 2, 4, "post"),
    "S=3072 d=384 6x64 MLP2 pre": (3072, 384, 6, 2, "pre"),
}


def _attention(p, h, heads):
    s, d = h.shape
    q, k, v = ((h @ p[w]).reshape(s, heads, -1) for w in ("wq", "wk", "wv"))
    scores = jnp.einsum("qhd,khd->hqk", q, k) / np.float32(np.sqrt(d // heads))
    return jnp.einsum("hqk,khd->qhd", jax.nn.softmax(scores, -1), v).reshape(s, d) @ p["wo"]


def block(p, x, heads, norm):
    """One block: attention over the rows of x, then a GELU MLP, with the
    layernorms before each (pre) or after each residual sum (post)."""
    mlp = lambda h: jax.nn.gelu(h @ p["w1"]) @ p["w2"]  # noqa: E731
    if norm == "pre":
        x = x + _attention(p, _layernorm(x, p["g1"], p["b1"]), heads)
        return x + mlp(_layernorm(x, p["g2"], p["b2"]))
    x = _layernorm(x + _attention(p, x, heads), p["g1"], p["b1"])
    return _layernorm(x + mlp(x), p["g2"], p["b2"])


def program(name: str, quick: bool):
    s, d, heads, f, norm = SHAPES[name]
    s = s // 4 if quick else s

    def sgd_step(p, x, t):
        g = jax.grad(lambda p: jnp.mean((block(p, x, heads, norm) - t) ** 2))(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)

    rng = np.random.default_rng(sum(map(ord, name)))
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d),
              "w1": (d, f * d), "w2": (f * d, d)}
    p = {k: jnp.asarray(rng.standard_normal(sh, np.float32) / np.sqrt(sh[0]))
         for k, sh in shapes.items()}
    p.update(g1=jnp.ones(d), b1=jnp.zeros(d), g2=jnp.ones(d), b2=jnp.zeros(d))
    x, t = (jnp.asarray(rng.standard_normal((s, d), np.float32)) for _ in range(2))
    return sgd_step, (p, x, t)


def _counted_bytes(name: str, quick: bool, limit: int | None) -> int:
    """XLA's bytes with ynn fusions off, in a child process (the flag is
    read once per process): jax's program, or memfit's at ``limit``."""
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
            "import jax, memfit, bench_transformer_shapes as b\n"
            "from memfit.measure import xla_bytes\n"
            f"fn, args = b.program({name!r}, {quick})\n"
            f"limit = {limit}\n"
            "f = jax.jit(fn) if limit is None else memfit.jit(fn, memory_limit=limit)\n"
            "print(xla_bytes(f.lower(*args).compile()))\n")
    env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " " + NO_YNN).strip())
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    return int(out.split()[-1])


def _fitted(fn, args, limit: int):
    """memfit.jit at ``limit``, or, where memfit refuses it, at the floor
    its error names (+2%): (jitted, limit used, refused)."""
    try:
        fitted = memfit.jit(fn, memory_limit=limit)
        fitted.lower(*args)
        return fitted, limit, False
    except memfit.MemfitError as e:
        found = smallest_reachable(e)
        if found is None:
            raise
        floor = int(found * 1.02)
        fitted = memfit.jit(fn, memory_limit=floor)
        fitted.lower(*args)
        return fitted, floor, True


def measure(name: str, quick: bool, rounds: int) -> dict:
    jax_bytes = _counted_bytes(name, quick, None)
    fn, args = program(name, quick)
    plain = jax.jit(fn).lower(*args).compile()
    fitted, limit, refused = _fitted(fn, args, jax_bytes // 10)
    memfit_bytes = _counted_bytes(name, quick, limit)
    want, got = plain(*args), fitted(*args)
    err = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))) /
                    max(float(np.max(np.abs(np.asarray(a)))), 1e-30))
              for a, b in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got)))
    t = interleaved_medians({"jax": lambda: plain(*args), "memfit": lambda: fitted(*args)},
                            repeats=rounds)
    return dict(name=name, jax_bytes=jax_bytes, limit=limit, refused=refused,
                memfit_bytes=memfit_bytes,
                jax_s=t["jax"], memfit_s=t["memfit"], err=err)


def table(rows, rounds) -> str:
    lines = [f"SGD step of one transformer block, memfit.jit at jax's bytes / 10 against jax.jit "
             f"(jax's default flags; bytes by XLA with ynn fusions off; median of {rounds} "
             f"interleaved runs; CPU: {cpu_model()}, {os.cpu_count()} cores)",
             "| shape | jax bytes | limit | memfit bytes | jax s | memfit s | memfit / jax "
             "| max rel diff |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['jax_bytes'] / MiB:.1f} MiB | {r['limit'] / MiB:.1f} MiB"
                     f"{' (jax / 10 refused: the floor)' if r['refused'] else ''} "
                     f"| {r['memfit_bytes'] / MiB:.1f} MiB | {r['jax_s']:.3f} | "
                     f"{r['memfit_s']:.3f} | {r['memfit_s'] / r['jax_s']:.2f}x | {r['err']:.1e} |")
    ratios = [r["memfit_s"] / r["jax_s"] for r in rows]
    lines.append(f"geomean memfit / jax: {float(np.exp(np.mean(np.log(ratios)))):.2f}x; "
                 f"load average at the end: {os.getloadavg()[0]:.1f}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="S / 4, 3 rounds")
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--shapes", default="", help="comma-separated shape names (default: all)")
    _results.add_write_flag(ap)
    opts = ap.parse_args()
    rounds = opts.rounds or (3 if opts.quick else 5)
    names = _results.chosen(ap, opts.shapes, SHAPES, "shapes")
    rows = []
    for name in names:
        rows.append(measure(name, opts.quick, rounds))
        print(f"... {name} done", file=sys.stderr, flush=True)
    print(table(rows, rounds))
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
