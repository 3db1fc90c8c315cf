"""The policy's argmax game, incrementally: the same moves as
``play.play_batch(..., num_simulations=0)`` at a fraction of the cost.

The reference plays each move with a whole ``network.apply``: the encoders
and both rounds of message passing over every buffer and op, the value head,
and the game's candidate offsets twice (once in ``apply``, once in
``game.advance``). But a move changes little: the decided buffer's residency
changes the resident bytes on its ops, two buffers change their dynamic
features (the one decided, the next one), and the argmax needs neither the
value head nor any buffer's last-round embedding but the next buffer's.
``Player`` keeps every intermediate of the network (per-op and per-buffer
embeddings of each round, the lifetime sums) and recomputes after each move
only the rows whose inputs changed:

* round 0: the ops whose resident bytes or "the next buffer fits" flag
  changed; the two buffers' encodings come from a table computed once per
  instance (a buffer's dynamic features take six values);
* round 1 ops: those, their schedule neighbours, the ops accessing the two
  buffers; round 1 buffers: the buffers accessing a changed op or living
  across one (their lifetime sums are updated by the prefix sums of the
  changes); with ``network.static_life`` the lifetime sums are constant and
  only the buffers accessing a changed op change (a few percent of the rows
  here and in round 2, instead of a quarter to a half);
* round 2 ops: the neighbours of round 1's and every op accessing a changed
  buffer; round 2 buffers: the next buffer's row only (the policy reads no
  other);
* round 1 buffers and round 2 ops keep their message MLP's first layer on
  the two input parts a move rarely changes (``_Fixed``), so a row whose
  lifetime mean or buffers' mean alone changed pays one [H, H] product for
  it (``_split_first``);
* the attention, the plans' residency means and the plan head on the next
  buffer, as ``network.apply`` does.

Which rows change depends only on the game (which ops the move's residency
covers, the access lists, the lifetimes), so the host works the sets out in
numpy, with the game itself (choices, offsets, resident bytes, the sorted
tops of placed buffers; ``candidates`` finds the candidate offsets as
``game._candidates`` does, from the free gaps the conflicting rectangles
leave), and each move is one jitted call: the row updates of the last
move and the head of the next (``_step``; ``move`` and ``logits`` make them
two calls, to step through a game).
Float32 as the reference, so the logits agree to rounding;
``test_msa_learned`` checks that the moves are the same.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core import game
from . import features as F
from . import network


def _pow2(n) -> int:
    return 1 << max(int(np.ceil(n)) - 1, 0).bit_length()


def _pad(x, n, value):
    out = np.full((n,) + x.shape[1:], value, np.int32 if x.dtype.kind in "iu" else x.dtype)
    out[:len(x)] = x
    return out


class _Adjacency:
    """Who touches whom (ops -> their buffers, or buffers -> their ops) as a
    table padded with ``pad`` (the index of a zero row in the arrays it
    gathers from): the device sums a row's neighbours by one gather; the few
    rows with more neighbours than the table is wide keep the rest apart
    (``heavy_index``: extra edges summed once per call)."""

    def __init__(self, keys, vals, n, pad):
        o = np.argsort(keys, kind="stable")
        keys, vals = keys[o], vals[o].astype(np.int64)
        deg = np.bincount(keys, minlength=n)
        ptr = np.concatenate([[0], np.cumsum(deg)])
        # a power of two (few compiled shapes across instances) that holds
        # 99% of the rows
        width = _pow2(min(max(np.percentile(deg, 99), 1), deg.max(initial=1)))
        pos = np.arange(len(keys)) - ptr[keys]
        self.table = np.full((n, width), pad, np.int64)
        inside = pos < width
        self.table[keys[inside], pos[inside]] = vals[inside]
        self.rest = {int(k): vals[ptr[k] + width:ptr[k + 1]] for k in np.nonzero(deg > width)[0]}
        self.heavy = np.zeros(n, bool)
        self.heavy[list(self.rest)] = True
        self.pad = pad
        self.count = np.maximum(deg, 1).astype(np.float32)[:, None]

    def table_padded(self):
        """The table with one more row, all pad (the pad row's neighbours)."""
        return np.concatenate([self.table, np.full((1, self.table.shape[1]), self.pad)])

    def neighbours(self, r):
        out = self.table[r][self.table[r] != self.pad]
        return np.concatenate([out, self.rest[int(r)]]) if self.heavy[r] else out

    def heavy_index(self):
        """([n + 1] each row's index among the rows wider than the table,
        their number where none; [2, E] their extra edges)."""
        heavy = sorted(self.rest)
        n = _pow2(len(heavy)) if heavy else 0
        idx = np.full(self.table.shape[0] + 1, n, np.int32)
        idx[heavy] = np.arange(len(heavy))
        rows = np.concatenate([np.full(len(self.rest[h]), i) for i, h in enumerate(heavy)]
                              + [np.zeros(0)]).astype(np.int32)
        nbrs = np.concatenate([self.rest[h] for h in heavy] + [np.zeros(0)]).astype(np.int32)
        m = _pow2(len(rows)) if len(rows) else 0
        # padding edges go to the dropped segment n
        edges = np.stack([_pad(rows, m, n), _pad(nbrs, m, self.pad)])
        return idx, edges, n

    def mark(self, mask, rows):
        """Sets ``mask`` (one longer than the neighbours' count: the pad) at
        the neighbours of ``rows``."""
        mask[self.table[rows]] = True
        if self.rest:
            for r in rows[self.heavy[rows]]:
                mask[self.rest[int(r)]] = True


class _Consts(NamedTuple):
    op_static: jax.Array     # [T, OP_STATIC]
    op_tbl: jax.Array        # [T + 1, W]: each op's buffers (B: none)
    op_heavy: jax.Array      # [T + 1]: an op's row in the extra sums (the last: none)
    op_rest: jax.Array       # [2, E]: extra edges (heavy row, buffer) of ops wider than W
    op_heavy_rows: jax.Array  # [number of such ops] (its shape is what counts)
    op_cnt: jax.Array        # [T + 1, 1]
    op_validf: jax.Array     # [T + 1, 1]
    buf_tbl: jax.Array       # [B + 1, W]: each buffer's ops (T: none)
    buf_heavy: jax.Array     # [B + 1]
    buf_rest: jax.Array      # [2, E]
    buf_heavy_rows: jax.Array  # [number of such buffers]
    buf_cnt: jax.Array       # [B + 1, 1]
    buf_validf: jax.Array    # [B + 1, 1]
    life_len: jax.Array      # [B + 1, 1]
    start: jax.Array         # [B]
    end: jax.Array           # [B]
    hb0_table: jax.Array     # [6, B, H]
    plan_static: jax.Array   # [B, P, PLAN_STATIC]
    capacity: jax.Array      # float32 scalar


class _Fixed(NamedTuple):
    """A message MLP's first layer on the part of each row's input that a
    move rarely changes (a buffer's own embedding and its ops' mean; an op's
    own embedding and its neighbours' mean), centred: ``_split_first``
    completes it with the part that changes (the lifetime mean; the
    buffers' mean)."""
    proj: jax.Array    # [n + 1, H]: (part - its mean) @ its rows of the weight
    mean: jax.Array    # [n + 1, 1]
    ssd: jax.Array     # [n + 1, 1]: the part's sum of squared deviations


class _State(NamedTuple):
    """The network's intermediates; embedding arrays have a zero last row."""
    ho0: jax.Array     # [T + 1, H]
    hb0: jax.Array     # [B + 1, H]
    ho1: jax.Array     # [T + 1, H]
    cd: jax.Array      # [L + 1, H]: prefix sums of round 1's last changes
    life1: jax.Array   # [B, H]: sums of ho1 over each lifetime
    fb1: _Fixed        # round 1 buffers' [hb0, ops' mean of ho1]
    hb1: jax.Array     # [B + 1, H]
    fo2: _Fixed        # round 2 ops' [ho1, neighbours' mean of ho1]
    ho2: jax.Array     # [T + 1, H]
    hon: jax.Array     # [T, H]: normalised ho2


def _chunks(n: int, static_life: bool = False) -> tuple:
    """Rows are updated a chunk at a time, in loops whose trip count is the
    number of changed rows (one compile per bucket, whatever a move changes):
    (round 0 and round 1 ops' chunk, the others') for a bucket of ``n``:
    round 1 changes a few percent of the ops, the others a quarter to a half
    of the buffers and ops, or a few percent with static lifetime means."""
    small = max(16, n // 32)
    return small, (max(64, small) if static_life else max(64, min(512, n // 8)))


def _loop(n, body, carry, chunk):
    return jax.lax.fori_loop(0, (n + chunk - 1) // chunk, body, carry)


def _chunk(idx, i, chunk):
    return jax.lax.dynamic_slice(idx, (i * chunk,), (chunk,))


def _rest_sums(X, rest, heavy):
    """[heavy rows + 1, H]: X summed over the extra edges of each row wider
    than its table (the last row, zero, for the others)."""
    n = heavy.shape[0]
    return jax.ops.segment_sum(X[rest[1]], rest[0], num_segments=n + 1) if rest.shape[1] \
        else jnp.zeros((n + 1, X.shape[1]), X.dtype)


def _from_bufs(hb, C, rows, rest):
    return (hb[C.op_tbl[rows]].sum(1) + rest[C.op_heavy[rows]]) / C.op_cnt[rows]


def _neighbours(ho, C, rows):
    """The mean of an op's schedule neighbours (wrapping, as network._op_round's roll)."""
    T = C.op_static.shape[0]
    left = jnp.where(rows < T, (rows - 1) % T, T)
    right = jnp.where(rows < T, (rows + 1) % T, T)
    return (ho[left] * C.op_validf[left] + ho[right] * C.op_validf[right]) / 2.0


def _from_ops(ho, C, rows, rest):
    return (ho[C.buf_tbl[rows]].sum(1) + rest[C.buf_heavy[rows]]) / C.buf_cnt[rows]


def _op_round(layers, ho, hb, C, rows, rest):
    """network._op_round on ``rows`` (pad: T + 1); ``rest``: _rest_sums of hb."""
    x = network._norm(jnp.concatenate([ho[rows], _from_bufs(hb, C, rows, rest),
                                       _neighbours(ho, C, rows)], axis=1))
    return ho[rows] + network._mlp(layers, x) * C.op_validf[rows]


def _buf_round(layers, hb, ho, life_sums, C, rows, rest):
    """network._buf_round on ``rows``, the lifetime means from ``life_sums``."""
    life = life_sums / C.life_len[rows]
    x = network._norm(jnp.concatenate([hb[rows], _from_ops(ho, C, rows, rest), life], axis=1))
    return hb[rows] + network._mlp(layers, x) * C.buf_validf[rows]


# A message MLP's input is [own, mean of the other side, third] (3H); the
# rounds below split its first layer: the rows of the weight on the part a
# move rarely changes (``_FIXED``: op rounds [own, neighbours], buffer rounds
# [own, ops]) against those on the part that changes (``_MOVING``: the
# buffers' mean; the lifetime mean). norm(x) @ W is, with the two parts'
# means and sums of squared deviations (the parallel variance formula),
# the centred parts' products plus the means' offsets times W's column
# sums, over the whole input's deviation: the same function, its rounding
# apart, for one [H, H] product per row instead of [3H, H].
_FIXED = {"op": (0, 2), "buf": (0, 1)}
_MOVING = {"op": 1, "buf": 2}


def _blocks(w, kind):
    H = w.shape[0] // 3
    fixed = jnp.concatenate([w[i * H:(i + 1) * H] for i in _FIXED[kind]])
    m = _MOVING[kind]
    return fixed, w[m * H:(m + 1) * H]


def _fixed_part(layers, kind, x):
    """_Fixed rows (without the pad row) of the fixed part ``x`` [n, 2H]."""
    w_fixed, _ = _blocks(layers[0]["w"], kind)
    mean = x.mean(1, keepdims=True)
    d = x - mean
    return d @ w_fixed, mean, (d * d).sum(1, keepdims=True)


def _split_first(layers, kind, proj, mean, ssd, y):
    """The message MLP of the rows whose fixed part is (proj, mean, ssd)
    and moving part ``y`` [n, H]: network._mlp(layers, network._norm(x))."""
    w = layers[0]["w"]
    w_fixed, w_moving = _blocks(w, kind)
    nf, nm = w_fixed.shape[0], w_moving.shape[0]
    ym = y.mean(1, keepdims=True)
    dy = y - ym
    mu = (nf * mean + nm * ym) / (nf + nm)
    var = (ssd + nf * (mean - mu) ** 2 + (dy * dy).sum(1, keepdims=True)
           + nm * (ym - mu) ** 2) / (nf + nm)
    z = (proj + (mean - mu) * w_fixed.sum(0) + dy @ w_moving + (ym - mu) * w_moving.sum(0)) \
        * jax.lax.rsqrt(var + 1e-5) + layers[0]["b"]
    return network._mlp(layers[1:], jax.nn.gelu(z))


def _set_fixed(f: _Fixed, rows, part) -> _Fixed:
    return _Fixed(*(a.at[rows].set(v, mode="drop") for a, v in zip(f, part)))


def _with_pad(part):
    return _Fixed(*(jnp.concatenate([a, jnp.zeros((1, a.shape[1]), a.dtype)]) for a in part))


@jax.jit
def _init(net, C: _Consts, live_f, fits_f, hb0_state):
    """The full forward pass of the first state (network.apply's rounds)."""
    T, B = C.op_static.shape[0], C.start.shape[0]
    H = C.hb0_table.shape[2]
    zero = jnp.zeros((1, H), jnp.float32)
    ops, bufs = jnp.arange(T), jnp.arange(B)
    hb0 = jnp.concatenate([C.hb0_table[hb0_state, bufs], zero])
    x = jnp.concatenate([C.op_static, live_f[:, None], fits_f[:, None]], axis=1)
    ho0 = jnp.concatenate([network._mlp(net["op_enc"], x), zero])
    ho1 = jnp.concatenate([_op_round(net["op_msg"][0], ho0, hb0, C, ops,
                                     _rest_sums(hb0, C.op_rest, C.op_heavy_rows)), zero])
    src = network.life_ops(net, C.op_static) if network.static_life(net) else ho1[:T]
    cs = jnp.concatenate([zero, jnp.cumsum(src, axis=0)])
    life1 = cs[C.end + 1] - cs[C.start]
    hb1 = jnp.concatenate([_buf_round(net["buf_msg"][0], hb0, ho1, life1, C, bufs,
                                      _rest_sums(ho1, C.buf_rest, C.buf_heavy_rows)), zero])
    ho2 = jnp.concatenate([_op_round(net["op_msg"][1], ho1, hb1, C, ops,
                                     _rest_sums(hb1, C.op_rest, C.op_heavy_rows)), zero])
    cd = jnp.zeros((T + 1, H), jnp.float32)
    rest = _rest_sums(ho1, C.buf_rest, C.buf_heavy_rows)
    fb1 = _with_pad(_fixed_part(net["buf_msg"][0], "buf", jnp.concatenate(
        [hb0[:B], _from_ops(ho1, C, bufs, rest)], axis=1)))
    fo2 = _with_pad(_fixed_part(net["op_msg"][1], "op", jnp.concatenate(
        [ho1[:T], _neighbours(ho1, C, ops)], axis=1)))
    return _State(ho0, hb0, ho1, cd, life1, fb1, hb1, fo2, ho2, network._norm(ho2[:T]))


@functools.partial(jax.jit, donate_argnums=(1,), static_argnames=("chunk",))
def _round1(net, S: _State, C: _Consts, n0, d0, live0, fits0, bufs0, states0, n1, d1,
            chunk: int):
    """Round 0 on the ``n0`` ops ``d0`` and the two buffers, round 1 on the
    ``n1`` ops ``d1`` (sorted); ``cd`` gets the prefix sums of its changes."""
    def enc(i, ho0):
        r = _chunk(d0, i, chunk)
        x = jnp.concatenate([C.op_static[r], _chunk(live0, i, chunk)[:, None],
                             _chunk(fits0, i, chunk)[:, None]], axis=1)
        return ho0.at[r].set(network._mlp(net["op_enc"], x), mode="drop")

    ho0 = _loop(n0, enc, S.ho0, chunk)
    hb0 = S.hb0.at[bufs0].set(C.hb0_table[states0, bufs0])
    rest = _rest_sums(hb0, C.op_rest, C.op_heavy_rows)

    def round1(i, carry):
        ho1, cd, run = carry
        r = _chunk(d1, i, chunk)
        new = _op_round(net["op_msg"][0], ho0, hb0, C, r, rest)
        cs = run + jnp.cumsum(new - ho1[r], axis=0)
        cd = jax.lax.dynamic_update_slice(cd, cs, (i * chunk + 1, 0))
        return ho1.at[r].set(new, mode="drop"), cd, cs[-1]

    H = S.ho1.shape[1]
    ho1, cd, _ = _loop(n1, round1, (S.ho1, S.cd, jnp.zeros((H,), jnp.float32)), chunk)
    return S._replace(ho0=ho0, hb0=hb0, ho1=ho1, cd=cd)


@functools.partial(jax.jit, donate_argnums=(1,), static_argnames=("chunks",))
def _round1_bufs(net, S: _State, C: _Consts, nf, f1, nb, b1, i0, i1, chunks):
    """Round 1 on the ``nb`` buffers ``b1``: first the fixed part of the
    ``nf`` buffers ``f1`` whose own embedding or ops changed; the lifetime
    sums gain round 1's changes between positions ``i0`` and ``i1`` of its
    rows (nothing where the lifetime holds none of them)."""
    layers = net["buf_msg"][0]
    rest = _rest_sums(S.ho1, C.buf_rest, C.buf_heavy_rows)
    last = S.life1.shape[0] - 1

    def fixed(i, fb1):
        r = _chunk(f1, i, chunks[0])
        x = jnp.concatenate([S.hb0[r], _from_ops(S.ho1, C, r, rest)], axis=1)
        return _set_fixed(fb1, r, _fixed_part(layers, "buf", x))

    fb1 = _loop(nf, fixed, S.fb1, chunks[0])

    def round1(i, carry):
        hb1, life1 = carry
        r = _chunk(b1, i, chunks[1])
        sums = life1[jnp.minimum(r, last)] + S.cd[_chunk(i1, i, chunks[1])] \
            - S.cd[_chunk(i0, i, chunks[1])]
        out = _split_first(layers, "buf", fb1.proj[r], fb1.mean[r], fb1.ssd[r],
                           sums / C.life_len[r])
        new = S.hb0[r] + out * C.buf_validf[r]
        return hb1.at[r].set(new, mode="drop"), life1.at[r].set(sums, mode="drop")

    hb1, life1 = _loop(nb, round1, (S.hb1, S.life1), chunks[1])
    return S._replace(life1=life1, fb1=fb1, hb1=hb1)


@functools.partial(jax.jit, donate_argnums=(1,), static_argnames=("chunks",))
def _round2(net, S: _State, C: _Consts, nf, f2, n2, d2, chunks):
    """Round 2 on the ``n2`` ops ``d2``, after the fixed part of the ``nf``
    ops ``f2`` whose own or neighbours' round 1 changed."""
    layers = net["op_msg"][1]
    rest = _rest_sums(S.hb1, C.op_rest, C.op_heavy_rows)

    def fixed(i, fo2):
        r = _chunk(f2, i, chunks[0])
        x = jnp.concatenate([S.ho1[r], _neighbours(S.ho1, C, r)], axis=1)
        return _set_fixed(fo2, r, _fixed_part(layers, "op", x))

    fo2 = _loop(nf, fixed, S.fo2, chunks[0])

    def round2(i, carry):
        ho2, hon = carry
        r = _chunk(d2, i, chunks[1])
        out = _split_first(layers, "op", fo2.proj[r], fo2.mean[r], fo2.ssd[r],
                           _from_bufs(S.hb1, C, r, rest))
        new = S.ho1[r] + out * C.op_validf[r]
        return ho2.at[r].set(new, mode="drop"), hon.at[r].set(network._norm(new), mode="drop")

    ho2, hon = _loop(n2, round2, (S.ho2, S.hon), chunks[1])
    return S._replace(fo2=fo2, ho2=ho2, hon=hon)


@jax.jit
def _head(net, S: _State, C: _Consts, cur, uses, iv, dyn, offs, legal):
    """The current buffer's round 2 and the policy head (network.apply's
    logits): ``uses`` [T] marks the ops that access it, ``iv`` [P, 4] its
    plans' home and window intervals, ``dyn`` [P, 3] the plans' dynamic
    features, ``offs``/``legal`` the game's candidate offsets and legal actions."""
    T = C.op_static.shape[0]
    H = S.hb1.shape[1]
    t = jnp.arange(T)
    ho2 = S.ho2[:T]
    from_ops = (uses @ ho2) / jnp.maximum(uses.sum(), 1.0)
    in_life = ((C.start[cur] <= t) & (t <= C.end[cur])).astype(jnp.float32)
    life = (in_life @ ho2) / C.life_len[cur]
    x = network._norm(jnp.concatenate([S.hb1[cur], from_ops, life])[None])
    q = network._norm(S.hb1[cur] + network._mlp(net["buf_msg"][1], x)[0] * C.buf_validf[cur])
    qq = q @ net["query"]["w"] + net["query"]["b"]
    ctx_o = network._attend(qq[:H], S.hon, C.op_validf[:T, 0] > 0)
    res = (((iv[:, 0:1] <= t) & (t <= iv[:, 1:2])) | ((iv[:, 2:3] <= t) & (t <= iv[:, 3:4])))
    rf = res.astype(jnp.float32)
    res_mean = rf @ S.hon / jnp.maximum(rf.sum(1, keepdims=True), 1.0)
    P = iv.shape[0]
    plan_in = jnp.concatenate([jnp.broadcast_to(q, (P, H)), jnp.broadcast_to(ctx_o, (P, H)),
                               res_mean, C.plan_static[cur], dyn], axis=1)
    e = network._mlp(net["plan"], plan_in)
    plan_logit = (e @ net["plan_logit"]["w"] + net["plan_logit"]["b"])[:, 0]
    cap = _Capacity(C.capacity)
    logits = jnp.concatenate([plan_logit[:1],
                              network._offset_logits(net, e, plan_logit, offs, cap)])
    logits = jnp.where(legal, logits, network.NEG)
    return jnp.argmax(logits), logits


def _update_rows(net, S: _State, C: _Consts, r1, rb, r2, chunks):
    S = _round1(net, S, C, *r1, chunk=chunks[0])
    S = _round1_bufs(net, S, C, *rb, chunks=(chunks[0], chunks[1]))
    return _round2(net, S, C, *r2, chunks=(chunks[0], chunks[2]))


#: One move's row updates (_round1, _round1_bufs, _round2) in one device call:
#: each call hands over the parameters, state and constants (some seventy
#: arrays), and a tenth of a millisecond goes to that alone.
_update = jax.jit(_update_rows, donate_argnums=(1,), static_argnames=("chunks",))


@functools.partial(jax.jit, donate_argnums=(1,), static_argnames=("chunks",))
def _step(net, S: _State, C: _Consts, r1, rb, r2, head, chunks):
    """_update, then the next move's _head: (state, its argmax)."""
    S = _update_rows(net, S, C, r1, rb, r2, chunks)
    return S, _head(net, S, C, *head)[0]


class _Capacity(NamedTuple):
    capacity: jax.Array


class Player:
    """One instance's argmax game: ``play()`` plays it from the start;
    ``logits()`` and ``move(action, offsets)`` step through it (the logits
    are network.apply's, up to rounding)."""

    def __init__(self, params, g: game.GameArrays, sf: F.Static, count_rows: bool = False):
        #: with ``count_rows``, per move: the rows of round 0 ops, round 1
        #: ops, round 1 buffers, round 2 ops, and the round 1 buffers and
        #: round 2 ops there would be without the lifetime means (buffers
        #: living across a changed op but not accessing one)
        self.rows = [] if count_rows else None
        a = {k: np.asarray(v) for k, v in g._asdict().items()}
        s = {k: np.asarray(v) for k, v in sf._asdict().items()}
        self.net = jax.tree.map(jnp.asarray, params)
        self.static_life = network.static_life(params)
        self.B, self.P = a["plan_valid"].shape
        self.T = a["op_valid"].shape[0]
        self.K = game.NUM_OFFSETS
        self.n = int(a["n_buffers"])
        self.cap_units = int(a["capacity"])
        self.cap = np.float32(max(self.cap_units, 1))
        self.placement = bool(a["placement"])
        self.order = a["order"].astype(np.int64)
        self.size = a["size_units"].astype(np.int64)
        self.plan_valid = a["plan_valid"]
        self.home_lo, self.home_hi = a["home_lo"].astype(np.int64), a["home_hi"].astype(np.int64)
        self.has_pf = a["has_pf"]
        self.win_lo = np.where(self.has_pf, a["win_s"], 1).astype(np.int64)
        self.win_hi = np.where(self.has_pf, a["win_hi"], 0).astype(np.int64)
        self.intervals = np.stack([self.home_lo, self.home_hi, self.win_lo, self.win_hi], 2)
        self.op_valid = a["op_valid"]
        self.buf_valid = s["buf_valid"]
        self.start, self.end = s["start"].astype(np.int64), s["end"].astype(np.int64)
        self.plan_kind = s["plan_kind"].astype(np.int64)
        # the access list, both ways (padding edges dropped, as the network's
        # segment sums drop them)
        eo, eb = s["edge_op"].astype(np.int64), s["edge_buf"].astype(np.int64)
        keep = (eo < self.T) & (eb < self.B)
        eo, eb = eo[keep], eb[keep]
        self.op_adj = _Adjacency(eo, eb, self.T, self.B)
        self.buf_adj = _Adjacency(eb, eo, self.B, self.T)
        T, B = self.T, self.B
        buf_static = s["buf"].astype(np.float32)
        tables = []
        for dyn in ([0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1]) + tuple(
                [1] + list(np.eye(F.PLAN_KINDS)[k]) + [0] for k in range(F.PLAN_KINDS)):
            d = np.broadcast_to(np.asarray(dyn, np.float32), (B, F.BUF_DYNAMIC))
            tables.append(np.concatenate([buf_static, d], axis=1))
        # hb0 of every buffer in each of its six dynamic states: undecided,
        # current, decided with each of the four plan kinds
        hb0_table = network._mlp(self.net["buf_enc"], jnp.asarray(np.stack(tables)))
        col = lambda x: jnp.asarray(np.asarray(x, np.float32)[:, None])
        op_heavy, op_rest, n_op_heavy = self.op_adj.heavy_index()
        buf_heavy, buf_rest, n_buf_heavy = self.buf_adj.heavy_index()
        self.C = _Consts(
            op_static=jnp.asarray(s["op"], jnp.float32),
            op_tbl=jnp.asarray(self.op_adj.table_padded(), jnp.int32),
            op_heavy=jnp.asarray(op_heavy), op_rest=jnp.asarray(op_rest),
            op_heavy_rows=jnp.zeros(n_op_heavy, jnp.int32),
            op_cnt=col(np.append(self.op_adj.count[:, 0], 1.0)),
            op_validf=col(np.append(self.op_valid, False)),
            buf_tbl=jnp.asarray(self.buf_adj.table_padded(), jnp.int32),
            buf_heavy=jnp.asarray(buf_heavy), buf_rest=jnp.asarray(buf_rest),
            buf_heavy_rows=jnp.zeros(n_buf_heavy, jnp.int32),
            buf_cnt=col(np.append(self.buf_adj.count[:, 0], 1.0)),
            buf_validf=col(np.append(self.buf_valid, False)),
            life_len=col(np.append(np.maximum(self.end - self.start + 1, 1), 1)),
            start=jnp.asarray(self.start, jnp.int32), end=jnp.asarray(self.end, jnp.int32),
            hb0_table=hb0_table, plan_static=jnp.asarray(s["plan"], jnp.float32),
            capacity=jnp.float32(self.cap))
        # index arrays handed to the row updates are padded to the bucket, a
        # whole number of chunks (buckets and chunks are powers of two)
        self.op_len, self.buf_len = T, B
        small, chunk = _chunks(T, self.static_life)
        #: round 0-1 ops', round 1 buffers', round 2 ops' chunks
        self.chunks = (small, min(chunk, B), chunk)
        self.reset()

    def reset(self):
        B, T = self.B, self.T
        self.step = 0
        self.choice = np.zeros(B, np.int64)
        self.offset = np.full(B, -1, np.int64)
        self.live = np.zeros(T, np.int64)
        # placed rectangles (their chosen plan's intervals), in placing order
        # (the first n_placed rows of arrays allocated once: a move appends
        # one, and growing them by copies costs a fraction of a move)
        self.n_placed = 0
        self._p_ids = np.zeros(B, np.int64)
        self._p_iv = np.zeros((B, 4), np.int64)     # home lo, hi, window lo, hi
        self._p_span = np.zeros((B, 2), np.int64)   # the union's first and last op
        self.tops = np.zeros(1, np.int64)           # sorted unique {0} and the placed tops
        cur = self.current()
        self.hb0_state = np.zeros(B, np.int64)
        if cur is not None:
            self.hb0_state[cur] = 1
        self.fits = self._fits(cur)
        self.S = self.recomputed()

    def recomputed(self) -> _State:
        """The network's intermediates of the current state computed afresh
        (what the row updates keep, but ``cd``: zero)."""
        return _init(self.net, self.C, jnp.asarray(self._live_f(np.arange(self.T))),
                     jnp.asarray(self.fits.astype(np.float32)),
                     jnp.asarray(self.hb0_state, jnp.int32))

    def current(self):
        return int(self.order[self.step]) if self.step < self.n else None

    def _live_f(self, rows):
        return self.live[rows].astype(np.float32) / self.cap

    def _fits(self, cur):
        size = np.float32(self.size[cur] if cur is not None else 0) / self.cap
        return self._live_f(slice(None)) + size <= np.float32(1.0)

    def _op_mask(self):
        return np.zeros(self.T + 1, bool)

    def _around(self, ops):
        """A mask of ``ops`` and their schedule neighbours (wrapping, as
        network._op_round's roll does)."""
        m = self._op_mask()
        m[ops] = True
        m[(ops - 1) % self.T] = True
        m[(ops + 1) % self.T] = True
        return m

    def _ops(self, mask):
        return np.nonzero(mask[:self.T] & self.op_valid)[0]

    # -- the game ---------------------------------------------------------------

    p_ids = property(lambda self: self._p_ids[:self.n_placed])
    p_iv = property(lambda self: self._p_iv[:self.n_placed])
    p_span = property(lambda self: self._p_span[:self.n_placed])

    def _plan_intervals(self, b):
        """[P, 4]: each plan's home and window intervals (empty: lo > hi)."""
        return self.intervals[b]

    def _residency(self, b):
        """(first op, [P, L] bool over ops first..first+L-1): game.plan_residency."""
        iv = self._plan_intervals(b)
        lo = np.where(iv[:, 0] <= iv[:, 1], iv[:, 0], self.T)
        lo = min(lo.min(), np.where(iv[:, 2] <= iv[:, 3], iv[:, 2], self.T).min())
        hi = max(iv[:, 1].max(), iv[:, 3].max())
        if hi < lo:
            return 0, np.zeros((self.P, 0), bool)
        t = np.arange(lo, hi + 1)[None, :]
        res = ((iv[:, :1] <= t) & (t <= iv[:, 1:2])) | ((iv[:, 2:3] <= t) & (t <= iv[:, 3:4]))
        return lo, res

    def candidates(self, b, lo, res):
        """(candidate offsets [P-1, K] in units, -1 none; capacity ok [P]),
        as game._candidates for buffer b."""
        P, K = self.P, self.K
        size = self.size[b]
        L = res.shape[1]
        live = self.live[lo:lo + L]
        fill = np.where(res, live[None, :], 0).max(1) if L else np.zeros(P, np.int64)
        cap_ok = ~(res.any(1) & (fill + size > self.cap_units)) & self.plan_valid[b]
        offs = np.full((P - 1, K), -1, np.int64)
        iv = self._plan_intervals(b)[1:]
        if self.n_placed:
            home, win = iv[:, 0] <= iv[:, 1], iv[:, 2] <= iv[:, 3]
            span_lo = min(iv[home, 0].min(initial=self.T), iv[win, 2].min(initial=self.T))
            span_hi = max(iv[home, 1].max(initial=-1), iv[win, 3].max(initial=-1))
            near = (self.p_span[:, 0] <= span_hi) & (span_lo <= self.p_span[:, 1])
            piv = self.p_iv[near]
            poff = self.offset[self.p_ids[near]]
            ptop = poff + self.size[self.p_ids[near]]
        else:
            piv = np.zeros((0, 4), np.int64)
            poff = ptop = np.zeros(0, np.int64)

        def ov(l1, h1, l2, h2):
            return (l1 <= h1) & (l2 <= h2) & (l1 <= h2) & (l2 <= h1)

        bh_lo, bh_hi, bw_lo, bw_hi = (iv[:, i:i + 1] for i in range(4))
        jh_lo, jh_hi, jw_lo, jw_hi = (piv[None, :, i] for i in range(4))
        conflict = (ov(bh_lo, bh_hi, jh_lo, jh_hi) | ov(bh_lo, bh_hi, jw_lo, jw_hi)
                    | ov(bw_lo, bw_hi, jh_lo, jh_hi) | ov(bw_lo, bw_hi, jw_lo, jw_hi))
        tops = self.tops
        for p in range(P - 1):
            c = conflict[p]
            o, tp = poff[c], ptop[c]
            srt = np.argsort(o, kind="stable")
            o, tp = o[srt], tp[srt]
            run = np.maximum.accumulate(tp) if len(tp) else tp
            # the free gaps between the merged rectangles, and above them
            glo = np.concatenate([[0], run])
            ghi = np.concatenate([o, [self.cap_units]])
            ghi = np.minimum(ghi, self.cap_units) - size        # the highest start in the gap
            i0 = np.searchsorted(tops, glo, side="left")
            i1 = np.searchsorted(tops, ghi, side="right")
            ok = np.nonzero(i1 > i0)[0]
            got = []
            for j in ok:
                got.extend(tops[i0[j]:min(i1[j], i0[j] + K - len(got))].tolist())
                if len(got) >= K:
                    break
            offs[p, :len(got)] = got
        return offs, cap_ok, fill

    def legal(self, offs, cap_ok):
        K, P1 = self.K, self.P - 1
        plan_ok = cap_ok[1:, None]
        if self.placement:
            per = plan_ok & (offs >= 0)
        else:
            per = plan_ok & (np.arange(K)[None, :] == 0)
        return np.concatenate([[True], per.reshape(P1 * K)])

    # -- one move ---------------------------------------------------------------

    def _head_args(self):
        """(the inputs of _head after net, S, C; the candidate offsets) of
        the current state."""
        b = self.current()
        iv = self._plan_intervals(b)
        lo, res = self._residency(b)
        offs, cap_ok, fill = self.candidates(b, lo, res)
        legal = self.legal(offs, cap_ok)
        legal_plan = np.concatenate([[True], legal[1:].reshape(self.P - 1, -1).any(1)])
        size = np.float32(self.size[b])
        fillf = fill.astype(np.float32)
        head = (self.cap - fillf - size) / self.cap
        dyn = np.stack([legal_plan.astype(np.float32), np.clip(head, -2.0, 1.0),
                        fillf / self.cap], axis=1)
        uses = np.zeros(self.T, np.float32)
        np.add.at(uses, self.buf_adj.neighbours(b), 1.0)    # an access list's repeats count
        return (b, uses, iv.astype(np.int32), dyn, offs.astype(np.int32), legal), offs

    def logits(self):
        """(argmax, logits [A] with illegal actions at network.NEG, the
        candidate offsets) of the current state."""
        args, offs = self._head_args()
        a, logits = _head(self.net, self.S, self.C, *args)
        return int(a), logits, offs

    def move(self, action: int, offs):
        """Plays a legal ``action`` and updates the network's rows."""
        rows = self._advance(action, offs)
        if rows is not None:
            self.S = _update(self.net, self.S, self.C, *rows, chunks=self.chunks)

    def _advance(self, action: int, offs):
        """Plays a legal ``action`` in the game and works out the rows whose
        inputs changed: the inputs of _update after net, S, C (None after
        the last move)."""
        b = self.current()
        K, T, B = self.K, self.T, self.B
        p = 0 if action == 0 else 1 + (action - 1) // K
        k = 0 if action == 0 else (action - 1) % K
        self.choice[b] = p
        changed_live = np.zeros(0, np.int64)
        if p > 0:
            off = int(offs[p - 1, k]) if self.placement else 0
            self.offset[b] = off
            iv = self._plan_intervals(b)[p]
            n = self.n_placed
            self._p_ids[n] = b
            self._p_iv[n] = iv
            span = (min(iv[0] if iv[0] <= iv[1] else T, iv[2] if iv[2] <= iv[3] else T),
                    max(iv[1], iv[3]))
            self._p_span[n] = span
            self.n_placed = n + 1
            top = off + int(self.size[b])
            i = np.searchsorted(self.tops, top)
            if i == len(self.tops) or self.tops[i] != top:
                self.tops = np.insert(self.tops, i, top)
            t = np.arange(T)
            changed_live = np.nonzero(((iv[0] <= t) & (t <= iv[1]))
                                      | ((iv[2] <= t) & (t <= iv[3])))[0]
            self.live[changed_live] += self.size[b]
        self.step += 1
        c = self.current()
        self.hb0_state[b] = 2 + self.plan_kind[b, p]
        if c is None:
            return None
        self.hb0_state[c] = 1
        bufs0 = np.array([b, c], np.int64)
        # round 0: the ops whose resident bytes or fits flag changed
        fits = self._fits(c)
        m0 = self._op_mask()
        m0[changed_live] = True
        m0[:T] |= fits != self.fits
        self.fits = fits
        d0 = self._ops(m0)
        # round 1, ops: those, their neighbours, the ops of the two buffers
        m1 = self._around(d0)
        self.buf_adj.mark(m1, bufs0)
        d1 = self._ops(m1)
        L = self.op_len
        r1 = (len(d0), _pad(d0, L, T + 1), _pad(self._live_f(d0), L, 0.0),
              _pad(fits[d0].astype(np.float32), L, 0.0), bufs0.astype(np.int32),
              self.hb0_state[bufs0].astype(np.int32), len(d1), _pad(d1, L, T + 1))
        # round 1, buffers: those living across a changed op (their lifetime
        # sums; none where they are static), the two, and the buffers of the
        # changed ops
        # (the two and those of the changed ops: their first layers' fixed part)
        mf = np.zeros(B + 1, bool)
        mf[bufs0] = True
        self.op_adj.mark(mf, d1)
        f1 = np.nonzero(mf[:B] & self.buf_valid)[0]
        if self.static_life:
            i0 = i1 = np.zeros(B, np.int64)
            mb = mf
        else:
            i0 = np.searchsorted(d1, self.start, side="left")
            i1 = np.searchsorted(d1, self.end, side="right")
            mb = mf.copy()
            mb[:B] |= (i1 > i0) & self.buf_valid
        b1 = np.nonzero(mb[:B] & self.buf_valid)[0]
        LB = self.buf_len
        rb = (len(f1), _pad(f1, LB, B + 1), len(b1), _pad(b1, LB, B + 1),
              _pad(i0[b1], LB, 0), _pad(i1[b1], LB, 0))
        # round 2, ops: round 1's and their neighbours (their first layers'
        # fixed part), the ops of the changed buffers
        m2 = self._around(d1)
        f2 = self._ops(m2)
        self.buf_adj.mark(m2, b1)
        d2 = self._ops(m2)
        if self.rows is not None:
            self.rows.append((len(d0), len(d1), len(b1), len(d2)) + self._without_lifetimes(d1, bufs0))
        return r1, rb, (len(f2), _pad(f2, L, T + 1), len(d2), _pad(d2, L, T + 1))

    def _without_lifetimes(self, d1, bufs0):
        """(round 1 buffers, round 2 ops) if a buffer's lifetime mean did not
        change with the ops it does not access."""
        mb = np.zeros(self.B + 1, bool)
        mb[bufs0] = True
        self.op_adj.mark(mb, d1)
        b1 = np.nonzero(mb[:self.B] & self.buf_valid)[0]
        m2 = self._around(d1)
        self.buf_adj.mark(m2, b1)
        return len(b1), len(self._ops(m2))

    def play(self):
        """The argmax game from the start: the actions [B] (0 after the end)."""
        self.reset()
        actions = np.zeros(self.B, np.int32)
        if self.n == 0:
            return actions
        a, _, offs = self.logits()
        while True:
            actions[self.step] = a
            rows = self._advance(a, offs)
            if rows is None:
                return actions
            # the rows' update and the next move's head in one device call
            args, offs = self._head_args()
            self.S, a = _step(self.net, self.S, self.C, *rows, args, chunks=self.chunks)
            a = int(a)


#: play.play_batch plays the argmax here from this game bucket up. Below it
#: the reference's one jitted loop (vmapped over the batch) costs less than
#: a Python step and four device calls per move: warm, one offload instance
#: of 53 buffers 0.09 s there against 0.18 s here, 203 buffers 0.30 against
#: 0.85 s, 603 buffers (the 1,024 bucket) 3.4 against 2.7 s (2 cores at a
#: load average of 14-17).
FAST_MIN_MOVES = 1024


def play_batch(net, arrays, static, rows: list | None = None):
    """The policy's argmax game of every instance of the batch, one at a
    time: ``(final states, None, actions [N, M], None)``, as
    ``play.play_batch(net, arrays, static, key)`` returns them (the final
    states' time estimated once, at the end). ``rows``: a list that gets
    each game's ``Player.rows``."""
    N, M = arrays.order.shape
    played = np.zeros((N, M), np.int32)
    states = []
    for i in range(N):
        g = jax.tree.map(lambda x: x[i], arrays)
        pl = Player(net, g, jax.tree.map(lambda x: x[i], static), count_rows=rows is not None)
        played[i] = pl.play()
        if rows is not None:
            rows.append(pl.rows)
        choice = jnp.asarray(pl.choice, jnp.int32)
        # the cost model as encoding compiled it for this bucket (T0)
        states.append(game.State(inst=g, step=jnp.int32(pl.step), choice=choice,
                                 offset=jnp.asarray(pl.offset, jnp.int32),
                                 live=jnp.asarray(pl.live, jnp.int32),
                                 time=F._estimated_time(g, choice), done=jnp.bool_(True)))
    final = jax.tree.map(lambda *xs: jnp.stack(xs), *states)
    return final, None, jnp.asarray(played), None
