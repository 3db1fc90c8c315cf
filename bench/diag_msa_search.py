"""Why does the search play worse than its own prior? Variants of the learned
player on the manifest's TRAINING instances (never the held-out ones: the
search's settings are chosen here).

    .venv/bin/python bench/diag_msa_search.py [--simulations 16] [--checkpoint PATH]
        [--programs attention,knn,...] [--variants policy,zero,network,rollout]
        [--value-scale 0.1] [--hint-root] [--no-value-quality]

Prints, per variant, the geometric mean of the validator's time over the
heuristic's, how many instances are > 1% worse than the heuristic, and wall
time; plus how well the value head predicts the savings still to come along
the policy's own games (the value target's convention).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

# variant name -> (simulations or None for the run's, uniform prior, value mode)
VARIANTS = {"policy": (0, False, "network"), "network": (None, False, "network"),
            "zero": (None, False, "zero"), "rollout": (None, False, "rollout"),
            "uniform-zero": (None, True, "zero"), "uniform-rollout": (None, True, "rollout")}


def value_quality(params, batch):
    """Correlation and RMSE of the value head vs the true remaining savings
    (fraction of T0) along the argmax policy's games."""
    import jax
    import numpy as np
    from memfit.msa.learned import network, play
    final, traj, _, _ = play.play_batch(params, batch.arrays, batch.static, jax.random.PRNGKey(0),
                                  record=True)
    target = np.asarray(play.value_targets(traj, final.time, batch.static.scale))
    active = np.asarray(traj.active)
    preds = []
    for m in range(active.shape[0]):
        st = jax.tree.map(lambda x: x[m], traj)
        states = play.game.State(inst=batch.arrays, step=st.step, choice=st.choice,
                                 offset=st.offset, live=st.live, time=st.time,
                                 done=~st.active)
        _, v, _ = jax.vmap(network.apply, (None, 0, 0))(params, batch.static, states)
        preds.append(np.asarray(v))
    pred = np.stack(preds)[active]
    tgt = target[active]
    return float(np.corrcoef(pred, tgt)[0, 1]), float(np.sqrt(((pred - tgt) ** 2).mean())), \
        float(tgt.std())


def main(argv=None) -> int:
    from train_msa_agent import load_manifest
    from memfit.msa import game, heuristic
    from memfit.msa.learned import agent
    from memfit.msa.validator import validate
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=16)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--programs", default="attention,gp_solve,knn,lstm_scan,mlp_train_step")
    ap.add_argument("--value-scale", type=float, default=0.1)
    ap.add_argument("--no-value-quality", action="store_true")
    ap.add_argument("--hint-root", action="store_true")
    ap.add_argument("--variants", default="policy,network,zero,rollout,uniform-zero")
    args = ap.parse_args(argv)
    progs = set(args.programs.split(","))
    insts = [i for i in load_manifest("train") if i.program in progs]
    params = agent.load_params(args.checkpoint)
    heur = [validate(i, heuristic.assign(i)).estimated_time for i in insts]
    groups: dict = {}
    for k, inst in enumerate(insts):
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]), []).append(k)
    batches = [(idx, agent.encode_batch([insts[k] for k in idx])) for idx in groups.values()]
    for name in args.variants.split(","):
        sims, uniform, vmode = VARIANTS[name]
        sims = args.simulations if sims is None else sims
        rel, wall = [0.0] * len(insts), 0.0
        for idx, batch in batches:
            t = time.perf_counter()
            sols, _ = agent.play_batch(batch, simulations=sims, uniform=uniform, params=params,
                                       value_mode=vmode, value_scale=args.value_scale,
                                       hint_root=args.hint_root and not uniform)
            wall += time.perf_counter() - t
            for k, sol in zip(idx, sols):
                v = validate(insts[k], sol)
                assert v.valid, v.summary()
                rel[k] = v.estimated_time / heur[k]
        geo = math.exp(sum(map(math.log, rel)) / len(rel))
        worse = sum(r > 1.01 for r in rel)
        print(f"{name:16} sims {sims:3d}: geomean / heuristic {geo:.4f}, worse > 1% on "
              f"{worse}/{len(rel)}, max {max(rel):.3f}, wall {wall:.0f}s", flush=True)
        print("    worse: " + ", ".join(f"{insts[k].program}-{insts[k].mode}-{insts[k].capacity}"
                                        f" {r:.3f}" for k, r in enumerate(rel) if r > 1.01))
    for idx, batch in ([] if args.no_value_quality else batches):
        c, rmse, sd = value_quality(params, batch)
        print(f"value head on {len(idx)} instances of bucket {batch.arrays.order.shape[1]}: "
              f"corr {c:.3f}, rmse {rmse:.4f} (target sd {sd:.4f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
