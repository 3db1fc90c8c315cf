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
from memfit.testing import oracle  # noqa: E402

MiB = 1 << 20


def mesh8():
    # Auto axes: classic propagation (Explicit axes reject top_k over a
    # sharded axis, DESIGN.md).
    return jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))


def knn(q, db):
    d2 = (jnp.sum(q * q, 1)[:, None] - 2.0 * q @ db.T + jnp.sum(db * db, 1)[None, :])
    _, idx = jax.lax.top_k(-d2, 8)
    return idx


def knn_broadcast(q, db):
    # As users write it: the [M, N, D] differences, reduced, then top_k
    # (memfit's exact nearest-neighbour rewrite makes it a GEMM).
    d2 = jnp.sum((q[:, None] - db[None]) ** 2, -1)
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

    # Hard data (map-like coordinates far from the origin, memfit.testing.
    # oracle) and a limit that leaves one device's arguments and outputs
    # whole and its temporaries 16x below jax's: below the global arguments
    # and outputs (what each device would hold unsharded).
    qo, dbo = oracle.points("offset", rng, 128, 32), oracle.points("offset", rng, 64_000, 32)
    yield ("knn_broadcast", knn_broadcast, (qo, dbo), dict(in_shardings=(rep, rows)),
           io_and_temps_over(16))

    qa, ka, va = f32(2, 8, 1024, 64), f32(2, 8, 1024, 64), f32(2, 8, 1024, 64)
    yield ("attention", attention, (qa, ka, va), dict(in_shardings=(heads, heads, heads)))

    params = {"w1": f32(64, 2048) * 0.05, "w2": f32(2048, 16) * 0.05}
    x = f32(8192, 64)
    y = np.eye(16, dtype=np.float32)[rng.integers(0, 16, 8192)]
    yield ("mlp_step", mlp_step, (params, x, y),
           dict(in_shardings=({"w1": rep, "w2": rep}, rows, rows)))


def io_bytes(compiled) -> int:
    m = compiled.memory_analysis()
    return int(m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes)


def io_and_temps_over(ratio: float):
    """A per-device limit: jax's arguments and outputs, and its temporaries
    divided by `ratio`."""
    def limit(compiled) -> int:
        io = io_bytes(compiled)
        return int(io + (xla_bytes(compiled) - io) / ratio)
    return limit


def global_io_bytes(args, out) -> int:
    """Arguments and outputs as one device would hold them unsharded."""
    leaves = jax.tree_util.tree_leaves((args, out))
    return int(sum(np.asarray(a).nbytes for a in leaves))


def nearest_float64(q, db, k, block=8):
    """The k nearest rows of db for each row of q, in float64 (by direct
    differences, a block of queries at a time), their distances, and the
    (k+1)-th distance (to tell rows with a near-tie at the k-th)."""
    q64, db64 = np.asarray(q, np.float64), np.asarray(db, np.float64)
    idx, kth, nxt = [], [], []
    for i in range(0, len(q64), block):
        d = ((q64[i:i + block, None] - db64[None]) ** 2).sum(-1)
        part = np.argpartition(d, k, 1)[:, :k + 1]
        dp = np.take_along_axis(d, part, 1)
        order = np.argsort(dp, 1, kind="stable")
        idx.append(np.take_along_axis(part, order, 1)[:, :k])
        s = np.take_along_axis(dp, order, 1)
        kth.append(s[:, k - 1])
        nxt.append(s[:, k])
    return np.concatenate(idx), np.concatenate(kth), np.concatenate(nxt)


def max_rel_error(got, want) -> float:
    g = [np.asarray(a, np.float64) for a in jax.tree_util.tree_leaves(got)]
    w = [np.asarray(a, np.float64) for a in jax.tree_util.tree_leaves(want)]
    return max(float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
               for a, b in zip(g, w))


def run_case(name, f, args, kw, fraction, limit_of=None):
    plain = jax.jit(f, **kw)
    jax_compiled = plain.lower(*args).compile()
    jax_bytes = xla_bytes(jax_compiled)
    limit = limit_of(jax_compiled) if limit_of else int(jax_bytes * fraction)
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
        out["global_io_bytes"] = global_io_bytes(args, got)
        # Away from a near-tie at the k-th, the k nearest are exact
        # arithmetic's: index sets per row against float64.
        ref, kth, nxt = nearest_float64(qq, dd, np.asarray(got).shape[1])
        clear = nxt - kth > 1e-5 * kth
        out["float64_clear_rows"] = int(clear.sum())
        out["float64_set_mismatches"] = int(sum(
            set(a) != set(b) for a, b in zip(np.asarray(got)[clear], ref[clear])))
    else:
        out["max_rel_error"] = max_rel_error(got, want)
    return out


def main(fraction: float, only: str = ""):
    if len(jax.devices()) != 8:
        raise SystemExit(f"expected 8 CPU devices, got {len(jax.devices())}")
    for name, f, args, kw, *limit_of in cases():
        if only and name not in only.split(","):
            continue
        try:
            result = run_case(name, f, args, kw, fraction, *limit_of)
        except Exception as e:  # reported, and the test names the case
            result = {"name": name, "error": f"{type(e).__name__}: {e}"}
        print("SHARDED-CASE", json.dumps(result), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.25, *sys.argv[2:3])
