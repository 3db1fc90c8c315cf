"""The policy's argmax game, incrementally: the same moves as
``play.play_batch(..., num_simulations=0)`` at a fraction of the cost.

The reference plays each move with a whole ``network.apply``: the encoders
and both rounds of message passing over every buffer and op, the value head,
and the game's candidate offsets twice (once in ``apply``, once in
``game.advance``), inside one jitted loop. But a move changes little: the
decided buffer's residency changes the resident bytes on its ops, two
buffers change their dynamic features (the one decided, the next one), and
the argmax needs neither the value head nor any buffer's last-round
embedding but the next buffer's. This module keeps every intermediate of
the network (per-op and per-buffer embeddings of each round, the sums the
rounds aggregate) in numpy and recomputes after each move only the rows
whose inputs changed:

* round 0: the ops whose resident bytes or "the next buffer fits" flag
  changed; the two buffers' encodings come from tables computed once per
  instance (a buffer's dynamic features take six values);
* round 1 ops: those, their schedule neighbours, the ops accessing the two
  buffers; round 1 buffers: the buffers accessing a changed op or living
  across one (the lifetime mean; its sums are updated by the changes'
  prefix sums, in float64);
* round 2 ops: the changed ops' neighbours and every op accessing a changed
  buffer; round 2 buffers: the next buffer's row only (the policy reads no
  other);
* the attention, the plans' residency means and the plan head on the next
  buffer, as ``network.apply`` does.

The game's state is kept in numpy too (choices, offsets, resident bytes, the
sorted tops of placed buffers), and ``candidates`` computes the candidate
offsets as ``game._candidates`` does, from the free gaps left by the
rectangles that conflict with each plan. Float32 like the reference (sums
that are updated rather than recomputed are float64), so the logits agree
to rounding; ``test_msa_learned`` checks that the moves are the same.
"""
from __future__ import annotations

import numpy as np

from ..core import game
from . import features as F
from . import network

_SQRT_2_OVER_PI = np.float32(np.sqrt(2.0 / np.pi))


def _gelu(x):
    # jax.nn.gelu's default (tanh) form
    return x * (np.float32(0.5) * (np.float32(1.0) + np.tanh(
        _SQRT_2_OVER_PI * (x + np.float32(0.044715) * (x * x * x)))))


def _mlp(layers, x):
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        if i < len(layers) - 1:
            x = _gelu(x)
    return x


def _norm(x):
    n = np.float32(x.shape[-1])
    xc = x - x.sum(-1, keepdims=True) / n
    var = np.einsum("...i,...i->...", xc, xc)[..., None] / n
    return xc / np.sqrt(var + np.float32(1e-5))


def _layers(ps):
    return [(np.asarray(p["w"], np.float32), np.asarray(p["b"], np.float32)) for p in ps]


class _Adjacency:
    """Who touches whom (ops -> their buffers, or buffers -> their ops) as a
    padded table for gathers: ``sum(X, rows)`` sums, per row, X over its
    neighbours (X has a zero row at index ``pad``); the few rows with more
    neighbours than the table is wide add the rest one by one."""

    def __init__(self, keys, vals, n, pad):
        o = np.argsort(keys, kind="stable")
        keys, vals = keys[o], vals[o].astype(np.int64)
        deg = np.bincount(keys, minlength=n)
        ptr = np.concatenate([[0], np.cumsum(deg)])
        width = int(min(max(np.percentile(deg, 99), 1), deg.max(initial=1)))
        pos = np.arange(len(keys)) - ptr[keys]
        self.table = np.full((n, width), pad, np.int64)
        inside = pos < width
        self.table[keys[inside], pos[inside]] = vals[inside]
        self.rest = {int(k): vals[ptr[k] + width:ptr[k + 1]] for k in np.nonzero(deg > width)[0]}
        self.heavy = np.zeros(n, bool)
        self.heavy[list(self.rest)] = True
        self.ptr, self.vals = ptr, vals
        self.count = np.maximum(deg, 1).astype(np.float32)[:, None]

    def sum(self, X, rows):
        out = X[self.table[rows]].sum(1)
        if self.rest:
            for i in np.nonzero(self.heavy[rows])[0]:
                out[i] += X[self.rest[int(rows[i])]].sum(0)
        return out

    def mark(self, mask, rows):
        """Sets ``mask`` (one longer than the neighbours' count: the pad) at
        the neighbours of ``rows``."""
        mask[self.table[rows]] = True
        if self.rest:
            for r in rows[self.heavy[rows]]:
                mask[self.rest[int(r)]] = True


