"""The raw learned search against the heuristic on the TRAINING programs.

For every training instance of data/msa/manifest.json up to --max-buffers
(never the held-out ones), plays the learned search with the agent's
defaults once, and prints per instance, relative to the heuristic's
validator time: the raw search's own game ("raw": every move the search's
action), the fastest complete game the play saw ("best": the raw game, the
heuristic's, every game its searches evaluated: the agent's choice before
polish) and, with --follow, a second play whose every move is that best
game's move ("follow": play.play_batch follow_best). Lists the instances
where raw is worse than the heuristic by more than 1%.

    .venv/bin/python bench/diag_msa_raw.py [--max-buffers 64] [--simulations 16] [--follow]
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


def main(argv=None) -> int:
    from memfit.msa import game
    from memfit.msa.heuristic import assign as heuristic
    from memfit.msa.instance import Instance
    from memfit.msa.learned import agent
    from memfit.msa.validator import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-buffers", type=int, default=64)
    ap.add_argument("--simulations", type=int, default=agent.DEFAULT_SIMULATIONS)
    ap.add_argument("--follow", action="store_true")
    ap.add_argument("--only", default=None, help="comma-separated substrings of instance names")
    args = ap.parse_args(argv)
    man_path = ROOT / "data/msa/manifest.json"
    man = json.loads(man_path.read_text())
    files = man["train"]
    if args.only:
        files = [f for f in files if any(s in Path(f).stem for s in args.only.split(","))]
    insts = [Instance.load(man_path.parent / f) for f in files]
    names = [Path(f).stem for f, i in zip(files, insts) if i.num_buffers <= args.max_buffers]
    insts = [i for i in insts if i.num_buffers <= args.max_buffers]
    groups: dict = {}
    for k, inst in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]), []).append(k)
    rows = {}
    for idx in groups.values():
        batch = agent.encode_batch([insts[k] for k in idx])
        best, wall, raw = agent.play_batch(batch, simulations=args.simulations, polish=0,
                                           return_raw=True)
        cols = {"raw": raw, "best": best}
        if args.follow:
            cols["follow"], _ = agent.play_batch(batch, simulations=args.simulations, polish=0,
                                                 follow_best=True)
        for i, k in enumerate(idx):
            inst = insts[k]
            h = validate(inst, heuristic(inst)).estimated_time
            rows[names[k]] = {n: validate(inst, s[i]).estimated_time / h
                              for n, s in cols.items()}
            print(f"{names[k]:32} {inst.num_buffers:4d} "
                  + " ".join(f"{n} {v:.4f}" for n, v in rows[names[k]].items()), flush=True)
        print(f"  ({len(idx)} instances, {wall:.0f}s)", file=sys.stderr, flush=True)
    cols_ = next(iter(rows.values())).keys()
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    print(f"{len(rows)} training instances; geomean / heuristic: "
          + ", ".join(f"{n} {geo([r[n] for r in rows.values()]):.4f}" for n in cols_))
    for n in cols_:
        worse = [p for p, r in rows.items() if r[n] > 1.01]
        print(f"{n} worse than the heuristic by > 1%: {len(worse)} {worse}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
