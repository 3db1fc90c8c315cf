"""Where does the default agent end above CP-SAT's proven optimum? (validation/training only)

For every validation instance (bench/diag_msa_prior.py's set: random jax
programs with seeds outside training's range and synthetic instances outside
training's ids; or, with --set train, the manifest's training instances;
never the held-out ones) up to --max-buffers buffers:

1. CP-SAT at --time-limit (hinted with the heuristic), cached with its status
   and solution under bench/out/msa_optgap/ so that reruns compare against
   the same optimum;
2. the agent's default play (agent.play_batch with its defaults: search,
   policy seed, max_kept, polish), or the columns of --methods.

Prints time / heuristic of each, time / CP-SAT where CP-SAT proved
optimality, the instances more than 2% above the optimum, the fraction
within 2%, geomeans and the CPU seconds of each column.

    nice -n 19 .venv/bin/python bench/diag_msa_optgap.py [--set validation|train]
        [--time-limit 60] [--num-workers 2] [--methods default] [--json out.json]

Method columns: ``default`` (the agent's search and polish; its repack on
placement instances, agent.DEFAULT_REPACK, is the ``repack=1`` option), or ``default:polish=P;
sims=N;mc=K;completions=own+heuristic+upgrade`` overriding play_batch's
arguments; ``then=own+heuristic+upgrade+reserved``: after the polish, as
many passes again with these completions; ``pairs=K`` (``rounds=R;chunk=C;kick=own+...``):
then the pair stage (agent.pair_polish) with at most K kicks a round (-1: all), with
``pairmax=G`` only on instances of at most G buffers (0: none; ``pairmaxoff=G``: offload
ones' own gate; ``second=1``: kicks completed by their best second change, ``second=2``: that and then
the kick pass; each
instance's pair-stage CPU seconds, warm, printed beside it in brackets); ``repack=1``:
then msa.repack (plan changes with offsets from the exact packer; placement instances only;
``orderevals=E``: a change the relayouts cannot place gets up to E first-fit orders,
repack's ``order_evals``); ``relax=1``: then the offload relaxation (agent.relaxation_plans,
agent.relaxed: placement instances played again in offload mode, laid out, repacked);
``relax=2``: the same with the column's own plans polished in offload mode instead
(agent.relaxation_polish_plans: no second search; ``rxpairs=1``: with the pair stage on
every instance, ``rxpairs=0`` on none, default: its own gate, agent.RELAX_PAIR_MAX_BUFFERS;
``rxsecond=0|1|2``: its kicks' completion as ``second=``, default agent.RELAX_PAIR_BEST_SECOND);
``ls=1``: last, msa.localsearch from the column's solution (agent.local_searched, its pair
moves and placement compaction as agent.LOCAL_SEARCH_PAIRS and LOCAL_SEARCH_COMPACT say; sets
16-17 were run before compaction), ``ls=2``: also from the heuristic's, the faster kept;
``ils=R``: last, R rounds of msa.localsearch.iterate (agent.iterated; ``kmax=K``: kicks of
2 to K buffers, default agent.ITERATE_KICK; ``lay=L``: then, in placement mode, L layout
rounds, localsearch.iterate's ``layout_rounds``: 0 unless given; ``ils=200;kmax=10`` is the
default's stage and ``ils=200;kmax=10;lay=200`` criterion X's, not in the default).
Columns with the same settings but polish's share the search: it is played once (polish=0)
and each column polishes that game; columns that differ only in ``pairs`` or ``repack``
also share the polish. A column's CPU seconds are its whole cost (the shared search and
polish counted in each column).
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
CACHE = ROOT / "bench/out/msa_optgap"
#: second= / rxsecond=: a kick's completion (agent.pair_polish's best_second)
SECOND = {0: False, 1: True, 2: "both"}


def cpsat(name: str, inst, time_limit: float, workers: int) -> dict:
    """CP-SAT's result on ``inst`` (cached per name and time limit)."""
    from memfit.msa import exact
    from memfit.msa.solution import Solution
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{name}-{time_limit:g}s.json"
    if path.exists():
        d = json.loads(path.read_text())
        d["solution"] = Solution.from_dict(d["solution"])
        return d
    c0 = time.process_time()
    r = exact.solve(inst, time_limit=time_limit, num_workers=workers)
    d = {"status": r.status, "time": r.verdict.estimated_time, "bound": r.bound,
         "wall": r.wall_time, "cpu": time.process_time() - c0,
         "solution": r.solution.to_dict()}
    path.write_text(json.dumps(d))
    print(f"  CP-SAT {name}: {r.status} {r.wall_time:.1f} s", file=sys.stderr, flush=True)
    d["solution"] = r.solution
    return d


