"""Trains the learned mallocGame player and writes the packaged checkpoint.

Training instances: the manifest's training programs (data/msa), random jax
programs exported with memfit-export-buffers (memfit.msa.learned.programs)
and synthetic instances (memfit.msa.io.synthetic). The held-out programs are
never played for training: they are only scored (the policy's argmax, no
search) to draw the curve shown in the progress bar and the log. The
checkpoint written is the one with the best *training-side* score (the
argmax policy on the manifest's training instances vs the heuristic), never
chosen by the held-out score (iteration 0: right after imitation).

Two phases: imitation (supervised steps on expert games: the better of the
heuristic's and CP-SAT's solution of each *training* instance, replayed
through the game; see memfit.msa.learned.imitate), then self-play with
Gumbel MuZero, half of every minibatch still drawn from the expert games.
CP-SAT under a wall-time limit is not deterministic: its solutions are
cached (bench/out/msa_expert_cache) so that reruns repeat.

The manifest's 1,000+-buffer training programs (classes above
train.SEARCH_MAX_BUCKET) are never searched: their expert games are the
heuristic's (CP-SAT only up to --cpsat-max-buffers), replaced by the
policy's own argmax game wherever that is faster (train.Trainer.
self_imitate, at the start and at the class's self-play turns). The curve's
held-out score covers held-out instances up to --curve-max-buffers; the big
training programs are scored before and after only. --init CHECKPOINT
fine-tunes from a checkpoint (recorded with its sha256 in the meta).

Expert iteration (--search-experts R, after imitation): R rounds, each
playing the agent's own default (the search with the policy seed, root rule
max_kept, polish) on every training instance up to
--search-expert-max-bucket buffers; its game replaces the instance's expert
game where faster (train.imitate_faster_games), then --search-expert-steps
imitation steps. The prior then imitates games beyond the heuristic's (the
search's rollout already plays the heuristic's plans); --save-rounds keeps
each round's network (OUT.roundN.npz) for bench/diag_msa_prior.py.

--big-checkpoint trains the checkpoint the agent plays above the searched
buckets (python/memfit/msa/learned/agent_big.npz; train_big): the small
checkpoint fine-tuned on the big training programs and variants of their
families (programs.big_training_instances) by imitation of their
local-searched games, then --ls-rounds rounds of expert iteration with the
local search as the improver.

    .venv/bin/python bench/train_msa_agent.py [--iterations 100] [--seed 0]
        [--out python/memfit/msa/learned/agent.npz] [--log bench/msa_agent_log.json]

Seeded: the same arguments on the same machine give the same checkpoint.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
ROOT = Path(__file__).resolve().parents[1]


def load_manifest(split: str):
    from memfit.msa.core.instance import Instance
    man = json.loads((ROOT / "data" / "msa" / "manifest.json").read_text())
    return [Instance.load(ROOT / "data" / "msa" / f) for f in man[split]]


def synthetic_instances(n: int, seed: int):
    import numpy as np
    from memfit.msa.io.synthetic import random_instance
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        mode = ("placement", "offload")[i % 2]
        device = "cpu" if rng.random() < 0.1 else None
        out.append(random_instance(50_000 + i, num_ops=int(rng.integers(12, 57)),
                                   num_args=int(rng.integers(2, 8)), mode=mode, device=device,
                                   capacity_fraction=float(rng.uniform(0.2, 0.6))))
    return out


TRAIN_PROGRAMS = ("attention", "gp_solve", "knn", "lstm_scan", "mlp_train_step",
                  "transformer_small")


def _unstacked(cd):
    from memfit.msa.learned import play
    return [play.unstack(cd.static, i) for i in range(len(cd.specs))]


def encode_all(insts, desc: str):
    from memfit._optional import require
    from memfit.msa.learned import play
    tqdm = require("tqdm", "training the learned player").tqdm
    out = []
    for inst in tqdm(insts, desc=desc, leave=False):
        spec, sf = play.encode_padded(inst)
        out.append((play.pad_access(spec, play.canonical_width(spec.arrays.acc.shape[1])), sf))
    return out


def heldout_score(trainer, classes, baseline) -> float | None:
    """Geometric mean over held-out instances of the policy's argmax time
    over the heuristic's time (the game's float32 time)."""
    times = argmax_times(trainer, classes, baseline)
    return _geomean(times.values()) if times else None


def heuristic_times(specs) -> dict:
    from memfit.msa.core.validator import validate
    from memfit.msa.solvers.heuristic import assign
    return {(s.inst.program, s.inst.mode, s.inst.capacity): validate(s.inst, assign(s.inst)).estimated_time
            for s in specs}


def schedule(classes, iteration: int, large_every: int):
    """Which class plays this iteration: classes of 256+ buffers every
    ``large_every``-th iteration, the small ones in turn otherwise."""
    small = [c for c in classes if c.key[0] <= 64]
    large = [c for c in classes if c.key[0] > 64]
    if large and (not small or iteration % large_every == large_every - 1):
        return large[(iteration // large_every) % len(large)]
    return small[iteration % len(small)]


def plot_curve(log: list[dict], path: Path) -> None:
    from memfit._optional import matplotlib_agg, require
    matplotlib_agg("the training curve")
    plt = require("matplotlib.pyplot")
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    x = [r["minutes"] for r in log]
    ax[0].plot(x, [r["loss"] for r in log], label="total")
    ax[0].plot(x, [r["policy_loss"] for r in log], label="policy")
    ax[0].plot(x, [r["value_loss"] for r in log], label="value")
    ax[0].set_xlabel("minutes (2 CPU cores)"), ax[0].set_ylabel("training loss"), ax[0].legend()
    ev = [r for r in log if r.get("heldout") is not None]
    ax[1].plot([r["minutes"] for r in ev], [r["heldout"] for r in ev], marker="o", label="held-out")
    ax[1].plot([r["minutes"] for r in ev], [r["train_programs"] for r in ev], marker="s",
               label="training programs (selects the checkpoint)")
    ax[1].axhline(1.0, color="gray", ls="--", label="heuristic")
    imitation = [r["minutes"] for r in log if r.get("phase") == "imitation"]
    for a in ax if imitation else ():
        a.axvline(imitation[-1], color="black", ls=":", label="imitation | self-play")
    ax[1].set_xlabel("minutes"), ax[1].set_ylabel("time / heuristic (argmax policy)")
    ax[1].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def expert_solutions(inst, cpsat_seconds: float, cache: Path | None, local_search: bool = False):
    """``imitate.expert_solutions``, cached on disk by instance (CP-SAT under
    a wall-time limit is not deterministic: the cache makes reruns repeat;
    the local search is deterministic, cached for its minutes)."""
    from memfit.msa.core.solution import Solution
    from memfit.msa.learned import imitate
    path = None
    if cache is not None:
        key = (f"{inst.program}-{inst.mode}-{inst.capacity}-{inst.num_buffers}-{cpsat_seconds:g}"
               + ("-ls" if local_search else ""))
        path = cache / (key.replace("/", "_") + ".json")
        if path.exists():
            return [Solution.from_dict(d) for d in json.loads(path.read_text())]
    sols = imitate.expert_solutions(inst, cpsat_seconds, local_search)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([s.to_dict() for s in sols]))
    return sols


def add_experts(classes, cpsat_seconds: float, cache: Path | None,
                cpsat_max_buffers: int = 256, local_search: bool = False) -> int:
    """Expert rows for every training instance, into its class's expert
    buffer. CP-SAT only up to ``cpsat_max_buffers`` buffers (at 1,000+
    buffers it does not improve on the heuristic's hint in seconds:
    bench/msa_learned_bench_big.txt); a big class's best expert time per
    instance is kept for self-imitation (train.Trainer.self_imitate)."""
    import numpy as np
    from memfit._optional import require
    tqdm = require("tqdm", "training the learned player").tqdm
    from memfit.msa.core import game
    from memfit.msa.learned import imitate
    A = 1 + (game.NUM_PLANS - 1) * game.NUM_OFFSETS
    total = sum(len(cd.specs) for cd in classes)
    n = 0
    with tqdm(total=total, desc="expert games (heuristic, CP-SAT)", leave=False) as bar:
        for cd in classes:
            cd.best_time = np.full(len(cd.specs), np.inf)
            for i, spec in enumerate(cd.specs):
                limit = cpsat_seconds if spec.inst.num_buffers <= cpsat_max_buffers else 0.0
                sols = expert_solutions(spec.inst, limit, cache, local_search)
                rows, cd.best_time[i] = imitate.expert_rows(spec, float(cd.static.scale[i]), sols,
                                                            i, A, return_time=True)
                cd.add_expert(rows)
                bar.update()
            n += cd.expert_rows
    return n


def pretrain(trainer, classes, steps: int, log: list, t_start: float, round_: int = 0) -> None:
    """Supervised steps on the expert buffers, classes in proportion to their rows."""
    from memfit._optional import require
    tqdm = require("tqdm", "training the learned player").tqdm
    import numpy as np
    w = np.array([cd.expert_rows for cd in classes], float)
    rng = np.random.default_rng(trainer.cfg.seed + 1 + 1000 * round_)
    bar = tqdm(range(steps), desc="imitation")
    for k in bar:
        cd = classes[rng.choice(len(classes), p=w / w.sum())]
        loss, pl, vl = trainer.learn(cd, 1)
        if (k + 1) % 50 == 0 or k + 1 == steps:
            log.append({"phase": "imitation", "iteration": 0, "grad_steps": k + 1,
                        "minutes": (time.time() - t_start) / 60, "moves": 0,
                        "class": list(cd.key), "loss": loss, "policy_loss": pl,
                        "value_loss": vl, "heldout": None, "train_programs": None})
            bar.set_postfix(loss=f"{loss:.3f}", policy=f"{pl:.3f}", value=f"{vl:.4f}")


def _params_digest(net) -> str:
    """sha256 of a network's parameters (keys the search-expert cache)."""
    import jax
    import numpy as np
    h = hashlib.sha256()
    for leaf in jax.tree.leaves(net):
        h.update(np.asarray(leaf).tobytes())
    return h.hexdigest()[:16]


