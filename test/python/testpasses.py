"""memfit's test-only passes (test/lib: memfit-test-op-views) for tests that
run them through memfit.transform.

They are not in libmemfit, the plugin or memfit._core (as MLIR keeps its test
passes in mlir/test/lib); the build makes libmemfit-test-passes.so beside
libmemfit in its build tree and never installs it. Loading it registers the
passes with the process's MLIR pass registry, where memfit.transform's
pipelines find them."""
import ctypes
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = Path(os.environ.get("MEMFIT_TEST_PASSES",
                              ROOT / "build" / "cmake" / "libmemfit-test-passes.so"))

_loaded = False


def load() -> None:
    """Registers the test passes in this process (once)."""
    global _loaded
    if _loaded:
        return
    # memfit._core first: the library then binds to the libmemfit (and
    # libMLIR) already loaded, so its passes share their registry.
    import memfit._core  # noqa: F401
    if not LIBRARY.exists():
        raise FileNotFoundError(
            f"{LIBRARY} is missing: build memfit (make build), or point "
            "MEMFIT_TEST_PASSES at libmemfit-test-passes.so")
    ctypes.CDLL(str(LIBRARY)).memfitRegisterTestPasses()
    _loaded = True
