"""memfit's split rate on random programs written the way ML libraries write
them (memfit/testing/real_forms.py: scanned layer stacks, GNN message
passing, embedding bags, LLM heads, contrastive losses, fori loops, flax
language models), value and gradient, at a limit whose temporaries are 16x
below jax's.

Per program: jax's bytes (XLA's argument + output + temp - alias, ynn
fusions off, as the limit is counted), the limit (arguments + outputs +
jax's temporaries / --divisor), and memfit.jit's outcome:

  fits     XLA's bytes of memfit's program <= the limit, results equal to
           jax's (largest difference <= 1e-4 of the output's largest value,
           or, where an output is rounding noise in both, such as the
           gradient of attention's key bias, memfit's error from float64
           within the numerics contract's bound on jax's)
  over     memfit compiled a program over the limit (it warned)
  refused  memfit raised its error; the smallest limit it names, over the
           arguments + outputs, is reported
  wrong    results differ, or anything but memfit's error escaped

and, where it compiled, memfit's time over jax's (median of interleaved
runs of both executables as they run in jax's defaults, ynn fusions on;
--time-ynn-off runs the whole process with them off). XLA's bytes come
from compiles with ynn fusions off (memfit.measure.ACCOUNTING_OPTIONS).

    .venv/bin/python bench/fuzz_real_forms.py --seed 0 --programs 14   # development seed
    .venv/bin/python bench/fuzz_real_forms.py --seed 1 --programs 42   # held out
    .venv/bin/python bench/fuzz_real_forms.py --seed 1 --programs 42 --write
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
import warnings
from collections import Counter, defaultdict

from memfit.measure import NO_YNN

if __name__ == "__main__" and "--time-ynn-off" in sys.argv:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + NO_YNN).strip()

import jax  # noqa: E402
import numpy as np  # noqa: E402

import _results  # noqa: E402
import memfit  # noqa: E402
from memfit.calibrate import MemoryLimitWarning  # noqa: E402
from memfit.explain.split import smallest_reachable  # noqa: E402
from memfit.measure import (ACCOUNTING_OPTIONS, cpu_model, interleaved_medians,  # noqa: E402
                            xla_bytes)
from memfit.testing.oracle import (EPS32, FACTOR, FLOOR_ULPS, float64_outputs,  # noqa: E402
                                   relative_error)
from memfit.testing import real_forms  # noqa: E402

MiB = 1024 * 1024
TOL = 1e-4
OUTCOMES = ("fits", "over", "refused", "wrong")


def _max_rel_err(want, got) -> float:
    return max(relative_error(g, w) for w, g in zip(jax.tree_util.tree_leaves(want),
                                                    jax.tree_util.tree_leaves(got)))


def _within_float64_contract(prog, got_jax, got_memfit) -> bool:
    """memfit's error from a float64 evaluation within FACTOR x jax's (or
    FLOOR_ULPS float32 ulps), output by output (memfit.testing.oracle)."""
    ref = [np.asarray(r, np.float64)
           for r in jax.tree_util.tree_leaves(float64_outputs(prog.fn, prog.args))]
    return all(relative_error(m, r) <= max(FACTOR * relative_error(j, r), FLOOR_ULPS * EPS32)
               for j, m, r in zip(jax.tree_util.tree_leaves(got_jax),
                                  jax.tree_util.tree_leaves(got_memfit), ref))


def _reason(message: str) -> str:
    """The error's own sentence (the line memfit-split wrote), shortened."""
    lines = [ln for ln in message.splitlines() if "memfit-split:" in ln]
    text = (lines or message.splitlines())[-1].split("memfit-split:")[-1].strip()
    return re.sub(r"^cannot fit @\S+ into [^:]*: ", "", text)[:200]


