"""The mallocGame as a pure jax.numpy environment (jit- and vmap-able).

One move decides one buffer, in a fixed order (the heuristic's
memory-boundedness order): the player picks one of the buffer's menu plans
(plans.py: slow, keep, split = evict + prefetch back, prefetch from slow) and,
in placement mode, one of ``K`` candidate offsets: the ``K`` lowest offsets
among 0 and the tops of the rectangles already placed that overlap the plan
in time, at which the buffer overlaps nothing (a skyline over the plan's
residency). Action 0 is "slow" and is always legal.

Action ``a``: 0 = slow; ``1 + (p - 1) * K + k`` = plan ``p`` (menu index
``p >= 1``) at the ``k``-th candidate offset (offload mode: ``k = 0`` only,
capacity checked per op).

Reward: the estimated time saved by the move, ``time(before) - time(after)``,
where unassigned buffers count as slow; the rewards of a game sum to
``time(all slow) - time(final)``, the time saved vs all-slow. The time is the
validator's cost model (model.py) evaluated over fixed-shape arrays: its
terms (copy and compute seconds) are taken from model.py when the instance is
encoded; op durations follow its roofline, then one ``lax.scan`` over the events
(prefetch issues, ops, eviction issues) in the order ``(op, phase, use,
buffer)``, with one FIFO queue per copy direction. After the last buffer the
state is absorbing: every action is a no-op with reward 0.

Shapes are fixed per *bucket*: buffers are padded to the next of
``BUFFER_BUCKETS`` and ops to the next of ``OP_BUCKETS``, so instances of the
same bucket share one compiled step and can be batched with ``vmap``. The
state keeps per-buffer arrays (plan, offset) and per-op resident bytes, not
a time x address grid. Byte counts are stored in units of the gcd of the
sizes (exact int32 arithmetic).

Functions: ``encode(inst) -> GameSpec`` (host side, numpy), ``init(arrays)``,
``legal_actions(state)``, ``step(state, action) -> (state, reward, done)``,
``spec.solution(state)`` (back to the solution format, for the validator).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .instance import Instance
from .model import compute_seconds, copy_seconds
from .order import buffer_order
from .plans import MenuPlan, build_menus
from .solution import NOTES, BufferAssignment, Solution

BUFFER_BUCKETS = (64, 256, 1024, 2048, 4096)
OP_BUCKETS = (64, 256, 1024, 2048, 4096)
NUM_PLANS = 8          # menu entries per buffer (index 0 = slow)
NUM_OFFSETS = 4        # candidate offsets per plan in placement mode
_BIG = 1 << 30


class GameArrays(NamedTuple):
    # scalars
    n_buffers: jax.Array        # int32: real buffers (moves in a game)
    capacity: jax.Array         # int32: capacity in units
    placement: jax.Array        # bool
    overlap: jax.Array          # bool: copies overlap compute
    fast_bw: jax.Array          # float32
    slow_bw: jax.Array          # float32
    # buffers [B]
    order: jax.Array            # int32: buffer decided at each move
    size_units: jax.Array       # int32
    size_bytes: jax.Array       # float32
    # plans [B, P]
    plan_valid: jax.Array       # bool
    home_lo: jax.Array          # int32 (empty: lo > hi)
    home_hi: jax.Array
    has_pf: jax.Array           # bool
    win_s: jax.Array            # int32: window residency [win_s, win_hi]
    win_u: jax.Array            # int32: first prefetched use
    win_hi: jax.Array
    evict: jax.Array            # int32: eviction after this op, -1 none
    pf_dur: jax.Array           # float32 seconds
    ev_dur: jax.Array           # float32 seconds
    # ops [T]
    op_valid: jax.Array         # bool
    compute: jax.Array          # float32: flops / F (one execution)
    weight: jax.Array           # float32
    acc: jax.Array              # int32 [T, A]: accessed buffers, -1 padding


class State(NamedTuple):
    inst: GameArrays
    step: jax.Array             # int32: moves made
    choice: jax.Array           # int32 [B]: menu index (0 = slow)
    offset: jax.Array           # int32 [B]: offset in units (-1 none)
    live: jax.Array             # int32 [T]: resident units per op
    time: jax.Array             # float32: estimated time now
    done: jax.Array             # bool


def _bucket(n: int, buckets) -> int:
    for b in buckets:
        if n <= b:
            return b
    return int(2 ** math.ceil(math.log2(max(n, 1))))


@dataclass
class GameSpec:
    """Host-side companion of GameArrays: the menus and the unit of bytes."""
    inst: Instance
    arrays: GameArrays
    menus: list[list[MenuPlan]]
    order: list[int]
    unit: int
    num_offsets: int

    @property
    def num_actions(self) -> int:
        return 1 + (NUM_PLANS - 1) * self.num_offsets

    def solution(self, state: State, method: str = "game") -> Solution:
        choice = np.asarray(state.choice)
        offset = np.asarray(state.offset)
        out = []
        for b in range(self.inst.num_buffers):
            m = self.menus[b][int(choice[b])]
            off = int(offset[b]) * self.unit if (self.inst.mode == "placement" and m.kind != "slow") else None
            out.append(m.assignment(b, off))
        return Solution(self.inst.mode, method, out, NOTES[self.inst.mode])

    def action_of(self, b: int, assignment: BufferAssignment, state: State) -> int | None:
        """The action that plays ``assignment`` for buffer b from ``state``
        (None if the plan or the offset is not on offer)."""
        from .plans import menu_index
        p = menu_index(self.menus[b], assignment)
        if p is None:
            return None
        if p == 0:
            return 0
        if self.inst.mode != "placement":
            a = 1 + (p - 1) * self.num_offsets
            return a if bool(legal_actions(state)[a]) else None
        cands = np.asarray(_candidates(state)[0])
        for k in range(self.num_offsets):
            if int(cands[p - 1, k]) * self.unit == assignment.offset:
                return 1 + (p - 1) * self.num_offsets + k
        return None


def encode(inst: Instance, *, order: list[int] | None = None,
           buffer_buckets=BUFFER_BUCKETS, op_buckets=OP_BUCKETS) -> GameSpec:
    n, T = inst.num_buffers, inst.num_ops
    B = _bucket(n, buffer_buckets)
    TT = _bucket(T, op_buckets)
    A = _bucket(max([len(inst.accesses(t)) for t in range(T)] + [1]), (4, 8, 16, 32))
    K = NUM_OFFSETS   # the same action layout in both modes (offload: k = 0 only)
    _, menus = build_menus(inst)
    if any(len(m) > NUM_PLANS for m in menus):
        raise ValueError(f"a menu has more than {NUM_PLANS} plans")
    order = list(order) if order is not None else buffer_order(inst)
    unit = 0
    for b in inst.buffers:
        unit = math.gcd(unit, b.size)
    unit = max(unit, 1)
    cap_units = inst.capacity // unit
    total_units = sum(b.size for b in inst.buffers) // unit
    if max(cap_units, total_units) >= 2**31 - 1:
        raise ValueError("instance too large for int32 byte units "
                         f"(unit {unit} B, {total_units} units)")

    def z(shape, v, dt):
        return np.full(shape, v, dtype=dt)

    plan_valid = z((B, NUM_PLANS), False, bool)
    home_lo, home_hi = z((B, NUM_PLANS), 1, np.int32), z((B, NUM_PLANS), 0, np.int32)
    has_pf = z((B, NUM_PLANS), False, bool)
    win_s, win_u, win_hi = (z((B, NUM_PLANS), 1, np.int32), z((B, NUM_PLANS), _BIG, np.int32),
                            z((B, NUM_PLANS), 0, np.int32))
    evict = z((B, NUM_PLANS), -1, np.int32)
    pf_dur, ev_dur = z((B, NUM_PLANS), 0.0, np.float32), z((B, NUM_PLANS), 0.0, np.float32)
    size_units, size_bytes = z(B, 0, np.int32), z(B, 0.0, np.float32)
    plan_valid[:, 0] = True
    for b, buf in enumerate(inst.buffers):
        size_units[b] = buf.size // unit
        size_bytes[b] = buf.size
        for p, m in enumerate(menus[b]):
            plan_valid[b, p] = True
            pl = m.plan(inst, b)
            if pl.home:
                home_lo[b, p], home_hi[b, p] = pl.home
            if pl.windows:
                (s, u, r), = pl.windows
                has_pf[b, p] = True
                win_s[b, p], win_u[b, p], win_hi[b, p] = s, u, r
                pf_dur[b, p] = copy_seconds(inst, b, u)
            if pl.evict is not None:
                evict[b, p] = pl.evict
                ev_dur[b, p] = copy_seconds(inst, b, pl.evict)
    order_arr = np.array(order + list(range(n, B)), dtype=np.int32)
    op_valid = z(TT, False, bool)
    op_valid[:T] = True
    compute = z(TT, 0.0, np.float32)
    weight = z(TT, 0.0, np.float32)
    acc = z((TT, A), -1, np.int32)
    for t, op in enumerate(inst.ops):
        compute[t] = compute_seconds(inst, t)
        weight[t] = op.weight
        for i, b in enumerate(inst.accesses(t)):
            acc[t, i] = b
    dev = inst.device
    arrays = GameArrays(
        n_buffers=jnp.int32(n), capacity=jnp.int32(cap_units),
        placement=jnp.bool_(inst.mode == "placement"),
        overlap=jnp.bool_(dev.copy_overlaps_compute),
        fast_bw=jnp.float32(dev.fast_bandwidth), slow_bw=jnp.float32(dev.slow_bandwidth),
        order=jnp.asarray(order_arr), size_units=jnp.asarray(size_units),
        size_bytes=jnp.asarray(size_bytes), plan_valid=jnp.asarray(plan_valid),
        home_lo=jnp.asarray(home_lo), home_hi=jnp.asarray(home_hi), has_pf=jnp.asarray(has_pf),
        win_s=jnp.asarray(win_s), win_u=jnp.asarray(win_u), win_hi=jnp.asarray(win_hi),
        evict=jnp.asarray(evict), pf_dur=jnp.asarray(pf_dur), ev_dur=jnp.asarray(ev_dur),
        op_valid=jnp.asarray(op_valid), compute=jnp.asarray(compute),
        weight=jnp.asarray(weight), acc=jnp.asarray(acc))
    return GameSpec(inst, arrays, menus, order, unit, K)


# -- the cost model over arrays ------------------------------------------------

def _pick(a: jax.Array, choice: jax.Array) -> jax.Array:
    return jnp.take_along_axis(a, choice[:, None], axis=1)[:, 0]


def estimated_time(g: GameArrays, choice: jax.Array) -> jax.Array:
    """The validator's estimated time for per-buffer menu choices (float32)."""
    B = g.order.shape[0]
    T = g.op_valid.shape[0]
    hlo, hhi = _pick(g.home_lo, choice), _pick(g.home_hi, choice)
    pf, ws, wu, whi = _pick(g.has_pf, choice), _pick(g.win_s, choice), _pick(g.win_u, choice), \
        _pick(g.win_hi, choice)
    ev, pfd, evd = _pick(g.evict, choice), _pick(g.pf_dur, choice), _pick(g.ev_dur, choice)

    t_idx = jnp.arange(T)[:, None]
    accb = jnp.maximum(g.acc, 0)
    avalid = g.acc >= 0
    fast = ((hlo[accb] <= t_idx) & (t_idx <= hhi[accb])) | \
        (pf[accb] & (wu[accb] <= t_idx) & (t_idx <= whi[accb]))
    bw = jnp.where(fast, g.fast_bw, g.slow_bw)
    mem = jnp.sum(jnp.where(avalid, g.size_bytes[accb] / bw, 0.0), axis=1)
    dur = g.weight * jnp.maximum(g.compute, mem)
    # prefetch uses: op t waits for pf_done[b] of accessed b whose window use is t
    waits_on = avalid & pf[accb] & (wu[accb] == t_idx)

    # events: [prefetches B | ops T | evictions B]
    bidx = jnp.arange(B, dtype=jnp.int32)
    real_b = bidx < g.n_buffers
    pf_ok = pf & real_b
    ev_ok = (ev >= 0) & real_b
    t_key = jnp.concatenate([jnp.where(pf_ok, ws, _BIG), jnp.where(g.op_valid, jnp.arange(T), _BIG),
                             jnp.where(ev_ok, ev, _BIG)]).astype(jnp.int32)
    phase = jnp.concatenate([jnp.zeros(B, jnp.int32), jnp.ones(T, jnp.int32),
                             jnp.full(B, 2, jnp.int32)])
    u_key = jnp.concatenate([jnp.where(pf_ok, wu, 0), jnp.zeros(T, jnp.int32),
                             jnp.zeros(B, jnp.int32)]).astype(jnp.int32)
    idx = jnp.concatenate([bidx, jnp.arange(T, dtype=jnp.int32), bidx])
    kind = phase
    order = jnp.lexsort((idx, u_key, phase, t_key))
    valid = t_key < _BIG

    def body(carry, e):
        clock, qh, qd, pf_done, ev_done = carry
        k, i, ok = kind[e], idx[e], valid[e]
        bi = jnp.minimum(i, B - 1)
        ti = jnp.minimum(i, T - 1)
        # prefetch
        st_pf = jnp.where(g.overlap, jnp.maximum(jnp.maximum(clock, qh), ev_done[bi]),
                          jnp.maximum(clock, ev_done[bi]))
        done_pf = st_pf + pfd[bi]
        # op
        w = jnp.max(jnp.where(waits_on[ti], pf_done[accb[ti]], 0.0))
        clock_op = jnp.maximum(clock, w) + dur[ti]
        # eviction
        st_ev = jnp.where(g.overlap, jnp.maximum(clock, qd), clock)
        done_ev = st_ev + evd[bi]

        is_pf, is_op, is_ev = ok & (k == 0), ok & (k == 1), ok & (k == 2)
        clock2 = jnp.where(is_op, clock_op, clock)
        clock2 = jnp.where(is_pf & ~g.overlap, done_pf, clock2)
        clock2 = jnp.where(is_ev & ~g.overlap, done_ev, clock2)
        qh2 = jnp.where(is_pf & g.overlap, done_pf, qh)
        qd2 = jnp.where(is_ev & g.overlap, done_ev, qd)
        # one-element updates (dynamic-update-slice), not whole-array selects
        pf_done2 = pf_done.at[bi].set(jnp.where(is_pf, done_pf, pf_done[bi]))
        ev_done2 = ev_done.at[bi].set(jnp.where(is_ev, done_ev, ev_done[bi]))
        return (clock2, qh2, qd2, pf_done2, ev_done2), None

    z = jnp.float32(0.0)
    init = (z, z, z, jnp.zeros(B, jnp.float32), jnp.zeros(B, jnp.float32))
    (clock, qh, qd, _, _), _ = jax.lax.scan(body, init, order)
    return jnp.maximum(clock, jnp.maximum(qh, qd))


