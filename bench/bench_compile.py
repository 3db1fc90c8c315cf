"""Compile time: memfit.jit(f, memory_limit=...).lower(...) over
jax.jit(f).lower(...).compile(), first call and with a warm calibration cache.

Programs: the memfit variant of every row of bench/bench_race.py (same
function, arguments and limit), and two written here, which no other bench
uses: a pre-layernorm transformer block's SGD step (S=6,144, 4 heads of 48,
MLP 4x; limit 178 MiB, 1/10 of jax's 1.73 GiB) and an LLM head's
cross-entropy value and gradient (2,048 tokens, width 256, vocabulary
32,768; limit 192 MiB, a third of jax's 580 MiB: arguments and outputs
alone take 68 MiB).

Every measurement is a fresh process (jax's defaults: ynn fusions on; the
modules' bytecode cached, as an installed package has it) that
imports jax and memfit, builds the arguments, compiles a one-op program
(backend start-up; bench_race's rows also compile after jax is up) and then
times one call:

* jax: ``jax.jit(f).lower(*args).compile()``;
* memfit, first call: ``memfit.jit(f, memory_limit=L).lower(*args)`` with
  an empty calibration cache (MEMFIT_CACHE_DIR set to a new directory):
  lowering, memfit's passes for every margin tried, the calibration's
  compiles, the compile of the program that runs, and writing the cache;
* memfit, warm: the same in a second fresh process on that directory (the
  entry holds the kept program, its counts and its executable);
* memfit, warm record: the same with MEMFIT_CACHE_EXECUTABLES=0 (the entry's
  executable is not read: the kept program is compiled once, as it runs).

Columns: seconds (the median round of --repeats; each round runs the four
processes in turn, and the stages shown are that round's), memfit's over jax's, the compiles of the first call by
kind (memfit.api.COMPILES: count = a calibration compile read only for XLA's
memory counts, LLVM at -O0; run = the executable that runs; lean = a split
tried with ynn fusions of dots only) and where the first call's time went.
The machine's load average is printed before and after: on shared cores
compile times move with it, so the notes also give each side's CPU seconds
(process time, all threads) of the first call.

    .venv/bin/python bench/bench_compile.py                 # every row, ~10 min
    .venv/bin/python bench/bench_compile.py --rows heldout_transformer,heldout_llm_head
    .venv/bin/python bench/bench_compile.py --quick --repeats 3
    .venv/bin/python bench/bench_compile.py --write         # bench/results/bench_compile.txt
    .venv/bin/python bench/bench_compile.py --baseline /path/to/old/.venv/bin/python
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HELD_OUT = ["heldout_transformer", "heldout_llm_head"]


# ---------------------------------------------------- held-out programs

def _layernorm(x, g, b):
    import jax
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def _block(p, x, heads):
    """Pre-layernorm block: attention over the rows of x, then a GELU MLP."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    s, d = x.shape
    h = _layernorm(x, p["g1"], p["b1"])
    q, k, v = ((h @ p[w]).reshape(s, heads, -1) for w in ("wq", "wk", "wv"))
    scores = jnp.einsum("qhd,khd->hqk", q, k) / np.float32(np.sqrt(d // heads))
    a = jnp.einsum("hqk,khd->qhd", jax.nn.softmax(scores, -1), v).reshape(s, d)
    x = x + a @ p["wo"]
    return x + jax.nn.gelu(_layernorm(x, p["g2"], p["b2"]) @ p["w1"]) @ p["w2"]


def heldout_transformer(quick: bool):
    import jax
    import jax.numpy as jnp
    import numpy as np
    s, d, heads = (1_536, 96, 2) if quick else (6_144, 192, 4)

    def sgd_step(p, x, t):
        g = jax.grad(lambda p: jnp.mean((_block(p, x, heads) - t) ** 2))(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)

    rng = np.random.default_rng(30)
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d),
              "w1": (d, 4 * d), "w2": (4 * d, d)}
    p = {k: jnp.asarray(rng.standard_normal(sh, np.float32) / np.sqrt(sh[0]))
         for k, sh in shapes.items()}
    p.update(g1=jnp.ones(d), b1=jnp.zeros(d), g2=jnp.ones(d), b2=jnp.zeros(d))
    x, t = (jnp.asarray(rng.standard_normal((s, d), np.float32)) for _ in range(2))
    limit = "12MiB" if quick else "178MiB"
    return (f"held-out pre-LN block SGD step S={s:,}, {heads} heads of {d // heads}, MLP 4x",
            sgd_step, (p, x, t), limit)


