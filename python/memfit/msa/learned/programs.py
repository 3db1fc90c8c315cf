"""Random jax programs for training instances (never the held-out programs).

``random_program(seed)`` draws one of a few families (an MLP training step,
a residual MLP with layer norm, a small CNN, an attention block, an RNN over
``lax.scan``), each forward + backward, with random depth, widths and batch,
so that the exported schedules differ in length, in buffer sizes and in how
long weights and activations live. ``training_instances(seeds)`` exports
each at random capacities in both modes, as ``memfit export-buffers`` does.
"""
from __future__ import annotations

import numpy as np


def _normal(key, shape, scale):
    import jax
    return jax.random.normal(jax.random.PRNGKey(key), shape) * scale


def _mlp_step(rng, residual: bool):
    import jax
    import jax.numpy as jnp
    depth = int(rng.integers(2, 6))
    width = int(rng.choice([128, 256, 512, 1024]))
    batch = int(rng.choice([32, 64, 256]))
    inp = int(rng.choice([64, 256, 784]))
    act = [jax.nn.relu, jax.nn.gelu, jnp.tanh][int(rng.integers(0, 3))]
    sizes = [inp] + [width] * depth + [10]
    params = [(_normal(i, (a, b), a ** -0.5), jnp.zeros((b,)))
              for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]

    def loss(params, x, y):
        h = x
        for i, (w, b) in enumerate(params[:-1]):
            z = act(h @ w + b)
            if residual and i > 0:
                z = z + h
                z = (z - z.mean(-1, keepdims=True)) / (z.std(-1, keepdims=True) + 1e-5)
            h = z
        w, b = params[-1]
        logp = jax.nn.log_softmax(h @ w + b)
        return -jnp.take_along_axis(logp, y[:, None], 1).mean()

    def step(params, x, y):
        l, g = jax.value_and_grad(loss)(params, x, y)
        return l, jax.tree_util.tree_map(lambda p, gp: p - 0.01 * gp, params, g)
    x = _normal(99, (batch, inp), 1.0)
    y = jnp.zeros((batch,), jnp.int32)
    return step, (params, x, y)


def _cnn(rng):
    import jax
    import jax.numpy as jnp
    from jax import lax
    chans = [3] + [int(rng.choice([8, 16, 32, 64])) for _ in range(int(rng.integers(2, 4)))]
    hw = int(rng.choice([16, 32]))
    batch = int(rng.choice([8, 16, 32]))
    params = [_normal(i, (3, 3, a, b), 0.1) for i, (a, b) in enumerate(zip(chans[:-1], chans[1:]))]

    def loss(params, x):
        h = x
        for i, w in enumerate(params):
            h = jax.nn.relu(lax.conv_general_dilated(h, w, (1 + (i % 2),) * 2, "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")))
        return (h.mean(axis=(1, 2)) ** 2).mean()
    return jax.value_and_grad(loss), (params, _normal(98, (batch, hw, hw, 3), 1.0))


