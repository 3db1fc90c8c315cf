"""Polish and pair stage on offload instances, with and without game.offload_mode, side by side.

game.offload_mode makes an offload instance's mode a compile-time constant in
play.polish_batch and play.pair_batch, so that XLA drops placement mode's
offset search from every move. This bench runs, on the named validation
instances (diag_msa_prior's set; dev only, never the held-out ones), the
default's search and then agent.polish (no pair stage) and agent.pair_polish
(all kicks, best second change), once with game.offload_mode as shipped and
once with it replaced by the identity (the traced flag, as before 2026-12-05),
each variant in its own subprocess (jit caches are per process), and prints
the CPU seconds of each stage (first call, compile included, then warm), the
ratio, and whether the two variants' games are identical.

    nice -n 5 .venv/bin/python bench/bench_msa_offload_mode.py \
        [--only random-attention-1086-25-offload,...]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ("random-attention-1086-25-offload,random-mlp-1095-56-offload,synthetic-70077-offload,"
           "random-rnn-1062-30-offload,synthetic-70057-offload")


def run_variant(names: list, traced: bool, out: Path) -> None:
    """One variant in this process: per instance, the CPU seconds of the
    polish and the pair stage (each called twice: cold, warm) and the games."""
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy as np
    import jax
    from diag_msa_prior import validation_instances
    from memfit.msa.core import game
    from memfit.msa.learned import agent
    if traced:
        game.offload_mode = lambda g: g
    insts = [(n, i) for n, i in validation_instances(range(1012, 1096), 84, 64, 70012)
             if n in names]
    rows = {}
    for name, inst in insts:
        batch = agent.encode_batch([inst])
        _, _, searched = agent.play_batch(batch, agent.AgentConfig(polish=0),
                                          return_actions=True)
        row = {"buffers": inst.num_buffers}
        for stage in ("polish", "pairs"):
            for key in ("cold", "warm"):
                c = time.process_time()
                if stage == "polish":
                    _, _, acts = agent.polish(batch, searched,
                                              agent.AgentConfig(polish_pairs=False))
                    polished = acts
                else:
                    _, acts = agent.pair_polish(batch, polished, best_second=True)
                jax.block_until_ready(acts)
                row[f"{stage} {key}"] = time.process_time() - c
            row[f"{stage} game"] = np.asarray(acts).tolist()
        rows[name] = row
    out.write_text(json.dumps(rows))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=DEFAULT)
    ap.add_argument("--variant", choices=("constant", "traced"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    names = args.only.split(",")
    if args.variant:
        run_variant(names, args.variant == "traced", Path(args.out))
        return 0
    res = {}
    for variant in ("constant", "traced"):
        out = ROOT / f"bench/out/offload_mode_{variant}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, __file__, "--only", args.only, "--variant", variant,
                        "--out", str(out)], check=True)
        res[variant] = json.loads(out.read_text())
    c, t = res["constant"], res["traced"]
    print(f"{'instance':36} bufs | {'polish warm s':>21} {'ratio':>6} | {'pair stage warm s':>21} "
          f"{'ratio':>6} | same games")
    print(f"{'':36}      | {'traced':>10} {'constant':>10} {'':>6} | {'traced':>10} {'constant':>10}")
    for n in c:
        same = all(c[n][f"{s} game"] == t[n][f"{s} game"] for s in ("polish", "pairs"))
        print(f"{n:36} {c[n]['buffers']:4d} | {t[n]['polish warm']:10.2f} {c[n]['polish warm']:10.2f} "
              f"{t[n]['polish warm'] / c[n]['polish warm']:6.1f} | {t[n]['pairs warm']:10.2f} "
              f"{c[n]['pairs warm']:10.2f} {t[n]['pairs warm'] / c[n]['pairs warm']:6.1f} | {same}")
    for v in ("traced", "constant"):
        first = sum(r["polish cold"] + r["pairs cold"] for r in res[v].values())
        warm = sum(r["polish warm"] + r["pairs warm"] for r in res[v].values())
        print(f"{v:9}: polish + pair stage, first calls (compiles included) {first:.1f} s CPU, "
              f"warm {warm:.1f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
