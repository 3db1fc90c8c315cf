"""What the learned player sees: per-buffer, per-plan and per-op features.

Static features depend only on the instance and are computed once, host
side (numpy), padded to the game's bucket: they ride next to the game's
arrays. Dynamic features depend on the state (which buffers are decided and
how, the bytes resident at each op, the buffer being decided) and are
computed in jax from ``game.State`` inside the network.

Every quantity is made scale-free so that one network plays programs of any
size and any device: bytes are divided by the capacity, times by the
instance's all-slow time ``T0`` (and multiplied by the number of ops where an
average op's share is the natural unit), op positions by the number of ops.
``squash`` maps the wide ranges that remain (a copy may cost 1e-6 or 10x an
op) to a few units with a signed log.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core import game

# Per-buffer, per-op and per-plan static feature widths, and the dynamic ones
# the network appends (they are part of the checkpoint's signature).
BUF_STATIC = 13
OP_STATIC = 8
PLAN_STATIC = 13
BUF_DYNAMIC = 6
OP_DYNAMIC = 2
PLAN_DYNAMIC = 3
OFFSET_FEATURES = 2
GLOBAL_FEATURES = 4
KINDS = ("argument", "output", "temp")
PLAN_KINDS = 4   # slow, keep, split, prefetch
HINT = 12        # the plan feature that flags the heuristic's choice
SAVING = 9       # the plan feature: its isolated saving / T0 x 10 (linear)


class Static(NamedTuple):
    buf: jax.Array        # [B, BUF_STATIC] float32
    op: jax.Array         # [T, OP_STATIC] float32
    plan: jax.Array       # [B, P, PLAN_STATIC] float32
    plan_kind: jax.Array  # [B, P] int32: 0 slow, 1 keep, 2 split, 3 prefetch
    rank: jax.Array       # [B] int32: the move at which the buffer is decided
    start: jax.Array      # [B] int32
    end: jax.Array        # [B] int32
    buf_valid: jax.Array  # [B] bool
    scale: jax.Array      # float32: all-slow estimated time T0 (seconds)
    n_ops: jax.Array      # float32
    edge_op: jax.Array    # [E] int32: the (op, buffer) accesses as a list
    edge_buf: jax.Array   # [E] int32  (padding: op T, buffer B: dropped segments)


def edge_bucket(n_edges: int, num_ops_bucket: int) -> int:
    """The edge list's length: 4 accesses per op of the bucket (most programs
    average under 3), else the next power of two."""
    e = 4 * num_ops_bucket
    while e < n_edges:
        e *= 2
    return e


def access_edges(acc: np.ndarray, length: int | None = None):
    """``(edge_op, edge_buf)`` of the access table ``acc`` [T, A] (-1 padding),
    padded to ``length`` (default ``edge_bucket``) with (T, B) pairs. The
    network sums messages over this list instead of gathering the dense
    [T, A] table: an op that touches hundreds of buffers (a training step's
    tuple of updated parameters) would make that table T x A x hidden."""
    acc = np.asarray(acc)
    T = acc.shape[0]
    ts, ix = np.nonzero(acc >= 0)
    n = len(ts)
    E = length if length is not None else edge_bucket(n, T)
    if n > E:
        raise ValueError(f"{n} accesses do not fit an edge list of {E}")
    return ts.astype(np.int32), acc[ts, ix].astype(np.int32), E


def squash(x):
    """Signed log: keeps order and sign, compresses 1e-6 .. 1e3 to a few units."""
    return np.sign(x) * np.log1p(np.abs(x) * 100.0) / 5.0


def plan_kinds(spec: game.GameSpec) -> np.ndarray:
    B = spec.arrays.order.shape[0]
    out = np.zeros((B, game.NUM_PLANS), np.int32)
    code = {"slow": 0, "keep": 1, "split": 2, "prefetch": 3}
    for b, menu in enumerate(spec.menus):
        for p, m in enumerate(menu):
            out[b, p] = code[m.kind]
    return out


@jax.jit
def _times_of_pairs(g: game.GameArrays, pairs):
    B = g.plan_valid.shape[0]

    def one(x):
        choice = jnp.zeros(B, jnp.int32).at[x[0]].set(x[1])
        return game.estimated_time(g, choice)
    return jax.vmap(one)(pairs)


def isolated_times_scan(g: game.GameArrays, chunk: int = 512) -> np.ndarray:
    """``isolated_times`` by the game's own cost model (one batched scan per
    (buffer, plan)): the reference the fast version is tested against. Its
    cost grows with buffers x plans x events, minutes at 1,000 buffers."""
    B, P = g.plan_valid.shape
    pairs = np.stack([np.repeat(np.arange(B), P), np.tile(np.arange(P), B)],
                     axis=1).astype(np.int32)
    n = len(pairs)
    pairs = np.concatenate([pairs, np.zeros(((-n) % chunk, 2), np.int32)])
    out = [np.asarray(_times_of_pairs(g, jnp.asarray(pairs[i:i + chunk])))
           for i in range(0, len(pairs), chunk)]
    return np.concatenate(out)[:n].reshape(B, P)


def isolated_times(g: game.GameArrays) -> np.ndarray:
    """[B, P]: the estimated time with only buffer b on plan p (others slow).

    The saving ``T0 - time`` is the plan's worth before any interaction.
    With one buffer off the slow plan, the game's event simulation
    (game.estimated_time) has at most three events besides the ops: the
    prefetch, the wait of its first use, the eviction; between them the
    clock advances by the ops' durations. So each (buffer, plan) is a prefix
    sum of the all-slow durations plus the changes at the ops where that
    buffer is fast, and the three events simulated exactly as the game does
    (float64 here, float32 there). Linear in the accesses, not in buffers x
    plans x events (``isolated_times_scan``)."""
    a = jax.tree.map(np.asarray, g)
    B, P = a.plan_valid.shape
    T = a.op_valid.shape[0]
    acc = a.acc
    sizes = a.size_bytes.astype(np.float64)
    fast_bw, slow_bw = float(a.fast_bw), float(a.slow_bw)
    comp, weight = a.compute.astype(np.float64), a.weight.astype(np.float64)
    accb = np.maximum(acc, 0)
    mem0 = np.where(acc >= 0, sizes[accb] / slow_bw, 0.0).sum(1)
    dur0 = weight * np.maximum(comp, mem0)
    prefix = np.concatenate([[0.0], np.cumsum(dur0)])
    T0 = prefix[-1]
    overlap = bool(a.overlap)
    n_real = int(a.n_buffers)
    uses: list[list[int]] = [[] for _ in range(B)]
    for t, i in zip(*np.nonzero(acc >= 0)):
        uses[int(acc[t, i])].append(int(t))
    out = np.full((B, P), T0)
    for b in range(n_real):
        ts = np.array(uses[b], np.int64)
        if len(ts) == 0:
            continue
        gain = sizes[b] / fast_bw - sizes[b] / slow_bw     # per access made fast
        for p in range(1, P):
            if not a.plan_valid[b, p]:
                continue
            out[b, p] = _isolated_one(a, b, p, ts, gain, dur0, prefix, comp, weight, mem0,
                                      overlap, T)
    return out


def _isolated_one(a, b, p, ts, gain, dur0, prefix, comp, weight, mem0, overlap, T):
    """The game's estimated time with only buffer b on plan p (see isolated_times)."""
    pf = bool(a.has_pf[b, p])
    ws, wu, whi = int(a.win_s[b, p]), int(a.win_u[b, p]), int(a.win_hi[b, p])
    ev = int(a.evict[b, p])
    lo, hi = int(a.home_lo[b, p]), int(a.home_hi[b, p])
    fast = ((lo <= ts) & (ts <= hi)) | (pf & (wu <= ts) & (ts <= whi))
    # changed ops: each fast access lowers that op's memory time
    delta = {}
    for t in ts[fast]:
        delta[int(t)] = delta.get(int(t), 0.0) + gain
    dt = {t: weight[t] * max(comp[t], mem0[t] + d) - dur0[t] for t, d in delta.items()}
    keys = np.array(sorted(dt), np.int64)
    cum = np.concatenate([[0.0], np.cumsum([dt[int(t)] for t in keys])])

    def run(x, y):     # the ops x .. y-1
        if y <= x:
            return 0.0
        i, j = np.searchsorted(keys, x), np.searchsorted(keys, y)
        return prefix[y] - prefix[x] + cum[j] - cum[i]

    points = []
    if pf:
        points += [(ws, 0), (wu, 1)]
    if ev >= 0:
        points.append((ev, 2))
    points.sort()
    clock = qh = qd = pf_done = ev_done = 0.0
    cur = 0
    for t, ph in points:
        if ph == 0:
            clock += run(cur, t)
            cur = t
            st = max(clock, qh, ev_done) if overlap else max(clock, ev_done)
            pf_done = st + float(a.pf_dur[b, p])
            if overlap:
                qh = pf_done
            else:
                clock = pf_done
        elif ph == 1:
            clock += run(cur, t)
            clock = max(clock, pf_done) + dur0[t] + dt.get(t, 0.0)
            cur = t + 1
        else:
            clock += run(cur, t + 1)
            cur = t + 1
            st = max(clock, qd) if overlap else clock
            ev_done = st + float(a.ev_dur[b, p])
            if overlap:
                qd = ev_done
            else:
                clock = ev_done
    clock += run(cur, T)
    return max(clock, qh, qd)


