"""memfit-split along the vocabulary of an LLM head's cross-entropy, written
as optax writes it (take_along_axis of the label's logit, jax.nn.logsumexp):
with too few tokens for a split by rows to fit, the split runs along the
columns of W and of the logits. The label's logit is gathered in the chunk
its index falls in (GatherSelect.cpp), the gradient's one-hot scatter is
chunked with its indices shifted (DimMapping's shiftsIndices), and the
logsumexp takes two passes (its max, then the sum of exponentials).

Each test checks that the program has a loop, that XLA's argument + output +
temp - alias (ynn fusions off, conftest.py) is within the limit while plain
jax.jit needs more, and the float64 contract (memfit.testing.oracle). The
logits span about +-60 (the logsumexp's max matters), and the labels sit on
every boundary of every chunk width the loops use, at both ends of the
vocabulary, and at -1 (jax reads it as the last column).
"""
from __future__ import annotations

import re

import pytest

import jax
import jax.numpy as jnp
import numpy as np

import memfit
from memfit.testing import examples
from memfit.measure import xla_bytes
from memfit.testing.oracle import EPS32, FACTOR, FLOOR_ULPS, relative_error

MiB = 1024 * 1024


def _f64(fn, args):
    with jax.enable_x64(True):
        wide = [jnp.asarray(np.asarray(a), jnp.float64)
                if np.issubdtype(np.asarray(a).dtype, np.floating) else jnp.asarray(a)
                for a in args]
        return [np.asarray(o, np.float64)
                for o in jax.tree_util.tree_leaves(jax.jit(fn)(*wide))]


def _head(rng, t, d, v):
    h = rng.standard_normal((t, d)).astype(np.float32)
    w = (rng.standard_normal((d, v)) * 12 / np.sqrt(d)).astype(np.float32)
    return h, w


def _chunk_widths(text, t, v):
    """The extents of the logits' chunks in memfit's program."""
    return sorted({int(c) for c in re.findall(rf"tensor<{t}x(\d+)xf32>", text)
                   if 1 < int(c) < v})


def _boundary_labels(widths, t, v, rng):
    """Labels on chunk boundaries (first and last column of each chunk of
    every width), the vocabulary's ends and -1; filled up at random."""
    near = {0, 1, v - 1, v - 2, -1}
    for c in widths:
        for s in range(0, v, c):
            near.update((s, s - 1, s + c - 1, min(s + c, v - 1)))
    near = sorted(x for x in near if -1 <= x < v)
    rng.shuffle(near)
    labels = np.array(near[:t] + list(rng.integers(0, v, max(0, t - len(near)))))
    return labels.astype(np.int32)


def _split(fn, args, limit):
    fitted = memfit.jit(fn, memory_limit=limit, rewrite=False)
    lowered = fitted.lower(*args)
    text = lowered.as_text()
    assert "stablehlo.while" in text
    return fitted, text, lowered.compile()


def _check(fn, args, fitted, split, limit):
    base = jax.jit(fn).lower(*args).compile()
    assert xla_bytes(split) <= limit, (xla_bytes(split), limit)
    assert xla_bytes(base) > limit, (xla_bytes(base), limit)
    for want, j, m in zip(_f64(fn, args), jax.tree_util.tree_leaves(base(*args)),
                          jax.tree_util.tree_leaves(fitted(*args))):
        ej, em = relative_error(j, want), relative_error(m, want)
        assert em <= FACTOR * ej + FLOOR_ULPS * EPS32, (em, ej)


def _labelled_args(fn, t, d, v, limit, seed):
    """Arguments whose labels sit on the boundaries of the chunks that memfit
    chooses for these shapes (the chunking does not depend on the values)."""
    rng = np.random.default_rng(seed)
    h, w = _head(rng, t, d, v)
    probe = np.zeros(t, np.int32)
    _, text, _ = _split(fn, (h, w, probe), limit)
    widths = _chunk_widths(text, t, v)
    assert widths, "the logits are not chunked along the vocabulary"
    return (h, w, _boundary_labels(widths, t, v, rng)), widths


