"""msa.repack after the agent's default play, on validation or training placement instances.

The default play (agent.play_batch with its defaults and repack=False:
search, policy seed, max_kept, two-stage polish) is run once per instance
set and its solutions cached under bench/out/msa_repack/ (delete the file
after the agent changes); each repack variant then runs from those
solutions in seconds. CP-SAT's reference comes from diag_msa_optgap.py's
cache (bench/out/msa_optgap/, run that script first). Never the held-out
instances.

    nice -n 19 .venv/bin/python bench/diag_msa_repack.py [--set validation|train]
        [--variants 'name={"pairs": false};name2={...}'] [--start default|heuristic]

Prints per instance time / heuristic of CP-SAT (opt: proven optimal), the
start and every variant (with its rounds and CPU seconds), then per column
the geomean, the instances within 2% of the optimum and the CPU per instance.
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
sys.path.insert(0, str(ROOT / "bench"))
CACHE = ROOT / "bench/out/msa_repack"
OPTGAP = ROOT / "bench/out/msa_optgap"


def default_solutions(which: str, insts) -> dict:
    """The agent's default solutions (cached per set)."""
    from memfit.msa import game
    from memfit.msa.learned import agent
    from memfit.msa.solution import Solution
    path = CACHE / f"{which}-default.json"
    if path.exists():
        return {n: Solution.from_dict(d) for n, d in json.loads(path.read_text()).items()}
    groups: dict = {}
    for n, inst in insts.items():
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]),
                          []).append(n)
    out = {}
    for names in groups.values():
        batch = agent.encode_batch([insts[n] for n in names])
        sols, _ = agent.play_batch(batch, repack=False)
        out.update(zip(names, sols))
        print(f"  default play: {len(out)}/{len(insts)}", file=sys.stderr, flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({n: s.to_dict() for n, s in out.items()}))
    return out


def main(argv=None) -> int:
    from diag_msa_prior import manifest_train, validation_instances
    from memfit.msa.heuristic import assign as heuristic
    from memfit.msa.repack import repack
    from memfit.msa.validator import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("validation", "train"), default="validation")
    ap.add_argument("--max-buffers", type=int, default=64)
    ap.add_argument("--time-limit", type=float, default=60.0, help="CP-SAT cache's limit")
    ap.add_argument("--start", choices=("default", "heuristic"), default="default")
    ap.add_argument("--variants", default="repack={}",
                    help="name=JSON keyword arguments of msa.repack.repack, ';'-separated")
    args = ap.parse_args(argv)
    insts = (validation_instances(range(1000, 1012), 12, args.max_buffers)
             if args.set == "validation" else manifest_train(args.max_buffers))
    insts = {n: i for n, i in insts if i.mode == "placement"}
    start = (default_solutions(args.set, insts) if args.start == "default"
             else {n: heuristic(i) for n, i in insts.items()})
    variants = [(v.split("=", 1)[0], json.loads(v.split("=", 1)[1]))
                for v in args.variants.split(";") if v]
    cols = {args.start: [], **{n: [] for n, _ in variants}}
    cpu = {n: 0.0 for n, _ in variants}
    ref = []
    for name, inst in insts.items():
        th = validate(inst, heuristic(inst)).estimated_time
        p = OPTGAP / f"{name}-{args.time_limit:g}s.json"
        r = json.loads(p.read_text()) if p.exists() else {"status": "-", "time": float("nan")}
        ref.append((r["status"] == "OPTIMAL", r["time"] / th))
        v0 = validate(inst, start[name])
        assert v0.valid, name
        cols[args.start].append(v0.estimated_time / th)
        line = (f"{name:40} {inst.num_buffers:3d} {'opt' if ref[-1][0] else '   '} "
                f"cpsat {ref[-1][1]:.4f} {args.start} {v0.estimated_time / th:.4f}")
        for vn, kw in variants:
            c0 = time.process_time()
            out, st = repack(inst, start[name], **kw)
            c = time.process_time() - c0
            cpu[vn] += c
            v = validate(inst, out)
            if not v.valid or v.estimated_time > v0.estimated_time:
                raise SystemExit(f"BUG: repack {vn} on {name}: valid {v.valid}, "
                                 f"{v.estimated_time} vs {v0.estimated_time}")
            cols[vn].append(v.estimated_time / th)
            line += f" | {vn} {v.estimated_time / th:.4f} ({st.rounds} changes, {c:.1f} s)"
        print(line, flush=True)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    nopt = sum(o for o, _ in ref)
    print(f"{len(insts)} {args.set} placement instances up to {args.max_buffers} buffers, "
          f"CP-SAT ({args.time_limit:g} s) proved optimal on {nopt}; geomean time / heuristic: "
          f"cpsat {geo([c for _, c in ref]):.4f}")
    for n, xs in cols.items():
        within = sum(1 for x, (o, c) in zip(xs, ref) if o and x <= 1.02 * c)
        misses = ", ".join(f"{nm} {x / c:.3f}" for nm, x, (o, c) in zip(insts, xs, ref)
                           if o and x > 1.02 * c)
        extra = f"; repack {cpu[n] / len(xs):.2f} s CPU per instance" if n in cpu else ""
        print(f"  {n:12} {geo(xs):.4f}  within 2% of the optimum on {within}/{nopt}{extra}; "
              f"misses: {misses}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
