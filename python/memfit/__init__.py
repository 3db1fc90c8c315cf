"""memfit: make array programs fit a memory budget.

C++ MLIR passes over StableHLO (memfit._core), and a Python API that sits in
jax.jit's path: lower, transform, compile.

    import memfit
    f = memfit.jit(f, memory_limit="256MiB")
    memfit.profile(f)(x)                   # where the memory goes
    f(x); print(f.report())                # what the split did (.plot("split.png"))
    text = memfit.transform(text, "memfit-inline,memfit-profile")
"""
from .errors import MemfitError
from .units import parse_memory_size
from .transform import transform, to_generic, pipeline_for
from .api import jit, profile, MemfitJitted, ProfileReport
from .explain.split import SplitReport

__all__ = [
    "MemfitError",
    "parse_memory_size",
    "transform",
    "to_generic",
    "pipeline_for",
    "jit",
    "profile",
    "MemfitJitted",
    "ProfileReport",
    "SplitReport",
]
# pyproject.toml holds the version; the C++ library is compiled with it
# (CMakeLists.txt), and the package reports the library's, so a stale build
# shows up as a mismatch (test_packaging.py).
from ._core import __version__  # noqa: E402
