"""Polish and pair stage on offload instances: every action tried vs offload's 8 legal ones.

In offload mode only a plan's first candidate offset is legal (8 of the 29
actions); ``play.tried_actions(offload=True)`` tries only those, where the
other 21 were computed and then masked. This script plays the default
search on the validation set's offload instances (bench/diag_msa_prior.py's
random programs and synthetic instances; never the held-out ones), then
polishes each searched game (play.polish_batch, the default completions,
2 passes) and runs one round of the pair stage from the polished game
(play.pair_batch), each both ways side by side, one instance at a time,
warm (each variant compiled on the first instance before timing). Prints
the CPU seconds of each, their ratio, and whether the games are identical.

    nice -n 5 .venv/bin/python bench/bench_msa_offload_actions.py [--seeds 1000-1011]
        [--max-buffers 64] [--no-pairs]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def timed(fn, *args, **kwargs):
    """(result, CPU seconds) of ``fn``, its outputs ready."""
    import jax
    c0 = time.process_time()
    out = jax.block_until_ready(fn(*args, **kwargs))
    return out, time.process_time() - c0


def main(argv=None) -> int:
    import jax
    import numpy as np
    from diag_msa_prior import validation_instances
    from memfit.msa.learned import agent, play

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1000-1011")
    ap.add_argument("--synthetic", type=int, default=12)
    ap.add_argument("--synthetic-start", type=int, default=70_000)
    ap.add_argument("--max-buffers", type=int, default=64)
    ap.add_argument("--no-pairs", action="store_true", help="time the polish only")
    args = ap.parse_args(argv)
    lo, _, hi = args.seeds.partition("-")
    insts = [(n, i) for n, i in validation_instances(
        range(int(lo), int(hi or lo) + 1), args.synthetic, args.max_buffers, args.synthetic_start)
        if i.mode == "offload"]
    comps = play.DEFAULT_COMPLETIONS
    pair_kw = dict(completions=agent.DEFAULT_CONFIG.polish_then,
                   kick_completions=play.PAIR_KICK_COMPLETIONS)
    rows, warm = [], set()
    print(f"{'instance':34} {'bufs':>4}  polish s: all   8  ratio  same"
          + ("" if args.no_pairs else "   pair s: all   8  ratio  same"), flush=True)
    for name, inst in insts:
        batch = agent.encode_batch([inst])
        _, _, searched = agent.play_batch(batch, agent.AgentConfig(polish=0),
                                          return_actions=True)
        row = [name, inst.num_buffers]
        stages = [("polish", play.polish_batch, (searched, 2), dict(completions=comps))]
        if not args.no_pairs:
            stages.append(("pair", play.pair_batch, (None, 1, 2), pair_kw))
        polished = None
        for stage, fn, (acts, *rest), kw in stages:
            acts = polished if acts is None else acts
            out = {}
            for offload in (False, True):
                key = (stage, batch.arrays.order.shape, offload)
                if key not in warm:       # compile first: the timings are warm
                    fn(batch.arrays, batch.static, acts, *rest, offload=offload, **kw)
                    warm.add(key)
                out[offload] = timed(fn, batch.arrays, batch.static, acts, *rest,
                                     offload=offload, **kw)
            same = bool(np.array_equal(np.asarray(out[False][0][1]),
                                       np.asarray(out[True][0][1])))
            polished = out[True][0][1]
            row += [out[False][1], out[True][1], same]
        rows.append(row)
        cells = "".join(f"  {a:14.2f} {b:5.2f} {a / b:6.2f}  {'yes' if s else 'NO':>4}"
                        for a, b, s in zip(row[2::3], row[3::3], row[4::3]))
        print(f"{name:34} {inst.num_buffers:4d}{cells}", flush=True)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    for k, stage in enumerate(["polish"] + ([] if args.no_pairs else ["pair"])):
        a = [r[2 + 3 * k] for r in rows]
        b = [r[3 + 3 * k] for r in rows]
        same = sum(r[4 + 3 * k] for r in rows)
        ratio = geo([x / y for x, y in zip(a, b)])
        print(f"{stage}: {len(rows)} offload instances, all actions {sum(a):.1f} s CPU, "
              f"offload's 8 {sum(b):.1f} s; geomean ratio {ratio:.2f}; "
              f"identical games {same}/{len(rows)}")
    return 0 if all(all(r[4::3]) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
