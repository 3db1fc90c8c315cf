"""One cost model, three views: model.py defines the time of a solution; the
game (game.py, jax.numpy over fixed-shape arrays) and the exact solver
(exact.py, CP-SAT constraints) restate it. On the same random instances and
the same random solutions the three must give the same time: the game to
float32 precision, CP-SAT to its integer ticks (every duration is rounded
down to a tick, so its time lies at most one tick per duration term below
the model's, and never above it)."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memfit.msa.core import game
from memfit.msa.core.instance import DEVICE_PRESETS
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
