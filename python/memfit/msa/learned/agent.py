"""``assign(instance)``: memory-space assignment by the trained player.

``simulations > 0`` plays every move with Gumbel MuZero search (the network's
prior, the true game as the model, no Gumbel noise: the search is
deterministic); ``simulations=0`` plays the policy's argmax alone. Then, where
the settings say so: local-improvement passes of the game (polish), a pair
stage, a repack of the layout, the offload relaxation, the plan-menu local
search and the iterated local search (``after_search`` runs them in that
order). The result always goes through the validator: an invalid solution is
a bug and raises, it is never replaced by another method's.

Every setting is a field of the frozen ``AgentConfig``; ``DEFAULT_CONFIG``
is what ``assign`` and ``memfit assign --method learned`` play with. Why
each default is what it is: docs/decisions.md and docs/msa.md.
"""
from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..._optional import require
from ...errors import MemfitError
from ..core import game
from ..solvers.budget import UNBOUNDED, Budget


class PerMode(NamedTuple):
    """A setting with one value per instance mode."""
    offload: object
    placement: object

    def of(self, mode: str):
        return getattr(self, mode)


@dataclass(frozen=True)
class AgentConfig:
    """The learned player's settings. A field that is None follows the rule
    its line names (by the game's buffer bucket and the instance's mode)."""

    # the search
    #: search simulations per move; None: search_simulations or big_simulations by bucket
    simulations: int | None = None
    #: search simulations per move on games of at most rollout_max_bucket buffers
    search_simulations: int = 16
    #: search simulations per move above rollout_max_bucket buffers (0: the policy's argmax)
    big_simulations: int = 0
    #: the largest buffer bucket whose default search uses the rollout leaf value
    rollout_max_bucket: int = 256
    #: search with a uniform prior instead of the network's
    uniform: bool = False
    #: the search's leaf value (play.VALUE_MODES); None: rollout up to rollout_max_bucket, else zero
    value_mode: str | None = None
    #: mctx's weight of the normalised Q-values against the prior logits
    value_scale: float = 1.0
    #: the heuristic's move is always among the root's considered actions (learned prior)
    hint_root: bool = True
    #: root actions Gumbel MuZero considers (sequential halving)
    max_considered: int = 16
    #: return the fastest complete game seen (searches with the rollout value)
    best: bool = True
    #: how a search with the rollout value picks its move (play.ROOT_RULES); others: "mean"
    root_rule: str = "max_kept"
    #: also keep the policy's own argmax game as a starting best game (learned prior)
    policy_seed: bool = True

    # local improvement of the played game
    #: polish passes on every instance; None: polish_passes where polish_max_bucket admits it
    polish: int | None = None
    #: polish passes by default, after a search with the rollout value
    polish_passes: int = 2
    #: the largest buffer bucket polished by default, per mode
    polish_max_bucket: PerMode = PerMode(offload=256, placement=64)
    #: the first polish stage's completions (play.COMPLETIONS); None: play.DEFAULT_COMPLETIONS
    completions: tuple | None = None
    #: a second polish stage's completions, run after default completions (empty: none)
    polish_then: tuple = ("own", "heuristic", "upgrade", "reserved")
    #: the pair stage on every polished instance (True) or none (False); None: by pair_max_buffers
    polish_pairs: bool | None = None
    #: the largest instance (in buffers) given the pair stage by default, per mode
    pair_max_buffers: PerMode = PerMode(offload=64, placement=0)
    #: how a pair-stage kick is completed, per mode (True, False or "both": play.pair_pass)
    pair_best_second: PerMode = PerMode(offload="both", placement=False)
    #: rounds of the pair stage
    pair_rounds: int = 2
    #: pair-stage kicks evaluated at once (vmapped)
    pair_chunk: int = 16

    # placement layouts
    #: repack placement layouts (msa.solvers.repack); None: where the game is polished
    repack: bool | None = None
    #: where the game is polished, use the offload relaxation: "polish", "play" or None (off)
    relax: str | bool | None = "polish"
    #: the relaxation polish's pair stage: relaxations of at most this many buffers
    relax_pair_max_buffers: int = 32
    #: how the relaxation polish's pair-stage kicks are completed
    relax_pair_best_second: bool | str = True

    # the plan-menu local search
    #: run it on every instance (True) or none (False); None: above local_search_above_bucket
    local_search: bool | None = None
    #: the most passes of the local search
    local_search_passes: int = 20
    #: the default local search runs on games of more buffers than this bucket
    local_search_above_bucket: int = 256
    #: the modes the default local search runs in
    local_search_modes: tuple = ("offload", "placement")
    #: also local-search the heuristic's solution and keep the faster of the two
    local_search_from_heuristic: bool = True
    #: pair moves in the local search
    local_search_pairs: bool = True
    #: placement: compact the layout downwards when no move pays
    local_search_compact: bool = True

    # the iterated local search, last
    #: its rounds on every instance; None: iterate_rounds where polished, up to iterate_max_bucket
    iterate: int | None = None
    #: rounds of the iterated local search by default
    iterate_rounds: int = 200
    #: the least and most buffers one kick changes
    iterate_kick: tuple = (2, 10)
    #: the largest buffer bucket iterated by default
    iterate_max_bucket: int = 64

    # the network
    #: play games above big_checkpoint_above_bucket buffers with the big checkpoint
    big_checkpoint: bool = True
    #: the buffer bucket above which the big checkpoint plays
    big_checkpoint_above_bucket: int = 256

    def replace(self, **changes) -> "AgentConfig":
        """This config with ``changes`` (fields by name)."""
        return dataclasses.replace(self, **changes)


