"""Expert games for a warm start: solutions of the heuristic and of CP-SAT,
replayed move by move through the game, as (state, one-hot policy, value)
rows in the trainer's replay format.

Only ever called on training instances. A solution is replayed in the
game's buffer order: each buffer's menu plan, at the candidate offset equal
to the solution's (placement mode); where the solution's offset is not among
the game's candidates, the plan at the lowest candidate offset, and slow
where that plan no longer fits. So the replayed game's time can differ from
the solution's; the value targets are the replayed game's own returns
(consistent with what the search sees), normalised by ``T0``.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..core import game
from ..core.plans import menu_index


@functools.lru_cache(maxsize=None)
def _jitted():
    return jax.jit(game.legal_and_offsets), jax.jit(game.step)


def expert_solutions(inst, cpsat_seconds: float = 0.0, local_search: bool = False) -> list:
    """The heuristic's solution and, with ``cpsat_seconds > 0``, CP-SAT's
    (hinted with the heuristic's, one worker); with ``local_search``, also
    the faster of them improved by msa.solvers.localsearch the way the agent's big
    default runs it (agent.local_search): at 1,000+ buffers CP-SAT does not
    improve on the heuristic, the local search does (0.46 to 1.00 of its
    time on the big checkpoint's training instances)."""
    from ..core.validator import validate
    from ..solvers import exact, heuristic
    sols = [heuristic.assign(inst)]
    if cpsat_seconds > 0:
        sols.append(exact.solve(inst, time_limit=cpsat_seconds, num_workers=1,
                                hint=sols[0]).solution)
    if local_search:
        from .agent import local_search as searched
        start = min(sols, key=lambda s: validate(inst, s).estimated_time)
        sols.append(searched(inst, start)[0])
    return sols


def _action(spec, b: int, assignment, offs, legal) -> int:
    """The game action that plays ``assignment`` for buffer b (see module doc)."""
    K = game.NUM_OFFSETS
    p = menu_index(spec.menus[b], assignment)
    if not p:
        return 0
    ks = [k for k in range(K) if spec.inst.mode == "placement"
          and int(offs[p - 1, k]) >= 0 and int(offs[p - 1, k]) * spec.unit == assignment.offset]
    a = 1 + (p - 1) * K + (ks[0] if ks else 0)
    return a if legal[a] else 0


def replay(spec, solution) -> tuple[dict, float]:
    """Rows (step, choice, offset, live, time, action) of ``solution`` played
    through the game, and the replayed final time."""
    by_id = {a.id: a for a in solution.buffers}
    return _play(spec, lambda b, offs, legal: _action(spec, b, by_id[b], offs, legal))


def replay_actions(spec, actions) -> tuple[dict, float]:
    """``replay`` for a game given by its moves (``actions`` [M], in the
    game's buffer order; an illegal move plays slow)."""
    return _play(spec, lambda k, offs, legal: int(actions[k]) if legal[int(actions[k])] else 0,
                 by_move=True)


def _play(spec, pick, by_move: bool = False) -> tuple[dict, float]:
    legal_fn, step_fn = _jitted()
    s = game.init(spec.arrays)
    rows = {k: [] for k in ("step", "choice", "offset", "live", "time", "action")}
    for k, b in enumerate(spec.order):
        legal, offs, _ = legal_fn(s)
        a = pick(k if by_move else b, np.asarray(offs), np.asarray(legal))
        for name in ("step", "choice", "offset", "live", "time"):
            rows[name].append(np.asarray(getattr(s, name)))
        rows["action"].append(a)
        s, _, _ = step_fn(s, jnp.int32(a))
    return {k: np.stack(v) for k, v in rows.items()}, float(s.time)


def _rows(rows: dict, final: float, scale: float, inst_index: int, num_actions: int) -> dict:
    n = len(rows["action"])
    rows["policy"] = np.eye(num_actions, dtype=np.float32)[rows.pop("action")]
    rows["value"] = ((rows["time"] - final) / scale).astype(np.float32)
    rows["inst"] = np.full(n, inst_index, np.int64)
    return rows


def expert_rows(spec, scale: float, solutions, inst_index: int, num_actions: int,
                return_time: bool = False):
    """Replay rows of the best (lowest replayed time) of ``solutions``, with
    the trainer's ``policy`` (one-hot) and ``value`` (fraction of T0 still
    saved) targets (with ``return_time``, also that game's replayed time)."""
    games = [replay(spec, sol) for sol in solutions]
    rows, final = min(games, key=lambda g: g[1])
    out = _rows(rows, final, scale, inst_index, num_actions)
    return (out, final) if return_time else out


def action_rows(spec, scale: float, actions, inst_index: int, num_actions: int) -> dict:
    """``expert_rows`` for one game given by its moves (``replay_actions``)."""
    rows, final = replay_actions(spec, actions)
    return _rows(rows, final, scale, inst_index, num_actions)
