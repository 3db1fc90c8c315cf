"""Two programs as ML code writes them, each on a gap of its own:

* A CLIP-style contrastive loss's gradient (examples.clip_loss): four
  [B, B] values live together, so no split step's loop fits while the
  others are still whole. The projected steps (Split.cpp) size each loop by
  what it adds, so the loops take chunks of many rows, not the probe's one
  row per iteration (25x jax's time). The columns' logsumexp is accumulated
  online in the rows' pass (docs/split.md, *Online logsumexp*): two loops
  over the [B, B] logits.
* A KV-cache decode step (examples.kv_cache_decode): its dots read the
  [B, S, H, D] caches with the batch dimensions (b, h) not leading, and
  XLA:CPU copies each cache transposed for them. The model counts those
  copies (FusionModel's transposed dot operands); without them it judges
  the program within the limit and leaves it whole, 240 MiB over.

Each checks XLA's bytes (arguments + outputs + temporaries, ynn fusions
off) under the limit, and the float64 contract (memfit.testing.oracle's
relative error) on hard data: logits over a wide range, and embeddings with
a common offset in 3 dimensions (nearly tied logits).
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memfit.testing import examples
from memfit.testing.oracle import EPS32, FACTOR, FLOOR_ULPS, float64_outputs, relative_error
from numerics import split_within


def _limit(fn, args, divisor):
    m = jax.jit(fn).lower(*args).compile().memory_analysis()
    fixed = m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
    return fixed + m.temp_size_in_bytes // divisor


def _f64(fn, args):
    return [np.asarray(o, np.float64)
            for o in jax.tree_util.tree_leaves(float64_outputs(fn, args))]


def _within_contract(fn, args, base, fitted):
    """memfit's error against float64 within FACTOR x jax's own (or a floor
    of FLOOR_ULPS float32 ulps), leaf by leaf."""
    for want, j, m in zip(_f64(fn, args), jax.tree_util.tree_leaves(base(*args)),
                          jax.tree_util.tree_leaves(fitted(*args))):
        ej, em = relative_error(j, want), relative_error(m, want)
        assert em <= max(FACTOR * ej, FLOOR_ULPS * EPS32), (em, ej)


def _chunks(text):
    return [int(c) for c in re.findall(r"memfit.split = \{chunk = (\d+)", text)]


def _clip_args(family, rng, b, d):
    if family == "spread":
        # very different norms, temperature 100: logits span about +-100,
        # where the logsumexp's max matters
        return ((rng.standard_normal((b, d)) * rng.uniform(0.1, 10, (b, 1))).astype(np.float32),
                rng.standard_normal((b, d)).astype(np.float32), np.float32(np.log(100.0)))
    # a common offset in 3 dimensions: after normalisation every pair is
    # nearly parallel, the logits nearly tied and the softmax flat, and the
    # gradient (d/d log_scale above all) a difference of nearly equal terms.
    # At offset 10 jax's float32 gradient keeps about 6 digits; at 100 two;
    # at 1000 none (both jax's and memfit's are rounding noise there, and no
    # contract can tell them apart). The split's passes must read logits
    # rounded alike (Planner.cpp, isSharedSmallValue) to keep jax's digits.
    offset = np.float32(10.0)
    return ((rng.standard_normal((b, d)) + offset).astype(np.float32),
            (rng.standard_normal((b, d)) + offset).astype(np.float32), np.float32(np.log(100.0)))


@pytest.mark.parametrize("family,d", [("spread", 64), ("offset_ties", 3)])
def test_clip_loss_gradient_splits_with_chunks_of_many_rows(family, d):
    rng = np.random.default_rng(0)
    b = 1024
    args = _clip_args(family, rng, b, d)
    fn = jax.value_and_grad(examples.clip_loss, argnums=(0, 1, 2))
    limit = _limit(fn, args, 16)
    base, fitted, _, _ = split_within(fn, args, limit, min_ratio=4)
    text = fitted.lower(*args).as_text()
    chunks = _chunks(text)
    assert chunks and min(chunks) >= 8, chunks
    # the columns' max and sum in the rows' pass (an online logsumexp), so
    # the [B, B] logits are formed twice, not three times
    kinds = re.findall(r'kind = "([a-z-]+)"', text)
    assert "online-logsumexp" in kinds and len(kinds) <= 2, kinds
    # the data is hard, not hopeless: jax's own gradient has digits
    log_scale = jax.tree_util.tree_leaves(base(*args))[-1]
    assert relative_error(log_scale, _f64(fn, args)[-1]) < 1e-3
    _within_contract(fn, args, base, fitted)


def test_kv_cache_decode_counts_the_transposed_cache_copies():
    rng = np.random.default_rng(1)
    bsz, s, h, d = 8, 2048, 8, 64
    small = lambda: rng.standard_normal((bsz, h, d)).astype(np.float32)  # noqa: E731
    cache = lambda: (rng.standard_normal((bsz, s, h, d)) * 4).astype(np.float32)  # noqa: E731
    args = (small() * 8, small(), small(), cache(), cache(), np.int32(s // 3))
    fn = examples.kv_cache_decode
    # The caches (arguments and outputs) are most of the bytes: leave a
    # sixteenth of jax's temporaries, the two transposed cache copies.
    limit = _limit(fn, args, 16)
    base, fitted, _, _ = split_within(fn, args, limit, min_ratio=1.3)
    _within_contract(fn, args, base, fitted)