def big_offload(n: int, start: int) -> list:
    """``[(name, Instance)]``: ``n`` synthetic offload instances with ids
    from ``start``, 70-190 ops each (the 256-move bucket, where the agent's
    default did not polish before 2026-12-06)."""
    from memfit.msa.synthetic import random_instance
    out = []
    for i in range(n):
        k = start + i
        inst = random_instance(k, num_ops=70 + (i * 37) % 121, num_args=2 + i % 6,
                               mode="offload", capacity_fraction=0.2 + 0.4 * ((i * 5) % 9) / 8)
        out.append((f"synthetic-big-{k}-offload", inst))
    return out


def heuristic_ref(inst) -> dict:
    """The heuristic's solution in CP-SAT's place (``--no-cpsat``)."""
    from memfit.msa.heuristic import assign
    from memfit.msa.validator import validate
    sol = assign(inst)
    return {"status": "SKIPPED", "time": validate(inst, sol).estimated_time, "solution": sol}


def _games_cache(insts, idx, pkey) -> Path:
    """Where a batch's polished games are cached: keyed by the instances,
    the column's settings and the source of the game, the search and the
    polish, read when the key is made, before the polish (so a code change
    starts afresh). The search and polish are deterministic, so a rerun
    that adds columns (the pair stage, repack) plays the search again but
    not the polish; the cached CPU seconds are the first run's."""
    import hashlib
    src = ROOT / "python/memfit/msa"
    h = hashlib.sha256(repr((sorted(insts[k][0] for k in idx), pkey)).encode())
    for f in ("game.py", "plans.py", "learned/play.py", "learned/agent.py",
              "learned/features.py", "learned/network.py", "learned/agent.npz"):
        h.update((src / f).read_bytes())
    CACHE.mkdir(parents=True, exist_ok=True)
    return CACHE / f"games-{h.hexdigest()[:16]}.npy"


def pair_stage_timed(batch, actions, only, rounds: int, pair_args: dict):
    """agent.pair_polish on the rows ``only`` picks, one instance at a time,
    each timed (CPU seconds, warm: each compile, per mode since the stage
    compiles per mode, is paid first by a call with no round, and their sum
    is reported as ``"compile"``). Returns (final states, actions, {row:
    CPU seconds, "compile": CPU seconds})."""
    import jax
    import jax.numpy as jnp
    from memfit.msa.learned import agent, play
    cpu, finals, rows, compiled = {"compile": 0.0}, [], [], set()
    for i in range(actions.shape[0]):
        sub, a = agent.batch_row(batch, i), actions[i:i + 1]
        if not only[i]:
            finals.append(play.replay_batch(sub.arrays, a))
            rows.append(a)
            continue
        if sub.specs[0].inst.mode not in compiled:
            compiled.add(sub.specs[0].inst.mode)
            c0 = time.process_time()
            jax.block_until_ready(agent.pair_polish(sub, a, rounds=0, **pair_args)[1])
            cpu["compile"] += time.process_time() - c0
        c0 = time.process_time()
        final, a = agent.pair_polish(sub, a, rounds=rounds, **pair_args)
        jax.block_until_ready(a)
        cpu[i] = time.process_time() - c0
        finals.append(final)
        rows.append(a)
    return (jax.tree.map(lambda *xs: jnp.concatenate(xs), *finals), jnp.concatenate(rows), cpu)


