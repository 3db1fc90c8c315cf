"""memfit embedded in another program through its CMake package.

Installs the development component of the existing build tree
(build/cmake, from `make build`) into a temporary prefix, builds
examples/embed (a C++ and a C consumer that find memfit with
find_package) against it, and runs both on examples/embed/distances.mlir:
what they print must be what memfit's own Python path prints for the same
limit, and XLA must run it to the same numbers as the program before.
Skipped only when cmake is not installed."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from memfit import _core
from memfit.transform import pipeline_for, transform

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "embed"
PROGRAM = EXAMPLE / "distances.mlir"
LIMIT = 900_000  # bytes; the program's distances alone take 800000
CMAKE = shutil.which("cmake")
MLIR_DIR = "/usr/lib/llvm-22/lib/cmake/mlir"

pytestmark = pytest.mark.skipif(CMAKE is None, reason="cmake is not installed")


def _run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


def _build_tree(tmp: Path) -> Path:
    """The editable install's build tree, brought up to date; a fresh one
    when there is none (slow: the whole library)."""
    tree = ROOT / "build" / "cmake"
    if not (tree / "CMakeCache.txt").exists():
        tree = tmp / "memfit-build"
        _run([CMAKE, "-S", ROOT, "-B", tree, f"-DMLIR_DIR={MLIR_DIR}",
              "-DCMAKE_BUILD_TYPE=Release"])
    _run([CMAKE, "--build", tree, "--target", "MemfitLib", "MemfitCAPI"], timeout=1800)
    return tree


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("embed")
    prefix = tmp / "prefix"
    _run([CMAKE, "--install", _build_tree(tmp), "--component", "development",
          "--prefix", prefix])
    return prefix


@pytest.fixture(scope="module")
def examples(prefix):
    build = prefix.parent / "example-build"
    _run([CMAKE, "-S", EXAMPLE, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
          "-DCMAKE_BUILD_TYPE=Release"])
    _run([CMAKE, "--build", build, "-j2"], timeout=600)
    return {"cpp": build / "embed-cpp", "c": build / "embed-c"}


def _libdir(prefix: Path) -> Path:
    (config,) = prefix.glob("lib*/cmake/memfit/memfitConfig.cmake")
    return config.parents[2]


def test_package_holds_libraries_headers_and_config_only(prefix):
    lib = _libdir(prefix)
    for path in ["include/memfit/API/Embedding.h", "include/memfit/API/Pipeline.h",
                 "include/memfit/Transforms/Passes.h",
                 "include/memfit/Transforms/Passes.h.inc", "include/memfit-c/Memfit.h"]:
        assert (prefix / path).is_file(), path
    for name in ["libmemfit.so", "libmemfit-c.so", "cmake/memfit/memfitTargets.cmake",
                 "cmake/memfit/memfitConfigVersion.cmake"]:
        assert (lib / name).exists(), name
    # What the wheel ships (the Python module, memfit-opt, the plugin) and
    # headers without a library to go with them stay out.
    names = {p.name for p in prefix.rglob("*")}
    assert not [n for n in names if n.startswith("_core") or n in
                {"memfit-opt", "libMemfitPlugin.so", "Packer.h", "Passes.td"}]


def _python_output(limit: int) -> str:
    return transform(PROGRAM.read_text(), pipeline_for(memory_limit=limit),
                     debug_info=False, record_pipeline=False)


def _passes(printed: str) -> str:
    # The pass list inside the anchor: memfit's Python path anchors its pass
    # manager on builtin.module, the examples use MLIR's default ("any").
    m = re.fullmatch(r"(?:builtin\.module|any)\((.*)\)", printed.strip())
    assert m, printed
    return m.group(1)


def _recorded_pipeline(limit: int) -> str:
    # What memfit's Python path ran, as MLIR's pass manager prints it.
    out = transform(PROGRAM.read_text(), pipeline_for(memory_limit=limit), debug_info=False)
    return _passes(re.search(r'memfit\.pipeline = "([^"]*)"', out).group(1))


@pytest.mark.parametrize("lang", ["cpp", "c"])
def test_example_runs_memfit_jits_pipeline(examples, lang):
    r = _run([examples[lang], PROGRAM, LIMIT], timeout=300)
    assert '"stablehlo.while"' in r.stdout and "func.call" not in r.stdout
    # The same passes with the same options as memfit.jit, so the same program.
    ran = _passes(re.search(r"pipeline: (.*)", r.stderr).group(1))
    assert ran == _recorded_pipeline(LIMIT)
    # The loop's note records the split op's source line: the file's name
    # where the example read a file, "-" where memfit read text.
    assert r.stdout.replace(str(PROGRAM), "-").strip() == _python_output(LIMIT).strip()


def test_example_output_computes_what_the_program_did(examples):
    import jax
    from jax._src.lib import xla_client as xc
    from jax.extend.backend import get_backend

    split = _run([examples["c"], PROGRAM, LIMIT], timeout=300).stdout
    rng = np.random.default_rng(0)
    q = rng.standard_normal(2).astype(np.float32)
    x = rng.standard_normal(100_000).astype(np.float32)
    want = np.max((q[:, None].astype(np.float64) - x[None, :]) ** 2, axis=1)

    def run(text):
        devices = xc.DeviceList(tuple(jax.devices()[:1]))
        exe = get_backend().compile_and_load(text, devices, xc.CompileOptions())
        args = [jax.device_put(a, jax.devices()[0]) for a in (q, x)]
        return np.asarray(exe.execute(args)[0])

    before, after = run(PROGRAM.read_text()), run(split)
    np.testing.assert_allclose(after, want, rtol=1e-6)
    np.testing.assert_array_equal(after, before)


@pytest.mark.parametrize("lang", ["cpp", "c"])
def test_example_reports_a_limit_memfit_cannot_reach(examples, lang):
    r = subprocess.run([str(examples[lang]), str(PROGRAM), "1000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stdout == ""
    assert "memfit-split: cannot fit @main into 1000 B" in r.stderr
    assert "the smallest limit memfit can reach is" in r.stderr


@pytest.mark.parametrize("lang", ["cpp", "c"])
def test_example_rejects_a_limit_that_is_not_positive(examples, lang):
    r = subprocess.run([str(examples[lang]), str(PROGRAM), "0"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "error: memory limit must be a positive number of bytes, not 0" in r.stderr


def test_pipeline_needs_a_module_anchored_pass_manager(examples):
    r = subprocess.run([str(examples["cpp"]), str(PROGRAM), str(LIMIT), "--on-functions"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert ("needs a pass manager anchored on builtin.module (or op-agnostic), "
            "not 'func.func'") in r.stderr


@pytest.mark.parametrize("lang", ["cpp", "c"])
def test_registered_passes_parse_as_text(examples, lang):
    # registerPasses / mlirMemfitRegisterPasses make memfit's passes known
    # to MLIR's textual pipelines.
    r = _run([examples[lang], PROGRAM, "--pipeline",
              "memfit-inline,memfit-split{memory-limit=900KB}"], timeout=300)
    assert '"stablehlo.while"' in r.stdout
    bad = subprocess.run([str(examples[lang]), str(PROGRAM), "--pipeline", "memfit-nope"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "memfit-nope" in bad.stderr


def test_version_matches_the_python_package(examples):
    r = _run([examples["cpp"], PROGRAM, LIMIT], timeout=300)
    assert f"memfit {_core.__version__} pipeline:" in r.stderr
    r = _run([examples["c"], PROGRAM, LIMIT], timeout=300)
    assert f"memfit {_core.__version__} pipeline:" in r.stderr
