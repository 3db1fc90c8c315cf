"""memfit-split{minor-contraction}: accumulated dots in the form ynn takes.

In a split loop, an accumulated dot whose lhs is contracted on its major
dimension (attention's key and value gradients in a loop over query rows,
dS^T q and P^T g) is written with the lhs contracted on its minor one
(lib/Transforms/Split/MinorContraction.h): XLA:CPU's ynn fusions take only
that form; other dots run as Eigen contractions whose packing buffers XLA
does not count (memfit.runtime_scratch). memfit.jit (target "xla") turns
it on. Checks: the numerics of each form (operands swapped, lhs or rhs
transposed) and of split attention forward + backward, with and without
the option, against unsplit jax and a float64 reference; and, compiled as
users compile it (jax's default flags, ynn fusions on, in a subprocess),
that the loop's gradient dots are no longer library dots: runtime scratch 0
with the option, > 0 without.
"""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import memfit
from memfit import _jax_handover as handover
from memfit.measure import xla_bytes
from memfit.transform import pipeline_for

KiB = 1024
MiB = 1024 * KiB


def normal(key, shape):
    return jax.random.normal(jax.random.PRNGKey(key), shape, jnp.float32)


def split_pipeline(limit, minor):
    p = pipeline_for(memory_limit=limit)
    assert " minor-contraction=true" in p  # memfit.jit's (xla) pipeline sets it
    return p if minor else p.replace(" minor-contraction=true", "")


def compile_split(f, args, limit, minor):
    lowered = jax.jit(f).lower(*args)
    lowered._lowering = copy.copy(lowered._lowering)
    text = memfit.transform(handover.module_text(lowered), split_pipeline(limit, minor))
    return handover.replace_module(lowered, text).compile(), text


ONE_OPERAND_BARRIER = re.compile(r'"stablehlo.optimization_barrier"\(%[\w#]+\) :')


def rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


# ----------------------------------------------------------------- the forms

def scores(q, k):
    s = q @ k.T
    return jnp.exp(s - jnp.max(s, axis=1, keepdims=True))


def rhs_smaller(q, k, w):   # dot(p, q): q [N, 8] transposed, operands swapped
    return lax.dot_general(scores(q, k), q, (((0,), (0,)), ((), ())))


def lhs_smaller(q, k, w):   # dot(q, p): q transposed, result layout kept
    return lax.dot_general(q, scores(q, k), (((0,), (0,)), ((), ())))


def swapped(q, k, w):       # dot(p, w^T): w [8, N] contracted on its minor dim
    return lax.dot_general(scores(q, k), w, (((0,), (1,)), ((), ())))


def batched(q, k, w):       # heads as a batch dimension, as jax's einsum writes them
    s = jnp.einsum("hqd,hkd->hqk", q, k)
    p = jnp.exp(s - jnp.max(s, -1, keepdims=True))
    return jnp.einsum("hqk,hqd->hkd", p, q)


@pytest.mark.parametrize("f, heads", [(rhs_smaller, None), (lhs_smaller, None),
                                      (swapped, None), (batched, 2)],
                         ids=["rhs_smaller", "lhs_smaller", "swapped", "batched"])
def test_each_form_matches_jax(f, heads):
    lead = () if heads is None else (heads,)
    args = (normal(0, (*lead, 512, 8)), normal(1, (*lead, 512, 8)), normal(2, (8, 512)))
    want = jax.jit(f)(*args)
    limit = 256 * KiB if heads is None else 512 * KiB
    on, text = compile_split(f, args, limit, minor=True)
    assert "stablehlo.while" in text
    assert xla_bytes(on) <= limit
    # the form changed (a barrier-held transpose, or swapped operands)
    off_text = compile_split(f, args, limit, minor=False)[1]
    assert text != off_text
    assert rel_err(on(*args), want) <= 1e-5


# --------------------------------------------------- attention fwd + bwd

def attention(q, k, v):
    s = jnp.einsum("hqd,hkd->hqk", q, k) / np.float32(8.0)
    return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, -1), v)


def attention_grad(q, k, v, g):
    return jax.grad(lambda q, k, v: jnp.sum(attention(q, k, v) * g), argnums=(0, 1, 2))(q, k, v)


def attention_grad64(q, k, v, g):
    """dq, dk, dv in float64 (numpy): P = softmax(q k^T / 8), O = P v."""
    q, k, v, g = (np.asarray(a, np.float64) for a in (q, k, v, g))
    s = np.einsum("hqd,hkd->hqk", q, k) / 8.0
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dv = np.einsum("hqk,hqd->hkd", p, g)
    dp = np.einsum("hqd,hkd->hqk", g, v)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / 8.0
    return np.einsum("hqk,hkd->hqd", ds, k), np.einsum("hqk,hqd->hkd", ds, q), dv


