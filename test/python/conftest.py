"""pytest setup shared by memfit's Python tests.

XLA_FLAGS is read once, when jax's backend starts, so it is set here, before
any test module imports jax:
  --xla_cpu_experimental_ynn_fusion_type=   no ynn fusions: XLA:CPU's
      memory_analysis() then counts every buffer (DESIGN.md)
  --xla_force_host_platform_device_count=2  two CPU devices for mesh tests
Flags already in the environment are kept; these are added when missing.
"""
import os

_MEMFIT_XLA_FLAGS = (
    "--xla_cpu_experimental_ynn_fusion_type=",
    "--xla_force_host_platform_device_count=2",
)


def _with_memfit_flags(current: str) -> str:
    flags = current.split()
    names = {f.split("=", 1)[0] for f in flags}
    flags += [f for f in _MEMFIT_XLA_FLAGS if f.split("=", 1)[0] not in names]
    return " ".join(flags)


os.environ["XLA_FLAGS"] = _with_memfit_flags(os.environ.get("XLA_FLAGS", ""))

# memfit.jit's persistent calibration cache (memfit.compile_cache) would let
# one run's entries decide what a later run's tests see (how many compiles,
# which margins were tried): off unless a test turns it on in a directory of
# its own (test_compile_cache.py). Subprocesses inherit it.
os.environ.setdefault("MEMFIT_CACHE", "0")
