"""The learned player vs the heuristic, uniform-prior MCTS and CP-SAT, on held-out programs.

For every held-out instance of data/msa/manifest.json (programs never played
in training), in one run (the default --methods, DEFAULT_METHODS below): the
XLA-style heuristic; Gumbel MuZero with a uniform prior and a zero value at
the same number of simulations (the ablation of the learned prior and
value); the learned policy alone (argmax); the learned search raw, with its
best game kept, that game polished, and the agent's default (what `memfit
assign --method learned` returns: the search, then agent.after_search's
polish, pair stage, repack and relaxation polish); CP-SAT at a time limit
with its bound and, where it does not prove optimality, CP-SAT again at the
default's wall time on that instance. `--methods all` adds the other
variants of LEARNED (the uniform prior with the rollout value, kept game and
polish; the default's stages one at a time). Prints each method's validator
time relative to the heuristic, wall times, geometric means and the goals
(never > 1% slower than the heuristic, faster than the uniform prior,
within 2% of CP-SAT's proven optimum); every solution goes through the
validator (an invalid one stops the bench).

    .venv/bin/python bench/bench_msa_learned.py [--simulations 16] [--time-limit 10]
        [--num-workers 2] [--only cnn_train,sgpr] [--methods ...] [--json out.json]
    .venv/bin/python bench/bench_msa_learned.py --merge part1.json part2.json
    .venv/bin/python bench/bench_msa_learned.py --fresh 1252-1263 --synthetic-start 70252 \
        --time-limit 60 --methods unibest,policy,raw,default

``--fresh SEEDS`` plays a generated set instead of the held-out programs:
the random jax programs of memfit.msa.learned.programs with those seeds
(training uses seeds from 0) and ``--synthetic`` synthetic instances with
ids from ``--synthetic-start`` (training uses 50,000 on), up to
``--max-buffers`` buffers. A seed range never run before is a fresh set for
judging what earlier sets were used to choose; CP-SAT at 60 s proves most
of their optima.

The searches play the instances of one shape class as one vmapped batch; a
learned method's wall time per instance is (encoding + the batch's play,
including jax's compile on its first shape) / batch size; a polished
method's wall adds its polish passes to its search's.
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
LEARNED = (("uniform", "uniform zero"), ("unibest", "uni+best"), ("unibestpol", "uni+best+pol"),
           ("policy", "policy argmax"), ("raw", "learned raw"), ("best", "learned+best"),
           ("bestpol", "learned+best+pol"), ("bestpolrp", "best+pol+repack"),
           ("bestpolpr", "best+pol+pairs+rp"), ("bestpolrxp", "best+pol+rp+rxpol"),
           ("default", "agent default"), ("heurls", "heuristic+LS"))
# method -> agent.play_batch keywords. "raw": the learned search alone (no
# polish, the fastest game it saw not kept); "best": the learned search
# keeping the fastest complete game it saw (the played game, the
# heuristic's, every game its searches evaluated); "bestpol": that game
# polished. "best" also yields "raw" (the game it plays is the raw
# search's; raw's wall is then the same play's). The ablation of the
# learned prior: "uniform" (uniform prior, zero value) and "unibest" /
# "unibestpol" (uniform prior with the same rollout value, kept game and
# polish as "best" / "bestpol"). "policy": the network's argmax alone.
SETTINGS = {"uniform": dict(uniform=True, polish=0),
            "unibest": dict(uniform=True, value_mode="rollout", best=True, polish=0),
            "policy": dict(polish=0), "raw": dict(best=False, polish=0),
            "best": dict(best=True, polish=0)}
# Every method of SETTINGS plays without the agent's local search (its
# default above BIG_BUFFERS): it is what "default" adds.
# "bestpolrp": "bestpol"'s solutions through msa.repack (placement instances;
# offload ones as they are), its wall "bestpol"'s plus the repack's.
REPACKED = {"bestpolrp": "bestpol"}
# "bestpolpr": "bestpol"'s games through the pair stage (agent.pair_polish)
# and then msa.repack; its wall "bestpol"'s plus both. "bestpol" itself is
# polished without the pair stage (pairs=False) whatever
# AgentConfig.polish_pairs is, so that its rows stay comparable.
PAIRED = {"bestpolpr": "bestpol"}
# "bestpolrxp": "bestpolrp" and then the relaxation polish (agent.
# relaxation_polish_plans, relax="polish": the repacked plans polished in
# offload mode, no second search, laid out, repacked, the faster kept).
RELAX_POLISHED = {"bestpolrxp": "bestpol"}
# "default": the agent as memfit assign runs it, from "best"'s games: the
# polish stages with the pair stage at its gate (agent.polish, pairs=None),
# repack and the offload relaxation by AgentConfig.relax, all where the
# agent polishes (agent.default_polish; above, "best"'s game itself). Its
# wall "best"'s plus all of those.
FULL_DEFAULT = {"default": "best"}
# Above BIG_BUFFERS the agent plays the policy's argmax (no search) and
# then msa.localsearch (agent.local_search_rows), keeping the faster of that
# and the heuristic's solution searched the same way: "default" there
# starts from "policy"'s games. "heurls": the heuristic's
# solution through the same local search (the ablation: what the learned
# start is worth once both are searched); its wall the heuristic's plus
# the search's.
BIG_FULL_DEFAULT = {"default": "policy"}
HEURISTIC_SEARCHED = "heurls"
POLISHED = {"unibestpol": "unibest", "bestpol": "best"}
# The agent as it plays by default (memfit assign --method learned): CP-SAT
# runs again at this method's wall time where its limit does not prove
# optimality; --merge drops a saved part's CP-SAT-at-the-agent's-wall rows
# measured at another method's wall.
AGENT = "default"
# The methods of a plain run (the columns): the uniform-prior
# search at the same simulations, the policy alone, the learned search raw
# and with its best game kept, that game polished, and the agent's
# default; --methods all plays every method of LEARNED.
DEFAULT_METHODS = "uniform,policy,raw,best,bestpol,default"
# Above this many buffers (a game bucket over AgentConfig.rollout_max_bucket) the
# rollout leaf value and the incumbent cost a game per simulation: the big
# instances get a table of their own with --big-simulations.
BIG_BUFFERS = 256
# The methods of a plain --big run.
BIG_METHODS = "policy,default,heurls"


def _geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _checked_time(inst, sol, what):
    from memfit.msa.core.validator import validate
    v = validate(inst, sol)
    if not v.valid:
        raise SystemExit(f"BUG: {what} on {inst.program} is invalid:\n{v.summary()}")
    return v.estimated_time


def learned_rows(insts, sims: int, methods, passes: int, params=None):
    """{instance index: {method: (time, wall)}} for the learned methods
    (``params``: the network's, None for the packaged checkpoint)."""
    from memfit.msa.core import game
    from memfit.msa.learned import agent
    groups: dict = {}
    for k, inst in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]), []).append(k)
    out = {k: {} for k in range(len(insts))}
    for idx in groups.values():
        batch = agent.encode_batch([insts[k] for k in idx])
        share = batch.encode_seconds / len(idx)
        games, solved = {}, {}
        # "best" plays the raw search's game too: play it first
        order = sorted(LEARNED, key=lambda m: (m[0] != "best" or "raw" not in methods,
                                               m[0] in FULL_DEFAULT))
        for name, _ in order:
            if name not in methods:
                continue
            if name in PAIRED:
                base = PAIRED[name]
                if base not in games:
                    raise SystemExit(f"--methods: {name} needs {base}")
                sols, wall = _paired(batch, *games[base])
            elif name in REPACKED or name in RELAX_POLISHED:
                base = {**REPACKED, **RELAX_POLISHED}[name]
                if base not in solved:
                    raise SystemExit(f"--methods: {name} needs {base}")
                sols, wall = _repacked(batch, solved[base][0], solved[base][1],
                                       relax_polish=name in RELAX_POLISHED)
            elif name == HEURISTIC_SEARCHED:
                sols, wall = _heuristic_searched(batch)
            elif name in FULL_DEFAULT:
                big = batch.arrays.order.shape[1] > BIG_BUFFERS
                base = (BIG_FULL_DEFAULT if big else FULL_DEFAULT)[name]
                if base not in games:
                    raise SystemExit(f"--methods: {name} needs {base}")
                sols, wall = _full_default(batch, games[base][0], games[base][1], sims, params)
            elif name in POLISHED:
                base = POLISHED[name]
                if base not in games:
                    raise SystemExit(f"--methods: {name} needs {base}")
                acts, base_wall = games[base]
                n_passes = agent.default_polish(batch) if passes is None else passes
                if n_passes == 0:    # the agent does not polish this bucket
                    for k in idx:
                        out[k][name] = out[k][base]
                    solved[name] = solved[base]
                    continue
                sols, wall, pacts = agent.polish(batch, acts, agent.AgentConfig(polish_pairs=False),
                                                 passes=n_passes, only=_rows(batch, passes))
                wall += base_wall
                games[name] = (pacts, wall)
            elif name == "raw" and "raw" in games:     # played by "best"
                sols, (acts, wall) = games["raw"]
            else:
                n = 0 if name == "policy" else sims
                cfg = agent.AgentConfig(simulations=n, local_search=False, **SETTINGS[name])
                sols, wall, acts, raw = agent.play_batch(batch, cfg, params=params,
                                                         return_actions=True, return_raw=True)
                games[name] = (acts, wall)
                if name == "best" and "raw" in methods:
                    games["raw"] = (raw, (acts, wall))
            solved[name] = (sols, wall)
            for i, (k, sol) in enumerate(zip(idx, sols)):
                t = _checked_time(insts[k], sol, name)
                # the uniform searches and the heuristic use no network: no encoding share
                no_net = name.startswith("uni") or name == HEURISTIC_SEARCHED
                out[k][name] = (t, wall / len(idx) + (0.0 if no_net else share))
                if name in SETTINGS and name != "raw":    # the game's moves, for --polish-from
                    out[k][name + "_actions"] = [int(a) for a in games[name][0][i]]
            print(f"  {name}: {len(idx)} instances, {wall:.0f}s", file=sys.stderr, flush=True)
    return out


