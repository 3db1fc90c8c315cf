"""The learned player vs the heuristic, uniform-prior MCTS and CP-SAT, on held-out programs.

For every held-out instance of data/msa/manifest.json (programs never played
in training), in one run: the XLA-style heuristic, Gumbel MuZero with a
uniform prior and zero value at the same number of simulations, the same
with the heuristic-rollout leaf value (the ablation of the learned prior),
the learned policy alone (argmax), learned MCTS (the agent's defaults:
agent.DEFAULT_VALUE for the leaf value), and CP-SAT at
a time limit with its bound. Prints each method's validator time relative
to the heuristic, wall times, and geometric means; every solution goes
through the validator (an invalid one stops the bench).

    .venv/bin/python bench/bench_msa_learned.py [--simulations 16] [--time-limit 10]
        [--num-workers 2] [--json out.json]

The searches play the instances of one shape class as one vmapped batch; a
learned method's wall time per instance is (encoding + the batch's play,
including jax's compile on its first shape) / batch size.
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
LEARNED = (("uniform", "MCTS uniform"), ("unirollout", "uniform+roll"),
           ("policy", "policy argmax"), ("raw", "learned raw"), ("learned", "learned MCTS"))
# method -> agent.play_batch keywords ("raw": the learned search without the
# incumbent game of play.fortify; "unirollout": the learned agent's search
# with a uniform prior, the same rollout value and incumbent: the ablation)
SETTINGS = {"uniform": dict(uniform=True), "unirollout": dict(uniform=True, value_mode="rollout",
                                                             fortified=True),
            "policy": dict(), "raw": dict(fortified=False), "learned": dict()}
# Above this many buffers (a game bucket over agent.ROLLOUT_MAX_BUCKET) the
# rollout leaf value and the incumbent cost a game per simulation: the big
# instances get a table of their own with --big-simulations.
BIG_BUFFERS = 256


def _geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _checked_time(inst, sol, what):
    from memfit.msa.validator import validate
    v = validate(inst, sol)
    if not v.valid:
        raise SystemExit(f"BUG: {what} on {inst.program} is invalid:\n{v.summary()}")
    return v.estimated_time


def learned_rows(insts, sims: int, methods=None):
    """{instance index: {method: (time, wall)}} for the learned methods."""
    from memfit.msa import game
    from memfit.msa.learned import agent
    groups: dict = {}
    for k, inst in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]), []).append(k)
    out = {k: {} for k in range(len(insts))}
    for idx in groups.values():
        batch = agent.encode_batch([insts[k] for k in idx])
        share = batch.encode_seconds / len(idx)
        for name, _ in LEARNED:
            if methods is not None and name not in methods:
                continue
            n = 0 if name == "policy" else sims
            sols, wall = agent.play_batch(batch, simulations=n, **SETTINGS[name])
            for k, sol in zip(idx, sols):
                t = _checked_time(insts[k], sol, name)
                # the uniform searches use no network: no encoding share
                out[k][name] = (t, wall / len(idx) + (0.0 if name.startswith("uni") else share))
    return out


def main(argv=None) -> int:
    from memfit.msa import exact, heuristic
    from memfit.msa.instance import Instance
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=16)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--num-workers", type=int, default=2)
    ap.add_argument("--manifest", default=str(ROOT / "data/msa/manifest.json"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--big", action="store_true",
                    help=f"the held-out instances over {BIG_BUFFERS} buffers (default: up to)")
    ap.add_argument("--big-methods", default="uniform,policy,learned",
                    help="learned methods played on the big instances")
    args = ap.parse_args(argv)
    man_path = Path(args.manifest)
    man = json.loads(man_path.read_text())
    files = man["heldout"]
    insts = [Instance.load(man_path.parent / f) for f in files]
    keep = [k for k, i in enumerate(insts) if (i.num_buffers > BIG_BUFFERS) == args.big]
    files, insts = [files[k] for k in keep], [insts[k] for k in keep]
    methods = set(args.big_methods.split(",")) if args.big else None
    global LEARNED
    if methods is not None:
        LEARNED = tuple((n, lab) for n, lab in LEARNED if n in methods)
    t0 = time.time()
    learned = learned_rows(insts, args.simulations, methods)
    print(f"learned methods: {time.time() - t0:.0f}s for {len(insts)} instances", file=sys.stderr)

    hdr = (f"{'instance':30} {'bufs':>4} {'heur ms':>10} "
           + " ".join(f"{lab:>13}" for _, lab in LEARNED)
           + f" {'CP-SAT':>7} {'bound':>6} {'status':>8} | wall s: {'heur':>5} "
           + " ".join(f"{n[:7]:>7}" for n, _ in LEARNED) + f" {'cpsat':>5}")
    print(f"held-out instances; times relative to the heuristic's (validator), "
          f"{args.simulations} simulations per move, CP-SAT {args.time_limit:g}s x "
          f"{args.num_workers} workers")
    print(hdr)
    print("-" * len(hdr))
    rows = []
    for k, inst in enumerate(insts):
        t = time.perf_counter()
        h = heuristic.assign(inst)
        h_wall = time.perf_counter() - t
        th = _checked_time(inst, h, "heuristic")
        r = exact.solve(inst, time_limit=args.time_limit, num_workers=args.num_workers, hint=h)
        tc = _checked_time(inst, r.solution, "CP-SAT")
        row = {"instance": Path(files[k]).stem, "buffers": inst.num_buffers,
               "heuristic": th, "heuristic_wall": h_wall, "cpsat": tc, "bound": r.bound,
               "status": r.status, "cpsat_wall": r.wall_time}
        for name, _ in LEARNED:
            row[name], row[name + "_wall"] = learned[k][name]
        rows.append(row)
        print(f"{row['instance'][:30]:30} {inst.num_buffers:4d} {th * 1e3:10.5f} "
              + " ".join(f"{row[n] / th:13.4f}" for n, _ in LEARNED)
              + f" {tc / th:7.4f} {r.bound / th:6.3f} {r.status:>8} | {'':8}{h_wall:5.2f} "
              + " ".join(f"{row[n + '_wall']:7.2f}" for n, _ in LEARNED)
              + f" {r.wall_time:5.1f}", flush=True)
    print("-" * len(hdr))
    summarize(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def summarize(rows) -> None:
    names = {n for n, _ in LEARNED}
    rel = {n: [r[n] / r["heuristic"] for r in rows] for n, _ in LEARNED + (("cpsat", ""),)}
    print("geomean time / heuristic: " + ", ".join(
        f"{lab or 'CP-SAT'} {_geo(rel[n]):.4f}" for n, lab in LEARNED + (("cpsat", ""),)))
    print("geomean wall s: heuristic " + f"{_geo([r['heuristic_wall'] for r in rows]):.2f}, "
          + ", ".join(f"{lab} {_geo([r[n + '_wall'] for r in rows]):.2f}" for n, lab in LEARNED)
          + f", CP-SAT {_geo([r['cpsat_wall'] for r in rows]):.2f}")
    n = len(rows)
    for m, lab in (("learned", "learned MCTS"), ("raw", "learned raw (no incumbent)")):
        if m in names:
            worse = [r["instance"] for r in rows if r[m] > 1.01 * r["heuristic"]]
            print(f"{lab} worse than the heuristic by > 1%: {len(worse)}/{n} {worse}")
    fb = _geo([min(r["learned"], r["heuristic"]) / r["heuristic"] for r in rows])
    print(f"(separately: learned MCTS with a fallback to the heuristic's solution where "
          f"that is faster: geomean {fb:.4f})")
    for u, lab in (("uniform", "uniform MCTS (zero value)"),
                   ("unirollout", "uniform MCTS with the same rollout value and incumbent")):
        if u not in names:
            continue
        print(f"learned MCTS faster than {lab} on {sum(r['learned'] < r[u] for r in rows)}"
              f"/{n}, slower on {sum(r['learned'] > r[u] for r in rows)}/{n}")
    if "raw" in names:
        print(f"learned raw faster than uniform+roll on "
              f"{sum(r['raw'] < r['unirollout'] for r in rows)}/{n}, slower on "
              f"{sum(r['raw'] > r['unirollout'] for r in rows)}/{n}")
    print(f"policy argmax faster than the heuristic on "
          f"{sum(r['policy'] < r['heuristic'] * (1 - 1e-9) for r in rows)}/{n}, "
          f"as fast on {sum(abs(r['policy'] / r['heuristic'] - 1) <= 1e-9 for r in rows)}/{n}")
    opt = [r for r in rows if r["status"] == "OPTIMAL"]
    if opt:
        within = sum(r["learned"] <= 1.02 * r["cpsat"] for r in opt)
        print(f"CP-SAT proved optimal on {len(opt)}/{n}; learned MCTS within 2% of the optimum "
              f"on {within}/{len(opt)} (geomean learned / optimum "
              f"{_geo([r['learned'] / r['cpsat'] for r in opt]):.4f})")


if __name__ == "__main__":
    sys.exit(main())
