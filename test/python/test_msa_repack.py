"""msa.solvers.repack: plan changes whose offsets come from the exact packer."""
import dataclasses

import pytest

from memfit.msa.core.instance import DEVICE_PRESETS, Buffer, Instance, Op
from memfit.msa.core.plans import FastMemory
from memfit.msa.core.solution import BufferAssignment, Solution
from memfit.msa.core.validator import validate
from memfit.msa.io.synthetic import random_instance
from memfit.msa.solvers.heuristic import assign as heuristic
from memfit.msa.solvers.repack import repack

MiB = 1 << 20


def _blocked():
    """C (argument, read by ops 0 and 3) is slow; A (op 0 -> op 1) sits at
    offset 1 MiB of a 4 MiB scratchpad, so no 2 MiB range is free at ops
    0-1: C's upgrade fits by bytes per op but not beside A where it is.
    Moving A to 0 (or 2 MiB) makes room."""
    inst = Instance("blocked", "main", "placement", DEVICE_PRESETS["tpu-like"], 4 * MiB,
                    [Op(0, "a", 1.0, [0], [1]), Op(1, "b", 1.0, [1], []),
                     Op(2, "c", 1.0, [], []), Op(3, "d", 1.0, [0], [])],
                    [Buffer(0, "C", 2 * MiB, 0, 3, [0, 3], "argument"),
                     Buffer(1, "A", 2 * MiB, 0, 1, [1], "temp")])
    sol = Solution("placement", "given",
                   [BufferAssignment(0, "slow"), BufferAssignment(1, "fast", 1 * MiB)])
    return inst, sol


def test_repack_takes_an_upgrade_the_skyline_offsets_block():
    inst, sol = _blocked()
    v0 = validate(inst, sol)
    assert v0.valid
    # the game's rule (lowest free offsets among 0 and the tops of what C
    # would meet, here A) has no offset for C while A stays at 1 MiB
    mem = FastMemory(inst)
    mem.add(2 * MiB, [(0, 1)], 1 * MiB)
    assert mem.lowest_offsets(2 * MiB, [(0, 3)], 4) == []
    # plan changes with every other buffer where it is: no change fits
    same, st = repack(inst, sol, relayout=False)
    assert st.rounds == 0 and same is sol
    out, st = repack(inst, sol)
    v = validate(inst, out)
    assert v.valid
    assert v.estimated_time < v0.estimated_time * 0.99
    assert out.by_id()[0].space == "fast" and out.by_id()[1].offset != 1 * MiB


def test_repack_validates_and_is_never_slower():
    faster = 0
    for seed in (0, 3):
        inst = random_instance(seed, num_ops=16, num_args=3, mode="placement",
                               capacity_fraction=0.3)
        sol = heuristic(inst)
        out, st = repack(inst, sol)
        v0, v = validate(inst, sol), validate(inst, out)
        assert v.valid
        assert v.estimated_time <= v0.estimated_time
        assert st.time_after == pytest.approx(v.estimated_time)
        faster += v.estimated_time < v0.estimated_time
    assert faster >= 1


def test_cli_assign_repack(tmp_path, capsys):
    from memfit.msa.cli import add_subcommands
    import argparse
    inst = random_instance(0, num_ops=16, num_args=3, mode="placement", capacity_fraction=0.3)
    path = tmp_path / "inst.json"
    path.write_text(inst.dumps())
    ap = argparse.ArgumentParser()
    add_subcommands(ap.add_subparsers(dest="cmd"))
    times = {}
    for flag in ("--no-repack", "--repack"):
        out = tmp_path / f"sol{flag}.json"
        args = ap.parse_args(["assign", str(path), "--method", "heuristic", flag, "-o", str(out)])
        assert args.func(args) == 0
        times[flag] = validate(inst, Solution.load(out)).estimated_time
    assert times["--repack"] < times["--no-repack"]


def test_repack_leaves_offload_mode_and_rejects_invalid_input():
    inst = random_instance(5, num_ops=10, num_args=2, mode="offload")
    sol = heuristic(inst)
    out, st = repack(inst, sol)
    assert out is sol and "offload" in st.note
    inst, sol = _blocked()
    bad = dataclasses.replace(sol, buffers=[BufferAssignment(0, "fast", 1 * MiB),
                                            BufferAssignment(1, "fast", 1 * MiB)])
    with pytest.raises(ValueError, match="valid solution"):
        repack(inst, bad)


