"""Tuning the learned agent's post-search local improvement on TRAINING programs.

For the manifest's training instances up to 256 buffers (never the held-out
ones): the learned MCTS (the agent's defaults, incumbent game on, no
polish), then ``--passes`` polish passes over its game (play.polish_batch),
and optionally the same search at more simulations; CP-SAT at a time limit
for the optimum where it proves one. Prints time / heuristic per instance,
geometric means, wall times and how many instances are within 2% of a
proven optimum.

    .venv/bin/python bench/diag_msa_polish.py [--simulations 16] [--passes 1,2,4]
        [--more-simulations 64] [--time-limit 10] [--only SUBSTR,...]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]


def _geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv=None) -> int:
    from memfit.msa import exact, game, heuristic
    from memfit.msa.instance import Instance
    from memfit.msa.learned import agent
    from memfit.msa.validator import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=agent.DEFAULT_SIMULATIONS)
    ap.add_argument("--passes", default="1,2,4")
    ap.add_argument("--more-simulations", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--num-workers", type=int, default=2)
    ap.add_argument("--only", default=None, help="comma-separated substrings of instance names")
    ap.add_argument("--max-buffers", type=int, default=256)
    args = ap.parse_args(argv)
    man = json.loads((ROOT / "data/msa/manifest.json").read_text())
    files = [f for f in man["train"]]
    if args.only:
        files = [f for f in files if any(s in f for s in args.only.split(","))]
    insts = [Instance.load(ROOT / "data/msa" / f) for f in files]
    keep = [k for k, i in enumerate(insts) if i.num_buffers <= args.max_buffers]
    files, insts = [files[k] for k in keep], [insts[k] for k in keep]
    passes = [int(p) for p in args.passes.split(",") if p]

    def t_of(inst, sol):
        v = validate(inst, sol)
        if not v.valid:
            raise SystemExit(f"BUG: invalid solution on {inst.program}: {v.summary()}")
        return v.estimated_time

    groups: dict = {}
    for k, inst in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]), []).append(k)
    res = {k: {} for k in range(len(insts))}
    for idx in groups.values():
        batch = agent.encode_batch([insts[k] for k in idx])
        sols, wall, acts = agent.play_batch(batch, simulations=args.simulations, polish=0,
                                            return_actions=True)
        for k, sol in zip(idx, sols):
            res[k]["mcts"] = (t_of(insts[k], sol), wall / len(idx))
        for p in passes:
            psols, pwall, _ = agent.polish(batch, acts, passes=p)
            for k, sol in zip(idx, psols):
                res[k][f"polish{p}"] = (t_of(insts[k], sol), (wall + pwall) / len(idx))
        if args.more_simulations:
            msols, mwall = agent.play_batch(batch, simulations=args.more_simulations, polish=0)
            for k, sol in zip(idx, msols):
                res[k]["more"] = (t_of(insts[k], sol), mwall / len(idx))
        print(f"class {len(idx)} instances done", file=sys.stderr, flush=True)

    names = ["mcts"] + [f"polish{p}" for p in passes] + (["more"] if args.more_simulations else [])
    labels = {"mcts": f"mcts{args.simulations}", "more": f"mcts{args.more_simulations}"}
    print(f"training instances, time / heuristic; CP-SAT {args.time_limit:g}s")
    print(f"{'instance':32} {'bufs':>4} " + " ".join(f"{labels.get(n, n):>9}" for n in names)
          + f" {'CP-SAT':>7} {'status':>8} | wall s " + " ".join(f"{labels.get(n, n):>9}" for n in names))
    rows = []
    for k, inst in enumerate(insts):
        h = t_of(inst, heuristic.assign(inst))
        r = exact.solve(inst, time_limit=args.time_limit, num_workers=args.num_workers,
                        hint=heuristic.assign(inst))
        tc = t_of(inst, r.solution)
        row = {"heuristic": h, "cpsat": tc, "status": r.status,
               **{n: res[k][n][0] for n in names}}
        rows.append(row)
        print(f"{Path(files[k]).stem[:32]:32} {inst.num_buffers:4d} "
              + " ".join(f"{row[n] / h:9.4f}" for n in names)
              + f" {tc / h:7.4f} {r.status:>8} |        "
              + " ".join(f"{res[k][n][1]:9.2f}" for n in names), flush=True)
    print("geomean time / heuristic: " + ", ".join(
        f"{labels.get(n, n)} {_geo([r[n] / r['heuristic'] for r in rows]):.4f}" for n in names)
        + f", CP-SAT {_geo([r['cpsat'] / r['heuristic'] for r in rows]):.4f}")
    opt = [r for r in rows if r["status"] == "OPTIMAL"]
    for n in names:
        print(f"{labels.get(n, n)}: within 2% of CP-SAT's proven optimum on "
              f"{sum(r[n] <= 1.02 * r['cpsat'] for r in opt)}/{len(opt)}; "
              f"> 1% worse than the heuristic on "
              f"{sum(r[n] > 1.01 * r['heuristic'] for r in rows)}/{len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