def heldout_llm_head(quick: bool):
    import jax
    import jax.numpy as jnp
    import numpy as np
    t, d, v = (512, 128, 8_192) if quick else (2_048, 256, 32_768)

    def loss(h, w, labels):
        logits = h @ w
        return jnp.mean(jax.nn.logsumexp(logits, -1)
                        - jnp.take_along_axis(logits, labels[:, None], -1)[:, 0])

    rng = np.random.default_rng(50)
    h = jnp.asarray(rng.standard_normal((t, d), np.float32))
    w = jnp.asarray(rng.standard_normal((d, v), np.float32) / np.sqrt(d))
    labels = jnp.asarray(rng.integers(0, v, t), jnp.int32)
    limit = "24MiB" if quick else "192MiB"
    return (f"held-out LLM head cross-entropy value+grad T={t:,} d={d} V={v:,}",
            jax.value_and_grad(loss, argnums=(0, 1)), (h, w, labels), limit)


def _program(row: str, quick: bool):
    """(description, plain function, arguments, limit, jax.jit keywords)."""
    if row in HELD_OUT:
        return (*globals()[row](quick), {})
    sys.path.insert(0, str(HERE))
    import bench_race
    spec = bench_race.ROWS[bench_race.ROW_KEYS.index(row)](quick)
    variant = next(v for v in spec.variants if v.kind == "memfit")
    fn, args = variant.make()
    return spec.program, fn._fun, args, variant.limit, fn._jit_kwargs


# ------------------------------------------------------------ one process

def child(row: str, mode: str, quick: bool) -> dict:
    import jax

    import memfit
    from memfit import api
    try:
        from memfit import compile_cache
        cache_stats = compile_cache.stats
    except ImportError:  # a memfit before the cache (--baseline)
        cache_stats = {}
    what, fun, args, limit, jit_kwargs = _program(row, quick)
    jax.block_until_ready(jax.tree_util.tree_leaves(args))
    jax.jit(lambda x: x + 1).lower(1.0).compile()  # backend start-up, not timed
    if mode == "jax":
        c0 = time.process_time()
        t0 = time.perf_counter()
        lowered = jax.jit(fun, **jit_kwargs).lower(*args)
        t1 = time.perf_counter()
        lowered.compile()
        t2 = time.perf_counter()
        return {"what": what, "limit": limit, "total": t2 - t0, "lower": t1 - t0,
                "compile": t2 - t1, "cpu": time.process_time() - c0}
    f = memfit.jit(fun, memory_limit=limit, **jit_kwargs)
    c0 = time.process_time()
    t0 = time.perf_counter()
    try:
        f.lower(*args)
    except memfit.MemfitError as e:
        msg = e.diagnostics[0].get("message", "") if e.diagnostics else str(e)
        return {"what": what, "limit": limit, "error": "not split: " + " ".join(msg.split())}
    total = time.perf_counter() - t0
    cpu = time.process_time() - c0
    cal = f.last_calibration
    return {"what": what, "limit": limit, "total": total, "cpu": cpu,
            "compiles": dict(getattr(api, "COMPILES", {})),
            "compile_s": dict(getattr(api, "COMPILE_SECONDS", {})),
            "attempts": len(cal.attempts) if cal else 0,
            "pass_s": cal.pass_seconds if cal else None, "cache": dict(cache_stats),
            "fits": bool(cal and cal.kept.total_bytes is not None
                         and cal.kept.total_bytes <= cal.limit),
            "summary": cal.summary() if cal else ""}


