"""The recipe that trains the packaged checkpoints: ``memfit train-agent``.

Training instances: the manifest's training programs (``Recipe.data``),
random jax programs exported with memfit-export-buffers (programs.py) and
synthetic instances (msa.io.synthetic). The held-out programs are never
played for training: they are only scored (the policy's argmax, no search)
to draw the curve shown in the progress bar and the log. The checkpoint
written is the one with the best *training-side* score (the argmax policy
on the manifest's training instances vs the heuristic), never chosen by the
held-out score (iteration 0: right after imitation).

Two phases: imitation (supervised steps on expert games: the better of the
heuristic's and CP-SAT's solution of each *training* instance, replayed
through the game; imitate.py), then self-play with Gumbel MuZero, half of
every minibatch still drawn from the expert games. CP-SAT under a wall-time
limit is not deterministic: its solutions are cached (``expert_cache``) so
that reruns repeat.

The manifest's 1,000+-buffer training programs (classes above
train.SEARCH_MAX_BUCKET) are never searched: their expert games are the
heuristic's (CP-SAT only up to ``cpsat_max_buffers``), replaced by the
policy's own argmax game wherever that is faster (train.Trainer.
self_imitate, at the start and at the class's self-play turns). The curve's
held-out score covers held-out instances up to ``curve_max_buffers``; the
big training programs are scored before and after only. ``init``
fine-tunes from a checkpoint (recorded with its sha256 in the meta).

Expert iteration (``search_experts`` rounds, after imitation): each round
plays the agent's own default (the search with the policy seed, root rule
max_kept, polish) on every training instance up to
``search_expert_max_bucket`` buffers; its game replaces the instance's
expert game where faster (train.imitate_faster_games), then
``search_expert_steps`` imitation steps; ``save_rounds`` keeps each round's
network (OUT.roundN.npz).

``big_checkpoint`` trains the checkpoint the agent plays above the searched
buckets (agent_big.npz; ``Recipe.big()`` holds the settings it was trained
with): the small checkpoint fine-tuned on the big training programs and
variants of their families (programs.big_training_instances) by imitation of
their local-searched games, then ``ls_rounds`` rounds of expert iteration
with the local search as the improver.

    memfit train-agent [--iterations 100] [--seed 0] [--out agent.npz]
    memfit train-agent --big-checkpoint

Seeded: the same settings on the same machine give the same checkpoint.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


def _doc(text: str, **kw):
    return field(metadata={"help": text}, **kw)


@dataclass(frozen=True)
class Recipe:
    """Every setting of a training run; ``memfit train-agent`` has one option per field."""
    seed: int = _doc("seeds the network, the synthetic instances and the sampling", default=0)
    iterations: int = _doc("self-play iterations after imitation", default=100)
    simulations: int = _doc("search simulations per self-play move", default=16)
    large_simulations: int = _doc("search simulations per move in classes above 64 buffers",
                                  default=8)
    large_every: int = _doc("a class above 64 buffers plays every this many iterations",
                            default=5)
    synthetic: int = _doc("synthetic training instances", default=60)
    programs: int = _doc("random jax programs exported as training instances", default=30)
    big_programs: bool = _doc("include the manifest's 1,000+-buffer training programs",
                              default=True)
    learning_rate: float = _doc("AdamW's learning rate", default=3e-4)
    expert_fraction: float = _doc("share of each minibatch drawn from the expert games",
                                  default=0.5)
    value_mode: str = _doc("the self-play search's leaf value (play.VALUE_MODES)",
                           default="rollout")
    eval_every: int = _doc("self-play iterations between scores (and checkpoint choices)",
                           default=20)
    max_minutes: float | None = _doc("stop self-play after this many minutes of the run",
                                     default=None)
    cpsat_seconds: float = _doc("CP-SAT's limit per training instance for the expert games "
                                "(0: none)", default=2.0)
    cpsat_max_buffers: int = _doc("CP-SAT expert games only up to this many buffers",
                                  default=256)
    pretrain_steps: int = _doc("imitation steps on the expert games", default=1000)
    curve_max_buffers: int = _doc("the curve's held-out score over instances up to this many "
                                  "buffers", default=256)
    search_experts: int = _doc("expert-iteration rounds with the agent's own searched and "
                               "polished games", default=0)
    search_expert_steps: int = _doc("imitation steps after each expert-iteration round",
                                    default=300)
    search_expert_sims: int = _doc("search simulations of the expert-iteration games",
                                   default=16)
    search_expert_max_bucket: int = _doc("expert iteration only on classes up to this many "
                                         "buffers", default=64)
    search_expert_batch: int = _doc("instances per searched batch (0: a whole class at once)",
                                    default=16)
    save_rounds: bool = _doc("also write each expert-iteration round's network to "
                             "OUT.roundN.npz", default=False)
    init: str | None = _doc("fine-tune from this checkpoint (else a fresh network; "
                            "big_checkpoint: the packaged one)", default=None)
    big_checkpoint: bool = _doc("train the checkpoint played above the searched buckets",
                                default=False)
    ls_rounds: int = _doc("big_checkpoint: expert-iteration rounds with the local search",
                          default=1)
    static_life: bool = _doc("the first buffer round's lifetime means over a static op "
                             "embedding (network.static_life; added to an init that lacks it)",
                             default=False)
    data: str = _doc("the directory of manifest.json and its instances", default="data/msa")
    expert_cache: str = _doc("cache of the expert games ('': none)",
                             default="bench/out/msa_expert_cache")
    search_expert_cache: str = _doc("cache of the expert-iteration games ('': none)",
                                    default="bench/out/msa_search_expert_cache")
    out: str | None = _doc("the checkpoint written (default: the packaged agent.npz, "
                           "agent_big.npz with big_checkpoint)", default=None)
    log: str | None = _doc("the run's JSON log (default: bench/msa_agent_log.json, "
                           "bench/msa_agent_big_log.json with big_checkpoint)", default=None)
    plot: str | None = _doc("the training curve's PNG ('': none)",
                            default="docs/msa_training_curve.png")

    @classmethod
    def big(cls, **changes) -> "Recipe":
        """The settings agent_big.npz was trained with."""
        return cls(**{"big_checkpoint": True, "pretrain_steps": 400, "search_expert_steps": 150,
                      **changes})

    def out_path(self) -> Path:
        from . import checkpoint
        if self.out:
            return Path(self.out)
        return checkpoint.BIG_PATH if self.big_checkpoint else checkpoint.DEFAULT_PATH

    def log_path(self) -> Path:
        return Path(self.log or ("bench/msa_agent_big_log.json" if self.big_checkpoint
                                 else "bench/msa_agent_log.json"))


def _cache(path: str) -> Path | None:
    return Path(path) if path else None


def load_manifest(recipe: Recipe, split: str):
    from ..core.instance import Instance
    data = Path(recipe.data)
    man = json.loads((data / "manifest.json").read_text())
    return [Instance.load(data / f) for f in man[split]]


def synthetic_instances(n: int, seed: int):
    import numpy as np
    from ..io.synthetic import random_instance
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


def _tqdm():
    from ..._optional import require
    return require("tqdm", "training the learned player").tqdm


def _unstacked(cd):
    from . import play
    return [play.unstack(cd.static, i) for i in range(len(cd.specs))]


def encode_all(insts, desc: str):
    from . import play
    out = []
    for inst in _tqdm()(insts, desc=desc, leave=False):
        spec, sf = play.encode_padded(inst)
        out.append((play.pad_access(spec, play.canonical_width(spec.arrays.acc.shape[1])), sf))
    return out


def heldout_score(trainer, classes, baseline) -> float | None:
    """Geometric mean over held-out instances of the policy's argmax time
    over the heuristic's time (the game's float32 time)."""
    times = argmax_times(trainer, classes, baseline)
    return _geomean(times.values()) if times else None


def heuristic_times(specs) -> dict:
    from ..core.validator import validate
    from ..solvers.heuristic import assign
    return {(s.inst.program, s.inst.mode, s.inst.capacity):
            validate(s.inst, assign(s.inst)).estimated_time for s in specs}


def schedule(classes, iteration: int, large_every: int):
    """Which class plays this iteration: classes of 256+ buffers every
    ``large_every``-th iteration, the small ones in turn otherwise."""
    small = [c for c in classes if c.key[0] <= 64]
    large = [c for c in classes if c.key[0] > 64]
    if large and (not small or iteration % large_every == large_every - 1):
        return large[(iteration // large_every) % len(large)]
    return small[iteration % len(small)]


def plot_curve(log: list[dict], path: Path) -> None:
    from ..._optional import matplotlib_agg, require
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
    from ..core.solution import Solution
    from . import imitate
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
    buffers it does not improve on the heuristic's hint in seconds); a big
    class's best expert time per instance is kept for self-imitation
    (train.Trainer.self_imitate)."""
    import numpy as np
    from ..core import game
    from . import imitate
    A = 1 + (game.NUM_PLANS - 1) * game.NUM_OFFSETS
    total = sum(len(cd.specs) for cd in classes)
    n = 0
    with _tqdm()(total=total, desc="expert games (heuristic, CP-SAT)", leave=False) as bar:
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
    import numpy as np
    w = np.array([cd.expert_rows for cd in classes], float)
    rng = np.random.default_rng(trainer.cfg.seed + 1 + 1000 * round_)
    bar = _tqdm()(range(steps), desc="imitation")
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
    from . import agent
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
        _, _, a = agent.play_batch(batch, agent.AgentConfig(simulations=simulations),
                                   params=trainer.net, return_actions=True)
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
    from . import play, train
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


