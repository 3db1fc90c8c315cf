"""The game: jit/vmap, legality, and the validator's time reproduced by play."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memfit.msa.core import game
from memfit.msa.core.validator import validate
from memfit.msa.io.synthetic import instance_suite, random_instance
from memfit.msa.io.tiny import tiny_instance
from memfit.msa.solvers import heuristic

SUITE = instance_suite()

_step = jax.jit(game.step)
_legal = jax.jit(game.legal_actions)
_init = jax.jit(game.init)


def _random_play(spec, seed, p_slow=0.2):
    rng = np.random.default_rng(seed)
    s = _init(spec.arrays)
    total = 0.0
    while not bool(s.done):
        legal = np.flatnonzero(np.asarray(_legal(s)))
        assert legal[0] == 0                        # slow is always legal
        a = 0 if rng.random() < p_slow else int(rng.choice(legal))
        s, r, _ = _step(s, jnp.int32(a))
        total += float(r)
    return s, total


@pytest.mark.parametrize("inst", SUITE, ids=[i.program for i in SUITE])
def test_random_play_matches_validator(inst):
    spec = game.encode(inst)
    for seed in range(2):
        s, total = _random_play(spec, seed)
        v = validate(inst, spec.solution(s))
        assert v.valid, v.summary()                 # legal moves give valid solutions
        assert float(s.time) == pytest.approx(v.estimated_time, rel=2e-5)
        # rewards sum to the time saved vs all-slow
        assert total == pytest.approx(v.all_slow_time - v.estimated_time,
                                      rel=1e-3, abs=2e-5 * v.all_slow_time)


def test_terminal_state_is_absorbing():
    spec = game.encode(tiny_instance())
    s, _ = _random_play(spec, 0)
    assert bool(s.done)
    mask = np.asarray(game.legal_actions(s))
    assert mask[0] and not mask[1:].any()
    s2, r, d = _step(s, jnp.int32(1))
    assert bool(d) and float(r) == 0.0
    assert (np.asarray(s2.choice) == np.asarray(s.choice)).all()


def test_illegal_action_plays_slow():
    inst = tiny_instance(capacity=100)               # only b0, b3, b4 can ever fit
    spec = game.encode(inst)
    s = game.init(spec.arrays)
    while not bool(s.done):
        mask = np.asarray(_legal(s))
        illegal = np.flatnonzero(~mask)
        a = int(illegal[0]) if len(illegal) else 0
        s, _, _ = _step(s, jnp.int32(a))
    assert (np.asarray(s.choice) == 0).all()


def test_replaying_the_heuristic_offload_solution():
    for inst in [i for i in SUITE if i.mode == "offload"][:3]:
        spec = game.encode(inst)
        sol = heuristic.assign(inst)
        by = sol.by_id()
        s = game.init(spec.arrays)
        for b in spec.order:
            a = spec.action_of(b, by[b], s)
            assert a is not None
            s, _, _ = _step(s, jnp.int32(a))
        assert float(s.time) == pytest.approx(validate(inst, sol).estimated_time, rel=2e-5)


def test_offload_mode_constant_plays_the_same_game():
    # game.offload_mode makes the mode a compile-time constant so that XLA
    # drops placement's offset search; every state along a random play of an
    # offload instance must have the same legal actions, and the game the
    # same times, as with the traced flag.
    @jax.jit
    def both(g, s, a):
        sc = s._replace(inst=game.offload_mode(g))
        return (game.legal_actions(s), game.legal_actions(sc),
                game.step(s, a)[0], game.step(sc, a)[0])

    for inst in [i for i in SUITE if i.mode == "offload"][:3]:
        g = game.encode(inst).arrays
        rng = np.random.default_rng(0)
        s = game.init(g)
        while not bool(s.done):
            legal, legal_c, _, _ = both(g, s, jnp.int32(0))
            assert (np.asarray(legal) == np.asarray(legal_c)).all()
            a = jnp.int32(rng.choice(np.flatnonzero(np.asarray(legal))))
            _, _, nxt, nxt_c = both(g, s, a)
            assert float(nxt.time) == float(nxt_c.time)
            assert (np.asarray(nxt.choice) == np.asarray(nxt_c.choice)).all()
            s = nxt


def test_vmap_over_games_and_instances():
    # two instances of the same buckets, batched: init, legal_actions and step under vmap+jit
    a = game.encode(random_instance(5, num_ops=20, mode="placement"))
    b = game.encode(random_instance(6, num_ops=30, mode="placement"))
    assert jax.tree.map(jnp.shape, a.arrays) == jax.tree.map(jnp.shape, b.arrays)
    arrays = jax.tree.map(lambda x, y: jnp.stack([x, y]), a.arrays, b.arrays)
    s = jax.jit(jax.vmap(game.init))(arrays)
    vstep = jax.jit(jax.vmap(game.step))
    vlegal = jax.jit(jax.vmap(game.legal_actions))
    key = jax.random.PRNGKey(0)
    totals = np.zeros(2)
    for _ in range(max(a.inst.num_buffers, b.inst.num_buffers) + 2):
        key, sub = jax.random.split(key)
        mask = vlegal(s)
        logits = jnp.where(mask, 0.0, -jnp.inf)
        act = jax.random.categorical(sub, logits)
        s, r, d = vstep(s, act)
        totals += np.asarray(r)
    assert np.asarray(d).all()
    for i, spec in enumerate((a, b)):
        si = jax.tree.map(lambda x: x[i], s)
        v = validate(spec.inst, spec.solution(si))
        assert v.valid, v.summary()
        assert float(si.time) == pytest.approx(v.estimated_time, rel=2e-5)


def test_many_games_of_one_instance_in_a_batch():
    spec = game.encode(random_instance(9, num_ops=16, mode="offload"))
    n = 8
    s = jax.vmap(lambda _: game.init(spec.arrays))(jnp.arange(n))
    vstep = jax.jit(jax.vmap(game.step))
    act = jnp.arange(n) % 3                         # slow, keep, first split (if legal)
    for _ in range(spec.inst.num_buffers):
        s, r, d = vstep(s, act)
    assert np.asarray(d).all()
    times = np.asarray(s.time)
    assert times[0] == pytest.approx(validate(spec.inst, spec.solution(
        jax.tree.map(lambda x: x[0], s))).all_slow_time, rel=1e-5)


def test_mctx_search_plays_the_game():
    """Gumbel MuZero search over the real game (game.step is the model) with
    a uniform prior and a zero leaf value: the agent's search without its
    network's prior (agent.play_batch with AgentConfig(uniform=True))."""
    pytest.importorskip("mctx")
    from memfit.msa.learned import agent
    inst = tiny_instance(capacity=400)
    (sol,), _ = agent.play_instances([inst], agent.AgentConfig(uniform=True, simulations=8))
    assert sol.method == "mcts-uniform"
    v = validate(inst, sol)
    assert v.valid, v.summary()
    assert v.estimated_time < v.all_slow_time