def test_packer_layout_of_a_split_buffer_keeps_one_offset():
    """The packer step alone (repack's last resort): C split (home at op 0,
    window before op 3) and A kept; the packer places the pieces, a split
    buffer's pieces end at one offset (re-placed if the packer tore them),
    and the layout validates."""
    from memfit.msa.solvers.repack import _Search
    inst, sol = _blocked()
    s = _Search(inst, sol, 20_000)
    split = next(q for q, m in enumerate(s.menus[0]) if m.kind == "split")
    choice = s.choice.copy()
    choice[0] = split
    offset = s.repack(choice)
    assert offset is not None and s.stats.packed == 1
    v = validate(inst, s.solution(choice, offset, "t"))
    assert v.valid, v.summary()


def test_agent_default_repacks_placement_games(monkeypatch):
    """agent.play_batch runs msa.solvers.repack on placement instances after the
    polish (AgentConfig.repack None: where the game is polished; True: also
    unpolished), and not with repack=False."""
    from memfit.msa.learned import agent
    from memfit.msa.solvers import repack as R
    calls = []
    real = R.repack

    def spy(inst, sol, **kw):
        calls.append(inst.program)
        return real(inst, sol, **kw)
    monkeypatch.setattr(R, "repack", spy)
    inst = random_instance(0, num_ops=16, num_args=3, mode="placement", capacity_fraction=0.3)
    batch = agent.encode_batch([inst])
    assert agent.DEFAULT_CONFIG.repack is None
    argmax = agent.AgentConfig(simulations=0, polish=0)
    (off,), _ = agent.play_batch(batch, argmax.replace(repack=False))
    assert calls == []
    (on,), _ = agent.play_batch(batch, argmax.replace(repack=True))
    assert len(calls) == 1
    v_on, v_off = validate(inst, on), validate(inst, off)
    assert v_on.valid and v_on.estimated_time <= v_off.estimated_time


def _relayouts_fail():
    """A placement instance (synthetic, 21 buffers) and CP-SAT's optimal
    solution, whose plan set neither the greedy relayouts nor the packer lay
    out (split buffers: two intervals at one offset)."""
    from memfit.msa.solvers import exact
    inst = random_instance(38, num_ops=18, num_args=3, mode="placement", capacity_fraction=0.4)
    r = exact.solve(inst, time_limit=30, num_workers=1)
    assert r.status == "OPTIMAL"
    return inst, r


def test_lay_out_places_plans_the_relayouts_and_packer_cannot():
    """msa.solvers.repack.lay_out (the first-fit order search) gives CP-SAT's
    optimal plan set offsets where repack's relayouts and its packer step
    find none; the layout validates at CP-SAT's time."""
    import numpy as np
    from memfit.msa.core.plans import menu_index
    from memfit.msa.solvers.repack import NODE_LIMIT, _Search, lay_out
    inst, r = _relayouts_fail()
    h = heuristic(inst)
    s = _Search(inst, h, NODE_LIMIT)
    by_id = r.solution.by_id()
    choice = np.array([menu_index(s.menus[b], by_id[b]) for b in range(inst.num_buffers)],
                      np.int32)
    assert s.compact(choice, []) is None and s.repack(choice) is None
    laid = lay_out(inst, h, r.solution)
    assert laid is not None
    v = validate(inst, laid)
    assert v.valid, v.summary()
    assert v.estimated_time == pytest.approx(r.verdict.estimated_time, rel=1e-9)
    # the same plans given as an offload-mode solution (no offsets)
    plans = Solution("offload", "relaxed", [dataclasses.replace(a, offset=None if a.space == "slow"
                                                                else 0)
                                            for a in r.solution.buffers])
    assert validate(inst, lay_out(inst, h, plans)).estimated_time == pytest.approx(
        v.estimated_time, rel=1e-9)


def test_lay_out_repair_makes_the_buffers_above_capacity_slow():
    """A plan set that cannot fit (every buffer kept in fast memory): no
    layout; with ``repair`` a valid layout of a subset of them."""
    from memfit.msa.solvers.repack import lay_out
    inst, _ = _relayouts_fail()
    h = heuristic(inst)
    every = Solution("offload", "all kept", [BufferAssignment(b, "fast", 0)
                                             for b in range(inst.num_buffers)])
    assert lay_out(inst, h, every) is None
    laid = lay_out(inst, h, every, repair=True)
    v = validate(inst, laid)
    assert v.valid, v.summary()
    fast = [a.id for a in laid.buffers if a.space == "fast"]
    assert 0 < len(fast) < inst.num_buffers
    assert all(not a.prefetches for a in laid.buffers)     # kept or slow, nothing else