def big_training_instances(recipe: Recipe):
    """The big checkpoint's training set: the manifest's training programs
    above the searched buckets and programs.big_training_instances()."""
    from . import programs, train
    return ([i for i in load_manifest(recipe, "train") if i.num_buffers > train.SEARCH_MAX_BUCKET]
            + programs.big_training_instances())


def argmax_times(trainer, classes, baseline) -> dict:
    """Per instance (program, mode, capacity): the policy's argmax time over
    the heuristic's."""
    import jax
    from . import play
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


def _sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def train_big(recipe: Recipe) -> int:
    """The checkpoint the agent plays above the searched buckets
    (agent.AgentConfig.big_checkpoint). Fine-tuned from ``init`` (default:
    the packaged small checkpoint) on the big training programs by
    imitation of their local-searched games (imitate.expert_solutions with
    local_search), then ``ls_rounds`` rounds of train.Trainer.
    local_search_imitate and imitation steps. Kept: the network with the
    best argmax score on these training instances (the initial one
    included); no held-out instance is played."""
    from . import checkpoint, network, train
    t_start = time.time()
    insts = big_training_instances(recipe)
    classes = train.group_by_class(encode_all(insts, "encode big training instances"))
    baseline = heuristic_times([s for cd in classes for s in cd.specs])
    init = recipe.init or str(checkpoint.DEFAULT_PATH)
    net, _ = checkpoint.load(init)
    if recipe.static_life:
        net = network.with_static_life(net)
    cfg = train.Config(seed=recipe.seed, learning_rate=recipe.learning_rate)
    trainer = train.Trainer(classes, cfg, net=net)
    add_experts(classes, 0.0, _cache(recipe.expert_cache), cpsat_max_buffers=0,
                local_search=True)
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
    pretrain(trainer, classes, recipe.pretrain_steps, log, t_start)
    if (g := score("imitation")) < best[0]:
        best = (g, trainer.net, "imitation")
    for r in range(recipe.ls_rounds):
        improved = sum(trainer.local_search_imitate(cd) for cd in classes)
        print(f"local-search round {r + 1}: {improved} expert games replaced", file=sys.stderr)
        pretrain(trainer, classes, recipe.search_expert_steps, log, t_start, r + 1)
        if (g := score(f"round {r + 1}")) < best[0]:
            best = (g, trainer.net, f"round {r + 1}")
    meta = {"training": {"big_checkpoint": True, "init": {"path": str(init),
                                                          "sha256": _sha256(init)},
                         "instances": len(insts), "seed": recipe.seed,
                         "pretrain_steps": recipe.pretrain_steps, "ls_rounds": recipe.ls_rounds,
                         "static_life": recipe.static_life,
                         "round_steps": recipe.search_expert_steps,
                         "learning_rate": recipe.learning_rate, "kept": best[2],
                         "big_train_argmax_over_heuristic": {s["stage"]: s["geomean"]
                                                             for s in scores},
                         "local_searched_experts_over_heuristic": _geomean(experts.values()),
                         "minutes": (time.time() - t_start) / 60}}
    out, log_path = recipe.out_path(), recipe.log_path()
    checkpoint.save(out, best[1], meta)
    log_path.write_text(json.dumps({"meta": meta, "scores": scores, "curve": log}, indent=1)
                        + "\n")
    print(f"wrote {out}, {log_path}; kept {best[2]} ({best[0]:.4f})", file=sys.stderr)
    return 0