def _search_games(trainer, cd, simulations: int, chunk: int, cache: Path | None):
    """The agent's default games ``[N, M]`` on one class, played ``chunk``
    instances at a time (sorted by game length: a vmapped while loop runs to
    its longest lane, so one batch of the whole class plays every lane as
    long as the longest game; the last chunk is padded by repeating an
    instance, so every chunk shares one compile). ``cache``: each game's
    moves on disk, keyed by the network's parameters, the instance and the
    simulations (a rerun with other imitation settings replays them)."""
    import jax
    import numpy as np
    from memfit.msa.learned import agent
    N, M = cd.arrays.order.shape
    digest = _params_digest(trainer.net)
    keys = [f"{s.inst.program}-{s.inst.mode}-{s.inst.capacity}-{s.inst.num_buffers}"
            f"-s{simulations}-{digest}".replace("/", "_") for s in cd.specs]
    acts = np.zeros((N, M), np.int32)
    todo = []
    for i, k in enumerate(keys):
        path = cache / f"{k}.json" if cache is not None else None
        if path is not None and path.exists():
            acts[i] = json.loads(path.read_text())
        else:
            todo.append(i)
    todo.sort(key=lambda i: cd.specs[i].inst.num_buffers)
    chunk = max(1, min(chunk or len(todo), len(todo) or 1))
    for lo in range(0, len(todo), chunk):
        idx = todo[lo:lo + chunk]
        idx = idx + [idx[-1]] * (chunk - len(idx))
        sel = np.asarray(idx)
        batch = agent.Batch([cd.specs[i] for i in idx],
                            jax.tree.map(lambda x: x[sel], cd.arrays),
                            jax.tree.map(lambda x: x[sel], cd.static), 0.0)
        _, _, a = agent.play_batch(batch, simulations=simulations, params=trainer.net,
                                   return_actions=True)
        a = np.asarray(a)
        for j, i in enumerate(idx):
            acts[i] = a[j]
            if cache is not None:
                cache.mkdir(parents=True, exist_ok=True)
                (cache / f"{keys[i]}.json").write_text(json.dumps([int(x) for x in a[j]]))
    return acts


