"""One cost model, its views: model.py defines the time of a solution
(``simulate``) and its incremental view (``Clock``, the local search's); the
game (game.py, jax.numpy over fixed-shape arrays) and the exact solver
(exact.py, CP-SAT constraints) restate it. On the same random instances and
the same random solutions they must give the same time: the incremental
view to 1e-12, the game to float32 precision, CP-SAT to its integer ticks
(every duration is rounded down to a tick, so its time lies at most one
tick per duration term below the model's, and never above it)."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memfit.msa.core import game, model, plans
from memfit.msa.core.instance import DEVICE_PRESETS, Instance
from memfit.msa.core.model import resolve, simulate
from memfit.msa.io.synthetic import random_instance
from memfit.msa.solvers import exact

_step = jax.jit(game.step)
_legal = jax.jit(game.legal_actions)
_init = jax.jit(game.init)
_time = jax.jit(game.estimated_time)

CASES = [(mode, overlap, seed) for mode in ("placement", "offload")
         for overlap in (True, False) for seed in range(3)]


def _instance(mode, overlap, seed):
    dev = DEVICE_PRESETS["tpu-like" if mode == "placement" else "h200"]
    return random_instance(100 + seed, num_ops=12, num_args=3, mode=mode,
                           device=dataclasses.replace(dev, copy_overlaps_compute=overlap))


def _random_solution(spec, seed):
    """A solution played by legal random moves (so it fits the capacity and,
    in placement mode, its offsets overlap nothing)."""
    rng = np.random.default_rng(seed)
    s = _init(spec.arrays)
    while not bool(s.done):
        legal = np.flatnonzero(np.asarray(_legal(s)))
        s, _, _ = _step(s, jnp.int32(int(rng.choice(legal))))
    return s, spec.solution(s)


def _model_time(inst, sol):
    plans = {a.id: resolve(inst, a) for a in sol.buffers}
    return simulate(inst, {b: p for b, p in plans.items() if p.home or p.windows}).estimated_time


def _duration_terms(inst, sol):
    """How many rounded durations CP-SAT adds up: per op its compute and its
    accesses, and every copy of the solution."""
    terms = sum(1 + len(inst.accesses(t)) for t in range(inst.num_ops))
    for a in sol.buffers:
        p = resolve(inst, a)
        terms += len(p.windows) + (p.evict is not None)
    return terms


@pytest.mark.parametrize("mode,overlap,seed", CASES)
def test_model_game_and_exact_give_the_same_time(mode, overlap, seed):
    inst = _instance(mode, overlap, seed)
    spec = game.encode(inst)
    state, sol = _random_solution(spec, seed)
    want = _model_time(inst, sol)
    assert any(a.space == "fast" or a.prefetches for a in sol.buffers)   # not all slow

    assert float(_time(spec.arrays, state.choice)) == pytest.approx(want, rel=2e-5)

    r = exact.solve(inst, fixed=sol, time_limit=20, num_workers=2, use_heuristic_hint=False)
    assert r.status == "OPTIMAL"
    slack = _duration_terms(inst, sol) * exact.tick_seconds(inst)
    assert want - slack <= r.objective <= want * (1 + 1e-9)
    # the pinned solution is the one CP-SAT returns
    assert _model_time(inst, r.solution) == pytest.approx(want, rel=1e-12)


def test_a_plan_off_the_menu_cannot_be_pinned():
    inst = _instance("offload", True, 0)
    spec = game.encode(inst)
    _, sol = _random_solution(spec, 0)
    a = next(a for a in sol.buffers if a.space == "slow" and not a.prefetches)
    a.space, a.evict_after = "fast", inst.buffers[a.id].start   # evicted at once: no menu plan
    with pytest.raises(ValueError, match="not on its menu"):
        exact.solve(inst, fixed=sol, time_limit=5, num_workers=1, use_heuristic_hint=False)


def _blocking(inst):
    """``inst`` with copies on the ops' clock (copy_overlaps_compute off)."""
    d = inst.to_dict()
    d["device"]["copy_overlaps_compute"] = False
    return Instance.from_dict(d)


@pytest.mark.parametrize("overlap,every", [(True, 32), (False, 32), (True, 1), (False, 3)])
def test_incremental_clock_is_the_models_time_for_every_one_buffer_change(overlap, every,
                                                                         monkeypatch):
    """model.Clock, the incremental view the local search times its moves
    with (ops between copy events summed at once, a change swept from the
    current plans' last snapshot before it, one every ``every`` events)
    gives model.simulate's time for random plan sets and one-buffer changes
    of them, before and after a change is accepted, with copies overlapping
    compute or not."""
    monkeypatch.setattr(model.Clock, "SNAPSHOT_EVERY", every)
    rng = np.random.default_rng(7)
    for seed in range(6):
        inst = random_instance(seed, num_ops=30 + 7 * seed, num_args=4, mode="offload")
        inst = inst if overlap else _blocking(inst)
        _, menus = plans.build_menus(inst)
        cur = {}
        for b in range(inst.num_buffers):
            i = int(rng.integers(len(menus[b])))
            if i:
                cur[b] = menus[b][i].plan(inst, b)
        clock = model.Clock(inst, cur)
        assert clock.time() == pytest.approx(model.simulate(inst, cur).estimated_time, rel=1e-12)
        for _ in range(8):
            b = int(rng.integers(inst.num_buffers))
            i = int(rng.integers(len(menus[b])))
            new = menus[b][i].plan(inst, b) if i else None
            trial = {**cur, b: new} if new else {k: v for k, v in cur.items() if k != b}
            ref = model.simulate(inst, trial).estimated_time
            assert clock.time([(b, cur.get(b), new)]) == pytest.approx(ref, rel=1e-12)
            clock.accept(b, cur.get(b), new)
            cur = trial
            assert clock.time() == pytest.approx(ref, rel=1e-12)
