"""The agent on fresh big instances: policy argmax, + local search, and the heuristic + the same search.

Generates ``--count`` synthetic instances of ``--mode`` (default offload) (msa.synthetic.random_instance,
ids from ``--start``, 300-1,400 ops, capacity 20-60% of the peak: above the game
polish's 256-move bucket, where the agent plays the policy's argmax, then
msa.localsearch, and keeps the faster of that and the heuristic's solution
searched the same way) that no training or tuning has seen, and prints one table:
the estimated time of each method relative to the heuristic's, with the wall
time of each. No CP-SAT: at these sizes 10 s of it does not improve on the
heuristic it is hinted with (bench_msa_learned.py --big).

    .venv/bin/python bench/bench_msa_big_fresh.py --start 72000 --count 8
    .venv/bin/python bench/bench_msa_big_fresh.py --start 72200 --count 8 --mode placement
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]
SIZES = (300, 1400)


def fresh_instances(start: int, count: int, mode: str = "offload") -> list:
    """``[(name, Instance)]``: ``count`` synthetic instances of ``mode``, ids
    from ``start``, their op counts spread evenly over SIZES."""
    from memfit.msa.synthetic import random_instance
    out = []
    for i in range(count):
        k = start + i
        ops = SIZES[0] + (SIZES[1] - SIZES[0]) * i // max(count - 1, 1)
        inst = random_instance(k, num_ops=ops, num_args=2 + i % 6, mode=mode,
                               capacity_fraction=0.2 + 0.4 * ((i * 5) % 9) / 8)
        out.append((f"synthetic-big-{k}-{mode}", inst))
    return out


def run(name: str, inst) -> dict:
    """Every method on one instance (one at a time: the walls are its own)."""
    from memfit.msa import heuristic, localsearch
    from memfit.msa.learned import agent
    from memfit.msa.validator import validate

    def timed(f):
        t = time.perf_counter()
        sol = f()
        v = validate(inst, sol)
        if not v.valid:
            raise SystemExit(f"BUG: invalid solution on {name}:\n{v.summary()}")
        return sol, v.estimated_time, time.perf_counter() - t

    passes = agent.LOCAL_SEARCH_PASSES
    h, th, hw = timed(lambda: heuristic.assign(inst))
    _, ths, hsw = timed(lambda: localsearch.improve(inst, h, passes=passes)[0])
    pol, tp, pw = timed(lambda: agent.assign(inst, simulations=0, local_search=False))
    _, td, dw = timed(lambda: localsearch.improve(inst, pol, passes=passes)[0])
    row = {"instance": name, "buffers": inst.num_buffers, "heuristic": th,
           "heurls": ths / th, "policy": tp / th, "policyls": td / th,
           "default": min(td, ths) / th,
           "wall": {"heuristic": hw, "heurls": hw + hsw, "policy": pw, "search": dw,
                    "default": pw + dw + hw + hsw}}
    print(f"  {name}: {inst.num_buffers} buffers, policy {tp / th:.4f}, policy+LS {td / th:.4f}",
          file=sys.stderr, flush=True)
    return row


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=int, default=72_000)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--mode", choices=("offload", "placement"), default="offload")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    rows = [run(n, inst) for n, inst in fresh_instances(args.start, args.count, args.mode)]
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