def test_agent_plays_placement_games_in_their_offload_relaxation():
    """agent.play_batch with relax=True ("play"): a placement instance is also
    played in its offload relaxation, the relaxed plans laid out
    (msa.solvers.repack.lay_out) and repacked; the faster valid layout is kept.
    On this instance the game's placement offsets end in a slower layout
    than the relaxation's plans (0.876 of its time, measured)."""
    from memfit.msa.learned import agent
    inst = random_instance(42, num_ops=18, num_args=3, mode="placement", capacity_fraction=0.4)
    relaxed = agent.offload_relaxation(inst)
    assert relaxed.mode == "offload" and relaxed.buffers == inst.buffers
    batch = agent.encode_batch([inst])
    # the relaxation alone
    cfg = agent.AgentConfig(simulations=0, polish=1, polish_pairs=False, iterate=0)
    (off,), _ = agent.play_batch(batch, cfg.replace(relax=None))
    (on,), _ = agent.play_batch(batch, cfg.replace(relax=True))
    v_on, v_off = validate(inst, on), validate(inst, off)
    assert v_on.valid, v_on.summary()
    assert v_on.estimated_time < v_off.estimated_time * (1 - 1e-3)


def test_agent_polishes_placement_plans_in_their_offload_relaxation(monkeypatch):
    """agent.play_batch with relax="polish": the placement game's own plans are
    polished in the offload relaxation (no second search: relaxation_plans
    is not called), laid out and repacked; the faster valid layout is kept.
    On this instance (``_relayouts_fail``'s) that is 0.948 of the placement
    game's time (measured)."""
    from memfit.msa.learned import agent
    inst = random_instance(38, num_ops=18, num_args=3, mode="placement", capacity_fraction=0.4)
    batch = agent.encode_batch([inst])
    # the relaxation alone
    cfg = agent.AgentConfig(simulations=0, polish=1, polish_pairs=False, iterate=0)
    (off,), _ = agent.play_batch(batch, cfg.replace(relax=None))
    calls = []
    monkeypatch.setattr(agent, "relaxation_plans", lambda *a, **k: calls.append(a) or {})
    (on,), _ = agent.play_batch(batch, cfg.replace(relax="polish"))
    assert calls == []
    v_on, v_off = validate(inst, on), validate(inst, off)
    assert v_on.valid, v_on.summary()
    assert v_on.estimated_time < v_off.estimated_time * (1 - 1e-3)
    with pytest.raises(ValueError, match="relax 'replay'"):
        agent.play_batch(batch, cfg.replace(relax="replay"))


def test_relaxation_polish_has_its_own_pair_stage_gate(monkeypatch):
    """agent.relaxation_polish_plans runs the pair stage on relaxations of
    at most relax_pair_max_buffers buffers with relax_pair_best_second,
    whatever the offload default's gate; on none with pairs=False, on all
    with pairs=True."""
    from memfit.msa.learned import agent, play
    inst = random_instance(38, num_ops=18, num_args=3, mode="placement", capacity_fraction=0.4)
    batch = agent.encode_batch([inst])
    (sol,), _ = agent.play_batch(batch, agent.AgentConfig(simulations=0, polish=1,
                                                          polish_pairs=False, relax=None))
    calls = []

    def spy(b, acts, **kw):
        calls.append((kw["only"], kw["best_second"]))
        return play.replay_batch(b.arrays, acts), acts
    monkeypatch.setattr(agent, "pair_polish", spy)
    for pairs, gate, want in ((None, inst.num_buffers, [True]), (None, inst.num_buffers - 1, None),
                              (False, 99, None), (True, 0, [True])):
        calls.clear()
        cfg = agent.AgentConfig(pair_max_buffers=agent.PerMode(0, 0), relax_pair_max_buffers=gate)
        plans = agent.relaxation_polish_plans(batch, [sol], 1, pairs, config=cfg)
        assert list(plans) == [0] and validate(agent.offload_relaxation(inst), plans[0]).valid
        assert calls == ([] if want is None else [(want, cfg.relax_pair_best_second)])
