"""The buffer packer on the public DSA instances, against best-fit.

    .venv/bin/python bench/bench_pack.py [--data DIR] [--time-limit 60]
                                         [--peak-time-limit 60] [--peak-all]
    .venv/bin/python bench/bench_pack.py --set dev|heldout [--per-family 8]
                                         [--families cut,sweep] [--time-limit 5]
                                         [--first-seed N] [--cpu-time]

With --set, the instances are memfit.pack.instances' generated hard set (the
development seeds, used while tuning, or the held-out seeds, only for
judging; --first-seed N draws from seeds N, N+1, ... instead) instead of the
public files: each is packed at its capacity, every
packing is validated, and every infeasibility claimed on an instance of at
most --cpsat-max buffers is checked by CP-SAT.

For each minimalloc-*.CAPACITY.csv it packs at exactly that capacity; for the
ResNet-50 trace (no capacity) it minimises the peak. Every packing is checked
by memfit.pack.validate (plain Python, independent of the C++ search). The
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
from memfit.pack.validate import check_packing, max_live, peak_of

import _results  # noqa: E402  (this script's folder is on sys.path)


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


def row(name, n, capacity, status, seconds, cpu, peak, lb, bf_peak, note=""):
    ratio = f"{peak / lb:.4f}" if peak else "-"
    cap = str(capacity) if capacity is not None else "min peak"
    print(f"{name:<28} {n:>7} {cap:>10} {status:>10} {seconds:>8.2f} {cpu:>7.2f} {peak or '-':>12} "
          f"{lb:>12} {ratio:>7} {bf_peak / lb:>8.4f}  {note}", flush=True)


def cpsat_fits(bufs, capacity, time_limit=60.0):
    """CP-SAT on the same question: True (a packing exists), False (proven
    none) or None (undecided in the time)."""
    from ortools.sat.python import cp_model
    m = cp_model.CpModel()
    xs, ys = [], []
    for i, b in enumerate(bufs):
        o = m.NewIntVar(0, capacity - b.size, f"o{i}")
        xs.append(m.NewIntervalVar(b.lower, b.upper - b.lower, b.upper, f"x{i}"))
        ys.append(m.NewIntervalVar(o, b.size, o + b.size, f"y{i}"))
    m.AddNoOverlap2D(xs, ys)
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.max_time_in_seconds = time_limit
    st = s.Solve(m)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    return False if st == cp_model.INFEASIBLE else None


def _kind(inst) -> str:
    """What is known of an instance by construction."""
    return "planted" if inst.planted else "infeasible" if inst.infeasible else "unknown"


def run_generated(args) -> int:
    from memfit.pack.instances import hard_set
    from memfit.pack import best_fit
    families = args.families.split(",") if args.families else None
    insts = hard_set(args.set, args.per_family, families, args.first_seed)
    seeds = f"seeds from {args.first_seed}" if args.first_seed is not None else f"{args.set} seeds"
    clock = "CPU" if args.cpu_time else "wall-clock"
    print(f"{len(insts)} hard instances ({seeds}, {args.per_family} per family; "
          f"hard: best-fit does not fit the capacity), {args.time_limit:g} s ({clock}) each\n")
    print(f"{'instance':<18} {'family':<12} {'buffers':>7} {'live/cap':>8} {'status':>10} "
          f"{'time (s)':>8} {'cpu (s)':>7} {'nodes':>9} {'best-fit':>8}  note")
    by_family: dict = {}
    wrong = 0
    for inst in insts:
        bufs, cap = inst.buffers, inst.capacity
        _, bf_peak = best_fit(bufs)
        start, cpu0 = time.monotonic(), time.process_time()
        r = pack(bufs, cap, time_limit=args.time_limit, cpu_time=args.cpu_time)
        seconds, cpu = time.monotonic() - start, time.process_time() - cpu0
        note = ""
        if r.packed:
            check_packing(bufs, r.offsets, cap)
            note = "valid"
            if inst.infeasible:  # the validator should have caught it
                note, wrong = "WRONG: infeasible by construction", wrong + 1
        elif r.status == "infeasible":
            if inst.planted:
                note, wrong = "WRONG: a packing is planted", wrong + 1
            elif len(bufs) <= args.cpsat_max:
                verdict = cpsat_fits(bufs, cap)
                note = {False: "CP-SAT agrees", None: "CP-SAT undecided"}.get(verdict, "WRONG")
                wrong += verdict is True
            elif inst.infeasible:
                note = "infeasible by construction"
            else:
                note = "too large for CP-SAT"
        elif inst.infeasible:
            note = "infeasible by construction, not proven"
        print(f"{inst.name:<18} {inst.family:<12} {len(bufs):>7} {max_live(bufs) / cap:>8.4f} "
              f"{r.status:>10} {seconds:>8.2f} {cpu:>7.2f} {r.nodes:>9} {bf_peak / cap:>8.4f}  {note}",
              flush=True)
        fam = by_family.setdefault(inst.family, {"n": 0, "packed": 0, "infeasible": 0,
                                                  "timeout": 0, "bf": 0, "max_s": 0.0,
                                                  "max_cpu": 0.0,
                                                  "kind": _kind(inst)})
        fam["n"] += 1
        fam[r.status] += 1
        fam["bf"] += bf_peak <= cap
        if r.status != "timeout":
            fam["max_s"] = max(fam["max_s"], seconds)
            fam["max_cpu"] = max(fam["max_cpu"], cpu)
    print(f"\n{'family':<13} {'kind':>10} {'n':>3} {'packed':>6} {'infeasible':>10} "
          f"{'timeout':>7} {'best-fit fits':>13} {'slowest solved (s)':>18} {'slowest cpu (s)':>15}")
    for name, f in by_family.items():
        print(f"{name:<13} {f['kind']:>10} {f['n']:>3} {f['packed']:>6} "
              f"{f['infeasible']:>10} {f['timeout']:>7} {f['bf']:>13} {f['max_s']:>18.2f} "
              f"{f['max_cpu']:>15.2f}")
    total = {k: sum(f[k] for f in by_family.values()) for k in ("n", "packed", "infeasible", "timeout")}
    print(f"{'all':<13} {'':>10} {total['n']:>3} {total['packed']:>6} {total['infeasible']:>10} "
          f"{total['timeout']:>7}")
    return 1 if wrong else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _results.add_write_flag(ap)
    ap.add_argument("--data", default=os.environ.get(
        "MEMFIT_DSA_DATA", str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "dsa")))
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per instance packed at its capacity "
                         "(default 60 on the public files, 5 on a generated set)")
    ap.add_argument("--peak-time-limit", type=float, default=60.0,
                    help="seconds for each peak-minimising run")
    ap.add_argument("--peak-all", action="store_true",
                    help="also minimise the peak of the capacity instances")
    ap.add_argument("--set", choices=("shared", "dev", "heldout"), default="shared",
                    help="the public files (default) or a generated hard set")
    ap.add_argument("--per-family", type=int, default=8,
                    help="generated instances per family (with --set dev|heldout)")
    ap.add_argument("--families", default="",
                    help="comma-separated families of the generated set (default: all)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time limits count CPU time of the search, not wall-clock time "
                         "(for a loaded machine)")
    ap.add_argument("--first-seed", type=int, default=None,
                    help="draw the generated instances from this seed on instead of the "
                         "--set's seeds (for judging on seeds no test or table uses)")
    ap.add_argument("--cpsat-max", type=int, default=50,
                    help="cross-check infeasibility with CP-SAT up to this many buffers")
    args = ap.parse_args(argv)
    if args.time_limit is None:
        args.time_limit = 60.0 if args.set == "shared" else 5.0
    if args.set != "shared":
        return run_generated(args)

    data = Path(args.data)
    files = sorted(data.glob("*.csv"))
    if not files:
        print(f"no CSV files in {data}", file=sys.stderr)
        return 1
    print(f"{'instance':<28} {'buffers':>7} {'capacity':>10} {'status':>10} {'time (s)':>8} {'cpu (s)':>7} "
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
            start, cpu0 = time.monotonic(), time.process_time()
            r = pack(bufs, capacity, time_limit=limit, cpu_time=args.cpu_time)
            seconds, cpu = time.monotonic() - start, time.process_time() - cpu0
            note = ""
            if r.packed:
                check_packing(bufs, r.offsets, capacity)
                note = "valid"
                if capacity is None:
                    note += ", proven minimal" if r.optimal else (
                        f", proven bound {r.proven_lower_bound}")
            else:
                failures += 1
            row(path.name, len(bufs), capacity, r.status, seconds, cpu,
                r.peak if r.packed else None, lb, bf_peak, note)
    print("\nratio = peak / most bytes live at one time; best-fit = the same for the "
          "best-fit baseline")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