def _op_static(spec: game.GameSpec, T0: float) -> np.ndarray:
    g, inst = spec.arrays, spec.inst
    TT = g.op_valid.shape[0]
    n = inst.num_ops
    dev = inst.device
    out = np.zeros((TT, OP_STATIC), np.float32)
    for t, op in enumerate(inst.ops):
        acc = inst.accesses(t)
        nbytes = sum(inst.buffers[b].size for b in acc)
        comp = op.flops / dev.flops
        slow = op.weight * max(comp, nbytes / dev.slow_bandwidth)
        fast = op.weight * max(comp, nbytes / dev.fast_bandwidth)
        out[t] = [t / max(n - 1, 1), np.log2(op.weight) / 4, squash(op.weight * comp / T0 * n),
                  squash(slow / T0 * n), squash(fast / T0 * n), squash((slow - fast) / T0 * n),
                  len(acc) / 8, 1.0]
    return out


def _buf_static(spec: game.GameSpec, T0: float, saving: np.ndarray) -> np.ndarray:
    inst = spec.inst
    B = spec.arrays.order.shape[0]
    n, cap = inst.num_ops, max(inst.capacity, 1)
    dev = inst.device
    rank = np.empty(inst.num_buffers, np.int64)
    rank[spec.order] = np.arange(inst.num_buffers)
    out = np.zeros((B, BUF_STATIC), np.float32)
    for b, buf in enumerate(inst.buffers):
        acc_ops = inst.access_ops(b)
        slow_share = sum(inst.ops[t].weight * buf.size / dev.slow_bandwidth for t in acc_ops)
        kind = [float(buf.kind == k) for k in KINDS]
        out[b] = [min(buf.size / cap, 4.0), np.log2(buf.size / cap + 1e-9) / 10,
                  buf.start / max(n - 1, 1), buf.end / max(n - 1, 1),
                  (buf.end - buf.start + 1) / n, np.log1p(len(buf.uses)) / 3,
                  *kind, squash(slow_share / T0 * n), squash(saving[b].max() / T0 * n),
                  rank[b] / max(inst.num_buffers - 1, 1), 1.0]
    return out


