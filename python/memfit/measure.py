"""Ground truth for memfit's claims: what XLA allocates, what the process uses,
and how long things take, measured side by side.

* ``xla_bytes(compiled)``: XLA's argument + output + temp - alias. On CPU,
  honest only with ynn fusions off (``XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=``
  set before jax is imported; DESIGN.md says why).
* ``peak_rss_growth(target, ...)``: runs ``target`` in a fresh subprocess and
  returns how far its resident set grew above the level before the run
  (Linux: the peak is reset through /proc/self/clear_refs after compiling, so
  compilation does not count).
* ``interleaved_medians(fns, repeats)``: medians of interleaved timings, so
  that machine noise hits every contender alike.
"""
from __future__ import annotations

import gc
import importlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Callable

NO_YNN = "--xla_cpu_experimental_ynn_fusion_type="
#: The same per compile: ``lowered.compile(compiler_options=ACCOUNTING_OPTIONS)``
#: gives an executable whose memory analysis counts every byte, in a process
#: that otherwise runs jax's defaults.
ACCOUNTING_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}
#: ynn fusions of dots only (no elementwise or reduce fusions). On the split
#: SGPR gradient, jax's default ynn fusions materialise [M, M, D] broadcasts
#: that the other fusions keep fused (XLA assigns 199.6 MiB of temporaries
#: against 99.9 MiB with dots only) and run slower (124.3 against 113.9 s).
YNN_DOTS_ONLY_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_DOT"}


def cpu_model() -> str:
    """The CPU's model name (speed ratios differ between CPUs)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def xla_bytes(compiled) -> int:
    """argument + output + temp - alias of a compiled jax executable (or of
    an XLA LoadedExecutable, whose stats have the same fields)."""
    m = (compiled.memory_analysis() if hasattr(compiled, "memory_analysis")
         else compiled.get_compiled_memory_stats())
    return int(m.argument_size_in_bytes + m.output_size_in_bytes
               + m.temp_size_in_bytes - m.alias_size_in_bytes)


_METADATA = re.compile(r",? ?metadata=\{[^}]*\}")
_MODULE_NAME = re.compile(r"^HloModule \S+", re.M)
_STACK_FRAMES = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)\n(\d+ .*\n)*",
                           re.M)


def hlo_without_metadata(hlo_text: str) -> str:
    """A compiled module's HLO text without what says where ops came from
    (op metadata, the module's name, the stack-frame tables), so that two
    compiles of the same program compare equal."""
    t = _MODULE_NAME.sub("HloModule", hlo_text)
    return _STACK_FRAMES.sub("", _METADATA.sub("", t))


def _block(x):
    import jax
    return jax.block_until_ready(x)


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int = 5,
                        warmup: int = 1) -> dict[str, float]:
    """Median seconds per contender; one round calls each contender once."""
    for _ in range(warmup):
        for f in fns.values():
            _block(f())
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, f in fns.items():
            t = time.perf_counter()
            _block(f())
            times[name].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _child(target: str, kwargs: dict) -> dict:
    module, _, name = target.partition(":")
    fn, args = getattr(importlib.import_module(module), name)(**kwargs)
    # Compile ahead of time and measure the first execution: a warm-up run
    # would leave its buffers resident in the allocator and hide the growth.
    if hasattr(fn, "lower"):
        fn = fn.lower(*args).compile()
    gc.collect()
    before = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current RSS
    t = time.perf_counter()
    _block(fn(*args))
    seconds = time.perf_counter() - t
    peak = _status_kib("VmHWM")
    return {"rss_before": before * 1024, "rss_peak": peak * 1024,
            "growth": max(0, peak - before) * 1024, "seconds": seconds}


def peak_rss_growth(target: str, ynn: bool = True, timeout: float = 600,
                    cwd: str | None = None, **kwargs) -> dict:
    """Runs ``module:function(**kwargs) -> (callable, args)`` in a subprocess.

    Returns {"growth", "rss_before", "rss_peak", "seconds"} in bytes/seconds.
    ``ynn=True`` runs XLA as users run it (ynn fusions on). ``cwd`` is the
    subprocess's directory (default: this one), from which ``module`` is
    imported: a bench script's own folder.
    """
    env = dict(os.environ)
    flags = env.get("XLA_FLAGS", "").replace(NO_YNN, "").strip()
    env["XLA_FLAGS"] = flags if ynn else f"{flags} {NO_YNN}".strip()
    code = ("import json, sys; from memfit.measure import _child; "
            "print('MEMFIT-RESULT', json.dumps(_child(sys.argv[1], json.loads(sys.argv[2]))))")
    proc = subprocess.run([sys.executable, "-c", code, target, json.dumps(kwargs)],
                          capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=cwd or os.getcwd())
    for line in proc.stdout.splitlines():
        if line.startswith("MEMFIT-RESULT "):
            return json.loads(line.split(" ", 1)[1])
    raise RuntimeError(f"measuring {target} failed (exit {proc.returncode}):\n"
                       f"{proc.stderr[-3000:]}")
