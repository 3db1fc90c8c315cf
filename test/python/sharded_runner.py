"""Sharded programs on 8 simulated CPU devices, run by test_sharded.py.

XLA_FLAGS (8 host devices, ynn fusions off so that memory_analysis counts
every buffer) must be set before jax starts, and the test session's conftest
gives 2 devices: so the cases run here, in a child process, and print one
JSON line each (``SHARDED-CASE {...}``) that the tests check.

Each case compiles a program with jax.jit and with memfit.jit at a per-device
limit well below jax's per-device need, on the same shardings, and records
XLA's per-device bytes (argument + output + temp - alias of the SPMD
executable's memory_analysis), the per-device argument bytes (equal to jax's
only when XLA's partitioner really partitioned memfit's module), whether the
split made loops, the output shardings, and how far the results are from
plain, unsharded jax.jit on one device.
"""
from __future__ import annotations

import json
import os
import re
import sys

os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count=8 "
                           "--xla_cpu_experimental_ynn_fusion_type=")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

import memfit  # noqa: E402
from memfit.measure import xla_bytes  # noqa: E402

MiB = 1 << 20


def mesh8():
    # Auto axes: classic propagation (Explicit axes reject top_k over a
    # sharded axis, DESIGN.md).
    return jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))


def knn(q, db):
    d2 = (jnp.sum(q * q, 1)[:, None] - 2.0 * q @ db.T + jnp.sum(db * db, 1)[None, :])
    _, idx = jax.lax.top_k(-d2, 8)
    return idx


def attention(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1]).astype(np.float32)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)


def mlp_step(params, x, y):
    def loss(p):
        h = jax.nn.relu(x @ p["w1"])
        logits = h @ p["w2"]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))
    value, grads = jax.value_and_grad(loss)(params)
    return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def cases():
    mesh = mesh8()
    rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("d"))
    heads = NamedSharding(mesh, P(None, "d"))
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731

    q, db = f32(256, 32), f32(64_000, 32)
    yield ("knn", knn, (q, db), dict(in_shardings=(rep, rows)))
    # The same with jax.Arrays placed on the mesh and no in_shardings.
    yield ("knn_placed", knn, (jax.device_put(q, rep), jax.device_put(db, rows)), {})

    qa, ka, va = f32(2, 8, 1024, 64), f32(2, 8, 1024, 64), f32(2, 8, 1024, 64)
    yield ("attention", attention, (qa, ka, va), dict(in_shardings=(heads, heads, heads)))

    params = {"w1": f32(64, 2048) * 0.05, "w2": f32(2048, 16) * 0.05}
    x = f32(8192, 64)
    y = np.eye(16, dtype=np.float32)[rng.integers(0, 16, 8192)]
    yield ("mlp_step", mlp_step, (params, x, y),
           dict(in_shardings=({"w1": rep, "w2": rep}, rows, rows)))


def max_rel_error(got, want) -> float:
    g = [np.asarray(a, np.float64) for a in jax.tree_util.tree_leaves(got)]
    w = [np.asarray(a, np.float64) for a in jax.tree_util.tree_leaves(want)]
    return max(float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
               for a, b in zip(g, w))


def run_case(name, f, args, kw, fraction):
    plain = jax.jit(f, **kw)
    jax_compiled = plain.lower(*args).compile()
    jax_bytes = xla_bytes(jax_compiled)
    limit = int(jax_bytes * fraction)
    fitted = memfit.jit(f, memory_limit=limit, **kw)
    lowered = fitted.lower(*args)
    compiled = fitted._lowered_and_compiled(args, {})[1]
    got = fitted(*args)
    # Unsharded: every argument as a NumPy array, so on one device.
    want = jax.jit(f)(*jax.tree_util.tree_map(np.asarray, args))
    text = lowered.as_text()
    out = {
        "name": name, "limit": limit, "jax_bytes": jax_bytes,
        "memfit_bytes": xla_bytes(compiled),
        "jax_arg_bytes": int(jax_compiled.memory_analysis().argument_size_in_bytes),
        "memfit_arg_bytes": int(compiled.memory_analysis().argument_size_in_bytes),
        "loops": text.count("stablehlo.while"),
        # (dimension, extent) that each of memfit's loops chunks
        "splits": [[int(d), int(n)] for d, n in re.findall(
            r"memfit.split = \{[^}]*?dim = (\d+) : i64[^}]*?size = (\d+) : i64", text)],
        "sdy_mesh": "sdy.mesh @mesh" in text,
        "num_partitions_8": "mhlo.num_partitions = 8" in text,
        "out_shardings_match": all(
            a.sharding.is_equivalent_to(b.sharding, a.ndim)
            for a, b in zip(jax.tree_util.tree_leaves(got),
                            jax.tree_util.tree_leaves(plain(*args)))),
        "out_devices": sorted({len(a.sharding.device_set)
                               for a in jax.tree_util.tree_leaves(got)}),
    }
    if name.startswith("knn"):
        # Indices: compare the neighbours' exact (float64) distances, which
        # differ from the reference's only where two are (nearly) tied.
        qq, dd = (np.asarray(a, np.float64) for a in args)
        def dist(idx):
            idx = np.asarray(idx)
            return np.sum((qq[:, None, :] - dd[idx]) ** 2, -1)
        out["index_agreement"] = float(np.mean(np.asarray(got) == np.asarray(want)))
        out["max_rel_error"] = float(np.max(np.abs(dist(got) - dist(want)) / dist(want).max()))
    else:
        out["max_rel_error"] = max_rel_error(got, want)
    return out


def main(fraction: float):
    if len(jax.devices()) != 8:
        raise SystemExit(f"expected 8 CPU devices, got {len(jax.devices())}")
    for name, f, args, kw in cases():
        try:
            result = run_case(name, f, args, kw, fraction)
        except Exception as e:  # reported, and the test names the case
            result = {"name": name, "error": f"{type(e).__name__}: {e}"}
        print("SHARDED-CASE", json.dumps(result), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.25)
