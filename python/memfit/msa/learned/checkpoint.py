"""Saving and loading the network's parameters (``.npz`` + a signature).

A checkpoint stores the flattened parameters and a JSON ``meta`` record. Its
``signature`` names everything the parameters' meaning depends on (feature
widths, menu and action layout, network shape); loading refuses a
checkpoint whose signature differs from this code's, naming the fields.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import jax
import numpy as np

from ...errors import MemfitError
from ..core import game
from . import features as F
from . import network

FORMAT = 1
DEFAULT_PATH = Path(__file__).with_name("agent.npz")
#: Played above the searched buckets (AgentConfig.big_checkpoint).
BIG_PATH = Path(__file__).with_name("agent_big.npz")


#: the first buffer round's lifetime means: over the first round's op
#: embeddings, or over a static op embedding (network.static_life); a
#: signature without the field is the former
LIFE = ("ops", "static")


def signature(hidden: int = network.HIDDEN, life: str = "ops") -> dict:
    return {"format": FORMAT, "buf_static": F.BUF_STATIC, "op_static": F.OP_STATIC,
            "plan_static": F.PLAN_STATIC, "buf_dynamic": F.BUF_DYNAMIC,
            "op_dynamic": F.OP_DYNAMIC, "plan_dynamic": F.PLAN_DYNAMIC,
            "offset_features": F.OFFSET_FEATURES, "global_features": F.GLOBAL_FEATURES,
            "num_plans": game.NUM_PLANS, "num_offsets": game.NUM_OFFSETS,
            "rounds": network.ROUNDS, "hidden": hidden, "life": life}


def save(path, net, meta: dict | None = None) -> None:
    leaves, _ = jax.tree.flatten_with_path(net)
    arrays = {jax.tree_util.keystr(p): np.asarray(x, np.float32) for p, x in leaves}
    hidden = int(net["buf_enc"][0]["w"].shape[1])
    life = LIFE[int(network.static_life(net))]
    record = {"signature": signature(hidden, life), **(meta or {})}
    buf = io.BytesIO()
    np.savez_compressed(buf, __meta__=np.frombuffer(json.dumps(record).encode(), np.uint8),
                        **arrays)
    Path(path).write_bytes(buf.getvalue())


def load(path=None) -> tuple[dict, dict]:
    """``(params, meta)``; raises MemfitError on a missing or mismatched file."""
    path = Path(path) if path is not None else DEFAULT_PATH
    if not path.exists():
        raise MemfitError(f"no learned-agent checkpoint at {path}; train one with "
                          "`memfit train-agent`")
    with np.load(path) as z:
        meta = json.loads(bytes(z["__meta__"]).decode())
        stored = {k: z[k] for k in z.files if k != "__meta__"}
    sig = {"life": LIFE[0], **meta.get("signature", {})}
    life = sig["life"] if sig["life"] in LIFE else LIFE[0]
    want = signature(int(sig.get("hidden", network.HIDDEN)), life)
    diff = sorted(k for k in set(sig) | set(want) if sig.get(k) != want.get(k))
    if diff:
        details = ", ".join(f"{k}: checkpoint {sig.get(k)!r} vs code {want.get(k)!r}" for k in diff)
        raise MemfitError(f"checkpoint {path} does not match this memfit's learned agent "
                          f"({details}); retrain with `memfit train-agent`")
    template = network.init_params(0, want["hidden"], static_life=life == "static")
    leaves, tree = jax.tree.flatten_with_path(template)
    extra = sorted(set(stored) - {jax.tree_util.keystr(p) for p, _ in leaves})
    if extra:
        raise MemfitError(f"checkpoint {path}: parameters {', '.join(extra[:3])} are not this "
                          f"network's (signature life {life!r}); retrain with `memfit train-agent`")
    params = []
    for p, x in leaves:
        name = jax.tree_util.keystr(p)
        if name not in stored or stored[name].shape != x.shape:
            raise MemfitError(f"checkpoint {path}: parameter {name} is missing or has the "
                              "wrong shape; retrain with `memfit train-agent`")
        params.append(jax.numpy.asarray(stored[name]))
    return jax.tree.unflatten(tree, params), meta