# -- the game -----------------------------------------------------------------

def init(g: GameArrays) -> State:
    B = g.order.shape[0]
    choice = jnp.zeros(B, jnp.int32)
    return State(inst=g, step=jnp.int32(0), choice=choice, offset=jnp.full(B, -1, jnp.int32),
                 live=jnp.zeros(g.op_valid.shape[0], jnp.int32),
                 time=estimated_time(g, choice), done=g.n_buffers <= 0)


def _resident(g: GameArrays, b: jax.Array) -> jax.Array:
    """[P, T] bool: ops at which plan p of buffer b is resident."""
    t = jnp.arange(g.op_valid.shape[0])[None, :]
    home = (g.home_lo[b][:, None] <= t) & (t <= g.home_hi[b][:, None])
    win = g.has_pf[b][:, None] & (g.win_s[b][:, None] <= t) & (t <= g.win_hi[b][:, None])
    return home | win


def _overlaps(l1, h1, l2, h2):
    return (l1 <= h1) & (l2 <= h2) & (l1 <= h2) & (l2 <= h1)


def _candidates(s: State):
    """Candidate offsets [P-1, K] (units, -1 = none) and capacity-ok [P]."""
    g = s.inst
    B = g.order.shape[0]
    K = NUM_OFFSETS
    b = g.order[jnp.minimum(s.step, B - 1)]
    size = g.size_units[b]
    res = _resident(g, b)                                           # [P, T]
    cap_ok = ~jnp.any(res & (s.live[None, :] + size > g.capacity), axis=1) & g.plan_valid[b]
    # placed buffers' intervals
    placed = s.offset >= 0                                          # [B]
    jh_lo, jh_hi = _pick(g.home_lo, s.choice), _pick(g.home_hi, s.choice)
    jw_lo = jnp.where(_pick(g.has_pf, s.choice), _pick(g.win_s, s.choice), 1)
    jw_hi = jnp.where(_pick(g.has_pf, s.choice), _pick(g.win_hi, s.choice), 0)
    bh_lo, bh_hi = g.home_lo[b][1:, None], g.home_hi[b][1:, None]   # [P-1, 1]
    bw_lo = jnp.where(g.has_pf[b][1:, None], g.win_s[b][1:, None], 1)
    bw_hi = jnp.where(g.has_pf[b][1:, None], g.win_hi[b][1:, None], 0)
    conflict = placed[None, :] & (
        _overlaps(bh_lo, bh_hi, jh_lo[None], jh_hi[None]) | _overlaps(bh_lo, bh_hi, jw_lo[None], jw_hi[None])
        | _overlaps(bw_lo, bw_hi, jh_lo[None], jh_hi[None]) | _overlaps(bw_lo, bw_hi, jw_lo[None], jw_hi[None]))
    top = s.offset + g.size_units                                   # [B]
    cands = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.where(placed, top, _BIG)])   # [B+1]
    # candidate c is feasible for plan p iff c + size <= cap and every conflicting
    # rectangle that starts below c + size ends at or below c: with the
    # conflicting rectangles sorted by offset and a running max of their tops,
    # that is one searchsorted per candidate (O(P B log B), not O(P B^2)).
    o_key = jnp.where(conflict, s.offset[None, :], _BIG)            # [P-1, B]
    perm = jnp.argsort(o_key, axis=1)
    o_sorted = jnp.take_along_axis(o_key, perm, axis=1)
    t_sorted = jnp.take_along_axis(jnp.where(conflict, top[None, :], -1), perm, axis=1)
    run_max = jax.lax.cummax(t_sorted, axis=1)
    n_below = jax.vmap(lambda row: jnp.searchsorted(row, cands + size, side="left"))(o_sorted)
    m = jnp.where(n_below > 0,
                  jnp.take_along_axis(run_max, jnp.maximum(n_below - 1, 0), axis=1), -1)
    feas = (cands[None, :] + size <= g.capacity) & (cands[None, :] < _BIG) & (m <= cands[None, :])
    vals = jnp.where(feas, cands[None, :], _BIG)                    # [P-1, C]
    vals = jnp.sort(vals, axis=1)
    dup = jnp.concatenate([jnp.zeros((vals.shape[0], 1), bool), vals[:, 1:] == vals[:, :-1]], axis=1)
    vals = jnp.sort(jnp.where(dup, _BIG, vals), axis=1)
    padk = max(K - vals.shape[1], 0)
    vals = jnp.pad(vals, ((0, 0), (0, padk)), constant_values=_BIG)[:, :K]
    offs = jnp.where(vals < _BIG, vals, -1)
    return offs, cap_ok


