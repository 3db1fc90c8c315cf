"""The policy's incremental argmax game (msa/learned/argmax.py) against the
reference: network.apply on every state, the whole game played in
play.play_batch's jitted loop."""
from pathlib import Path

import jax
import numpy as np
import pytest

pytest.importorskip("mctx")

from memfit.msa.core import game  # noqa: E402
from memfit.msa.core.instance import Instance  # noqa: E402
from memfit.msa.io.synthetic import random_instance  # noqa: E402
from memfit.msa.learned import agent, argmax, network, play  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "msa"
_apply = jax.jit(network.apply)
_advance = jax.jit(game.advance)
_offsets = jax.jit(lambda s: game.legal_and_offsets(s)[1])


def _variant(params, life):
    """The network as it is (``ops``) or with static lifetime means: its
    static embedding moved off the op encoder's (network.with_static_life's
    start), so that it differs from the dynamic variant's."""
    if life == "ops":
        return params
    net = network.with_static_life(params)
    key = jax.random.PRNGKey(1)
    life_enc = [{"w": l["w"] + 0.3 * jax.random.normal(jax.random.fold_in(key, i), l["w"].shape),
                 "b": l["b"]} for i, l in enumerate(net["life_enc"])]
    return {**net, "life_enc": life_enc}


def _one(inst):
    batch = agent.encode_batch([inst])
    return batch, play.unstack(batch.arrays, 0), play.unstack(batch.static, 0)


@pytest.mark.parametrize("life", ["ops", "static"])
@pytest.mark.parametrize("mode", ["offload", "placement"])
def test_logits_and_legal_actions_equal_the_networks_at_every_move(mode, life):
    """Stepping through a game, the Player's legal actions and candidate
    offsets are the game's and its logits network.apply's (float32 rounding:
    the rows it keeps were computed in other batches); ops that touch more
    buffers than its tables are wide (a transformer's) included."""
    for inst in (random_instance(5, num_ops=70, num_args=4, mode=mode),
                 Instance.load(DATA / "instances" / f"transformer_small-{mode}-50.json")):
        batch, g, sf = _one(inst)
        params = _variant(agent.default_params(batch), life)
        pl = argmax.Player(params, g, sf)
        assert pl.static_life == (life == "static")
        assert pl.op_adj.rest or pl.buf_adj.rest or inst.program.startswith("synthetic")
        s = game.init(g)
        for i in range(inst.num_buffers):
            want, _, legal = _apply(params, sf, s)
            offs_want = np.asarray(_offsets(s))
            a, got, offs = pl.logits()
            np.testing.assert_array_equal(np.asarray(got) > network.NEG / 2, np.asarray(legal))
            np.testing.assert_array_equal(offs, offs_want)
            legal = np.asarray(legal)
            np.testing.assert_allclose(np.asarray(got)[legal], np.asarray(want)[legal],
                                       atol=2e-3, rtol=1e-4)
            assert a == int(np.argmax(np.asarray(want))), f"move {i}"
            pl.move(a, offs)
            s = _advance(s, a)
        assert pl.step == inst.num_buffers
        np.testing.assert_array_equal(pl.choice, np.asarray(s.choice))
        np.testing.assert_array_equal(pl.offset, np.asarray(s.offset))
        np.testing.assert_array_equal(pl.live, np.asarray(s.live))


@pytest.mark.parametrize("life", ["ops", "static"])
@pytest.mark.parametrize("mode", ["offload", "placement"])
def test_fast_argmax_games_are_the_reference_games(mode, life):
    """argmax.play_batch plays the same moves, to the same final state and
    time, as play.play_batch's jitted reference loop (fast=False): on a
    batch of three instances whose ops fill their bucket (the schedule
    neighbours wrap around, as network._op_round's roll does; the third with
    half the capacity, so that placed buffers crowd the candidate gaps), and
    on one in the 1,024-move bucket (the big checkpoint's), which
    play.play_batch plays by the fast path by default."""
    small = [random_instance(s, num_ops=64, num_args=3, mode=mode) for s in (11, 12)] \
        + [random_instance(14, num_ops=64, num_args=3, mode=mode, capacity_fraction=0.2)]
    big = [random_instance(13, num_ops=296, num_args=4, mode=mode)]
    for insts in (small, big):
        batch = agent.encode_batch(insts)
        params = _variant(agent.default_params(batch), life)
        key = jax.random.PRNGKey(0)
        fast, _, fast_acts, _ = argmax.play_batch(params, batch.arrays, batch.static)
        ref, _, ref_acts, _ = play.play_batch(params, batch.arrays, batch.static, key,
                                              fast=False)
        np.testing.assert_array_equal(np.asarray(fast_acts), np.asarray(ref_acts))
        for f in ("step", "choice", "offset", "live", "done"):
            np.testing.assert_array_equal(np.asarray(getattr(fast, f)),
                                          np.asarray(getattr(ref, f)), err_msg=f)
        np.testing.assert_allclose(np.asarray(fast.time), np.asarray(ref.time), rtol=1e-6)


