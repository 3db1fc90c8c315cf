"""Sharded kNN: memfit.jit at a per-device limit far below jax's own need.

kNN (N database points sharded by rows over 8 simulated CPU devices, M
replicated queries, D=32, k=10) written plainly: the M x N squared-distance
matrix, then ``lax.top_k``. jax's SPMD partition of it gathers the distance
rows onto every device for top_k, so each device needs about 2 x M x N x 4
bytes. memfit.jit gets a per-device limit ``--ratio`` (16) times below that.
``--form broadcast`` writes the distances as users do,
``jnp.sum((q[:, None] - db[None]) ** 2, -1)``, which memfit's exact
nearest-neighbour rewrite turns into a GEMM before the split.

Printed, one row per program:
  * jax's per-device need: XLA's argument + output + temp - alias of jax's
    partitioned executable (compile only, ynn fusions off: DESIGN.md);
  * the per-device limit and memfit's per-device bytes (same count);
  * memfit's run time and that of a hand-chunked kNN (``lax.map`` over query
    blocks, the largest block dividing M that fits the same per-device
    limit), medians of ``--rounds`` interleaved runs, and their ratio (the 8
    devices share this machine's cores: times, not a speed-up over one
    device);
  * memfit's passes + XLA compiles (calibration included);
  * agreement with an exact float64 kNN on ``--check`` queries (the
    neighbours' distances; indices differ only at ties);
  * the peak resident-set growth of a fresh process running memfit's kNN
    once (``memfit.measure.peak_rss_growth``; all 8 devices live in it)
    against 8 x the per-device limit.
XLA runs with ynn fusions off throughout (XLA's byte count is exact then).
Plain jax is not run (its need is listed): at N=1M, M=1000 it needs about
8 GB per device, 64 GB for the 8.

    .venv/bin/python bench/bench_sharded.py              # N=1M, M=1000
    .venv/bin/python bench/bench_sharded.py --quick      # N=100k, M=256
    .venv/bin/python bench/bench_sharded.py --form broadcast   # as users write it
"""
from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8"
                           " --xla_cpu_experimental_ynn_fusion_type=").strip()

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

import memfit  # noqa: E402
from memfit.measure import (cpu_model, interleaved_medians, peak_rss_growth,  # noqa: E402
                            xla_bytes)

import _results  # noqa: E402  (this script's folder is on sys.path)

HERE = Path(__file__).resolve().parent

MiB = 1 << 20
K = 10


def knn(q, db):
    d2 = (jnp.sum(q * q, 1)[:, None] - 2.0 * q @ db.T + jnp.sum(db * db, 1)[None, :])
    _, idx = jax.lax.top_k(-d2, K)
    return idx


def knn_broadcast(q, db):
    """The same kNN as users write it: the [M, N, D] differences (memfit's
    exact nearest-neighbour rewrite makes them a GEMM before the split)."""
    _, idx = jax.lax.top_k(-jnp.sum((q[:, None] - db[None]) ** 2, -1), K)
    return idx


FORMS = {"expanded": knn, "broadcast": knn_broadcast}


def hand_chunked(block: int):
    """kNN over query blocks with ``lax.map``, as one would write it by hand
    (``block`` divides M); jax partitions it on the same shardings."""
    def f(q, db):
        sq = jnp.sum(db * db, 1)
        def one(qb):
            d2 = jnp.sum(qb * qb, 1)[:, None] - 2.0 * qb @ db.T + sq[None, :]
            return jax.lax.top_k(-d2, K)[1]
        return jax.lax.map(one, q.reshape(-1, block, q.shape[1])).reshape(-1, K)
    return f


def fitting_hand(qd, dbd, limit: int):
    """The largest block dividing M whose per-device bytes fit `limit`
    (compiled, ynn off), with its compiled executable."""
    m = qd.shape[0]
    for block in sorted((b for b in range(1, m + 1) if m % b == 0), reverse=True):
        if 2 * block * dbd.shape[0] * 4 > 4 * limit:
            continue  # far over: not worth a compile
        c = jax.jit(hand_chunked(block)).lower(qd, dbd).compile()
        if xla_bytes(c) <= limit:
            return block, c
    return None, None


def exact_distances(q, db, idx):
    """float64 squared distances of the chosen neighbours, and the true k
    smallest, for each query."""
    q64, db64 = q.astype(np.float64), db.astype(np.float64)
    chosen = np.sum((q64[:, None, :] - db64[idx]) ** 2, -1)
    best = np.empty_like(chosen)
    sq = np.sum(db64 * db64, 1)
    for i in range(q64.shape[0]):
        d = sq - 2.0 * db64 @ q64[i] + q64[i] @ q64[i]
        best[i] = np.sort(np.partition(d, K)[:K])
    return np.sort(chosen, 1), best