class Player:
    """One instance's argmax game (``play`` plays it; ``logits`` gives the
    current state's logits, the same as ``network.apply``'s up to rounding)."""

    def __init__(self, params, g: game.GameArrays, sf: F.Static):
        a = {k: np.asarray(v) for k, v in g._asdict().items()}
        s = {k: np.asarray(v) for k, v in sf._asdict().items()}
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
        self.op_valid = a["op_valid"]
        self.op_validf = self.op_valid.astype(np.float32)[:, None]
        self.real_ops = np.nonzero(self.op_valid)[0]
        self.buf_valid = s["buf_valid"]
        self.buf_validf = self.buf_valid.astype(np.float32)[:, None]
        self.start, self.end = s["start"].astype(np.int64), s["end"].astype(np.int64)
        self.life_len = np.maximum(self.end - self.start + 1, 1).astype(np.float32)[:, None]
        self.op_static = s["op"].astype(np.float32)
        self.plan_static = s["plan"].astype(np.float32)
        self.plan_kind = s["plan_kind"].astype(np.int64)
        # the access list, both ways (padding edges dropped, as the network's
        # segment sums drop them)
        eo, eb = s["edge_op"].astype(np.int64), s["edge_buf"].astype(np.int64)
        keep = (eo < self.T) & (eb < self.B)
        eo, eb = eo[keep], eb[keep]
        # each embedding array has one more row than ops or buffers, kept at
        # zero: the pad the adjacency tables point at
        self.op_adj = _Adjacency(eo, eb, self.T, self.B)
        self.buf_adj = _Adjacency(eb, eo, self.B, self.T)
        # parameters
        self.buf_enc = _layers(params["buf_enc"])
        self.op_enc = _layers(params["op_enc"])
        self.op_msg = [_layers(r) for r in params["op_msg"]]
        self.buf_msg = [_layers(r) for r in params["buf_msg"]]
        self.wq = np.asarray(params["query"]["w"], np.float32)
        self.bq = np.asarray(params["query"]["b"], np.float32)
        self.plan_mlp = _layers(params["plan"])
        self.wp = np.asarray(params["plan_logit"]["w"], np.float32)
        self.bp = np.asarray(params["plan_logit"]["b"], np.float32)
        self.wo = np.asarray(params["offset_logit"]["w"], np.float32)
        self.bo = np.asarray(params["offset_logit"]["b"], np.float32)
        self.H = self.wq.shape[0]
        self._encode_tables(s["buf"].astype(np.float32))
        self.reset()

    # -- set-up ---------------------------------------------------------------

    def _encode_tables(self, buf_static):
        """hb0 for every buffer in each of its six dynamic states: undecided,
        current, decided with each of the four plan kinds."""
        B = self.B
        rows = []
        for dyn in ([0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1]) + tuple(
                [1] + list(np.eye(F.PLAN_KINDS)[k]) + [0] for k in range(F.PLAN_KINDS)):
            d = np.broadcast_to(np.asarray(dyn, np.float32), (B, F.BUF_DYNAMIC))
            rows.append(_mlp(self.buf_enc, np.concatenate([buf_static, d], axis=1)))
        self.hb0_table = np.stack(rows)              # [6, B, H]

    def reset(self):
        B, T = self.B, self.T
        self.step = 0
        self.choice = np.zeros(B, np.int64)
        self.offset = np.full(B, -1, np.int64)
        self.live = np.zeros(T, np.int64)
        # placed rectangles (their chosen plan's intervals), in placing order
        self.p_ids = np.zeros(0, np.int64)
        self.p_iv = np.zeros((0, 4), np.int64)      # home lo, hi, window lo, hi
        self.p_span = np.zeros((0, 2), np.int64)    # the union's first and last op
        self.tops = np.zeros(1, np.int64)           # sorted unique {0} and the placed tops
        cur = self.current()
        self.hb0_state = np.zeros(B, np.int64)
        if cur is not None:
            self.hb0_state[cur] = 1
        self.hb0 = self._padded(self.hb0_table[self.hb0_state, np.arange(B)])
        self.fits = self._fits(cur)
        rows = np.arange(T)
        self.ho0 = self._padded(self._op_enc_rows(rows))
        self.ho1 = self._padded(self._op_round_rows(0, rows, self.ho0, self.hb0))
        ho1_64 = self.ho1[:T].astype(np.float64)
        cs = np.concatenate([np.zeros((1, self.H)), np.cumsum(ho1_64, axis=0)])
        self.life1 = cs[self.end + 1] - cs[self.start]          # float64 sums
        self.hb1 = self._padded(
            self._buf_round_rows(0, np.arange(B), self.hb0, self.ho1, self.life1))
        self.ho2 = self._padded(self._op_round_rows(1, rows, self.ho1, self.hb1))
        self.hon = _norm(self.ho2[:T])

    def _padded(self, x):
        return np.concatenate([x, np.zeros((1, x.shape[1]), x.dtype)])

    def current(self):
        return int(self.order[self.step]) if self.step < self.n else None

    # -- the network's rows -----------------------------------------------------

    def _fits(self, cur):
        livef = self.live.astype(np.float32) / self.cap
        size = np.float32(self.size[cur] if cur is not None else self.size[self.order[-1]]) / self.cap
        return (livef + size <= np.float32(1.0))

    def _op_enc_rows(self, rows):
        livef = self.live[rows].astype(np.float32) / self.cap
        x = np.concatenate([self.op_static[rows], livef[:, None],
                            self.fits[rows].astype(np.float32)[:, None]], axis=1)
        return _mlp(self.op_enc, x)

    def _op_round_rows(self, r, rows, ho, hb):
        T = self.T
        from_bufs = self.op_adj.sum(hb, rows) / self.op_adj.count[rows]
        left, right = (rows - 1) % T, (rows + 1) % T
        nb = (ho[left] * self.op_validf[left] + ho[right] * self.op_validf[right]) / np.float32(2.0)
        x = _norm(np.concatenate([ho[rows], from_bufs, nb], axis=1))
        return ho[rows] + _mlp(self.op_msg[r], x) * self.op_validf[rows]

    def _buf_round_rows(self, r, rows, hb, ho, life_sums):
        from_ops = self.buf_adj.sum(ho, rows) / self.buf_adj.count[rows]
        life = (life_sums[rows] / self.life_len[rows]).astype(np.float32)
        x = _norm(np.concatenate([hb[rows], from_ops, life], axis=1))
        return hb[rows] + _mlp(self.buf_msg[r], x) * self.buf_validf[rows]

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

    def _plan_intervals(self, b):
        """[P, 4]: each plan's home and window intervals (empty: lo > hi)."""
        return np.stack([self.home_lo[b], self.home_hi[b], self.win_lo[b], self.win_hi[b]], 1)

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
        if len(self.p_ids):
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

    def logits(self):
        """(logits [A] with illegal actions at network.NEG, legal [A],
        candidate offsets) of the current state."""
        b = self.current()
        H = self.H
        # the current buffer's last round (network._buf_round, one row)
        rows = np.array([b])
        from_ops = self.buf_adj.sum(self.ho2, rows) / self.buf_adj.count[rows]
        life = (self.ho2[self.start[b]:self.end[b] + 1].astype(np.float64).sum(0)
                / self.life_len[b]).astype(np.float32)[None, :]
        x = _norm(np.concatenate([self.hb1[rows], from_ops, life], axis=1))
        hb2 = self.hb1[rows] + _mlp(self.buf_msg[1], x) * self.buf_validf[rows]
        q = _norm(hb2)[0]
        qq = q @ self.wq + self.bq
        keys = self.hon[self.real_ops]
        z = keys @ qq[:H] / np.float32(np.sqrt(H))
        w = np.exp(z - z.max())
        ctx_o = (w / w.sum()) @ keys
        lo, res = self._residency(b)
        offs, cap_ok, fill = self.candidates(b, lo, res)
        legal = self.legal(offs, cap_ok)
        rf = res.astype(np.float32)
        res_mean = rf @ self.hon[lo:lo + res.shape[1]] / np.maximum(rf.sum(1, keepdims=True), 1.0)
        legal_plan = np.concatenate([[True], legal[1:].reshape(self.P - 1, -1).any(1)])
        size = np.float32(self.size[b])
        fillf = fill.astype(np.float32)
        head = (self.cap - fillf - size) / self.cap
        dyn = np.stack([legal_plan.astype(np.float32), np.clip(head, -2.0, 1.0),
                        fillf / self.cap], axis=1)
        P = self.P
        plan_in = np.concatenate([np.broadcast_to(q, (P, H)), np.broadcast_to(ctx_o, (P, H)),
                                  res_mean, self.plan_static[b], dyn], axis=1)
        e = _mlp(self.plan_mlp, plan_in)
        plan_logit = (e @ self.wp + self.bp)[:, 0]
        K, P1 = self.K, P - 1
        off = np.where(offs >= 0, offs.astype(np.float32) / self.cap, np.float32(-1.0))
        xo = np.concatenate([np.broadcast_to(e[1:, None, :], (P1, K, H)), off[..., None],
                             (offs >= 0).astype(np.float32)[..., None],
                             np.broadcast_to(np.eye(K, dtype=np.float32)[None], (P1, K, K))],
                            axis=2)
        o = (xo @ self.wo + self.bo)[..., 0]
        logits = np.concatenate([plan_logit[:1], (plan_logit[1:, None] + o).reshape(P1 * K)])
        return np.where(legal, logits, np.float32(network.NEG)), legal, offs

    def move(self, action: int, offs):
        """Plays a legal ``action`` and updates the network's rows."""
        b = self.current()
        K = self.K
        p = 0 if action == 0 else 1 + (action - 1) // K
        k = 0 if action == 0 else (action - 1) % K
        self.choice[b] = p
        changed_live = np.zeros(0, np.int64)
        if p > 0:
            off = int(offs[p - 1, k]) if self.placement else 0
            self.offset[b] = off
            iv = self._plan_intervals(b)[p]
            self.p_ids = np.append(self.p_ids, b)
            self.p_iv = np.vstack([self.p_iv, iv[None]])
            span = (min(iv[0] if iv[0] <= iv[1] else self.T, iv[2] if iv[2] <= iv[3] else self.T),
                    max(iv[1], iv[3]))
            self.p_span = np.vstack([self.p_span, np.array(span)[None]])
            top = off + int(self.size[b])
            i = np.searchsorted(self.tops, top)
            if i == len(self.tops) or self.tops[i] != top:
                self.tops = np.insert(self.tops, i, top)
            t = np.arange(self.T)
            res = ((iv[0] <= t) & (t <= iv[1])) | ((iv[2] <= t) & (t <= iv[3]))
            changed_live = np.nonzero(res)[0]
            self.live[changed_live] += self.size[b]
        self.step += 1
        c = self.current()
        # round 0
        fits = self._fits(c)
        m0 = self._op_mask()
        m0[changed_live] = True
        m0[:self.T] |= fits != self.fits
        self.fits = fits
        d0 = self._ops(m0)
        if len(d0):
            self.ho0[d0] = self._op_enc_rows(d0)
        self.hb0_state[b] = 2 + self.plan_kind[b, p]
        if c is None:
            self.hb0[b] = self.hb0_table[self.hb0_state[b], b]
            return
        self.hb0_state[c] = 1
        bufs0 = np.array([b, c], np.int64)
        self.hb0[bufs0] = self.hb0_table[self.hb0_state[bufs0], bufs0]
        # round 1, ops: the changed ops, their neighbours, the ops of the two buffers
        m1 = self._around(d0)
        self.buf_adj.mark(m1, bufs0)
        d1 = self._ops(m1)
        new1 = self._op_round_rows(0, d1, self.ho0, self.hb0)
        delta = new1.astype(np.float64) - self.ho1[d1]
        self.ho1[d1] = new1
        # the lifetime sums of every buffer living across a changed op
        cd = np.concatenate([np.zeros((1, self.H)), np.cumsum(delta, axis=0)])
        i0 = np.searchsorted(d1, self.start, side="left")
        i1 = np.searchsorted(d1, self.end, side="right")
        across = (i1 > i0) & self.buf_valid
        self.life1[across] += cd[i1[across]] - cd[i0[across]]
        # round 1, buffers: those, the two, and the buffers of the changed ops
        mb = np.zeros(self.B + 1, bool)
        mb[:self.B] = across
        mb[bufs0] = True
        self.op_adj.mark(mb, d1)
        b1 = np.nonzero(mb[:self.B] & self.buf_valid)[0]
        self.hb1[b1] = self._buf_round_rows(0, b1, self.hb0, self.ho1, self.life1)
        # round 2, ops: neighbours of round 1's, and the ops of the changed buffers
        m2 = self._around(d1)
        self.buf_adj.mark(m2, b1)
        d2 = self._ops(m2)
        self.ho2[d2] = self._op_round_rows(1, d2, self.ho1, self.hb1)
        self.hon[d2] = _norm(self.ho2[d2])

    def play(self):
        """The argmax game from the start: the actions [B] (0 after the end)."""
        self.reset()
        actions = np.zeros(self.B, np.int32)
        while self.step < self.n:
            logits, _, offs = self.logits()
            a = int(np.argmax(logits))
            actions[self.step] = a
            self.move(a, offs)
        return actions
