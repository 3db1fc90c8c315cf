"""Programs as users write them, from memfit-split's issue: the tests check
memfit splits them correctly, the benches time them (one definition each)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def knn(x, y, k=10):
    """The k nearest rows of y for each row of x (broadcast distances)."""
    d = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, -1)
    return jax.lax.top_k(-d, k)


def gaussian_kernel(x, y, v):
    """Nadaraya-Watson regression with a Gaussian kernel."""
    k = jnp.exp(-jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, -1))
    return (k @ v) / jnp.sum(k, 1, keepdims=True)


def attention(q, k, v):
    """Single-head softmax attention."""
    return jax.nn.softmax(q @ k.T / np.sqrt(q.shape[1]), -1) @ v


def knn_expanded(x, q, k=8):
    """kNN with the distance expanded into a GEMM: |q|^2 - 2 q x^T + |x|^2."""
    d = jnp.sum(q * q, -1)[:, None] - 2 * q @ x.T + jnp.sum(x * x, -1)[None, :]
    return jax.lax.top_k(-d, k)


def kernel_regression(x, z, y):
    """Gaussian-kernel regression: K(x, z) @ y with K written by broadcasting."""
    d = jnp.sum((x[:, None, :] - z[None, :, :]) ** 2, -1)
    return jnp.exp(-d / 0.18) @ y


#: Small programs every consumer (IREE, XLA) must run after memfit's split,
#: with their argument shapes: the IREE tests check them, the consumers
#: bench times them.
CONSUMER_CASES = [
    (knn_expanded, [(20000, 16), (256, 16)]),
    (attention, [(1024, 64), (2048, 64), (2048, 64)]),
    (kernel_regression, [(512, 8), (4096, 8), (4096, 2)]),
]


def cross_entropy(h, w, labels):
    """Mean cross-entropy of logits h @ w (a big vocabulary) against labels."""
    logits = h @ w
    return jnp.mean(jax.nn.logsumexp(logits, -1)
                    - jnp.take_along_axis(logits, labels[:, None], -1)[:, 0])


def layernorm(x, g, b):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean((x - m) ** 2, -1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def nudft(x, y):
    """Non-uniform discrete Fourier transform: sum_j exp(-i x_k y_j) for each
    k. The len(x) x len(y) complex matrix is never needed whole."""
    return jnp.sum(jnp.exp(-1j * (x[:, None] * y[None, :])), axis=1)


def transformer_block(p, x, heads=1):
    """Pre-layernorm block: softmax attention over the rows of x, then a GELU
    MLP; p holds wq, wk, wv, wo, w1, w2 and the layernorms' g1, b1, g2, b2."""
    h = layernorm(x, p["g1"], p["b1"])
    q, k, v = (z.reshape(x.shape[0], heads, -1) for z in (h @ p["wq"], h @ p["wk"], h @ p["wv"]))
    s = jnp.einsum("qhd,khd->hqk", q, k) / jnp.sqrt(q.shape[-1])
    a = jnp.einsum("hqk,khd->qhd", jax.nn.softmax(s, -1), v).reshape(x.shape)
    x = x + a @ p["wo"]
    h = layernorm(x, p["g2"], p["b2"])
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def transformer_grad(p, x, t, heads=1):
    """Gradient of the block's mean squared error against targets t."""
    return jax.grad(lambda p: jnp.mean((transformer_block(p, x, heads) - t) ** 2))(p)


def transformer_train_step(p, x, t, heads=1, lr=0.1):
    """One SGD step: forward, backward, update."""
    return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, transformer_grad(p, x, t, heads))


def transformer_params(key, d):
    ks = jax.random.split(key, 6)
    w = lambda k, m, n: jax.random.normal(k, (m, n)) / m ** 0.5
    return {"wq": w(ks[0], d, d), "wk": w(ks[1], d, d), "wv": w(ks[2], d, d),
            "wo": w(ks[3], d, d), "w1": w(ks[4], d, 4 * d), "w2": w(ks[5], 4 * d, d),
            "g1": jnp.ones(d), "b1": jnp.zeros(d), "g2": jnp.ones(d), "b2": jnp.zeros(d)}


# -- programs as ML libraries write them (issue 44) --------------------------

def gnn_layer(nodes, w, edge_scale, senders, receivers):
    """One message-passing layer as jraph writes it: each edge takes its
    sender's row (``nodes[senders]``, a gather), transforms and scales it,
    and ``jax.ops.segment_sum`` adds the messages into their receivers (a
    scatter-add with repeated indices)."""
    messages = jax.nn.relu(nodes[senders] @ w) * edge_scale[:, None]
    return jax.ops.segment_sum(messages, receivers, num_segments=nodes.shape[0])


def gnn_loss(nodes, w, edge_scale, senders, receivers):
    return jnp.sum(gnn_layer(nodes, w, edge_scale, senders, receivers) ** 2)


def softmax_cross_entropy_with_integer_labels(logits, labels):
    """optax's formula (optax 0.2.8, axis=-1, no ``where``): the label's
    logit through ``take_along_axis`` (a gather), minus the log-normaliser."""
    label_logits = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    log_normalizers = jax.nn.logsumexp(logits, axis=-1)
    return log_normalizers - label_logits


def llm_head_loss(h, w, labels, xent=softmax_cross_entropy_with_integer_labels):
    """An LLM's output layer and mean token cross-entropy: logits = h @ W."""
    return jnp.mean(xent(h @ w, labels))


def embedding_bag_loss(table, w, tokens, targets):
    """An embedding bag: each bag is the mean of its tokens' table rows
    (``table[tokens]``, a gather), then a linear layer and a squared error.
    The table's gradient is a scatter-add of every token's share."""
    bags = jnp.mean(table[tokens], axis=1)
    return jnp.mean((bags @ w - targets) ** 2)


def clip_loss(img, txt, log_scale):
    """A CLIP-style symmetric contrastive loss as open_clip and big_vision
    write it: one [B, B] logits matrix of normalised embeddings, the
    integer-label cross-entropy over its rows (image to text) and over its
    columns (text to image, ``logits.T``), the pair's diagonal the label."""
    img = img / jnp.linalg.norm(img, axis=-1, keepdims=True)
    txt = txt / jnp.linalg.norm(txt, axis=-1, keepdims=True)
    logits = jnp.exp(log_scale) * img @ txt.T
    labels = jnp.arange(logits.shape[0])
    return 0.5 * (jnp.mean(softmax_cross_entropy_with_integer_labels(logits, labels))
                  + jnp.mean(softmax_cross_entropy_with_integer_labels(logits.T, labels)))


def kv_cache_decode(q, k_new, v_new, k_cache, v_cache, pos):
    """One decode step of multi-head attention with a KV cache, as inference
    loops write it: the new token's keys and values written at ``pos`` with
    ``lax.dynamic_update_slice``, the query attending over the whole cache
    (positions after ``pos`` masked). Shapes: q, k_new, v_new [B, H, D];
    caches [B, S, H, D]. Returns the attention output and both caches."""
    zero = jnp.zeros_like(pos)
    k_cache = jax.lax.dynamic_update_slice(k_cache, k_new[:, None], (zero, pos, zero, zero))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v_new[:, None], (zero, pos, zero, zero))
    scores = jnp.einsum("bhd,bshd->bhs", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[1]) <= pos, scores, -jnp.inf)
    out = jnp.einsum("bhs,bshd->bhd", jax.nn.softmax(scores, axis=-1), v_cache)
    return out, k_cache, v_cache
