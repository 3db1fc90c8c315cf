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

from .. import game
from ..plans import menu_index


@functools.lru_cache(maxsize=None)
def _jitted():
    return jax.jit(game.legal_and_offsets), jax.jit(game.step)


def expert_solutions(inst, cpsat_seconds: float = 0.0) -> list:
    """The heuristic's solution and, with ``cpsat_seconds > 0``, CP-SAT's
    (hinted with the heuristic's, one worker)."""
    from .. import exact, heuristic
    h = heuristic.assign(inst)
    if cpsat_seconds <= 0:
        return [h]
    r = exact.solve(inst, time_limit=cpsat_seconds, num_workers=1, hint=h)
    return [h, r.solution]


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
    legal_fn, step_fn = _jitted()
    by_id = {a.id: a for a in solution.buffers}
    s = game.init(spec.arrays)
    rows = {k: [] for k in ("step", "choice", "offset", "live", "time", "action")}
    for b in spec.order:
        legal, offs, _ = legal_fn(s)
        a = _action(spec, b, by_id[b], np.asarray(offs), np.asarray(legal))
        for k in ("step", "choice", "offset", "live", "time"):
            rows[k].append(np.asarray(getattr(s, k)))
        rows["action"].append(a)
        s, _, _ = step_fn(s, jnp.int32(a))
    return {k: np.stack(v) for k, v in rows.items()}, float(s.time)


def expert_rows(spec, scale: float, solutions, inst_index: int, num_actions: int) -> dict:
    """Replay rows of the best (lowest replayed time) of ``solutions``, with
    the trainer's ``policy`` (one-hot) and ``value`` (fraction of T0 still
    saved) targets."""
    games = [replay(spec, sol) for sol in solutions]
    rows, final = min(games, key=lambda g: g[1])
    n = len(rows["action"])
    rows["policy"] = np.eye(num_actions, dtype=np.float32)[rows.pop("action")]
    rows["value"] = ((rows["time"] - final) / scale).astype(np.float32)
    rows["inst"] = np.full(n, inst_index, np.int64)
    return rows