#: The settings ``assign`` and ``memfit assign --method learned`` play with.
DEFAULT_CONFIG = AgentConfig()
MAX_BUFFERS = game.BUFFER_BUCKETS[-1]
MAX_OPS = game.OP_BUCKETS[-1]


def _config(config: AgentConfig | None) -> AgentConfig:
    return DEFAULT_CONFIG if config is None else config


def use_compilation_cache() -> str | None:
    """Turns on jax's persistent compilation cache for the player's compiled
    games (``memfit assign --method learned`` runs in a fresh process each
    time; the compile of the search is most of a small program's wall time).
    The directory: ``$MEMFIT_JAX_CACHE``, else ``$XDG_CACHE_HOME/memfit/jax``
    (``~/.cache/memfit/jax``); ``MEMFIT_JAX_CACHE=0`` turns it off, and a
    cache directory the user already set is left alone. Returns the
    directory in use (None: off)."""
    import os
    from pathlib import Path
    current = jax.config.jax_compilation_cache_dir
    if current:
        return current
    env = os.environ.get("MEMFIT_JAX_CACHE")
    if env == "0":
        return None
    path = env or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                      / "memfit" / "jax")
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError:
        return None      # read-only home: compile as before
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    return path


@functools.lru_cache(maxsize=4)
def _cached_params(path):
    from . import checkpoint
    return checkpoint.load(path)


def load_params(path=None, *, big: bool = False):
    """The network's parameters (the packaged checkpoint by default; with
    ``big``, the packaged big checkpoint, checkpoint.BIG_PATH)."""
    if path is None and big:
        from . import checkpoint
        path = checkpoint.BIG_PATH
    return _cached_params(str(path) if path is not None else None)[0]


def _moves(batch: "Batch") -> int:
    """The batch's game length (its buffer bucket)."""
    return batch.arrays.order.shape[1]


def default_params(batch: "Batch", config: AgentConfig | None = None):
    """The packaged parameters a batch is played with: the big checkpoint
    above ``big_checkpoint_above_bucket`` moves when ``big_checkpoint``."""
    cfg = _config(config)
    return load_params(big=cfg.big_checkpoint and _moves(batch) > cfg.big_checkpoint_above_bucket)


def check_size(inst) -> None:
    if inst.num_buffers > MAX_BUFFERS or inst.num_ops > MAX_OPS:
        raise MemfitError(
            f"{inst.program}: {inst.num_buffers} buffers / {inst.num_ops} ops exceed the "
            f"largest game bucket ({MAX_BUFFERS} buffers, {MAX_OPS} ops); the learned agent "
            "does not play it: use --method heuristic --local-search (the XLA-style heuristic, "
            "then the plan-menu local search the agent runs on big programs: any size) or "
            "--method exact")


class Batch(NamedTuple):
    specs: list
    arrays: object
    static: object
    encode_seconds: float


def encode_batch(insts, access_width: int | None = None) -> Batch:
    """Encodes instances of one shape class (equal game buckets) as a batch:
    the game's arrays and the network's static features (this runs the
    heuristic once per instance, for its hint feature)."""
    from . import features as F
    from . import play
    for inst in insts:
        check_size(inst)
    t0 = time.perf_counter()
    enc = [play.encode_padded(i) for i in insts]
    width = access_width or play.canonical_width(max(s.arrays.acc.shape[1] for s, _ in enc))
    edges = max(f.edge_op.shape[0] for _, f in enc)
    enc = [(play.pad_access(s, width), F.pad_edges(f, edges)) for s, f in enc]
    return Batch([s for s, _ in enc], play.stack([s.arrays for s, _ in enc]),
                 play.stack([f for _, f in enc]), time.perf_counter() - t0)


def polish_rows(batch: Batch, config: AgentConfig | None = None) -> list:
    """Per instance of the batch, whether the agent polishes it by default:
    the batch's move bucket is within its mode's ``polish_max_bucket``."""
    cfg = _config(config)
    return [_moves(batch) <= cfg.polish_max_bucket.of(s.inst.mode) for s in batch.specs]


def default_polish(batch: Batch, config: AgentConfig | None = None) -> int:
    """``polish_passes`` where some instance of the batch is polished by
    default (``polish_rows``), else 0."""
    cfg = _config(config)
    return cfg.polish_passes if any(polish_rows(batch, cfg)) else 0


def local_search_rows(batch: Batch, config: AgentConfig | None = None) -> list:
    """Per instance of the batch, whether msa.solvers.localsearch runs on its
    game: ``local_search`` True (all) or False (none); None: the
    ``local_search_modes`` instances of a batch above
    ``local_search_above_bucket`` moves."""
    cfg = _config(config)
    if cfg.local_search is not None:
        return [bool(cfg.local_search)] * len(batch.specs)
    big = _moves(batch) > cfg.local_search_above_bucket
    return [big and s.inst.mode in cfg.local_search_modes for s in batch.specs]


