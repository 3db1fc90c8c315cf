"""The op builders make real StableHLO: the ops memfit-test-op-views builds
(one of each kind, lib/IR/OpViews.cpp) parse in jaxlib, which registers
StableHLO and CHLO, and pass its verifier."""
from __future__ import annotations

import re

import pytest

import memfit
import testpasses

from jax._src.interpreters import mlir as jmlir
from jax._src.lib.mlir import ir

BUILD = "memfit-test-op-views{mode=build output=/dev/null}"


@pytest.fixture(scope="module")
def built() -> str:
    testpasses.load()
    return memfit.transform('"builtin.module"() ({\n^bb0:\n}) : () -> ()', BUILD)


def parse_and_verify(text: str):
    with jmlir.make_ir_context() as ctx:
        assert not ctx.allow_unregistered_dialects  # every op must be known
        module = ir.Module.parse(text)
        return module.operation.verify(), str(module)


BUILT_OPS = [
    "stablehlo.constant", "stablehlo.iota", "stablehlo.broadcast_in_dim",
    "stablehlo.reshape", "stablehlo.transpose", "stablehlo.convert", "stablehlo.add",
    "stablehlo.exponential", "stablehlo.compare", "stablehlo.select",
    "stablehlo.dot_general", "stablehlo.reduce", "stablehlo.slice",
    "stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice",
    "stablehlo.concatenate", "stablehlo.pad", "chlo.top_k", "stablehlo.sort",
    "stablehlo.custom_call", "stablehlo.while", "stablehlo.return",
]


def test_built_ops_pass_jaxlibs_verifier(built):
    for name in BUILT_OPS:
        assert f'"{name}"' in built, f"builders made no {name}"
    ok, pretty = parse_and_verify(built)
    assert ok
    # jaxlib read them as registered ops (pretty-printed with their syntax).
    assert "stablehlo.iota dim = 0" in pretty
    assert "chlo.top_k(%arg0, k = 3)" in pretty
    assert re.search(r"stablehlo\.dot_general %arg0, %arg1, contracting_dims = \[1\] x \[0\]", pretty)
    assert "stablehlo.while(" in pretty


@pytest.mark.parametrize("old,new", [
    # Each edit breaks one built op; the verifier must notice, which shows
    # that it checks these ops (a test that could not fail proves nothing).
    ("slice_sizes = array<i64: 2, 8>", "slice_sizes = array<i64: 5, 8>"),
    ("permutation = array<i64: 1, 0>", "permutation = array<i64: 0, 0>"),
    ("k = 3 : i64", "k = 9 : i64"),
    ("broadcast_dimensions = array<i64: 1, 2>", "broadcast_dimensions = array<i64: 2, 1>"),
])
def test_verifier_rejects_broken_variants(built, old, new):
    assert old in built
    broken = built.replace(old, new, 1)
    try:
        ok, _ = parse_and_verify(broken)
    except Exception:  # jaxlib verifies while parsing and raises
        ok = False
    assert not ok


def test_built_ops_read_back_through_views(built, tmp_path):
    # Run the read mode over the built module: the views read what the
    # builders wrote (the lit test ir/op-builders.mlir checks each line).
    out = tmp_path / "views.txt"
    memfit.transform(built, f"memfit-test-op-views{{output={out}}}")
    lines = out.read_text()
    assert "stablehlo.dot_general: lhs_batch=[] rhs_batch=[] lhs_contract=[1] rhs_contract=[0] roundtrip=ok" in lines
    assert "chlo.top_k: k=3" in lines
    assert "stablehlo.reduce: inputs=1 dims=[1] reducer=add" in lines
