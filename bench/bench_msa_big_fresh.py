"""The agent on fresh big instances: policy argmax, + local search, and the heuristic + the same search.

Generates ``--count`` synthetic instances of ``--mode`` (default offload;
msa.synthetic.random_instance, ids from ``--start``, 300-1,400 ops, capacity
20-60% of the peak) that no training or tuning has seen: above the game
polish's 256-move bucket, where the agent plays the policy's argmax, then
msa.localsearch, and keeps the faster of that and the heuristic's solution
searched the same way. Prints one table: the estimated time of each method
relative to the heuristic's, with the wall time of each. No CP-SAT: at these
sizes 10 s of it does not improve on the heuristic it is hinted with
(bench_msa_learned.py --big). ``--mid`` (70-190 ops): the agent's default
(its 16-simulation search) without and with the local search;
``--instances FILE...`` plays those files instead of generated ones. The
local search columns are single changes only; ``--pairs`` adds both starts
searched with pair moves too (msa.localsearch ``pairs``), the faster kept;
``--compact`` (with ``--pairs``) adds the same with the placement layout
compacted once no move pays (``compact``): the agent's default.

    .venv/bin/python bench/bench_msa_big_fresh.py --start 72000 --count 8
    .venv/bin/python bench/bench_msa_big_fresh.py --start 72200 --count 8 --mode placement
    .venv/bin/python bench/bench_msa_big_fresh.py --mid --mode placement --start 72300 --count 8
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import _results  # noqa: E402  (this script's folder is on sys.path)

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]
SIZES = (300, 1400)
# --mid: the 128/256-move buckets, where the agent searches (16 simulations)
# but polishes placement games no more (AgentConfig.polish_max_bucket).
MID_SIZES = (70, 190)


def fresh_instances(start: int, count: int, mode: str = "offload", sizes=SIZES) -> list:
    """``[(name, Instance)]``: ``count`` synthetic instances of ``mode``, ids
    from ``start``, their op counts spread evenly over ``sizes``."""
    from memfit.msa.io.synthetic import random_instance
    out = []
    for i in range(count):
        k = start + i
        ops = sizes[0] + (sizes[1] - sizes[0]) * i // max(count - 1, 1)
        inst = random_instance(k, num_ops=ops, num_args=2 + i % 6, mode=mode,
                               capacity_fraction=0.2 + 0.4 * ((i * 5) % 9) / 8)
        out.append((f"synthetic-big-{k}-{mode}", inst))
    return out


def timed_solution(name: str, inst, f):
    """``(solution, estimated time, wall seconds)`` of ``f()``, a solver for
    ``inst``; an invalid solution is a bug, never a row."""
    from memfit.msa.core.validator import validate
    t = time.perf_counter()
    sol = f()
    v = validate(inst, sol)
    if not v.valid:
        raise SystemExit(f"BUG: invalid solution on {name}:\n{v.summary()}")
    return sol, v.estimated_time, time.perf_counter() - t


def run(name: str, inst, pairs: bool = False, compact: bool = False) -> dict:
    """Every method on one instance (one at a time: the walls are its own);
    ``pairs``: also both searches with pair moves (msa.localsearch ``pairs``);
    ``compact``: also both with pair moves and compaction (``compact``)."""
    from memfit.msa.solvers import heuristic, localsearch
    from memfit.msa.learned import agent

    def timed(f):
        return timed_solution(name, inst, f)

    passes = agent.DEFAULT_CONFIG.local_search_passes   # single changes; --pairs: also pairs
    h, th, hw = timed(lambda: heuristic.assign(inst))
    _, ths, hsw = timed(lambda: localsearch.improve(inst, h, passes=passes)[0])
    pol, tp, pw = timed(lambda: agent.assign(inst, simulations=0, local_search=False))
    _, td, dw = timed(lambda: localsearch.improve(inst, pol, passes=passes)[0])
    paired = {}
    if pairs:
        _, php, phw = timed(lambda: localsearch.improve(inst, h, passes=passes, pairs=True)[0])
        _, ppp, ppw = timed(lambda: localsearch.improve(inst, pol, passes=passes, pairs=True)[0])
        paired = {"pairs": min(php, ppp) / th, "pairs_wall": phw + ppw - hsw - dw}
        if compact:
            _, pch, pchw = timed(lambda: localsearch.improve(inst, h, passes=passes, pairs=True,
                                                             compact=True)[0])
            _, pcp, pcpw = timed(lambda: localsearch.improve(inst, pol, passes=passes, pairs=True,
                                                             compact=True)[0])
            paired.update(compact=min(pch, pcp) / th, compact_wall=pchw + pcpw - phw - ppw)
    row = {"instance": name, "buffers": inst.num_buffers, "heuristic": th, **paired,
           "heurls": ths / th, "policy": tp / th, "policyls": td / th,
           "default": min(td, ths) / th,
           "wall": {"heuristic": hw, "heurls": hw + hsw, "policy": pw, "search": dw,
                    "default": pw + dw + hw + hsw}}
    print(f"  {name}: {inst.num_buffers} buffers, policy {tp / th:.4f}, policy+LS {td / th:.4f}",
          file=sys.stderr, flush=True)
    return row


def run_mid(name: str, inst) -> dict:
    """--mid: the agent's default with and without the local search (one
    search: the local search is the last stage, agent.after_search)."""
    from memfit.msa.solvers import heuristic
    from memfit.msa.learned import agent
    from memfit.msa.core.validator import validate
    th = validate(inst, heuristic.assign(inst)).estimated_time
    batch = agent.encode_batch([inst])
    (sol,), wall = agent.play_batch(batch, agent.AgentConfig(local_search=False))
    t = time.perf_counter()
    (ls,) = agent.local_searched(batch, [sol], [True])
    ls_wall = time.perf_counter() - t
    ts, tl = (validate(inst, x).estimated_time / th for x in (sol, ls))
    print(f"  {name}: {inst.num_buffers} buffers, default {ts:.4f}, + LS {tl:.4f}",
          file=sys.stderr, flush=True)
    return {"instance": name, "buffers": inst.num_buffers, "search": ts, "default": tl,
            "wall": {"search": wall, "ls": ls_wall}}


def print_mid(rows) -> None:
    print("the agent's default without and with the local search (both starts, the faster "
          "kept); estimated time / the heuristic's (validator)")
    print(f"{'instance':36} {'bufs':>5} {'no LS':>8} {'+ LS':>8} | wall s: {'agent':>6} {'LS':>5}")
    for r in rows:
        print(f"{r['instance']:36} {r['buffers']:5d} {r['search']:8.4f} {r['default']:8.4f} |"
              f"         {r['wall']['search']:6.1f} {r['wall']['ls']:5.1f}")
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    print(f"{'geometric mean':36} {'':5} {geo([r['search'] for r in rows]):8.4f} "
          f"{geo([r['default'] for r in rows]):8.4f} |         "
          f"{geo([r['wall']['search'] for r in rows]):6.1f} {geo([r['wall']['ls'] for r in rows]):5.1f}")
    faster = sum(r["default"] < r["search"] * (1 - 1e-9) for r in rows)
    print(f"+ LS faster on {faster}/{len(rows)}")


def print_table(rows) -> None:
    print("fresh big synthetic instances; estimated time / the heuristic's (validator); "
          "default (the agent's) = the faster of policy + LS and heuristic + LS")
    print(f"{'instance':30} {'bufs':>5} {'heur+LS':>8} {'policy':>8} {'pol+LS':>8} {'default':>8}"
          f" | wall s: {'heur':>5} {'heur+LS':>7} {'policy':>6} {'LS':>5}")
    for r in rows:
        w = r["wall"]
        print(f"{r['instance']:30} {r['buffers']:5d} {r['heurls']:8.4f} {r['policy']:8.4f} "
              f"{r['policyls']:8.4f} {r['default']:8.4f} |         {w['heuristic']:5.1f} "
              f"{w['heurls']:7.1f} {w['policy']:6.1f} {w['search']:5.1f}")
    geo = lambda k: math.exp(sum(math.log(r[k]) for r in rows) / len(rows))
    print(f"{'geometric mean':30} {'':5} {geo('heurls'):8.4f} {geo('policy'):8.4f} "
          f"{geo('policyls'):8.4f} {geo('default'):8.4f}")
    gw = lambda k: math.exp(sum(math.log(r["wall"][k]) for r in rows) / len(rows))
    print(f"wall geomean: policy {gw('policy'):.1f} s, its LS {gw('search'):.1f} s, "
          f"heuristic + LS {gw('heurls'):.1f} s")
    faster = sum(r["policyls"] < r["policy"] * (1 - 1e-9) for r in rows)
    slower = sum(r["policyls"] > r["policy"] * (1 + 1e-9) for r in rows)
    beats = sum(r["policyls"] < r["heurls"] * (1 - 1e-9) for r in rows)
    print(f"policy+LS vs policy alone: faster on {faster}/{len(rows)}, slower on {slower}; "
          f"policy+LS vs heuristic+LS: faster on {beats}/{len(rows)}")
    if all("pairs" in r for r in rows):
        print_step(rows, "with pair moves (both starts, the faster kept) vs the default:",
                   "default", "pairs")
    if all("compact" in r for r in rows):
        print_step(rows, "with compaction too (pair moves, both starts, the faster kept) vs pair "
                   "moves alone:", "pairs", "compact")


def print_step(rows, title: str, before: str, after: str) -> None:
    """One search stage's rows: column ``before`` -> ``after``, the extra
    wall (``after + "_wall"``) beside the policy's, and the summary."""
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))   # noqa: E731
    print(title)
    for r in rows:
        print(f"  {r['instance']:30} {r[before]:8.4f} -> {r[after]:8.4f}  "
              f"(+{r[after + '_wall']:.1f} s; policy {r['wall']['policy']:.1f} s)")
    print(f"  geomean {geo([r[before] for r in rows]):.4f} -> {geo([r[after] for r in rows]):.4f}; "
          f"faster on {sum(r[after] < r[before] * (1 - 1e-9) for r in rows)}/{len(rows)}, "
          f"slower on {sum(r[after] > r[before] * (1 + 1e-9) for r in rows)}; extra wall geomean "
          f"{geo([max(r[after + '_wall'], 1e-3) for r in rows]):.1f} s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--start", type=int, default=72_000)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--mode", choices=("offload", "placement"), default="offload")
    ap.add_argument("--mid", action="store_true",
                    help=f"{MID_SIZES[0]}-{MID_SIZES[1]} ops: the agent's default (its search) "
                         "without and with the local search")
    ap.add_argument("--pairs", action="store_true",
                    help="also the local search with pair moves (msa.localsearch pairs=True)")
    ap.add_argument("--compact", action="store_true",
                    help="with --pairs: also with compaction (msa.localsearch compact=True)")
    ap.add_argument("--instances", nargs="+", default=None,
                    help="instance files instead of generated ones")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    if args.instances:
        from memfit.msa.core.instance import Instance
        insts = [(Path(f).stem, Instance.load(f)) for f in args.instances]
    else:
        insts = fresh_instances(args.start, args.count, args.mode,
                                MID_SIZES if args.mid else SIZES)
    rows = [run_mid(n, inst) if args.mid else run(n, inst, args.pairs, args.compact)
            for n, inst in insts]
    (print_mid if args.mid else print_table)(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