def local_search(inst, sol, config: AgentConfig | None = None, time_limit: float | None = None):
    """``(solution, stats)``: msa.solvers.localsearch.improve of ``sol`` with
    the config's local-search settings (stopped after ``time_limit`` seconds);
    the one place the big default's search, its expert games and its benches
    share."""
    from ..solvers.localsearch import improve
    cfg = _config(config)
    return improve(inst, sol, passes=cfg.local_search_passes, pairs=cfg.local_search_pairs,
                   compact=cfg.local_search_compact, time_limit=time_limit)


def local_searched(batch: Batch, sols, rows: list, config: AgentConfig | None = None,
                   budget: Budget = UNBOUNDED) -> list:
    """``sols`` with each row that ``rows`` admits improved by
    msa.solvers.localsearch (never slower: a change is kept only where the
    cost model times it faster); with ``local_search_from_heuristic``, the
    faster of that and the heuristic's solution searched the same way. Each
    search stops at ``budget``'s deadline; none starts after it."""
    from ..solvers import heuristic
    cfg = _config(config)
    out = list(sols)
    for i, spec in enumerate(batch.specs):
        if not rows[i] or budget.expired():
            continue
        out[i], st = local_search(spec.inst, sols[i], cfg, budget.left())
        if cfg.local_search_from_heuristic and not budget.expired():
            start = heuristic.assign(spec.inst, deadline=budget.deadline)
            other, other_st = local_search(spec.inst, start, cfg, budget.left())
            if other_st.final_time < st.final_time:     # both the cost model's time
                other.method, other.notes = out[i].method, out[i].notes
                out[i] = other
    return out


def iterate_rounds(batch: Batch, config: AgentConfig | None = None) -> int:
    """The iterated local search's rounds on this batch: ``iterate`` if set
    (0: off), else ``iterate_rounds`` on games of at most
    ``iterate_max_bucket`` moves and none above."""
    cfg = _config(config)
    if cfg.iterate is not None:
        return int(cfg.iterate)
    return cfg.iterate_rounds if _moves(batch) <= cfg.iterate_max_bucket else 0


def iterated_search(inst, sol, rounds: int | None = None, kick: tuple | None = None,
                    seed: int = 0, layout_rounds: int = 0, config: AgentConfig | None = None,
                    time_limit: float | None = None):
    """``(solution, stats)``: msa.solvers.localsearch.iterate of ``sol`` with
    the config's settings (``rounds`` default ``iterate_rounds``, kicks of
    ``kick`` buffers default ``iterate_kick``, the descents as
    ``local_search``'s; in placement mode then ``layout_rounds`` layout
    rounds); the one place the agent's stage and ``memfit assign --iterate``
    and ``--layout-rounds`` share. ``time_limit``: seconds, then it stops
    (between buffers) with the best found."""
    from ..solvers.localsearch import iterate
    cfg = _config(config)
    return iterate(inst, sol, seed=seed, rounds=cfg.iterate_rounds if rounds is None else rounds,
                   kick=cfg.iterate_kick if kick is None else kick,
                   passes=cfg.local_search_passes, pairs=cfg.local_search_pairs,
                   compact=cfg.local_search_compact, layout_rounds=layout_rounds,
                   time_limit=time_limit)


def iterated(batch: Batch, sols, rows: list, rounds: int,
             config: AgentConfig | None = None, seed: int = 0,
             budget: Budget = UNBOUNDED) -> list:
    """``sols`` with each row that ``rows`` admits improved by
    ``iterated_search`` (never slower: only a faster solution replaces the
    best), each keeping its game's method and notes; none starts after
    ``budget``'s deadline, and each stops at it."""
    out = list(sols)
    for i, spec in enumerate(batch.specs):
        if rows[i] and not budget.expired():
            sol, _ = iterated_search(spec.inst, sols[i], rounds, seed=seed, config=config,
                                     time_limit=budget.left())
            sol.method, sol.notes = sols[i].method, sols[i].notes
            out[i] = sol
    return out


def default_value_mode(batch: Batch, config: AgentConfig | None = None) -> str:
    """The search's leaf value: ``value_mode`` if set, else the rollout up to
    ``rollout_max_bucket`` moves and zero above it or with a uniform prior."""
    cfg = _config(config)
    if cfg.value_mode is not None:
        return cfg.value_mode
    return "zero" if cfg.uniform or _moves(batch) > cfg.rollout_max_bucket else "rollout"


def batch_simulations(batch: Batch, config: AgentConfig | None = None) -> int:
    """The search's simulations per move on this batch: ``simulations`` if
    set, else ``search_simulations`` up to ``rollout_max_bucket`` moves and
    ``big_simulations`` above."""
    cfg = _config(config)
    if cfg.simulations is not None:
        return cfg.simulations
    return (cfg.search_simulations if _moves(batch) <= cfg.rollout_max_bucket
            else cfg.big_simulations)


