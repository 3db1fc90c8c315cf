"""memfit on programs as ML libraries write them (issue 44), value and gradient.

For each program: XLA's bytes for plain jax.jit (argument + output + temp -
alias, ynn fusions off so XLA counts every buffer); memfit.jit under a limit
whose temporaries are 16x below jax's (limit = arguments + outputs + jax's
temporaries / 16, --divisor); XLA's bytes of memfit's program at that limit;
the largest difference from jax's results (relative to the output's largest
magnitude); the median of interleaved timings (jax, memfit, ...; ynn fusions
off for both); and the smallest limit memfit reaches, as its model reports
it in the error below reach, and as XLA counts the program memfit compiles
at that limit (+2%), over the arguments + outputs.

    .venv/bin/python bench/bench_real_programs.py            # default sizes
    .venv/bin/python bench/bench_real_programs.py --quick    # smaller, 3 rounds
    .venv/bin/python bench/bench_real_programs.py --write    # also writes
        bench/results/bench_real_programs.txt

Rows are registered with @row: each returns (function, arguments) for a
size; the function is the value and gradient of a loss written as the
library writes it. Programs not yet here (a lax.scan + jax.checkpoint
decoder, a CLIP loss, a KV-cache decode step) are added the same way.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from memfit.measure import NO_YNN

if __name__ == "__main__":
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + NO_YNN).strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import memfit  # noqa: E402
from memfit.testing import examples  # noqa: E402
from memfit.measure import cpu_model, interleaved_medians, xla_bytes  # noqa: E402

MiB = 1024 * 1024
RESULTS = Path(__file__).resolve().parent / "results" / "bench_real_programs.txt"

#: name -> (description, builder(quick) -> (function, args))
ROWS: dict[str, tuple[str, object]] = {}


def row(name: str, description: str):
    def register(builder):
        ROWS[name] = (description, builder)
        return builder
    return register


def _rng(seed):
    return np.random.default_rng(seed)


@row("gnn_layer", "jraph-style message passing: nodes[senders] @ W, scaled, "
                  "segment_sum into receivers; grad in nodes, W, edge scales")
def gnn(quick):
    n, e, f = (8192, 250_000, 32) if quick else (16384, 1_000_000, 32)
    r = _rng(0)
    args = (r.standard_normal((n, f)).astype(np.float32),
            (r.standard_normal((f, f)) / 6).astype(np.float32),
            r.standard_normal(e).astype(np.float32),
            r.integers(0, n, e).astype(np.int32), r.integers(0, n, e).astype(np.int32))
    return jax.value_and_grad(examples.gnn_loss, argnums=(0, 1, 2)), args


def _optax_xent():
    """optax's own function when optax is installed (the msa extra), else
    memfit.examples' copy of its formula."""
    try:
        import optax
        return optax.softmax_cross_entropy_with_integer_labels, "optax"
    except ImportError:
        return examples.softmax_cross_entropy_with_integer_labels, "optax's formula"


@row("llm_head_xent", "LLM head: logits = h @ W, optax softmax_cross_entropy_with_"
                      "integer_labels (take_along_axis), mean; grad in h, W")
def llm_head(quick):
    t, h, v = (1024, 128, 16384) if quick else (2048, 256, 32000)
    r = _rng(1)
    xent, _ = _optax_xent()
    args = (r.standard_normal((t, h)).astype(np.float32),
            (r.standard_normal((h, v)) / np.sqrt(h)).astype(np.float32),
            r.integers(0, v, t).astype(np.int32))
    loss = lambda h, w, labels: examples.llm_head_loss(h, w, labels, xent)  # noqa: E731
    return jax.value_and_grad(loss, argnums=(0, 1)), args


@row("embedding_bag", "embedding bag: mean of table[tokens] per bag, a linear layer, "
                      "squared error; grad in table (a scatter-add) and W")
def embedding_bag(quick):
    rows, d, bags, tokens, c = (50_000, 64, 1024, 64, 16) if quick else \
        (200_000, 64, 4096, 64, 16)
    r = _rng(2)
    args = (r.standard_normal((rows, d)).astype(np.float32),
            r.standard_normal((d, c)).astype(np.float32),
            r.integers(0, rows, (bags, tokens)).astype(np.int32),
            r.standard_normal((bags, c)).astype(np.float32))
    return jax.value_and_grad(examples.embedding_bag_loss, argnums=(0, 1)), args


def _fixed_and_temp(compiled):
    m = compiled.memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes,
            m.temp_size_in_bytes)