def test_split_attention_gradient_matches_jax_and_float64():
    args = tuple(normal(i, (2, 1024, 64)) for i in range(4))
    want = jax.jit(attention_grad)(*args)
    ref = attention_grad64(*args)
    jax_err = [rel_err(w, r) for w, r in zip(want, ref)]
    limit = 8 * MiB
    for minor in (True, False):
        c, text = compile_split(attention_grad, args, limit, minor)
        assert "stablehlo.while" in text
        # the smaller operand of each gradient dot transposed behind a barrier
        assert bool(ONE_OPERAND_BARRIER.search(text)) == minor
        assert xla_bytes(c) <= limit
        got = c(*args)
        for name, g, w, r, je in zip("qkv", got, want, ref, jax_err):
            assert rel_err(g, w) <= 1e-5, (minor, name)
            assert rel_err(g, r) <= 4 * je + 16 * np.finfo(np.float32).eps, (minor, name)


def heads_in_the_middle(x, wq, wk, wv, g):
    """Attention as jax's einsums write it on [S, H, D] projections (heads in
    the middle dimension), and its weights' gradients."""
    def f(wq, wk, wv):
        q, k, v = ((x @ w).reshape(x.shape[0], 2, 64) for w in (wq, wk, wv))
        s = jnp.einsum("qhd,khd->hqk", q, k) / np.float32(8.0)
        o = jnp.einsum("hqk,khd->qhd", jax.nn.softmax(s, -1), v)
        return jnp.sum(o * g)
    return jax.grad(f, argnums=(0, 1, 2))(wq, wk, wv)


def heads_in_the_middle64(x, wq, wk, wv, g):
    x, wq, wk, wv, g = (np.asarray(a, np.float64) for a in (x, wq, wk, wv, g))
    per_head = lambda a: a.reshape(a.shape[0], 2, 64).transpose(1, 0, 2)  # noqa: E731
    flat = lambda a: a.transpose(1, 0, 2).reshape(a.shape[1], -1)  # noqa: E731
    dq, dk, dv = attention_grad64(per_head(x @ wq), per_head(x @ wk), per_head(x @ wv),
                                  per_head(g.reshape(g.shape[0], -1)))
    return x.T @ flat(dq), x.T @ flat(dk), x.T @ flat(dv)


def test_heads_in_the_middle_gradient_matches_jax_and_float64():
    # The loop over query rows carries k and v as [H, D, S] copies made once
    # (their batch dimension is in the middle of [S, H, D]), accumulates dS^T q
    # from q's chunk [c, H, D] transposed, and the weights' gradients x^T dK,
    # x^T dV are whole dots after the loop, written contracted on their lhs's
    # minor dimension; with the option off none of that happens.
    x = normal(0, (1024, 128))
    ws = [normal(i, (128, 128)) / np.float32(np.sqrt(128)) for i in (1, 2, 3)]
    args = (x, *ws, normal(4, (1024, 2, 64)))
    want = jax.jit(heads_in_the_middle)(*args)
    ref = heads_in_the_middle64(*args)
    jax_err = [rel_err(w, r) for w, r in zip(want, ref)]
    limit = 6 * MiB
    c, text = compile_split(heads_in_the_middle, args, limit, minor=True)
    off_text = compile_split(heads_in_the_middle, args, limit, minor=False)[1]
    assert "stablehlo.while" in text
    assert re.search(r"tensor<1024x2x64xf32>\) -> tensor<2x64x1024xf32>", text)  # carried copy
    assert not ONE_OPERAND_BARRIER.search(off_text)
    assert xla_bytes(c) <= limit
    for name, got, w, r, je in zip(("wq", "wk", "wv"), c(*args), want, ref, jax_err):
        assert rel_err(got, w) <= 1e-5, name
        assert rel_err(got, r) <= 4 * je + 16 * np.finfo(np.float32).eps, name


# ---------------------------------------- the compiled program, jax defaults

_DEFAULTS_SCRIPT = r"""
import copy, json, sys
import jax, jax.numpy as jnp, numpy as np
import memfit
from memfit import _jax_handover as handover
from memfit.runtime_scratch import dot_scratch_bytes
sys.path.insert(0, sys.argv[1])
from test_minor_contraction import attention_grad, split_pipeline
args = [jax.random.normal(jax.random.PRNGKey(i), (2, 1024, 64), jnp.float32) for i in range(4)]
out = {}
# memfit.jit as users call it (its pipeline sets minor-contraction)
hlo = memfit.jit(attention_grad, memory_limit="8MiB").lower(*args).compile().as_text()
out["jit"] = [dot_scratch_bytes(hlo), "while" in hlo]
low = jax.jit(attention_grad).lower(*args)
low._lowering = copy.copy(low._lowering)
text = memfit.transform(handover.module_text(low), split_pipeline("8MiB", minor=False))
hlo = handover.replace_module(low, text).compile().as_text()
out["off"] = [dot_scratch_bytes(hlo), "while" in hlo]
print(json.dumps(out))
"""


def test_gradient_dots_are_no_library_dots_in_jax_defaults():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # jax's defaults: ynn on
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", _DEFAULTS_SCRIPT, here], env=env,
                       capture_output=True, text=True, timeout=600, cwd=here)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["jit"] == [0, True]           # split, and no dot outside a fusion
    assert out["off"][1] and out["off"][0] > 0  # without: the Eigen dots' scratch


def test_iree_pipeline_leaves_the_dots_alone():
    assert "minor-contraction" not in pipeline_for(memory_limit="1MiB", target="iree")
    assert "minor-contraction=true" in pipeline_for(memory_limit="1MiB")
