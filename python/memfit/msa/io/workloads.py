"""jax programs whose buffers make memory-space-assignment instances.

Each workload is a function and example arguments (small shapes, so that
lowering is quick; capacities are relative to each program's peak, so the
absolute sizes matter only to the cost model). ``lower_workload(name)``
gives its StableHLO text in generic form; ``bench/make_msa_instances.py``
turns each into instances at 25/50/75% of its peak in both modes.

kNN and SGPR are exported after memfit's own ``memfit-split`` (their big
distance/kernel matrices become loops over chunks), when that pass is
available and finds a split; otherwise unsplit. ``lower_workload`` reports
which in its second return value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    make: Callable[[], tuple[Callable, tuple]]
    split_fraction: float | None = None  # memfit-split limit as a fraction of the peak


def _key(i):
    import jax
    return jax.random.PRNGKey(i)


def _normal(i, shape, scale=1.0):
    import jax
    return jax.random.normal(_key(i), shape) * scale


# -- transformer ---------------------------------------------------------------

def _transformer(layers, d, heads, seq, batch, vocab):
    import jax
    import jax.numpy as jnp

    def init():
        params = {"emb": _normal(0, (vocab, d), 0.02), "out": _normal(1, (d, vocab), 0.02),
                  "layers": []}
        for l in range(layers):
            k = 10 + 10 * l
            params["layers"].append({
                "wq": _normal(k, (d, d), d ** -0.5), "wk": _normal(k + 1, (d, d), d ** -0.5),
                "wv": _normal(k + 2, (d, d), d ** -0.5), "wo": _normal(k + 3, (d, d), d ** -0.5),
                "w1": _normal(k + 4, (d, 4 * d), d ** -0.5),
                "w2": _normal(k + 5, (4 * d, d), (4 * d) ** -0.5),
                "g1": jnp.ones((d,)), "g2": jnp.ones((d,))})
        return params

    def norm(x, g):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g

    def forward(params, tokens):
        x = params["emb"][tokens]
        b, s, _ = x.shape
        mask = jnp.tril(jnp.ones((s, s), bool))
        for p in params["layers"]:
            h = norm(x, p["g1"])
            q = (h @ p["wq"]).reshape(b, s, heads, d // heads)
            k = (h @ p["wk"]).reshape(b, s, heads, d // heads)
            v = (h @ p["wv"]).reshape(b, s, heads, d // heads)
            att = jnp.einsum("bqhd,bkhd->bhqk", q, k) / (d // heads) ** 0.5
            att = jax.nn.softmax(jnp.where(mask, att, -1e9), axis=-1)
            o = jnp.einsum("bhqk,bkhd->bqhd", att, v).reshape(b, s, d)
            x = x + o @ p["wo"]
            h = norm(x, p["g2"])
            x = x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]
        return x @ params["out"]

    def loss_and_grad(params, tokens, targets):
        def loss(params):
            logits = forward(params, tokens)
            logp = jax.nn.log_softmax(logits)
            return -jnp.take_along_axis(logp, targets[..., None], -1).mean()
        return jax.value_and_grad(loss)(params)

    tokens = jax.random.randint(_key(2), (batch, seq), 0, vocab)
    targets = jax.random.randint(_key(3), (batch, seq), 0, vocab)
    return loss_and_grad, (init(), tokens, targets)


def transformer_small():
    return _transformer(layers=1, d=128, heads=4, seq=128, batch=4, vocab=512)


def transformer_medium():
    return _transformer(layers=2, d=256, heads=8, seq=256, batch=4, vocab=1024)


# -- MLP training step ---------------------------------------------------------

def mlp_train_step():
    import jax
    import jax.numpy as jnp
    sizes = [784, 1024, 1024, 512, 10]
    params = [(_normal(i, (a, b), a ** -0.5), jnp.zeros((b,)))
              for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]
    x = _normal(20, (256, 784))
    y = jax.random.randint(_key(21), (256,), 0, 10)

    def step(params, x, y):
        def loss(params):
            h = x
            for w, b in params[:-1]:
                h = jax.nn.relu(h @ w + b)
            w, b = params[-1]
            logp = jax.nn.log_softmax(h @ w + b)
            return -jnp.take_along_axis(logp, y[:, None], 1).mean()
        l, g = jax.value_and_grad(loss)(params)
        new = jax.tree_util.tree_map(lambda p, gp: p - 0.01 * gp, params, g)
        return l, new
    return step, (params, x, y)


# -- CNN forward + backward ----------------------------------------------------

def cnn_train():
    import jax
    import jax.numpy as jnp
    from jax import lax
    params = {"c1": _normal(30, (3, 3, 3, 32), 0.2), "c2": _normal(31, (3, 3, 32, 64), 0.06),
              "c3": _normal(32, (3, 3, 64, 64), 0.04), "fc": _normal(33, (64, 10), 0.1)}
    x = _normal(34, (16, 32, 32, 3))
    y = jax.random.randint(_key(35), (16,), 0, 10)

    def conv(x, w, stride):
        return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss_and_grad(params, x, y):
        def loss(params):
            h = jax.nn.relu(conv(x, params["c1"], 1))
            h = jax.nn.relu(conv(h, params["c2"], 2))
            h = jax.nn.relu(conv(h, params["c3"], 2))
            h = h.mean(axis=(1, 2))
            logp = jax.nn.log_softmax(h @ params["fc"])
            return -jnp.take_along_axis(logp, y[:, None], 1).mean()
        return jax.value_and_grad(loss)(params)
    return loss_and_grad, (params, x, y)


# -- kNN, SGPR, GP ---------------------------------------------------------------

def knn():
    import jax
    import jax.numpy as jnp

    def f(queries, data):
        d = ((queries[:, None, :] - data[None, :, :]) ** 2).sum(-1)
        vals, idx = jax.lax.top_k(-d, 10)
        return -vals, idx
    return f, (_normal(40, (1024, 32)), _normal(41, (4096, 32)))


def _rbf(a, b, ls=1.0):
    import jax.numpy as jnp
    d = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return jnp.exp(-0.5 * d / ls ** 2)


def sgpr():
    """Sparse GP regression (Titsias) predictive mean with M inducing points:
    the N x M cross-covariance is the big intermediate."""
    import jax.numpy as jnp
    from jax.scipy.linalg import cho_solve, cholesky

    def f(x, y, z, xs):
        kuu = _rbf(z, z) + 1e-3 * jnp.eye(z.shape[0])
        kuf = _rbf(z, x)
        lu = cholesky(kuu, lower=True)
        sigma = kuu + kuf @ kuf.T / 0.1
        ls = cholesky(sigma, lower=True)
        mu = _rbf(xs, z) @ cho_solve((ls, True), kuf @ y) / 0.1
        return mu, lu
    return f, (_normal(50, (4096, 8)), _normal(51, (4096, 1)), _normal(52, (128, 8)),
               _normal(53, (512, 8)))


def gp_solve():
    """Exact GP posterior mean and variance: Cholesky of an N x N kernel."""
    import jax.numpy as jnp
    from jax.scipy.linalg import cho_solve, cholesky, solve_triangular

    def f(x, y, xs):
        k = _rbf(x, x) + 0.1 * jnp.eye(x.shape[0])
        l = cholesky(k, lower=True)
        ks = _rbf(x, xs)
        mean = ks.T @ cho_solve((l, True), y)
        v = solve_triangular(l, ks, lower=True)
        var = 1.0 - (v * v).sum(0)
        return mean, var
    return f, (_normal(60, (1024, 4)), _normal(61, (1024, 1)), _normal(62, (256, 4)))


# -- attention, LSTM -------------------------------------------------------------

def attention():
    import jax
    import jax.numpy as jnp

    def f(q, k, v, wo):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 8.0
        p = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("bhqk,bhkd->bhqd", p, v)
        return jnp.einsum("bhqd,hde->bqe", o, wo)
    b, h, s, d = 2, 4, 512, 64
    return f, (_normal(70, (b, h, s, d)), _normal(71, (b, h, s, d)), _normal(72, (b, h, s, d)),
               _normal(73, (h, d, 256), 0.05))


def lstm_scan():
    import jax
    import jax.numpy as jnp
    from jax import lax
    hidden, inp, steps, batch = 256, 128, 32, 64

    def f(params, xs):
        wx, wh, b = params

        def cell(carry, x):
            h, c = carry
            g = x @ wx + h @ wh + b
            i, fg, o, u = jnp.split(g, 4, axis=-1)
            c = jax.nn.sigmoid(fg) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        init = (jnp.zeros((batch, hidden)), jnp.zeros((batch, hidden)))
        (h, c), hs = lax.scan(cell, init, xs)
        return (hs ** 2).mean(), h

    def loss_and_grad(params, xs):
        return jax.value_and_grad(lambda p: f(p, xs)[0])(params)
    params = (_normal(80, (inp, 4 * hidden), 0.05), _normal(81, (hidden, 4 * hidden), 0.05),
              jnp.zeros((4 * hidden,)))
    return loss_and_grad, (params, _normal(82, (steps, batch, inp)))


# -- held-out programs with more headroom (GRU step, ViT block gradient) ----------

def gru_train():
    import jax
    import jax.numpy as jnp
    from jax import lax
    hidden, inp, steps, batch = 256, 128, 16, 32

    def loss(params, xs, w_out):
        wx, wh, b = params

        def cell(h, x):
            zr = jax.nn.sigmoid(x @ wx[:, :2 * hidden] + h @ wh[:, :2 * hidden] + b[:2 * hidden])
            z, r = jnp.split(zr, 2, axis=-1)
            n = jnp.tanh(x @ wx[:, 2 * hidden:] + (r * h) @ wh[:, 2 * hidden:] + b[2 * hidden:])
            h = (1 - z) * n + z * h
            return h, h
        _, hs = lax.scan(cell, jnp.zeros((batch, hidden)), xs)
        return ((hs @ w_out) ** 2).mean()

    def step(params, xs, w_out):
        l, g = jax.value_and_grad(loss)(params, xs, w_out)
        return l, jax.tree_util.tree_map(lambda p, gp: p - 0.01 * gp, params, g)
    params = (_normal(90, (inp, 3 * hidden), 0.05), _normal(91, (hidden, 3 * hidden), 0.05),
              jnp.zeros((3 * hidden,)))
    return step, (params, _normal(92, (steps, batch, inp)), _normal(93, (hidden, 64), 0.1))


def vit_block_grad():
    import jax
    import jax.numpy as jnp
    d, heads, tokens, batch, patch = 192, 3, 65, 8, 48

    def norm(x, g):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-6) * g

    def loss(p, patches):
        x = patches @ p["embed"] + p["pos"]
        h = norm(x, p["g1"])
        q, k, v = (h @ p[w] for w in ("wq", "wk", "wv"))
        sh = lambda t: t.reshape(batch, tokens, heads, d // heads).transpose(0, 2, 1, 3)
        a = jax.nn.softmax(sh(q) @ sh(k).transpose(0, 1, 3, 2) / (d // heads) ** 0.5, -1)
        o = (a @ sh(v)).transpose(0, 2, 1, 3).reshape(batch, tokens, d)
        x = x + o @ p["wo"]
        x = x + jax.nn.gelu(norm(x, p["g2"]) @ p["w1"]) @ p["w2"]
        return (x[:, 0] ** 2).mean()
    p = {"embed": _normal(100, (patch, d), 0.1), "pos": _normal(101, (tokens, d), 0.02),
         "wq": _normal(102, (d, d), d ** -0.5), "wk": _normal(103, (d, d), d ** -0.5),
         "wv": _normal(104, (d, d), d ** -0.5), "wo": _normal(105, (d, d), d ** -0.5),
         "w1": _normal(106, (d, 4 * d), d ** -0.5), "w2": _normal(107, (4 * d, d), (4 * d) ** -0.5),
         "g1": jnp.ones((d,)), "g2": jnp.ones((d,))}
    return jax.value_and_grad(loss), (p, _normal(108, (batch, tokens, patch)))


# -- big programs (1,000 to 4,000 buffers): where the mallocGame's search matters --

def transformer_deep():
    """12-layer transformer training step (training side)."""
    return _transformer(layers=12, d=128, heads=4, seq=128, batch=2, vocab=512)


def transformer_deep_heldout():
    """20-layer transformer training step with other widths (held out)."""
    return _transformer(layers=20, d=192, heads=6, seq=96, batch=2, vocab=768)


def _resnet(blocks, width, hw, batch, seed):
    import jax
    import jax.numpy as jnp
    from jax import lax

    def conv(x, w, stride=1):
        return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def norm(x, g, b):
        mu = x.mean((0, 1, 2), keepdims=True)
        var = ((x - mu) ** 2).mean((0, 1, 2), keepdims=True)
        return (x - mu) * lax.rsqrt(var + 1e-5) * g + b

    params = {"stem": _normal(seed, (3, 3, 3, width), 0.2), "fc": _normal(seed + 1, (width, 10), 0.1),
              "blocks": [{"w1": _normal(seed + 2 + 2 * i, (3, 3, width, width), 0.05),
                          "w2": _normal(seed + 3 + 2 * i, (3, 3, width, width), 0.05),
                          "g1": jnp.ones((width,)), "b1": jnp.zeros((width,)),
                          "g2": jnp.ones((width,)), "b2": jnp.zeros((width,))}
                         for i in range(blocks)]}
    x = _normal(seed + 500, (batch, hw, hw, 3))
    y = jax.random.randint(_key(seed + 501), (batch,), 0, 10)

    def loss(params, x, y):
        h = jax.nn.relu(conv(x, params["stem"]))
        for p in params["blocks"]:
            r = jax.nn.relu(norm(conv(h, p["w1"]), p["g1"], p["b1"]))
            h = jax.nn.relu(h + norm(conv(r, p["w2"]), p["g2"], p["b2"]))
        logp = jax.nn.log_softmax(h.mean(axis=(1, 2)) @ params["fc"])
        return -jnp.take_along_axis(logp, y[:, None], 1).mean()

    def step(params, x, y):
        l, g = jax.value_and_grad(loss)(params, x, y)
        return l, jax.tree_util.tree_map(lambda p, gp: p - 0.01 * gp, params, g)
    return step, (params, x, y)


def resnet_train():
    """ResNet-style CNN (24 residual blocks, batch-normed) SGD step (training side)."""
    return _resnet(blocks=24, width=32, hw=16, batch=8, seed=200)


def resnet_train_heldout():
    """ResNet-style CNN (36 residual blocks, other widths) SGD step (held out)."""
    return _resnet(blocks=36, width=48, hw=12, batch=8, seed=300)


def _rnn_long(kind, steps, hidden, inp, batch, seed):
    """A long RNN over ``lax.scan`` with its loop unrolled (``unroll=True``),
    forward + backward + SGD update: every step's activations are buffers."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    gates = 4 if kind == "lstm" else 3

    def cell(params, carry, x):
        wx, wh, b = params
        if kind == "lstm":
            h, c = carry
            i, fg, o, u = jnp.split(x @ wx + h @ wh + b, 4, axis=-1)
            c = jax.nn.sigmoid(fg) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        h = carry
        zr = jax.nn.sigmoid(x @ wx[:, :2 * hidden] + h @ wh[:, :2 * hidden] + b[:2 * hidden])
        z, r = jnp.split(zr, 2, axis=-1)
        n = jnp.tanh(x @ wx[:, 2 * hidden:] + (r * h) @ wh[:, 2 * hidden:] + b[2 * hidden:])
        h = (1 - z) * n + z * h
        return h, h

    def loss(params, xs, w_out):
        h0 = jnp.zeros((batch, hidden))
        init = (h0, h0) if kind == "lstm" else h0
        _, hs = lax.scan(lambda c, x: cell(params, c, x), init, xs, unroll=True)
        return ((hs @ w_out) ** 2).mean()

    def step(params, xs, w_out):
        l, g = jax.value_and_grad(loss)(params, xs, w_out)
        return l, jax.tree_util.tree_map(lambda p, gp: p - 0.01 * gp, params, g)
    params = (_normal(seed, (inp, gates * hidden), 0.05),
              _normal(seed + 1, (hidden, gates * hidden), 0.05), jnp.zeros((gates * hidden,)))
    return step, (params, _normal(seed + 2, (steps, batch, inp)), _normal(seed + 3, (hidden, 32), 0.1))


