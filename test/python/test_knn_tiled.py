"""The exact kNN's two-level form (NearestNeighbours.cpp, Analysis/KnnTiles):
candidates from block maxima in a loop over query chunks x point tiles,
the picked blocks' distances by the program's formula (a few rows at a
time), the certificate and the repair loop. A 16 KiB "L2" makes the tiles
small, so that these sizes have many tiles, a last tile and a last part of
rows that start early, and a tail of points outside the full blocks; a
memory limit (CHUNKED) makes the query chunks small too, the last one
starting early. Results must be lax.top_k's:
indices and values identical, on data where the expanded form's rounding
fails (offsets, 1-3 dims), ties, NaN and inf.
"""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import memfit
from memfit.measure import ACCOUNTING_OPTIONS, xla_bytes

TILED = "memfit-rewrite{cache-bytes=16384}"
CHUNKED = "memfit-rewrite{cache-bytes=16384 memory-limit=900KiB}"


def _knn(k):
    def knn(q, x):
        return lax.top_k(-jnp.sum((q[:, None] - x[None]) ** 2, -1), k)
    return knn


def _data(kind, rng, m=61, n=4099):
    if kind == "gaussian32":
        return rng.standard_normal((m, 32)), rng.standard_normal((n, 32))
    if kind == "offset3":  # [1000, 1001]^3: the expansion loses neighbours
        return 1000 + rng.random((m, 3)), 1000 + rng.random((n, 3))
    if kind == "dense1":
        return rng.random((m, 1)), rng.random((n, 1))
    if kind == "offset2":
        return 5e3 + rng.random((m, 2)), 5e3 + rng.random((n, 2))
    if kind == "clustered32":
        # tight clusters: in float64, 60 of 61 rows fail the certificate at
        # k + 8 blocks (k = 10), 13 still at 2 (k + 8) (the wider pass, then
        # the repair loop)
        centres = rng.standard_normal((5, 32))
        return (centres[rng.integers(0, 5, m)] + 0.01 * rng.standard_normal((m, 32)),
                centres[rng.integers(0, 5, n)] + 0.01 * rng.standard_normal((n, 32)))
    if kind == "grid3":  # ties everywhere: every row goes to the repair loop
        return rng.integers(0, 4, (m, 3)), rng.integers(0, 4, (n, 3))
    if kind == "nan_point":  # a NaN row among the points fails every row
        q, x = rng.standard_normal((m, 4)), rng.standard_normal((n, 4))
        x[1234, 2] = np.nan
        return q, x
    if kind == "nan_inf_query":
        q, x = rng.standard_normal((m, 4)), rng.standard_normal((n, 4))
        q[3, 0], q[40, 1] = np.nan, np.inf
        return q, x
    raise ValueError(kind)


def _query_chunk(text):
    return max(int(c) for c in re.findall(r"sizes = \[(\d+), 32\]", text) if int(c) <= 61)


def test_the_tiled_form_is_what_runs():
    q, x = (jnp.asarray(a, jnp.float32) for a in _data("gaussian32", np.random.default_rng(0)))
    text = memfit.jit(_knn(10), passes=TILED).lower(q, x).as_text()
    # query loop, tile loop, loop over parts of rows, the wider pass of the
    # rows that fail, repair loop; the tile's norms made once, the block
    # maxima made before they are stored
    assert text.count("stablehlo.while") == 5 and text.count("optimization_barrier") == 2
    assert "61x4099" not in text
    assert _query_chunk(text) == 61
    chunked = memfit.jit(_knn(10), passes=CHUNKED).lower(q, x).as_text()
    assert _query_chunk(chunked) == 13  # 61 = 4 * 13 + 9: the last chunk starts at 48


@pytest.mark.parametrize("passes", [TILED, CHUNKED], ids=["tiled", "chunked"])
@pytest.mark.parametrize("kind", ["gaussian32", "offset3", "dense1", "offset2", "clustered32",
                                  "grid3", "nan_point", "nan_inf_query"])
def test_identical_to_lax_top_k(kind, passes):
    q, x = (jnp.asarray(a, jnp.float32) for a in _data(kind, np.random.default_rng(1)))
    want = jax.jit(_knn(10))(q, x)
    got = memfit.jit(_knn(10), passes=passes)(q, x)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))


@pytest.mark.parametrize("kind", ["gaussian32", "offset3", "dense1", "clustered32"])
def test_index_sets_match_float64(kind):
    # Away from ties the k nearest are those of exact arithmetic.
    qd, xd = _data(kind, np.random.default_rng(2))
    q, x = jnp.asarray(qd, jnp.float32), jnp.asarray(xd, jnp.float32)
    got = np.asarray(memfit.jit(_knn(5), passes=TILED)(q, x)[1])
    q64, x64 = np.asarray(q, np.float64), np.asarray(x, np.float64)
    d = ((q64[:, None] - x64[None]) ** 2).sum(-1)
    ref = np.argsort(d, 1, kind="stable")[:, :5]
    kth, next_ = np.take_along_axis(d, ref, 1)[:, -1], np.sort(d, 1)[:, 5]
    clear = next_ - kth > 1e-5 * kth  # rows without a near-tie at the k-th
    assert clear.sum() > len(clear) // 2
    np.testing.assert_array_equal(np.sort(got, 1)[clear], np.sort(ref, 1)[clear])


def test_memory_limit_bounds_the_query_chunk():
    # 50 MiB of distances in jax; at arguments + outputs + 2 MiB the chunk
    # is bounded by the limit (XLA's count with ynn fusions off).
    rng = np.random.default_rng(3)
    q = jnp.asarray(rng.standard_normal((600, 8)), jnp.float32)
    x = jnp.asarray(rng.standard_normal((20000, 8)), jnp.float32)
    limit = 600 * 8 * 4 + 20000 * 8 * 4 + 600 * 10 * 8 + 2 * 2**20
    g = memfit.jit(_knn(10), memory_limit=limit)
    got, want = g(q, x), jax.jit(_knn(10))(q, x)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
    text = g.lower(q, x).as_text()
    assert text.count("stablehlo.while") >= 3 and "600x20000" not in text
    assert xla_bytes(g.lower(q, x).compile(compiler_options=ACCOUNTING_OPTIONS)) <= limit


@pytest.mark.parametrize("kind", ["gaussian32", "offset3", "grid3", "nan_point"])
def test_long_rows_pick_blocks_in_two_stages(kind):
    # 200,003 points: 6,250 blocks of 32 and 3 left over, so that a row's
    # block maxima are themselves picked from in two stages (top_k of the
    # maxima of groups of maxima, TwoStageTopK's model), never one top_k
    # over all 6,250 of them; still lax.top_k's values and indices.
    q, x = (jnp.asarray(a, jnp.float32)
            for a in _data(kind, np.random.default_rng(4), m=13, n=200_003))
    g = memfit.jit(_knn(10), passes=TILED)
    text = g.lower(q, x).as_text()
    # the k + 8 = 18 blocks' top_k (the repair loop's own rows are others)
    widths = [int(w) for w in re.findall(r"chlo.top_k\(%\w+, k = 18\).*: tensor<\d+x(\d+)xf32>", text)]
    assert len(widths) == 2 and max(widths) < 6250, widths
    want, got = jax.jit(_knn(10))(q, x), g(q, x)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
