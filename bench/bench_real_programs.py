"""memfit on programs as ML libraries write them, value and gradient.

For each program: XLA's bytes for plain jax.jit (argument + output + temp -
alias, counted by a compile with ynn fusions off so XLA counts every
buffer: memfit.measure.ACCOUNTING_OPTIONS); memfit.jit under a limit
whose temporaries are 16x below jax's (limit = arguments + outputs + jax's
temporaries / 16, --divisor); XLA's bytes of memfit's program at that limit;
the largest difference from jax's results (relative to the output's largest
magnitude); the median of interleaved timings of the executables as they
run in jax's defaults (ynn fusions on; --time-ynn-off runs the whole process
with them off, as the accounting compiles); and the smallest limit memfit reaches: the lowest limit at
which memfit-split (margin 2) fits the program in its model, found by
bisection on the pass alone, and XLA's bytes of the program memfit.jit
compiles at that limit (+2%), over the arguments + outputs. A program
refused at the limit is timed at that floor.

    .venv/bin/python bench/bench_real_programs.py                 # default sizes, S=2048
    .venv/bin/python bench/bench_real_programs.py --quick         # smaller, S=1024, 3 rounds
    .venv/bin/python bench/bench_real_programs.py --rows decoder_scan --seq 4096
    .venv/bin/python bench/bench_real_programs.py --write         # also writes
        bench/results/bench_real_programs.txt

Rows are registered with @row: each returns (function, arguments) for the
sizes (quick, seq); the function is the value and gradient of a loss
written as the library writes it; `flax_decoder` is written with flax
itself (nn.scan over nn.remat(Block), as flax's lm1b example builds its
decoder).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from memfit.measure import NO_YNN

if __name__ == "__main__" and "--time-ynn-off" in sys.argv:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + NO_YNN).strip()

import jax  # noqa: E402
import numpy as np  # noqa: E402

import _results  # noqa: E402
import memfit  # noqa: E402
from memfit import _jax_handover as handover  # noqa: E402
from memfit.explain.split import smallest_reachable as reachable_in  # noqa: E402
from memfit.measure import (ACCOUNTING_OPTIONS, cpu_model, interleaved_medians,  # noqa: E402
                            xla_bytes)
from memfit.testing.oracle import relative_error  # noqa: E402
from memfit.testing import examples  # noqa: E402
from memfit.transform import pipeline_for, transform  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))
import scan_programs as sp  # noqa: E402

MiB = 1024 * 1024
#: timed with ynn fusions off (--time-ynn-off) instead of jax's defaults
YNN_OFF = NO_YNN in os.environ.get("XLA_FLAGS", "")

#: name -> (description, builder(quick, seq) -> (function, args))
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
def gnn(quick, seq):
    n, e, f = (8192, 250_000, 32) if quick else (16384, 1_000_000, 32)
    r = _rng(0)
    args = (r.standard_normal((n, f)).astype(np.float32),
            (r.standard_normal((f, f)) / 6).astype(np.float32),
            r.standard_normal(e).astype(np.float32),
            r.integers(0, n, e).astype(np.int32), r.integers(0, n, e).astype(np.int32))
    return jax.value_and_grad(examples.gnn_loss, argnums=(0, 1, 2)), args


def _optax_xent():
    """optax's own function when optax is installed (the msa extra), else
    memfit.testing.examples' copy of its formula."""
    try:
        import optax
        return optax.softmax_cross_entropy_with_integer_labels, "optax"
    except ImportError:
        return examples.softmax_cross_entropy_with_integer_labels, "optax's formula"


@row("llm_head_xent", "LLM head: logits = h @ W, optax softmax_cross_entropy_with_"
                      "integer_labels (take_along_axis), mean; grad in h, W")
def llm_head(quick, seq):
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
def embedding_bag(quick, seq):
    rows, d, bags, tokens, c = (50_000, 64, 1024, 64, 16) if quick else \
        (200_000, 64, 4096, 64, 16)
    r = _rng(2)
    args = (r.standard_normal((rows, d)).astype(np.float32),
            r.standard_normal((d, c)).astype(np.float32),
            r.integers(0, rows, (bags, tokens)).astype(np.int32),
            r.standard_normal((bags, c)).astype(np.float32))
    return jax.value_and_grad(examples.embedding_bag_loss, argnums=(0, 1)), args


@row("clip_loss", "CLIP-style symmetric contrastive loss: [B, B] logits of normalised "
                  "embeddings, integer-label cross-entropy over rows and columns; grad in "
                  "both embeddings and the temperature")
def clip(quick, seq):
    b, d = (2048, 128) if quick else (4096, 256)
    r = _rng(4)
    args = (r.standard_normal((b, d)).astype(np.float32),
            r.standard_normal((b, d)).astype(np.float32), np.float32(np.log(10.0)))
    return jax.value_and_grad(examples.clip_loss, argnums=(0, 1, 2)), args


