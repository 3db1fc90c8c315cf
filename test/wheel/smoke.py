"""Smoke test of the built wheel, run by `make wheel-smoke` with the python of
a fresh venv that has only the wheel and its declared dependencies (no
extras), from a temporary directory: nothing of the source tree is importable.

    python smoke.py path/to/memfit-*.whl
"""
import ctypes
import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import memfit  # noqa: E402
from memfit import _core, _optional  # noqa: E402
from memfit.cli import plugin_path  # noqa: E402


def check(cond, what):
    if not cond:
        sys.exit(f"wheel smoke test FAILED: {what}")
    print(f"ok: {what}")


def wheel_contents(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for want in ("memfit/msa/learned/agent.npz", "memfit/msa/learned/agent_big.npz",
                 "memfit/lib/libmemfit.so",
                 "memfit/lib/libMemfitPlugin.so", "memfit/_optional.py",
                 "memfit/explain/split.py", "memfit/pack/packer.py", "memfit/testing/oracle.py",
                 "memfit/msa/core/instance.py", "memfit/msa/solvers/heuristic.py",
                 "memfit/msa/io/export.py", "memfit/msa/learned/agent.py"):
        check(want in names, f"the wheel holds {want}")
    check(any(n.startswith("memfit/_core.") and n.endswith(".so") for n in names),
          "the wheel holds the memfit._core extension")
    check(not any(n.startswith(("test/", "bench/")) for n in names),
          "the wheel holds no tests or benches")
    # The CMake package for embedders is the build tree's `development`
    # component; the wheel installs only `python` (pyproject.toml).
    check(not any(n.endswith((".h", ".inc", ".cmake", ".a")) or "libmemfit-c" in n
                  for n in names),
          "the wheel holds no headers, CMake package, static or C API libraries")


def installed_from_the_wheel() -> None:
    where = Path(memfit.__file__).resolve()
    check("site-packages" in where.parts, f"memfit is imported from a venv ({where})")
    check(Path(sys.prefix) in where.parents, "memfit is this venv's, not the editable one")
    for name in ("agent.npz", "agent_big.npz"):
        agent = where.parent / "msa/learned" / name
        check(agent.is_file() and np.load(agent).files, f"the learned agent's {name} loads")


def versions_agree() -> None:
    lib = ctypes.CDLL(str(plugin_path()))

    class Info(ctypes.Structure):
        _fields_ = [("api", ctypes.c_uint32), ("name", ctypes.c_char_p),
                    ("version", ctypes.c_char_p), ("register", ctypes.c_void_p)]
    lib.mlirGetPassPluginInfo.restype = Info
    versions = {memfit.__version__, _core.__version__, importlib.metadata.version("memfit"),
                lib.mlirGetPassPluginInfo().version.decode()}
    check(len(versions) == 1, f"package, library, metadata and plugin agree: {versions}")
    out = subprocess.run([sys.executable, "-m", "memfit.cli", "--version"],
                         capture_output=True, text=True).stdout.strip()
    check(out == f"memfit {memfit.__version__}", f"memfit --version says {out!r}")


def splits_and_reports() -> None:
    def knn(x, y):
        # distances written as a GEMM, which memfit-split chunks (the
        # broadcast form is the exact kNN rewrite's own two-level loop)
        d = jnp.sum(x * x, -1)[:, None] - 2 * x @ y.T + jnp.sum(y * y, -1)[None, :]
        return jax.lax.top_k(-d, 5)[1]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 8), dtype=np.float32)
    y = rng.standard_normal((4096, 8), dtype=np.float32)
    f = memfit.jit(knn, memory_limit="1MiB")
    check(np.array_equal(f(x, y), jax.jit(knn)(x, y)), "memfit.jit's kNN equals jax's")
    r = f.report()
    check(r.fits and r.loops and r.xla_bytes_after <= r.memory_limit < r.xla_bytes_before,
          f"f.report(): XLA {r.xla_bytes_before} -> {r.xla_bytes_after} bytes, "
          f"{len(r.loops)} loop(s)")
    try:
        r.plot("split.png")
        check(False, "plot without matplotlib raises")
    except _optional.MissingDependency as e:
        check("memfit[plot]" in str(e), "plot without matplotlib names memfit[plot]")
    from memfit._jax_handover import module_text
    Path("knn.mlir").write_text(module_text(jax.jit(knn).lower(x, y)))
    p = subprocess.run([str(Path(sys.prefix) / "bin/memfit"), "explain", "knn.mlir",
                        "--memory-limit", "1MiB", "-o", "split.png"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "pip install 'memfit[plot]'" in p.stderr
          and "Traceback" not in p.stderr and "chunk x count" in p.stdout,
          "memfit explain -o without matplotlib: the report, then exit 2 naming memfit[plot]")


def packages_run() -> None:
    """The packer and the MSA heuristic, from their packages, with no extras."""
    from memfit.pack import Buffer, pack
    r = pack([Buffer(0, 0, 2, 8), Buffer(1, 1, 3, 8)], capacity=16)
    check(r.packed and sorted(r.offsets) == [0, 8], f"memfit.pack.pack packs: {r.offsets}")
    from memfit.msa.core.validator import validate
    from memfit.msa.io.tiny import tiny_instance
    from memfit.msa.solvers.heuristic import assign
    inst = tiny_instance()
    v = validate(inst, assign(inst))
    check(v.valid, f"memfit.msa.solvers.heuristic.assign: valid, {v.estimated_time} s")


def tools_run() -> None:
    opt = Path(sys.prefix) / "bin/memfit-opt"
    p = subprocess.run([str(opt), "--help"], capture_output=True, text=True)
    check(p.returncode == 0 and "memfit-split" in p.stdout, "memfit-opt runs and lists memfit-split")
    for so in [Path(_core.__file__), plugin_path()]:
        ldd = subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout
        check("not found" not in ldd and "libMLIR.so.22" in ldd,
              f"{so.name} links Debian's libMLIR.so.22, every library found")


if __name__ == "__main__":
    wheel_contents(Path(sys.argv[1]))
    installed_from_the_wheel()
    versions_agree()
    splits_and_reports()
    packages_run()
    tools_run()
    print("wheel smoke test passed")
