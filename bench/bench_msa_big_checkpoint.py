"""Two checkpoints side by side on big instances: the agent's big default with each.

Above the 256-move bucket the agent plays the policy's argmax, improves it
with msa.solvers.localsearch, and keeps the faster of that and the heuristic's
solution searched the same way (agent.local_searched). The checkpoint
matters only through the argmax game the search starts from. For every
instance this prints the heuristic + local search (shared), and for each
checkpoint its argmax, argmax + local search and the default; then per
checkpoint after the first, where its default is faster or slower than the
first's. Times are the validator's estimates relative to the heuristic's.

Instances: ``--heldout-capacities 25,75`` exports the manifest's big
*held-out* programs (memfit.msa.io.workloads) at those capacities, both modes
(the manifest holds them at 50% only: these are instances no training or
tuning has seen); ``--instances FILE...`` plays files.
``--checkpoints small,big`` names the packaged ones (checkpoint.DEFAULT_PATH,
checkpoint.BIG_PATH); any other entry is a path.

    .venv/bin/python bench/bench_msa_big_checkpoint.py --heldout-capacities 25,75
    .venv/bin/python bench/bench_msa_big_checkpoint.py --instances data/msa/instances/gru_long_heldout-*
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import _results  # noqa: E402  (this script's folder is on sys.path)

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
sys.path.insert(0, str(Path(__file__).resolve().parent))     # bench_msa_big_fresh
BIG_HELDOUT = ("transformer_deep_heldout", "resnet_train_heldout", "gru_long_heldout")


def heldout_instances(capacities) -> list:
    """``[(name, Instance)]``: the big held-out programs at ``capacities``
    percent of their peaks, both modes (as bench/make_msa_instances.py
    exports them)."""
    from memfit.msa.io.workloads import get_workload
    from memfit.msa.learned.programs import export_both_modes
    return [(f"{name}-{inst.mode}-{cap}", inst) for name in BIG_HELDOUT
            for inst, cap in zip(export_both_modes(name, *get_workload(name), capacities),
                                 list(capacities) * 2)]


def checkpoint_path(name: str):
    from memfit.msa.learned import checkpoint
    return {"small": checkpoint.DEFAULT_PATH, "big": checkpoint.BIG_PATH}.get(name, Path(name))


def run(name: str, inst, checkpoints) -> dict:
    """Every method on one instance, one at a time (the walls are its own)."""
    from bench_msa_big_fresh import timed_solution
    from memfit.msa.learned import agent
    from memfit.msa.solvers import heuristic

    def timed(f):
        return timed_solution(name, inst, f)

    def searched(sol):
        return agent.local_search(inst, sol)[0]

    h, th, hw = timed(lambda: heuristic.assign(inst))
    _, ths, hsw = timed(lambda: searched(h))
    row = {"instance": name, "buffers": inst.num_buffers, "heuristic": th, "heurls": ths / th,
           "wall": {"heuristic": hw, "heurls": hsw}}
    for c in checkpoints:
        pol, tp, pw = timed(lambda: agent.assign(inst, simulations=0, local_search=False,
                                                 checkpoint=checkpoint_path(c)))
        _, tl, lw = timed(lambda: searched(pol))
        row[c] = {"policy": tp / th, "policyls": tl / th, "default": min(tl, ths) / th,
                  "wall": {"policy": pw, "search": lw}}
        print(f"  {name} [{c}]: {inst.num_buffers} buffers, policy {tp / th:.4f}, "
              f"policy+LS {tl / th:.4f}, heuristic+LS {ths / th:.4f}", file=sys.stderr, flush=True)
    return row


def geomean(xs) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def print_table(rows, checkpoints) -> None:
    print("estimated time / the heuristic's (validator); default = the faster of policy + LS "
          "and heuristic + LS (the agent above the 256-move bucket)")
    head = "".join(f" | {c[:14]:>14}: {'policy':>7} {'pol+LS':>7} {'default':>7}"
                   for c in checkpoints)
    print(f"{'instance':38} {'bufs':>5} {'heur+LS':>8}{head}")
    for r in rows:
        cols = "".join(f" | {'':>14}  {r[c]['policy']:7.4f} {r[c]['policyls']:7.4f} "
                       f"{r[c]['default']:7.4f}" for c in checkpoints)
        print(f"{r['instance']:38} {r['buffers']:5d} {r['heurls']:8.4f}{cols}")
    cols = "".join(f" | {'':>14}  {geomean(r[c]['policy'] for r in rows):7.4f} "
                   f"{geomean(r[c]['policyls'] for r in rows):7.4f} "
                   f"{geomean(r[c]['default'] for r in rows):7.4f}" for c in checkpoints)
    print(f"{'geometric mean':38} {'':5} {geomean(r['heurls'] for r in rows):8.4f}{cols}")
    for c in checkpoints:
        print(f"wall geomean [{c}]: policy {geomean(r[c]['wall']['policy'] for r in rows):.1f} s, "
              f"its LS {geomean(max(r[c]['wall']['search'], 1e-3) for r in rows):.1f} s; "
              f"heuristic + LS {geomean(max(r['wall']['heurls'], 1e-3) for r in rows):.1f} s")
    first = checkpoints[0]
    for c in checkpoints[1:]:
        faster = sum(r[c]["default"] < r[first]["default"] * (1 - 1e-9) for r in rows)
        slower = [r for r in rows if r[c]["default"] > r[first]["default"] * (1 + 1e-9)]
        worst = max((r[c]["default"] / r[first]["default"] for r in slower), default=1.0)
        print(f"default [{c}] vs [{first}]: faster on {faster}/{len(rows)}, slower on "
              f"{len(slower)} (worst x{worst:.4f}); geomean "
              f"{geomean(r[first]['default'] for r in rows):.4f} -> "
              f"{geomean(r[c]['default'] for r in rows):.4f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--checkpoints", default="small,big",
                    help="comma-separated: small, big (the packaged ones) or paths")
    ap.add_argument("--heldout-capacities", default=None,
                    help="export the big held-out programs at these percentages (e.g. 25,75)")
    ap.add_argument("--instances", nargs="+", default=None, help="instance files")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    insts = []
    if args.heldout_capacities:
        insts += heldout_instances([int(c) for c in args.heldout_capacities.split(",")])
    if args.instances:
        from memfit.msa.core.instance import Instance
        insts += [(Path(f).stem, Instance.load(f)) for f in args.instances]
    if not insts:
        ap.error("give --heldout-capacities or --instances")
    checkpoints = args.checkpoints.split(",")
    rows = [run(n, inst, checkpoints) for n, inst in insts]
    print_table(rows, checkpoints)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