def heuristic_choices(spec: game.GameSpec) -> np.ndarray:
    """[B]: the menu index the XLA-style heuristic picks for each buffer
    (-1 for padding). A hint, like a hand-made feature of a board: the
    network learns when to follow it and when not."""
    from ..core.plans import menu_index
    from ..solvers.heuristic import assign
    sol = assign(spec.inst)
    out = np.full(spec.arrays.order.shape[0], -1, np.int32)
    for a in sol.buffers:
        p = menu_index(spec.menus[a.id], a)
        out[a.id] = -1 if p is None else p
    return out


def _plan_static(spec: game.GameSpec, T0: float, saving: np.ndarray, kinds: np.ndarray,
                 hint: np.ndarray):
    g = jax.tree.map(np.asarray, spec.arrays)
    n = spec.inst.num_ops
    B, P = g.plan_valid.shape
    home_len = np.where(g.home_hi >= g.home_lo, g.home_hi - g.home_lo + 1, 0)
    win_len = np.where(g.has_pf, g.win_hi - g.win_s + 1, 0)
    onehot = np.eye(PLAN_KINDS, dtype=np.float32)[kinds]
    out = np.zeros((B, P, PLAN_STATIC), np.float32)
    out[..., 0] = g.plan_valid
    out[..., 1:5] = onehot
    out[..., 5] = (home_len + win_len) / n
    out[..., 6] = squash(g.pf_dur / T0 * n)
    out[..., 7] = squash(g.ev_dur / T0 * n)
    out[..., 8] = squash(saving / T0 * n)
    out[..., SAVING] = saving / T0 * 10
    out[..., 10] = np.where(g.has_pf, (g.win_u - g.win_s) / n, 0.0)
    out[..., 11] = np.where(g.evict >= 0, (g.win_u - g.evict) / n, 0.0)
    out[..., HINT] = np.arange(P)[None, :] == hint[:, None]
    out[~g.plan_valid] = 0.0
    return out


#: The game's cost model, compiled once per bucket (called eagerly, its
#: ``lax.scan`` was compiled anew for every instance encoded: 0.2 s each).
#: Same times bit for bit (checked on 86 instances).
_estimated_time = jax.jit(game.estimated_time)


