"""Does the learned prior matter? Learned vs uniform prior on VALIDATION instances.

Validation instances are never trained on and never held out: random jax
programs (memfit.msa.learned.programs) with seeds outside the training
script's range (training uses 0..--programs-1, default 30), exported as
`memfit export-buffers` does, plus synthetic instances with ids outside the
training script's (training: 50,000 + i). They are cached as JSON under
bench/out/msa_validation/ (exporting takes a while).

Methods (comma-separated, each ``name[:key=value;...]`` is one column):
  heuristic                 the XLA-style heuristic (the baseline, always run)
  policy[:ckpt=PATH]        the network's argmax (no search)
  learned[:mc=K;sims=N;polish=P;seed=0|1;ckpt=PATH]
                            the agent's search (rollout leaf value, root rule
                            max_kept; polish off unless polish=P); mc: root
                            actions considered (Gumbel MuZero's
                            max_num_considered_actions); seed: the policy's
                            argmax game kept from the start (agent's
                            policy_seed, default 1)
  uniform[:mc=K;sims=N;polish=P]
                            the same search with a uniform prior (and, as
                            in the agent, no heuristic move promoted)

Prints time / heuristic per instance and method, geometric means, and for
every learned column the uniform column with the same settings: faster /
slower counts (the ablation of the issue's goal 2).

    .venv/bin/python bench/diag_msa_prior.py [--seeds 1000-1011] [--synthetic 12]
        [--methods policy,learned,uniform,learned:mc=4,uniform:mc=4] [--max-buffers 64]
        [--set validation|train]
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
CACHE = ROOT / "bench/out/msa_validation"


def validation_instances(seeds, synthetic: int, max_buffers: int, synthetic_start: int = 70_000):
    """The validation set (cached): ``[(name, Instance)]``: the random
    programs of ``seeds`` and ``synthetic`` synthetic instances with ids
    from ``synthetic_start`` (a later id range, with other seeds, is a fresh
    set for judging what the first one was used to choose)."""
    from memfit.msa.instance import Instance
    from memfit.msa.learned import programs
    from memfit.msa.synthetic import random_instance
    CACHE.mkdir(parents=True, exist_ok=True)
    out = []
    for seed in seeds:
        files = sorted(CACHE.glob(f"random-*-{seed}-*.json"))
        if not files:
            for inst in programs.training_instances([seed]):
                path = CACHE / f"{inst.program}-{inst.mode}.json"
                path.write_text(json.dumps(inst.to_dict()))
            files = sorted(CACHE.glob(f"random-*-{seed}-*.json"))
        out += [(f.stem, Instance.load(f)) for f in files]
    for i in range(synthetic_start - 70_000, synthetic_start - 70_000 + synthetic):
        mode = ("placement", "offload")[i % 2]
        inst = random_instance(70_000 + i, num_ops=24 + (i * 7) % 33, num_args=2 + i % 6,
                               mode=mode, capacity_fraction=0.2 + 0.4 * ((i * 5) % 9) / 8)
        out.append((f"synthetic-{70_000 + i}-{mode}", inst))
    return [(n, i) for n, i in out if i.num_buffers <= max_buffers]


def manifest_train(max_buffers: int):
    """The manifest's training instances up to ``max_buffers`` buffers."""
    from memfit.msa.instance import Instance
    man = json.loads((ROOT / "data/msa/manifest.json").read_text())
    out = [(Path(f).stem, Instance.load(ROOT / "data/msa" / f)) for f in man["train"]]
    return [(n, i) for n, i in out if i.num_buffers <= max_buffers]


def parse_method(text: str) -> tuple[str, dict]:
    name, _, rest = text.partition(":")
    opts = dict(kv.split("=") for kv in rest.split(";") if kv) if rest else {}
    return name, opts


