"""The raw learned search's root rule, against the heuristic, on the TRAINING programs.

For every training instance of data/msa/manifest.json up to --max-buffers
(never the held-out ones), plays the learned search with the agent's
defaults under each root rule of --rules (play.ROOT_RULES: how a search
picks its move: "mean", mctx's mean return of the simulations through a
move; "max", the first move of the fastest complete game the search
evaluated; "max_kept", the same with the fastest game of the earlier
searches kept as a candidate) and prints per instance, relative to the
heuristic's validator time, each rule's own game (the raw search: every
move the search's choice) and, for "mean", the fastest complete game that
play saw ("mean+best": the raw game, the heuristic's, every game its
searches evaluated; the agent's choice until 2026-12-04 (late)). With --polish,
the agent's default polish (agent.default_polish) of the "mean+best" and
"max_kept" games, run only where the two games differ (polish is
deterministic: the same game polishes the same). Lists the instances where
a rule is worse than the heuristic by more than 1%.

    .venv/bin/python bench/diag_msa_raw.py [--max-buffers 64] [--simulations 16]
        [--rules mean,max,max_kept] [--polish] [--only SUBSTR,...]
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


def main(argv=None) -> int:
    import numpy as np
    from memfit.msa import game
    from memfit.msa.heuristic import assign as heuristic
    from memfit.msa.instance import Instance
    from memfit.msa.learned import agent
    from memfit.msa.validator import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-buffers", type=int, default=64)
    ap.add_argument("--simulations", type=int, default=agent.DEFAULT_SIMULATIONS)
    ap.add_argument("--rules", default="mean,max,max_kept")
    ap.add_argument("--polish", action="store_true")
    ap.add_argument("--only", default=None, help="comma-separated substrings of instance names")
    args = ap.parse_args(argv)
    rules = args.rules.split(",")
    if args.polish and not {"mean", "max_kept"} <= set(rules):
        raise SystemExit("--polish compares the mean+best and max_kept games: needs both rules")
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
        cols, games = {}, {}
        for rule in rules:
            best, wall, acts, raw = agent.play_batch(
                batch, simulations=args.simulations, polish=0, root_rule=rule,
                best=rule == "mean", return_actions=True, return_raw=True)
            cols[rule] = raw
            if rule == "mean":
                cols["mean+best"] = best
            games[rule] = np.asarray(acts)
            print(f"  {rule}: {len(idx)} instances, {wall:.0f}s", file=sys.stderr, flush=True)
        if args.polish:
            differ = [i for i in range(len(idx))
                      if (games["mean"][i] != games["max_kept"][i]).any()]
            if differ:
                sub = agent.encode_batch([insts[idx[i]] for i in differ])
                passes = agent.default_polish(sub)
                for rule, col in (("mean", "mean+best+pol"), ("max_kept", "max_kept+pol")):
                    t0 = time.perf_counter()
                    pol, wall, _ = agent.polish(sub, games[rule][differ], passes=passes,
                                                only=agent.polish_rows(sub))
                    cols[col] = {i: s for i, s in zip(differ, pol)}
                    print(f"  polish {rule}: {len(differ)} games, {wall:.0f}s", file=sys.stderr,
                          flush=True)
        for i, k in enumerate(idx):
            inst = insts[k]
            h = validate(inst, heuristic(inst)).estimated_time
            row = {}
            for n, sols in cols.items():
                if isinstance(sols, dict):      # polished only where the games differ
                    if i not in sols:
                        continue
                sol = sols[i]
                v = validate(inst, sol)
                if not v.valid:
                    raise SystemExit(f"BUG: {n} on {names[k]} is invalid: {v.summary()}")
                row[n] = v.estimated_time / h
            rows[names[k]] = row
            print(f"{names[k]:32} {inst.num_buffers:4d} "
                  + " ".join(f"{n} {v:.4f}" for n, v in row.items()), flush=True)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    cols_ = [n for n in next(iter(rows.values())) if all(n in r for r in rows.values())]
    print(f"{len(rows)} training instances; geomean / heuristic: "
          + ", ".join(f"{n} {geo([r[n] for r in rows.values()]):.4f}" for n in cols_))
    for n in cols_:
        worse = [p for p, r in rows.items() if r[n] > 1.01]
        print(f"{n} worse than the heuristic by > 1%: {len(worse)} {worse}")
    for a, b in (("max", "mean"), ("max_kept", "mean"), ("max_kept", "max"),
                 ("max_kept", "mean+best")):
        if a in cols_ and b in cols_:
            r = [(x[a], x[b]) for x in rows.values()]
            print(f"{a} vs {b}: geomean {geo([p / q for p, q in r]):.4f}, faster on "
                  f"{sum(p < q * (1 - 1e-9) for p, q in r)}, slower on "
                  f"{sum(p > q * (1 + 1e-9) for p, q in r)} of {len(r)}")
    pol = [(r["max_kept+pol"], r["mean+best+pol"]) for r in rows.values() if "max_kept+pol" in r]
    if pol:
        print(f"polished (the default's last step), on the {len(pol)} instances whose games "
              f"differ: max_kept+pol vs mean+best+pol geomean "
              f"{geo([p / q for p, q in pol]):.4f}, faster on "
              f"{sum(p < q * (1 - 1e-9) for p, q in pol)}, slower on "
              f"{sum(p > q * (1 + 1e-9) for p, q in pol)}; over all {len(rows)} (equal games "
              f"polish equally): geomean "
              f"{geo([p / q for p, q in pol] + [1.0] * (len(rows) - len(pol))):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