def default_simulations(inst, config: AgentConfig | None = None) -> int:
    """``batch_simulations`` of a batch holding ``inst`` alone."""
    cfg = _config(config)
    if cfg.simulations is not None:
        return cfg.simulations
    return (cfg.search_simulations if game._bucket(inst.num_buffers, game.BUFFER_BUCKETS)
            <= cfg.rollout_max_bucket else cfg.big_simulations)


def play_batch(batch: Batch, config: AgentConfig | None = None, *, params=None, seed: int = 0,
               return_actions: bool = False, return_raw: bool = False,
               budget: Budget = UNBOUNDED):
    """Plays every game of the batch with ``config`` (default
    ``DEFAULT_CONFIG``); ``(solutions, wall seconds of the play)`` (with
    ``return_actions``, also the games' moves [N, M], the polished game's,
    not a repacked or relaxed layout's; with ``return_raw``, also the played
    game's own solutions, before the best-game choice and the stages after
    the search). ``params``: the network's (default: ``default_params``).
    ``budget``: the stages after the search stop at its deadline
    (``after_search``); the games themselves are single compiled calls, so
    a game started in time runs to its end."""
    from . import play
    cfg = _config(config)
    simulations = batch_simulations(batch, cfg)
    if simulations > 0:
        require("mctx", "the learned memory-space player")
    net = params if params is not None else default_params(batch, cfg)
    t0 = time.perf_counter()
    value_mode = default_value_mode(batch, cfg)
    searched = value_mode == "rollout" and simulations > 0
    best = cfg.best and searched
    root_rule = cfg.root_rule if searched else "mean"
    only = None            # polish=N given: every instance
    polish = cfg.polish
    if polish is None:
        polish = default_polish(batch, cfg) if searched else 0
        only = polish_rows(batch, cfg)
    seeding = ((best or root_rule == "max_kept") and not cfg.uniform and cfg.policy_seed
               and not budget.expired())
    seed_games = None
    if seeding:
        pol, _, pol_actions, _ = play.play_batch(net, batch.arrays, batch.static,
                                                 jax.random.PRNGKey(seed))
        seed_games = (pol.time, pol_actions)
    final, _, actions, kept = play.play_batch(
        net, batch.arrays, batch.static, jax.random.PRNGKey(seed), num_simulations=simulations,
        uniform=cfg.uniform, gumbel_scale=0.0, value_mode=value_mode,
        value_scale=cfg.value_scale, hint_root=cfg.hint_root and not cfg.uniform, best=best,
        root_rule=root_rule, max_considered=cfg.max_considered, seed_games=seed_games)
    method = ("mcts-uniform" if cfg.uniform else "learned-mcts") if simulations > 0 \
        else "learned-policy"
    sols = raw = _solutions(batch, final, method)
    if best and kept is not None:
        kept_sols = _solutions(batch, play.replay_batch(batch.arrays, kept[1]), method)
        sols, actions = _fastest(batch, [(raw, actions), (kept_sols, kept[1])])
    sols, actions = after_search(batch, sols, actions, polish, method, cfg, only=only,
                                 params=net, seed=seed, budget=budget)
    wall = time.perf_counter() - t0
    return (sols, wall) + ((actions,) if return_actions else ()) + ((raw,) if return_raw else ())


def after_search(batch: Batch, sols, actions, polish: int, method: str,
                 config: AgentConfig | None = None, *, only: list | None = None,
                 params=None, seed: int = 0, budget: Budget = UNBOUNDED):
    """The stages after the search (``play_batch``'s; one place for their
    order): ``polish`` passes (``_polish_stages``), then msa.solvers.repack
    (``repack``), then the offload relaxation (``relax``; "play" plays it
    again with ``params`` and ``seed``), then msa.solvers.localsearch on the
    rows ``local_search_rows`` picks, then ``iterate_rounds`` rounds of
    msa.solvers.localsearch.iterate where it polishes (``iterate`` set: on
    the rows ``only`` picks). ``sols``/``actions``: the search's games;
    ``only``: per instance, whether these stages run on it (default: all;
    ``polish_rows`` for the agent's default). Returns ``(solutions,
    actions)`` (the actions are the polished game's, not the repacked or
    relaxed layout's). ``budget``: a stage starts only before its deadline,
    and the local searches stop at it."""
    cfg = _config(config)
    rows = [True] * len(batch.specs) if only is None else list(only)
    if polish > 0 and any(rows) and not budget.expired():
        final, actions = _polish_stages(batch, actions, polish, cfg, only=rows)
        sols = _solutions(batch, final, method)
    repack = (polish > 0) if cfg.repack is None else cfg.repack
    if repack and not budget.expired():
        sols = repacked(batch, sols, only=rows)
    how = relax_mode(cfg.relax)
    if polish > 0 and how and not budget.expired():
        if how == "polish":
            plans = relaxation_polish_plans(batch, sols, polish, cfg.polish_pairs, only=rows,
                                            config=cfg)
        else:
            again = cfg.replace(polish=polish, polish_pairs=False, relax=None, repack=False)
            plans = relaxation_plans(batch, again, only=rows, params=params, seed=seed)
        sols = relaxed(batch, sols, plans, repack=repack)
    ls_rows = local_search_rows(batch, cfg)
    if any(ls_rows):
        sols = local_searched(batch, sols, ls_rows, cfg, budget)
    # the default's rounds only where it polishes; a given count anywhere
    rounds = iterate_rounds(batch, cfg) if cfg.iterate is not None or polish > 0 else 0
    if rounds and any(rows):
        sols = iterated(batch, sols, rows, rounds, cfg, budget=budget)
    return sols, actions


