"""Random programs written the way ML libraries write them, for judging
memfit's split rate on programs nobody tuned it for.

``make(seed, index)`` draws one program: its family in turn, the rest
(sizes, depth, options) from a generator seeded by (seed, index). Every
program is the value and gradient of a loss (the fori family: a value), as
training code calls it. The families and what each draws:

* ``scan_stack``: a decoder whose layers run in ``lax.scan`` over stacked
  parameters (MaxText's ``scan_layers``, flax ``nn.scan``), with or without
  ``jax.checkpoint``; depth, sequence, width, heads, MLP width, causal or
  not, pre- or post-norm, the activation.
* ``gnn``: jraph-style message passing, one or two steps: gather the
  senders' rows, transform, scale by an edge weight, ``segment_sum`` (or a
  segment mean) into the receivers.
* ``embedding_bag``: each bag the mean or sum of its tokens' table rows (a
  gather; the table's gradient is a scatter-add), a linear layer, a loss.
* ``xent``: an LLM head, logits = h @ W, optax's integer-label
  cross-entropy (``take_along_axis``), optionally with PaLM's z-loss.
* ``contrastive``: a CLIP-style loss over a [B, B] matrix of normalised
  embeddings, symmetric or one-sided, a learned temperature.
* ``fori_kernel``: ``lax.fori_loop`` of kernel-weighted means (mean shift).
* ``flax_lm``: a language model written with flax: ``nn.Embed``, a stack of
  blocks in ``nn.scan`` (with or without ``nn.remat``) over flax's
  ``MultiHeadDotProductAttention`` (causal or not, with or without biases)
  and a Dense MLP, LayerNorm or RMSNorm, logits from the embedding
  (``Embed.attend``) or a Dense head, ``optax``'s integer-label
  cross-entropy on the next token. Needs flax (``make`` raises ImportError
  without it).

Development uses seed 0; ``bench/fuzz_real_forms.py`` reports the seed it
is given, and README's number is from a seed held out from development.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RealForm:
    family: str
    description: str
    fn: object          # a function of ``args``: jax.value_and_grad(loss) mostly
    args: tuple


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def _activation(name):
    import jax
    return {"gelu": jax.nn.gelu, "relu": jax.nn.relu, "silu": jax.nn.silu,
            "tanh": jax.numpy.tanh}[name]


def _rms(x):
    import jax.numpy as jnp
    from jax import lax
    return x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6)


def _scan_stack(rng, scale):
    import jax
    import jax.numpy as jnp
    from jax import lax
    layers = int(rng.integers(2, 5))
    s = int(_pick(rng, (512, 768, 1024, 1536)) * scale)
    d = int(_pick(rng, (64, 128, 192)))
    dh = int(_pick(rng, (16, 32, 64)))
    heads = max(1, d // dh)
    ffn = int(_pick(rng, (2, 4)))
    causal, remat = bool(rng.random() < 0.6), bool(rng.random() < 0.7)
    norm, act_name = _pick(rng, ("pre", "post")), _pick(rng, ("gelu", "relu", "silu"))
    act = _activation(act_name)

    def attend(h, p):
        q, k, v = ((h @ p[w]).reshape(s, heads, dh) for w in ("wq", "wk", "wv"))
        scores = jnp.einsum("qhd,khd->hqk", q, k) / np.float32(np.sqrt(dh))
        if causal:
            scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, np.float32(-1e9))
        o = jnp.einsum("hqk,khd->qhd", jax.nn.softmax(scores, -1), v).reshape(s, heads * dh)
        return o @ p["wo"]

    def layer(x, p):
        mlp = lambda h: act(h @ p["w1"]) @ p["w2"]  # noqa: E731
        if norm == "pre":
            x = x + attend(_rms(x), p)
            return x + mlp(_rms(x)), None
        x = _rms(x + attend(x, p))
        return _rms(x + mlp(x)), None

    def loss(params, x):
        y, _ = lax.scan(jax.checkpoint(layer) if remat else layer, x, params)
        return jnp.mean(y * y)

    def w(*shape):
        return (rng.standard_normal((layers,) + shape) / np.sqrt(shape[0])).astype(np.float32)
    params = {"wq": w(d, heads * dh), "wk": w(d, heads * dh), "wv": w(d, heads * dh),
              "wo": w(heads * dh, d), "w1": w(d, ffn * d), "w2": w(ffn * d, d)}
    x = rng.standard_normal((s, d)).astype(np.float32)
    desc = (f"{layers} layers{' checkpointed' if remat else ''} in lax.scan, S={s} d={d} "
            f"{heads}x{dh}{' causal' if causal else ''}, {norm}-norm, {act_name} MLP {ffn}x")
    return desc, jax.value_and_grad(loss, argnums=(0, 1)), (params, x)


def _gnn(rng, scale):
    import jax
    import jax.numpy as jnp
    n = int(rng.integers(2_000, 16_000) * scale)
    e = int(rng.integers(100_000, 500_000) * scale)
    f = int(_pick(rng, (16, 32, 64)))
    steps, mean = int(rng.integers(1, 3)), bool(rng.random() < 0.4)
    act_name = _pick(rng, ("relu", "tanh"))
    act = _activation(act_name)

    def loss(nodes, ws, edge_w, senders, receivers):
        h = nodes
        for i in range(steps):
            msg = act(h[senders] @ ws[i]) * edge_w[:, None]
            agg = jax.ops.segment_sum(msg, receivers, num_segments=n)
            if mean:
                cnt = jax.ops.segment_sum(jnp.ones_like(edge_w), receivers, num_segments=n)
                agg = agg / jnp.maximum(cnt, 1.0)[:, None]
            h = h + agg
        return jnp.mean(h * h)

    args = (rng.standard_normal((n, f)).astype(np.float32),
            (rng.standard_normal((steps, f, f)) / np.sqrt(f)).astype(np.float32),
            rng.standard_normal(e).astype(np.float32),
            rng.integers(0, n, e).astype(np.int32), rng.integers(0, n, e).astype(np.int32))
    desc = (f"{steps}-step message passing, {n} nodes, {e} edges, {f} features, "
            f"{act_name}, segment_{'mean' if mean else 'sum'}")
    return desc, jax.value_and_grad(loss, argnums=(0, 1, 2)), args


def _embedding_bag(rng, scale):
    import jax
    import jax.numpy as jnp
    rows = int(rng.integers(20_000, 200_000) * scale)
    d = int(_pick(rng, (32, 64, 128)))
    bags = int(_pick(rng, (512, 1024, 2048, 4096)) * scale)
    tokens, classes = int(_pick(rng, (16, 32, 64))), int(rng.integers(8, 33))
    pool = _pick(rng, ("mean", "sum"))

    def loss(table, w, toks, targets):
        e = table[toks]
        bag = jnp.mean(e, 1) if pool == "mean" else jnp.sum(e, 1)
        return jnp.mean((bag @ w - targets) ** 2)

    args = (rng.standard_normal((rows, d)).astype(np.float32),
            (rng.standard_normal((d, classes)) / np.sqrt(d)).astype(np.float32),
            rng.integers(0, rows, (bags, tokens)).astype(np.int32),
            rng.standard_normal((bags, classes)).astype(np.float32))
    desc = f"{bags} bags of {tokens} tokens, {pool} of a {rows}x{d} table, {classes} outputs"
    return desc, jax.value_and_grad(loss, argnums=(0, 1)), args


def _xent(rng, scale):
    import jax
    import jax.numpy as jnp
    from .examples import softmax_cross_entropy_with_integer_labels as xent
    t = int(_pick(rng, (512, 1024, 2048)) * scale)
    h = int(_pick(rng, (64, 128, 256)))
    v = int(_pick(rng, (8_192, 16_384, 32_000, 50_257)) * scale)
    z_loss = bool(rng.random() < 0.4)

    def loss(x, w, labels):
        logits = x @ w
        out = jnp.mean(xent(logits, labels))
        if z_loss:
            out = out + 1e-4 * jnp.mean(jax.nn.logsumexp(logits, -1) ** 2)
        return out

    args = (rng.standard_normal((t, h)).astype(np.float32),
            (rng.standard_normal((h, v)) / np.sqrt(h)).astype(np.float32),
            rng.integers(0, v, t).astype(np.int32))
    desc = f"LLM head T={t} h={h} V={v}, integer-label cross-entropy{' + z-loss' if z_loss else ''}"
    return desc, jax.value_and_grad(loss, argnums=(0, 1)), args


def _contrastive(rng, scale):
    import jax
    import jax.numpy as jnp
    from .examples import softmax_cross_entropy_with_integer_labels as xent
    b = int(_pick(rng, (1024, 2048, 3072, 4096)) * scale)
    d = int(_pick(rng, (64, 128, 256)))
    symmetric = bool(rng.random() < 0.6)

    def loss(a, c, log_scale):
        a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
        c = c / jnp.linalg.norm(c, axis=-1, keepdims=True)
        logits = jnp.exp(log_scale) * a @ c.T
        labels = jnp.arange(b)
        out = jnp.mean(xent(logits, labels))
        return 0.5 * (out + jnp.mean(xent(logits.T, labels))) if symmetric else out

    args = (rng.standard_normal((b, d)).astype(np.float32),
            rng.standard_normal((b, d)).astype(np.float32), np.float32(np.log(10.0)))
    desc = f"{'symmetric' if symmetric else 'one-sided'} contrastive loss, B={b} d={d}"
    return desc, jax.value_and_grad(loss, argnums=(0, 1, 2)), args


def _fori_kernel(rng, scale):
    import jax
    import jax.numpy as jnp
    from jax import lax
    n = int(_pick(rng, (1024, 2048, 4096)) * scale)
    m = int(_pick(rng, (2048, 4096, 8192)) * scale)
    d, steps = int(_pick(rng, (2, 8, 16))), int(rng.integers(2, 6))
    bw = float(_pick(rng, (0.5, 1.0, 2.0)))

    def run(x, y):
        def body(_, x):
            sq = jnp.sum(x * x, -1)[:, None] - 2 * x @ y.T + jnp.sum(y * y, -1)[None, :]
            return jax.nn.softmax(-sq / np.float32(2 * bw * bw), axis=-1) @ y
        return lax.fori_loop(0, steps, body, x)

    args = (rng.standard_normal((n, d)).astype(np.float32),
            rng.standard_normal((m, d)).astype(np.float32))
    desc = f"lax.fori_loop of {steps} mean-shift steps, {n} points to {m}, {d}-d, bandwidth {bw}"
    return desc, run, args


def _flax_lm(rng, scale):
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    from .._optional import require
    optax = require("optax", "the flax_lm family of memfit.testing.real_forms")
    layers, s = int(rng.integers(2, 5)), int(_pick(rng, (512, 768, 1024)) * scale)
    d, dh = int(_pick(rng, (64, 128, 192))), int(_pick(rng, (32, 64)))
    vocab = int(_pick(rng, (4_096, 16_384, 32_000)) * scale)
    mlp, causal = int(_pick(rng, (2, 4))) * d, bool(rng.random() < 0.7)
    remat, bias, tied = (bool(rng.random() < p) for p in (0.7, 0.5, 0.5))
    norm_name = _pick(rng, ("LayerNorm", "RMSNorm"))
    norm = getattr(nn, norm_name)

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, _):
            mask = nn.make_causal_mask(jnp.ones(x.shape[:-1], jnp.int32)) if causal else None
            x = x + nn.MultiHeadDotProductAttention(
                num_heads=max(1, d // dh), use_bias=bias)(norm()(x), mask=mask)
            return x + nn.Dense(d)(nn.gelu(nn.Dense(mlp)(norm()(x)))), None

    class LM(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            embed = nn.Embed(vocab, d)
            stack = nn.scan(nn.remat(Block) if remat else Block, variable_axes={"params": 0},
                            split_rngs={"params": True}, length=layers)
            x, _ = stack()(embed(tokens), None)
            x = norm()(x)
            return embed.attend(x) if tied else nn.Dense(vocab, use_bias=False)(x)

    model = LM()
    tokens = rng.integers(0, vocab, (1, s + 1)).astype(np.int32)
    params = model.init(jax.random.PRNGKey(int(rng.integers(1 << 30))), tokens[:, :-1])

    def loss(params, tokens):
        logits = model.apply(params, tokens[:, :-1])
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]))

    desc = (f"flax LM, {layers} blocks{' remat' if remat else ''} in nn.scan, S={s} d={d} "
            f"{max(1, d // dh)}x{dh}{' causal' if causal else ''}, {norm_name}, MLP {mlp // d}x, "
            f"vocab {vocab}{' tied' if tied else ''}{', attention biases' if bias else ''}")
    return desc, jax.value_and_grad(loss), (params, tokens)


FAMILIES = {"scan_stack": _scan_stack, "gnn": _gnn, "embedding_bag": _embedding_bag,
            "xent": _xent, "contrastive": _contrastive, "fori_kernel": _fori_kernel,
            "flax_lm": _flax_lm}


def make(seed: int, index: int, scale: float = 1.0) -> RealForm:
    """Program ``index`` of ``seed``: the families in turn, the rest drawn.
    ``scale`` shrinks the sizes the families draw (tests run at 1/8)."""
    family = list(FAMILIES)[index % len(FAMILIES)]
    rng = np.random.default_rng([seed, index])
    desc, fn, args = FAMILIES[family](rng, scale)
    return RealForm(family, desc, fn, args)