def _attention(rng):
    import jax
    import jax.numpy as jnp
    d = int(rng.choice([64, 128, 256]))
    seq = int(rng.choice([64, 128, 256]))
    heads = int(rng.choice([2, 4]))
    ws = [_normal(i, (d, d), d ** -0.5) for i in range(4)]

    def loss(ws, x):
        q, k, v = (x @ w for w in ws[:3])
        split = lambda t: t.reshape(seq, heads, d // heads).transpose(1, 0, 2)
        a = jax.nn.softmax(split(q) @ split(k).transpose(0, 2, 1) / np.sqrt(d // heads), -1)
        o = (a @ split(v)).transpose(1, 0, 2).reshape(seq, d) @ ws[3]
        return (jnp.tanh(o + x) ** 2).mean()
    return jax.value_and_grad(loss), (ws, _normal(97, (seq, d), 1.0))


def _rnn(rng):
    import jax
    import jax.numpy as jnp
    hidden = int(rng.choice([64, 128, 256]))
    steps = int(rng.choice([8, 16, 32]))
    batch = int(rng.choice([8, 32]))
    params = (_normal(1, (hidden, hidden), hidden ** -0.5), _normal(2, (hidden, hidden), hidden ** -0.5))

    def loss(params, xs):
        def cell(h, x):
            h = jnp.tanh(h @ params[0] + x @ params[1])
            return h, h
        _, hs = jax.lax.scan(cell, jnp.zeros((batch, hidden)), xs)
        return (hs ** 2).mean()
    return jax.value_and_grad(loss), (params, _normal(96, (steps, batch, hidden), 1.0))


FAMILIES = ("mlp", "resmlp", "cnn", "attention", "rnn")


def random_program(seed: int):
    """``(name, fn, args)``: a random training-step program."""
    rng = np.random.default_rng(seed)
    fam = FAMILIES[int(rng.integers(0, len(FAMILIES)))]
    make = {"mlp": lambda: _mlp_step(rng, False), "resmlp": lambda: _mlp_step(rng, True),
            "cnn": lambda: _cnn(rng), "attention": lambda: _attention(rng),
            "rnn": lambda: _rnn(rng)}[fam]
    fn, args = make()
    return f"random-{fam}-{seed}", fn, args


def training_instances(seeds, *, max_buffers: int = 256, max_ops: int = 256):
    """Exported instances of random programs: per seed, both modes, each at
    a random capacity of 20-70% of the program's peak."""
    import jax
    from ... import _jax_handover as handover
    from ..core.instance import Instance
    from ..io.export import export_buffers
    out = []
    for seed in seeds:
        name, fn, args = random_program(seed)
        text = handover.module_text(jax.jit(fn).lower(*args))
        rng = np.random.default_rng(10_000 + seed)
        for mode, device in (("offload", "h200"), ("placement", "tpu-like")):
            cap = int(rng.integers(20, 71))
            inst = Instance.from_dict(export_buffers(text, device, f"{cap}%", mode,
                                                     program=f"{name}-{cap}"))
            if inst.num_buffers <= max_buffers and inst.num_ops <= max_ops:
                out.append(inst)
    return out


# -- big training programs: variants of the manifest's big *training* programs --
#
# The manifest holds three big training programs at 50% (data/msa). Their
# families at other depths and widths, and the three at other capacities,
# make the big-program training set of the big checkpoint
# (``memfit train-agent --big-checkpoint``). Only training-side families:
# no GRU (the held-out big RNN is a GRU), no configuration of a held-out
# program.
BIG_VARIANTS = {
    "transformer_deep_v8": ("transformer", dict(layers=8, d=128, heads=4, seq=128, batch=2,
                                                vocab=512)),
    "transformer_deep_v16": ("transformer", dict(layers=16, d=96, heads=4, seq=128, batch=2,
                                                 vocab=512)),
    "resnet_train_v16": ("resnet", dict(blocks=16, width=32, hw=16, batch=8, seed=210)),
    "resnet_train_v30": ("resnet", dict(blocks=30, width=24, hw=16, batch=8, seed=220)),
    "lstm_long_v48": ("lstm", dict(steps=48, hidden=128, inp=64, batch=16, seed=410)),
    "lstm_long_v80": ("lstm", dict(steps=80, hidden=96, inp=64, batch=16, seed=420)),
}
BIG_TRAIN_PROGRAMS = ("transformer_deep", "resnet_train", "lstm_long")


def _big_variant(name: str):
    from ..io import workloads as W
    family, kw = BIG_VARIANTS[name]
    if family == "transformer":
        return W._transformer(**kw)
    if family == "resnet":
        return W._resnet(**kw)
    return W._rnn_long("lstm", **kw)


def export_both_modes(name: str, fn, args, capacities) -> list:
    """Instances of the jax function ``fn(*args)`` at ``capacities`` percent
    of its peak in both modes (offload on the h200 preset, placement on the
    tpu-like one, as bench/make_msa_instances.py exports them)."""
    import jax
    from ... import _jax_handover as handover
    from ..core.instance import Instance
    from ..io.export import export_buffers
    text = handover.module_text(jax.jit(fn).lower(*args))
    return [Instance.from_dict(export_buffers(text, device, f"{cap}%", mode, program=name))
            for mode, device in (("offload", "h200"), ("placement", "tpu-like"))
            for cap in capacities]


def big_training_instances(variant_capacities=(50,), program_capacities=(35, 65)):
    """Exported instances (both modes) of BIG_VARIANTS at
    ``variant_capacities`` percent of their peaks and of the manifest's big
    training programs (BIG_TRAIN_PROGRAMS) at ``program_capacities`` (the
    manifest has them at 50%)."""
    from ..io import workloads as W
    jobs = ([(n, lambda n=n: _big_variant(n), variant_capacities) for n in BIG_VARIANTS]
            + [(n, lambda n=n: W.get_workload(n), program_capacities) for n in BIG_TRAIN_PROGRAMS])
    return [inst for name, make, caps in jobs for inst in export_both_modes(name, *make(), caps)]