def _polish_stages(batch: Batch, actions, passes: int, config: AgentConfig | None = None,
                   only: list | None = None):
    """``passes`` polish passes with the config's ``completions`` (default:
    play.DEFAULT_COMPLETIONS, then as many again with ``polish_then`` from
    that game), then the pair stage (play.pair_batch) on the instances
    ``pair_stage_rows`` picks (none where ``completions`` are set and
    ``polish_pairs`` is not), on the instances ``only`` picks (default: all;
    the others' games replayed as they are). Returns (final states, actions)."""
    from . import play
    cfg = _config(config)
    final, actions = _one_at_a_time(play.polish_batch, batch, actions, jnp.int32(passes),
                                    completions=_completions(cfg.completions), only=only)
    if cfg.completions is None and cfg.polish_then:
        final, actions = _one_at_a_time(play.polish_batch, batch, actions, jnp.int32(passes),
                                        completions=_completions(cfg.polish_then), only=only)
    if cfg.polish_pairs is None and cfg.completions is not None:
        cfg = cfg.replace(polish_pairs=False)   # completions chosen: no default pair stage
    rows = [p and o for p, o in
            zip(pair_stage_rows(batch, cfg), only or [True] * len(batch.specs))]
    if any(rows):
        final, actions = pair_polish(batch, actions, passes=passes, only=rows, config=cfg)
    return final, actions


def pair_stage_rows(batch: Batch, config: AgentConfig | None = None) -> list:
    """Per instance of the batch, whether the pair stage runs on it:
    ``polish_pairs`` True (all) or False (none); None: those of at most
    ``pair_max_buffers`` buffers of their mode."""
    cfg = _config(config)
    if cfg.polish_pairs is not None:
        return [bool(cfg.polish_pairs)] * len(batch.specs)
    return [s.inst.num_buffers <= cfg.pair_max_buffers.of(s.inst.mode) for s in batch.specs]


def pair_polish(batch: Batch, actions, max_kicks: int | None = None, passes: int | None = None,
                rounds: int | None = None, completions: tuple | None = None,
                kick_completions: tuple | None = None,
                only: list | None = None, best_second: bool | str | None = None,
                config: AgentConfig | None = None):
    """play.pair_batch over polished games (``actions`` [N, M]): coordinated
    changes that 1-opt cannot reach (``max_kicks``: kicks tried per round,
    None = all; ``passes``: polish passes after each improvement, default
    ``polish_passes``; ``completions``: theirs, default ``polish_then``; each
    kick completed with ``kick_completions``, default
    play.PAIR_KICK_COMPLETIONS; ``only``: per instance, whether to run it,
    the others' games are returned as they are; ``best_second``: each kick
    completed by its best second change, play.pair_pass, or (False) by a
    polish pass with the kicked move frozen, or ("both") the first and then
    the second from its game; default ``pair_best_second`` of the
    instance's mode); ``rounds`` (default ``pair_rounds``), ``pair_chunk``
    kicks at once.
    Returns (final states, actions); no game gets slower."""
    from . import play
    cfg = _config(config)
    comps = _completions(completions or cfg.polish_then or play.COMPLETIONS)
    kicks = _completions(kick_completions or play.PAIR_KICK_COMPLETIONS)
    passes = cfg.polish_passes if passes is None else passes
    rounds = cfg.pair_rounds if rounds is None else rounds
    choice = [cfg.pair_best_second.of(spec.inst.mode) if best_second is None
              else best_second for spec in batch.specs]
    bad = [c for c in choice if c not in (True, False, "both")]
    if bad:
        raise ValueError(f"best_second {bad[0]!r}: expected True, False or 'both'")
    rows = [True] * len(batch.specs) if only is None else list(only)
    final = None
    # "both": the exact 2-exchange first, then the kick pass from its game
    for which in (True, False):
        wants = [r and c in (which, "both") for r, c in zip(rows, choice)]
        if any(wants) or (final is None and not which):
            final, actions = _one_at_a_time(
                play.pair_batch, batch, actions, jnp.int32(rounds), jnp.int32(passes),
                jnp.int32(max_kicks or (1 << 30)), chunk=cfg.pair_chunk, completions=comps,
                kick_completions=kicks, only=wants, best_second=which)
    return final, actions