def measure(prog, divisor: int, rounds: int) -> dict:
    base_lowered = jax.jit(prog.fn).lower(*prog.args)
    base = base_lowered.compile()
    base_counted = base_lowered.compile(compiler_options=ACCOUNTING_OPTIONS)
    m = base_counted.memory_analysis()
    fixed = m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
    limit = fixed + m.temp_size_in_bytes // divisor
    out = {"family": prog.family, "desc": prog.description, "fixed": fixed,
           "jax": xla_bytes(base_counted), "limit": limit}
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MemoryLimitWarning)
            lowered = memfit.jit(prog.fn, memory_limit=limit).lower(*prog.args)
            split = lowered.compile()
    except memfit.MemfitError as e:
        out.update(outcome="refused", floor=smallest_reachable(e),
                   why=_reason(str(e)))
        return out
    except Exception as e:  # anything else escaping memfit is a bug
        out.update(outcome="wrong", why=f"{type(e).__name__}: {e}"[:160])
        return out
    out["compile_s"] = time.perf_counter() - t0
    out["memfit"] = xla_bytes(lowered.compile(compiler_options=ACCOUNTING_OPTIONS))
    got_jax, got_memfit = base(*prog.args), split(*prog.args)
    out["err"] = _max_rel_err(got_jax, got_memfit)
    if out["err"] > TOL and not _within_float64_contract(prog, got_jax, got_memfit):
        out.update(outcome="wrong", why=f"max relative difference {out['err']:.2e}")
        return out
    out["outcome"] = "fits" if out["memfit"] <= limit else "over"
    t = interleaved_medians({"jax": lambda: base(*prog.args),
                             "memfit": lambda: split(*prog.args)}, repeats=rounds)
    out["time"] = t["memfit"] / t["jax"]
    return out


def _row(i, r) -> str:
    fmt = lambda b: f"{b / MiB:.1f}" if b else "-"  # noqa: E731
    detail = {"fits": lambda: f"{fmt(r['memfit'])} MiB, {r['time']:.2f}x jax",
              "over": lambda: f"{fmt(r['memfit'])} MiB, {r['time']:.2f}x jax",
              "refused": lambda: (f"floor {r['floor'] / r['fixed']:.2f}x a+o: "
                                  if r.get("floor") else "") + r["why"],
              "wrong": lambda: r["why"]}[r["outcome"]]()
    return (f"| {i} | {r['family']} | {r['desc']} | {fmt(r['fixed'])} | {fmt(r['jax'])} | "
            f"{fmt(r['limit'])} | {r['outcome']} | {detail} |")


def summary(rows) -> list[str]:
    by = defaultdict(list)
    for r in rows:
        by[r["family"]].append(r)
    lines = ["| family | programs | " + " | ".join(OUTCOMES)
             + " | time over jax (median, compiled) | floor over a+o (median, refused) |",
             "|---|---|" + "---|" * len(OUTCOMES) + "---|---|"]
    for fam in list(real_forms.FAMILIES) + ["all"]:
        rs = rows if fam == "all" else by.get(fam, [])
        if not rs:
            continue
        c = Counter(r["outcome"] for r in rs)
        times = [r["time"] for r in rs if "time" in r]
        floors = [r["floor"] / r["fixed"] for r in rs if r.get("floor")]
        med = lambda v: f"{statistics.median(v):.2f}x" if v else "-"  # noqa: E731
        lines.append(f"| {fam} | {len(rs)} | " + " | ".join(str(c[o]) for o in OUTCOMES)
                     + f" | {med(times)} | {med(floors)} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="0 is the development seed")
    ap.add_argument("--programs", type=int, default=12)
    ap.add_argument("--divisor", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--families", default="", help="comma-separated (default: all)")
    ap.add_argument("--time-ynn-off", action="store_true",
                    help="time with ynn fusions off (the whole process), not in jax's defaults")
    _results.add_write_flag(ap)
    a = ap.parse_args()
    only = _results.chosen(ap, a.families, real_forms.FAMILIES, "families")
    rows, t0 = [], time.time()
    families = list(real_forms.FAMILIES)
    for i in range(a.programs):
        if families[i % len(families)] not in only:
            continue
        prog = real_forms.make(a.seed, i)
        rows.append({**measure(prog, a.divisor, a.rounds), "i": i})
        print(_row(i, rows[-1]), file=sys.stderr, flush=True)
    print(f"memfit.jit on random real-form programs, seed {a.seed}, value and gradient "
          f"(limit = arguments + outputs + jax's temporaries / {a.divisor}, XLA's bytes with ynn "
          f"fusions off; timed {'with them off' if NO_YNN in os.environ.get('XLA_FLAGS', '') else 'in jax defaults'}; "
          f"CPU: {cpu_model()}, {os.cpu_count()} cores; {time.time() - t0:.0f} s)\n")
    print("\n".join(summary(rows)) + "\n")
    print("| # | family | program | a+o MiB | jax MiB | limit MiB | outcome | memfit |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(_row(r["i"], r))
    return 1 if any(r["outcome"] == "wrong" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
