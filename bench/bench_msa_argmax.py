"""The policy's argmax game: its wall time against the heuristic's, per move and per game.

For generated instances of ``--sizes`` buffers (msa.io.synthetic.random_instance:
``size - 4`` ops and 4 arguments, capacity 40% of the peak; ``--modes``
offload and placement), one process, one at a time: the XLA-style
heuristic's wall; the encoding (game arrays and the network's static
features: it runs the heuristic once more, for the hint feature); the
incremental argmax game (msa/learned/argmax.py) played twice, the first call
with its compiles (the persistent compilation cache is off), then warm; the
estimated time of the argmax game's solution over the heuristic's (the
validator's). ``--reference SIZES`` also plays, at those sizes, the
reference jitted loop (``play.play_batch(..., fast=False)``) twice, first
with its compile, then warm, and checks that the moves are the same. The
CPU model and load are in the header (``--write``) and printed before and
after. ``--rows`` adds the rows a move recomputes (argmax.Player.rows).
``--checkpoints A,B`` plays each instance with each checkpoint in turn (in
one process, the same encoding; ``default``: the one the agent plays, else
a path), one row per checkpoint: e.g. the packaged big checkpoint against
one with static lifetime means (network.static_life).

    .venv/bin/python bench/bench_msa_argmax.py --write
    .venv/bin/python bench/bench_msa_argmax.py --sizes 1000 --reference 1000
    .venv/bin/python bench/bench_msa_argmax.py --sizes 4096 --checkpoints default,CKPT.npz
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import _results  # noqa: E402  (this script's folder is on sys.path)

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")


def _machine() -> str:
    return (f"CPU {_results._cpu_model()}, {os.cpu_count()} cores, load average "
            + " ".join(f"{x:.1f}" for x in os.getloadavg()))


def run(size: int, mode: str, reference: bool, rows: bool = False,
        checkpoints=("default",)) -> list[dict]:
    from memfit.msa.core.validator import validate
    from memfit.msa.io.synthetic import random_instance
    from memfit.msa.learned import agent, checkpoint
    from memfit.msa.solvers import heuristic

    inst = random_instance(size, num_ops=size - 4, num_args=4, mode=mode, capacity_fraction=0.4)
    t = time.perf_counter()
    h = heuristic.assign(inst)
    shared = {"heuristic": time.perf_counter() - t}
    t = time.perf_counter()
    batch = agent.encode_batch([inst])
    shared["encode"] = time.perf_counter() - t
    vh = validate(inst, h)
    out = []
    for c in checkpoints:
        net = (agent.default_params(batch) if c == "default" else checkpoint.load(c)[0])
        out.append(_play(inst, batch, net, vh, reference, rows,
                         {**shared, "checkpoint": c}))
    return out


def _play(inst, batch, net, vh, reference: bool, rows: bool, row: dict) -> dict:
    import jax
    import numpy as np
    from memfit.msa.core.validator import validate
    from memfit.msa.learned import agent, argmax, play

    size = inst.num_buffers
    for key in ("first", "warm"):
        t = time.perf_counter()
        final, _, acts, _ = argmax.play_batch(net, batch.arrays, batch.static)
        np.asarray(final.time)
        row[key] = time.perf_counter() - t
    sol = agent._solutions(batch, final, "learned-policy")[0]
    v = validate(inst, sol)
    if not v.valid:
        raise SystemExit(f"BUG: the argmax game's solution is invalid:\n{v.summary()}")
    row["quality"] = v.estimated_time / vh.estimated_time
    row["moves"] = inst.num_buffers
    if rows:
        counts = []
        argmax.play_batch(net, batch.arrays, batch.static, rows=counts)
        row["rows"] = np.asarray(counts[0], float).mean(0) / size
    if reference:
        for key in ("reference first", "reference warm"):
            t = time.perf_counter()
            _, _, ref, _ = play.play_batch(net, batch.arrays, batch.static,
                                           jax.random.PRNGKey(0), fast=False)
            ref = np.asarray(ref)
            row[key] = time.perf_counter() - t
        row["same"] = bool((ref == np.asarray(acts)).all())
    return row


def _cells(r: dict, mode: str, named: bool, reference: bool, rows: bool) -> list:
    cells = ([r["checkpoint"]] if named else []) + [
        str(r["moves"]), mode, f"{r['heuristic']:.2f}", f"{r['encode']:.2f}",
        f"{r['first']:.2f}", f"{r['warm']:.2f}", f"{r['warm'] / r['moves'] * 1e3:.2f}",
        f"{r['quality']:.3f}"]
    if reference:
        cells += ([f"{r['reference first']:.2f}", f"{r['reference warm']:.2f}",
                   "yes" if r["same"] else "NO"] if "same" in r else ["", "", ""])
    if rows:
        cells += [f"{x:.3f}" for x in r["rows"]]
    return cells


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,2048,4096", help="buffers per instance")
    ap.add_argument("--modes", default="offload,placement")
    ap.add_argument("--reference", default="",
                    help="sizes at which to also play the reference loop and check that "
                         "the moves are the same")
    ap.add_argument("--rows", action="store_true",
                    help="then play once more counting the rows each move recomputes: "
                         "round 0 ops, round 1 ops, round 1 buffers, round 2 ops, and the "
                         "round 1 buffers and round 2 ops without the lifetime means' "
                         "changes, as fractions of the buffers (mean over the moves)")
    ap.add_argument("--checkpoints", default="default",
                    help="comma-separated checkpoints played in turn on each instance "
                         "('default': the agent's)")
    _results.add_write_flag(ap)
    args = ap.parse_args(argv)
    print(_machine())
    checkpoints = args.checkpoints.split(",")
    named = len(checkpoints) > 1
    cols = (("checkpoint",) if named else ()) + (
        "buffers", "mode", "heuristic s", "encode s", "argmax first s", "argmax warm s",
        "warm ms/move", "time / heuristic's")
    ref_sizes = {int(x) for x in args.reference.split(",") if x}
    if ref_sizes:
        cols += ("reference first s", "reference warm s", "same moves")
    if args.rows:
        cols += ("rows: r0 ops", "r1 ops", "r1 bufs", "r2 ops", "r1 bufs w/o life",
                 "r2 ops w/o life")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for size in [int(s) for s in args.sizes.split(",")]:
        for mode in args.modes.split(","):
            for r in run(size, mode, size in ref_sizes, args.rows, checkpoints):
                print("| " + " | ".join(_cells(r, mode, named, bool(ref_sizes), args.rows))
                      + " |", flush=True)
                if not r.get("same", True):
                    print("the fast argmax's moves differ from the reference's")
                    return 1
    print(_machine())
    return 0


if __name__ == "__main__":
    sys.exit(_results.run(main, __file__))