def train_small(recipe: Recipe) -> int:
    """The checkpoint the agent plays up to the searched buckets
    (agent.npz): imitation, expert iteration, then self-play."""
    from . import checkpoint, network, programs, train
    t_start = time.time()
    manifest = [i for i in load_manifest(recipe, "train")
                if recipe.big_programs or i.num_buffers <= train.SEARCH_MAX_BUCKET]
    train_insts = (manifest + programs.training_instances(range(recipe.programs))
                   + synthetic_instances(recipe.synthetic, recipe.seed))
    classes = train.group_by_class(encode_all(train_insts, "encode training instances"))
    held = train.group_by_class(encode_all(
        [i for i in load_manifest(recipe, "heldout") if i.num_buffers <= recipe.curve_max_buffers],
        "encode held-out"))
    # The big training programs: scored (argmax) before and after, not per evaluation.
    big_val = train.group_by_class([(s, f) for cd in classes if train.is_big(cd)
                                    for s, f in zip(cd.specs, _unstacked(cd))
                                    if not s.inst.program.startswith(("random-", "synthetic"))])
    # Checkpoint selection on the manifest's training programs (never held-out).
    val = train.group_by_class([(s, f) for cd in classes for s, f in zip(cd.specs, _unstacked(cd))
                                if s.inst.program in TRAIN_PROGRAMS])
    baseline = heuristic_times([s for cd in held + val + big_val for s in cd.specs])
    cfg = train.Config(seed=recipe.seed, simulations=recipe.simulations,
                       learning_rate=recipe.learning_rate, expert_fraction=recipe.expert_fraction,
                       value_mode=recipe.value_mode)
    init_net, init_meta = (checkpoint.load(recipe.init) if recipe.init else (None, None))
    if recipe.static_life:
        init_net = network.with_static_life(init_net if init_net is not None
                                            else network.init_params(recipe.seed))
    trainer = train.Trainer(classes, cfg, net=init_net)
    n_expert = add_experts(classes, recipe.cpsat_seconds, _cache(recipe.expert_cache),
                           recipe.cpsat_max_buffers)
    big_before = heldout_score(trainer, big_val, baseline)
    n_expert += sum(trainer.self_imitate(cd) for cd in classes if train.is_big(cd))
    print(f"{n_expert} expert moves; {len(train_insts)} training instances in classes "
          f"{[(c.key, len(c.specs)) for c in classes]}; "
          f"held-out {sum(len(c.specs) for c in held)}; setup {time.time() - t_start:.0f}s",
          file=sys.stderr)

    init_score = heldout_score(trainer, val, baseline) if recipe.init else None
    if recipe.init:
        print(f"initial checkpoint {recipe.init}: training programs {init_score:.3f}, big "
              f"training programs {big_before} (argmax / heuristic)", file=sys.stderr)
    log, moves = [], 0
    pretrain(trainer, classes, recipe.pretrain_steps, log, t_start)
    steps = recipe.pretrain_steps
    score, vscore = heldout_score(trainer, held, baseline), heldout_score(trainer, val, baseline)
    if log:
        log[-1].update(heldout=score, train_programs=vscore)
    print(f"after imitation: held-out argmax / heuristic {score}, training programs "
          f"{vscore}", file=sys.stderr)
    rounds = []
    for r in range(recipe.search_experts):
        added, improved = search_experts(
            trainer, classes, recipe.search_expert_sims, recipe.search_expert_max_bucket,
            recipe.search_expert_batch, _cache(recipe.search_expert_cache))
        pretrain(trainer, classes, recipe.search_expert_steps, log, t_start, r + 1)
        steps += recipe.search_expert_steps
        score = heldout_score(trainer, held, baseline)
        vscore = heldout_score(trainer, val, baseline)
        if log:
            log[-1].update(heldout=score, train_programs=vscore, phase="expert iteration",
                           iteration=0, grad_steps=steps)
        if recipe.save_rounds:
            checkpoint.save(f"{recipe.out_path()}.round{r + 1}.npz", trainer.net,
                            {"training": {"search_expert_round": r + 1, "init": recipe.init}})
        rounds.append({"round": r + 1, "rows_added": added, "instances_improved": improved,
                       "train_programs": vscore, "minutes": (time.time() - t_start) / 60})
        print(f"expert iteration round {r + 1}: {improved} instances improved ({added} rows); "
              f"held-out argmax / heuristic {score}, training programs {vscore}",
              file=sys.stderr, flush=True)
    best = (vscore, trainer.net, 0)
    bar = _tqdm()(range(recipe.iterations), desc="train")
    for it in bar:
        out_of_time = (recipe.max_minutes is not None
                       and time.time() - t_start > 60 * recipe.max_minutes)
        if out_of_time:
            break
        cd = schedule(classes, it, recipe.large_every)
        large = cd.key[0] > 64
        if train.is_big(cd):
            moves += trainer.self_imitate(cd)
        else:
            moves += trainer.self_play(cd, recipe.large_simulations if large else None,
                                       4 if large else None)
        n_updates = 2 * cfg.updates_per_batch if large else cfg.updates_per_batch
        loss, pl, vl = trainer.learn(cd, n_updates)
        steps += n_updates
        evaluate = ((it + 1) % recipe.eval_every == 0 or it + 1 == recipe.iterations
                    or (recipe.max_minutes is not None
                        and time.time() - t_start > 60 * recipe.max_minutes))
        if evaluate:
            score = heldout_score(trainer, held, baseline)
            vscore = heldout_score(trainer, val, baseline)
            if vscore is not None and (best[0] is None or vscore < best[0]):
                best = (vscore, trainer.net, it + 1)
        log.append({"phase": "self-play", "iteration": it + 1,
                    "minutes": (time.time() - t_start) / 60, "grad_steps": steps,
                    "moves": moves, "class": list(cd.key), "loss": loss, "policy_loss": pl,
                    "value_loss": vl, "heldout": score if evaluate else None,
                    "train_programs": vscore if evaluate else None})
        bar.set_postfix(steps=steps, loss=f"{loss:.3f}",
                        heldout=f"{score:.3f}" if score is not None else "-",
                        train_progs=f"{vscore:.3f}" if vscore is not None else "-")
    trainer.net = best[1]
    big_after = heldout_score(trainer, big_val, baseline)
    meta = {"training": {
        "recipe": dataclasses.asdict(recipe),
        "init": (None if not recipe.init else
                 {"path": str(recipe.init), "sha256": _sha256(recipe.init),
                  "train_programs_argmax_over_heuristic": init_score,
                  "training": (init_meta or {}).get("training")}),
        "big_train_programs_argmax_over_heuristic": {"before": big_before, "kept": big_after},
        "cpsat_max_buffers": recipe.cpsat_max_buffers,
        "search_experts": {"rounds": rounds, "steps": recipe.search_expert_steps,
                           "simulations": recipe.search_expert_sims,
                           "max_bucket": recipe.search_expert_max_bucket},
        "curve_max_buffers": recipe.curve_max_buffers,
        "iterations": sum(r["phase"] == "self-play" for r in log),
        "seed": recipe.seed, "pretrain_steps": recipe.pretrain_steps, "expert_moves": n_expert,
        "cpsat_seconds": recipe.cpsat_seconds, "expert_fraction": recipe.expert_fraction,
        "value_mode": recipe.value_mode, "simulations": recipe.simulations,
        "instances": len(train_insts), "grad_steps": steps, "moves": moves,
        "minutes": (time.time() - t_start) / 60, "learning_rate": recipe.learning_rate,
        "selected_iteration": best[2], "train_programs_argmax_over_heuristic": best[0],
        "heldout_argmax_over_heuristic_at_selected": next(
            (r["heldout"] for r in reversed(log)
             if r["iteration"] == best[2] and r["heldout"] is not None), None),
        "heldout_argmax_over_heuristic_last": score}}
    out, log_path = recipe.out_path(), recipe.log_path()
    checkpoint.save(out, best[1], meta)
    log_path.write_text(json.dumps({"meta": meta, "curve": log}, indent=1) + "\n")
    if recipe.plot:
        plot_curve(log, Path(recipe.plot))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB), {log_path}"
          f"{', ' + recipe.plot if recipe.plot else ''}; kept iteration {best[2]} (training "
          f"programs {best[0]}); held-out argmax / heuristic last {score}; big training "
          f"programs {big_before} -> {big_after}", file=sys.stderr)
    return 0