def run_method(batch, name: str, opts: dict, params_for):
    """``(solutions, wall seconds)`` of one column on one batch."""
    from memfit.msa.learned import agent
    params = params_for(opts.get("ckpt"))
    if name == "policy":
        return agent.play_batch(batch, simulations=0, params=params)
    if name not in ("learned", "uniform"):
        raise SystemExit(f"unknown method {name!r}")
    return agent.play_batch(batch, simulations=int(opts.get("sims", 16)), params=params,
                            uniform=name == "uniform", value_mode="rollout",
                            root_rule="max_kept", polish=int(opts.get("polish", 0)),
                            max_considered=int(opts.get("mc", agent.DEFAULT_MAX_CONSIDERED)),
                            policy_seed=name == "learned" and opts.get("seed", "1") == "1")


def main(argv=None) -> int:
    from memfit.msa import game
    from memfit.msa.heuristic import assign as heuristic
    from memfit.msa.learned import agent
    from memfit.msa.validator import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1000-1011")
    ap.add_argument("--synthetic", type=int, default=12)
    ap.add_argument("--synthetic-start", type=int, default=70_000,
                    help="first synthetic id (the 32-instance validation set: 70000; "
                         "the fresh test set of 2026-12-05: --seeds 1012-1023 --synthetic-start 70012)")
    ap.add_argument("--max-buffers", type=int, default=64)
    ap.add_argument("--methods", default="policy,learned,uniform")
    ap.add_argument("--set", choices=("validation", "train"), default="validation",
                    help="train: the manifest's training instances instead (data/msa)")
    ap.add_argument("--json", default=None, help="write the per-instance table here")
    args = ap.parse_args(argv)
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    insts = (validation_instances(seeds, args.synthetic, args.max_buffers, args.synthetic_start)
             if args.set == "validation" else manifest_train(args.max_buffers))
    methods = [m for m in args.methods.split(",") if m]
    cache: dict = {}

    def params_for(path):
        if path not in cache:
            cache[path] = agent.load_params(path)
        return cache[path]

    groups: dict = {}
    for k, (_, inst) in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]), []).append(k)
    rows: dict = {}
    walls = {m: 0.0 for m in methods}
    for idx in groups.values():
        batch = agent.encode_batch([insts[k][1] for k in idx])
        cols = {}
        for m in methods:
            name, opts = parse_method(m)
            t0 = time.process_time()
            cols[m], _ = run_method(batch, name, opts, params_for)
            walls[m] += time.process_time() - t0
            print(f"  {m}: {len(idx)} instances, {time.process_time() - t0:.0f} s CPU",
                  file=sys.stderr, flush=True)
        for i, k in enumerate(idx):
            name, inst = insts[k]
            h = validate(inst, heuristic(inst)).estimated_time
            row = {}
            for m, sols in cols.items():
                v = validate(inst, sols[i])
                if not v.valid:
                    raise SystemExit(f"BUG: {m} on {name} is invalid: {v.summary()}")
                row[m] = v.estimated_time / h
            rows[name] = row
            print(f"{name:40} {inst.num_buffers:4d} "
                  + " ".join(f"{m} {v:.4f}" for m, v in row.items()), flush=True)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    print(f"{len(rows)} {args.set} instances; geomean time / heuristic (CPU s):")
    for m in methods:
        print(f"  {m:36} {geo([r[m] for r in rows.values()]):.4f}  ({walls[m]:.0f} s)")
    for m in methods:
        name, opts = parse_method(m)
        if name != "learned":
            continue
        twin = [u for u in methods if parse_method(u)[0] == "uniform"
                and {k: v for k, v in parse_method(u)[1].items() if k not in ("ckpt", "seed")}
                == {k: v for k, v in opts.items() if k not in ("ckpt", "seed")}]
        for u in twin:
            r = [(x[m], x[u]) for x in rows.values()]
            print(f"{m} vs {u}: geomean {geo([p / q for p, q in r]):.4f}, faster on "
                  f"{sum(p < q * (1 - 1e-9) for p, q in r)}, slower on "
                  f"{sum(p > q * (1 + 1e-9) for p, q in r)} of {len(r)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
