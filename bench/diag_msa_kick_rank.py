"""Which kicks of the pair stage find the faster game, and where do they rank? (dev only)

For the named validation instances (diag_msa_prior's set; seeds/synthetic ids as
for diag_msa_optgap), the default's game (agent.play_batch, no pair stage above
its gate; cached in bench/out/msa_kick_rank/), every kick (play.plan_changes:
one move changed to another plan) completed by its best second change (as
play.pair_pass with best_second does), all of them, not stopping at the first
improving chunk. Prints, per instance, the number of kicks, and every kick whose
completed game is faster: its rank in the pair stage's order (kick time, least
slow first) and in the orders tried here, the move, the buffer's plans (old ->
new) and the second change's move and plan, whether the two buffers' lifetimes
overlap. JSON per instance with --json.

    nice -n 5 .venv/bin/python bench/diag_msa_kick_rank.py --seeds 1012-1095 \
        --synthetic 84 --synthetic-start 70012 --only NAME,NAME [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
CACHE = ROOT / "bench/out/msa_kick_rank"


def lifetimes(g, n):
    """Per buffer, the op span any of its plans is resident over (home or window)."""
    import numpy as np
    lo = np.where(np.asarray(g.plan_valid), np.minimum(np.asarray(g.home_lo), np.where(
        np.asarray(g.has_pf), np.asarray(g.win_s), 1 << 30)), 1 << 30).min(1)
    hi = np.where(np.asarray(g.plan_valid), np.maximum(np.asarray(g.home_hi), np.where(
        np.asarray(g.has_pf), np.asarray(g.win_hi), -1)), -1).max(1)
    return lo[:n], hi[:n]


def main(argv=None) -> int:
    import numpy as np
    import jax
    import jax.numpy as jnp
    from diag_msa_prior import validation_instances
    from memfit.msa import game
    from memfit.msa.learned import agent, play

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1012-1095")
    ap.add_argument("--synthetic", type=int, default=84)
    ap.add_argument("--synthetic-start", type=int, default=70_012)
    ap.add_argument("--only", required=True)
    ap.add_argument("--chunk", type=int, default=16)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    lo, _, hi = args.seeds.partition("-")
    keys = args.only.split(",")
    insts = [(n, i) for n, i in validation_instances(range(int(lo), int(hi or lo) + 1),
                                                     args.synthetic, 64, args.synthetic_start)
             if any(k == n or k in n for k in keys)]
    P, K = game.NUM_PLANS, game.NUM_OFFSETS
    kicks = agent._completions(play.PAIR_KICK_COMPLETIONS)
    out = {}
    for name, inst in insts:
        offload = inst.mode == "offload"
        batch = agent.encode_batch([inst])
        CACHE.mkdir(parents=True, exist_ok=True)
        cache = CACHE / f"{name}.npy"
        if not cache.exists():
            _, _, a = agent.play_batch(batch, return_actions=True, polish_pairs=False)
            np.save(cache, np.asarray(a))
        acts = jnp.asarray(np.load(cache))[0]
        sf, g = play.unstack(batch.static, 0), play.unstack(batch.arrays, 0)
        t0 = float(game.estimated_time(g, play._replay(g, acts).choice))
        N, M = int(g.n_buffers), acts.shape[0]
        c0 = time.process_time()
        bt, ba = jax.jit(lambda a: play.plan_changes(sf, g, a, play.COMPLETIONS, offload))(acts)
        flat_t, flat_a = np.asarray(bt).reshape(-1), np.asarray(ba).reshape(M * P, M)
        cand = np.flatnonzero(np.isfinite(flat_t))
        order = np.argsort(flat_t, kind="stable")
        rank = {int(j): r for r, j in enumerate(order[:len(cand)])}

        @jax.jit
        def second(ks, a0s, t0s):
            return jax.vmap(lambda k, a0, tk: play.best_second_change(
                sf, g, a0, k, tk, kicks, offload)[1:])(ks, a0s, t0s)

        t2, j2 = np.zeros(len(cand)), np.zeros(len(cand), int)
        for s in range(0, len(cand), args.chunk):
            idx = cand[s:s + args.chunk]
            pad = np.resize(idx, args.chunk)
            r = second(jnp.asarray(pad // P), jnp.asarray(flat_a[pad]), jnp.asarray(flat_t[pad]))
            t2[s:s + len(idx)] = np.asarray(r[0])[:len(idx)]
            j2[s:s + len(idx)] = np.asarray(r[1])[:len(idx)]
        cpu = time.process_time() - c0
        order_buf = np.asarray(g.order)
        blo, bhi = lifetimes(g, N)
        own_plan = lambda k: 0 if int(acts[k]) == 0 else 1 + (int(acts[k]) - 1) // K  # noqa: E731
        size = np.asarray(g.size_units)
        wins = []
        for c in np.flatnonzero(t2 < t0 * (1 - play.POLISH_MIN_GAIN)):
            j = int(cand[c]); k, p = divmod(j, P)
            b = int(order_buf[k])
            w = {"rank": rank[j], "move": k, "buffer": b, "size": int(size[b]),
                 "plan": [own_plan(k), p], "kick": float(flat_t[j] / t0), "t2": float(t2[c] / t0)}
            if j2[c] >= 0:
                k2, p2 = divmod(int(j2[c]), P)
                b2 = int(order_buf[k2])
                w["second"] = {"move": k2, "buffer": b2, "plan": [own_plan(k2), p2],
                               "size": int(size[b2]),
                               "overlap": bool(blo[b] <= bhi[b2] and blo[b2] <= bhi[b])}
            wins.append(w)
        wins.sort(key=lambda w: w["t2"])
        # how many second-change moves overlap each kick's buffer (the share a restricted scan would try)
        ov = [(np.sum((blo <= bhi[int(order_buf[k])]) & (blo[int(order_buf[k])] <= bhi)) / N)
              for k in range(N)]
        out[name] = {"buffers": N, "kicks": len(cand), "cpu": cpu, "best": float(t2.min() / t0),
                     "overlap_share": float(np.mean(ov)), "wins": wins}
        print(f"{name:36} {N:3d} buffers {len(cand):4d} kicks {cpu:6.1f} s CPU; best {t2.min() / t0:.4f};"
              f" {len(wins)} improving; mean overlap share {np.mean(ov):.2f}", flush=True)
        for w in wins[:12]:
            s = w.get("second", {})
            print(f"    rank {w['rank']:4d} move {w['move']:3d} buf {w['buffer']:3d} size {w['size']:5d} "
                  f"plan {w['plan'][0]}->{w['plan'][1]} kick {w['kick']:.4f} -> {w['t2']:.4f}"
                  + (f" | second move {s['move']:3d} buf {s['buffer']:3d} size {s['size']:5d} plan "
                     f"{s['plan'][0]}->{s['plan'][1]} overlap {int(s['overlap'])}" if s else ""),
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