def run(recipe: Recipe) -> int:
    """Trains the checkpoint ``recipe`` describes; 0 on success."""
    from ..._optional import require
    require("tqdm", "training the learned player")
    require("optax", "training the learned player")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=")
    return train_big(recipe) if recipe.big_checkpoint else train_small(recipe)


def _option_type(f: dataclasses.Field):
    """The argparse type of a Recipe field (from its default, or its annotation)."""
    ann = str(f.type)
    for name, t in (("float", float), ("int", int), ("str", str)):
        if ann.startswith(name):
            return t
    raise TypeError(f"Recipe.{f.name}: no option type for {ann}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per Recipe field (default: unset, so that ``from_args``
    knows what was given)."""
    for f in dataclasses.fields(Recipe):
        flag = "--" + f.name.replace("_", "-")
        help_ = f"{f.metadata['help']} (default: {f.default!r})"
        if f.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction,
                                default=argparse.SUPPRESS, help=help_)
        else:
            parser.add_argument(flag, type=_option_type(f), default=argparse.SUPPRESS,
                                help=help_)


def from_args(args: argparse.Namespace) -> Recipe:
    """The Recipe of parsed options: ``--big-checkpoint`` starts from
    ``Recipe.big()``, every option given overrides."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(Recipe)
             if hasattr(args, f.name)}
    return Recipe.big(**given) if given.get("big_checkpoint") else Recipe(**given)


def cmd_train_agent(args) -> int:
    return run(from_args(args))


def add_subcommand(sub) -> None:
    p = sub.add_parser("train-agent", help="train the learned memory-space player "
                                           "(writes a checkpoint)",
                       description=__doc__.splitlines()[0])
    add_arguments(p)
    p.set_defaults(func=cmd_train_agent)
