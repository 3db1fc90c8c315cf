"""The learned player: network shapes and masks, training, checkpoint, entry points."""
import functools
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("mctx")
pytest.importorskip("optax")

from memfit.cli import main  # noqa: E402
from memfit.errors import MemfitError  # noqa: E402
from memfit.msa.core import game  # noqa: E402
from memfit.msa.core.instance import Instance  # noqa: E402
from memfit.msa.core.validator import validate  # noqa: E402
from memfit.msa.io.synthetic import random_instance  # noqa: E402
from memfit.msa.learned import agent  # noqa: E402
from memfit.msa.learned import checkpoint, network, play, train  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "msa"
_apply = jax.jit(network.apply)
_step = jax.jit(game.step)
_legal_played = jax.jit(jax.vmap(play.legal_actions_played))
#: One search compile for the tests that inspect a search tree (4
#: simulations, the agent's rollout value, value scale and hint root).
_search_tree = jax.jit(functools.partial(
    play.search_moves, num_simulations=4, gumbel_scale=0.0, value_mode="rollout",
    value_scale=agent.DEFAULT_CONFIG.value_scale, hint_root=True, return_tree=True))
C = agent.AgentConfig
#: The polish without the pair stage.
NO_PAIRS = C(polish_pairs=False)


def _agent_search(simulations: int = 4) -> dict:
    """play.play_batch's options as agent.play_batch passes them by default
    (a search with the rollout value, root rule max_kept): the tests that
    call play.play_batch directly share the agent's compile."""
    cfg = agent.DEFAULT_CONFIG
    return dict(num_simulations=simulations, uniform=False, gumbel_scale=0.0,
                value_mode="rollout", value_scale=cfg.value_scale, hint_root=cfg.hint_root,
                best=True, root_rule=cfg.root_rule, max_considered=cfg.max_considered)


def _manifest_instances(max_buffers: int = 256):
    """The manifest's instances up to ``max_buffers`` (the big programs are
    benched, bench/bench_msa_learned.py --big: a game of 1,000 moves)."""
    man = json.loads((DATA / "manifest.json").read_text())
    big = {n for n, p in man["programs"].items() if p["buffers"] > max_buffers}
    return [Instance.load(DATA / f) for f in man["train"] + man["heldout"]
            if Path(f).name.rsplit("-", 2)[0] not in big]


@pytest.fixture(scope="module")
def params():
    return agent.load_params()


@pytest.mark.parametrize("num_ops,mode", [(20, "placement"), (90, "offload")])
def test_network_shapes_and_mask(params, num_ops, mode):
    inst = random_instance(3, num_ops=num_ops, num_args=4, mode=mode)
    spec, sf = play.encode_padded(inst, 16)
    s = game.init(spec.arrays)
    logits, value, legal = _apply(params, sf, s)
    assert logits.shape == (spec.num_actions,) and value.shape == ()
    assert np.isfinite(float(value))
    assert (np.asarray(legal) == np.asarray(game.legal_actions(s))).all()
    lg = np.asarray(logits)
    assert (lg[~np.asarray(legal)] <= network.NEG / 2).all()      # illegal: masked
    assert np.isfinite(lg[np.asarray(legal)]).all()
    assert (lg[np.asarray(legal)] > network.NEG / 2).all()


def test_same_instance_in_two_buckets_gives_the_same_policy(params):
    """Padding is masked: a bigger bucket changes nothing."""
    inst = random_instance(5, num_ops=20, num_args=3, mode="placement")
    small, sf_small = play.encode_padded(inst, 16)
    spec = play.pad_access(game.encode(inst, buffer_buckets=(256,), op_buckets=(256,)), 16)
    from memfit.msa.learned import features
    sf_big = features.static_features(spec)
    a, va, _ = _apply(params, sf_small, game.init(small.arrays))
    b, vb, _ = _apply(params, sf_big, game.init(spec.arrays))
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)
    assert float(va) == pytest.approx(float(vb), rel=1e-4, abs=1e-4)


def test_prior_depends_on_the_state(params):
    inst = random_instance(7, num_ops=24, num_args=4, mode="placement")
    spec, sf = play.encode_padded(inst, 16)
    s0 = game.init(spec.arrays)
    s1, _, _ = _step(s0, jnp.int32(0))
    s1b, _, _ = _step(s0, jnp.argmax(_apply(params, sf, s0)[0]))
    p = [np.asarray(jax.nn.softmax(_apply(params, sf, s)[0])) for s in (s0, s1, s1b)]
    assert np.abs(p[0] - p[1]).max() > 1e-3
    # Same buffer next, different history: the prior still differs.
    assert np.abs(p[1] - p[2]).max() > 1e-4


def test_training_steps_lower_the_loss():
    insts = [random_instance(s, num_ops=12, num_args=3, mode=m)
             for s in range(2) for m in ("placement", "offload")]
    classes = train.group_by_class([play.encode_padded(i, 16) for i in insts])
    tr = train.Trainer(classes, train.Config(seed=1, simulations=4, minibatch=32))
    cd = classes[0]
    assert len(classes) == 1
    assert tr.self_play(cd, games=4) > 0
    before = tr.fixed_loss(cd)
    tr.learn(cd, 30)
    after = tr.fixed_loss(cd)
    assert after < 0.9 * before, (before, after)


def test_rollout_value_is_the_heuristic_plans_return():
    """The search's rollout leaf value equals playing each remaining buffer's
    hinted plan (lowest offset) with the game's own step, from any state;
    zero at the end of the game."""
    inst = random_instance(11, num_ops=20, num_args=4, mode="placement")
    spec, sf = play.encode_padded(inst, 16)
    hint = np.asarray(play.hint_plans(sf))
    assert (hint[:inst.num_buffers] > 0).any()
    s = game.init(spec.arrays)
    s, _, _ = _step(s, jnp.int32(0))            # a state off the hint's path
    t_from = float(s.time)
    v = float(jax.jit(play.rollout_value)(sf, s))
    end = s
    for b in spec.order[1:]:
        p = int(hint[b])
        end, _, _ = _step(end, jnp.int32(0 if p == 0 else 1 + (p - 1) * game.NUM_OFFSETS))
    assert bool(end.done)
    assert v == pytest.approx((t_from - float(end.time)) / float(sf.scale), rel=1e-5, abs=1e-7)
    assert v > 0
    assert float(jax.jit(play.rollout_value)(sf, end)) == 0.0