def _one_at_a_time(fn, batch: Batch, actions, *args, only: list | None = None,
                   per_instance=None, **kwargs):
    """``fn(arrays, static, actions, *args, **kwargs)`` (play.polish_batch,
    play.pair_batch: jitted, vmapped over instances) called on one instance
    at a time, the results concatenated (``only``: per instance, whether to
    call it; the others' games are replayed as they are; ``per_instance``:
    spec -> that instance's own keyword arguments). Their while loops run, in a vmapped
    batch, every lane until the lane that needs most is done (the most
    moves, passes, kick chunks, rounds), so a batch costs its size times its
    worst instance; alone each instance stops when it is done, and there is
    one compile per bucket instead of one per batch size. The games are the
    same: 8 validation instances of the 64-buffer bucket were polished in
    47 s CPU one at a time vs 102 s as a batch (compiles included), 4
    synthetic ones went through the pair stage in 157 vs 413 s. Each
    instance in offload mode is polished with ``offload=True``
    (play.tried_actions: its 8 legal actions of the 29, the same games)."""
    from . import play
    own = [dict(offload=spec.inst.mode == "offload", **(per_instance(spec) if per_instance
                                                         else {})) for spec in batch.specs]
    if actions.shape[0] == 1 and (only is None or only[0]):
        return fn(batch.arrays, batch.static, actions, *args, **own[0], **kwargs)
    outs = []
    for i in range(actions.shape[0]):
        row, acts = batch_row(batch, i), actions[i:i + 1]
        if only is None or only[i]:
            outs.append(fn(row.arrays, row.static, acts, *args, **own[i], **kwargs))
        else:
            outs.append((play.replay_batch(row.arrays, acts), acts))
    return jax.tree.map(lambda *xs: jnp.concatenate(xs), *outs)


def batch_row(batch: Batch, i: int) -> Batch:
    """Instance ``i`` of the batch as a batch of one (same buckets)."""
    one = lambda tree: jax.tree.map(lambda x: x[i:i + 1], tree)   # noqa: E731
    return Batch([batch.specs[i]], one(batch.arrays), one(batch.static), 0.0)


def repacked(batch: Batch, sols, only: list | None = None) -> list:
    """msa.solvers.repack of each placement instance's solution (offload ones
    as they are; ``only``: per instance, whether to repack it, default all)."""
    from ..solvers.repack import repack
    return [repack(spec.inst, sol)[0] if spec.inst.mode == "placement"
            and (only is None or only[i]) else sol
            for i, (spec, sol) in enumerate(zip(batch.specs, sols))]


def offload_relaxation(inst):
    """``inst`` in offload mode: the same buffers, plans and capacity, fast
    memory counted per op, no offsets (a relaxation of placement mode)."""
    from ..core.instance import Instance
    d = inst.to_dict()
    d["mode"] = "offload"
    d["program"] = f"{inst.program} (offload relaxation)"
    return Instance.from_dict(d)


#: How a placement instance's offload relaxation is used (``relax``):
#: "play" plays the relaxation again, search and polish (``relaxation_plans``);
#: "polish" polishes the placement game's own plans there (``relaxation_polish_plans``).
RELAX_MODES = ("play", "polish")


def relax_mode(relax) -> str | None:
    """``relax`` (False/None, True = "play", or one of RELAX_MODES) as a mode or None."""
    if relax is None or relax is False:
        return None
    if relax is True:
        return "play"
    if relax not in RELAX_MODES:
        raise ValueError(f"relax {relax!r}: expected True, False or one of {RELAX_MODES}")
    return relax


def relaxation_plans(batch: Batch, config: AgentConfig | None = None, only: list | None = None,
                     params=None, seed: int = 0) -> dict:
    """``{row: solution}``: the batch's placement instances (``only``: per
    instance, whether to consider it; default all) played in their offload
    relaxation (``offload_relaxation``) by ``play_batch`` with ``config``,
    without the pair stage, the relaxation or repack."""
    rows = _placement_rows(batch, only)
    if not rows:
        return {}
    rb = encode_batch([offload_relaxation(batch.specs[i].inst) for i in rows],
                      access_width=batch.arrays.acc.shape[2])
    again = _config(config).replace(polish_pairs=False, relax=None, repack=False)
    plans, _ = play_batch(rb, again, params=params, seed=seed)
    return dict(zip(rows, plans))


def _placement_rows(batch: Batch, only: list | None) -> list:
    """The rows of the batch's placement instances that ``only`` admits."""
    return [i for i, spec in enumerate(batch.specs)
            if spec.inst.mode == "placement" and (only is None or only[i])]


def relaxation_polish_plans(batch: Batch, sols, passes: int | None = None,
                            pairs: bool | None = None, best_second=None,
                            only: list | None = None, config: AgentConfig | None = None) -> dict:
    """``{row: solution}``: each placement instance's solution ``sols[row]``
    (its plans; offsets dropped) polished in the instance's offload
    relaxation (``offload_relaxation``): no search, the polish stages from
    that game (``_polish_stages``, ``passes`` default ``polish_passes``), then
    the pair stage (``pairs``: on all or none; None: relaxations of at most
    ``relax_pair_max_buffers`` buffers; ``best_second``: its kicks'
    completion, None: ``relax_pair_best_second``). A cheaper relaxation than
    ``relaxation_plans``, which plays the relaxation again from the start:
    offload polish costs a fraction of placement polish (game.offload_mode,
    8 actions of 29). ``only``: per instance, whether to consider it
    (default all)."""
    cfg = _config(config)
    passes = cfg.polish_passes if passes is None else passes
    rows = _placement_rows(batch, only)
    if not rows:
        return {}
    rb = encode_batch([offload_relaxation(batch.specs[i].inst) for i in rows],
                      access_width=batch.arrays.acc.shape[2])
    M = rb.arrays.order.shape[1]
    acts = np.stack([_offload_moves(spec, sols[i], M) for spec, i in zip(rb.specs, rows)])
    final, acts = _polish_stages(rb, jnp.asarray(acts), passes,
                                 cfg.replace(completions=None, polish_pairs=False))
    pair_rows = ([s.inst.num_buffers <= cfg.relax_pair_max_buffers for s in rb.specs]
                 if pairs is None else [bool(pairs)] * len(rows))
    if any(pair_rows):
        final, _ = pair_polish(rb, acts, passes=passes, only=pair_rows,
                               best_second=(cfg.relax_pair_best_second if best_second is None
                                            else best_second), config=cfg)
    return dict(zip(rows, _solutions(rb, final, "learned-polish")))


