"""memfit-rewrite's two-stage top-k is exactly lax.top_k.

Bit for bit, values and indices, on rows full of ties, NaN of both signs,
infinities and signed zeros, for every element type the rewrite accepts,
with row lengths the block divides and ones it does not (remainder block);
and inside a split loop (kNN at a limit), where memfit's pipeline applies it
after memfit-split.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memfit

TOP_K = "memfit-rewrite"

FLOATS = [np.float32, np.float64, np.float16, jnp.bfloat16]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32]
# f32/f64 rows take XLA's fast TopK, so the rewrite needs long rows to pay;
# the other types' top_k sorts the whole row, and it pays early
LENGTHS = {True: [32_768, 40_000, 40_003], False: [1_000, 1_003, 4_096]}

_special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0])


def _row_data(rng, dtype, shape):
    """A mix of a few repeated values (ties) and specials, and noise."""
    if np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, info.max - 1], dtype)
        x = rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(dtype)
    else:
        pool = _special.astype(np.float32)
        x = rng.standard_normal(shape).astype(np.float32)
    mask = rng.random(shape) < rng.choice([0.0, 0.1, 0.9])
    x = np.where(mask, rng.choice(pool, shape), x)
    return jnp.asarray(np.asarray(x).astype(dtype))


def _rewritten(k, x):
    f = lambda x: jax.lax.top_k(x, k)
    g = memfit.jit(f, passes=TOP_K)
    return jax.jit(f)(x), g(x), g.lower(x).as_text()


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(dtype=st.sampled_from(FLOATS + INTS), rows=st.integers(1, 3),
       k=st.sampled_from([1, 2, 5, 17]), pick=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_two_stage_top_k_is_lax_top_k(dtype, rows, k, pick, seed):
    fast = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float64))
    n = LENGTHS[fast][pick]
    x = _row_data(np.random.default_rng(seed), dtype, (rows, n))
    want, got, text = _rewritten(k, x)
    assert "memfit.two_stage" in text  # the rewrite really applied
    assert _same_bits(got[1], want[1]), "indices differ"
    assert _same_bits(got[0], want[0]), "values differ"


@pytest.mark.parametrize("value", [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 7.0])
def test_constant_rows_tie_to_the_lowest_indices(value):
    x = jnp.full((2, 40_000), value, jnp.float32)
    want, got, text = _rewritten(10, x)
    assert "memfit.two_stage" in text
    assert _same_bits(got[1], want[1]) and _same_bits(got[0], want[0])
    assert np.asarray(got[1])[0].tolist() == list(range(10))


def test_leading_dims_are_rows():
    x = _row_data(np.random.default_rng(3), np.float32, (2, 3, 40_000))
    want, got, text = _rewritten(5, x)
    assert "memfit.two_stage" in text
    assert _same_bits(got[1], want[1]) and _same_bits(got[0], want[0])


def test_short_rows_are_left_alone():
    x = _row_data(np.random.default_rng(4), np.float32, (4, 64))
    _, _, text = _rewritten(10, x)
    assert "memfit.two_stage" not in text


def test_split_knn_gets_the_two_stage_top_k_in_its_loop():
    rng = np.random.default_rng(5)
    q = jnp.asarray(rng.standard_normal((256, 16), np.float32))
    x = jnp.asarray(rng.standard_normal((50_000, 16), np.float32))

    def knn(q, x):
        return jax.lax.top_k(-jnp.sum((q[:, None] - x[None]) ** 2, -1), 10)

    g = memfit.jit(knn, memory_limit="8MiB")
    text = g.lower(q, x).as_text()
    loop = text[text.index("stablehlo.while"):]
    assert "memfit.two_stage" in loop
    want, got = jax.jit(knn)(q, x), g(q, x)
    assert _same_bits(got[1], want[1])
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-5, atol=1e-5)
