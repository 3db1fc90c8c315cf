"""The policy/value network (plain jax; parameters are a dict of arrays).

Size-independent by construction: every weight acts on one buffer, one op or
one plan, never on the padded instance as a whole vector.

1. encoders: an MLP per buffer (static + dynamic features) and per op;
2. ``ROUNDS`` rounds of message passing over the schedule, masked to the
   bucket's real buffers and ops (sums over the list of (op, buffer)
   accesses, not the dense access table): an op hears the buffers it accesses and
   its neighbours in the schedule; a buffer hears the ops that access it and
   the mean over the ops of its lifetime (a prefix sum over the schedule).
   With ``static_life`` (the parameters hold ``life_enc``) the first buffer
   round's lifetime mean is over a static embedding of the ops (an MLP of
   their static features) instead of the first round's op embeddings: it no
   longer changes with the game, so a move changes a buffer's first round
   only through the ops that access it (argmax.py recomputes 5-9% of the
   rows instead of a quarter to a half);
3. the buffer being decided attends over all ops and all buffers;
4. policy: an MLP per menu plan of the current buffer (its static features,
   headroom over its residency, the mean op embedding over that residency)
   gives a plan logit; a linear term per candidate offset adds to it;
5. value: an MLP over the current buffer, the attention contexts, masked
   means and the game's progress: the time still to be saved, over ``T0``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..core import game
from . import features as F

HIDDEN = 64
ROUNDS = 2
NEG = -1e9


def _dense(key, n_in, n_out, scale=1.0):
    w = jax.random.normal(key, (n_in, n_out), jnp.float32) * (scale / np.sqrt(n_in))
    return {"w": w, "b": jnp.zeros((n_out,), jnp.float32)}


def _mlp_params(key, sizes, last_scale=1.0):
    keys = jax.random.split(key, len(sizes) - 1)
    n = len(sizes) - 1
    return [_dense(k, a, b, last_scale if i == n - 1 else 1.0)
            for i, (k, a, b) in enumerate(zip(keys, sizes[:-1], sizes[1:]))]


def _mlp(layers, x):
    for i, l in enumerate(layers):
        x = x @ l["w"] + l["b"]
        if i < len(layers) - 1:
            x = jax.nn.gelu(x)
    return x


def _norm(x):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5)


def init_params(seed: int = 0, hidden: int = HIDDEN, static_life: bool = False) -> dict:
    H = hidden
    k = iter(jax.random.split(jax.random.PRNGKey(seed), 16))
    plan_in = H * 3 + F.PLAN_STATIC + F.PLAN_DYNAMIC
    params = {
        "buf_enc": _mlp_params(next(k), [F.BUF_STATIC + F.BUF_DYNAMIC, H, H]),
        "op_enc": _mlp_params(next(k), [F.OP_STATIC + F.OP_DYNAMIC, H, H]),
        "op_msg": [_mlp_params(next(k), [3 * H, H, H], 0.5) for _ in range(ROUNDS)],
        "buf_msg": [_mlp_params(next(k), [3 * H, H, H], 0.5) for _ in range(ROUNDS)],
        "query": _dense(next(k), H, 2 * H),
        "plan": _mlp_params(next(k), [plan_in, H, H]),
        "plan_logit": _dense(next(k), H, 1, 0.1),
        "offset_logit": _dense(next(k), H + F.OFFSET_FEATURES + game.NUM_OFFSETS, 1, 0.1),
        "value": _mlp_params(next(k), [H * 5 + F.GLOBAL_FEATURES, H, 1], 0.1),
    }
    return with_static_life(params) if static_life else params


def static_life(params) -> bool:
    """Whether the first buffer round reads static lifetime means (the
    parameter tree's structure says it, so it holds under jit)."""
    return "life_enc" in params


def with_static_life(params) -> dict:
    """``params`` with ``life_enc``: the op encoder restricted to the static
    features (its dynamic inputs zero), so a network trained with lifetime
    means of op embeddings starts from means of the nearest static ones."""
    if static_life(params):
        return params
    first, rest = params["op_enc"][0], params["op_enc"][1:]
    life = [{"w": first["w"][:F.OP_STATIC], "b": first["b"]}] + [dict(l) for l in rest]
    return {**params, "life_enc": life}


def life_ops(params, op_static):
    """[T, H]: the static op embedding (of ``op_static``, features.Static.op)
    the first buffer round averages over lifetimes (static_life only)."""
    return _mlp(params["life_enc"], op_static)


def _masked_mean(x, mask):
    m = mask.astype(jnp.float32)[:, None]
    return (x * m).sum(0) / jnp.maximum(m.sum(), 1.0)


def _attend(q, keys, mask):
    logits = jnp.where(mask, keys @ q / np.sqrt(q.shape[0]), NEG)
    return jax.nn.softmax(logits) @ keys


def _op_round(layers, hb, ho, sf: F.Static, s: game.State):
    g = s.inst
    T = ho.shape[0]
    # the mean over the buffers each op accesses, summed over the edge list
    summed = jax.ops.segment_sum(hb[jnp.minimum(sf.edge_buf, hb.shape[0] - 1)], sf.edge_op,
                                 num_segments=T + 1)[:T]
    count = jax.ops.segment_sum(jnp.ones(sf.edge_op.shape, jnp.float32), sf.edge_op,
                                num_segments=T + 1)[:T]
    from_bufs = summed / jnp.maximum(count, 1.0)[:, None]
    valid = g.op_valid.astype(jnp.float32)[:, None]
    nb = (jnp.roll(ho * valid, 1, 0) + jnp.roll(ho * valid, -1, 0)) / 2.0
    return ho + _mlp(layers, _norm(jnp.concatenate([ho, from_bufs, nb], axis=1))) * valid


def _buf_round(layers, hb, ho, sf: F.Static, s: game.State, life_src=None):
    """``life_src`` [T, H]: what the lifetime means average (default ``ho``)."""
    B = hb.shape[0]
    summed = jax.ops.segment_sum(ho[jnp.minimum(sf.edge_op, ho.shape[0] - 1)], sf.edge_buf,
                                 num_segments=B + 1)[:B]
    count = jax.ops.segment_sum(jnp.ones(sf.edge_buf.shape, jnp.float32), sf.edge_buf,
                                num_segments=B + 1)[:B]
    from_ops = summed / jnp.maximum(count, 1.0)[:, None]
    src = ho if life_src is None else life_src
    cs = jnp.concatenate([jnp.zeros((1, ho.shape[1])), jnp.cumsum(src, axis=0)])
    life = (cs[sf.end + 1] - cs[sf.start]) / jnp.maximum(sf.end - sf.start + 1, 1)[:, None]
    valid = sf.buf_valid.astype(jnp.float32)[:, None]
    return hb + _mlp(layers, _norm(jnp.concatenate([hb, from_ops, life], axis=1))) * valid


def apply(params: dict, sf: F.Static, s: game.State):
    """``(logits [A], value, legal [A])`` for one state (vmap for a batch)."""
    g = s.inst
    legal, offs, cap_ok = game.legal_and_offsets(s)
    hb = _mlp(params["buf_enc"], jnp.concatenate([sf.buf, F.dynamic_buffers(sf, s)], axis=1))
    ho = _mlp(params["op_enc"], jnp.concatenate([sf.op, F.dynamic_ops(s)], axis=1))
    life0 = life_ops(params, sf.op) if static_life(params) else None
    for r in range(ROUNDS):
        ho = _op_round(params["op_msg"][r], hb, ho, sf, s)
        hb = _buf_round(params["buf_msg"][r], hb, ho, sf, s, life0 if r == 0 else None)
    hb, ho = _norm(hb), _norm(ho)
    cur = F.current_buffer(s)
    q = hb[cur]
    qq = q @ params["query"]["w"] + params["query"]["b"]
    H = q.shape[0]
    ctx_o = _attend(qq[:H], ho, g.op_valid)
    ctx_b = _attend(qq[H:], hb, sf.buf_valid)

    res = game.plan_residency(g, cur)                                   # [P, T]
    rf = res.astype(jnp.float32)
    res_mean = rf @ ho / jnp.maximum(rf.sum(1, keepdims=True), 1.0)     # [P, H]
    legal_plan = jnp.concatenate([jnp.ones(1, bool),
                                  legal[1:].reshape(game.NUM_PLANS - 1, -1).any(1)])
    P = res.shape[0]
    plan_in = jnp.concatenate([jnp.broadcast_to(q, (P, H)), jnp.broadcast_to(ctx_o, (P, H)),
                               res_mean, sf.plan[cur], F.dynamic_plans(s, res, legal_plan)],
                              axis=1)
    e = _mlp(params["plan"], plan_in)                                   # [P, H]
    plan_logit = (e @ params["plan_logit"]["w"] + params["plan_logit"]["b"])[:, 0]
    logits = jnp.concatenate([plan_logit[:1], _offset_logits(params, e, plan_logit, offs, g)])
    logits = jnp.where(legal, logits, NEG)

    glob = F.global_features(sf, s)
    v_in = jnp.concatenate([q, ctx_o, ctx_b, _masked_mean(hb, sf.buf_valid),
                            _masked_mean(ho, g.op_valid), glob])
    value = _mlp(params["value"], v_in)[0]
    return logits, value, legal


def _offset_logits(params, e, plan_logit, offs, g):
    """[(P-1) * K]: plan p's logit plus a term per candidate offset."""
    K = game.NUM_OFFSETS
    P1 = e.shape[0] - 1
    cap = jnp.maximum(g.capacity, 1).astype(jnp.float32)
    off = jnp.where(offs >= 0, offs.astype(jnp.float32) / cap, -1.0)[..., None]   # [P-1, K, 1]
    kk = jnp.broadcast_to(jnp.eye(K)[None], (P1, K, K))
    x = jnp.concatenate([jnp.broadcast_to(e[1:, None, :], (P1, K, e.shape[1])), off,
                         (offs >= 0).astype(jnp.float32)[..., None], kk], axis=2)
    o = (x @ params["offset_logit"]["w"] + params["offset_logit"]["b"])[..., 0]
    return (plan_logit[1:, None] + o).reshape(P1 * K)


def num_params(params) -> int:
    return int(sum(np.prod(x.shape) for x in jax.tree.leaves(params)))
