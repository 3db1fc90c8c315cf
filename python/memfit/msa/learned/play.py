"""Playing whole games with the network: greedy, or Gumbel MuZero search.

The mallocGame is known and deterministic, so the search's model is the
game itself (``game.step``); the network supplies the prior logits and the
leaf value. Rewards are divided by the instance's all-slow time ``T0`` so
that values are comparable across instances (a value is the fraction of
``T0`` still to be saved).

Games are played for a *batch* of instances of one shape class at once
(``vmap``), in one ``lax.while_loop`` until every game is over; the search
tree's embeddings are the states without the instance arrays (those are
passed once, as the search's ``params``). ``record=True`` also returns, per
move, the state, the search's improved policy and whether the move was real
(training data).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..._optional import require
from ..core import game
from . import features as F
from . import network


class Trajectory(NamedTuple):
    step: jax.Array     # [M, N]
    choice: jax.Array   # [M, N, B]
    offset: jax.Array   # [M, N, B]
    live: jax.Array     # [M, N, T]
    time: jax.Array     # [M, N]
    policy: jax.Array   # [M, N, A]: the search's improved policy
    active: jax.Array   # [M, N] bool: a real move (the game was not over)


def _strip(s: game.State) -> game.State:
    return s._replace(inst=None)


#: Leaf values the search can use: zero (the search then sees only the
#: rewards along its path), or ``rollout``: the time the heuristic's plans
#: still save when played from the leaf to the end of the game (exact for
#: that continuation: the game is known).
VALUE_MODES = ("zero", "rollout")


def hint_plans(sf: F.Static) -> jax.Array:
    """[B]: the heuristic's menu index per buffer (0, slow, where it has none)."""
    flag = sf.plan[:, :, F.HINT]
    return jnp.where(flag.max(1) > 0, jnp.argmax(flag, 1), 0)


def rollout_value(sf: F.Static, s: game.State) -> jax.Array:
    """The fraction of T0 saved from ``s`` on by playing each remaining
    buffer's heuristic plan at its lowest candidate offset (slow where that
    is illegal). Times are estimated once, at the end."""
    hint = hint_plans(sf)
    K = game.NUM_OFFSETS

    def body(st):
        p = hint[F.current_buffer(st)]
        return game.advance(st, jnp.where(p > 0, 1 + (p - 1) * K, 0))

    end = jax.lax.while_loop(lambda st: ~st.done, body, s)
    return (s.time - game.estimated_time(s.inst, end.choice)) / sf.scale


def rollout_actions(sf: F.Static, s: game.State, actions: jax.Array):
    """The heuristic's rollout from ``s`` (as ``rollout_value``), returning
    ``(estimated time at its end, actions)``: ``actions`` [M] with the
    rollout's move written at every move index from ``s.step`` on."""
    hint = hint_plans(sf)
    K = game.NUM_OFFSETS

    def body(carry):
        st, acts = carry
        p = hint[F.current_buffer(st)]
        a = jnp.where(p > 0, 1 + (p - 1) * K, 0)
        acts = acts.at[jnp.minimum(st.step, acts.shape[0] - 1)].set(a)
        return game.advance(st, a), acts

    end, acts = jax.lax.while_loop(lambda c: ~c[0].done, body, (s, actions))
    return game.estimated_time(s.inst, end.choice), acts


def replay_suffix(s: game.State, actions: jax.Array, sf: F.Static | None = None,
                  reserve: bool = False):
    """Plays ``actions[s.step:]`` from ``s`` to the end of the game, each
    move repaired where it became illegal (``game.advance_repaired``); with
    ``sf``, a slow move is upgraded to the legal plan with the largest
    isolated saving (so capacity an earlier change freed gets used). With
    ``reserve`` (and ``sf``), only to a plan that also fits beside the
    bytes the game's own later moves keep resident (``_own_residency``): an
    upgrade then takes only capacity nobody after it claims, instead of
    displacing later moves (the greedy upgrade gives the first slow buffer
    the freed space, and the repairs it forces can cost more than it saves).
    Returns ``(estimated time at the end, actions as played)``."""
    if sf is None:
        return _replay_suffix(s, actions, None, None, jnp.int32(REPLAY_OWN))
    later = _own_residency(s.inst, actions) if reserve else None
    return _replay_suffix(s, actions, sf, later,
                          jnp.int32(REPLAY_RESERVED if reserve else REPLAY_UPGRADE))


#: ``_replay_suffix``'s modes: own moves repaired, slow ones upgraded
#: greedily, upgraded only beside the later own moves' residency.
REPLAY_OWN, REPLAY_UPGRADE, REPLAY_RESERVED = 0, 1, 2


