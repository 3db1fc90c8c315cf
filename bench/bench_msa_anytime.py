"""Anytime memory-space assignment: each method's best answer at a wall-clock budget.

For every method (the heuristic; local search from the heuristic; CP-SAT;
the learned policy's argmax game alone; the learned search alone, 16
simulations per move, no stage after it; the learned agent's default; the
default method, ``auto``: msa.solvers.portfolio) and every
budget (0.5, 2, 10 s; ``--budgets 0.5,2,10,60`` adds 60 s), each instance is
solved by ``memfit assign``'s ``run_method`` with ``time_budget`` (the wall
time from the call on: the heuristic, encoding, jax compilation, the search
and the stages after it; the learned methods play in a child process ended
at the deadline, docs/msa.md). Every solution goes through the validator (an
invalid one stops the bench). Prints, per set and budget, each method's
geometric mean of the estimated time over the heuristic's (the heuristic
run without a budget), the geometric mean and max of its wall time and how
many instances ran past budget + 1 s.

Instances: the held-out instances of data/msa/manifest.json up to
``--max-buffers`` (default 1,000), and fresh synthetic instances
(msa.io.synthetic.random_instance, seeds from 91,000: not used in training
nor by the other benches) of 100, 300 and 1,000 ops in both modes at 25, 50
and 75% capacity; ``--big-fresh`` adds 2,000 and 4,000. ``--quick``: one
held-out instance per program and two fresh ones.

    .venv/bin/python bench/bench_msa_anytime.py [--quick] [--budgets 0.5,2,10,60]
        [--methods heuristic,localsearch,exact,argmax,search,learned,auto] [--max-buffers 1000]
        [--big-fresh] [--num-workers 2] [--write]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import _results  # noqa: E402  (this script's folder is on sys.path)

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]
# method -> (label, run_method's method, its options)
METHODS = {
    "heuristic": ("heuristic", "heuristic", {}),
    "localsearch": ("heuristic + local search", "heuristic", {"local_search": True}),
    "exact": ("CP-SAT", "exact", {}),
    "argmax": ("policy argmax", "learned", {"simulations": 0, "local_search": False,
                                            "iterate": 0}),
    "search": ("learned search (16 sims)", "learned", {"simulations": 16, "polish": 0,
                                                       "local_search": False, "iterate": 0,
                                                       "repack": False, "relax": False}),
    "learned": ("learned default", "learned", {}),
    "auto": ("default (auto: portfolio)", "auto", {}),
}
QUICK_HELDOUT = ("cnn_train-offload-50", "gru_train-placement-50", "sgpr-offload-25",
                 "transformer_medium-placement-50", "vit_block_grad-offload-75")
OVER_SLACK = 1.0     # seconds past the budget counted as "over"


def fresh(quick: bool, big: bool):
    """``[(name, Instance)]``: synthetic instances never used elsewhere."""
    from memfit.msa.io.synthetic import random_instance
    sizes = (300, 1000) if quick else (100, 300, 1000) + ((2000, 4000) if big else ())
    out, k = [], 0
    for n in sizes:
        for mode in ("offload", "placement"):
            frac = (0.25, 0.5, 0.75)[k % 3]
            k += 1
            if quick and (n, mode) not in ((300, "offload"), (1000, "placement")):
                continue
            inst = random_instance(91_000 + k, num_ops=n, num_args=4, mode=mode,
                                   capacity_fraction=frac)
            inst.program = f"fresh-{n}-{mode}-{int(frac * 100)}"
            out.append((inst.program, inst))
    return out


def heldout(manifest: Path, quick: bool, max_buffers: int):
    from memfit.msa.core.instance import Instance
    files = json.loads(manifest.read_text())["heldout"]
    named = [(Path(f).stem, Instance.load(manifest.parent / f)) for f in files]
    if quick:
        named = [(n, i) for n, i in named if n in QUICK_HELDOUT]
    return [(n, i) for n, i in named if i.num_buffers <= max_buffers]


def solve(inst, key: str, budget: float, num_workers: int):
    """``(estimated time, wall seconds)`` of ``key`` within ``budget``."""
    from memfit.msa.cli import run_method
    from memfit.msa.core.validator import validate
    _, method, options = METHODS[key]
    t0 = time.perf_counter()
    sol = run_method(inst, method, time_budget=budget, num_workers=num_workers, **options)
    wall = time.perf_counter() - t0
    v = validate(inst, sol)
    if not v.valid:
        raise SystemExit(f"{key} at {budget}s: INVALID solution for {inst.program}: "
                         f"{v.summary()}")
    return v.estimated_time, wall


def geomean(xs) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budgets", default="0.5,2,10", help="seconds, comma-separated")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--max-buffers", type=int, default=1000, help="held-out instances up to")
    ap.add_argument("--big-fresh", action="store_true", help="fresh instances of 2,000 and 4,000 ops too")
    ap.add_argument("--num-workers", type=int, default=2, help="CP-SAT workers")
    ap.add_argument("--manifest", default=str(ROOT / "data/msa/manifest.json"))
    ap.add_argument("--per-instance", action="store_true", help="print every instance's row")
    _results.add_write_flag(ap)
    args = ap.parse_args()
    budgets = [float(b) for b in args.budgets.split(",")]
    keys = args.methods.split(",")
    unknown = set(keys) - set(METHODS)
    if unknown:
        raise SystemExit(f"--methods: unknown {sorted(unknown)}; known: {','.join(METHODS)}")
    from memfit.msa.core.validator import validate
    from memfit.msa.learned.agent import use_compilation_cache
    from memfit.msa.solvers import heuristic
    use_compilation_cache()
    sets = [("held-out", heldout(Path(args.manifest), args.quick, args.max_buffers)),
            ("fresh", fresh(args.quick, args.big_fresh))]
    print(f"CPU: {platform.processor() or platform.machine()} "
          f"({_results._cpu_model()}), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    t_start = time.time()
    rows = {}        # (set, method, budget) -> [(ratio, wall, over)]
    for set_name, named in sets:
        for name, inst in named:
            ref = validate(inst, heuristic.assign(inst)).estimated_time
            line = [f"{name} ({inst.num_buffers} buffers)"]
            for budget in budgets:
                for key in keys:
                    t, wall = solve(inst, key, budget, args.num_workers)
                    rows.setdefault((set_name, key, budget), []).append(
                        (t / ref, wall, wall > budget + OVER_SLACK))
                    line.append(f"{key}@{budget:g}={t / ref:.3f}/{wall:.1f}s")
            if args.per_instance:
                print("  " + " ".join(line), flush=True)
            print(f"  done {name} after {time.time() - t_start:.0f}s", file=sys.stderr,
                  flush=True)
    for set_name, named in sets + [("all", None)]:
        n = len(named) if named is not None else sum(len(s) for _, s in sets)
        print(f"\n{set_name} instances ({n}): estimated time over the heuristic's "
              f"(geomean), wall geomean / max, runs over budget + {OVER_SLACK:g} s")
        print(f"| budget | method | t / heuristic | wall geomean | wall max | over |")
        print("|---|---|---|---|---|---|")
        for budget in budgets:
            for key in keys:
                r = [x for (s, k, b), xs in rows.items() if k == key and b == budget
                     and (s == set_name or set_name == "all") for x in xs]
                if not r:
                    continue
                print(f"| {budget:g} s | {METHODS[key][0]} | {geomean([x[0] for x in r]):.3f} | "
                      f"{geomean([x[1] for x in r]):.2f} s | {max(x[1] for x in r):.1f} s | "
                      f"{sum(x[2] for x in r)}/{len(r)} |")
    print(f"\nevery solution valid; {time.time() - t_start:.0f} s in all; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
