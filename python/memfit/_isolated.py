"""memfit's pass pipeline in a child process, for ``transform(...,
isolate=True)`` and ``memfit.jit(..., isolate=True)``.

memfit's passes refuse what they cannot handle with a MemfitError, and a
fuzzer (memfit/testing/fuzz.py) checks that they do; but an MLIR fatal error (an
abort or a segmentation fault) cannot be caught inside the process it
happens in. With isolation the pipeline runs in a fresh Python process that
imports only memfit's extension: if it dies, the caller gets a MemfitError
naming the signal and keeps running. The price is a process start per call
(about 0.1 s plus the module's text through a pipe).
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys

from .errors import MemfitError

# Test hook: the child aborts before running the pipeline.
SELF_TEST_ABORT = "MEMFIT_ISOLATED_SELF_TEST_ABORT"


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


# The child loads memfit's extension by its path, without the memfit package
# (which imports jax): one request on stdin, its result on stdout.
_CHILD = """
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("memfit._core", sys.argv[1])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
args = json.load(sys.stdin)
if os.environ.get(sys.argv[2]):
    os.abort()
json.dump(core.run_pipeline(*args), sys.stdout)
"""


def run_pipeline(text: str, pipeline: str, generic: bool, debug_info: bool,
                 record_pipeline: bool) -> dict:
    """_core.run_pipeline's result, computed in a child process."""
    from . import _core
    request = json.dumps([text, pipeline, generic, debug_info, record_pipeline])
    child = subprocess.run([sys.executable, "-c", _CHILD, _core.__file__, SELF_TEST_ABORT],
                           input=request, capture_output=True, text=True)
    if child.returncode != 0:
        raise MemfitError(
            f"memfit: pipeline '{pipeline}' died in its isolated process "
            f"({_death(child.returncode)}); this process is unaffected",
            [{"severity": "error", "location": "", "message": child.stderr[-2000:].strip()}])
    return json.loads(child.stdout)