@row("kv_cache_decode", "one decode step with a KV cache: the new token's keys and values "
                        "written with dynamic_update_slice, attention over the [B, S, H, D] "
                        "caches (B=16, H=8, D=64)")
def kv_cache_decode(quick, seq):
    b, s, h, d = 16, 2 * seq, 8, 64
    r = _rng(5)
    small = lambda: r.standard_normal((b, h, d)).astype(np.float32)  # noqa: E731
    cache = lambda: r.standard_normal((b, s, h, d)).astype(np.float32)  # noqa: E731
    return examples.kv_cache_decode, (small(), small(), small(), cache(), cache(), np.int32(s // 2))


@row("decoder_scan", "4-layer decoder, lax.scan(jax.checkpoint(layer)) over stacked "
                     "params (MaxText scan_layers / flax nn.scan), causal mask, d=256, "
                     "4 heads, GELU MLP 4x; value_and_grad in params and x")
def decoder_scan(quick, seq):
    return sp.decoder(heads=4), sp.decoder_args(seq, d=256, layers=4)


@row("flax_decoder", "4-layer flax decoder: nn.scan(nn.remat(Block)) over flax's "
                     "MultiHeadDotProductAttention (no biases, as flax's lm1b example), "
                     "nn.make_causal_mask, LayerNorm, Dense + tanh GELU MLP 4x, d=256, 4 heads; "
                     "value_and_grad of optax.l2_loss in the params")
def flax_decoder(quick, seq):
    return sp.flax_decoder(seq, d=256, layers=4, heads=4, attention_bias=False)


@row("mean_shift_fori", "lax.fori_loop of 4 mean-shift steps: softmax(-|x - y|^2 / 2) y, "
                        "[S, 2S] weights per step, 8-d")
def mean_shift_fori(quick, seq):
    return sp.mean_shift(steps=4), sp.mean_shift_args(2 * seq, 4 * seq)



def _accounted(lowered):
    """XLA's count of a lowered program (jax's or memfit's), ynn fusions off."""
    return lowered.compile(compiler_options=ACCOUNTING_OPTIONS)


def _fixed_and_temp(compiled):
    m = compiled.memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes,
            m.temp_size_in_bytes)


def _max_rel_err(want, got):
    return max(relative_error(g, w) for w, g in zip(jax.tree_util.tree_leaves(want),
                                                    jax.tree_util.tree_leaves(got)))




def _pass_fits(text: str, limit: int, margin: float) -> bool:
    try:
        transform(text, pipeline_for(None, limit, temp_margin=margin))
        return True
    except memfit.MemfitError:
        return False


def _pass_floor(text: str, fixed: int, margin: float, steps: int) -> int | None:
    """The lowest limit (to 1/2^steps of the range) at which memfit-split
    fits the program in its model with `margin`: bisection on the pass
    alone, between the arguments + outputs and the floor its error reports
    (a probe that takes the smallest chunks at every step; the greedy steps
    can fit below it)."""
    try:
        transform(text, pipeline_for(None, fixed + 1024, temp_margin=margin))
        return fixed + 1024
    except memfit.MemfitError as e:
        hi = reachable_in(e)
    if hi is None or not _pass_fits(text, hi, margin):
        return None
    lo = fixed + 1024
    for _ in range(steps):
        mid = (lo + hi) // 2
        if _pass_fits(text, mid, margin):
            hi = mid
        else:
            lo = mid
    return hi


def smallest_reachable(f, args, fixed, steps=7):
    """(floor, XLA's bytes at floor * 1.02, its executable as it runs), the floor of
    memfit-split's default margin (2). Below it memfit.jit's calibration
    may still meet a limit with the model as it is (calibrate._rescue), but
    the greedy steps are not monotonic in the limit at margin 1, so no
    bisection finds that floor: it is not reported here."""
    text = handover.module_text(jax.jit(f).lower(*args))
    floor = _pass_floor(text, fixed, 2.0, steps)
    if floor is None:
        return None, None, None
    try:
        lowered = memfit.jit(f, memory_limit=int(floor * 1.02)).lower(*args)
        return floor, xla_bytes(_accounted(lowered)), lowered.compile()
    except memfit.MemfitError:
        return floor, None, None


def measure(name, quick, seq, rounds, divisor):
    f, args = ROWS[name][1](quick, seq)
    base_lowered = jax.jit(f).lower(*args)
    base, base_counted = base_lowered.compile(), _accounted(base_lowered)
    fixed, temp = _fixed_and_temp(base_counted)
    limit = fixed + temp // divisor
    out = {"name": name, "jax": xla_bytes(base_counted), "fixed": fixed, "limit": limit}
    try:
        lowered = memfit.jit(f, memory_limit=limit).lower(*args)
        split, split_counted = lowered.compile(), _accounted(lowered)
    except memfit.MemfitError as e:
        lines = [ln for ln in str(e).splitlines() if "memfit-split:" in ln]
        out["error"] = (lines or str(e).splitlines())[-1].split("memfit-split:")[-1].strip()[:300]
        split = None
    out["floor_model"], out["floor_xla"], at_floor = smallest_reachable(f, args, fixed)
    if split is None:
        if at_floor is None:
            return out
        # refused at the limit: its time is the program memfit compiles at its floor
        split, out["timed_at_floor"] = at_floor, True
    else:
        out["memfit"] = xla_bytes(split_counted)
    out["err"] = _max_rel_err(base(*args), split(*args))
    t = interleaved_medians({"jax": lambda: base(*args), "memfit": lambda: split(*args)},
                            repeats=rounds)
    out["jax_s"], out["memfit_s"] = t["jax"], t["memfit"]
    return out


def table(rows, rounds, divisor, quick, seq) -> str:
    fmt = lambda b: "-" if b is None else f"{b / MiB:.1f}Mi"  # noqa: E731
    ratio = lambda b, fixed: "-" if b is None else f"{b / fixed:.2f}x"  # noqa: E731
    lines = [f"memfit on real-form programs, value and gradient (limit = arguments + outputs "
             f"+ jax's temporaries / {divisor}; {'quick' if quick else 'default'} sizes, S={seq}; "
             f"XLA's bytes with ynn fusions off; median of {rounds} interleaved runs, "
             f"{'ynn fusions off' if YNN_OFF else 'jax defaults'}; CPU: {cpu_model()}, "
             f"{os.cpu_count()} cores)"]
    hdr = (f"{'program':15s} {'args+out':>9s} {'jax XLA':>9s} {'limit':>9s} {'memfit XLA':>10s} "
           f"{'jax s':>7s} {'memfit s':>8s} {'time':>6s} {'max rel err':>11s} "
           f"{'floor (model)':>13s} {'floor (XLA)':>11s} {'XLA/(a+o)':>9s}")
    lines += [hdr, "-" * len(hdr)]
    for r in rows:
        floors = (f"{fmt(r.get('floor_model')):>13s} {fmt(r.get('floor_xla')):>11s} "
                  f"{ratio(r.get('floor_xla'), r['fixed']):>9s}")
        if "error" in r and "jax_s" not in r:
            lines.append(f"{r['name']:15s} {fmt(r['fixed']):>9s} {fmt(r['jax']):>9s} "
                         f"{fmt(r['limit']):>9s}  refused; floors {floors}: {r['error']}")
            continue
        if "error" in r:
            lines.append(
                f"{r['name']:15s} {fmt(r['fixed']):>9s} {fmt(r['jax']):>9s} {fmt(r['limit']):>9s} "
                f"{'refused':>10s} {r['jax_s']:7.3f} {r['memfit_s']:8.3f} "
                f"{r['memfit_s'] / r['jax_s']:5.2f}x {r['err']:11.1e} {floors}  (timed at "
                f"the floor; at the limit: {r['error']})")
            continue
        lines.append(
            f"{r['name']:15s} {fmt(r['fixed']):>9s} {fmt(r['jax']):>9s} {fmt(r['limit']):>9s} "
            f"{fmt(r['memfit']):>10s} {r['jax_s']:7.3f} {r['memfit_s']:8.3f} "
            f"{r['memfit_s'] / r['jax_s']:5.2f}x {r['err']:11.1e} {floors}")
    for r in rows:
        lines.append(f"  {r['name']}: {ROWS[r['name']][0]}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, S=1024, 3 rounds")
    ap.add_argument("--seq", type=int, default=0,
                    help="sequence length S of the layer-loop rows (default 2048)")
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--divisor", type=int, default=16,
                    help="memfit's limit leaves jax's temporaries / divisor")
    ap.add_argument("--rows", default="", help="comma-separated row names (default: all)")
    ap.add_argument("--time-ynn-off", action="store_true",
                    help="time with ynn fusions off (the whole process), not in jax's defaults")
    _results.add_write_flag(ap)
    opts = ap.parse_args()
    seq = opts.seq or (1024 if opts.quick else 2048)
    rounds = opts.rounds or (3 if opts.quick else 5)
    names = _results.chosen(ap, opts.rows, ROWS, "rows")
    rows = []
    for name in names:
        rows.append(measure(name, opts.quick, seq, rounds, opts.divisor))
        print(f"... {name} done", file=sys.stderr, flush=True)
    print(table(rows, rounds, opts.divisor, opts.quick, seq))
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
