"""Why does the learned search play worse than the heuristic on one instance?

Plays the learned MCTS (the agent's defaults) on INSTANCE, then walks its
game: at every move where it left the heuristic's plan, prints the exact
one-step lookahead of both moves (the move's reward plus the heuristic's
rollout from the next state, as a fraction of T0) and the search's improved
policy weight of each. A move whose lookahead is below the heuristic move's
is one the search chose on averaged (not exact) values.

    .venv/bin/python bench/diag_msa_worst.py data/msa/instances/gru_train-offload-75.json
        [--simulations 16] [--no-fortify]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")


def main(argv=None) -> int:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from memfit.msa import game
    from memfit.msa.instance import Instance
    from memfit.msa.learned import agent, play
    from memfit.msa.heuristic import assign as heuristic
    from memfit.msa.validator import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instance")
    ap.add_argument("--simulations", type=int, default=agent.DEFAULT_SIMULATIONS)
    ap.add_argument("--no-fortify", action="store_true")
    args = ap.parse_args(argv)
    inst = Instance.load(args.instance)
    batch = agent.encode_batch([inst])
    net = agent.load_params()
    final, traj, _, _ = play.play_batch(
        net, batch.arrays, batch.static, jax.random.PRNGKey(0),
        num_simulations=args.simulations, gumbel_scale=0.0, record=True,
        value_mode=agent.default_value_mode(batch, False), value_scale=agent.DEFAULT_VALUE_SCALE,
        hint_root=agent.DEFAULT_HINT_ROOT, fortified=not args.no_fortify)
    spec = batch.specs[0]
    sol = spec.solution(play.unstack(final, 0)._replace(inst=spec.arrays))
    h = validate(inst, heuristic(inst)).estimated_time
    t = validate(inst, sol).estimated_time
    print(f"{inst.program}: learned MCTS {t:.6g}s, heuristic {h:.6g}s, ratio {t / h:.4f}")
    sf = play.unstack(batch.static, 0)
    g = spec.arrays
    step = jax.jit(game.step)
    roll = jax.jit(play.rollout_value)
    hint = np.asarray(play.hint_plans(sf))
    choice = np.asarray(final.choice[0])
    scale = float(sf.scale)
    K = game.NUM_OFFSETS
    n_div = 0
    for m in range(inst.num_buffers):
        b = spec.order[m]
        if choice[b] == hint[b]:
            continue
        st = jax.tree.map(lambda x: x[m, 0], traj)
        s = game.State(inst=g, step=st.step, choice=st.choice, offset=st.offset, live=st.live,
                       time=st.time, done=jnp.bool_(False))
        pol = np.asarray(st.policy)

        def look(a):
            nxt, r, _ = step(s, jnp.int32(a))
            return float(r) / scale + float(roll(sf, nxt))
        ah = 0 if hint[b] == 0 else 1 + (hint[b] - 1) * K
        ac = 0 if choice[b] == 0 else 1 + (choice[b] - 1) * K
        n_div += 1
        print(f"move {m:3d} buffer {b:3d}: played plan {choice[b]} (lookahead {look(ac):+.5f}, "
              f"policy {pol[ac]:.3f}) vs heuristic plan {hint[b]} (lookahead {look(ah):+.5f}, "
              f"policy {pol[ah]:.3f})")
    print(f"{n_div} moves off the heuristic's plans")
    return 0


if __name__ == "__main__":
    sys.exit(main())
