"""memfit-export-buffers against XLA's own buffer assignment (XLA:CPU).

For each workload of memfit.msa.io.workloads (unsplit, as jax lowers it; kNN
and SGPR also after memfit-split, as data/msa's instances are made):
the buffers memfit's instance holds (SSA values: in-place updates and loop
carries share one buffer but count per value, as XLA lists them) against the
values of XLA's buffer assignment (parameter, output and temp allocations;
no tuples, phis, constants or reducer scalars), their bytes, and the peak:
the instance's with XLA's lifetimes (arguments live throughout, outputs to
the end) against XLA's argument + output + temp bytes.

    .venv/bin/python bench/msa_export_vs_xla.py [NAME ...] [--big] [--write]
Prints a markdown table (docs/msa-export.md). By default the workloads under
1,000 buffers (about 2 minutes); ``--big`` the six big programs (each takes
minutes to compile).
"""
from __future__ import annotations

import argparse
import os
import sys

import _results  # this script's folder is on sys.path
from make_msa_instances import BIG

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")


def compare(name: str, split: bool = False) -> dict:
    """memfit's instance against XLA's buffer assignment, for the program as
    jax lowers it, or (split=True) after memfit-split as the instances in
    data/msa are made."""
    import jax
    from memfit import _jax_handover as handover
    from memfit.msa.io.export import export_buffers, instance_stats
    from memfit.msa.io.workloads import get_workload, lower_workload
    from memfit.msa.io.xla_buffers import xla_buffer_stats
    fn, args = get_workload(name)
    if split:
        text, info = lower_workload(name)
        assert info["split"], info
    else:
        text = handover.module_text(jax.jit(fn).lower(*args))
    inst = export_buffers(text, "h200", "100%", "offload", program=name)
    return {"name": name + (" (split)" if split else ""), "memfit": instance_stats(inst),
            "xla": xla_buffer_stats(fn, *args, text=text if split else None)}


def main(argv=None) -> int:
    from memfit.msa.io.workloads import WORKLOADS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help="workloads of memfit.msa.io.workloads (default: all but the big ones)")
    ap.add_argument("--big", action="store_true",
                    help="the big programs (make_msa_instances.BIG) instead")
    args = ap.parse_args(argv)
    names = args.names or [n for n in WORKLOADS if (n in BIG) == args.big]
    print("| program | buffers (memfit) | values memfit / XLA | value bytes memfit / XLA (MB) "
          "| peak memfit / XLA (MB) | peak ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    from memfit.msa.io.workloads import WORKLOADS as W
    runs = [(n, False) for n in names] + [
        (n, True) for n in names if W[n].split_fraction is not None]
    for n, split in runs:
        r = compare(n, split)
        m, x = r["memfit"], r["xla"]
        print(f"| {r['name']} | {m['buffers']} | {m['values']} / {x['values']} "
              f"| {m['value_bytes'] / 1e6:.2f} / {x['value_bytes'] / 1e6:.2f} "
              f"| {m['peak_xla_lifetimes'] / 1e6:.2f} / {x['peak'] / 1e6:.2f} "
              f"| {m['peak_xla_lifetimes'] / x['peak']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__, ("--big",)))