def lstm_long():
    """LSTM over 64 steps (lax.scan, unrolled), one SGD step (training side)."""
    return _rnn_long("lstm", steps=64, hidden=128, inp=64, batch=16, seed=400)


def gru_long_heldout():
    """GRU over 96 steps (lax.scan, unrolled), one SGD step (held out)."""
    return _rnn_long("gru", steps=96, hidden=192, inp=96, batch=16, seed=500)


WORKLOADS: dict[str, Workload] = {w.name: w for w in [
    Workload("transformer_small", "1-layer transformer, d=128, S=128, forward + backward", transformer_small),
    Workload("transformer_medium", "2-layer transformer, d=256, S=256, forward + backward", transformer_medium),
    Workload("mlp_train_step", "4-layer MLP, one SGD step", mlp_train_step),
    Workload("cnn_train", "3-conv CNN, forward + backward", cnn_train),
    Workload("knn", "k-nearest neighbours (1024 x 4096 distances, top-10)", knn, split_fraction=0.3),
    Workload("sgpr", "sparse GP regression predictive mean (N=4096, M=128)", sgpr, split_fraction=0.5),
    Workload("gp_solve", "exact GP posterior (Cholesky of 1024 x 1024)", gp_solve),
    Workload("attention", "multi-head attention, S=512", attention),
    Workload("lstm_scan", "LSTM over 32 steps (lax.scan), forward + backward", lstm_scan),
    Workload("gru_train", "GRU over 16 steps (lax.scan), one SGD step", gru_train),
    Workload("vit_block_grad", "ViT block (d=192, 65 tokens) gradient", vit_block_grad),
    Workload("transformer_deep", "12-layer transformer, d=128, S=128, forward + backward",
             transformer_deep),
    Workload("transformer_deep_heldout", "20-layer transformer, d=192, S=96, forward + backward",
             transformer_deep_heldout),
    Workload("resnet_train", "24-block ResNet-style CNN, one SGD step", resnet_train),
    Workload("resnet_train_heldout", "36-block ResNet-style CNN, one SGD step",
             resnet_train_heldout),
    Workload("lstm_long", "LSTM over 64 steps (lax.scan, unrolled), one SGD step", lstm_long),
    Workload("gru_long_heldout", "GRU over 96 steps (lax.scan, unrolled), one SGD step",
             gru_long_heldout),
]}