def diagnose(spec, sol, t_opt: float, games: dict) -> dict:
    """Why a game misses the optimum: CP-SAT's solution replayed through the
    game (its plans at the game's candidate offsets, imitate.replay), that
    replay's time / the optimum (> 1: the game's action space cannot play
    CP-SAT's solution as is), and per agent game the moves (buffer: agent's
    action -> replay's action) where the two differ."""
    import numpy as np
    from memfit.msa import game
    from memfit.msa.learned import imitate
    rows, t_game = imitate.replay(spec, sol)
    opt_acts = np.asarray(rows["action"])
    K = game.NUM_OFFSETS
    plan = lambda a: 0 if a == 0 else 1 + (int(a) - 1) // K
    out = {"replay_over_opt": t_game / t_opt}
    for m, a in games.items():
        a = np.asarray(a)[:len(opt_acts)]
        diff = [(int(spec.order[k]), int(a[k]), int(opt_acts[k])) for k in range(len(opt_acts))
                if a[k] != opt_acts[k]]
        out[m] = {"moves_differ": len(diff),
                  "plans_differ": sum(plan(x) != plan(y) for _, x, y in diff),
                  "first": diff[:8]}
    return out


def parse(text: str):
    name, _, rest = text.partition(":")
    opts = dict(kv.split("=") for kv in rest.split(";") if kv) if rest else {}
    kw = {}
    for k, v in opts.items():
        key = {"sims": "simulations", "mc": "max_considered"}.get(k, k)
        kw[key] = (v if key in ("root_rule", "value_mode") else tuple(v.split("+"))
                   if key in ("completions", "then", "kick") else int(v))
    return name, kw