def _replay_suffix(s: game.State, actions, sf, later, mode):
    """``replay_suffix`` with the mode traced (``REPLAY_*``), so that polish
    runs its three own-move completions as one vmapped loop (one compile).
    ``later``: ``_own_residency`` (or None when no mode reserves)."""
    last = actions.shape[0] - 1
    g = s.inst

    def body(carry):
        st, acts = carry
        i = jnp.minimum(st.step, last)
        up = None
        if sf is not None:
            b = F.current_buffer(st)
            up = jnp.where(mode >= REPLAY_UPGRADE, sf.plan[b, :, F.SAVING], 0.0)
            if later is not None:
                res = game.plan_residency(g, b)                             # [P, T]
                over = st.live + later[i] + g.size_units[b] > g.capacity
                fits = ~jnp.any(res & over[None, :], axis=1)
                up = jnp.where((mode == REPLAY_RESERVED) & ~fits, 0.0, up)
        nxt, a = game.advance_repaired(st, acts[i], up)
        return nxt, acts.at[i].set(a)

    end, acts = jax.lax.while_loop(lambda c: ~c[0].done, body, (s, actions))
    return game.estimated_time(s.inst, end.choice), acts


def _own_residency(g: game.GameArrays, actions: jax.Array) -> jax.Array:
    """[M, T] int: per move index ``k``, the bytes (units) the game's moves
    after ``k`` keep resident at each op, by their plans in ``actions``."""
    K = game.NUM_OFFSETS
    M = actions.shape[0]
    plan = jnp.where(actions == 0, 0, 1 + (actions - 1) // K)
    b = g.order[:M]
    res = jax.vmap(lambda bb, p: game.plan_residency(g, bb)[p])(b, plan)   # [M, T]
    units = jnp.where(res & (jnp.arange(M) < g.n_buffers)[:, None], g.size_units[b][:, None], 0)
    total = jnp.cumsum(units[::-1], axis=0)[::-1]                        # moves k.. end
    return jnp.concatenate([total[1:], jnp.zeros_like(total[:1])], axis=0)


#: A polish move must save more than this fraction of the game's time (so
#: float32 noise cannot make the pass cycle).
POLISH_MIN_GAIN = 1e-6


#: The completions a polish move can be tried with (``polish_pass``): the
#: game's own later moves repaired ("own"), the heuristic's rollout
#: ("heuristic"), own moves with slow ones upgraded greedily ("upgrade") or
#: only into capacity the later own moves leave free ("reserved").
COMPLETIONS = ("own", "heuristic", "upgrade", "reserved")
#: polish's default: without "reserved". First-improvement 1-opt is path
#: dependent, so "reserved" from the start can end in a slower local optimum;
#: AgentConfig.polish_then runs it as a second stage from the default's
#: polished game, where it can only gain.
DEFAULT_COMPLETIONS = ("own", "heuristic", "upgrade")
_REPLAY_CODES = {"own": REPLAY_OWN, "upgrade": REPLAY_UPGRADE, "reserved": REPLAY_RESERVED}


def tried_actions(offload: bool) -> jax.Array:
    """The actions a polish tries at a move: all of them, or with
    ``offload`` (an instance in offload mode, where only a plan's first
    offset is legal) slow and each plan at offset 0: 8 of the 29, the
    others being illegal there anyway, so the games are the same."""
    A = 1 + (game.NUM_PLANS - 1) * game.NUM_OFFSETS
    if not offload:
        return jnp.arange(A)
    return jnp.concatenate([jnp.zeros(1, jnp.int32),
                            1 + jnp.arange(game.NUM_PLANS - 1, dtype=jnp.int32) * game.NUM_OFFSETS])


def _try_move(sf: F.Static, g: game.GameArrays, s: game.State, acts: jax.Array,
              completions: tuple, offload: bool = False):
    """Every action at the move ``s`` is about to play (``tried_actions``),
    each game completed by the fastest of ``completions`` (``polish_pass``).
    Returns ``(times [A] (inf where illegal or not tried), the completed
    games' actions [A, M])``."""
    A = 1 + (game.NUM_PLANS - 1) * game.NUM_OFFSETS
    i = jnp.minimum(s.step, acts.shape[0] - 1)

    def try_action(a):
        nxt, played = game.advance_repaired(s, a)
        base = acts.at[i].set(played)
        modes = [m for m in completions if m != "heuristic"]
        codes = jnp.array([_REPLAY_CODES[m] for m in modes], jnp.int32)
        later = _own_residency(g, base) if "reserved" in modes else None
        t_own, a_own = (jax.vmap(lambda c: _replay_suffix(nxt, base, sf, later, c))(codes)
                        if modes else (None, None))
        done = [rollout_actions(sf, nxt, base) if c == "heuristic"
                else (t_own[modes.index(c)], a_own[modes.index(c)]) for c in completions]
        ts = jnp.stack([d[0] for d in done])
        j = jnp.argmin(ts)
        return ts[j], jnp.stack([d[1] for d in done])[j]

    tried = tried_actions(offload)
    ts, alts = jax.vmap(try_action)(tried)
    if offload:
        ts = jnp.full((A,), jnp.inf, ts.dtype).at[tried].set(ts)
        alts = jnp.zeros((A,) + alts.shape[1:], alts.dtype).at[tried].set(alts)
    return jnp.where(game.legal_actions(s), ts, jnp.inf), alts


def polish_pass(sf: F.Static, g: game.GameArrays, actions: jax.Array, t: jax.Array,
                completions: tuple = DEFAULT_COMPLETIONS, frozen=-1, offload: bool = False):
    """One pass of local improvement over a complete game (1-opt in the
    game's move order): at every move, every legal action is tried, the
    game completed by each of ``completions`` (of ``COMPLETIONS``): the rest of
    the current game's moves (repaired where they became illegal), the
    heuristic's rollout, the own moves with slow ones upgraded where a plan
    now fits (``replay_suffix`` with ``sf``), and the same with upgrades
    only into capacity the later own moves leave free (``reserve``: the
    greedy upgrade hands freed capacity to the first slow buffer in move
    order, and the repairs of the moves it displaces can cost more than the
    change saved); the fastest completion replaces the game when it saves
    time. The state then advances by the (possibly new) move. Move index
    ``frozen`` keeps its action (``pair_pass``: the change being completed).
    ``offload``: the instance is in offload mode (``tried_actions``).
    Returns ``(actions, time)``; the time never increases."""
    last = actions.shape[0] - 1

    def body(carry):
        s, acts, t = carry
        i = jnp.minimum(s.step, last)
        ts, alts = _try_move(sf, g, s, acts, completions, offload)
        ts = jnp.where(i == frozen, jnp.inf, ts)
        j = jnp.argmin(ts)
        gain = ts[j] < t * (1 - POLISH_MIN_GAIN)
        acts = jnp.where(gain, alts[j], acts)
        t = jnp.where(gain, ts[j], t)
        return game.advance(s, acts[i]), acts, t

    _, actions, t = jax.lax.while_loop(lambda c: ~c[0].done, body,
                                       (game.init(g), actions, t))
    return actions, t


def _polish_passes(sf, g, acts, t, passes, completions, offload: bool = False):
    """Up to ``passes`` ``polish_pass``es, stopping after one that found nothing."""
    def cond(c):
        k, _, _, moved = c
        return (k < passes) & moved

    def body(c):
        k, acts, t, _ = c
        acts2, t2 = polish_pass(sf, g, acts, t, completions, offload=offload)
        return k + 1, acts2, t2, t2 < t

    _, acts, t, _ = jax.lax.while_loop(cond, body, (jnp.int32(0), acts, t, jnp.bool_(True)))
    return acts, t


def plan_changes(sf: F.Static, g: game.GameArrays, actions: jax.Array,
                 completions: tuple = DEFAULT_COMPLETIONS, offload: bool = False):
    """Every single change of the game, by plan, without taking it: per move
    index and plan other than the move's own, the plan at its fastest
    offset, the game completed as in ``polish_pass``. Returns ``(times
    [M, P] (inf where that plan is illegal, is the move's own, or past the
    game's end), the completed games' actions [M, P, M])``. On a polished
    game none is faster than the game; ``pair_pass`` starts from them."""
    M = actions.shape[0]
    P, K = game.NUM_PLANS, game.NUM_OFFSETS

    def body(carry):
        s, bt, ba = carry
        i = jnp.minimum(s.step, M - 1)
        ts, alts = _try_move(sf, g, s, actions, completions, offload)
        by_plan = ts[1:].reshape(P - 1, K)
        tp = jnp.concatenate([ts[:1], by_plan.min(1)])
        ap = jnp.concatenate([jnp.zeros(1, jnp.int32),
                              1 + jnp.arange(P - 1, dtype=jnp.int32) * K + by_plan.argmin(1)])
        own = jnp.where(actions[i] == 0, 0, 1 + (actions[i] - 1) // K)
        tp = jnp.where(jnp.arange(P) == own, jnp.inf, tp)
        return game.advance(s, actions[i]), bt.at[i].set(tp), ba.at[i].set(alts[ap])

    init = (game.init(g), jnp.full((M, P), jnp.inf, jnp.float32),
            jnp.zeros((M, P, M), actions.dtype))
    return jax.lax.while_loop(lambda c: ~c[0].done, body, init)[1:]


def pair_pass(sf: F.Static, g: game.GameArrays, actions: jax.Array, t: jax.Array,
              chunk: int, max_kicks: jax.Array, completions: tuple = DEFAULT_COMPLETIONS,
              kick_completions: tuple | None = None, offload: bool = False,
              best_second: bool = False):
    """Coordinated changes that no single change reaches (a 2-opt whose
    second change is a whole 1-opt pass): from a game no single change
    improves, each *kick* (one move changed to another plan,
    ``plan_changes``, least slow first) is completed by a ``polish_pass``
    with that move frozen, so the pass can change any other move, before or
    after it, but not undo the kick. Kicks run ``chunk`` at a time (vmapped)
    until a chunk holds a game faster than ``t``, the kicks run out or
    ``max_kicks`` were tried; the fastest game found replaces the game when
    it saves time. Why every kick and not the least slow few: on the
    validation misses the kicks that lead to CP-SAT's optimum were among the
    slowest single changes (a buffer kept that displaces others), so their
    time does not rank them. The kicks' passes complete games with
    ``kick_completions`` (default ``completions``; ``PAIR_KICK_COMPLETIONS``
    says why "own" alone). ``best_second``: a kick is completed instead
    by its best single change at another move (every move and plan tried
    from the kicked game, the fastest taken: an exact 2-exchange, where the
    first-improvement pass can take an earlier change that blocks the one
    the kick needs; as costly as the pass). Returns ``(actions, time)``;
    the time never increases."""
    M = actions.shape[0]
    P = game.NUM_PLANS
    kicks = kick_completions or completions
    bt, ba = plan_changes(sf, g, actions, completions, offload)
    flat_t, flat_a = bt.reshape(-1), ba.reshape(M * P, M)
    order = jnp.argsort(flat_t)
    n_kicks = jnp.minimum(jnp.sum(jnp.isfinite(flat_t)), max_kicks)

    def cond(c):
        j, best_t, _ = c
        return (j * chunk < n_kicks) & (best_t >= t * (1 - POLISH_MIN_GAIN))

    def exact_second(k, a0, t0):
        return best_second_change(sf, g, a0, k, t0, kicks, offload)[:2]

    def polished_kick(k, a0, t0):
        return polish_pass(sf, g, a0, t0, kicks, frozen=k, offload=offload)

    complete = exact_second if best_second else polished_kick

    def body(c):
        j, best_t, best_a = c
        idx = jax.lax.dynamic_slice(order, (j * chunk,), (chunk,))
        live = (j * chunk + jnp.arange(chunk)) < n_kicks
        a_k, t_k = jax.vmap(complete)(idx // P, flat_a[idx], flat_t[idx])
        t_k = jnp.where(live & jnp.isfinite(flat_t[idx]), t_k, jnp.inf)
        m = jnp.argmin(t_k)
        better = t_k[m] < best_t
        return (j + 1, jnp.where(better, t_k[m], best_t),
                jnp.where(better, a_k[m], best_a))

    _, best_t, best_a = jax.lax.while_loop(cond, body, (jnp.int32(0), t, actions))
    gain = best_t < t * (1 - POLISH_MIN_GAIN)
    return jnp.where(gain, best_a, actions), jnp.where(gain, best_t, t)


def best_second_change(sf: F.Static, g: game.GameArrays, actions: jax.Array, k, t,
                       completions: tuple, offload: bool = False):
    """The kicked game ``actions`` (time ``t``, move ``k`` kicked) with its
    best single change at another move (``plan_changes``), if faster: the
    completion of a kick in ``pair_pass(best_second=True)``. Returns
    ``(actions, time, the change's index move * NUM_PLANS + plan or -1 where
    none is faster)``."""
    M, P = actions.shape[0], game.NUM_PLANS
    bt, ba = plan_changes(sf, g, actions, completions, offload)
    flat = bt.at[k].set(jnp.inf).reshape(-1)
    j = jnp.argmin(flat)
    better = flat[j] < t
    return (jnp.where(better, ba.reshape(M * P, M)[j], actions), jnp.minimum(flat[j], t),
            jnp.where(better, j, -1))


#: The completions of a kick's polish pass in the pair stage (``pair_pass``):
#: the game's own later moves, as they are or with slow ones upgraded, not
#: the heuristic's rollout: about half the cost of all four completions for
#: the same games, where "own" alone misses kicks (the coordinated change of
#: test_pair_stage_finds_coordinated_changes_that_1opt_cannot). An
#: improvement is then polished with every completion.
PAIR_KICK_COMPLETIONS = ("own", "upgrade")


@functools.partial(jax.jit, static_argnames=("chunk", "completions", "kick_completions",
                                             "offload", "best_second"))
def pair_batch(arrays, static, actions, rounds=2, passes=2, max_kicks=1 << 30, chunk: int = 16,
               completions: tuple = COMPLETIONS, kick_completions: tuple | None = None,
               offload: bool = False, best_second: bool = False):
    """Up to ``rounds`` rounds of ``pair_pass`` (at most ``max_kicks``
    kicks each, ``chunk`` at a time, each completed with ``kick_completions``) over every game of the batch
    (``actions`` [N, M]: polished games), each improvement followed by up to
    ``passes`` polish passes (1-opt) from the new game; stops where a round
    found nothing (``best_second``: ``pair_pass``'s). ``offload``: every
    instance is in offload mode (``tried_actions`` and ``game.offload_mode``:
    the same games, less work). Returns the final states and their actions; no game gets
    slower."""
    def one(sf, g, acts):
        g = game.offload_mode(g) if offload else g
        acts = legal_actions_played(g, acts)
        t0 = game.estimated_time(g, _replay(g, acts).choice)

        def cond(c):
            r, _, _, moved = c
            return (r < rounds) & moved

        def body(c):
            r, acts, t, _ = c
            acts2, t2 = pair_pass(sf, g, acts, t, chunk, max_kicks, completions,
                                  kick_completions, offload, best_second)
            moved = t2 < t
            acts2, t2 = _polish_passes(sf, g, acts2, t2, jnp.where(moved, passes, 0),
                                       completions, offload)
            return r + 1, acts2, t2, moved

        return jax.lax.while_loop(cond, body, (jnp.int32(0), acts, t0, jnp.bool_(True)))[1]

    acts = jax.vmap(one)(static, arrays, actions)
    return replay_batch(arrays, acts), acts


@functools.partial(jax.jit, static_argnames=("completions", "offload"))
def polish_batch(arrays, static, actions, passes=2, completions: tuple = DEFAULT_COMPLETIONS,
                 offload: bool = False):
    """Up to ``passes`` polish passes (``polish_pass``) over every game of
    the batch (``actions`` [N, M]: the games' moves), stopping early where
    a pass found nothing (``passes`` is traced: one compile for any count;
    ``offload``: every instance is in offload mode, ``tried_actions`` and
    ``game.offload_mode``).
    Returns the final states of the polished games (their ``time``
    estimated) and their actions."""
    def one(sf, g, acts):
        g = game.offload_mode(g) if offload else g
        acts = legal_actions_played(g, acts)
        t0 = game.estimated_time(g, _replay(g, acts).choice)
        return _polish_passes(sf, g, acts, t0, passes, completions, offload)[0]

    acts = jax.vmap(one)(static, arrays, actions)
    return replay_batch(arrays, acts), acts


def _replay(g, acts) -> game.State:
    """The final state of playing ``acts`` from the start (``game.advance``:
    an illegal move plays slow)."""
    last = acts.shape[0] - 1
    return jax.lax.while_loop(lambda st: ~st.done,
                              lambda st: game.advance(st, acts[jnp.minimum(st.step, last)]),
                              game.init(g))


def legal_actions_played(g, acts):
    """``acts`` with every move that ``game.advance`` would replace by slow
    (illegal where it is played) written as 0: the moves the game really
    made, so that a repaired replay of them is the same game."""
    last = acts.shape[0] - 1

    def body(c):
        st, acts = c
        i = jnp.minimum(st.step, last)
        a = jnp.where(game.legal_actions(st)[acts[i]], acts[i], 0)
        return game.advance(st, a), acts.at[i].set(a)

    return jax.lax.while_loop(lambda c: ~c[0].done, body, (game.init(g), acts))[1]


@jax.jit
def replay_batch(arrays, actions):
    """The final states of playing ``actions`` [N, M] from the start (time estimated)."""
    def one(g, acts):
        end = _replay(g, acts)
        return end._replace(time=game.estimated_time(g, end.choice))
    return jax.vmap(one)(arrays, actions)


def _evaluate(net, static, states, uniform: bool, value_mode: str = "zero"):
    """The prior logits, leaf values (``VALUE_MODES``) and legal actions of ``states``."""
    if value_mode not in VALUE_MODES:
        raise ValueError(f"value_mode {value_mode!r}: expected one of {VALUE_MODES}")
    logits, value, legal = jax.vmap(network.apply, (None, 0, 0))(net, static, states)
    if uniform:
        logits = jnp.where(legal, 0.0, network.NEG)
    if value_mode == "rollout":
        value = jax.vmap(rollout_value)(static, states)
    else:
        value = jnp.zeros_like(value)
    return logits, jnp.where(states.done, 0.0, value), legal


def _recurrent_fn(uniform: bool, value_mode: str):
    mctx = require("mctx", "the learned memory-space player")

    def fn(params, rng, action, emb):
        net, arrays, static = params
        nxt, reward, done = jax.vmap(game.step)(emb._replace(inst=arrays), action)
        logits, value, _ = _evaluate(net, static, nxt, uniform, value_mode)
        out = mctx.RecurrentFnOutput(reward=reward / static.scale,
                                     discount=jnp.where(done, 0.0, 1.0).astype(jnp.float32),
                                     prior_logits=logits, value=value)
        return out, _strip(nxt)
    return fn


def search_moves(net, arrays, static, states, key, *, num_simulations: int,
                 uniform: bool = False, gumbel_scale: float = 1.0, max_considered: int = 16,
                 value_mode: str = "zero", value_scale: float = 0.1,
                 hint_root: bool = False, return_tree: bool = False):
    """One search per state of the batch: ``(action [N], improved policy [N, A])``
    (with ``return_tree``, also mctx's search tree).
    ``hint_root``: the heuristic's move gets the root's top prior logit, so
    it is always among the considered actions (with a rollout value and a
    large ``value_scale`` the search then never plays worse than the
    heuristic's plans from the root on)."""
    mctx = require("mctx", "the learned memory-space player")
    logits, value, legal = _evaluate(net, static, states, uniform, value_mode)
    if hint_root:
        logits = jax.vmap(_promote_hint)(static, states, logits, legal)
    root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=_strip(states))
    out = mctx.gumbel_muzero_policy(
        params=(net, arrays, static), rng_key=key, root=root,
        recurrent_fn=_recurrent_fn(uniform, value_mode), num_simulations=num_simulations,
        invalid_actions=~legal, max_num_considered_actions=max_considered,
        qtransform=functools.partial(mctx.qtransform_completed_by_mix_value,
                                     value_scale=value_scale),
        gumbel_scale=gumbel_scale)
    if return_tree:
        return out.action, out.action_weights, out.search_tree
    return out.action, out.action_weights


def tree_best_game(sf: F.Static, g: game.GameArrays, s: game.State, tree, prefix: jax.Array):
    """The fastest complete game a search evaluated: every node the search
    expanded (the root included) was valued by the heuristic's rollout from
    it (``rollout_value``), i.e. by one complete game: the moves already
    played (``prefix`` [M], valid before ``s.step``), the tree's path to the
    node and the rollout from there. ``tree``: one game's search tree (with
    the rollout leaf value). Returns ``(estimated time, actions [M])`` of
    the best such game, its time recomputed exactly from its moves."""
    end_time = tree.embeddings.time - tree.raw_values * sf.scale
    end_time = jnp.where(tree.node_visits > 0, end_time, jnp.inf)
    best = jnp.argmin(end_time)
    last = prefix.shape[0] - 1

    def walk(_, c):
        n, acts = c
        up = n != tree.ROOT_INDEX
        i = jnp.clip(tree.embeddings.step[n] - 1, 0, last)
        acts = jnp.where(up, acts.at[i].set(tree.action_from_parent[n]), acts)
        return jnp.where(up, tree.parents[n], n), acts

    depth = tree.node_visits.shape[0]
    _, acts = jax.lax.fori_loop(0, depth, walk, (best, prefix))
    node = jax.tree.map(lambda x: x[best], tree.embeddings)._replace(inst=g)
    return rollout_actions(sf, node, acts)


def keep_best(inc_time, inc_actions, t, acts):
    """The faster of the incumbent and a complete game ``(t, acts)``."""
    better = t < inc_time
    return jnp.where(better, t, inc_time), jnp.where(better, acts, inc_actions)


def hint_action(sf: F.Static, s: game.State) -> jax.Array:
    """The action of the heuristic's plan for the buffer to decide (lowest offset)."""
    p = hint_plans(sf)[F.current_buffer(s)]
    return jnp.where(p > 0, 1 + (p - 1) * game.NUM_OFFSETS, 0)


def _promote_hint(sf, s, logits, legal):
    a = hint_action(sf, s)
    top = jnp.max(jnp.where(legal, logits, network.NEG))
    return jnp.where(legal[a], logits.at[a].set(jnp.maximum(logits[a], top)), logits)


#: How a search's move is chosen at the root (``play_batch(root_rule=)``).
#: "mean": mctx's choice, the considered action of highest prior logit +
#: scaled Q (with ``gumbel_scale=0``), a Q being the *mean* return of the
#: simulations through the action: the rule for stochastic games or inexact
#: values. In this game both the model and a rollout leaf value are exact,
#: so every expanded node stands for one complete game (``tree_best_game``)
#: and a move is worth the best game known through it (a max backup): "max"
#: plays the first move of the fastest game this search evaluated; "max_kept"
#: also remembers the fastest game of the earlier searches (it passes through
#: the current state: the game is deterministic and its moves were played)
#: and plays its move unless this search found a faster one: the best line
#: is carried from one search to the next, as a reused tree would carry it
#: (mctx builds a fresh tree per move). With a mean, a deeper simulation
#: that finds a faster game through a move raises that move's Q, and the
#: next search, which may not find that game again, can end slower than the
#: heuristic; "max" can lose the game the same way, "max_kept"
#: cannot (its first game is the heuristic's, the root's own rollout).
ROOT_RULES = ("mean", "max", "max_kept")


def _move_at(acts, states, M):
    """[N]: each game's move at its current step in ``acts`` [N, M]."""
    return jnp.take_along_axis(acts, jnp.minimum(states.step, M - 1)[:, None], 1)[:, 0]


def greedy_moves(net, static, states):
    logits, _, _ = _evaluate(net, static, states, False)
    return jnp.argmax(logits, axis=-1), jax.nn.softmax(logits)


def _empty_trajectory(arrays, M: int, A: int) -> Trajectory:
    N, B = arrays.order.shape
    T = arrays.op_valid.shape[1]
    return Trajectory(step=jnp.zeros((M, N), jnp.int32), choice=jnp.zeros((M, N, B), jnp.int32),
                      offset=jnp.zeros((M, N, B), jnp.int32), live=jnp.zeros((M, N, T), jnp.int32),
                      time=jnp.zeros((M, N), jnp.float32), policy=jnp.zeros((M, N, A), jnp.float32),
                      active=jnp.zeros((M, N), bool))


def _record(traj: Trajectory, i, states, policy) -> Trajectory:
    put = lambda buf, x: jax.lax.dynamic_update_index_in_dim(buf, x, i, 0)
    return Trajectory(step=put(traj.step, states.step), choice=put(traj.choice, states.choice),
                      offset=put(traj.offset, states.offset), live=put(traj.live, states.live),
                      time=put(traj.time, states.time), policy=put(traj.policy, policy),
                      active=put(traj.active, ~states.done))


def play_batch(net, arrays, static, key, *, num_simulations: int = 0, uniform: bool = False,
               record: bool = False, gumbel_scale: float = 1.0, max_considered: int = 16,
               value_mode: str = "zero", value_scale: float = 0.1,
               hint_root: bool = False, best: bool = False,
               root_rule: str = "mean", seed_games=None, fast: bool = True):
    """Plays every game of the batch to the end. ``num_simulations=0`` plays
    the network's argmax (without ``record``, on games of at least
    ``argmax.FAST_MIN_MOVES`` moves: by ``argmax.play_batch``, the same moves
    incrementally, unless ``fast=False``). ``best`` (a search with the
    rollout value): also keep, beside the game played, the fastest complete
    game seen: the heuristic's game, and every game a search evaluated
    (``tree_best_game``: the searches' trees and the rollouts from their
    nodes; the last search's tree holds the played game itself).
    ``root_rule`` (``ROOT_RULES``): how a search's move is chosen;
    "max_kept" implies ``best`` (the best games are its memory).
    ``seed_games`` (with ``best``): complete games ``(estimated time [N],
    actions [N, M])`` known before the search (the policy's argmax games),
    kept from the start beside the heuristic's; with "max_kept" the search
    then follows the faster of them until it finds a faster game.
    Returns ``(final states, trajectory or None, actions played [N, M],
    best games or None)``; the best games: ``(estimated time [N], actions
    [N, M])``, never slower than the heuristic's game, the seed games or
    the played game.

    ``best``, ``root_rule`` and whether seed games are given are traced,
    not compile-time, choices (``_play_batch``): a search compiles once for
    all of them (bench and tests compare the rules)."""
    if num_simulations == 0 and not record and fast:
        from . import argmax
        if arrays.order.shape[1] >= argmax.FAST_MIN_MOVES:
            return argmax.play_batch(net, arrays, static)
    if root_rule not in ROOT_RULES:
        raise ValueError(f"root_rule {root_rule!r}: expected one of {ROOT_RULES}")
    by_max = root_rule != "mean"
    best = best or root_rule == "max_kept"
    if (best or by_max) and (num_simulations == 0 or value_mode != "rollout"):
        raise ValueError(f"best=True / root_rule={root_rule!r} needs a search with the "
                         "rollout value (its leaf values are complete games)")
    if seed_games is not None and not (best or root_rule == "max_kept"):
        raise ValueError("seed_games needs best=True or root_rule='max_kept'")
    # every search carries a complete game from move to move (the best game
    # kept; unused by mctx's own rule), so that the rules share one compile
    carried = num_simulations > 0
    if carried and seed_games is None:
        N, M = arrays.order.shape
        seed_games = (jnp.full((N,), jnp.inf, jnp.float32), jnp.zeros((N, M), jnp.int32))
    states, traj, played, inc = _play_batch(
        net, arrays, static, key, seed_games, jnp.bool_(best),
        jnp.int32(ROOT_RULES.index(root_rule)), num_simulations=num_simulations,
        uniform=uniform, record=record, gumbel_scale=gumbel_scale,
        max_considered=max_considered, value_mode=value_mode, value_scale=value_scale,
        hint_root=hint_root, carried=carried)
    return states, traj, played, inc if best else None


@functools.partial(jax.jit, static_argnames=("num_simulations", "uniform", "record",
                                             "gumbel_scale", "max_considered", "value_mode",
                                             "value_scale", "hint_root", "carried"))
def _play_batch(net, arrays, static, key, seed_games, best, rule, *,
                num_simulations: int, uniform: bool, record: bool, gumbel_scale: float,
                max_considered: int, value_mode: str, value_scale: float, hint_root: bool,
                carried: bool):
    """``play_batch`` with ``best`` (a bool) and ``rule`` (the root rule's
    index in ``ROOT_RULES``) traced: each move's branches are
    chosen by ``lax.cond`` / ``where`` on them. ``carried``: a complete game
    (``seed_games``: the first candidates beside the heuristic's) is carried
    from move to move."""
    states = jax.vmap(game.init)(arrays)
    M = arrays.order.shape[1]
    A = 1 + (game.NUM_PLANS - 1) * game.NUM_OFFSETS
    traj = _empty_trajectory(arrays, M, A) if record else None
    # the argmax policy needs no reward per move: the time is estimated once,
    # at the end (one cost-model pass per game, not one per move)
    lazy_time = num_simulations == 0 and not record
    # tree_best_game needs leaf values that are complete games (the rollout)
    trees = num_simulations > 0 and value_mode == "rollout"
    if carried:
        inc = jax.vmap(rollout_actions)(static, states, jnp.zeros((M,), jnp.int32)
                                        + jnp.zeros((states.step.shape[0], 1), jnp.int32))
        seeded = jax.vmap(keep_best)(*inc, *seed_games)
        inc = jax.tree.map(lambda a, b: jnp.where(best, a, b), seeded, inc)
    else:
        inc = None

    def body(carry):
        i, states, key, traj, inc, played = carry
        key, sub = jax.random.split(key)
        tree = None
        if num_simulations > 0:
            action, policy, tree = search_moves(
                net, arrays, static, states, sub, num_simulations=num_simulations,
                uniform=uniform, gumbel_scale=gumbel_scale, max_considered=max_considered,
                value_mode=value_mode, value_scale=value_scale, hint_root=hint_root,
                return_tree=True)
        else:
            action, policy = greedy_moves(net, static, states)
        if carried:
            action, inc = _carry_games(static, arrays, states, tree if trees else None,
                                       played, action, inc, best, rule, M)
        if record:
            traj = _record(traj, i, states, policy)
        played = played.at[:, jnp.minimum(i, M - 1)].set(
            jnp.where(states.done, played[:, jnp.minimum(i, M - 1)], action))
        if lazy_time:
            states = jax.vmap(game.advance)(states, action)
        else:
            states, _, _ = jax.vmap(game.step)(states, action)
        return i + 1, states, key, traj, inc, played

    def cond(carry):
        i, states = carry[0], carry[1]
        return (i < M) & ~jnp.all(states.done)

    played = jnp.zeros((states.step.shape[0], M), jnp.int32)
    _, states, _, traj, inc, played = jax.lax.while_loop(
        cond, body, (jnp.int32(0), states, key, traj, inc, played))
    if lazy_time:
        states = states._replace(time=jax.vmap(game.estimated_time)(arrays, states.choice))
    return states, traj, played, inc


def _carry_games(static, arrays, states, tree, played, action, inc, best, rule, M):
    """One move's root rule and carried game (``play_batch``): with a tree,
    the search's best evaluated game (``tree_best_game``; "max" plays its
    move), kept when faster (``best``; "max_kept" plays the kept game's
    move). Returns ``(action, carried game)``; branches not taken are skipped."""
    if tree is not None:
        t, acts = jax.lax.cond(best | (rule > 0),
                               lambda: jax.vmap(tree_best_game)(static, arrays, states, tree,
                                                                played),
                               lambda: inc)
        action = jnp.where(rule == ROOT_RULES.index("max"), _move_at(acts, states, M), action)
        t, acts = jax.vmap(keep_best)(*inc, t, acts)
        kept = (jnp.where(states.done, inc[0], t), jnp.where(states.done[:, None], inc[1], acts))
        inc = jax.tree.map(lambda a, b: jnp.where(best, a, b), kept, inc)
        action = jnp.where(rule == ROOT_RULES.index("max_kept"), _move_at(inc[1], states, M),
                           action)
    return action, inc


def stack(items):
    """Stacks equally shaped pytrees (one per instance) into a batch."""
    return jax.tree.map(lambda *xs: jnp.stack(xs), *items)


def unstack(tree, i):
    return jax.tree.map(lambda x: x[i], tree)


def value_targets(traj: Trajectory, final_time, scale):
    """The fraction of T0 each recorded state still saved by the game's end."""
    return jnp.where(traj.active, (traj.time - final_time[None]) / scale[None], 0.0)


def pad_access(spec, width: int):
    """Pads the game's per-op access table to ``width`` columns (so that
    instances with fewer accesses per op share a shape class)."""
    acc = spec.arrays.acc
    if acc.shape[1] > width:
        raise ValueError(f"{spec.inst.program}: an op accesses up to {acc.shape[1]} "
                         f"buffers > {width}")
    acc = jnp.pad(acc, ((0, 0), (0, width - acc.shape[1])), constant_values=-1)
    spec.arrays = spec.arrays._replace(acc=acc)
    return spec


def canonical_width(width: int) -> int:
    """The access-table widths the player compiles for: 16, 64, else as is
    (fewer shape classes, fewer compiles)."""
    return 16 if width <= 16 else 64 if width <= 64 else width


def encode_padded(inst, access_width: int | None = None):
    """The game spec and static features of ``inst``, the access table
    padded to ``access_width`` when given."""
    spec = game.encode(inst)
    sf = F.static_features(spec)
    if access_width is not None:
        pad_access(spec, access_width)
    return spec, sf


def shape_class(spec, sf=None) -> tuple:
    """(buffer bucket, op bucket, access width[, edge-list length])."""
    g = spec.arrays
    key = (g.order.shape[0], g.op_valid.shape[0], g.acc.shape[1])
    return key if sf is None else key + (sf.edge_op.shape[0],)
