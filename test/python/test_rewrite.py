"""memfit-rewrite: what each rewrite does, numerics, and memory saved.

The numerics contract (README) is checked against float64 on hard data in
test_numerics_oracle.py; here the rewrites' forms and easy-data values.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import memfit

REWRITE = "memfit-rewrite"
FAST = "memfit-rewrite{fast-distance=true}"  # the opt-in unconditional expansion


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(got, want, rel=1e-4):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(np.abs(want).max(), 1e-30)
    assert np.abs(got - want).max() <= rel * scale, np.abs(got - want).max() / scale


def _xla_bytes(fn, *args):
    m = fn.lower(*args).compile().memory_analysis()
    return m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes \
        - m.alias_size_in_bytes


def _rewritten(f, *args, passes=FAST):
    g = memfit.jit(f, passes=passes)
    return g, g.lower(*args).as_text()


def sqdist(x, q):
    return jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, axis=-1)


def test_squared_distance_values_and_memory():
    x = _rng(0).standard_normal((512, 32), dtype=np.float32)
    q = _rng(1).standard_normal((128, 32), dtype=np.float32)
    g, text = _rewritten(sqdist, x, q)
    assert "dot_general" in text and "128x512x32" not in text
    _close(g(x, q), jax.jit(sqdist)(x, q))
    # XLA fuses the broadcast chain, so memory stays the same; what changes is
    # that the work is a GEMM (2*M*N*D FLOPs plus the norms).
    assert _xla_bytes(g, x, q) <= 1.05 * _xla_bytes(jax.jit(sqdist), x, q)


def test_distance_without_top_k_keeps_its_formula():
    # By default only an order-sensitive consumer that the exact kNN rewrite
    # handles gets the GEMM; a distance read as values keeps its formula.
    x = _rng(0).standard_normal((64, 8), dtype=np.float32)
    q = _rng(1).standard_normal((16, 8), dtype=np.float32)
    g, text = _rewritten(sqdist, x, q, passes=REWRITE)
    assert "dot_general" not in text
    np.testing.assert_array_equal(g(x, q), jax.jit(sqdist)(x, q))


def _knn(k):
    def knn(x, q):
        return lax.top_k(-jnp.sum((q[:, None] - x[None]) ** 2, -1), k)
    return knn


def test_knn_exact_through_a_gemm():
    x = _rng(2).standard_normal((1000, 16), dtype=np.float32)
    q = _rng(3).standard_normal((50, 16), dtype=np.float32)
    g, text = _rewritten(_knn(10), x, q, passes=REWRITE)
    assert "dot_general" in text and "50x1000x16" not in text
    got, want = g(x, q), jax.jit(_knn(10))(x, q)
    np.testing.assert_array_equal(got[1], want[1])
    _close(got[0], want[0], rel=1e-6)


@pytest.mark.parametrize("offset,dim", [(1000.0, 3), (0.0, 1)], ids=["offset3d", "dense1d"])
def test_knn_exact_where_the_expansion_fails(offset, dim):
    # Coordinates far from the origin, and dense 1-D data: the expanded
    # distance alone loses neighbours here (fast-distance does); the
    # certificate sends those rows to the exact loop.
    x = (offset + 10 * _rng(4).random((4000, dim))).astype(np.float32)
    q = (offset + 10 * _rng(5).random((64, dim))).astype(np.float32)
    want = np.asarray(jax.jit(_knn(5))(x, q)[1])
    got = np.asarray(memfit.jit(_knn(5), passes=REWRITE)(x, q)[1])
    np.testing.assert_array_equal(got, want)
    fast = np.asarray(memfit.jit(_knn(5), passes=FAST)(x, q)[1])
    assert (fast != want).any()  # the data really is hard for the expansion


def test_norm_with_batch_dims():
    x = _rng(4).standard_normal((3, 200, 8), dtype=np.float32)
    q = _rng(5).standard_normal((3, 40, 8), dtype=np.float32)

    def f(x, q):
        return jnp.sqrt(jnp.sum((q[:, :, None, :] - x[:, None, :, :]) ** 2, -1) + 1e-3)

    g, text = _rewritten(f, x, q)
    assert "batching_dims = [0] x [0]" in text
    _close(g(x, q), jax.jit(f)(x, q))


def test_power_form_from_other_producers():
    x = _rng(6).standard_normal((300, 8), dtype=np.float32)
    q = _rng(7).standard_normal((30, 8), dtype=np.float32)

    def f(x, q):
        return jnp.sum(lax.pow(q[:, None] - x[None], 2.0), -1)

    g, text = _rewritten(f, x, q)
    assert "dot_general" in text
    _close(g(x, q), jax.jit(f)(x, q))


@pytest.mark.parametrize("square", [
    jnp.square,                                   # chlo.square
    lambda d: jnp.abs(d) ** 2,                    # multiply(abs(d), abs(d))
    lambda d: jnp.square(jnp.abs(d)),             # chlo.square(abs(d))
    lambda d: lax.integer_pow(d, 2),              # multiply(d, d)
], ids=["jnp.square", "abs_pow", "square_abs", "integer_pow"])
def test_every_way_jax_writes_a_square(square):
    x = _rng(8).standard_normal((300, 8), dtype=np.float32)
    q = _rng(9).standard_normal((30, 8), dtype=np.float32)

    def f(x, q):
        return jnp.sum(square(q[:, None] - x[None]), -1)

    g, text = _rewritten(f, x, q)
    assert "dot_general" in text and "30x300x8" not in text
    _close(g(x, q), jax.jit(f)(x, q))


def test_reduce_of_product_becomes_dot():
    a = _rng(8).standard_normal((64, 16), dtype=np.float32)
    b = _rng(9).standard_normal((96, 16), dtype=np.float32)

    def f(a, b):
        return jnp.sum(a[:, None, :] * b[None, :, :], axis=-1)

    g, text = _rewritten(f, a, b)
    assert "dot_general" in text and "64x96x16" not in text
    _close(g(a, b), jax.jit(f)(a, b))


@pytest.mark.parametrize("form", ["matvec", "transpose", "left_thin"])
def test_matrix_chain_reordering(form):
    n = 384
    a = _rng(10).standard_normal((n, n), dtype=np.float32) / np.sqrt(n)
    b = _rng(11).standard_normal((n, n), dtype=np.float32) / np.sqrt(n)
    v = _rng(12).standard_normal((n, 3), dtype=np.float32)
    if form == "matvec":
        f = lambda a, b, v: (a @ b) @ v[:, 0]
    elif form == "transpose":
        f = lambda a, b, v: (a.T @ b) @ v
    else:
        f = lambda a, b, v: v.T @ (a @ b)
    g, text = _rewritten(f, a, b, v)
    # No n x n product remains.
    assert f"tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>" not in text
    _close(g(a, b, v), jax.jit(f)(a, b, v))


def _chain_reusing_a_product(a, b, v):
    c = a @ b
    return (c @ b) @ v, c


def test_matrix_chain_reusing_a_product():
    # a b is returned too: it stays one product, computed once, and
    # (c b) v becomes c (b v). Counting a b as part of the chain, the
    # rewrite would find its own output cheaper still and rewrite forever.
    n = 384
    a = _rng(13).standard_normal((n, n), dtype=np.float32) / np.sqrt(n)
    b = _rng(14).standard_normal((n, n), dtype=np.float32) / np.sqrt(n)
    v = _rng(15).standard_normal((n, 3), dtype=np.float32)
    g, text = _rewritten(_chain_reusing_a_product, a, b, v, passes=REWRITE)
    square = f"tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>"
    assert text.count(square) == 1 and '"matrix-chain" = 1' in text
    a64, b64, v64 = (np.asarray(x, np.float64) for x in (a, b, v))
    want = ((a64 @ b64) @ b64) @ v64, a64 @ b64
    for got, ref in zip(g(a, b, v), want):
        _close(got, ref)


def test_options_switch_rewrites_off():
    x = _rng(0).standard_normal((64, 8), dtype=np.float32)
    q = _rng(1).standard_normal((16, 8), dtype=np.float32)
    g = memfit.jit(sqdist, passes="memfit-rewrite{distance=false reduce-to-dot=false}")
    assert "dot_general" not in g.lower(x, q).as_text()


def test_gram_gradient_shares_one_gemm():
    # jax's gradient of A A^T is G A + G^T A: factor-sums makes it (G + G^T) A,
    # one GEMM over the wide A instead of two
    a = _rng(10).standard_normal((16, 2048), dtype=np.float32)
    w = _rng(11).standard_normal((16, 16), dtype=np.float32)
    y = _rng(12).standard_normal((2048,), dtype=np.float32)

    def loss(a, w, y):
        return jnp.sum(w * (a @ a.T)) + jnp.sum((a @ y) ** 2)

    grad = jax.grad(loss)
    g, text = _rewritten(grad, a, w, y)
    off = memfit.jit(grad, passes="memfit-rewrite{factor-sums=false}")

    def wide_gemms(t):  # GEMMs producing [16, 2048] (not the outer product)
        return sum("-> tensor<16x2048xf32>" in ln and "contracting_dims = [] x []" not in ln
                   for ln in t.splitlines() if "dot_general" in ln)
    n_on, n_off = wide_gemms(text), wide_gemms(off.lower(a, w, y).as_text())
    assert (n_on, n_off) == (1, 2)
    _close(g(a, w, y), jax.jit(grad)(a, w, y))
