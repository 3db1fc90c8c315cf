"""memfit's memory profile against XLA's own count, program by program.

    .venv/bin/python bench/bench_profile.py [--scales 1,4] [--no-rss]

For each program of test/python/foundation_programs.py (the ones the tests
check) it prints memfit.profile(f)(*args).peak_bytes next to XLA:CPU's
argument + output + temp - alias from memory_analysis() (ynn fusions off),
and their ratio. Then it cross-checks one big program against the peak RSS
of a fresh subprocess: how much the process really grows while it runs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import _results  # noqa: E402  (this script's folder is on sys.path)

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_cpu_experimental_ynn_fusion_type=").strip()

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "python"))

MiB = 1024 * 1024


def table(scales):
    import memfit
    import foundation_programs as progs

    print(f"{'program':<14} {'scale':>5} {'memfit peak':>14} {'XLA a+o+t-a':>14} {'ratio':>7}")
    worst = 1.0
    for name, (fun, make_args) in progs.PROGRAMS.items():
        for scale in scales:
            args = make_args(scale)
            peak = memfit.profile(fun)(*args).peak_bytes
            xla = progs.xla_bytes(fun, *args)
            ratio = peak / xla
            worst = max(worst, ratio, 1 / ratio)
            print(f"{name:<14} {scale:>5} {peak / MiB:>10.2f} MiB {xla / MiB:>10.2f} MiB "
                  f"{ratio:>7.3f}")
    print(f"worst deviation: {100 * (worst - 1):.1f}%")


RSS_CHILD = r"""
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_cpu_experimental_ynn_fusion_type="
sys.path.insert(0, sys.argv[1])
import numpy as np, jax, memfit
import foundation_programs as progs
fun = progs.attention
q, k, v = (jax.device_put(a) for a in progs.args_attention(int(sys.argv[2])))
compiled = jax.jit(fun).lower(q, k, v).compile()
m = compiled.memory_analysis()
report = memfit.profile(fun)(q, k, v)
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
# The first run is measured: after it the allocator may keep the freed
# buffers, and a second run would not grow the process at all.
with open("/proc/self/clear_refs", "w") as f:     # reset the peak RSS (VmHWM)
    f.write("5")
before = status("VmRSS:")
out = jax.block_until_ready(compiled(q, k, v))
grown = status("VmHWM:") - before
print(json.dumps({"memfit_peak": report.peak_bytes, "memfit_args": report.argument_bytes,
                  "xla_temp_out": m.temp_size_in_bytes + m.output_size_in_bytes,
                  "rss_grown": grown}))
"""


def rss_check(scale):
    p = subprocess.run([sys.executable, "-c", RSS_CHILD, str(REPO / "test" / "python"),
                        str(scale)], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print("RSS check failed:", p.stderr[-2000:])
        return
    r = json.loads(p.stdout.strip().splitlines()[-1])
    s = 512 * scale
    memfit_run = r["memfit_peak"] - r["memfit_args"]
    print(f"\nattention with S={s} (scores {s * s * 4 / MiB:.0f} MiB), one fresh process:")
    print(f"  memfit peak - arguments   {memfit_run / MiB:10.2f} MiB")
    print(f"  XLA temp + output         {r['xla_temp_out'] / MiB:10.2f} MiB")
    print(f"  peak RSS growth while run {r['rss_grown'] / MiB:10.2f} MiB "
          f"(ratio memfit/RSS {memfit_run / max(r['rss_grown'], 1):.3f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--scales", default="1,4")
    ap.add_argument("--rss-scale", type=int, default=16)
    ap.add_argument("--no-rss", action="store_true")
    a = ap.parse_args()
    table([int(s) for s in a.scales.split(",")])
    if not a.no_rss:
        rss_check(a.rss_scale)


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
