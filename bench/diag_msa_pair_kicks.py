"""Which kicks of the pair stage reach a faster game? (validation only; analysis for docs/msa.md)

For the validation instances named (bench/diag_msa_prior.py's set), the
default's game without the pair stage (search, then agent.polish with
pairs=False; cached in bench/out/msa_pair_kicks/NAME.npy), every single change
by plan (the plan at its fastest offset, completed like polish's) is a kick,
and each kick is completed by a polish pass with the kicked move frozen
(play.polish_pass(frozen=k)). Prints, per instance, the kicks whose
completion is faster than the game: rank by the kick's own time, move,
plan, the kick's time and the completed game's time (both / the game's).

    nice -n 19 .venv/bin/python bench/diag_msa_pair_kicks.py NAME,NAME own+heuristic+upgrade+reserved [out.json]
"""
import os, sys, json, numpy as np, time
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
sys.path.insert(0, "bench")
import diag_msa_optgap as D
from diag_msa_prior import validation_instances
from memfit.msa import game
from memfit.msa.learned import agent, play
import jax, jax.numpy as jnp
names = sys.argv[1].split(",")
comps = tuple(sys.argv[2].split("+"))
insts = [(n, i) for n, i in validation_instances(range(1000, 1012), 12, 64) if any(k in n for k in names)]
P, K = game.NUM_PLANS, game.NUM_OFFSETS
res = {}
for n, inst in insts:
    batch = agent.encode_batch([inst])
    cache = D.ROOT / "bench/out/msa_pair_kicks" / f"{n}.npy"
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        _, _, a = agent.play_batch(batch, return_actions=True, polish=0)
        np.save(cache, np.asarray(agent.polish(batch, a, pairs=False)[2]))
    acts = jnp.asarray(np.load(cache))
    ref = D.cpsat(n, inst, 60.0, 2)
    sf = play.unstack(batch.static, 0); g = play.unstack(batch.arrays, 0)
    t = float(game.estimated_time(g, play._replay(g, acts[0]).choice))
    N = int(g.n_buffers); M = acts.shape[1]
    c = time.process_time()
    @jax.jit
    def plan_changes(a):
        def body(carry):
            s, bt, ba = carry
            i = jnp.minimum(s.step, M - 1)
            ts, alts = play._try_move(sf, g, s, a, play.COMPLETIONS)
            cur = jnp.where(a[i] == 0, 0, 1 + (a[i] - 1) // K)
            tp = jnp.concatenate([ts[:1], ts[1:].reshape(P - 1, K).min(1)])
            jp = jnp.concatenate([jnp.zeros(1, jnp.int32), 1 + jnp.arange(P - 1) * K + ts[1:].reshape(P - 1, K).argmin(1)])
            tp = jnp.where(jnp.arange(P) == cur, jnp.inf, tp)
            return game.advance(s, a[i]), bt.at[i].set(tp), ba.at[i].set(alts[jp])
        init = (game.init(g), jnp.full((M, P), jnp.inf), jnp.zeros((M, P, M), a.dtype))
        return jax.lax.while_loop(lambda c: ~c[0].done, body, init)[1:]
    bt, ba = plan_changes(acts[0])
    bt = np.asarray(bt)[:N]; ba = np.asarray(ba)[:N]
    ks, ps = np.nonzero(np.isfinite(bt))
    @jax.jit
    def run(k, a0, t0):
        return jax.vmap(lambda k, a0, t0: play.polish_pass(sf, g, a0, t0, comps, frozen=k))(k, a0, t0)[1]
    t2 = np.asarray(run(jnp.asarray(ks), jnp.asarray(ba[ks, ps]), jnp.asarray(bt[ks, ps])))
    kt = bt[ks, ps] / t; ft = t2 / t
    o = np.argsort(kt)
    rows = [(int(r), int(ks[j]), int(ps[j]), round(float(kt[j]), 4), round(float(ft[j]), 4)) for r, j in enumerate(o)]
    res[n] = {"opt": ref["time"] / t, "rows": rows}
    print(n, "opt/t", round(ref["time"] / t, 4), "kicks", len(ks), "cpu", round(time.process_time() - c), "best", round(float(ft.min()), 4), flush=True)
    print("  improving (rank, move, plan, kick, final):", [r for r in rows if r[4] < 0.9999], flush=True)
    if len(sys.argv) > 3:
        json.dump(res, open(sys.argv[3], "w"))
