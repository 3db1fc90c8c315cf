"""memfit.jit on sharded programs: 8 simulated CPU devices, per-device limits.

The cases run in one child process (sharded_runner.py: XLA_FLAGS with 8 host
devices must be set before jax starts; this session's conftest gives 2).
For each, memfit.jit gets a per-device memory limit a quarter of what jax's
own SPMD program needs per device, and the test checks that
  * memfit split the program (loops in the module) and kept the mesh;
  * XLA's per-device bytes (argument + output + temp - alias of the
    partitioned executable, ynn fusions off) are within the limit;
  * XLA's partitioner still partitioned memfit's module: the per-device
    argument bytes equal jax's (an unpartitioned program would hold whole
    arguments), and the outputs are sharded over all 8 devices like jax's;
  * the results equal plain, unsharded jax.jit's (kNN: the neighbours'
    exact distances agree; attention and an MLP training step: 1e-5
    relative to the largest output).
The kNN written with broadcasting (knn_broadcast, memfit's exact
nearest-neighbour rewrite before the split) gets a limit of one device's
arguments and outputs plus jax's temporaries / 16, below the global
arguments and outputs, on hard data (points far from the origin).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).with_name("sharded_runner.py")
CASES = ["knn", "knn_placed", "knn_broadcast", "attention", "mlp_step"]


@pytest.fixture(scope="module")
def results():
    proc = subprocess.run([sys.executable, str(RUNNER), "0.25"], capture_output=True,
                          text=True, timeout=600)
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("SHARDED-CASE "):
            case = json.loads(line.split(" ", 1)[1])
            out[case["name"]] = case
    assert out, f"sharded_runner.py printed no case (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    return out


@pytest.mark.parametrize("name", CASES)
def test_sharded_split_fits_each_device(results, name):
    r = results.get(name)
    assert r is not None, f"case {name} did not run"
    assert "error" not in r, r["error"]
    assert r["loops"] >= 1, "memfit made no loop"
    assert r["sdy_mesh"] and r["num_partitions_8"], "the mesh or the partition count was lost"
    assert r["jax_bytes"] > r["limit"], "jax already fits: the case tests nothing"
    assert r["memfit_bytes"] <= r["limit"], (
        f"{name}: XLA holds {r['memfit_bytes']} B per device, limit {r['limit']} B")
    assert r["memfit_arg_bytes"] == r["jax_arg_bytes"], "memfit's module was not partitioned"
    assert r["out_shardings_match"] and r["out_devices"] == [8]


# The sharded dimension's extent in each case: no loop chunks it (kNN: the
# 64,000 database rows; attention: the 8 heads, dimension 1; the MLP: the
# 8,192 batch rows).
SHARDED_EXTENT = {"knn": 64_000, "knn_placed": 64_000, "knn_broadcast": 64_000,
                  "attention": None, "mlp_step": 8192}


@pytest.mark.parametrize("name", CASES)
def test_sharded_split_chunks_unsharded_dimensions(results, name):
    r = results[name]
    assert "error" not in r, r["error"]
    assert r["splits"], "no memfit.split record on the loops"
    for dim, size in r["splits"]:
        if name == "attention":
            assert dim != 1, r["splits"]
        else:
            assert size != SHARDED_EXTENT[name], r["splits"]


@pytest.mark.parametrize("name", CASES)
def test_sharded_split_matches_unsharded_jax(results, name):
    r = results[name]
    assert "error" not in r, r["error"]
    assert r["max_rel_error"] <= 1e-5, r
    if name.startswith("knn"):
        assert r["index_agreement"] >= 0.999, r


def test_sharded_broadcast_knn_fits_below_its_global_arguments(results):
    # The rewrite that turns the broadcast into a GEMM must leave the split
    # counting one device's shard: the limit is below the arguments and
    # outputs of the whole program, and XLA's per-device bytes are within it.
    r = results["knn_broadcast"]
    assert "error" not in r, r["error"]
    assert r["limit"] < r["global_io_bytes"], "the limit does not test per-device accounting"
    assert r["memfit_bytes"] <= r["limit"]


def test_sharded_broadcast_knn_is_exact(results):
    # lax.top_k's own indices (the rewrite's contract), and the float64
    # nearest neighbours wherever the k-th is not nearly tied.
    r = results["knn_broadcast"]
    assert "error" not in r, r["error"]
    assert r["index_agreement"] == 1.0, r
    assert r["float64_clear_rows"] > 64, r
    assert r["float64_set_mismatches"] == 0, r
