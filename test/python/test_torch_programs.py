"""StableHLO from PyTorch through torch-mlir, split by memfit and run by XLA.

The programs were written once by tools/torch_export/export_programs.py
(torch_mlir.fx.export_and_import(..., output_type="stablehlo")) and are
committed under data/torch/: these tests need neither torch nor torch-mlir.
Each program runs through XLA before and after `memfit opt --memory-limit`;
results agree with the unsplit program and with a float64 numpy reference,
and XLA's own byte count (ynn fusions off, conftest.py) is under the limit.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import memfit
from memfit.consumers import run_xla, xla_bytes_of

DATA = Path(__file__).parent / "data" / "torch"


def _rng_inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _softmax_attention(q, k, v, scale):
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64) / scale
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)


def _reference(name, args):
    if name == "self_attention":
        (x,) = args
        return [_softmax_attention(x, x, x, 8.0)]
    if name == "attention":
        return [_softmax_attention(*args, 8.0)]
    if name == "knn":
        x, q = (a.astype(np.float64) for a in args)
        d = (q * q).sum(-1)[:, None] - 2 * q @ x.T + (x * x).sum(-1)[None, :]
        idx = np.argsort(d, axis=1, kind="stable")[:, :8]
        return [np.take_along_axis(d, idx, 1), idx]
    x, z, y = (a.astype(np.float64) for a in args)
    d = ((x[:, None, :] - z[None, :, :]) ** 2).sum(-1)
    return [np.exp(-0.5 * d / 0.3**2) @ y]


# (program, input shapes, memory limit). Attention's limit is 8x below
# XLA's 17 MiB for the unsplit program; the issue's 1 MiB is below its
# arguments plus outputs (2 x 512 KiB), which no split can remove.
CASES = [
    ("self_attention", [(2, 1024, 64)], "2.5MiB"),
    ("attention", [(2, 1024, 64)] * 3, "3.5MiB"),
    ("knn", [(4096, 16), (256, 16)], "1MiB"),
    ("gaussian_kernel", [(256, 8), (4096, 8), (4096, 2)], "1MiB"),
]


@pytest.mark.parametrize("name,shapes,limit", CASES, ids=[c[0] for c in CASES])
def test_torch_program_splits_under_xla(name, shapes, limit):
    text = (DATA / f"{name}.mlir").read_text()
    args = _rng_inputs(*shapes)
    before = run_xla(text, *args)
    split = memfit.transform(text, memfit.pipeline_for(memory_limit=limit))
    assert '"stablehlo.while"' in split
    after = run_xla(split, *args)
    limit_bytes = memfit.parse_memory_size(limit)
    assert xla_bytes_of(split) <= limit_bytes < xla_bytes_of(text)
    ref = _reference(name, args)
    if name == "knn":
        # Distances agree; indices agree except where distances tie in f32.
        np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(after[0], ref[0], rtol=1e-4, atol=1e-3)
        assert np.mean(after[1] == ref[1]) > 0.99
        return
    np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(after[0], ref[0], rtol=1e-4, atol=1e-5)


def test_issue_attention_splits_by_query_rows():
    """q = k = v from one tensor, as torch-mlir writes it (identity reshapes
    around the dots): one loop over query rows, as for jax's program; not
    three loops along the keys."""
    text = (DATA / "self_attention.mlir").read_text()
    split = memfit.transform(text, memfit.pipeline_for(memory_limit="2.5MiB"))
    assert split.count('"stablehlo.while"') == 1
    assert 'dim = 1 : i64, kind = "map"' in split


def test_memfit_opt_cli_on_torch_text(tmp_path):
    """The documented path: torch-mlir's text -> memfit opt -> XLA."""
    out = tmp_path / "attention.split.mlir"
    r = subprocess.run([sys.executable, "-m", "memfit.cli", "opt",
                        str(DATA / "self_attention.mlir"), "--memory-limit", "2.5MiB",
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (x,) = _rng_inputs((2, 1024, 64))
    np.testing.assert_allclose(run_xla(out.read_text(), x)[0],
                               _reference("self_attention", [x])[0], rtol=1e-4, atol=1e-5)