def _offload_moves(spec, sol, M: int) -> np.ndarray:
    """[M]: ``sol``'s plans as the moves of ``spec``'s offload-mode game (a
    plan at its only offset; slow after the last move). A placement
    layout fits by bytes at every op, so every move is legal there (the
    polish replays the moves, playing any illegal one slow)."""
    from ..core.plans import menu_index
    by_id = sol.by_id()
    a = np.zeros(M, np.int32)
    for k, b in enumerate(spec.order):
        p = menu_index(spec.menus[b], by_id[b]) or 0
        a[k] = 0 if p == 0 else 1 + (p - 1) * game.NUM_OFFSETS
    return a


def relaxed(batch: Batch, sols, plans: dict, repack: bool = True) -> list:
    """``sols`` with each placement instance ``i`` in ``plans`` (its offload
    relaxation's solution, ``offload_relaxation``) laid out by
    msa.solvers.repack.lay_out (with ``repair``: a plan set that does not fit loses
    the buffers above the capacity), then msa.solvers.repack'ed (``repack``), where
    the validator times that faster than ``sols[i]``."""
    from ..core.validator import validate
    from ..solvers.repack import lay_out, repack as repack_one
    out = list(sols)
    for i, relaxed_sol in plans.items():
        inst = batch.specs[i].inst
        laid = lay_out(inst, sols[i], relaxed_sol, repair=True)
        if laid is not None and repack:
            laid = repack_one(inst, laid)[0]
        if laid is not None and (validate(inst, laid).estimated_time
                                 < validate(inst, sols[i]).estimated_time):
            laid.method = sols[i].method
            laid.notes = sols[i].notes
            out[i] = laid
    return out


def _completions(names) -> tuple:
    """polish's completions (``play.COMPLETIONS``; None: the default ones)."""
    from . import play
    if names is None:
        return play.DEFAULT_COMPLETIONS
    bad = [n for n in names if n not in play.COMPLETIONS]
    if bad or not names:
        raise ValueError(f"polish completions {tuple(names)!r}: expected a non-empty subset "
                         f"of {play.COMPLETIONS}")
    return tuple(names)


def _fastest(batch: Batch, candidates):
    """Per instance, the candidate ``(solutions, actions [N, M])`` whose
    solution the validator times fastest (an invalid one is a bug)."""
    from ..core.validator import validate
    sols, rows = [], []
    for i, spec in enumerate(batch.specs):
        timed = []
        for k, (cand, acts) in enumerate(candidates):
            v = validate(spec.inst, cand[i])
            if not v.valid:
                raise MemfitError(f"BUG: the learned agent's game {k} for {spec.inst.program} "
                                  f"is invalid: {v.summary()}")
            timed.append((v.estimated_time, k))
        k = min(timed)[1]
        sols.append(candidates[k][0][i])
        rows.append(candidates[k][1][i])
    return sols, jnp.stack(rows)


def _solutions(batch: Batch, final, method: str) -> list:
    from . import play
    return [spec.solution(play.unstack(final, i)._replace(inst=spec.arrays), method=method)
            for i, spec in enumerate(batch.specs)]


def polish(batch: Batch, actions, config: AgentConfig | None = None, *,
           passes: int | None = None, only: list | None = None):
    """Local improvement (``_polish_stages``: ``passes`` polish passes,
    default ``polish_passes``, with the config's completions and pair stage)
    of games already played (``actions`` from ``play_batch(...,
    return_actions=True)``): ``(solutions, wall seconds, polished actions)``.
    A polished game is never slower than the game it starts from. ``only``:
    per instance, whether to polish it (default all; ``polish_rows`` for the
    agent's default)."""
    cfg = _config(config)
    t0 = time.perf_counter()
    final, actions = _polish_stages(batch, actions,
                                    cfg.polish_passes if passes is None else passes, cfg,
                                    only=only)
    jax.block_until_ready(final.time)
    return _solutions(batch, final, "learned-polish"), time.perf_counter() - t0, actions


def play_instances(insts, config: AgentConfig | None = None, **kwargs):
    """``play_batch(encode_batch(insts), config, **kwargs)``; the wall time counts both."""
    batch = encode_batch(insts)
    sols, wall = play_batch(batch, config, **kwargs)
    return sols, wall + batch.encode_seconds