def get_workload(name: str) -> tuple[Callable, tuple]:
    try:
        return WORKLOADS[name].make()
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None


def lower_workload(name: str, *, split: bool = True) -> tuple[str, dict[str, Any]]:
    """The workload's StableHLO (generic form, locations kept) and how it was
    made: ``{"split": bool, "split_limit": bytes or None, "note": str}``."""
    import jax
    from ... import _jax_handover as handover
    fn, args = get_workload(name)
    text = handover.module_text(jax.jit(fn).lower(*args))
    info: dict[str, Any] = {"split": False, "split_limit": None, "note": "unsplit"}
    frac = WORKLOADS[name].split_fraction
    if split and frac is not None:
        from ... import transform
        from ...api import profile_text
        from ...errors import MemfitError
        peak = max(r.peak_bytes for r in profile_text(text))
        limit = int(peak * frac)
        try:
            out = transform(text, f"memfit-inline,memfit-split{{memory-limit={limit}}}")
        except MemfitError as e:
            info["note"] = f"unsplit: memfit-split failed at {limit} B: {str(e).splitlines()[0]}"
        else:
            if '"stablehlo.while"' in out:
                text = out
                info.update(split=True, split_limit=limit,
                            note=f"memfit-split{{memory-limit={limit}}} ({frac:.0%} of peak)")
            else:
                info["note"] = f"unsplit: memfit-split at {limit} B made no loop"
    return text, info
