"""The buffer packer on the public DSA instances, against best-fit.

    .venv/bin/python bench/bench_pack.py [--data DIR] [--time-limit 60]
                                         [--peak-time-limit 60] [--peak-all]

For each minimalloc-*.CAPACITY.csv it packs at exactly that capacity; for the
ResNet-50 trace (no capacity) it minimises the peak. Every packing is checked
by memfit.pack_validate (plain Python, independent of the C++ search). The
baseline is best-fit in Python here (largest buffer first, then longest; each
in the smallest gap between time-overlapping buffers that holds it, else on
top), so it is independent of the C++ code too. Ratios are peak divided by
the lower bound (the most bytes live at one time).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

from memfit.pack import pack, read_csv
from memfit.pack_validate import check_packing, max_live, peak_of


def best_fit_python(buffers):
    """Best-fit in XLA's spatial order: (offsets, peak)."""
    order = sorted(range(len(buffers)),
                   key=lambda i: (-buffers[i].size, -(buffers[i].upper - buffers[i].lower), i))
    offsets = [0] * len(buffers)
    placed: list[int] = []
    for i in order:
        b = buffers[i]
        if b.size == 0:
            continue
        busy = sorted((offsets[j], offsets[j] + buffers[j].size) for j in placed
                      if buffers[j].lower < b.upper and b.lower < buffers[j].upper)
        best, best_gap, cursor = None, None, 0
        for start, end in busy:
            if start - cursor >= b.size and (best_gap is None or start - cursor < best_gap):
                best, best_gap = cursor, start - cursor
            cursor = max(cursor, end)
        offsets[i] = cursor if best is None else best
        placed.append(i)
    return offsets, peak_of(buffers, offsets)


def row(name, n, capacity, status, seconds, peak, lb, bf_peak, note=""):
    ratio = f"{peak / lb:.4f}" if peak else "-"
    cap = str(capacity) if capacity is not None else "min peak"
    print(f"{name:<28} {n:>7} {cap:>10} {status:>10} {seconds:>8.2f} {peak or '-':>12} "
          f"{lb:>12} {ratio:>7} {bf_peak / lb:>8.4f}  {note}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get(
        "MEMFIT_DSA_DATA", str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "dsa")))
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="seconds per instance packed at its capacity")
    ap.add_argument("--peak-time-limit", type=float, default=60.0,
                    help="seconds for each peak-minimising run")
    ap.add_argument("--peak-all", action="store_true",
                    help="also minimise the peak of the capacity instances")
    args = ap.parse_args(argv)

    data = Path(args.data)
    files = sorted(data.glob("*.csv"))
    if not files:
        print(f"no CSV files in {data}", file=sys.stderr)
        return 1
    print(f"{'instance':<28} {'buffers':>7} {'capacity':>10} {'status':>10} {'time (s)':>8} "
          f"{'peak':>12} {'lower bnd':>12} {'ratio':>7} {'best-fit':>8}")
    failures = 0
    for path in files:
        bufs = read_csv(path)
        lb = max_live(bufs)
        bf_offsets, bf_peak = best_fit_python(bufs)
        check_packing(bufs, bf_offsets)
        m = re.search(r"\.(\d+)\.csv$", path.name)
        runs = []
        if m:
            runs.append(int(m.group(1)))
        if not m or args.peak_all:
            runs.append(None)
        for capacity in runs:
            limit = args.time_limit if capacity is not None else args.peak_time_limit
            start = time.monotonic()
            r = pack(bufs, capacity, time_limit=limit)
            seconds = time.monotonic() - start
            note = ""
            if r.packed:
                check_packing(bufs, r.offsets, capacity)
                note = "valid"
                if capacity is None:
                    note += ", proven minimal" if r.optimal else (
                        f", proven bound {r.proven_lower_bound}")
            else:
                failures += 1
            row(path.name, len(bufs), capacity, r.status, seconds,
                r.peak if r.packed else None, lb, bf_peak, note)
    print("\nratio = peak / most bytes live at one time; best-fit = the same for the "
          "best-fit baseline")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