def _legal_from(s: State, offs, cap_ok):
    g = s.inst
    K = NUM_OFFSETS
    P1 = NUM_PLANS - 1
    k = jnp.arange(K)[None, :]
    plan_ok = cap_ok[1:, None]
    place = plan_ok & (offs >= 0)
    off_mode = plan_ok & (k == 0)
    per = jnp.where(g.placement, place, off_mode).reshape(P1 * K)
    mask = jnp.concatenate([jnp.ones(1, bool), per])
    return jnp.where(s.done, jnp.arange(1 + P1 * K) == 0, mask)


def offload_mode(g: GameArrays) -> GameArrays:
    """``g`` (an instance in offload mode) with its mode a compile-time
    constant. ``placement`` is otherwise a traced flag, and every move
    computes both modes' legal actions: the candidate offsets of placement
    mode (``_candidates``' sorts and searchsorted over all placed buffers)
    are computed and then discarded by a ``where``. With the flag constant,
    XLA folds the ``where`` and drops the offset search: one polish scan
    (play.plan_changes) of a 58-buffer offload instance takes 0.05 s CPU
    instead of 1.1 s, the same games."""
    return g._replace(placement=jnp.bool_(False))


def legal_and_offsets(s: State):
    """``(legal [A], candidate offsets [P-1, K] in units (-1 none), plan fits
    by bytes [P])`` for the next buffer: what a learned player scores."""
    offs, cap_ok = _candidates(s)
    return _legal_from(s, offs, cap_ok), offs, cap_ok