def fresh_instances(seeds, synthetic: int, synthetic_start: int, max_buffers: int):
    """``[(name, Instance)]``: the random programs of ``seeds`` (exported as
    `memfit export-buffers` does, cached under bench/out/msa_fresh/) and
    ``synthetic`` synthetic instances with ids from ``synthetic_start``, up
    to ``max_buffers`` buffers."""
    from memfit.msa.core.instance import Instance
    from memfit.msa.learned import programs
    from memfit.msa.io.synthetic import random_instance
    cache = ROOT / "bench/out/msa_fresh"
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    for seed in seeds:
        files = sorted(cache.glob(f"random-*-{seed}-*.json"))
        if not files:
            for inst in programs.training_instances([seed]):
                (cache / f"{inst.program}-{inst.mode}.json").write_text(json.dumps(inst.to_dict()))
            files = sorted(cache.glob(f"random-*-{seed}-*.json"))
        out += [(f.stem, Instance.load(f)) for f in files]
    for i in range(synthetic_start - 70_000, synthetic_start - 70_000 + synthetic):
        mode = ("placement", "offload")[i % 2]
        inst = random_instance(70_000 + i, num_ops=24 + (i * 7) % 33, num_args=2 + i % 6,
                               mode=mode, capacity_fraction=0.2 + 0.4 * ((i * 5) % 9) / 8)
        out.append((f"synthetic-{70_000 + i}-{mode}", inst))
    return [(n, i) for n, i in out if i.num_buffers <= max_buffers]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--simulations", type=int, default=16)
    ap.add_argument("--passes", type=int, default=None,
                    help="polish passes (default: the agent's, agent.default_polish)")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--num-workers", type=int, default=2)
    ap.add_argument("--manifest", default=str(ROOT / "data/msa/manifest.json"))
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--merge", nargs="+", default=None,
                    help="print the table and summary of rows saved by --json (no run); "
                         "rows of one instance from several files are combined; "
                         "FILE:old=new,... renames a file's methods")
    ap.add_argument("--polish-from", default=None,
                    help="rows saved by --json with the searched methods' games: polish "
                         "those games (the polished methods), run CP-SAT at the agent's "
                         "wall time, write --json (no search)")
    ap.add_argument("--only", default=None,
                    help="comma-separated substrings: only the instances whose name has one")
    ap.add_argument("--big", action="store_true",
                    help=f"the held-out instances over {BIG_BUFFERS} buffers (default: up to)")
    ap.add_argument("--methods", default=None,
                    help=f"learned methods to play, or 'all' (default: {DEFAULT_METHODS}; "
                         f"with --big: {BIG_METHODS})")
    ap.add_argument("--big-methods", default=None, help="(old name of --methods with --big)")
    ap.add_argument("--checkpoint", default=None,
                    help="the learned methods play with this checkpoint instead of the packaged "
                         "one (to judge a candidate before it is shipped)")
    ap.add_argument("--fresh", default=None, metavar="SEEDS",
                    help="a generated set instead of the held-out programs: random programs "
                         "with these seeds (e.g. 1252-1263) and --synthetic instances")
    ap.add_argument("--synthetic", type=int, default=12,
                    help="--fresh: synthetic instances (half placement, half offload)")
    ap.add_argument("--synthetic-start", type=int, default=70_000,
                    help="--fresh: the first synthetic id")
    ap.add_argument("--max-buffers", type=int, default=64,
                    help="--fresh: skip instances with more buffers")
    ap.add_argument("--no-same-wall", action="store_true",
                    help="skip CP-SAT at the agent's wall time (its rows from an earlier run "
                         "can be merged)")
    args = ap.parse_args(argv)
    global LEARNED
    if args.merge:
        # rows of the same instance from several parts (e.g. different
        # --methods) are combined; a later file's values win
        merged: dict = {}
        for f in args.merge:
            f, _, ren = f.partition(":")
            ren = dict(x.split("=") for x in ren.split(",") if x)
            for r in json.loads(Path(f).read_text()):
                r = {_renamed(k, ren): v for k, v in r.items()}
                merged.setdefault(r["instance"], {}).update(r)
        rows = list(merged.values())
        for r in rows:     # CP-SAT at another agent's wall (an older default) is not comparable
            if "cpsat_same_wall" in r and r.get("cpsat_same_wall_limit") != r.get(AGENT + "_wall"):
                del r["cpsat_same_wall"], r["cpsat_same_wall_limit"]
        LEARNED = tuple((n, lab) for n, lab in LEARNED if all(n in r for r in rows))
        print_table(rows, "rows merged from " + ", ".join(args.merge))
        summarize(rows)
        return 0
    from memfit.msa.core.instance import Instance
    from memfit.msa.learned import agent
    passes = args.passes          # None: the agent's default per shape class
    if args.polish_from:
        return polish_from(args, passes)
    if args.fresh:
        lo, _, hi = args.fresh.partition("-")
        named = fresh_instances(range(int(lo), int(hi or lo) + 1), args.synthetic,
                                args.synthetic_start, args.max_buffers)
        title = f"fresh instances (seeds {args.fresh}, synthetic from {args.synthetic_start})"
    else:
        man_path = Path(args.manifest)
        files = json.loads(man_path.read_text())["heldout"]
        named = [(Path(f).stem, Instance.load(man_path.parent / f)) for f in files]
        title = "held-out instances"
    if args.only:
        named = [(n, i) for n, i in named if any(s in n for s in args.only.split(","))]
    named = [(n, i) for n, i in named if (i.num_buffers > BIG_BUFFERS) == args.big]
    names, insts = [n for n, _ in named], [i for _, i in named]
    chosen = (args.methods or args.big_methods
              or (BIG_METHODS if args.big else DEFAULT_METHODS))
    methods = {n for n, _ in LEARNED} if chosen == "all" else set(chosen.split(","))
    unknown = methods - {n for n, _ in LEARNED}
    if unknown:
        raise SystemExit(f"--methods: unknown {sorted(unknown)}; known: "
                         + ",".join(n for n, _ in LEARNED))
    LEARNED = tuple((n, lab) for n, lab in LEARNED if n in methods)
    t0 = time.time()
    params = None
    if args.checkpoint:
        from memfit.msa.learned import agent
        params = agent.load_params(args.checkpoint)
    learned = learned_rows(insts, args.simulations, methods, passes, params)
    print(f"learned methods: {time.time() - t0:.0f}s for {len(insts)} instances", file=sys.stderr)
    rows = [solver_row(inst, names[k], learned[k], args) for k, inst in enumerate(insts)]
    print_table(rows, f"{args.simulations} simulations per move, polish passes "
                      f"{'the agent default' if passes is None else passes}, "
                      f"CP-SAT {args.time_limit:g}s x {args.num_workers} workers", title)
    summarize(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def _renamed(key: str, ren: dict) -> str:
    """A row key (method, method_wall, method_actions, or another field)
    under --merge's renames."""
    for suffix in ("", "_wall", "_actions"):
        base = key[:len(key) - len(suffix)] if suffix and key.endswith(suffix) else key
        if (not suffix or key.endswith(suffix)) and base in ren:
            return ren[base] + suffix
    return key


def _rows(batch, passes):
    """The instances a polished method polishes: the agent's default
    (agent.polish_rows) unless --passes was given (then all)."""
    from memfit.msa.learned import agent
    return agent.polish_rows(batch) if passes is None else None


def _paired(batch, actions, base_wall: float):
    """The pair stage (agent.pair_polish) from polished games, then
    msa.repack: ``(solutions, wall)`` with ``base_wall`` added."""
    from memfit.msa.learned import agent
    t = time.perf_counter()
    final, _ = agent.pair_polish(batch, actions)
    sols = agent.repacked(batch, agent._solutions(batch, final, "learned-polish"))
    return sols, base_wall + time.perf_counter() - t


def _repacked(batch, sols, base_wall: float, relax_polish: bool = False):
    """msa.repack of the solutions and, with ``relax_polish``, then the
    repacked plans polished in the offload relaxation: ``(solutions, wall)``
    with ``base_wall`` added."""
    from memfit.msa.learned import agent
    t = time.perf_counter()
    sols = agent.repacked(batch, sols)
    if relax_polish:
        sols = agent.relaxed(batch, sols, agent.relaxation_polish_plans(batch, sols))
    return sols, base_wall + time.perf_counter() - t


def _full_default(batch, actions, base_wall: float, simulations: int, params=None):
    """FULL_DEFAULT: the agent's stages after the search (agent.after_search,
    as play_batch runs them) from its games ``actions``: ``(solutions,
    wall)`` with ``base_wall`` added."""
    from memfit.msa.learned import agent, play
    t = time.perf_counter()
    searched = agent._solutions(batch, play.replay_batch(batch.arrays, actions), "learned-mcts")
    sols, _ = agent.after_search(batch, searched, actions, agent.default_polish(batch),
                                 "learned-mcts", agent.AgentConfig(simulations=simulations),
                                 only=agent.polish_rows(batch), params=params)
    return sols, base_wall + time.perf_counter() - t


def _heuristic_searched(batch):
    """HEURISTIC_SEARCHED: the heuristic's solutions through msa.localsearch
    (offload instances; placement ones as the heuristic leaves them):
    ``(solutions, wall)``."""
    from memfit.msa.solvers import heuristic
    from memfit.msa.learned import agent
    t = time.perf_counter()
    cfg = agent.AgentConfig(local_search=True, local_search_from_heuristic=False)
    sols = agent.local_searched(batch, [heuristic.assign(s.inst) for s in batch.specs],
                                agent.local_search_rows(batch, cfg), cfg)
    return sols, time.perf_counter() - t


def _set_rows(rows, idx, insts, name, sols, walls):
    for k, sol, w in zip(idx, sols, walls):
        rows[k][name] = _checked_time(insts[k], sol, name)
        rows[k][name + "_wall"] = w


def polish_from(args, passes: int) -> int:
    """--polish-from: the polished methods from saved games (the searches
    are deterministic: polishing a saved game is polishing the game the
    search plays); their wall is the saved search's plus the polish's."""
    import jax.numpy as jnp
    from memfit.msa.core import game
    from memfit.msa.solvers import exact, heuristic
    from memfit.msa.core.instance import Instance
    from memfit.msa.learned import agent
    src = Path(args.polish_from)
    rows = json.loads(src.read_text())
    if args.only:        # as in a fresh run: only the instances whose name has one
        rows = [r for r in rows if any(o in r["instance"] for o in args.only.split(","))]
    man_path = Path(args.manifest)
    insts = [Instance.load(man_path.parent / "instances" / (r["instance"] + ".json")) for r in rows]
    groups: dict = {}
    for k, inst in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]), []).append(k)
    wanted = (args.methods or "").split(",")
    for idx in groups.values():
        batch = agent.encode_batch([insts[k] for k in idx])
        for name, base in FULL_DEFAULT.items():
            if name not in wanted or not all(base + "_actions" in rows[k] for k in idx):
                continue
            acts = jnp.asarray([rows[k][base + "_actions"] for k in idx], jnp.int32)
            sols, wall = _full_default(batch, acts, 0.0, args.simulations)
            _set_rows(rows, idx, insts, name, sols, [rows[k][base + "_wall"] + wall / len(idx)
                                                     for k in idx])
            print(f"  {name}: {len(idx)} instances, {wall:.0f}s", file=sys.stderr, flush=True)
        for name, base in POLISHED.items():
            if not all(base + "_actions" in rows[k] for k in idx):
                continue
            acts = jnp.asarray([rows[k][base + "_actions"] for k in idx], jnp.int32)
            n_passes = agent.default_polish(batch) if passes is None else passes
            sols, wall, pacts = agent.polish(batch, acts, agent.AgentConfig(polish_pairs=False),
                                             passes=n_passes, only=_rows(batch, passes))
            _set_rows(rows, idx, insts, name, sols, [rows[k][base + "_wall"] + wall / len(idx)
                                                     for k in idx])
            print(f"  {name}: {len(idx)} instances, polish {wall:.0f}s", file=sys.stderr,
                  flush=True)
            derived = [n for n, b in {**REPACKED, **PAIRED, **RELAX_POLISHED}.items()
                       if b == name and n in wanted]
            for pname in derived if n_passes > 0 else ():
                psols, pwall = (_paired(batch, pacts, 0.0) if pname in PAIRED else
                                _repacked(batch, sols, 0.0, relax_polish=pname in RELAX_POLISHED))
                _set_rows(rows, idx, insts, pname, psols,
                          [rows[k][name + "_wall"] + pwall / len(idx) for k in idx])
                print(f"  {pname}: {len(idx)} instances, {pwall:.0f}s", file=sys.stderr,
                      flush=True)
    for k, r in enumerate(rows):
        if r["status"] != "OPTIMAL" and AGENT in r and not args.no_same_wall:
            h = heuristic.assign(insts[k])
            r2 = exact.solve(insts[k], time_limit=r[AGENT + "_wall"],
                             num_workers=args.num_workers, hint=h)
            r["cpsat_same_wall"] = _checked_time(insts[k], r2.solution, "CP-SAT")
            r["cpsat_same_wall_limit"] = r[AGENT + "_wall"]
    global LEARNED
    LEARNED = tuple((n, lab) for n, lab in LEARNED if all(n in r for r in rows))
    print_table(rows, f"games from {src}, polish passes {passes}")
    summarize(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def solver_row(inst, name, learned, args) -> dict:
    """The heuristic and CP-SAT on ``inst`` (with the learned methods'
    results): CP-SAT at ``--time-limit`` and, where that does not prove
    optimality, again at the default agent's wall time on this instance."""
    from memfit.msa.solvers import exact, heuristic
    t = time.perf_counter()
    h = heuristic.assign(inst)
    h_wall = time.perf_counter() - t
    th = _checked_time(inst, h, "heuristic")
    r = exact.solve(inst, time_limit=args.time_limit, num_workers=args.num_workers, hint=h)
    row = {"instance": name, "buffers": inst.num_buffers, "heuristic": th,
           "heuristic_wall": h_wall, "cpsat": _checked_time(inst, r.solution, "CP-SAT"),
           "bound": r.bound, "status": r.status, "cpsat_wall": r.wall_time}
    for n, v in learned.items():
        if n.endswith("_actions"):
            row[n] = v
        else:
            row[n], row[n + "_wall"] = v
    if r.status != "OPTIMAL" and AGENT in learned and not args.no_same_wall:
        same = learned[AGENT][1]
        r2 = exact.solve(inst, time_limit=same, num_workers=args.num_workers, hint=h)
        row["cpsat_same_wall"] = _checked_time(inst, r2.solution, "CP-SAT at the agent's wall")
        row["cpsat_same_wall_limit"] = same
    print(f"  {name}: CP-SAT {r.status} {r.wall_time:.1f}s", file=sys.stderr, flush=True)
    return row


def print_table(rows, what: str, title: str = "held-out instances") -> None:
    hdr = (f"{'instance':30} {'bufs':>4} {'heur ms':>10} "
           + " ".join(f"{lab:>14}" for _, lab in LEARNED)
           + f" {'CP-SAT':>7} {'bound':>6} {'status':>8} {'CP@agent':>8}"
           + f" | wall s: {'heur':>5} " + " ".join(f"{n[:8]:>8}" for n, _ in LEARNED)
           + f" {'cpsat':>5}")
    print(f"{title}; times relative to the heuristic's (validator); {what}")
    print(hdr)
    print("-" * len(hdr))
    for row in rows:
        th = row["heuristic"]
        same = (f"{row['cpsat_same_wall'] / th:8.4f}" if "cpsat_same_wall" in row
                else f"{'-':>8}")
        print(f"{row['instance'][:30]:30} {row['buffers']:4d} {th * 1e3:10.5f} "
              + " ".join(f"{row[n] / th:14.4f}" for n, _ in LEARNED)
              + f" {row['cpsat'] / th:7.4f} {row['bound'] / th:6.3f} {row['status']:>8} {same}"
              + f" | {'':8}{row['heuristic_wall']:5.2f} "
              + " ".join(f"{row[n + '_wall']:8.2f}" for n, _ in LEARNED)
              + f" {row['cpsat_wall']:5.1f}")
    print("-" * len(hdr))


def summarize(rows) -> None:
    names = {n for n, _ in LEARNED}
    labels = dict(LEARNED)
    rel = {n: [r[n] / r["heuristic"] for r in rows] for n, _ in LEARNED + (("cpsat", ""),)}
    print("geomean time / heuristic: " + ", ".join(
        f"{lab or 'CP-SAT'} {_geo(rel[n]):.4f}" for n, lab in LEARNED + (("cpsat", ""),)))
    print("geomean wall s: heuristic " + f"{_geo([r['heuristic_wall'] for r in rows]):.2f}, "
          + ", ".join(f"{lab} {_geo([r[n + '_wall'] for r in rows]):.2f}" for n, lab in LEARNED)
          + f", CP-SAT {_geo([r['cpsat_wall'] for r in rows]):.2f}")
    n = len(rows)
    for m in ("raw", "best", "bestpol", "default"):
        if m in names:
            worse = [r["instance"] for r in rows if r[m] > 1.01 * r["heuristic"]]
            print(f"{labels[m]} worse than the heuristic by > 1%: {len(worse)}/{n} {worse}")
    for m in ("raw",):
        if m in names:
            fb = _geo([min(r[m], r["heuristic"]) / r["heuristic"] for r in rows])
            print(f"(separately: {labels[m]} with a fallback to the heuristic's solution where "
                  f"that is faster: geomean {fb:.4f})")
    for a, u in (("raw", "uniform"), ("best", "unibest"), ("bestpol", "unibestpol"),
                 ("bestpol", "raw"), ("default", "bestpol"), ("default", "uniform")):
        if a in names and u in names:
            print(f"{labels[a]} vs {labels[u]} (same simulations): geomean "
                  f"{_geo([r[a] / r[u] for r in rows]):.4f}, faster on "
                  f"{sum(r[a] < r[u] * (1 - 1e-9) for r in rows)}/{n}, slower on "
                  f"{sum(r[a] > r[u] * (1 + 1e-9) for r in rows)}/{n}")
    if "policy" in names:
        print(f"policy argmax faster than the heuristic on "
              f"{sum(r['policy'] < r['heuristic'] * (1 - 1e-9) for r in rows)}/{n}, "
              f"as fast on {sum(abs(r['policy'] / r['heuristic'] - 1) <= 1e-9 for r in rows)}/{n}")
    opt = [r for r in rows if r["status"] == "OPTIMAL"]
    if opt:
        for m in ("raw", "best", "bestpol", "default"):
            if m in names:
                within = sum(r[m] <= 1.02 * r["cpsat"] for r in opt)
                print(f"CP-SAT proved optimal on {len(opt)}/{n}; {labels[m]} within 2% of the "
                      f"optimum on {within}/{len(opt)} (geomean / optimum "
                      f"{_geo([r[m] / r['cpsat'] for r in opt]):.4f}); missed: "
                      f"{[r['instance'] for r in opt if r[m] > 1.02 * r['cpsat']]}")
    same = [r for r in rows if "cpsat_same_wall" in r]
    if same and AGENT in names:
        print(f"CP-SAT not optimal in its limit on {len(same)}/{n}: there, {labels[AGENT]} vs "
              f"CP-SAT at the agent's wall time: geomean "
              f"{_geo([r[AGENT] / r['cpsat_same_wall'] for r in same]):.4f}, agent faster on "
              f"{sum(r[AGENT] < r['cpsat_same_wall'] * (1 - 1e-9) for r in same)}/{len(same)}, "
              f"slower on {sum(r[AGENT] > r['cpsat_same_wall'] * (1 + 1e-9) for r in same)}"
              f"/{len(same)}; vs CP-SAT at its limit: geomean "
              f"{_geo([r[AGENT] / r['cpsat'] for r in same]):.4f}")


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__, ("--big", "--fresh")))