def test_loss_splits_along_the_vocabulary():
    # 8 tokens x 262147 columns (not a multiple of any chunk): one row of the
    # logits is 1 MiB, W 4 MiB; split by rows, a row's logits and their
    # exponentials need ~8 MiB with the margin, so only the vocabulary fits.
    t, d, v, limit = 8, 4, 262147, 5 * MiB
    fn = examples.llm_head_loss
    args, widths = _labelled_args(fn, t, d, v, limit, seed=1)
    assert all(w < v for w in widths)
    fitted, _, split = _split(fn, args, limit)
    _check(fn, args, fitted, split, limit)


def test_per_token_losses_match_on_chunk_boundaries():
    # The per-token losses (no mean): every token's label logit comes from
    # its own chunk, so a label on a chunk boundary taken from the wrong
    # chunk shows in that token's loss.
    t, d, v, limit = 16, 4, 131101, 3 * MiB

    def per_token(h, w, labels):
        return examples.softmax_cross_entropy_with_integer_labels(h @ w, labels)

    args, _ = _labelled_args(per_token, t, d, v, limit, seed=2)
    fitted, _, split = _split(per_token, args, limit)
    _check(per_token, args, fitted, split, limit)


def test_value_and_grad_split_along_the_vocabulary():
    # 16 tokens x 65549 columns: W and dW take 4 MiB, the logits 4 MiB; the
    # gradient's one-hot scatter is chunked with shifted indices and dW is
    # written column chunk by column chunk (XLA keeps a transposed copy of
    # dW beside it, 2 MiB).
    t, d, v, limit = 16, 8, 65549, int(6.5 * MiB)
    fn = jax.value_and_grad(examples.llm_head_loss, argnums=(0, 1))
    args, _ = _labelled_args(fn, t, d, v, limit, seed=3)
    fitted, text, split = _split(fn, args, limit)
    scattered = re.findall(r"\}\) : \(tensor<16x(\d+)xf32>, tensor<16x1x1xi32>", text)
    assert scattered and all(int(c) < v for c in scattered), scattered
    _check(fn, args, fitted, split, limit)


def test_optax_own_loss_splits_along_the_vocabulary():
    # optax's own function writes the label's logit as a jnp.take gather of
    # take_along_axis: the split reaches the vocabulary through the logits'
    # producer root (memfit-split's seeds). Value and gradient, wide logits,
    # labels on the chunk boundaries, against float64.
    optax = pytest.importorskip("optax")
    t, d, v, limit = 256, 16, 32771, 8 * MiB

    def loss(h, w, labels):
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(h @ w, labels))

    fn = jax.value_and_grad(loss, argnums=(0, 1))
    args, widths = _labelled_args(fn, t, d, v, limit, seed=3)
    assert all(w < v for w in widths)
    fitted, _, split = _split(fn, args, limit)
    _check(fn, args, fitted, split, limit)


def test_split_is_the_same_in_every_process(tmp_path):
    # A loss with two logsumexps over one logits matrix (cross-entropy and
    # its z-loss): both match the online form, and the one taken must not
    # depend on where the process's allocator put the ops (address-keyed
    # maps differ from process to process). Eight processes, one program.
    import subprocess
    import sys
    from memfit.testing.examples import softmax_cross_entropy_with_integer_labels as xent

    def loss(x, w, labels):
        logits = x @ w
        return jnp.mean(xent(logits, labels)) + 1e-4 * jnp.mean(
            jax.nn.logsumexp(logits, -1) ** 2)

    rng = np.random.default_rng(0)
    args = (rng.standard_normal((256, 64)).astype(np.float32),
            (rng.standard_normal((64, 4096)) / 8).astype(np.float32),
            rng.integers(0, 4096, 256).astype(np.int32))
    src = tmp_path / "zloss.mlir"
    src.write_text(jax.jit(jax.value_and_grad(loss, argnums=(0, 1))).lower(*args).as_text())
    outputs = {subprocess.run([sys.executable, "-m", "memfit.cli", "opt", str(src),
                               "--memory-limit", "2754012"], capture_output=True, text=True,
                              check=True).stdout for _ in range(8)}
    assert len(outputs) == 1 and "stablehlo.while" in next(iter(outputs))