def static_features(spec: game.GameSpec) -> Static:
    """The instance's static features, padded to the game's bucket."""
    g = spec.arrays
    B = g.order.shape[0]
    inst = spec.inst
    T0 = float(_estimated_time(g, jnp.zeros(B, jnp.int32)))
    T0 = max(T0, 1e-30)
    times = isolated_times(g)
    saving = np.where(np.asarray(g.plan_valid), T0 - times, 0.0)
    kinds = plan_kinds(spec)
    rank = np.full(B, B, np.int32)
    rank[spec.order] = np.arange(inst.num_buffers)
    start = np.zeros(B, np.int32)
    end = np.zeros(B, np.int32)
    for b, buf in enumerate(inst.buffers):
        start[b], end[b] = buf.start, buf.end
    valid = np.arange(B) < inst.num_buffers
    eo, eb, E = access_edges(g.acc)
    edge_op = np.full(E, g.op_valid.shape[0], np.int32)
    edge_buf = np.full(E, B, np.int32)
    edge_op[:len(eo)], edge_buf[:len(eb)] = eo, eb
    return Static(buf=jnp.asarray(_buf_static(spec, T0, saving)),
                  op=jnp.asarray(_op_static(spec, T0)),
                  plan=jnp.asarray(_plan_static(spec, T0, saving, kinds, heuristic_choices(spec))),
                  plan_kind=jnp.asarray(kinds), rank=jnp.asarray(rank),
                  start=jnp.asarray(start), end=jnp.asarray(end),
                  buf_valid=jnp.asarray(valid), scale=jnp.float32(T0),
                  n_ops=jnp.float32(inst.num_ops), edge_op=jnp.asarray(edge_op),
                  edge_buf=jnp.asarray(edge_buf))


def pad_edges(sf: Static, length: int) -> Static:
    """``sf`` with its edge list padded to ``length`` (to batch instances)."""
    E = sf.edge_op.shape[0]
    if E > length:
        raise ValueError(f"an edge list of {E} does not fit {length}")
    T, B = sf.op.shape[0], sf.buf.shape[0]
    return sf._replace(edge_op=jnp.pad(sf.edge_op, (0, length - E), constant_values=T),
                       edge_buf=jnp.pad(sf.edge_buf, (0, length - E), constant_values=B))


# -- dynamic features (jax, per state) -------------------------------------------

def current_buffer(s: game.State) -> jax.Array:
    B = s.choice.shape[0]
    return s.inst.order[jnp.minimum(s.step, B - 1)]


def dynamic_buffers(sf: Static, s: game.State) -> jax.Array:
    """[B, BUF_DYNAMIC]: decided, the chosen plan's kind, is-current."""
    decided = sf.rank < s.step
    kind = jnp.take_along_axis(sf.plan_kind, s.choice[:, None], axis=1)[:, 0]
    onehot = jax.nn.one_hot(kind, PLAN_KINDS) * decided[:, None]
    cur = jnp.arange(s.choice.shape[0]) == current_buffer(s)
    return jnp.concatenate([decided[:, None], onehot, cur[:, None]], axis=1).astype(jnp.float32)


def dynamic_ops(s: game.State) -> jax.Array:
    """[T, OP_DYNAMIC]: resident bytes over capacity, and whether the
    current buffer would still fit next to them."""
    g = s.inst
    cap = jnp.maximum(g.capacity, 1).astype(jnp.float32)
    live = s.live.astype(jnp.float32) / cap
    size = g.size_units[current_buffer(s)].astype(jnp.float32) / cap
    return jnp.stack([live, (live + size <= 1.0).astype(jnp.float32)], axis=1)


def dynamic_plans(s: game.State, residency: jax.Array, legal_plan: jax.Array) -> jax.Array:
    """[P, PLAN_DYNAMIC]: legal, the tightest headroom over the plan's
    residency after placing the current buffer, and the peak fill there."""
    g = s.inst
    cap = jnp.maximum(g.capacity, 1).astype(jnp.float32)
    size = g.size_units[current_buffer(s)].astype(jnp.float32)
    live = s.live.astype(jnp.float32)
    fill = jnp.where(residency, live[None, :], 0.0).max(axis=1)
    head = (cap - fill - size) / cap
    return jnp.stack([legal_plan.astype(jnp.float32), jnp.clip(head, -2.0, 1.0),
                      fill / cap], axis=1)


def global_features(sf: Static, s: game.State) -> jax.Array:
    nb = jnp.maximum(s.inst.n_buffers, 1).astype(jnp.float32)
    return jnp.stack([s.step / nb, s.time / sf.scale, 1.0 - s.time / sf.scale,
                      (s.inst.placement).astype(jnp.float32)])