def main(argv=None) -> int:
    from diag_msa_prior import manifest_train, validation_instances
    from memfit.msa import game
    from memfit.msa.heuristic import assign as heuristic
    import numpy as np
    from memfit.msa.learned import agent, play
    from memfit.msa.validator import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("validation", "train"), default="validation")
    ap.add_argument("--seeds", default="1000-1011")
    ap.add_argument("--synthetic", type=int, default=12)
    ap.add_argument("--synthetic-start", type=int, default=70_000,
                    help="first synthetic id (fresh test set: --seeds 1012-1023 --synthetic-start 70012)")
    ap.add_argument("--max-buffers", type=int, default=64)
    ap.add_argument("--big-offload", type=int, default=0,
                    help="N synthetic offload instances of 70-190 ops (about 75-195 buffers: "
                         "the 256-move bucket) instead of the validation set")
    ap.add_argument("--big-offload-start", type=int, default=71_000, help="their first id")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--num-workers", type=int, default=2)
    ap.add_argument("--methods", default="default")
    ap.add_argument("--only", default=None, help="comma-separated name substrings")
    ap.add_argument("--cpsat-only", action="store_true")
    ap.add_argument("--no-cpsat", action="store_true",
                    help="no CP-SAT: the heuristic stands in its column (costs and gains "
                         "over the heuristic only; no optimum)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--dump", default=None,
                    help="a folder: each column's solutions written there as NAME--COLUMN.json")
    ap.add_argument("--diagnose", action="store_true",
                    help="for every miss: CP-SAT's solution replayed through the game, and "
                         "the moves where the agent's game and that replay differ")
    args = ap.parse_args(argv)
    lo, _, hi = args.seeds.partition("-")
    insts = (big_offload(args.big_offload, args.big_offload_start) if args.big_offload else
             validation_instances(range(int(lo), int(hi or lo) + 1), args.synthetic,
                                  args.max_buffers, args.synthetic_start)
             if args.set == "validation" else manifest_train(args.max_buffers))
    if args.only:
        keys = args.only.split(",")
        insts = [(n, i) for n, i in insts if any(k in n for k in keys)]
    ref = ({n: heuristic_ref(i) for n, i in insts} if args.no_cpsat else
           {n: cpsat(n, i, args.time_limit, args.num_workers) for n, i in insts})
    if args.cpsat_only:
        print(f"{sum(r['status'] == 'OPTIMAL' for r in ref.values())}/{len(ref)} proven optimal")
        return 0
    methods = [m for m in args.methods.split(",") if m]
    groups: dict = {}
    for k, (_, inst) in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]),
                          []).append(k)
    rows: dict = {}
    cpu = {m: 0.0 for m in methods}
    search_cpu: dict = {}
    for idx in groups.values():
        batch = agent.encode_batch([insts[k][1] for k in idx])
        cols, acts, searched, polished, pair_cpu = {}, {}, {}, {}, {}
        for m in methods:
            _, kw = parse(m)
            own = None if "polish" in kw else agent.polish_rows(batch)   # the default's rows
            passes = kw.pop("polish", agent.default_polish(batch))
            comps = kw.pop("completions", None)
            then = kw.pop("then", None)
            pairs = kw.pop("pairs", 0)
            rounds = kw.pop("rounds", agent.DEFAULT_PAIR_ROUNDS)
            chunk = kw.pop("chunk", agent.DEFAULT_PAIR_CHUNK)
            kick = kw.pop("kick", None)
            pairmax = kw.pop("pairmax", None)
            pairmax_off = kw.pop("pairmaxoff", pairmax)
            best_second = SECOND[kw.pop("second", 0)]
            rp = kw.pop("repack", 0)
            rx = kw.pop("relax", 0)
            rxpairs = kw.pop("rxpairs", None)     # relax=2: the relaxation's pair stage (1 all, 0 none)
            rxsecond = kw.pop("rxsecond", None)   # relax=2: its kicks' completion (as second=)
            order_evals = kw.pop("orderevals", 0)     # repack: order_layout after the relayouts
            ls = kw.pop("ls", 0)      # then msa.localsearch (agent.local_searched): 1 own game, 2 also the heuristic's
            ils = kw.pop("ils", 0)    # then msa.localsearch.iterate (agent.iterated): its rounds
            kmax = kw.pop("kmax", None)   # ... its largest kick
            lay = kw.pop("lay", 0)        # ... then its layout rounds (placement)
            kw.pop("relaxpairs", None)     # (set 7's log: the relaxed play has no pair stage now)
            key = tuple(sorted(kw.items()))
            if key not in searched:
                c0 = time.process_time()
                sols, _, a = agent.play_batch(batch, return_actions=True, polish=0, **kw)
                searched[key] = (sols, a)
                search_cpu[key] = time.process_time() - c0
                print(f"  search {dict(key)}: {len(idx)} instances, {search_cpu[key]:.0f} s CPU",
                      file=sys.stderr, flush=True)
            pkey = (key, passes, comps, then) + ((tuple(own),) if own is not None
                                                  and not all(own) else ())
            cached = _games_cache(insts, idx, pkey)
            if pkey not in polished and cached.exists() and passes > 0:
                a = np.load(cached)
                sols = agent._solutions(batch, play.replay_batch(batch.arrays, a), "learned-polish")
                polished[pkey] = (sols, a, json.loads(cached.with_suffix(".json").read_text()))
                print(f"  {m}: polished games from {cached.name}", file=sys.stderr, flush=True)
            if pkey not in polished:
                c1 = time.process_time()
                if passes > 0:
                    sols, _, a = agent.polish(batch, searched[key][1], passes, comps, pairs=0,
                                              only=own)
                    if then:      # more passes with other completions, from that game
                        sols, _, a = agent.polish(batch, a, passes, then, pairs=0, only=own)
                else:
                    sols, a = searched[key]
                polished[pkey] = (sols, a, time.process_time() - c1)
                if passes > 0:
                    np.save(cached, np.asarray(a))
                    cached.with_suffix(".json").write_text(json.dumps(polished[pkey][2]))
                print(f"  {m}: polish {polished[pkey][2]:.0f} s CPU", file=sys.stderr, flush=True)
            cols[m], acts[m], pcpu = polished[pkey]
            cpu[m] += search_cpu[key] + pcpu
            if pairs:
                c2 = time.process_time()
                gate = lambda s: pairmax_off if s.inst.mode == "offload" else pairmax  # noqa: E731
                only = [gate(s) is None or s.inst.num_buffers <= gate(s) for s in batch.specs]
                pair_args = dict(max_kicks=None if pairs < 0 else pairs, passes=max(passes, 1),
                                 completions=then or comps, chunk=chunk, kick_completions=kick,
                                 best_second=best_second)
                final, acts[m], pair_cpu[m] = pair_stage_timed(batch, acts[m], only, rounds,
                                                               pair_args)
                cols[m] = agent._solutions(batch, final, "learned-polish")
                cpu[m] += time.process_time() - c2
                print(f"  {m}: pair stage {time.process_time() - c2:.0f} s CPU on "
                      f"{sum(only)} instances (compile {pair_cpu[m].get('compile', 0):.0f} s)",
                      file=sys.stderr, flush=True)
            if rp:
                from memfit.msa.repack import repack
                c3 = time.process_time()
                cols[m] = [repack(s.inst, sol, order_evals=order_evals)[0]
                           if own is None or own[i] else sol
                           for i, (s, sol) in enumerate(zip(batch.specs, cols[m]))]
                cpu[m] += time.process_time() - c3
            if rx:
                c4 = time.process_time()
                plans = (agent.relaxation_plans(batch, only=own, polish=max(passes, 1), **kw)
                         if rx == 1 else agent.relaxation_polish_plans(
                             batch, cols[m], max(passes, 1),
                             None if rxpairs is None else bool(rxpairs),
                             None if rxsecond is None else SECOND[rxsecond],
                             only=own))
                cols[m] = agent.relaxed(batch, cols[m], plans, repack=bool(rp))
                cpu[m] += time.process_time() - c4
                print(f"  {m}: relaxation {time.process_time() - c4:.0f} s CPU",
                      file=sys.stderr, flush=True)
            if ls:
                c5 = time.process_time()
                cols[m] = agent.local_searched(batch, cols[m], [True] * len(idx),
                                               from_heuristic=ls == 2)
                cpu[m] += time.process_time() - c5
                print(f"  {m}: local search {time.process_time() - c5:.0f} s CPU",
                      file=sys.stderr, flush=True)
            if ils:
                c6 = time.process_time()
                kick = None if kmax is None else (2, kmax)
                cols[m] = agent.iterated(batch, cols[m], [True] * len(idx), ils, kick,
                                         layout_rounds=lay)
                cpu[m] += time.process_time() - c6
                print(f"  {m}: iterated local search {time.process_time() - c6:.0f} s CPU",
                      file=sys.stderr, flush=True)
        for i, k in enumerate(idx):
            name, inst = insts[k]
            h = validate(inst, heuristic(inst)).estimated_time
            r = ref[name]
            row = {"buffers": inst.num_buffers, "status": r["status"], "cpsat": r["time"] / h}
            for m, sols in cols.items():
                v = validate(inst, sols[i])
                if not v.valid:
                    raise SystemExit(f"BUG: {m} on {name} is invalid: {v.summary()}")
                row[m] = v.estimated_time / h
                if args.dump:
                    Path(args.dump).mkdir(parents=True, exist_ok=True)
                    (Path(args.dump) / f"{name}--{m}.json").write_text(json.dumps(sols[i].to_dict()))
                if i in pair_cpu.get(m, {}):
                    row[f"{m} pair_cpu"] = pair_cpu[m][i]
            if args.diagnose and r["status"] == "OPTIMAL" and any(
                    row[m] > 1.02 * row["cpsat"] for m in methods):
                row["diagnosis"] = diagnose(batch.specs[i], r["solution"], r["time"],
                                            {m: acts[m][i] for m in methods})
                print(f"    {name}: {row['diagnosis']}", flush=True)
            rows[name] = row
            opt = "opt" if r["status"] == "OPTIMAL" else "   "
            print(f"{name:40} {inst.num_buffers:4d} {opt} cpsat {row['cpsat']:.4f} "
                  + " ".join(f"{m} {row[m]:.4f} ({row[m] / row['cpsat']:.3f})"
                             + (f" [pairs {row[m + ' pair_cpu']:.1f} s]"
                                if m + " pair_cpu" in row else "")
                             for m in methods), flush=True)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    opt = {n: r for n, r in rows.items() if r["status"] == "OPTIMAL"}
    print(f"{len(rows)} {args.set} instances, CP-SAT ({args.time_limit:g} s) proved optimal "
          f"on {len(opt)}; geomean time / heuristic: cpsat {geo([r['cpsat'] for r in rows.values()]):.4f}")
    for m in methods:
        miss = [n for n, r in opt.items() if r[m] > 1.02 * r["cpsat"]]
        print(f"  {m:30} {geo([r[m] for r in rows.values()]):.4f}  within 2% of the optimum "
              f"on {len(opt) - len(miss)}/{len(opt)}; {cpu[m]:.0f} s CPU; misses: "
              + ", ".join(f"{n} {opt[n][m] / opt[n]['cpsat']:.3f}" for n in miss))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