@pytest.mark.parametrize("seed,mode", [(3, "offload"), (4, "placement"), (5, "offload")])
def test_isolated_times_match_the_games_cost_model(seed, mode):
    """The per-(buffer, plan) feature's fast prefix-sum form equals the
    game's event simulation (one scan per pair), overlap and not."""
    from memfit.msa.learned import features as F
    inst = random_instance(seed, num_ops=24, num_args=4, mode=mode,
                           device="cpu" if seed == 5 else None)
    g = game.encode(inst).arrays
    valid = np.asarray(g.plan_valid)
    fast, ref = F.isolated_times(g), F.isolated_times_scan(g, chunk=64)
    assert (np.asarray(valid).sum(1)[:inst.num_buffers] > 1).any()
    np.testing.assert_allclose(fast[valid], ref[valid], rtol=2e-5)


def test_hint_root_puts_the_heuristic_move_on_top(params):
    inst = random_instance(11, num_ops=20, num_args=4, mode="offload")
    spec, sf = play.encode_padded(inst, 16)
    s = game.init(spec.arrays)
    logits, _, legal = _apply(params, sf, s)
    a = int(play.hint_action(sf, s))
    assert bool(legal[a])
    out = np.asarray(play._promote_hint(sf, s, logits, legal))
    lg = np.asarray(logits)
    assert out[a] == lg[np.asarray(legal)].max() >= lg[a]
    others = np.arange(len(lg)) != a
    np.testing.assert_array_equal(out[others], lg[others])


def test_expert_replay_reproduces_the_heuristic_offload():
    """Offload mode has no offsets: the heuristic's solution replays exactly,
    and the value targets run from the time saved down to 0."""
    from memfit.msa.learned import imitate
    from memfit.msa.solvers import heuristic
    inst = Instance.load(DATA / "instances" / "sgpr-offload-50.json")
    spec, sf = play.encode_padded(inst, 16)
    h = heuristic.assign(inst)
    _, replayed = imitate.replay(spec, h)
    assert replayed == pytest.approx(validate(inst, h).estimated_time, rel=1e-5)
    rows = imitate.expert_rows(spec, float(sf.scale), [h], 0, spec.num_actions)
    assert rows["policy"].shape == (inst.num_buffers, spec.num_actions)
    assert (rows["policy"].sum(1) == 1).all() and rows["policy"][:, 1:].sum() > 0
    scale = float(sf.scale)
    assert rows["value"][0] == pytest.approx((scale - replayed) / scale, rel=1e-4)


def test_imitation_steps_fit_the_expert():
    """Supervised steps on expert rows alone (no self-play yet) lower the
    cross-entropy to the expert's moves."""
    from memfit.msa.learned import imitate
    insts = [random_instance(s, num_ops=12, num_args=3, mode="offload") for s in range(4)]
    classes = train.group_by_class([play.encode_padded(i, 16) for i in insts])
    cd = classes[0]
    for i, spec in enumerate(cd.specs):
        sols = imitate.expert_solutions(spec.inst)
        cd.add_expert(imitate.expert_rows(spec, float(cd.static.scale[i]), sols, i,
                                          spec.num_actions))
    tr = train.Trainer(classes, train.Config(seed=2, minibatch=32))
    rows = {k: jnp.asarray(cd.expert[k]) for k in train.ROW_KEYS}
    before = float(train.jitted_loss(tr.net, cd.arrays, cd.static, rows)[1][0])
    tr.learn(cd, 40)
    after = float(train.jitted_loss(tr.net, cd.arrays, cd.static, rows)[1][0])
    assert after < 0.7 * before, (before, after)


def test_self_imitation_keeps_only_argmax_games_faster_than_the_best_known(params):
    """Big classes learn from the policy's own argmax games (train.Trainer.
    self_imitate): a game replaces an instance's expert rows only where it
    beats the best game known for it, as one-hot targets of its own moves
    and its own returns (the slower game's rows go: conflicting targets);
    the same network's games do not join twice."""
    from memfit.msa.learned import imitate
    from memfit.msa.solvers import heuristic
    insts = [random_instance(s, num_ops=12, num_args=3, mode="offload") for s in range(3)]
    classes = train.group_by_class([play.encode_padded(i, 16) for i in insts])
    cd = classes[0]
    assert len(cd.specs) == 3
    for i in (0, 1):     # earlier expert rows: the heuristic's games
        cd.add_expert(imitate.expert_rows(cd.specs[i], float(cd.static.scale[i]),
                                          [heuristic.assign(cd.specs[i].inst)], i,
                                          cd.specs[i].num_actions))
    tr = train.Trainer(classes, train.Config(seed=0), net=params)
    cd.best_time = np.array([np.inf, 0.0, np.inf])       # instance 1: nothing beats 0
    added = tr.self_imitate(cd)
    n0, n1, n2 = (cd.specs[k].inst.num_buffers for k in (0, 1, 2))
    assert added == n0 + n2 and cd.expert_rows == n0 + n1 + n2
    assert sorted(set(cd.expert["inst"].tolist())) == [0, 1, 2]
    final, _, acts, _ = play.play_batch(params, cd.arrays, cd.static, jax.random.PRNGKey(0))
    rows0 = cd.expert["inst"] == 0
    np.testing.assert_array_equal(cd.expert["policy"][rows0].argmax(1), np.asarray(acts)[0, :n0])
    assert cd.best_time[0] == pytest.approx(float(final.time[0]), rel=1e-5)
    scale = float(cd.static.scale[0])
    assert cd.expert["value"][rows0][0] == pytest.approx((scale - cd.best_time[0]) / scale, rel=1e-4)
    assert tr.self_imitate(cd) == 0


def test_local_search_imitation_replaces_only_slower_expert_games(params):
    """The big checkpoint's expert iteration (train.Trainer.
    local_search_imitate): the policy's argmax game improved by
    msa.solvers.localsearch replaces an instance's expert rows only where its replay
    is faster than the best game known (here faster than the argmax game
    itself), and a second round with the same network adds nothing."""
    insts = [random_instance(s, num_ops=14, num_args=3, mode="offload") for s in (42, 43)]
    cd = train.group_by_class([play.encode_padded(i, 16) for i in insts])[0]
    assert len(cd.specs) == 2
    tr = train.Trainer([cd], train.Config(seed=0), net=params)
    cd.best_time = np.array([np.inf, 0.0])              # instance 1: nothing beats 0
    assert tr.local_search_imitate(cd) == 1
    assert sorted(set(cd.expert["inst"].tolist())) == [0]
    final, _, _, _ = play.play_batch(params, cd.arrays, cd.static, jax.random.PRNGKey(0))
    assert cd.best_time[0] < float(final.time[0]) * 0.95      # 0.873 of it on this instance
    assert cd.best_time[1] == 0.0
    assert tr.local_search_imitate(cd) == 0


