"""Regenerates the memory-space-assignment instances under data/msa/.

For each workload of memfit.msa.io.workloads (17 jax programs; kNN and SGPR after
memfit-split when it applies), exports the entry function with
memfit-export-buffers at 25%, 50% and 75% of the program's fusion-aware peak
in both modes (offload on the h200 preset, placement on the tpu-like preset):
11 x 3 x 2 = 66 instances, plus the six big programs (BIG) at 50% only, written as compact JSON to
data/msa/instances/<program>-<mode>-<capacity>.json, and the manifest
data/msa/manifest.json, which splits them BY PROGRAM into train and held-out.

    .venv/bin/python bench/make_msa_instances.py [--out data/msa] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")

CAPACITIES = (25, 50, 75)
MODES = {"offload": "h200", "placement": "tpu-like"}
# Held out BY PROGRAM: a larger transformer than any in train, a CNN (the
# only convolutions) and SGPR (a split loop other than kNN's).
# GRU and ViT-block gradients: where CP-SAT finds the most headroom.
# The big programs (1,000 to 2,300 buffers: a deep transformer, a ResNet-style
# CNN and an unrolled RNN training step on each side) at 50% only: every
# method costs minutes per instance at that size on 2 cores.
HELD_OUT = ("transformer_medium", "cnn_train", "sgpr", "gru_train", "vit_block_grad",
            "transformer_deep_heldout", "resnet_train_heldout", "gru_long_heldout")
BIG = ("transformer_deep", "resnet_train", "lstm_long",
       "transformer_deep_heldout", "resnet_train_heldout", "gru_long_heldout")
BIG_CAPACITIES = (50,)


def main(argv=None) -> int:
    from memfit.msa.core.instance import Instance
    from memfit.msa.io.export import export_buffers, instance_stats
    from memfit.msa.io.workloads import WORKLOADS, lower_workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "msa"))
    ap.add_argument("--only", nargs="*", default=None, help="workload names (default: all)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    (out / "instances").mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = (json.loads(manifest_path.read_text()) if manifest_path.exists() and args.only
                else {"programs": {}})
    names = args.only or list(WORKLOADS)
    for name in names:
        t0 = time.time()
        text, info = lower_workload(name)
        files = []
        stats = None
        for mode, device in MODES.items():
            for cap in (BIG_CAPACITIES if name in BIG else CAPACITIES):
                inst = export_buffers(text, device, f"{cap}%", mode, program=name)
                # Source locations are dropped to keep the committed files
                # small (memfit export-buffers writes them).
                for op in inst["ops"]:
                    op.pop("location", None)
                Instance.from_dict(inst)  # schema and consistency
                stats = stats or instance_stats(inst)
                fname = f"{name}-{mode}-{cap}.json"
                (out / "instances" / fname).write_text(
                    json.dumps(inst, separators=(",", ":")) + "\n")
                files.append(f"instances/{fname}")
        manifest["programs"][name] = {
            "description": WORKLOADS[name].description,
            "split": "heldout" if name in HELD_OUT else "train",
            "memfit_split": info["note"],
            "ops": len(inst["ops"]), "buffers": len(inst["buffers"]),
            # Capacities are percentages of this (memfit-profile's peak).
            "profile_peak_bytes": export_buffers(text, "h200", "100%", "offload")["capacity"],
            # The largest sum of buffers live at one op, instance intervals.
            "instance_peak_bytes": stats["peak"],
            "files": files,
        }
        print(f"{name}: {len(files)} instances, {len(inst['ops'])} ops, "
              f"{len(inst['buffers'])} buffers ({info['note']}) [{time.time() - t0:.1f}s]",
              flush=True)
    progs = manifest["programs"]
    manifest = {
        "version": 1,
        "generated_by": "bench/make_msa_instances.py",
        "capacities": [f"{c}% of the program's fusion-aware peak" for c in CAPACITIES],
        "modes": {m: d for m, d in MODES.items()},
        "split_by": "program",
        "train": sorted(f for p in progs.values() if p["split"] == "train" for f in p["files"]),
        "heldout": sorted(f for p in progs.values() if p["split"] == "heldout" for f in p["files"]),
        "programs": dict(sorted(progs.items())),
    }
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest['train'])} train + {len(manifest['heldout'])} held-out instances "
          f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