def _max_rel_err(want, got):
    err = 0.0
    for w, g in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got)):
        w, g = np.asarray(w, np.float64), np.asarray(g, np.float64)
        err = max(err, float(np.max(np.abs(w - g))) / max(float(np.max(np.abs(w))), 1e-30))
    return err


REACH = re.compile(r"the smallest limit memfit can reach is .*?\((\d+) bytes\)")


def smallest_reachable(f, args, fixed):
    """(modelled floor, XLA's bytes at floor * 1.02) from the error memfit
    gives just above the arguments and outputs; (None, None) if it fits."""
    try:
        memfit.jit(f, memory_limit=fixed + 1024).lower(*args)
        return fixed + 1024, None
    except memfit.MemfitError as e:
        m = REACH.search(str(e))
        if not m:
            return None, None
        floor = int(m.group(1))
    try:
        compiled = memfit.jit(f, memory_limit=int(floor * 1.02)).lower(*args).compile()
        return floor, xla_bytes(compiled)
    except memfit.MemfitError:
        return floor, None


def measure(name, quick, rounds, divisor):
    f, args = ROWS[name][1](quick)
    base = jax.jit(f).lower(*args).compile()
    fixed, temp = _fixed_and_temp(base)
    limit = fixed + temp // divisor
    out = {"name": name, "jax": xla_bytes(base), "fixed": fixed, "limit": limit}
    try:
        fitted = memfit.jit(f, memory_limit=limit)
        split = fitted.lower(*args).compile()
    except memfit.MemfitError as e:
        out["error"] = str(e).splitlines()[-1].strip()[:300]
        return out
    out["memfit"] = xla_bytes(split)
    out["err"] = _max_rel_err(base(*args), split(*args))
    t = interleaved_medians({"jax": lambda: base(*args), "memfit": lambda: split(*args)},
                            repeats=rounds)
    out["jax_s"], out["memfit_s"] = t["jax"], t["memfit"]
    out["floor_model"], out["floor_xla"] = smallest_reachable(f, args, fixed)
    return out


def table(rows, rounds, divisor, quick) -> str:
    fmt = lambda b: "-" if b is None else f"{b / MiB:.1f}Mi"  # noqa: E731
    ratio = lambda b, fixed: "-" if b is None else f"{b / fixed:.2f}x"  # noqa: E731
    lines = [f"memfit on real-form programs, value and gradient (limit = arguments + outputs "
             f"+ jax's temporaries / {divisor}; {'quick sizes' if quick else 'default sizes'}; "
             f"median of {rounds} interleaved runs, ynn fusions off; CPU: {cpu_model()}, "
             f"{os.cpu_count()} cores)"]
    hdr = (f"{'program':15s} {'args+out':>9s} {'jax XLA':>9s} {'limit':>9s} {'memfit XLA':>10s} "
           f"{'jax s':>7s} {'memfit s':>8s} {'time':>6s} {'max rel err':>11s} "
           f"{'floor (model)':>13s} {'floor (XLA)':>11s} {'XLA/(a+o)':>9s}")
    lines += [hdr, "-" * len(hdr)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['name']:15s} {fmt(r['fixed']):>9s} {fmt(r['jax']):>9s} "
                         f"{fmt(r['limit']):>9s}  refused: {r['error']}")
            continue
        lines.append(
            f"{r['name']:15s} {fmt(r['fixed']):>9s} {fmt(r['jax']):>9s} {fmt(r['limit']):>9s} "
            f"{fmt(r['memfit']):>10s} {r['jax_s']:7.3f} {r['memfit_s']:8.3f} "
            f"{r['memfit_s'] / r['jax_s']:5.2f}x {r['err']:11.1e} "
            f"{fmt(r['floor_model']):>13s} {fmt(r['floor_xla']):>11s} "
            f"{ratio(r['floor_xla'], r['fixed']):>9s}")
    for name, (desc, _) in ROWS.items():
        lines.append(f"  {name}: {desc}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--divisor", type=int, default=16,
                    help="memfit's limit leaves jax's temporaries / divisor")
    ap.add_argument("--rows", default="", help="comma-separated row names (default: all)")
    ap.add_argument("--write", action="store_true", help=f"also write {RESULTS}")
    opts = ap.parse_args()
    rounds = opts.rounds or (3 if opts.quick else 5)
    names = [n for n in opts.rows.split(",") if n] or list(ROWS)
    rows = []
    for name in names:
        rows.append(measure(name, opts.quick, rounds, opts.divisor))
        print(f"... {name} done", file=sys.stderr, flush=True)
    text = table(rows, rounds, opts.divisor, opts.quick)
    print(text)
    if opts.write:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(text + "\n")


if __name__ == "__main__":
    main()