def assign(inst, config: AgentConfig | None = None, *, checkpoint=None, seed: int = 0,
           budget: Budget | None = None, **changes):
    """A validated Solution for ``inst`` (an Instance) by the learned agent
    with ``config`` (default ``DEFAULT_CONFIG``) and ``changes`` to its
    fields (``assign(inst, simulations=16)``; a change that is None keeps
    the config's value); ``checkpoint``: the network's file (default: the
    packaged checkpoints).

    ``budget`` (msa.solvers.budget.Budget, bounded): see ``_budgeted``."""
    from ..core.validator import validate
    check_size(inst)
    cfg = _config(config).replace(**{k: v for k, v in changes.items() if v is not None})
    if budget is not None and budget.deadline is not None:
        return _budgeted(inst, cfg, checkpoint, seed, budget)
    params = load_params(checkpoint) if checkpoint is not None else None
    (sol,), _ = play_instances([inst], cfg, params=params, seed=seed)
    sol.method = "learned"
    v = validate(inst, sol)
    if not v.valid:
        raise MemfitError(f"BUG: the learned agent produced an invalid solution for "
                          f"{inst.program}: {v.summary()}")
    return sol


# seconds the child stops before the parent's deadline, for sending its
# solution back and the parent's validation
CHILD_MARGIN = 0.25
# a game is tried only with this many seconds left after the heuristic
MIN_GAME_SECONDS = 1.0


def _budgeted(inst, cfg: AgentConfig, checkpoint, seed: int, budget: Budget):
    """The agent within ``budget``: the heuristic first (stopped at the
    deadline), then, where at least ``MIN_GAME_SECONDS`` are left, the game
    and its later stages in a worker process (``_Worker``) that is killed at
    the deadline, its stages stopped by the same deadline. Why a process: a
    game is one compiled call that cannot stop part-way (a searched game at
    the 256 bucket takes about a minute with its compilation). The faster of
    the two valid solutions is returned: the heuristic's (or its partial
    pass) when the game did not finish in time. The worker is kept for the
    next call (jax imported, the checkpoint loaded, the games compiled) until
    a deadline kills it; its start counts against the budget of the call
    that starts it."""
    from ..core.solution import Solution
    from ..core.validator import validate
    from ..solvers import heuristic
    best = heuristic.assign(inst, deadline=budget.deadline)
    if budget.left() < MIN_GAME_SECONDS:
        return best
    got = _Worker.ask((inst.dumps(), cfg, checkpoint, seed,
                       time.time() + budget.left() - CHILD_MARGIN), budget)
    if got is not None and got[0] == "error":
        raise MemfitError(got[1])
    if got is not None:
        sol = Solution.loads(got[1])
        v = validate(inst, sol)
        if not v.valid:
            raise MemfitError(f"BUG: the learned agent produced an invalid solution for "
                              f"{inst.program}: {v.summary()}")
        if v.estimated_time <= validate(inst, best).estimated_time:
            return sol
    return best


class _Worker:
    """One spawned process (jax does not survive a fork) that plays the
    games of ``_budgeted``, one request at a time, kept between calls."""
    process = None
    conn = None

    @classmethod
    def ask(cls, request, budget: Budget):
        """The worker's answer to ``request`` by ``budget``'s deadline, or
        None (then the worker is killed: its game cannot be stopped)."""
        import multiprocessing as mp
        if cls.process is None or not cls.process.is_alive():
            ctx = mp.get_context("spawn")
            cls.conn, theirs = ctx.Pipe()
            cls.process = ctx.Process(target=_worker_loop, args=(theirs,), daemon=True)
            cls.process.start()
            theirs.close()
        try:
            cls.conn.send(request)
            if cls.conn.poll(budget.left()):
                return cls.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            cls.process.join(timeout=1)
            code = cls.process.exitcode
            cls.stop()
            return ("error", f"the learned agent's game process ended without an answer "
                             f"(exit code {code})")
        cls.stop()
        return None

    @classmethod
    def stop(cls):
        if cls.process is not None:
            if cls.process.is_alive():
                cls.process.kill()
            cls.process.join()
            cls.conn.close()
        cls.process = cls.conn = None


def _worker_loop(conn) -> None:
    """``_Worker``'s process: plays each request (instance JSON, config,
    checkpoint, seed, deadline as a ``time.time()`` value: the processes
    share no ``perf_counter``) with its stages stopped at the deadline and
    sends back ("ok", solution JSON) or ("error", text)."""
    from ..core.instance import Instance
    use_compilation_cache()
    while True:
        try:
            inst_text, cfg, checkpoint, seed, deadline = conn.recv()
        except EOFError:
            return
        try:
            budget = Budget(max(deadline - time.time(), 1e-3))
            inst = Instance.loads(inst_text)
            params = load_params(checkpoint) if checkpoint is not None else None
            (sol,), _ = play_instances([inst], cfg, params=params, seed=seed, budget=budget)
            sol.method = "learned"
            conn.send(("ok", sol.dumps()))
        except Exception as e:      # noqa: BLE001  (reported to the parent, which raises it)
            conn.send(("error", f"{type(e).__name__}: {e}"))