def search_experts(trainer, classes, simulations: int, max_bucket: int, chunk: int = 0,
                   cache: Path | None = None) -> tuple[int, int]:
    """Expert iteration: the agent's own play (agent.play_batch's default:
    the search with the policy seed, root rule max_kept and polish) on every
    training instance of the classes up to ``max_bucket`` buffers; where its
    game is faster than the best expert game known (the heuristic's,
    CP-SAT's, an earlier round's), it replaces that instance's expert rows
    (train.imitate_faster_games). The prior then learns moves the search
    found beyond the heuristic's, which the search's rollout already plays.
    ``chunk``, ``cache``: see _search_games.
    Returns (rows added, instances improved)."""
    import numpy as np
    from memfit.msa.learned import play, train
    rows = improved = 0
    for cd in classes:
        if cd.key[0] > max_bucket:
            continue
        t0 = time.process_time()
        acts = _search_games(trainer, cd, simulations, chunk, cache)
        times = np.asarray(play.replay_batch(cd.arrays, acts).time)
        before = cd.best_time.copy()
        rows += train.imitate_faster_games(cd, times, acts)
        gain = cd.best_time < before * (1 - 1e-6)
        improved += int(gain.sum())
        print(f"  search experts {cd.key}: {len(cd.specs)} games, faster than the best known on "
              f"{int(gain.sum())} (geomean {np.exp(np.mean(np.log(cd.best_time / before))):.4f}), "
              f"{time.process_time() - t0:.0f} s CPU", file=sys.stderr, flush=True)
    return rows, improved