def test_expert_solutions_with_local_search_are_never_slower():
    """imitate.expert_solutions(local_search=True) adds the faster expert
    solution improved by msa.solvers.localsearch (the big checkpoint's experts):
    valid, and at most the others' time."""
    from memfit.msa.learned import imitate
    for mode in ("offload", "placement"):
        inst = random_instance(7, num_ops=24, num_args=4, mode=mode)
        sols = imitate.expert_solutions(inst, local_search=True)
        assert len(sols) == 2
        times = [validate(inst, s) for s in sols]
        assert all(v.valid for v in times)
        assert times[1].estimated_time <= times[0].estimated_time


def test_big_checkpoint_plays_above_its_bucket(tmp_path, monkeypatch, params):
    """agent.default_params: with big_checkpoint, batches above
    big_checkpoint_above_bucket moves are played with checkpoint.BIG_PATH's
    parameters, smaller ones with the small checkpoint's; without it, the
    small one everywhere. agent.play_batch plays what default_params picks."""
    other = jax.tree.map(lambda x: x * 0.5 + 0.01, params)
    path = tmp_path / "big.npz"
    checkpoint.save(path, other)
    monkeypatch.setattr(checkpoint, "BIG_PATH", path)
    on = C(big_checkpoint=True, big_checkpoint_above_bucket=64)
    argmax = on.replace(simulations=0, local_search=False)
    small = agent.encode_batch([random_instance(3, num_ops=10, num_args=2, mode="offload")], 16)
    big = agent.encode_batch([random_instance(4, num_ops=80, num_args=3, mode="offload")], 16)
    assert small.arrays.order.shape[1] <= 64 < big.arrays.order.shape[1]
    same = lambda a, b: all(np.array_equal(np.asarray(x), np.asarray(y))  # noqa: E731
                            for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
    assert same(agent.default_params(small, on), params)
    assert same(agent.default_params(big, on), other)
    (got,), _ = agent.play_batch(big, argmax)
    (want,), _ = agent.play_batch(big, argmax, params=agent.load_params(path))
    (was,), _ = agent.play_batch(big, argmax, params=params)
    assert got.to_dict() == want.to_dict()
    assert got.to_dict() != was.to_dict()          # the two networks play differently here
    assert same(agent.default_params(big, on.replace(big_checkpoint=False)), params)


def test_learned_assignments_validate_on_every_in_repo_instance(params):
    """The policy's argmax (batched per shape class) on every manifest instance."""
    groups: dict = {}
    every = _manifest_instances()
    for inst in every:
        spec = game.encode(inst)
        groups.setdefault((spec.arrays.order.shape[0], spec.arrays.op_valid.shape[0]),
                          []).append(inst)
    n = 0
    for group in groups.values():
        sols, _ = agent.play_instances(group, C(simulations=0), params=params)
        for inst, sol in zip(group, sols):
            v = validate(inst, sol)
            assert v.valid, (inst.program, v.summary())
            n += 1
    assert n == len(every) >= 54


def _synthetic_game(seed):
    """(instance, its batch, the heuristic's time, solution -> its time) of
    a 30-op synthetic offload instance."""
    inst = random_instance(seed, num_ops=30, num_args=4, mode="offload")
    batch = agent.encode_batch([inst], 16)
    heur = float(jax.jit(play.rollout_actions)(
        play.unstack(batch.static, 0), game.init(play.unstack(batch.arrays, 0)),
        jnp.zeros(batch.arrays.order.shape[1], jnp.int32))[0])
    return inst, batch, heur, lambda sol: validate(inst, sol).estimated_time


def test_default_is_never_slower_than_its_raw_search_or_the_heuristic(params):
    """The agent returns the fastest complete game it saw, so it is never
    slower than its own raw search (nor the heuristic's game)."""
    inst, batch, heur, t = _synthetic_game(1)
    (best,), _, (raw,) = agent.play_batch(batch, C(simulations=4, polish=0), params=params,
                                          return_raw=True)
    assert t(best) <= min(t(raw), heur) * (1 + 1e-6)


def _best_end_per_root_action(tree, scale):
    """{root action: the least end time of a complete game evaluated through
    it} for one search tree (the max backup, computed here independently of
    play.tree_best_game: each visited node's game, walked up to the root's
    child it descends from)."""
    visits = np.asarray(tree.node_visits)
    parents = np.asarray(tree.parents)
    acts = np.asarray(tree.action_from_parent)
    end = np.asarray(tree.embeddings.time - tree.raw_values * scale)
    best = {}
    for n in np.flatnonzero(visits > 0):
        if n == tree.ROOT_INDEX:
            continue
        a = n
        while parents[a] != tree.ROOT_INDEX:
            a = parents[a]
        best[int(acts[a])] = min(best.get(int(acts[a]), np.inf), float(end[n]))
    return best


def test_root_rule_plays_the_best_game_found_not_the_best_mean(params):
    """The raw search's root rule (AgentConfig.root_rule, "max_kept"): a
    move is worth the fastest complete game found through it, and the best
    game of the earlier searches is kept. On this synthetic instance mctx's
    own rule (the *mean* return of the simulations through a move) chooses
    differently at some move: there, the mean rule's move has no evaluated
    game as fast as the one through the max rule's move; the mean rule's
    whole game ends slower. The default play is the max_kept game, never
    slower than the heuristic's, and it is the play's best game."""
    inst, batch, heur, t = _synthetic_game(9)
    assert agent.DEFAULT_CONFIG.root_rule == "max_kept"
    games = {}
    for rule in ("mean", "max"):
        (sol,), _, acts = agent.play_batch(batch, C(simulations=4, polish=0, best=False,
                                                    root_rule=rule),
                                           params=params, return_actions=True)
        games[rule] = (t(sol), np.asarray(acts[0]))
    # the agent's default play (before polish): its raw game and the best game kept
    (kept,), _, (raw,) = agent.play_batch(batch, C(simulations=4, polish=0), params=params,
                                          return_raw=True)
    raw_t = t(raw)
    assert raw_t <= heur * (1 + 1e-6)
    assert raw_t == pytest.approx(t(kept), rel=1e-6)       # nothing better left aside
    assert games["max"][0] <= games["mean"][0] * (1 - 1e-3)
    assert raw_t <= games["mean"][0] * (1 - 1e-3)
    # the first move where the rules part: one search, both choices
    k = int(np.flatnonzero(games["mean"][1] != games["max"][1])[0])
    s = game.init(play.unstack(batch.arrays, 0))
    for a in games["mean"][1][:k]:
        s, _, _ = _step(s, jnp.int32(a))
    states = jax.tree.map(lambda x: x[None], s)
    action, _, tree = _search_tree(params, batch.arrays, batch.static, states,
                                   jax.random.PRNGKey(0))
    assert int(action[0]) == games["mean"][1][k]                  # mctx's (mean) choice
    best = _best_end_per_root_action(jax.tree.map(lambda x: x[0], tree),
                                     float(batch.static.scale[0]))
    by_max = min(best, key=best.get)
    assert by_max == games["max"][1][k] != int(action[0])
    assert best[by_max] < best[int(action[0])] * (1 - 1e-6)


def test_best_game_of_a_search_tree_is_its_fastest_evaluated_game(params):
    """play.tree_best_game rebuilds a complete game from the search tree
    (the path to the best node, then the heuristic's rollout): replayed, it
    takes the least time any expanded node's leaf value promised, and never
    more than the root's own rollout (the heuristic's game)."""
    inst = random_instance(22, num_ops=20, num_args=4, mode="offload")
    batch = agent.encode_batch([inst], 16)
    states = jax.vmap(game.init)(batch.arrays)
    _, _, tree = _search_tree(params, batch.arrays, batch.static, states, jax.random.PRNGKey(0))
    M = batch.arrays.order.shape[1]
    sf, g, s0 = (play.unstack(x, 0) for x in (batch.static, batch.arrays, states))
    tr = jax.tree.map(lambda x: x[0], tree)
    t, acts = jax.jit(play.tree_best_game)(sf, g, s0, tr, jnp.zeros(M, jnp.int32))
    end = play.replay_batch(batch.arrays, acts[None])
    assert float(end.time[0]) == pytest.approx(float(t), rel=1e-5)
    promised = np.asarray(tr.embeddings.time - tr.raw_values * sf.scale)
    promised = promised[np.asarray(tr.node_visits) > 0]
    assert float(t) == pytest.approx(promised.min(), rel=1e-5)
    heur = float(jax.jit(play.rollout_actions)(sf, s0, jnp.zeros(M, jnp.int32))[0])
    assert float(t) <= heur * (1 + 1e-6)


def test_polish_improves_a_game_and_never_makes_it_slower():
    """play.polish_batch from the all-slow game reaches at least the
    heuristic's game (its first move's completion by the heuristic's rollout
    is that game); polishing again never makes a game slower; the polished
    games validate and the game's time is the validator's."""
    insts = [random_instance(s, num_ops=20, num_args=4, mode=m)
             for s, m in ((21, "offload"), (23, "placement"))]
    for inst in insts:
        batch = agent.encode_batch([inst], 16)
        M = batch.arrays.order.shape[1]
        sf, g = play.unstack(batch.static, 0), play.unstack(batch.arrays, 0)
        heur, heur_acts = jax.jit(play.rollout_actions)(sf, game.init(g), jnp.zeros(M, jnp.int32))
        slow = jnp.zeros((1, M), jnp.int32)
        (sol,), _, acts = agent.polish(batch, slow, NO_PAIRS, passes=2)
        v = validate(inst, sol)
        assert v.valid, v.summary()
        all_slow = float(game.init(g).time)
        assert v.estimated_time <= float(heur) * (1 + 1e-5) < all_slow
        end = play.replay_batch(batch.arrays, acts)
        assert float(end.time[0]) == pytest.approx(v.estimated_time, rel=1e-5)
        # polishing the polished game again never makes it slower
        (again,), _, _ = agent.polish(batch, acts, NO_PAIRS, passes=1)
        assert validate(inst, again).estimated_time <= v.estimated_time * (1 + 1e-6)
        # the default's second stage (AgentConfig.polish_then, with the
        # "reserved" completion) starts from the first stage's game
        (first,), _, _ = agent.polish(batch, slow, NO_PAIRS.replace(
            completions=play.DEFAULT_COMPLETIONS), passes=2)
        assert v.estimated_time <= validate(inst, first).estimated_time * (1 + 1e-6)
    # an offload instance is polished trying only offload mode's legal
    # actions (play.tried_actions, as agent._one_at_a_time calls it): the
    # same game as trying all 29 (both compiles are the loop's, same buckets;
    # play.pair_batch tries its kicks and completions through the same
    # play._try_move)
    batch = agent.encode_batch(insts[:1], 16)
    slow = jnp.zeros((1, batch.arrays.order.shape[1]), jnp.int32)
    games = [play.polish_batch(batch.arrays, batch.static, slow, jnp.int32(2),
                               completions=play.DEFAULT_COMPLETIONS, offload=off)[1]
             for off in (True, False)]
    np.testing.assert_array_equal(np.asarray(games[0]), np.asarray(games[1]))
    assert int(jnp.sum(games[0] != 0)) > 0          # a game with fast moves


def test_one_instance_at_a_time_keeps_each_instances_game():
    """agent._one_at_a_time (how polish and the pair stage run a batch):
    each instance's result is the batched call's for that instance, in the
    batch's order (here: replaying different games of different instances)."""
    insts = [random_instance(s, num_ops=12, num_args=3, mode=m)
             for s, m in ((3, "offload"), (4, "placement"), (5, "offload"))]
    batch = agent.encode_batch(insts, 16)
    M = batch.arrays.order.shape[1]
    acts = jnp.asarray(np.random.default_rng(0).integers(0, 6, (3, M)), jnp.int32)

    modes = []

    def replayed(arrays, static, a, offload=False):
        modes.append(offload)
        legal = _legal_played(arrays, a)
        return play.replay_batch(arrays, legal), legal

    want, want_a = replayed(batch.arrays, batch.static, acts)
    want_t = want.time
    modes.clear()
    got, got_a = agent._one_at_a_time(replayed, batch, acts)
    got_t = got.time
    np.testing.assert_array_equal(np.asarray(got_a), np.asarray(want_a))
    np.testing.assert_array_equal(np.asarray(got_t), np.asarray(want_t))
    assert len(set(np.asarray(got_t).tolist())) == 3    # three different games
    assert modes == [True, False, True]                 # each instance's own mode
    # ``per_instance``: each instance's own keyword arguments
    seen = []
    agent._one_at_a_time(lambda *a, offload=False, tag=None: (seen.append(tag),
                                                               replayed(*a, offload))[1],
                         batch, acts, per_instance=lambda spec: {"tag": spec.inst.mode})
    assert seen == ["offload", "placement", "offload"]
    # ``only``: the rows left out keep their games, replayed as they are
    modes.clear()
    got, got_a = agent._one_at_a_time(replayed, batch, want_a, only=[False, True, False])
    np.testing.assert_array_equal(np.asarray(got_a), np.asarray(want_a))
    np.testing.assert_allclose(np.asarray(got.time), np.asarray(want_t), rtol=1e-6)
    assert modes == [False]


def test_pair_stage_runs_where_the_size_gate_says():
    """agent.pair_stage_rows: polish_pairs True / False run the pair stage on
    every / no instance; the default (None) runs it on those of at most
    pair_max_buffers buffers of their mode (0: none)."""
    insts = [random_instance(s, num_ops=n, num_args=3, mode="offload")
             for s, n in ((3, 8), (4, 20))]
    batch = agent.encode_batch(insts, 16)
    small, large = (i.num_buffers for i in insts)
    assert small < large
    assert agent.pair_stage_rows(batch, C(polish_pairs=True)) == [True, True]
    assert agent.pair_stage_rows(batch, C(polish_pairs=False)) == [False, False]

    def gate(offload, placement):
        return C(pair_max_buffers=agent.PerMode(offload, placement))

    assert agent.pair_stage_rows(batch, gate(0, large)) == [False, False]     # both are offload
    assert agent.pair_stage_rows(batch, gate(small, 0)) == [True, False]
    assert agent.pair_stage_rows(batch, gate(small, 0).replace(polish_pairs=True)) == [True, True]


def test_default_polish_runs_where_its_bucket_gate_says():
    """agent.polish_rows: by default the agent polishes an instance when the
    batch's move bucket is within its mode's polish_max_bucket (offload up
    to the 256-move bucket, placement up to 64); after_search with those
    rows polishes, repacks and relaxes only them, the others' games kept."""
    big = agent.encode_batch([random_instance(s, num_ops=90, num_args=4, mode=m)
                              for s, m in ((31, "offload"), (32, "placement"))], 16)
    assert big.arrays.order.shape[1] == 256
    assert agent.polish_rows(big) == [True, False]
    assert agent.default_polish(big) == agent.DEFAULT_CONFIG.polish_passes
    # the rows are honoured: here only the offload instance of a 64-move batch
    cfg = C(polish_max_bucket=agent.PerMode(offload=64, placement=0), polish_pairs=False)
    insts = [random_instance(s, num_ops=20, num_args=4, mode=m)
             for s, m in ((21, "offload"), (23, "placement"))]
    batch = agent.encode_batch(insts, 16)
    rows = agent.polish_rows(batch, cfg)
    assert rows == [True, False]
    slow = jnp.zeros((2, batch.arrays.order.shape[1]), jnp.int32)
    searched = agent._solutions(batch, play.replay_batch(batch.arrays, slow), "test")
    sols, acts = agent.after_search(batch, searched, slow, agent.default_polish(batch, cfg),
                                    "test", cfg, only=rows)
    times = [validate(i, s).estimated_time for i, s in zip(insts, sols)]
    slow_times = [validate(i, s).estimated_time for i, s in zip(insts, searched)]
    assert times[0] < slow_times[0]                 # polished
    assert times[1] == pytest.approx(slow_times[1])  # neither polished, repacked nor relaxed
    assert int(jnp.sum(acts[1] != 0)) == 0
    assert agent.default_polish(batch, C(polish_max_bucket=agent.PerMode(0, 0))) == 0


def test_local_search_runs_where_the_game_is_not_polished():
    """agent.local_search_rows: by default msa.solvers.localsearch runs on the
    instances of local_search_modes in a batch above the 256-move bucket (the
    big programs, where the default plays the policy's argmax); after_search
    applies it to those rows only, as msa.solvers.localsearch.improve does alone
    (here without the heuristic's start), and ``local_search=False`` turns it
    off; ``local_search_from_heuristic`` keeps the faster of the game's and
    the heuristic's solution, each searched."""
    from memfit.msa.solvers import heuristic, localsearch
    big = agent.encode_batch([random_instance(s, num_ops=90, num_args=4, mode=m)
                              for s, m in ((31, "offload"), (32, "placement"))], 16)
    D = agent.DEFAULT_CONFIG
    assert agent.local_search_rows(big) == [False, False]      # searched there
    assert agent.local_search_rows(big, C(local_search=True)) == [True, True]
    assert agent.local_search_rows(big, C(local_search=False)) == [False, False]
    cfg = C(local_search_above_bucket=32, local_search_modes=("offload",),
            local_search_from_heuristic=False)
    insts = [random_instance(s, num_ops=20, num_args=4, mode=m)
             for s, m in ((21, "offload"), (23, "placement"))]
    batch = agent.encode_batch(insts, 16)
    assert agent.local_search_rows(batch, cfg) == [True, False]
    slow = jnp.zeros((2, batch.arrays.order.shape[1]), jnp.int32)
    searched = agent._solutions(batch, play.replay_batch(batch.arrays, slow), "test")
    slow_times = [validate(i, s).estimated_time for i, s in zip(insts, searched)]
    sols, _ = agent.after_search(batch, searched, slow, 0, "test", cfg)
    times = [validate(i, s).estimated_time for i, s in zip(insts, sols)]
    assert times[0] < slow_times[0]
    alone, _ = localsearch.improve(insts[0], searched[0], passes=D.local_search_passes,
                                   pairs=D.local_search_pairs,
                                   compact=D.local_search_compact)
    assert sols[0].to_dict() == alone.to_dict()
    assert times[1] == slow_times[1]
    sols, _ = agent.after_search(batch, searched, slow, 0, "test",
                                 cfg.replace(local_search=False))
    assert [validate(i, s).estimated_time for i, s in zip(insts, sols)] == slow_times
    # from_heuristic: the faster of the two starts searched (both modes), the
    # game's method kept
    both = agent.local_searched(batch, searched, [True, True],
                                cfg.replace(local_search_from_heuristic=True))
    for inst, sol, start in zip(insts, both, searched):
        want = min(validate(inst, localsearch.improve(inst, s, passes=D.local_search_passes,
                                   pairs=D.local_search_pairs,
                                   compact=D.local_search_compact)[0])
                   .estimated_time for s in (start, heuristic.assign(inst)))
        v = validate(inst, sol)
        assert v.valid and v.estimated_time == want and sol.method == "test"
    # placement: the layout compacted once no move pays (local_search_compact;
    # on this instance compaction reaches a faster solution)
    inst = random_instance(5, num_ops=30, num_args=4, mode="placement")
    one = agent.encode_batch([inst], 16)
    h = heuristic.assign(inst)
    (sol,) = agent.local_searched(one, [h], [True], cfg)
    plain, _ = localsearch.improve(inst, h, passes=D.local_search_passes,
                                   pairs=D.local_search_pairs)
    assert D.local_search_compact
    assert validate(inst, sol).estimated_time < validate(inst, plain).estimated_time


def test_iterated_search_runs_where_its_gate_says():
    """agent.iterate_rounds: iterate_rounds on games up to iterate_max_bucket
    moves, none above, an explicit count anywhere; after_search runs
    msa.solvers.localsearch.iterate last where the game is polished (or the count is
    given), on the rows ``only`` picks, as the search does alone, and the
    game's method is kept."""
    from memfit.msa.solvers import localsearch
    D = agent.DEFAULT_CONFIG
    cfg = C(iterate_rounds=7)
    big = agent.encode_batch([random_instance(31, num_ops=90, num_args=4, mode="offload")], 16)
    assert agent.iterate_rounds(big, cfg) == 0
    assert agent.iterate_rounds(big, cfg.replace(iterate=3)) == 3
    insts = [random_instance(s, num_ops=20, num_args=4, mode=m)
             for s, m in ((21, "offload"), (23, "placement"))]
    batch = agent.encode_batch(insts, 16)
    assert agent.iterate_rounds(batch, cfg) == 7
    assert agent.iterate_rounds(batch, cfg.replace(iterate=0)) == 0
    slow = jnp.zeros((2, batch.arrays.order.shape[1]), jnp.int32)
    searched = agent._solutions(batch, play.replay_batch(batch.arrays, slow), "test")
    # polish 0 and no count: no iterated search (the policy's own game stays)
    off = cfg.replace(local_search=False, relax=None, repack=False)
    sols, _ = agent.after_search(batch, searched, slow, 0, "test", off)
    assert [s.to_dict() for s in sols] == [s.to_dict() for s in searched]
    sols, _ = agent.after_search(batch, searched, slow, 0, "test", off.replace(iterate=5),
                                 only=[True, False])
    alone, _ = localsearch.iterate(insts[0], searched[0], rounds=5, kick=D.iterate_kick,
                                   passes=D.local_search_passes,
                                   pairs=D.local_search_pairs,
                                   compact=D.local_search_compact)
    assert sols[0].to_dict() == alone.to_dict() and sols[0].method == "test"
    assert validate(insts[0], sols[0]).estimated_time < validate(insts[0], searched[0]).estimated_time
    assert sols[1].to_dict() == searched[1].to_dict()


def test_pair_stage_finds_coordinated_changes_that_1opt_cannot(monkeypatch):
    """play.pair_batch (agent.pair_polish): on a game that no single change
    improves (another 1-opt pass with every completion finds nothing), a
    first change that costs time, completed by a polish pass with that move
    frozen, or by its best second change (``best_second``), reaches a faster
    game; the result validates and its time is the validator's. (The
    instance: a small synthetic one where this happens.)"""
    inst = random_instance(13, num_ops=20, num_args=4, mode="offload")
    batch = agent.encode_batch([inst], 16)
    M = batch.arrays.order.shape[1]
    (sol,), _, acts = agent.polish(batch, jnp.zeros((1, M), jnp.int32), NO_PAIRS, passes=2)
    t1 = validate(inst, sol).estimated_time
    (again,), _, _ = agent.polish(batch, acts, NO_PAIRS.replace(completions=play.COMPLETIONS),
                                  passes=1)
    assert validate(inst, again).estimated_time >= t1 * (1 - 1e-6)

    def faster_and_valid(final):
        (sol2,) = agent._solutions(batch, final, "learned-polish")
        v = validate(inst, sol2)
        assert v.valid, v.summary()
        assert v.estimated_time < t1 * (1 - 1e-3)
        assert float(final.time[0]) == pytest.approx(v.estimated_time, rel=1e-5)

    faster_and_valid(agent.pair_polish(batch, acts, rounds=1, best_second=False)[0])
    # kicks completed by their best second change find a faster game too
    exact, exact_acts = agent.pair_polish(batch, acts, rounds=1, best_second=True)
    faster_and_valid(exact)
    # "both": the exact 2-exchange, then the kick pass from its game (here
    # the pass finds nothing more, so the calls are checked), never slower
    calls, pair_batch = [], play.pair_batch

    def recorded(arrays, static, a, *args, **kw):
        calls.append((kw["best_second"], np.asarray(a)))
        return pair_batch(arrays, static, a, *args, **kw)

    monkeypatch.setattr(play, "pair_batch", recorded)
    both, _ = agent.pair_polish(batch, acts, rounds=1, best_second="both")
    assert [c[0] for c in calls] == [True, False]
    np.testing.assert_array_equal(calls[1][1], np.asarray(exact_acts))
    faster_and_valid(both)
    assert float(both.time[0]) <= float(exact.time[0])
    with pytest.raises(ValueError, match="best_second"):
        agent.pair_polish(batch, acts, rounds=1, best_second="all")


def test_reserved_upgrades_never_displace_the_games_own_later_moves():
    """polish's "reserved" completion (play.replay_suffix with reserve=True):
    after a move is made slow, the freed capacity goes only to slow buffers
    whose plan fits beside what the game's own later moves keep resident, so
    (offload mode: capacity per op, exact) every later non-slow move is
    played as in the game (an upgrade can still cost time through the copy
    queues: polish keeps the fastest of its completions)."""
    inst = random_instance(21, num_ops=20, num_args=4, mode="offload")
    batch = agent.encode_batch([inst], 16)
    M = batch.arrays.order.shape[1]
    sf, g = play.unstack(batch.static, 0), play.unstack(batch.arrays, 0)
    _, heur = jax.jit(play.rollout_actions)(sf, game.init(g), jnp.zeros(M, jnp.int32))
    suffix = jax.jit(play.replay_suffix, static_argnames=("reserve",))
    n = int(g.n_buffers)
    moves = [k for k in range(n) if int(heur[k]) != 0][:3]
    assert moves
    upgraded = 0
    for k in moves:
        s = game.init(g)
        for j in range(k):
            s = game.advance(s, heur[j])
        nxt = game.advance(s, jnp.int32(0))
        base = heur.at[k].set(0)
        _, acts = suffix(nxt, base, sf, reserve=True)
        for j in range(k + 1, n):
            if int(heur[j]) != 0:
                assert int(acts[j]) == int(heur[j]), (k, j)
            upgraded += int(heur[j]) == 0 and int(acts[j]) != 0
    assert upgraded > 0     # the freed capacity was used


def test_policy_seed_starts_the_kept_game_from_a_faster_game(params):
    """With seed_games (the agent's policy_seed passes the policy's argmax
    games), the root rule max_kept follows the seed from the first move, so
    the played game is never slower than it; without the seed the same
    short search ends slower (the seed here: the heuristic's game polished,
    faster than anything a 4-simulation search finds; "none" is a seed that
    never wins, so both plays share the agent's compile)."""
    inst = random_instance(21, num_ops=20, num_args=4, mode="offload")
    batch = agent.encode_batch([inst], 16)
    M = batch.arrays.order.shape[1]
    sf, g = play.unstack(batch.static, 0), play.unstack(batch.arrays, 0)
    heur, heur_acts = jax.jit(play.rollout_actions)(sf, game.init(g), jnp.zeros(M, jnp.int32))
    (sol,), _, seed_acts = agent.polish(batch, heur_acts[None], passes=2)
    seed_time = float(play.replay_batch(batch.arrays, seed_acts).time[0])
    assert seed_time < float(heur) * (1 - 1e-3)
    kw = _agent_search()
    ends = {}
    for name, seeds in (("none", (jnp.array([np.inf], jnp.float32), jnp.zeros_like(seed_acts))),
                        ("seed", (jnp.array([seed_time], jnp.float32), seed_acts))):
        final, _, played, kept = play.play_batch(params, batch.arrays, batch.static,
                                                 jax.random.PRNGKey(0), seed_games=seeds, **kw)
        ends[name] = float(play.replay_batch(batch.arrays, played).time[0])
        assert float(kept[0][0]) <= ends[name] * (1 + 1e-5)
    assert ends["seed"] <= seed_time * (1 + 1e-5) < ends["none"]
    with pytest.raises(ValueError, match="seed_games"):
        play.play_batch(params, batch.arrays, batch.static, jax.random.PRNGKey(0),
                        num_simulations=4, value_mode="rollout",
                        seed_games=(jnp.array([seed_time]), seed_acts))


def test_big_program_encodes_and_plays_one_move(params):
    """A 1,000-buffer program (transformer_deep): the features, the edge
    list and the network at the 1,024 bucket."""
    inst = Instance.load(DATA / "instances" / "transformer_deep-offload-50.json")
    assert inst.num_buffers >= 1000
    spec, sf = play.encode_padded(inst)
    assert spec.arrays.order.shape[0] == 1024
    n_acc = int((np.asarray(spec.arrays.acc) >= 0).sum())
    assert int((np.asarray(sf.edge_op) < spec.arrays.op_valid.shape[0]).sum()) == n_acc
    s = game.init(spec.arrays)
    logits, value, legal = _apply(params, sf, s)
    assert bool(legal[0]) and np.isfinite(float(value))
    assert np.isfinite(np.asarray(logits)[np.asarray(legal)]).all()
    assert agent.default_simulations(inst) == agent.DEFAULT_CONFIG.big_simulations


def test_search_assignment_validates(params):
    inst = Instance.load(DATA / "instances" / "sgpr-placement-25.json")
    sol = agent.assign(inst, simulations=4)
    v = validate(inst, sol)
    assert v.valid and sol.method == "learned"


def test_checkpoint_round_trip_and_mismatch(tmp_path, params):
    path = tmp_path / "a.npz"
    checkpoint.save(path, params, {"note": "test"})
    loaded, meta = checkpoint.load(path)
    assert meta["note"] == "test"
    for x, y in zip(jax.tree.leaves(loaded), jax.tree.leaves(params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    with np.load(path) as z:
        stored = {k: z[k] for k in z.files}
    meta = json.loads(bytes(stored.pop("__meta__")).decode())
    meta["signature"]["plan_static"] += 1
    bad = tmp_path / "bad.npz"
    np.savez(bad, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **stored)
    with pytest.raises(MemfitError, match="plan_static: checkpoint"):
        checkpoint.load(bad)
    with pytest.raises(MemfitError, match="no learned-agent checkpoint"):
        checkpoint.load(tmp_path / "missing.npz")


def _resave(src, dst, change):
    with np.load(src) as z:
        stored = {k: z[k] for k in z.files}
    meta = json.loads(bytes(stored.pop("__meta__")).decode())
    change(meta["signature"], stored)
    np.savez(dst, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **stored)


def test_checkpoint_signature_names_the_lifetime_means(tmp_path, params):
    """The first buffer round's lifetime means (network.static_life) are
    part of the signature: a static one round-trips with its static
    embedding; one whose signature says otherwise, or names a variant this
    code lacks, is refused; a signature without the field (the packaged
    checkpoints') is the dynamic variant."""
    static = network.with_static_life(params)
    path = tmp_path / "static.npz"
    checkpoint.save(path, static)
    loaded, meta = checkpoint.load(path)
    assert meta["signature"]["life"] == "static" and network.static_life(loaded)
    for x, y in zip(jax.tree.leaves(loaded), jax.tree.leaves(static)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    relabelled = tmp_path / "relabelled.npz"
    _resave(path, relabelled, lambda sig, _: sig.update(life="ops"))
    with pytest.raises(MemfitError, match="life_enc"):
        checkpoint.load(relabelled)
    unknown = tmp_path / "unknown.npz"
    _resave(path, unknown, lambda sig, _: sig.update(life="cheap"))
    with pytest.raises(MemfitError, match="life: checkpoint 'cheap'"):
        checkpoint.load(unknown)
    dynamic = tmp_path / "dynamic.npz"
    checkpoint.save(dynamic, params)
    old = tmp_path / "old.npz"
    _resave(dynamic, old, lambda sig, _: sig.pop("life"))
    assert not network.static_life(checkpoint.load(old)[0])
    def drop_static_embedding(sig, stored):
        stored.pop(next(k for k in stored if "life_enc" in k))

    missing = tmp_path / "missing_life.npz"
    _resave(path, missing, drop_static_embedding)
    with pytest.raises(MemfitError, match="missing or has the wrong shape"):
        checkpoint.load(missing)


def test_static_lifetime_means_change_the_logits(params):
    """The static variant's logits are not the dynamic one's: the first
    buffer round reads its static embedding's lifetime means."""
    inst = random_instance(5, num_ops=30, num_args=3, mode="offload")
    batch = agent.encode_batch([inst])
    sf, arrays = play.unstack(batch.static, 0), play.unstack(batch.arrays, 0)
    s = game.init(arrays)
    want, _, legal = network.apply(params, sf, s)
    static = network.with_static_life(params)
    got, _, legal2 = network.apply(static, sf, s)
    np.testing.assert_array_equal(np.asarray(legal), np.asarray(legal2))
    legal = np.asarray(legal)
    assert not np.allclose(np.asarray(got)[legal], np.asarray(want)[legal], atol=1e-6)


def test_packaged_checkpoint_was_trained():
    _, meta = checkpoint.load()
    assert meta["training"]["grad_steps"] > 0 and meta["training"]["instances"] > 0


def test_packaged_big_checkpoint_is_the_small_one_fine_tuned_on_big_programs():
    """agent_big.npz (played above the searched buckets: AgentConfig.big_checkpoint)
    was trained by ``memfit train-agent --big-checkpoint`` from the
    packaged small checkpoint, and its argmax on its big training instances
    was faster than the small one's."""
    import hashlib
    _, meta = checkpoint.load(checkpoint.BIG_PATH)
    t = meta["training"]
    assert t["big_checkpoint"] and agent.DEFAULT_CONFIG.big_checkpoint
    assert t["init"]["sha256"] == hashlib.sha256(checkpoint.DEFAULT_PATH.read_bytes()).hexdigest()
    scores = t["big_train_argmax_over_heuristic"]
    assert scores[t["kept"]] < scores["initial"]


def test_train_agent_writes_a_checkpoint_the_agent_plays(tmp_path):
    """``memfit train-agent`` (msa.learned.recipe) on a tiny manifest: the
    expert games, imitation and self-play steps run, and the checkpoint it
    writes records its recipe, loads and plays valid games."""
    data = tmp_path / "data"
    (data / "instances").mkdir(parents=True)
    names = {"train": [], "heldout": []}
    for seed, mode, split in ((1, "placement", "train"), (2, "offload", "train"),
                              (3, "offload", "heldout")):
        random_instance(seed, num_ops=12, num_args=3, mode=mode).save(
            data / "instances" / f"{seed}.json")
        names[split].append(f"instances/{seed}.json")
    (data / "manifest.json").write_text(json.dumps(names))
    out, log = tmp_path / "agent.npz", tmp_path / "log.json"
    assert main(["train-agent", "--data", str(data), "--programs", "0", "--synthetic", "2",
                 "--pretrain-steps", "3", "--iterations", "2", "--eval-every", "1",
                 "--simulations", "2", "--cpsat-seconds", "0", "--expert-cache", "",
                 "--search-expert-cache", "", "--plot", "", "--out", str(out),
                 "--log", str(log)]) == 0
    net, meta = checkpoint.load(out)
    t = meta["training"]
    assert t["recipe"]["pretrain_steps"] == 3 and t["recipe"]["value_mode"] == "rollout"
    assert t["iterations"] == 2 and t["instances"] == 4 and t["grad_steps"] > 3
    assert json.loads(log.read_text())["meta"]["training"] == t
    inst = random_instance(3, num_ops=12, num_args=3, mode="offload")
    assert validate(inst, agent.assign(inst, simulations=0, checkpoint=out)).valid


def test_too_large_instance_is_a_clear_error():
    big = type("Big", (), {"num_buffers": agent.MAX_BUFFERS + 1, "num_ops": 10,
                           "program": "big"})()
    with pytest.raises(MemfitError, match="largest game bucket.*--method heuristic --local-search"):
        agent.check_size(big)


@pytest.fixture
def jax_cache_restored():
    """Puts jax's persistent-cache settings back and makes jax decide again
    whether to use that cache (it decides once per process), so that the
    tests after these compile as before."""
    from jax._src import compilation_cache
    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")
    before = {n: getattr(jax.config, n) for n in names}
    yield
    for n, v in before.items():
        jax.config.update(n, v)
    compilation_cache.reset_cache()


def test_cli_assign_learned(tmp_path, capsys, monkeypatch, jax_cache_restored):
    ip = DATA / "instances" / "attention-offload-50.json"
    sp = tmp_path / "sol.json"
    monkeypatch.setenv("MEMFIT_JAX_CACHE", str(tmp_path / "jax-cache"))
    assert main(["assign", str(ip), "--method", "learned", "--simulations", "4",
                 "-o", str(sp)]) == 0
    assert json.loads(sp.read_text())["method"] == "learned"
    assert "learned: valid" in capsys.readouterr().err
    assert main(["score", str(ip), str(sp)]) == 0


def test_compilation_cache_directory(tmp_path, monkeypatch, jax_cache_restored):
    """memfit assign's persistent compile cache: the env's directory, off
    with MEMFIT_JAX_CACHE=0, and a directory the user set is kept."""
    jax.config.update("jax_compilation_cache_dir", None)
    monkeypatch.setenv("MEMFIT_JAX_CACHE", "0")
    assert agent.use_compilation_cache() is None
    assert not jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("MEMFIT_JAX_CACHE", str(tmp_path / "c"))
    assert agent.use_compilation_cache() == str(tmp_path / "c")
    assert (tmp_path / "c").is_dir()
    assert jax.config.jax_compilation_cache_dir == str(tmp_path / "c")
    monkeypatch.setenv("MEMFIT_JAX_CACHE", str(tmp_path / "other"))
    assert agent.use_compilation_cache() == str(tmp_path / "c")
