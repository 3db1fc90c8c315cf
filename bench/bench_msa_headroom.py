"""Headroom of memory-space assignment: how far the XLA-style heuristic is from optimal.

For every instance (the synthetic suite, plus exported ones in
data/msa/instances/ and bench/msa_instances/ when present) prints the estimated time of
all-slow, random, greedy-by-size, the heuristic and CP-SAT's best solution
(all scored by the validator), CP-SAT's lower bound over the plan-menu family,
and the gaps to that bound.

    .venv/bin/python bench/bench_msa_headroom.py [--time-limit 5] [--num-workers 8]
        [--full] [--instances DIR_OR_FILES ...] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from memfit.msa.core.instance import Instance  # noqa: E402
from memfit.msa.core.validator import validate  # noqa: E402
from memfit.msa.io.synthetic import instance_suite  # noqa: E402
from memfit.msa.solvers import baselines, exact, heuristic  # noqa: E402

import _results  # noqa: E402  (this script's folder is on sys.path)


def _time(inst, sol):
    v = validate(inst, sol)
    if not v.valid:
        raise SystemExit(f"{inst.program}: {sol.method} produced an invalid solution:\n{v.summary()}")
    return v.estimated_time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _results.add_write_flag(ap)
    ap.add_argument("--time-limit", type=float, default=5.0, help="CP-SAT seconds per instance")
    ap.add_argument("--num-workers", type=int, default=8)
    ap.add_argument("--full", action="store_true", help="the larger synthetic suite")
    ap.add_argument("--instances", nargs="*", default=None,
                    help="instance JSON files or folders (default: data/msa/instances, bench/msa_instances)")
    ap.add_argument("--max-buffers", type=int, default=2000, help="skip larger instances")
    ap.add_argument("--json", default=None, help="also write the rows as JSON")
    args = ap.parse_args(argv)

    insts = list(instance_suite(quick=not args.full))
    paths = []
    default = [str(ROOT / "data" / "msa" / "instances"), str(ROOT / "bench" / "msa_instances")]
    for x in (args.instances if args.instances is not None else default):
        p = Path(x)
        paths += sorted(p.glob("*.json")) if p.is_dir() else ([p] if p.exists() else [])
    for p in paths:
        if p.name.endswith(".solution.json"):
            continue
        inst = Instance.load(p)
        inst.program = p.stem          # programs repeat across capacities and modes
        if inst.num_buffers > args.max_buffers:
            print(f"skip {p.name}: {inst.num_buffers} buffers", file=sys.stderr)
            continue
        insts.append(inst)

    hdr = (f"{'instance':44} {'mode':9} {'ops':>4} {'bufs':>4} {'slow':>10} {'random':>10} "
           f"{'greedy':>10} {'heur':>10} {'cpsat':>10} {'bound':>10} {'status':>8} "
           f"{'heur/bd':>8} {'cp/bd':>7} {'heur s':>6} {'cp s':>5}")
    print("times in ms (validator's estimate); heur/bd = heuristic / CP-SAT bound, "
          "cp/bd = CP-SAT best / bound")
    print(hdr)
    print("-" * len(hdr))
    rows = []
    for inst in insts:
        t_slow = _time(inst, baselines.all_slow(inst))
        t_rand = min(_time(inst, baselines.random_assignment(inst, s)) for s in range(3))
        t_greedy = _time(inst, baselines.greedy_by_size(inst))
        t0 = time.time()
        h = heuristic.assign(inst)
        h_wall = time.time() - t0
        t_h = _time(inst, h)
        r = exact.solve(inst, time_limit=args.time_limit, num_workers=args.num_workers, hint=h)
        t_cp = r.verdict.estimated_time
        if not r.verdict.valid:
            raise SystemExit(f"{inst.program}: CP-SAT produced an invalid solution")
        row = dict(instance=inst.program, mode=inst.mode, ops=inst.num_ops, buffers=inst.num_buffers,
                   slow=t_slow, random=t_rand, greedy=t_greedy, heuristic=t_h, cpsat=t_cp,
                   bound=r.bound, status=r.status, heuristic_seconds=h_wall, cpsat_seconds=r.wall_time)
        rows.append(row)
        ms = 1e3
        print(f"{inst.program[:44]:44} {inst.mode:9} {inst.num_ops:4d} {inst.num_buffers:4d} "
              f"{t_slow*ms:10.5f} {t_rand*ms:10.5f} {t_greedy*ms:10.5f} {t_h*ms:10.5f} "
              f"{t_cp*ms:10.5f} {r.bound*ms:10.5f} {r.status:>8} {t_h/r.bound:8.4f} "
              f"{t_cp/r.bound:7.4f} {h_wall:6.2f} {r.wall_time:5.1f}", flush=True)
    if rows:
        import math
        geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))  # noqa: E731
        print("-" * len(hdr))
        print(f"geomean speedup vs all-slow: random {geo([r['slow']/r['random'] for r in rows]):.3f}x, "
              f"greedy {geo([r['slow']/r['greedy'] for r in rows]):.3f}x, "
              f"heuristic {geo([r['slow']/r['heuristic'] for r in rows]):.3f}x, "
              f"CP-SAT {geo([r['slow']/r['cpsat'] for r in rows]):.3f}x")
        print(f"geomean heuristic / bound {geo([r['heuristic']/r['bound'] for r in rows]):.4f}, "
              f"CP-SAT / bound {geo([r['cpsat']/r['bound'] for r in rows]):.4f}; "
              f"heuristic <= greedy on {sum(r['heuristic'] <= r['greedy']*(1+1e-9) for r in rows)}/{len(rows)}, "
              f"<= random on {sum(r['heuristic'] <= r['random']*(1+1e-9) for r in rows)}/{len(rows)}; "
              f"CP-SAT proved optimal on {sum(r['status'] == 'OPTIMAL' for r in rows)}/{len(rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
