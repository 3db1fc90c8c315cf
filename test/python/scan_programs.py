"""Programs that loop the way ML libraries write them, shared by the tests
(test_while_split.py, test_profile_accuracy.py) and the bench
(bench/bench_real_programs.py).

* ``decoder``: a pre-norm decoder whose layers run in ``jax.lax.scan`` over
  stacked parameters with ``jax.checkpoint`` (MaxText's ``scan_layers``,
  flax ``nn.scan``, equinox stacks), causal attention, a GELU MLP; the
  value and gradient of a mean-square loss. jax hoists the causal mask out
  of the scan and carries it through the forward loop; the backward scan
  recomputes each layer's forward inside its body.
* ``mean_shift``: ``lax.fori_loop`` over iterations of a kernel-weighted
  mean (each iteration's [N, M] weights depend on the carried points).
* ``flax_decoder`` and ``flax_train_step``: the decoder as flax writes it
  (``nn.scan(nn.remat(Block))`` over ``nn.MultiHeadDotProductAttention``
  with ``nn.make_causal_mask``, LayerNorm, Dense with biases, flax's tanh
  GELU), its loss ``optax.l2_loss``, and one ``optax.adamw`` training step
  over it. flax is imported on the first call (tests skip without it).
* ``scan_masked`` and ``scan_stacked``: small scans for the profile.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def _rms(x):
    return x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6)


def decoder_layer(x, p, heads, causal=True):
    """One pre-norm decoder layer on x [S, D] with parameters p."""
    s, d = x.shape
    dh = d // heads
    h = _rms(x)
    q = (h @ p["wq"]).reshape(s, heads, dh)
    k = (h @ p["wk"]).reshape(s, heads, dh)
    v = (h @ p["wv"]).reshape(s, heads, dh)
    scores = jnp.einsum("qhd,khd->hqk", q, k) / np.sqrt(dh).astype(x.dtype)
    if causal:
        mask = jnp.tril(jnp.ones((s, s), bool))
        scores = jnp.where(mask, scores, jnp.asarray(-1e9, x.dtype))
    a = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("hqk,khd->qhd", a, v).reshape(s, d)
    x = x + o @ p["wo"]
    h = _rms(x)
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def decoder(heads=4, causal=True):
    """value_and_grad of mean(decoder(x)^2) over the stacked parameters and
    x, the layers under lax.scan(jax.checkpoint(layer))."""
    def layer(x, p):
        return decoder_layer(x, p, heads, causal), None

    def loss(params, x):
        y, _ = lax.scan(jax.checkpoint(layer), x, params)
        return jnp.mean(y * y)
    return jax.value_and_grad(loss, argnums=(0, 1))


def decoder_args(s, d=64, layers=3, ffn=4, rng=None, dtype=np.float32):
    """(params, x): params stacked over `layers`, scaled so that activations
    stay O(1)."""
    r = rng if rng is not None else np.random.default_rng(0)

    def w(*shape):
        return (r.standard_normal((layers,) + shape) / np.sqrt(shape[0])).astype(dtype)
    params = {"wq": w(d, d), "wk": w(d, d), "wv": w(d, d), "wo": w(d, d),
              "w1": w(d, ffn * d), "w2": w(ffn * d, d)}
    return params, r.standard_normal((s, d)).astype(dtype)


def mean_shift(steps=4, bandwidth=1.0):
    """`steps` mean-shift iterations of the points x towards the data y
    (lax.fori_loop): x <- softmax(-|x - y|^2 / 2h^2) y."""
    def run(x, y):
        def body(_, x):
            d = (jnp.sum(x * x, -1)[:, None] - 2 * x @ y.T + jnp.sum(y * y, -1)[None, :])
            return jax.nn.softmax(-d / (2 * bandwidth ** 2), axis=-1) @ y
        return lax.fori_loop(0, steps, body, x)
    return run


def mean_shift_args(n, m, d=8, rng=None):
    r = rng if rng is not None else np.random.default_rng(1)
    return (r.standard_normal((n, d)).astype(np.float32),
            r.standard_normal((m, d)).astype(np.float32))


def scan_masked(xs, w):
    """A scan whose step masks h h^T causally (the mask hoisted and carried)."""
    n = xs.shape[1]
    mask = jnp.tril(jnp.ones((n, n), bool))

    def step(h, x):
        s = jnp.where(mask, h @ h.T, -1e9)
        return jnp.tanh(jax.nn.softmax(s, -1) @ h @ w + x), None
    return lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)[0]


def scan_stacked(xs, w):
    """A scan that stacks a per-step [N, N] output."""
    def step(h, x):
        e = jnp.exp(h @ h.T)
        return jnp.tanh(e @ h @ w + x), e
    return lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)


def scan_args(steps, n, d, rng=None):
    r = rng if rng is not None else np.random.default_rng(2)
    return (r.standard_normal((steps, n, d)).astype(np.float32) * 0.1,
            (r.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32))


def _flax_decoder_module(layers, heads, mlp, attention_bias):
    import flax.linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, _):
            h = nn.LayerNorm()(x)
            mask = nn.make_causal_mask(jnp.ones(x.shape[:-1], jnp.int32))
            x = x + nn.MultiHeadDotProductAttention(
                num_heads=heads, use_bias=attention_bias)(h, mask=mask)
            h = nn.Dense(mlp)(nn.LayerNorm()(x))
            return x + nn.Dense(x.shape[-1])(nn.gelu(h)), None

    class Decoder(nn.Module):
        @nn.compact
        def __call__(self, x):
            stack = nn.scan(nn.remat(Block), variable_axes={"params": 0},
                            split_rngs={"params": True}, length=layers)
            x, _ = stack()(x, None)
            return nn.LayerNorm()(x)
    return Decoder()


def flax_decoder(s, d=64, layers=2, heads=2, batch=1, seed=0, attention_bias=True):
    """(value_and_grad of the flax decoder's optax.l2_loss in its params,
    (params, x, target)): x and target [batch, s, d], MLP 4x. With
    ``attention_bias`` (flax's default) the key projection's bias has a
    gradient that is zero but for rounding (softmax ignores a shift of a
    row); flax's lm1b example and MaxText leave attention biases out."""
    import optax
    model = _flax_decoder_module(layers, heads, 4 * d, attention_bias)
    keys = jax.random.split(jax.random.PRNGKey(seed), 3)
    x = jax.random.normal(keys[0], (batch, s, d))
    target = jax.random.normal(keys[1], (batch, s, d))
    params = model.init(keys[2], x)

    def loss(params, x, target):
        return jnp.mean(optax.l2_loss(model.apply(params, x), target))
    return jax.value_and_grad(loss), (params, x, target)


def flax_train_step(s, d=64, layers=2, heads=2, batch=1, seed=0):
    """(one optax.adamw step on the flax decoder: (params, opt_state, x,
    target) -> (params, opt_state, loss), its arguments)."""
    import optax
    grad_fn, (params, x, target) = flax_decoder(s, d, layers, heads, batch, seed)
    tx = optax.adamw(1e-3)

    def step(params, opt_state, x, target):
        loss, grads = grad_fn(params, x, target)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    return step, (params, tx.init(params), x, target)