def data(n: int, m: int):
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("d"))
    rng = np.random.default_rng(0)
    q = rng.standard_normal((m, 32)).astype(np.float32)
    db = rng.standard_normal((n, 32)).astype(np.float32)
    return q, db, jax.device_put(q, rep), jax.device_put(db, rows)


def rss_target(n: int, m: int, limit: int, form: str = "expanded"):
    """For memfit.measure.peak_rss_growth: memfit's kNN and its arguments."""
    _, _, qd, dbd = data(n, m)
    return memfit.jit(FORMS[form], memory_limit=limit), (qd, dbd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _results.add_write_flag(ap)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--ratio", type=float, default=16.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--check", type=int, default=50, help="queries checked exactly")
    ap.add_argument("--quick", action="store_true", help="N=100k, M=256")
    ap.add_argument("--form", choices=sorted(FORMS), default="expanded",
                    help="how the kNN is written (the hand-chunked one is expanded)")
    ap.add_argument("--no-rss", dest="rss", action="store_false",
                    help="skip the RSS subprocess")
    a = ap.parse_args()
    if a.quick:
        a.n, a.m = 100_000, 256
    q, db, qd, dbd = data(a.n, a.m)

    f = FORMS[a.form]
    need = xla_bytes(jax.jit(f).lower(qd, dbd).compile())
    limit = int(need / a.ratio)
    t = time.perf_counter()
    fitted = memfit.jit(f, memory_limit=limit)
    compiled = fitted._lowered_and_compiled((qd, dbd), {})[1]
    build = time.perf_counter() - t
    got = xla_bytes(compiled)
    block, hand = fitting_hand(qd, dbd, limit)
    contenders = {"memfit": lambda: fitted(qd, dbd)}
    if hand is not None:
        contenders["hand"] = lambda: hand(qd, dbd)
    med = interleaved_medians(contenders, repeats=a.rounds)
    idx = np.asarray(fitted(qd, dbd))
    agree = (float(np.mean(np.sort(idx, 1) == np.sort(np.asarray(hand(qd, dbd)), 1)))
             if hand is not None else float("nan"))
    chosen, best = exact_distances(q[:a.check], db, idx[:a.check])
    err = float(np.max(np.abs(chosen - best)) / best.max())
    assert len(idx.shape) == 2 and idx.shape == (a.m, K)

    print(f"CPU: {cpu_model()}; 8 simulated devices on {os.cpu_count()} cores; "
          f"jax {jax.__version__}")
    hdr = (f"{'program':<46} {'jax need/dev':>13} {'limit/dev':>10} {'memfit/dev':>11} "
           f"{'need/limit':>10} {'memfit s':>9} {'hand s':>7} {'memfit/hand':>11} "
           f"{'build s':>8} {'max rel err':>11}")
    print(hdr)
    print("-" * len(hdr))
    name = f"kNN {a.form} N={a.n:,} M={a.m:,} D=32 k={K}, db/8"
    print(f"{name:<46} {need / MiB:>9.1f} MiB {limit / MiB:>6.1f} MiB {got / MiB:>7.1f} MiB "
          f"{need / limit:>9.1f}x {med['memfit']:>9.2f} {med.get('hand', float('nan')):>7.2f} "
          f"{med['memfit'] / med.get('hand', float('nan')):>10.2f}x {build:>8.1f} {err:>11.1e}")
    print(f"hand: lax.map over query blocks of {block} (the largest divisor of M that fits "
          f"the same per-device limit), {xla_bytes(hand) / MiB:.0f} MiB per device; "
          f"indices equal to memfit's: {agree:.4f}"
          if hand is not None else "hand: no query block fits the limit")
    cal = fitted.last_calibration
    print(f"memfit's per-device bytes within the limit: {got <= limit}; global arguments "
          f"+ outputs {(q.nbytes + db.nbytes + idx.nbytes) / MiB:.2f} MiB; "
          f"calibration: {cal.summary()}")
    if a.rss:
        r = peak_rss_growth(f"{Path(__file__).stem}:rss_target", ynn=False, cwd=str(HERE),
                            n=a.n, m=a.m, limit=limit, form=a.form)
        print(f"peak RSS growth of one memfit run in a fresh process (8 devices): "
              f"{r['growth'] / MiB:.0f} MiB; 8 x limit = {8 * limit / MiB:.0f} MiB")


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