def _run(row: str, mode: str, quick: bool, env_extra: dict, timeout: float,
         python: str = sys.executable) -> dict:
    env = dict(os.environ)
    # as an installed package runs: with its modules' bytecode cached (jax's
    # are, in site-packages); without, every process compiles memfit's
    # Python source anew (0.05 s of a warm call measured)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(env_extra)
    cmd = [python, str(Path(__file__).resolve()), "--child", row, mode]
    if quick:
        cmd.append("--quick")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=str(HERE))
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH-COMPILE "):
            return json.loads(line.split(" ", 1)[1])
    return {"error": f"exit {proc.returncode}: " + " ".join(proc.stderr.split())[-300:]}


def measure(row: str, opts) -> dict:
    """Every process of one row, --repeats rounds; medians."""
    rounds = []
    for _ in range(opts.repeats):
        with tempfile.TemporaryDirectory(prefix="memfit-bench-cache-") as cache:
            on = {"MEMFIT_CACHE": "1", "MEMFIT_CACHE_DIR": cache,
                  "MEMFIT_CACHE_EXECUTABLES": "1"}
            r = {"jax": _run(row, "jax", opts.quick, {}, opts.timeout)}
            r["first"] = _run(row, "memfit", opts.quick, on, opts.timeout)
            r["warm"] = _run(row, "memfit", opts.quick, on, opts.timeout)
            r["record"] = _run(row, "memfit", opts.quick,
                               dict(on, MEMFIT_CACHE_EXECUTABLES="0"), opts.timeout)
            if opts.baseline:
                # a first call too: a cache of its own, empty (the default
                # directory would hold the baseline's earlier runs)
                r["baseline"] = _run(row, "memfit", opts.quick,
                                     dict(on, MEMFIT_CACHE_DIR=os.path.join(cache, "baseline")),
                                     opts.timeout, python=opts.baseline)
        rounds.append(r)
    out = {}
    for k in ("jax", "first", "warm", "record") + (("baseline",) if opts.baseline else ()):
        ok = sorted((r[k] for r in rounds if "error" not in r[k]), key=lambda x: x["total"])
        # the median round (the lower one of an even count), with its stages
        out[k] = dict(ok[(len(ok) - 1) // 2], n=len(ok)) if ok else rounds[0][k]
    return out


# ------------------------------------------------------------------ table

HEADER = ("| program | limit | jax.jit lower+compile (s) | memfit first call (s) | first / jax "
          "| first call's compiles | memfit warm (s) | warm / jax | warm, record only (s) "
          "| record / jax |\n|---|---|---|---|---|---|---|---|---|---|")


def _compiles(r: dict) -> str:
    c = r.get("compiles", {})
    return ", ".join(f"{c[k]} {k}" for k in ("count", "run", "lean") if c.get(k)) or "none"


def _baseline_note(r: dict, t_jax: float) -> str:
    b = r.get("baseline")
    if b is None:
        return ""
    if "error" in b:
        return f"; baseline memfit: {b['error'][:200]}"
    cpu = f", {b['cpu']:.2f} CPU seconds" if "cpu" in b else ""
    return (f"; baseline memfit (--baseline) first call {b['total']:.2f} s = "
            f"{b['total'] / t_jax:.2f}x jax{cpu}, compiles {_compiles(b)}")


def line(row: str, r: dict) -> tuple[str, str]:
    jax_r, first = r["jax"], r["first"]
    what = jax_r.get("what") or first.get("what") or row
    if "error" in jax_r or "error" in first:
        why = first.get("error") or jax_r.get("error")
        return f"| {what} | {first.get('limit', '-')} | - | - | - | - | - | - | - | - |", \
            f"{what}: {why}"
    t_jax = jax_r["total"]

    def cell(k):
        x = r[k]
        if "error" in x:
            return "failed", "-"
        return f"{x['total']:.2f}", f"{x['total'] / t_jax:.2f}x"
    f_t, f_r = cell("first")
    w_t, w_r = cell("warm")
    c_t, c_r = cell("record")
    table = (f"| {what} | {first['limit']} | {t_jax:.2f} | {f_t} | {f_r} | {_compiles(first)} "
             f"| {w_t} | {w_r} | {c_t} | {c_r} |")
    cs = first.get("compile_s", {})
    compiled = sum(cs.values())
    other = first["total"] - compiled - (first.get("pass_s") or 0)
    cpu = (f" (CPU seconds: jax {jax_r['cpu']:.2f}, memfit's first call {first['cpu']:.2f} = "
           f"{first['cpu'] / jax_r['cpu']:.2f}x)" if "cpu" in jax_r and "cpu" in first else "")
    note = (f"{what}: jax lower {jax_r['lower']:.2f} s + compile {jax_r['compile']:.2f} s{cpu}; "
            f"memfit first call: passes {first.get('pass_s') or 0:.2f} s, "
            + ", ".join(f"{k} compiles {cs[k]:.2f} s" for k in ("count", "run", "lean")
                        if k in cs)
            + f", the rest (lowering, parsing, cache) {other:.2f} s; "
            f"warm: compiles {_compiles(r['warm'])}, cache {r['warm'].get('cache')}; "
            f"record only: compiles {_compiles(r['record'])}; "
            f"{'fits' if first.get('fits') else 'DOES NOT FIT'}: {first.get('summary', '')}"
            + _baseline_note(r, t_jax))
    return table, note


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(HERE), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default=None, help="comma-separated rows (default: all)")
    ap.add_argument("--quick", action="store_true", help="the race's quick sizes")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--baseline", metavar="PYTHON",
                    help="also time the first call with another memfit: the python of its "
                         "environment (e.g. a checkout of an earlier commit)")
    ap.add_argument("--baseline-label", default="",
                    help="what --baseline is, for the header (e.g. its commit)")
    ap.add_argument("--write", action="store_true",
                    help="also write the output to bench/results/bench_compile.txt")
    ap.add_argument("--child", nargs=2, metavar=("ROW", "MODE"), help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        r = child(*opts.child, opts.quick)
        print("BENCH-COMPILE " + json.dumps(r), flush=True)
        return
    sys.path.insert(0, str(HERE))
    from bench_race import ROW_KEYS

    import memfit
    from memfit.measure import cpu_model
    every = ROW_KEYS + HELD_OUT
    rows = every if not opts.rows else [k.strip() for k in opts.rows.split(",") if k.strip()]
    for k in rows:
        if k not in every:
            ap.error(f"unknown row {k!r}; rows: {', '.join(every)}")
    out = []

    def say(text=""):
        print(text, flush=True)
        out.append(text)
    import jax
    say(f"CPU: {cpu_model()}, {os.cpu_count()} cores; jax {jax.__version__}; "
        f"memfit {memfit.__version__} at {_commit()}; "
        f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; load average before: "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if opts.baseline:
        say(f"baseline (--baseline): {opts.baseline_label or opts.baseline}")
    say(f"\nmemfit.jit compile time over jax.jit's ({'quick' if opts.quick else 'full'} sizes; "
        f"fresh process per measurement; median of {opts.repeats} round(s); goals: first call "
        f"<= 1.5x, warm calibration cache <= 1.1x)\n")
    say(HEADER)
    notes = []
    t0 = time.perf_counter()
    for row in rows:
        table, note = line(row, measure(row, opts))
        say(table)
        notes.append(note)
    say(f"\n(total {time.perf_counter() - t0:.0f} s; load average after: "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})\n\nwhere the time went:")
    for n in notes:
        say(f"- {n}")
    if opts.write:
        path = HERE / "results" / "bench_compile.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text("\n".join(out) + "\n")
        print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