def test_agent_plays_the_argmax_by_the_fast_path_from_its_bucket(monkeypatch):
    """agent.play_batch's argmax (simulations=0) goes through
    argmax.play_batch on games of argmax.FAST_MIN_MOVES moves or more, and
    through the reference loop below."""
    calls = []
    real = argmax.play_batch

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(argmax, "play_batch", spy)
    batch = agent.encode_batch([random_instance(3, num_ops=20, num_args=2, mode="offload")])
    cfg = agent.AgentConfig(simulations=0, local_search=False)
    assert batch.arrays.order.shape[1] < argmax.FAST_MIN_MOVES
    (slow,), _ = agent.play_batch(batch, cfg)
    assert not calls
    monkeypatch.setattr(argmax, "FAST_MIN_MOVES", batch.arrays.order.shape[1])
    (sol,), _ = agent.play_batch(batch, cfg)
    assert calls and sol.method == slow.method == "learned-policy"
    assert sol.to_dict() == slow.to_dict()


def test_row_counts_leave_the_moves_as_they_are():
    """Player(count_rows=True) records per move the rows each round
    recomputes (bench_msa_argmax --rows) without changing a move; without
    the lifetime means' changes a round never has more rows."""
    inst = random_instance(5, num_ops=70, num_args=4, mode="offload")
    batch, g, sf = _one(inst)
    params = agent.default_params(batch)
    counted = argmax.Player(params, g, sf, count_rows=True)
    plain = argmax.Player(params, g, sf)
    np.testing.assert_array_equal(counted.play(), plain.play())
    rows = np.asarray(counted.rows)
    assert plain.rows is None and rows.shape == (inst.num_buffers - 1, 6)
    assert (rows[:, 4] <= rows[:, 2]).all() and (rows[:, 5] <= rows[:, 3]).all()
    assert (rows[:, 2] > rows[:, 4]).any()      # some buffer lives across a changed op
    assert (rows[:, :4] <= max(batch.arrays.order.shape[1], 70)).all()


def test_static_lifetime_means_recompute_only_the_accessing_rows():
    """With network.static_life a move recomputes in round 1 only the
    buffers accessing a changed op, and in round 2 only the ops around
    those and of those buffers (the counts without lifetime means), fewer
    than the same game's with the dynamic means would need; the moves are
    the reference's (test above)."""
    inst = random_instance(5, num_ops=70, num_args=4, mode="offload")
    batch, g, sf = _one(inst)
    base = agent.default_params(batch)
    static = argmax.Player(_variant(base, "static"), g, sf, count_rows=True)
    static.play()
    rows = np.asarray(static.rows)
    np.testing.assert_array_equal(rows[:, 2], rows[:, 4])
    np.testing.assert_array_equal(rows[:, 3], rows[:, 5])
    dynamic = argmax.Player(base, g, sf, count_rows=True)
    dynamic.play()
    assert np.asarray(dynamic.rows)[:, 2].sum() > rows[:, 2].sum()


@pytest.mark.parametrize("life", ["ops", "static"])
@pytest.mark.parametrize("mode", ["offload", "placement"])
def test_kept_intermediates_equal_a_recompute_at_every_move(mode, life):
    """What the row updates keep move after move (the embeddings of every
    round, the lifetime sums, the first layers' fixed parts of round 1's
    buffers and round 2's ops) equals the same state's intermediates
    computed afresh (Player.recomputed), to float32 rounding: a row a move
    changes but the updates leave stale fails it."""
    for inst in (random_instance(5, num_ops=70, num_args=4, mode=mode),
                 Instance.load(DATA / "instances" / f"transformer_small-{mode}-50.json")):
        batch, g, sf = _one(inst)
        pl = argmax.Player(_variant(agent.default_params(batch), life), g, sf)
        for i in range(inst.num_buffers - 1):
            a, _, offs = pl.logits()
            pl.move(a, offs)
            kept, fresh = pl.S, pl.recomputed()
            for name in kept._fields:
                if name == "cd":        # the last move's prefix sums, not a function of the state
                    continue
                # the real buffers' and ops' rows (padding rows are never read)
                valid = pl.buf_valid if name in ("hb0", "life1", "fb1", "hb1") else pl.op_valid
                for k, f in zip(jax.tree.leaves(getattr(kept, name)),
                                jax.tree.leaves(getattr(fresh, name))):
                    n = len(valid)
                    np.testing.assert_allclose(np.asarray(k)[:n][valid], np.asarray(f)[:n][valid],
                                               rtol=1e-4, atol=1e-4,
                                               err_msg=f"{inst.program} move {i}: {name}")