def big_training_instances():
    """The big checkpoint's training set: the manifest's training programs
    above the searched buckets and programs.big_training_instances()."""
    from memfit.msa.learned import programs, train
    return ([i for i in load_manifest("train") if i.num_buffers > train.SEARCH_MAX_BUCKET]
            + programs.big_training_instances())


def argmax_times(trainer, classes, baseline) -> dict:
    """Per instance (program, mode, capacity): the policy's argmax time over
    the heuristic's."""
    import jax
    from memfit.msa.learned import play
    out = {}
    for cd in classes:
        final, _, _, _ = play.play_batch(trainer.net, cd.arrays, cd.static, jax.random.PRNGKey(0),
                                         record=False)
        for i, spec in enumerate(cd.specs):
            k = (spec.inst.program, spec.inst.mode, spec.inst.capacity)
            out[k] = float(final.time[i]) / baseline[k]
    return out


def _geomean(xs) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def train_big(args) -> int:
    """--big-checkpoint: the checkpoint the agent plays above the searched
    buckets with (agent.BIG_CHECKPOINT). Fine-tuned from --init (default:
    the packaged small checkpoint) on the big training programs by
    imitation of their local-searched games (imitate.expert_solutions with
    local_search), then --ls-rounds rounds of train.Trainer.local_search_imitate
    and imitation steps.
    Kept: the network with the best argmax score on these training
    instances (the initial one included); no held-out instance is played."""
    from memfit.msa.learned import checkpoint, train
    t_start = time.time()
    insts = big_training_instances()
    classes = train.group_by_class(encode_all(insts, "encode big training instances"))
    baseline = heuristic_times([s for cd in classes for s in cd.specs])
    init = args.init or str(checkpoint.DEFAULT_PATH)
    net, _ = checkpoint.load(init)
    cfg = train.Config(seed=args.seed, learning_rate=args.learning_rate)
    trainer = train.Trainer(classes, cfg, net=net)
    add_experts(classes, 0.0, Path(args.expert_cache) if args.expert_cache else None,
                cpsat_max_buffers=0, local_search=True)
    experts = {(s.inst.program, s.inst.mode, s.inst.capacity): float(t) / baseline[
        s.inst.program, s.inst.mode, s.inst.capacity]
        for cd in classes for s, t in zip(cd.specs, cd.best_time)}
    log, scores = [], []

    def score(stage):
        per = argmax_times(trainer, classes, baseline)
        scores.append({"stage": stage, "geomean": _geomean(per.values()),
                       "minutes": (time.time() - t_start) / 60,
                       "per_instance": {"-".join(map(str, k)): v for k, v in per.items()}})
        print(f"{stage}: argmax / heuristic {scores[-1]['geomean']:.4f} on {len(per)} big "
              f"training instances", file=sys.stderr, flush=True)
        return scores[-1]["geomean"]
    best = (score("initial"), trainer.net, "initial")
    print(f"{len(insts)} big training instances; local-searched expert games "
          f"{_geomean(experts.values()):.4f} of the heuristic's time; setup "
          f"{time.time() - t_start:.0f}s", file=sys.stderr, flush=True)
    pretrain(trainer, classes, args.pretrain_steps, log, t_start)
    if (g := score("imitation")) < best[0]:
        best = (g, trainer.net, "imitation")
    for r in range(args.ls_rounds):
        improved = sum(trainer.local_search_imitate(cd) for cd in classes)
        print(f"local-search round {r + 1}: {improved} expert games replaced", file=sys.stderr)
        pretrain(trainer, classes, args.search_expert_steps, log, t_start, r + 1)
        if (g := score(f"round {r + 1}")) < best[0]:
            best = (g, trainer.net, f"round {r + 1}")
    meta = {"training": {"big_checkpoint": True, "init": {
        "path": str(init), "sha256": hashlib.sha256(Path(init).read_bytes()).hexdigest()},
        "instances": len(insts), "seed": args.seed, "pretrain_steps": args.pretrain_steps,
        "ls_rounds": args.ls_rounds, "round_steps": args.search_expert_steps,
        "learning_rate": args.learning_rate, "kept": best[2],
        "big_train_argmax_over_heuristic": {s["stage"]: s["geomean"] for s in scores},
        "local_searched_experts_over_heuristic": _geomean(experts.values()),
        "minutes": (time.time() - t_start) / 60}}
    checkpoint.save(args.out, best[1], meta)
    Path(args.log).write_text(json.dumps({"meta": meta, "scores": scores, "curve": log},
                                         indent=1) + "\n")
    print(f"wrote {args.out}, {args.log}; kept {best[2]} ({best[0]:.4f})", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--simulations", type=int, default=16)
    ap.add_argument("--large-simulations", type=int, default=8)
    ap.add_argument("--large-every", type=int, default=5)
    ap.add_argument("--synthetic", type=int, default=60)
    ap.add_argument("--programs", type=int, default=30, help="random jax programs")
    ap.add_argument("--learning-rate", type=float, default=3e-4)
    ap.add_argument("--eval-every", type=int, default=20)
    ap.add_argument("--cpsat-seconds", type=float, default=2.0,
                    help="CP-SAT's limit per training instance for the expert games (0: none)")
    ap.add_argument("--pretrain-steps", type=int, default=1000)
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="stop self-play after this many minutes of the whole run")
    ap.add_argument("--expert-fraction", type=float, default=0.5)
    ap.add_argument("--init", default=None,
                    help="fine-tune: start from this checkpoint's parameters (else a fresh network)")
    ap.add_argument("--cpsat-max-buffers", type=int, default=256,
                    help="CP-SAT expert games only up to this many buffers")
    ap.add_argument("--curve-max-buffers", type=int, default=256,
                    help="the curve's held-out score over instances up to this many buffers "
                         "(the 1,000+-buffer held-out programs take minutes per argmax game)")
    ap.add_argument("--no-big", action="store_true",
                    help="leave out the manifest's 1,000+-buffer training programs")
    ap.add_argument("--search-experts", type=int, default=0,
                    help="expert-iteration rounds after imitation: the agent's own searched and "
                         "polished games join the expert games where faster, then "
                         "--search-expert-steps imitation steps (search_experts)")
    ap.add_argument("--search-expert-steps", type=int, default=300)
    ap.add_argument("--save-rounds", action="store_true",
                    help="also write each expert-iteration round's network to OUT.roundN.npz")
    ap.add_argument("--search-expert-sims", type=int, default=16)
    ap.add_argument("--search-expert-max-bucket", type=int, default=64)
    ap.add_argument("--search-expert-batch", type=int, default=16,
                    help="instances per searched batch (0: a whole class at once)")
    ap.add_argument("--search-expert-cache", default=str(ROOT / "bench/out/msa_search_expert_cache"),
                    help="the agent's searched games, keyed by network and instance ('': none)")
    ap.add_argument("--value-mode", default="network",
                    help="the self-play search's leaf value: network, zero or rollout")
    ap.add_argument("--expert-cache", default=str(ROOT / "bench/out/msa_expert_cache"))
    ap.add_argument("--out", default=str(ROOT / "python/memfit/msa/learned/agent.npz"))
    ap.add_argument("--log", default=str(ROOT / "bench/msa_agent_log.json"))
    ap.add_argument("--plot", default=str(ROOT / "docs/msa_training_curve.png"))
    ap.add_argument("--big-checkpoint", action="store_true",
                    help="train the checkpoint played above the searched buckets instead "
                         "(train_big; writes --out, default agent_big.npz)")
    ap.add_argument("--ls-rounds", type=int, default=1,
                    help="--big-checkpoint: expert-iteration rounds with the local search "
                         "(train.Trainer.local_search_imitate), each followed by --search-expert-steps steps")
    args = ap.parse_args(argv)
    from memfit._optional import MissingDependency, require
    try:
        tqdm = require("tqdm", "training the learned player").tqdm
        require("optax", "training the learned player")
    except MissingDependency as e:
        sys.exit(str(e))
    if args.big_checkpoint:
        if args.out == ap.get_default("out"):
            args.out = str(ROOT / "python/memfit/msa/learned/agent_big.npz")
        if args.log == ap.get_default("log"):
            args.log = str(ROOT / "bench/msa_agent_big_log.json")
        return train_big(args)
    from memfit.msa.learned import checkpoint, programs, train

    t_start = time.time()
    manifest = [i for i in load_manifest("train")
                if not (args.no_big and i.num_buffers > train.SEARCH_MAX_BUCKET)]
    train_insts = (manifest + programs.training_instances(range(args.programs))
                   + synthetic_instances(args.synthetic, args.seed))
    classes = train.group_by_class(encode_all(train_insts, "encode training instances"))
    held = train.group_by_class(encode_all(
        [i for i in load_manifest("heldout") if i.num_buffers <= args.curve_max_buffers],
        "encode held-out"))
    # The big training programs: scored (argmax) before and after, not per evaluation.
    big_val = train.group_by_class([(s, f) for cd in classes if train.is_big(cd)
                                    for s, f in zip(cd.specs, _unstacked(cd))
                                    if not s.inst.program.startswith(("random-", "synthetic"))])
    # Checkpoint selection on the manifest's training programs (never held-out).
    val = train.group_by_class([(s, f) for cd in classes for s, f in zip(cd.specs, _unstacked(cd))
                                if s.inst.program in TRAIN_PROGRAMS])
    baseline = heuristic_times([s for cd in held + val + big_val for s in cd.specs])
    cfg = train.Config(seed=args.seed, simulations=args.simulations,
                       learning_rate=args.learning_rate, expert_fraction=args.expert_fraction,
                       value_mode=args.value_mode)
    init_net, init_meta = (checkpoint.load(args.init) if args.init else (None, None))
    trainer = train.Trainer(classes, cfg, net=init_net)
    n_expert = add_experts(classes, args.cpsat_seconds,
                           Path(args.expert_cache) if args.expert_cache else None,
                           args.cpsat_max_buffers)
    big_before = heldout_score(trainer, big_val, baseline)
    n_expert += sum(trainer.self_imitate(cd) for cd in classes if train.is_big(cd))
    print(f"{n_expert} expert moves; setup {time.time() - t_start:.0f}s", file=sys.stderr)
    print(f"{len(train_insts)} training instances in classes "
          f"{[(c.key, len(c.specs)) for c in classes]}; held-out {sum(len(c.specs) for c in held)}; "
          f"setup {time.time() - t_start:.0f}s", file=sys.stderr)

    init_score = heldout_score(trainer, val, baseline) if args.init else None
    if args.init:
        print(f"initial checkpoint {args.init}: training programs {init_score:.3f}, big training "
              f"programs {big_before} (argmax / heuristic)", file=sys.stderr)
    log, steps, moves, score, vscore = [], 0, 0, None, None
    pretrain(trainer, classes, args.pretrain_steps, log, t_start)
    steps = args.pretrain_steps
    score, vscore = heldout_score(trainer, held, baseline), heldout_score(trainer, val, baseline)
    if log:
        log[-1].update(heldout=score, train_programs=vscore)
    print(f"after imitation: held-out argmax / heuristic {score:.3f}, training programs "
          f"{vscore:.3f}", file=sys.stderr)
    rounds = []
    for r in range(args.search_experts):
        added, improved = search_experts(
            trainer, classes, args.search_expert_sims, args.search_expert_max_bucket,
            args.search_expert_batch,
            Path(args.search_expert_cache) if args.search_expert_cache else None)
        pretrain(trainer, classes, args.search_expert_steps, log, t_start, r + 1)
        steps += args.search_expert_steps
        score, vscore = heldout_score(trainer, held, baseline), heldout_score(trainer, val, baseline)
        if log:
            log[-1].update(heldout=score, train_programs=vscore, phase="expert iteration",
                           iteration=0, grad_steps=steps)
        if args.save_rounds:
            checkpoint.save(f"{args.out}.round{r + 1}.npz", trainer.net,
                            {"training": {"search_expert_round": r + 1, "init": args.init}})
        rounds.append({"round": r + 1, "rows_added": added, "instances_improved": improved,
                       "train_programs": vscore, "minutes": (time.time() - t_start) / 60})
        print(f"expert iteration round {r + 1}: {improved} instances improved ({added} rows); "
              f"held-out argmax / heuristic {score:.3f}, training programs {vscore:.3f}",
              file=sys.stderr, flush=True)
    best = (vscore, trainer.net, 0)
    bar = tqdm(range(args.iterations), desc="train")
    for it in bar:
        if args.max_minutes is not None and time.time() - t_start > 60 * args.max_minutes:
            break
        cd = schedule(classes, it, args.large_every)
        large = cd.key[0] > 64
        if train.is_big(cd):
            moves += trainer.self_imitate(cd)
        else:
            moves += trainer.self_play(cd, args.large_simulations if large else None,
                                       4 if large else None)
        n_updates = 2 * cfg.updates_per_batch if large else cfg.updates_per_batch
        loss, pl, vl = trainer.learn(cd, n_updates)
        steps += n_updates
        evaluate = ((it + 1) % args.eval_every == 0 or it + 1 == args.iterations
                    or (args.max_minutes is not None
                        and time.time() - t_start > 60 * args.max_minutes))
        if evaluate:
            score = heldout_score(trainer, held, baseline)
            vscore = heldout_score(trainer, val, baseline)
            if vscore < best[0]:
                best = (vscore, trainer.net, it + 1)
        rec = {"phase": "self-play", "iteration": it + 1, "minutes": (time.time() - t_start) / 60, "grad_steps": steps,
               "moves": moves, "class": list(cd.key), "loss": loss, "policy_loss": pl,
               "value_loss": vl, "heldout": score if evaluate else None,
               "train_programs": vscore if evaluate else None}
        log.append(rec)
        bar.set_postfix(steps=steps, loss=f"{loss:.3f}",
                        heldout=f"{score:.3f}" if score is not None else "-",
                        train_progs=f"{vscore:.3f}" if vscore is not None else "-")
    trainer.net = best[1]
    big_after = heldout_score(trainer, big_val, baseline)
    meta = {"training": {"init": (None if not args.init else
                                  {"path": str(args.init),
                                   "sha256": hashlib.sha256(Path(args.init).read_bytes()).hexdigest(),
                                   "train_programs_argmax_over_heuristic": init_score,
                                   "training": (init_meta or {}).get("training")}),
                         "big_train_programs_argmax_over_heuristic":
                             {"before": big_before, "kept": big_after},
                         "cpsat_max_buffers": args.cpsat_max_buffers,
                         "search_experts": {"rounds": rounds, "steps": args.search_expert_steps,
                                            "simulations": args.search_expert_sims,
                                            "max_bucket": args.search_expert_max_bucket},
                         "curve_max_buffers": args.curve_max_buffers,"iterations": sum(r["phase"] == "self-play" for r in log),
                         "seed": args.seed,
                         "pretrain_steps": args.pretrain_steps, "expert_moves": n_expert,
                         "cpsat_seconds": args.cpsat_seconds,
                         "expert_fraction": args.expert_fraction, "value_mode": args.value_mode,
                         "simulations": args.simulations, "instances": len(train_insts),
                         "grad_steps": steps, "moves": moves,
                         "minutes": (time.time() - t_start) / 60,
                         "learning_rate": args.learning_rate,
                         "selected_iteration": best[2],
                         "train_programs_argmax_over_heuristic": best[0],
                         "heldout_argmax_over_heuristic_at_selected": next(
                             (r["heldout"] for r in reversed(log)
                              if r["iteration"] == best[2] and r["heldout"] is not None), None),
                         "heldout_argmax_over_heuristic_last": score}}
    checkpoint.save(args.out, best[1], meta)
    Path(args.log).write_text(json.dumps({"meta": meta, "curve": log}, indent=1) + "\n")
    plot_curve(log, Path(args.plot))
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1e6:.2f} MB), {args.log}, "
          f"{args.plot}; kept iteration {best[2]} (training programs {best[0]:.3f}); "
          f"held-out argmax / heuristic last {score:.3f}; big training programs "
          f"{big_before} -> {big_after}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
