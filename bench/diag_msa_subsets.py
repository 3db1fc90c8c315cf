"""How many coordinated changes separate the agent's game from CP-SAT's optimum? (dev only)

For one validation instance (diag_msa_prior's set; never a held-out one): the
default's game (agent.play_batch) and CP-SAT's cached solution replayed
through the game (imitate.replay). Every subset of the moves where the two
differ is switched to CP-SAT's actions (the other moves kept, illegal ones
played slow) and timed; per subset size, the fastest such game and how many
are faster than the agent's. The smallest size with a faster game is the
smallest coordinated change toward the optimum that a local search over
games needs. Then the game with the first moves forced to CP-SAT's is polished
and sent through the pair stage ("both"), to see whether the miss is in the
root decisions.

    nice -n 5 .venv/bin/python bench/diag_msa_subsets.py random-rnn-1062-30-offload \
        --seed 1062   (synthetic instances: --seed 0 --synthetic-id 70097)
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None) -> int:
    import numpy as np
    import jax
    import jax.numpy as jnp
    import diag_msa_optgap as D
    from diag_msa_prior import validation_instances
    from memfit.msa import game
    from memfit.msa.learned import agent, imitate, play

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--synthetic-id", type=int, default=None)
    ap.add_argument("--max-differ", type=int, default=12, help="refuse more differing moves (2^n games)")
    args = ap.parse_args(argv)
    syn = args.synthetic_id
    insts = validation_instances(range(args.seed, args.seed + 1) if syn is None else [],
                                 1 if syn is not None else 0, 64, syn or 70_000)
    found = [(n, i) for n, i in insts if n == args.name]
    if not found:
        raise SystemExit(f"{args.name}: not among {[n for n, _ in insts]}")
    name, inst = found[0]
    batch = agent.encode_batch([inst])
    rows, _ = imitate.replay(batch.specs[0], D.cpsat(name, inst, 60.0, 2)["solution"])
    opt = np.asarray(rows["action"])
    _, _, a = agent.play_batch(batch, return_actions=True)
    a = np.asarray(a)[0]
    g = play.unstack(batch.arrays, 0)
    times = jax.jit(jax.vmap(lambda x: game.estimated_time(g, play._replay(g, x).choice)))
    n = int(g.n_buffers)
    full = np.concatenate([opt, a[len(opt):]])
    t0, t_opt = (float(x) for x in times(jnp.asarray(np.stack([a, full]))))
    diff = [k for k in range(n) if a[k] != opt[k]]
    print(f"{name}: agent / optimum {t0 / t_opt:.4f}; moves that differ: {diff}")
    if len(diff) > args.max_differ:
        raise SystemExit(f"{len(diff)} moves differ: more than --max-differ {args.max_differ}")
    subsets = [s for r in range(1, len(diff) + 1) for s in itertools.combinations(diff, r)]
    games = np.repeat(a[None], len(subsets), 0)
    for i, s in enumerate(subsets):
        games[i, list(s)] = opt[list(s)]
    rel = np.asarray(times(jnp.asarray(games))) / t_opt
    for r in range(1, len(diff) + 1):
        idx = [i for i, s in enumerate(subsets) if len(s) == r]
        j = min(idx, key=lambda i: rel[i])
        faster = sum(rel[i] < t0 / t_opt - 1e-6 for i in idx)
        print(f"  {r} moves switched: fastest {rel[j]:.4f} {subsets[j]}; faster than the agent's: "
              f"{faster} of {len(idx)}")
    for forced in [diff[:1], diff[:2], diff[:3]]:
        b = a.copy()
        b[forced] = opt[forced]
        _, _, p = agent.polish(batch, jnp.asarray(b)[None], pairs=False)
        _, q = agent.pair_polish(batch, p, best_second="both")
        rel_b, rel_p, rel_q = (float(x) / t_opt for x in times(jnp.asarray(
            np.stack([b, np.asarray(p)[0], np.asarray(q)[0]]))))
        print(f"  moves {forced} forced to CP-SAT's: {rel_b:.4f}, polished {rel_p:.4f}, "
              f"pair stage ('both') {rel_q:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
