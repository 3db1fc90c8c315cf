"""isolate=True: memfit's passes in a child process, so that an MLIR fatal
error ends the child and the caller gets a MemfitError (issue 16)."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import memfit
from memfit.transform import SELF_TEST_ABORT
from memfit import _jax_handover as handover
from memfit.testing import examples


def dft_text(n=64, m=2000):
    x, y = np.ones(n, np.float32), np.ones(m, np.float32)
    return handover.module_text(jax.jit(examples.nudft).lower(x, y))


PIPELINE = memfit.pipeline_for(memory_limit=64 * 1024)


def test_isolated_transform_gives_the_same_module():
    text = dft_text()
    out = memfit.transform(text, PIPELINE, isolate=True)
    assert "stablehlo.while" in out
    assert out == memfit.transform(text, PIPELINE)


def test_isolated_refusal_keeps_its_location():
    with pytest.raises(memfit.MemfitError) as e:
        memfit.transform(dft_text(), memfit.pipeline_for(memory_limit=256), isolate=True)
    assert "arguments and outputs alone" in str(e.value)
    assert any(d["location"] and "unknown" not in d["location"] for d in e.value.diagnostics)


def test_a_dying_pipeline_raises_instead_of_ending_the_caller(monkeypatch):
    monkeypatch.setenv(SELF_TEST_ABORT, "1")
    with pytest.raises(memfit.MemfitError) as e:
        memfit.transform(dft_text(), PIPELINE, isolate=True)
    assert "died in its isolated process (SIGABRT)" in str(e.value)


def test_jit_with_isolate_matches_jax():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(64, np.float32), rng.standard_normal(2000, np.float32)
    got = memfit.jit(examples.nudft, memory_limit=64 * 1024, isolate=True)(x, y)
    want = jax.jit(examples.nudft)(x, y)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5 * float(np.max(np.abs(want))))
