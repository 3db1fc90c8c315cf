"""IREE as a second consumer of memfit's output.

memfit's split kNN, softmax attention and Gaussian-kernel regression
(jax programs, split at limits 8x or more below jax's need) compile with
iree-base-compiler (llvm-cpu) and run with iree-base-runtime; results equal
jax's. A module with jax's LAPACK custom calls is refused with a message
that names each call, before IREE sees it. Skipped when the IREE packages
are not installed (`make test` installs them).
"""
from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

import memfit  # noqa: E402
from memfit._jax_handover import module_text  # noqa: E402
from memfit.consumers import check_for_iree, iree_blockers, run_iree, xla_bytes_of  # noqa: E402
from memfit.testing import examples  # noqa: E402


def _inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


CASES = examples.CONSUMER_CASES


@pytest.mark.parametrize("fn,shapes", CASES, ids=[c[0].__name__ for c in CASES])
def test_iree_runs_memfit_split(fn, shapes):
    args = _inputs(*shapes)
    text = module_text(jax.jit(fn).lower(*args))
    limit = xla_bytes_of(text) // 8
    split = memfit.transform(text, memfit.pipeline_for(memory_limit=limit, target="iree"))
    assert '"stablehlo.while"' in split
    assert xla_bytes_of(split) <= limit
    got = run_iree(split, *args)
    want = [np.asarray(w) for w in jax.tree.leaves(jax.jit(fn)(*args))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        if np.issubdtype(w.dtype, np.integer):
            assert np.mean(g == w) > 0.99  # ties in f32 distances may swap
        else:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_torch_mlir_knn_through_iree():
    """torch-mlir's kNN (a sort-based top-k), split by memfit, run by IREE."""
    from pathlib import Path
    from memfit.consumers import run_xla
    text = (Path(__file__).parent / "data" / "torch" / "knn.mlir").read_text()
    args = _inputs((4096, 16), (256, 16))
    split = memfit.transform(text, memfit.pipeline_for(memory_limit="1MiB", target="iree"))
    got, want = run_iree(split, *args), run_xla(text, *args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-4)
    assert np.mean(got[1] == want[1]) > 0.99


def _gp_text():
    def gp(x, y):
        k = jnp.exp(-jnp.sum((x[:, None] - x[None]) ** 2, -1)) + jnp.eye(x.shape[0])
        return jax.scipy.linalg.solve_triangular(jnp.linalg.cholesky(k), y, lower=True)
    return module_text(jax.jit(gp).lower(*_inputs((64, 2), (64, 1))))


def test_lapack_custom_calls_are_named():
    text = _gp_text()
    targets = [b.target for b in iree_blockers(text)]
    assert targets == ["lapack_spotrf_ffi", "lapack_strsm_ffi"]
    with pytest.raises(memfit.MemfitError) as e:
        check_for_iree(text)
    msg = str(e.value)
    assert "IREE cannot compile" in msg and "@lapack_spotrf_ffi" in msg
    assert "in @cholesky" in msg and "LAPACK" in msg


def test_memfit_opt_target_iree_refuses_lapack(tmp_path):
    src = tmp_path / "gp.mlir"
    src.write_text(_gp_text())
    r = subprocess.run([sys.executable, "-m", "memfit.cli", "opt", str(src), "--target", "iree",
                        "-o", str(tmp_path / "out.mlir")], capture_output=True, text=True)
    assert r.returncode == 1
    assert "@lapack_strsm_ffi" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out.mlir").exists()