def plan_residency(g: GameArrays, b: jax.Array) -> jax.Array:
    """[P, T] bool: the ops at which each of buffer b's plans is resident."""
    return _resident(g, b)


def legal_actions(s: State) -> jax.Array:
    """bool [1 + (P-1) * K]; action 0 (slow) is always legal."""
    offs, cap_ok = _candidates(s)
    return _legal_from(s, offs, cap_ok)


def step(s: State, action: jax.Array):
    """Play ``action`` for the next buffer. Illegal actions play slow."""
    out = advance(s, action)
    out = out._replace(time=jnp.where(s.done, s.time, estimated_time(s.inst, out.choice)))
    reward = jnp.where(s.done, jnp.float32(0.0), s.time - out.time)
    return out, reward, out.done


def advance(s: State, action: jax.Array) -> State:
    """``step`` without re-estimating the time (``time`` is left as it was):
    for rollouts that only need the time at their end."""
    offs, cap_ok = _candidates(s)
    legal = _legal_from(s, offs, cap_ok)
    return _advance(s, jnp.where(legal[action], action, 0), offs)


def advance_repaired(s: State, action: jax.Array, upgrade: jax.Array | None = None):
    """``advance`` that repairs an illegal action by the same plan at its
    lowest legal candidate offset (slow where the plan no longer fits at
    all), for replaying a game's moves after an earlier move changed.
    ``upgrade`` ([P] scores of the next buffer's plans): a slow move
    (asked for, or left by the repair) becomes the legal plan of highest
    positive score instead, at its lowest legal offset.
    Returns ``(state, the action played)``."""
    K = NUM_OFFSETS
    offs, cap_ok = _candidates(s)
    legal = _legal_from(s, offs, cap_ok)
    p = jnp.where(action == 0, 0, 1 + (action - 1) // K)
    row = jax.lax.dynamic_slice(legal, (1 + jnp.maximum(p - 1, 0) * K,), (K,))
    alt = jnp.where((p > 0) & row.any(), 1 + (p - 1) * K + jnp.argmax(row), 0)
    action = jnp.where(legal[action], action, alt)
    if upgrade is not None:
        rows = legal[1:].reshape(NUM_PLANS - 1, K)
        score = jnp.where(rows.any(1) & (upgrade[1:] > 0), upgrade[1:], -jnp.inf)
        q = jnp.argmax(score)
        up = 1 + q * K + jnp.argmax(rows[q])
        action = jnp.where((action == 0) & jnp.isfinite(score[q]) & ~s.done, up, action)
    return _advance(s, action, offs), action


def _advance(s: State, action: jax.Array, offs) -> State:
    """Plays a legal ``action`` (``offs``: the state's candidate offsets)."""
    g = s.inst
    B = g.order.shape[0]
    K = NUM_OFFSETS
    b = g.order[jnp.minimum(s.step, B - 1)]
    p = jnp.where(action == 0, 0, 1 + (action - 1) // K)
    k = jnp.where(action == 0, 0, (action - 1) % K)
    # offload mode stores offset 0 for a buffer in fast memory (it marks "placed")
    off = jnp.where(p > 0, jnp.where(g.placement, offs[jnp.maximum(p - 1, 0), k], 0), -1)
    choice = s.choice.at[b].set(p)
    offset = s.offset.at[b].set(off)
    res = _resident(g, b)[p]
    live = s.live + jnp.where(res, g.size_units[b], 0)
    nstep = s.step + 1
    new = State(inst=g, step=nstep, choice=choice, offset=offset, live=live, time=s.time,
                done=nstep >= g.n_buffers)
    # absorbing terminal state
    return jax.tree.map(lambda a, b_: jnp.where(s.done, a, b_), s, new)


def play(spec: GameSpec, actions) -> tuple[State, float]:
    """Play a sequence of actions from the initial state (eager, for tests)."""
    s = init(spec.arrays)
    total = 0.0
    for a in actions:
        s, r, _ = step(s, jnp.int32(a))
        total += float(r)
    return s, total
