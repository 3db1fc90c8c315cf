"""``memfit demo``: a kNN program, its memory profile, and memfit's split."""
from __future__ import annotations

import os
import time

# XLA's memory figures count everything only without ynn fusions (DESIGN.md).
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")


def knn(x, q, k=10):
    import jax.numpy as jnp
    from jax import lax
    d = jnp.sum((q[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    return lax.top_k(-d, k)[1]


def xla_bytes(compiled) -> int:
    m = compiled.memory_analysis()
    return (m.argument_size_in_bytes + m.output_size_in_bytes
            + m.temp_size_in_bytes - m.alias_size_in_bytes)


def run_demo() -> int:
    import jax
    import numpy as np

    import memfit
    from .explain.report import format_bytes

    n, m, d = 20000, 1000, 16
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d), dtype=np.float32)
    q = rng.standard_normal((m, d), dtype=np.float32)
    print(f"kNN: {m} queries against {n} points in {d} dimensions, k=10\n")

    report = memfit.profile(knn)(x, q)
    print(report.table(), "\n")

    plain = jax.jit(knn).lower(x, q).compile()
    print(f"jax.jit, XLA's argument+output+temp: {format_bytes(xla_bytes(plain))}")
    t = time.perf_counter()
    expected = np.asarray(plain(x, q))
    print(f"  ran in {time.perf_counter() - t:.3f} s")

    limit = "16MiB"
    try:
        fitted = memfit.jit(knn, memory_limit=limit)
        compiled = fitted.lower(x, q).compile()
    except memfit.MemfitError as e:
        print(f"\nmemfit could not split under {limit}: {e}")
        return 0
    print(f"memfit.jit(memory_limit={limit!r}), XLA's argument+output+temp: "
          f"{format_bytes(xla_bytes(compiled))}")
    t = time.perf_counter()
    got = np.asarray(compiled(x, q))
    print(f"  ran in {time.perf_counter() - t:.3f} s; "
          f"same neighbours as jax.jit: {bool((got == expected).all())}")
    return 0
