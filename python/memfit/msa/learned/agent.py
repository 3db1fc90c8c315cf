"""``assign(instance)``: memory-space assignment by the trained player.

``simulations > 0`` plays every move with Gumbel MuZero search (the network's
prior and value, the true game as the model, no Gumbel noise: the search is
deterministic); ``simulations=0`` plays the policy's argmax alone. The
result always goes through the validator: an invalid solution is a bug and
raises, it is never replaced by another method's.
"""
from __future__ import annotations

import functools
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..._optional import require
from ...errors import MemfitError
from ..core import game

#: Search simulations per move by default. Measured (2026-12-03, whole
#: `memfit assign --method learned` process: jax import, encoding, jit
#: compile, play, 2 shared and busy CPU cores) with the rollout leaf value:
#: 39 s for 35 buffers (cnn_train-offload-50), 156 s for 188 buffers
#: (transformer_medium-offload-50); the rollout's cost grows with the square
#: of the buffer count (with a zero value it was 14 s and 27 s).
DEFAULT_SIMULATIONS = 16
#: The search's leaf value (see play.VALUE_MODES): the heuristic's rollout.
#: Chosen on the manifest's training programs (bench/diag_msa_search.py, 16
#: simulations, 24 instances, time / heuristic): network value 1.415 (its
#: noise, min-max normalised per node, steers the search), zero 1.023,
#: rollout 0.976; the policy's argmax alone 1.103.
DEFAULT_VALUE = "rollout"
#: A rollout costs one game move per remaining buffer at every leaf (moves x
#: simulations x buffers per game): above this buffer bucket the default leaf
#: value is zero instead (not measured at those sizes: no such instance yet).
ROLLOUT_MAX_BUCKET = 256
#: mctx's weight of the (min-max normalised) Q-values against the prior
#: logits (``qtransform_completed_by_mix_value``'s ``value_scale``; mctx's
#: default is 0.1): 1.0 lets the exact rollout returns outweigh the prior.
DEFAULT_VALUE_SCALE = 1.0
#: The heuristic's move is always a root candidate (play.search_moves).
DEFAULT_HINT_ROOT = True
#: Gumbel MuZero's number of root actions considered (sequential halving
#: over the prior's top actions; mctx's ``max_num_considered_actions``).
DEFAULT_MAX_CONSIDERED = 16
#: Keep the best complete game seen whenever the leaf value is the rollout
#: (play.play_batch ``best``): the search plays its own moves, and the
#: agent returns the fastest of the games it saw: the played game, the
#: heuristic's, and every game a search evaluated (path + rollout). Never
#: slower than the raw search or the heuristic's game. Costs one rollout per
#: move (the search already pays one per simulation). It replaced the
#: fortified incumbent (play.fortify, still available as ``fortified=True``),
#: which played the incumbent's move wherever the heuristic's continuation
#: of the search's move was slower, and so lost games the raw search won
#: (cnn_train-offload-75: raw 0.780 of the heuristic's time, fortified 1.000).
DEFAULT_BEST = True
DEFAULT_FORTIFY = False
#: Seed the best game kept with the policy's own argmax game (one network
#: pass per move, no search) beside the heuristic's: the kept game, which
#: the root rule "max_kept" follows, starts as the faster of the two, so the
#: search starts from what the network has learned where that beats the
#: heuristic. Learned prior only (a uniform prior has no policy to play).
DEFAULT_POLICY_SEED = True
#: The search's root rule with the rollout value (play.ROOT_RULES): how the
#: raw search picks its move. mctx's own rule compares the *mean* returns of
#: the simulations through each move; in this deterministic game with an
#: exact leaf value the best game found through a move is its value ("max"),
#: and "max_kept" also keeps the best game of the earlier searches as the
#: current search's default line. Chosen on TRAINING programs only
#: (bench/diag_msa_raw.py --rules mean,max,max_kept, bench/msa_raw_train.txt).
DEFAULT_ROOT_RULE = "max_kept"
#: Local improvement after the search (play.polish_batch): up to this many
#: passes of 1-opt over the played game, each move tried with every legal
#: action and the game completed three ways (play.DEFAULT_COMPLETIONS); on
#: after a search with the rollout value up to POLISH_MAX_BUCKET[mode] moves, 0 = off.
DEFAULT_POLISH_PASSES = 2
#: After those passes, as many again from their game with these
#: completions (None: off): play.COMPLETIONS adds "reserved" (slow moves
#: upgraded only into capacity the game's own later moves leave free).
#: Reserved from the start of the polish reached CP-SAT's optimum on 2 more
#: validation instances but, first-improvement 1-opt being path dependent,
#: ended slower on 1 (synthetic-70008-placement 0.9730 vs 0.9680); as a
#: second stage it starts from the default's polished game, so it is never
#: slower than it (validation misses: the same 2 reach the optimum,
#: bench/msa_optgap_validation.txt).
DEFAULT_POLISH_THEN = ("own", "heuristic", "upgrade", "reserved")
#: After both stages, the pair stage (play.pair_batch; False = off): up to
#: DEFAULT_PAIR_ROUNDS rounds of play.pair_pass (every single change by
#: plan as a kick, each completed by a polish pass with the kicked move
#: frozen, DEFAULT_PAIR_CHUNK kicks vmapped at a time), each improvement
#: followed by up to ``polish`` 1-opt passes with DEFAULT_POLISH_THEN's
#: completions.
DEFAULT_POLISH_PAIRS = False
#: With the pair stage at its default (``polish_pairs=None``) and
#: DEFAULT_POLISH_PAIRS off: the pair stage still runs on instances of at
#: most this many buffers, by mode (0: on none). A round costs about the
#: cube of the buffer count (every kick is completed by a whole pass), so
#: it is cheap only on small instances, and an offload instance costs a
#: quarter of a placement one (8 legal actions of 29). Judged on fresh test
#: sets against a criterion written before each result (docs/msa.md, *A
#: size-gated pair stage*): both modes up to 23 buffers gained 2 instances
#: on set 3 but cost more than half the default's CPU; offload up to 32
#: with the first-improvement kick pass changed no game on set 4; offload
#: up to 32 with DEFAULT_PAIR_BEST_SECOND took set 5 from 15/26 to 17/26
#: instances within 2% of CP-SAT's optimum (4 of its 5 gated instances
#: faster, none slower) for 103 s CPU against the default's 216 s.
#: Since offload instances are polished with their mode a compile-time
#: constant (game.offload_mode), the stage costs 15-20x less there (the
#: same games); offload up to 64 buffers then took dev sets 6-8 from 68/84
#: to 74/84 within 2% for 27% more CPU, but fresh set 9 stayed at 24/27
#: (one instance faster, 1.009 -> 1.000), and fresh set 10 likewise (five
#: faster inside the 2% band). With both kick completions (below), offload
#: up to 64 buffers took fresh set 14 from 16/20 to 18/20 within 2%
#: (criterion written before the run; none slower; +49 s pair-stage CPU
#: against the default's 223 s, at most 10.9 s per instance warm;
#: bench/msa_optgap_test14.txt): the offload gate is 64 since 2026-12-06.
DEFAULT_PAIR_MAX_BUFFERS = {"offload": 64, "placement": 0}
#: How a kick is completed (play.pair_pass ``best_second``), by mode: True,
#: its best second change (an exact 2-exchange); False, a first-improvement
#: pass with the kicked move frozen; "both", the first and then the second
#: from its game (agent.pair_polish). Offload: "both" since 2026-12-06 (on
#: the 63 proven offload instances of dev sets 6-9 at gate 64: 61/63 within
#: 2% vs 60/63 for True, bench/msa_pair_both_dev.txt; with gate 64 on fresh
#: set 14, above). Placement keeps the pass: on 4 dev placement misses 1 vs
#: 3 reached the optimum with True (the pass reaches two cnn ones, bench/
#: msa_pair_dev_misses.txt).
DEFAULT_PAIR_BEST_SECOND = {"offload": "both", "placement": False}
DEFAULT_PAIR_ROUNDS = 2
DEFAULT_PAIR_CHUNK = 16
#: The largest game bucket the agent polishes by default, per mode. A
#: placement polish pass tries 29 actions x 3 completions per move where the
#: search plays 16 simulations: measured 2.8x the search's own wall time on
#: the 64-buffer bucket (bench_msa_learned.py, 12 held-out instances, loaded
#: machine), so at 256 buffers it is off by default; ``polish=N`` still
#: polishes there. Offload polish (8 actions, the mode a compile-time
#: constant: game.offload_mode) costs a fraction of that: on the 256-move
#: bucket since 2026-12-06 (docs/msa.md, *Offload polish up to the 256-move
#: bucket*).
POLISH_MAX_BUCKET = {"offload": 256, "placement": 64}
#: Above ROLLOUT_MAX_BUCKET buffers the default is the policy's argmax (no
#: search): a searched move costs (simulations + 1) network evaluations and
#: game steps, measured 25 ms + 21 ms each at the 1,024-buffer bucket
#: (transformer_deep, 2 busy cores), so 16 simulations would take about 12
#: minutes for 1,000 buffers. ``simulations=N`` still searches there.
BIG_DEFAULT_SIMULATIONS = 0
#: Above the 256-move bucket (the big programs), where the default plays
#: the policy's argmax and nothing polishes it, the agent's game goes
#: through msa.solvers.localsearch: every other buffer's plan (and offset) kept,
#: each change timed by the cost model itself (milliseconds at 2,000
#: buffers, where a polish pass would replay 2,000-move games), up to
#: LOCAL_SEARCH_PASSES passes (it stops when a pass changes nothing: 2-4
#: passes). Judged against rules written before each run (docs/msa.md,
#: *The local search above the 256-move bucket*). Offload (criterion N):
#: dev, big training programs, policy -> + local search 0.616 -> 0.526,
#: 0.948 -> 0.501, 1.000 -> 0.932 of the heuristic's time; held-out big
#: programs 1.001 -> 0.942, 0.948 -> 0.518, 0.683 -> 0.597; fresh synthetic
#: set (302-1,403 buffers) faster on 8/8, geomean 0.986 -> 0.895, for
#: 0.2-5 s against the policy's 1.6-14 s. ``local_search``: True runs it on
#: every instance, False on none.
DEFAULT_LOCAL_SEARCH = True
LOCAL_SEARCH_PASSES = 20
#: The default local search's gate: games of more moves than this bucket,
#: in these modes. Placement (criterion O; a moved buffer keeps its offset
#: or takes the lowest free one, the others stay): fresh set faster than
#: the policy alone on 8/8 (0.9996 -> 0.9659), held-out big programs on
#: 3/3 (1.001 -> 0.997, 0.997 -> 0.937, 0.951 -> 0.880).
LOCAL_SEARCH_ABOVE_BUCKET = 256
LOCAL_SEARCH_MODES = ("offload", "placement")
#: Also search from the heuristic's solution and keep the faster of the two
#: searched solutions (criterion O): the policy's argmax can be slower than
#: the heuristic (lstm_long-placement-50, a training program: 1.019), and
#: the local search does not always undo that. Fresh offload set: faster on
#: 3/8 (geomean 0.9197 -> 0.9187) for 36% of the policy's wall; never on
#: the fresh placement set; held-out: gru_long_heldout-placement 0.9971 ->
#: 0.9967.
LOCAL_SEARCH_FROM_HEURISTIC = True
#: Pair moves once single changes stop paying (msa.solvers.localsearch ``pairs``: a
#: change that does not fit, made to fit by a change of a buffer in its
#: way; criterion Q): dev, big training programs, e.g. transformer_deep-
#: offload 0.526 -> 0.456, lstm_long-offload 0.932 -> 0.834; fresh sets
#: 72500-72507 (offload) and 72600-72607 (placement): faster on 10/16
#: (geomean 0.9322 -> 0.9274), none slower, 2.7 s more wall (geomean; at
#: most 66 s, 1,403 buffers in placement mode) against the policy's 4.4 s;
#: held-out big programs 0.788 -> 0.771 (6/6 faster) for 40-186 s of search
#: per instance instead of 25-46 s; 14-67 s since the search's speedups of
#: 2026-12-06 (the same solutions).
LOCAL_SEARCH_PAIRS = True
#: Placement mode: once no single or pair change pays, the layout is
#: compacted downwards (every fast buffer at the lowest free offset, in the
#: order of the offsets: plans and time unchanged) and the search goes on
#: (msa.solvers.localsearch ``compact``; criterion U2, docs/msa.md): fresh set
#: 72900-72907 faster on 8/8 (0.9597 -> 0.9538), none slower, +2.9 s wall
#: (geomean) against the policy's 4.5 s. Judged first before the search's
#: speedups (set 72700-72707: 8/8 faster, but +14.6 s against 8.3 s).
LOCAL_SEARCH_COMPACT = True
#: After the polish, in placement mode: msa.solvers.repack (one- and two-buffer plan
#: changes whose offsets are re-derived: in place, by greedy relayouts or by
#: the exact packer, so the layout is no longer bound to the game's skyline
#: offsets; never slower). Chosen on validation and training placement
#: instances (bench/diag_msa_repack.py, bench/msa_repack_validation.txt):
#: validation within 2% of CP-SAT's optimum on 10/11 instead of 8/11,
#: geomean 0.9478 -> 0.9403 of the heuristic's time; training 0.9889 ->
#: 0.9820. Held out once (part p10_small.json): faster on 2 of 9 placement
#: instances, slower on none. About 0.2-0.9 s CPU per instance plus a ~2 s
#: compile per bucket shape.
DEFAULT_REPACK = True
#: The offload relaxation (``relax``, ``memfit assign --relax [play|polish]``):
#: after the repack, a placement instance's plans are improved in its
#: offload relaxation (the same buffers, plans and capacity, fast memory
#: counted per op, no offsets; ``offload_relaxation``), get offsets by
#: msa.solvers.repack.lay_out (a first-fit order search; plans that do not fit lose
#: the buffers above the capacity) and are repacked; the faster valid layout
#: is kept (never slower). Why: the game places a buffer at one of its K
#: lowest skyline offsets when it is decided, so plan sets that fit cannot
#: always be played in placement mode; on 10 of 13 dev misses whose
#: relaxation CP-SAT proved, the relaxation's optimum is the placement
#: optimum. "play" plays the relaxation again, search and polish (11 of 20
#: dev placement misses within 2%; three fresh sets gained 3, 0 and 0 in
#: that count: opt-in). "polish", the default since 2026-12-05 (ninth),
#: polishes the game's own plans there (polish stages and the offload pair
#: stage's gate, no second search): 7 of the 11 dev placement misses of sets
#: 6-10 within 2% vs 5 for "play" (bench/msa_relax_polish_dev.txt); fresh
#: set 11 no gain in the count (resmlp-1121-48 1.145 -> 1.039), fresh set
#: 12, its second trial, 24/30 -> 26/30; none slower in either, 21 s CPU
#: against the default's 205-297 s a set (docs/msa.md, *The relaxation
#: polish*).
DEFAULT_RELAX = "polish"
MAX_BUFFERS = game.BUFFER_BUCKETS[-1]
MAX_OPS = game.OP_BUCKETS[-1]


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


#: The games of more moves than this bucket (played by the policy's argmax
#: and the local search, never searched) are played with the packaged big
#: checkpoint (agent_big.npz, bench/train_msa_agent.py --big-checkpoint:
#: the small one fine-tuned on 30 instances of big training programs of
#: 680-1,372 buffers by imitation of their local-searched games); False:
#: the small checkpoint everywhere. Criterion V (written before the run):
#: the big held-out programs at 25% and 75% (12 instances never exported
#: before): the default 0.7939 -> 0.7895 of the heuristic's time, faster on
#: 3/12, slower on 1 by 0.02%; the argmax alone 0.930 -> 0.872
#: (bench/msa_big_checkpoint_V1.txt).
BIG_CHECKPOINT = True
BIG_CHECKPOINT_ABOVE_BUCKET = LOCAL_SEARCH_ABOVE_BUCKET


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


def default_params(batch: "Batch"):
    """The packaged parameters a batch is played with: the big checkpoint
    above BIG_CHECKPOINT_ABOVE_BUCKET moves when BIG_CHECKPOINT says so."""
    return load_params(big=BIG_CHECKPOINT
                       and batch.arrays.order.shape[1] > BIG_CHECKPOINT_ABOVE_BUCKET)


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


def polish_rows(batch: Batch) -> list:
    """Per instance of the batch, whether the agent polishes it by default:
    the batch's move bucket is within its mode's POLISH_MAX_BUCKET."""
    moves = batch.arrays.order.shape[1]
    return [moves <= POLISH_MAX_BUCKET.get(s.inst.mode, 0) for s in batch.specs]


def default_polish(batch: Batch) -> int:
    """DEFAULT_POLISH_PASSES where some instance of the batch is polished by
    default (``polish_rows``), else 0."""
    return DEFAULT_POLISH_PASSES if any(polish_rows(batch)) else 0


def local_search_rows(batch: Batch, local_search: bool | None = None) -> list:
    """Per instance of the batch, whether msa.solvers.localsearch runs on its game:
    ``local_search`` None: DEFAULT_LOCAL_SEARCH on the LOCAL_SEARCH_MODES
    instances of a batch above LOCAL_SEARCH_ABOVE_BUCKET moves; True: all,
    False: none."""
    if local_search is not None:
        return [bool(local_search)] * len(batch.specs)
    big = DEFAULT_LOCAL_SEARCH and batch.arrays.order.shape[1] > LOCAL_SEARCH_ABOVE_BUCKET
    return [big and s.inst.mode in LOCAL_SEARCH_MODES for s in batch.specs]


def local_search(inst, sol):
    """``(solution, stats)``: msa.solvers.localsearch.improve of ``sol`` with the
    agent's settings (LOCAL_SEARCH_PASSES, _PAIRS, _COMPACT); the one place
    the big default's search, its expert games and its benches share."""
    from ..solvers.localsearch import improve
    return improve(inst, sol, passes=LOCAL_SEARCH_PASSES, pairs=LOCAL_SEARCH_PAIRS,
                   compact=LOCAL_SEARCH_COMPACT)


def local_searched(batch: Batch, sols, rows: list, from_heuristic: bool | None = None) -> list:
    """``sols`` with each row that ``rows`` admits improved by msa.solvers.localsearch
    (never slower: a change is kept only where the cost model times it
    faster; pair moves as LOCAL_SEARCH_PAIRS says, placement compaction as
    LOCAL_SEARCH_COMPACT); ``from_heuristic``
    (default LOCAL_SEARCH_FROM_HEURISTIC): the faster of that and the
    heuristic's solution searched the same way."""
    from ..solvers import heuristic
    if from_heuristic is None:
        from_heuristic = LOCAL_SEARCH_FROM_HEURISTIC
    out = list(sols)
    for i, spec in enumerate(batch.specs):
        if not rows[i]:
            continue
        out[i], st = local_search(spec.inst, sols[i])
        if from_heuristic:
            other, other_st = local_search(spec.inst, heuristic.assign(spec.inst))
            if other_st.final_time < st.final_time:     # both the cost model's time
                other.method, other.notes = out[i].method, out[i].notes
                out[i] = other
    return out


#: Iterated local search (msa.solvers.localsearch.iterate) as the last stage of the
#: default up to the 64-move bucket: ITERATE_ROUNDS rounds per instance (0:
#: off), kicks of ITERATE_KICK buffers. Why: the misses of CP-SAT's proven
#: optimum left on fresh sets were coordinated changes of 4-10 buffers,
#: beyond the polish's and the pair stage's one- and two-move changes.
#: Criterion W (docs/msa.md, *The iterated local search*; rule written
#: before the run): fresh set 18 within 2% of the optimum on 23/25 -> 24/25,
#: none slower, 257 s CPU against the default's 708 s. Dev (sets 15-17's
#: instances above CP-SAT's best): 12/17 -> 15/17 at 200 rounds of kicks of
#: 2-6 buffers, 200 s CPU against 575 s; kicks of up to 10 took one more
#: of the five hardest there.
ITERATE_ROUNDS = 200
ITERATE_KICK = (2, 10)
ITERATE_MAX_BUCKET = 64
#: Placement mode: then ITERATE_LAYOUT_ROUNDS rounds of layout kicks
#: (localsearch.iterate's ``layout_rounds``: ejections and re-layouts of a
#: neighbourhood, relayout moves in the descents; ``memfit assign
#: --layout-rounds``). Off in the default: 200 rounds passed criterion X
#: (docs/msa.md, *Layout rounds*) on fresh sets where they had nothing to
#: fix (geomean 0.8794 -> 0.8792), and on the held-out placement programs
#: they changed no time for 7-49 s more per instance (gru_train-placement
#: 25/50: 32 -> 81 s and 18 -> 46 s of the iterated stage).
ITERATE_LAYOUT_ROUNDS = 0


def iterate_rounds(batch: Batch, iterate: int | None) -> int:
    """The iterated local search's rounds on this batch: ``iterate`` if
    given (0: off), else ITERATE_ROUNDS on games of at most
    ITERATE_MAX_BUCKET moves and none above."""
    if iterate is not None:
        return int(iterate)
    return ITERATE_ROUNDS if batch.arrays.order.shape[1] <= ITERATE_MAX_BUCKET else 0


def iterated_search(inst, sol, rounds: int | None = None, kick: tuple | None = None,
                    seed: int = 0, layout_rounds: int | None = None):
    """``(solution, stats)``: msa.solvers.localsearch.iterate of ``sol`` with the
    agent's settings (``rounds`` default ITERATE_ROUNDS, kicks of ``kick``
    buffers default ITERATE_KICK, the descents as ``local_search``'s; in
    placement mode then ``layout_rounds`` layout rounds, default
    ITERATE_LAYOUT_ROUNDS); the one place the agent's stage and ``memfit
    assign --iterate`` and ``--layout-rounds`` share."""
    from ..solvers.localsearch import iterate
    if layout_rounds is None:
        layout_rounds = ITERATE_LAYOUT_ROUNDS
    return iterate(inst, sol, seed=seed, rounds=ITERATE_ROUNDS if rounds is None else rounds,
                   kick=ITERATE_KICK if kick is None else kick, passes=LOCAL_SEARCH_PASSES,
                   pairs=LOCAL_SEARCH_PAIRS, compact=LOCAL_SEARCH_COMPACT,
                   layout_rounds=layout_rounds)


def iterated(batch: Batch, sols, rows: list, rounds: int | None = None,
             kick: tuple | None = None, seed: int = 0,
             layout_rounds: int | None = None) -> list:
    """``sols`` with each row that ``rows`` admits improved by
    ``iterated_search`` (never slower: only a faster solution replaces the
    best), each keeping its game's method and notes."""
    out = list(sols)
    for i, spec in enumerate(batch.specs):
        if rows[i]:
            sol, _ = iterated_search(spec.inst, sols[i], rounds, kick, seed, layout_rounds)
            sol.method, sol.notes = sols[i].method, sols[i].notes
            out[i] = sol
    return out


def default_value_mode(batch: Batch, uniform: bool) -> str:
    big = batch.arrays.order.shape[1] > ROLLOUT_MAX_BUCKET
    return "zero" if uniform or (big and DEFAULT_VALUE == "rollout") else DEFAULT_VALUE


def play_batch(batch: Batch, *, simulations: int = DEFAULT_SIMULATIONS, uniform: bool = False,
               params=None, seed: int = 0, value_mode: str | None = None,
               value_scale: float | None = None, hint_root: bool | None = None,
               fortified: bool | None = None, best: bool | None = None,
               root_rule: str | None = None, polish: int | None = None,
               max_considered: int | None = None, policy_seed: bool | None = None,
               completions: tuple | None = None, polish_pairs: bool | None = None,
               repack: bool | None = None, relax: bool | str | None = None,
               local_search: bool | None = None, iterate: int | None = None,
               return_actions: bool = False, return_raw: bool = False):
    """Plays every game of the batch; ``(solutions, wall seconds of the play)``
    (with ``return_actions``, also the games' moves [N, M], for ``polish``).
    ``simulations=0``: the policy's argmax; ``uniform``: the same search with
    a uniform prior (and a zero value unless ``value_mode`` says otherwise).
    ``value_mode``: the search's leaf value (``play.VALUE_MODES``; default
    ``DEFAULT_VALUE`` for the learned search). ``fortified``: keep an
    incumbent game (default: ``DEFAULT_FORTIFY`` with a rollout value).
    ``best``: return the fastest validated complete game seen (the played
    game, the heuristic's, the searches' evaluated games; default
    ``DEFAULT_BEST`` with a rollout value and no ``fortified``);
    ``root_rule``: how each search picks its move (play.ROOT_RULES;
    default ``DEFAULT_ROOT_RULE`` for a search with the rollout value and no
    ``fortified``, else "mean"; "max_kept" plays the best game's moves, so
    the played game is the best one kept).
    ``polish``: local-improvement passes after the play (default
    ``DEFAULT_POLISH_PASSES`` after a search with the rollout value),
    starting from the returned game (``completions``: its completions,
    default ``play.DEFAULT_COMPLETIONS``; ``polish_pairs``: the pair stage
    after it, default ``DEFAULT_POLISH_PAIRS`` with the default completions). ``max_considered``: root actions
    the search considers (default ``DEFAULT_MAX_CONSIDERED``). ``repack``: placement
    instances' solutions then go through msa.solvers.repack (default ``DEFAULT_REPACK`` where
    the game is polished; the returned actions are then the polished game's, not
    the repacked layout's). ``return_raw``: also return the
    played game's own solutions (before the best-game choice and polish).
    ``relax``: placement instances are also played in their offload
    relaxation (``relaxed``; default ``DEFAULT_RELAX`` where the game is
    polished; True or "play": played again there, ``relaxation_plans``;
    "polish": the game's own plans polished there, ``relaxation_polish_plans``,
    with the pair stage as ``polish_pairs`` says). ``local_search``: the
    games then go through msa.solvers.localsearch (``local_search_rows``; default:
    above LOCAL_SEARCH_ABOVE_BUCKET moves, where nothing searches or polishes
    them; ``local_searched``: from the heuristic's solution too). ``iterate``:
    then that many rounds of msa.solvers.localsearch.iterate (``iterated``; default
    ``iterate_rounds``: ITERATE_ROUNDS where the game is polished, up to
    ITERATE_MAX_BUCKET moves)."""
    from . import play
    given = {k: v for k, v in locals().items()
             if k not in ("batch", "play", "return_actions", "return_raw")}
    if simulations > 0:
        require("mctx", "the learned memory-space player")
    net = params if params is not None else default_params(batch)
    t0 = time.perf_counter()
    if value_mode is None:
        value_mode = default_value_mode(batch, uniform)
    if fortified is None:
        fortified = DEFAULT_FORTIFY and value_mode == "rollout" and simulations > 0
    if best is None:
        best = (DEFAULT_BEST and value_mode == "rollout" and simulations > 0 and not fortified)
    if root_rule is None:
        root_rule = (DEFAULT_ROOT_RULE if value_mode == "rollout" and simulations > 0
                     and not fortified else "mean")
    only = None            # polish=N given: every instance
    if polish is None:
        polish = default_polish(batch) if value_mode == "rollout" and simulations > 0 else 0
        only = polish_rows(batch)
    seeding = (best or root_rule == "max_kept") and not uniform and (
        DEFAULT_POLICY_SEED if policy_seed is None else policy_seed)
    seed_games = None
    if seeding:
        pol, _, pol_actions, _ = play.play_batch(net, batch.arrays, batch.static,
                                                 jax.random.PRNGKey(seed))
        seed_games = (pol.time, pol_actions)
    final, _, actions, kept = play.play_batch(
        net, batch.arrays, batch.static, jax.random.PRNGKey(seed), num_simulations=simulations,
        uniform=uniform, gumbel_scale=0.0, value_mode=value_mode,
        value_scale=DEFAULT_VALUE_SCALE if value_scale is None else value_scale,
        hint_root=(DEFAULT_HINT_ROOT and not uniform) if hint_root is None else hint_root,
        fortified=fortified, best=best, root_rule=root_rule,
        max_considered=DEFAULT_MAX_CONSIDERED if max_considered is None else max_considered,
        seed_games=seed_games)
    method = ("mcts-uniform" if uniform else "learned-mcts") if simulations > 0 else "learned-policy"
    sols = raw = _solutions(batch, final, method)
    if best and kept is not None:
        sols, actions = _fastest(batch, [(raw, actions),
                                         (_solutions(batch, play.replay_batch(batch.arrays, kept[1]),
                                                     method), kept[1])])
    sols, actions = after_search(batch, sols, actions, polish, method, only=only,
                                 completions=completions, polish_pairs=polish_pairs,
                                 repack=repack, relax=relax, local_search=local_search,
                                 iterate=iterate, relax_play={**given, "params": net, "polish": polish})
    wall = time.perf_counter() - t0
    out = (sols, wall) + ((actions,) if return_actions else ()) + ((raw,) if return_raw else ())
    return out


def after_search(batch: Batch, sols, actions, polish: int, method: str, *,
                 only: list | None = None, completions=None, polish_pairs: bool | None = None,
                 repack: bool | None = None, relax: bool | str | None = None,
                 local_search: bool | None = None, iterate: int | None = None,
                 relax_play: dict | None = None):
    """The stages after the search (``play_batch``'s; one place for their
    order): ``polish`` passes (``_polish_stages``, with ``completions`` and
    ``polish_pairs``), then msa.solvers.repack (``repack``; default
    DEFAULT_REPACK where it polishes), then the offload relaxation
    (``relax``; default DEFAULT_RELAX where it polishes; "play" plays it
    with ``play_batch(**relax_play)``), then msa.solvers.localsearch on the rows
    ``local_search_rows(batch, local_search)`` picks, then ``iterate_rounds(batch,
    iterate)`` rounds of msa.solvers.localsearch.iterate where it polishes (``iterate``
    given: on the rows ``only`` picks). ``sols``/``actions``: the search's
    games; ``only``: per instance, whether these stages run on it (default:
    all; ``polish_rows`` for the agent's default). Returns ``(solutions,
    actions)`` (the actions are the polished game's, not the repacked or
    relaxed layout's)."""
    rows = [True] * len(batch.specs) if only is None else list(only)
    if polish > 0 and any(rows):
        final, actions = _polish_stages(batch, actions, polish, completions, polish_pairs,
                                        only=rows)
        sols = _solutions(batch, final, method)
    repack = (DEFAULT_REPACK and polish > 0) if repack is None else repack
    if repack:
        sols = repacked(batch, sols, only=rows)
    how = relax_mode(DEFAULT_RELAX if relax is None else relax)
    if polish > 0 and how:
        plans = (relaxation_polish_plans(batch, sols, polish, polish_pairs, only=rows)
                 if how == "polish" else relaxation_plans(batch, only=rows, **(relax_play or {})))
        sols = relaxed(batch, sols, plans, repack=repack)
    ls_rows = local_search_rows(batch, local_search)
    if any(ls_rows):
        sols = local_searched(batch, sols, ls_rows)
    # the default's rounds only where it polishes; a given count anywhere
    rounds = iterate_rounds(batch, iterate) if iterate is not None or polish > 0 else 0
    if rounds and any(rows):
        sols = iterated(batch, sols, rows, rounds)
    return sols, actions


def _polish_stages(batch: Batch, actions, passes: int, completions, pairs: bool | None = None,
                   only: list | None = None):
    """``passes`` polish passes with ``completions`` (default: play.
    DEFAULT_COMPLETIONS, then as many again with DEFAULT_POLISH_THEN from
    that game, then the pair stage, play.pair_batch, on the instances
    ``pair_stage_rows(batch, pairs)`` picks; none where ``completions``
    are given and ``pairs`` is not), on the instances ``only`` picks
    (default: all; the others' games replayed as they are). Returns
    (final states, actions)."""
    from . import play
    final, actions = _one_at_a_time(play.polish_batch, batch, actions, jnp.int32(passes),
                                    completions=_completions(completions), only=only)
    if completions is None and DEFAULT_POLISH_THEN:
        final, actions = _one_at_a_time(play.polish_batch, batch, actions, jnp.int32(passes),
                                        completions=_completions(DEFAULT_POLISH_THEN), only=only)
    if pairs is None and completions is not None:
        pairs = False          # completions chosen by the caller: no default pair stage
    rows = [p and o for p, o in
            zip(pair_stage_rows(batch, pairs), only or [True] * len(batch.specs))]
    if any(rows):
        final, actions = pair_polish(batch, actions, passes=passes, only=rows)
    return final, actions


def pair_stage_rows(batch: Batch, pairs: bool | None) -> list:
    """Per instance of the batch, whether the pair stage runs on it:
    ``pairs`` True (all) or False (none); None: all if DEFAULT_POLISH_PAIRS,
    else those of at most DEFAULT_PAIR_MAX_BUFFERS[mode] buffers."""
    if pairs is None:
        if DEFAULT_POLISH_PAIRS:
            return [True] * len(batch.specs)
        return [s.inst.num_buffers <= DEFAULT_PAIR_MAX_BUFFERS.get(s.inst.mode, 0)
                for s in batch.specs]
    return [bool(pairs)] * len(batch.specs)


def pair_polish(batch: Batch, actions, max_kicks: int | None = None,
                passes: int = DEFAULT_POLISH_PASSES, rounds: int = DEFAULT_PAIR_ROUNDS,
                completions: tuple | None = None, chunk: int = DEFAULT_PAIR_CHUNK,
                kick_completions: tuple | None = None, only: list | None = None,
                best_second: bool | str | None = None):
    """play.pair_batch over polished games (``actions`` [N, M]): coordinated
    changes that 1-opt cannot reach (``max_kicks``: kicks tried per round,
    None = all; each kick completed with ``kick_completions``, default
    play.PAIR_KICK_COMPLETIONS; ``only``: per instance, whether to run it,
    the others' games are returned as they are; ``best_second``: each kick
    completed by its best second change, play.pair_pass, or (False) by a
    polish pass with the kicked move frozen, or ("both") the first and then
    the second from its game; default DEFAULT_PAIR_BEST_SECOND by the
    instance's mode). Returns (final states, actions); no game gets slower."""
    from . import play
    comps = _completions(completions or DEFAULT_POLISH_THEN or play.COMPLETIONS)
    kicks = _completions(kick_completions or play.PAIR_KICK_COMPLETIONS)

    choice = [DEFAULT_PAIR_BEST_SECOND.get(spec.inst.mode, False) if best_second is None
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
                jnp.int32(max_kicks or (1 << 30)), chunk=chunk, completions=comps,
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
    """msa.solvers.repack of each placement instance's solution (offload ones as
    they are; ``only``: per instance, whether to repack it, default all)."""
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


def relaxation_plans(batch: Batch, only: list | None = None, **play_kwargs) -> dict:
    """``{row: solution}``: the batch's placement instances (``only``: per
    instance, whether to consider it; default all) played in their
    offload relaxation (``offload_relaxation``) by ``play_batch(**
    play_kwargs)``, without the pair stage (on the 20 dev placement misses
    it fixed the same 11 as with it, for less CPU:
    bench/msa_relax_dev_nopairs.txt), the relaxation or repack."""
    rows = _placement_rows(batch, only)
    if not rows:
        return {}
    rb = encode_batch([offload_relaxation(batch.specs[i].inst) for i in rows],
                      access_width=batch.arrays.acc.shape[2])
    plans, _ = play_batch(rb, **{**play_kwargs, "polish_pairs": False, "relax": False,
                                 "repack": False})
    return dict(zip(rows, plans))


#: The relaxation polish's own pair stage (``relaxation_polish_plans`` with
#: ``pairs=None``): relaxations of at most this many buffers, each kick
#: completed by its best second change: the offload pair stage as it was
#: when the relaxation polish was judged (fresh sets 11 and 12); the offload
#: default's later gate of 64 with both completions was judged on offload
#: instances, not on relaxations, and costs far more there (60 buffers:
#: minutes).
RELAX_PAIR_MAX_BUFFERS = 32
RELAX_PAIR_BEST_SECOND = True


def _placement_rows(batch: Batch, only: list | None) -> list:
    """The rows of the batch's placement instances that ``only`` admits."""
    return [i for i, spec in enumerate(batch.specs)
            if spec.inst.mode == "placement" and (only is None or only[i])]


def relaxation_polish_plans(batch: Batch, sols, passes: int = DEFAULT_POLISH_PASSES,
                            pairs: bool | None = None, best_second=None,
                            only: list | None = None) -> dict:
    """``{row: solution}``: each placement instance's solution ``sols[row]``
    (its plans; offsets dropped) polished in the instance's offload
    relaxation (``offload_relaxation``): no search, the polish stages from
    that game (``_polish_stages``), then the pair stage (``pairs``: on all
    or none; None: RELAX_PAIR_MAX_BUFFERS; ``best_second``: its kicks'
    completion, None: RELAX_PAIR_BEST_SECOND).
    A cheaper relaxation than ``relaxation_plans``, which plays the
    relaxation again from the start: offload polish costs a fraction of
    placement polish (game.offload_mode, 8 actions of 29). ``only``: per
    instance, whether to consider it (default all)."""
    rows = _placement_rows(batch, only)
    if not rows:
        return {}
    rb = encode_batch([offload_relaxation(batch.specs[i].inst) for i in rows],
                      access_width=batch.arrays.acc.shape[2])
    M = rb.arrays.order.shape[1]
    acts = np.stack([_offload_moves(spec, sols[i], M) for spec, i in zip(rb.specs, rows)])
    final, acts = _polish_stages(rb, jnp.asarray(acts), passes, None, False)
    pair_rows = ([s.inst.num_buffers <= RELAX_PAIR_MAX_BUFFERS for s in rb.specs]
                 if pairs is None else [bool(pairs)] * len(rows))
    if any(pair_rows):
        final, _ = pair_polish(rb, acts, passes=passes, only=pair_rows,
                               best_second=(RELAX_PAIR_BEST_SECOND if best_second is None
                                            else best_second))
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


def polish(batch: Batch, actions, passes: int = DEFAULT_POLISH_PASSES,
           completions: tuple | None = None, pairs: bool | None = None,
           only: list | None = None):
    """Local improvement (``play.polish_batch``) of games already played
    (``actions`` from ``play_batch(..., return_actions=True)``):
    ``(solutions, wall seconds, polished actions)``. A polished game is
    never slower than the game it starts from. ``pairs``: run the pair
    stage after (``_polish_stages``); ``only``: per instance, whether to
    polish it (default all; ``polish_rows`` for the agent's default)."""
    t0 = time.perf_counter()
    final, actions = _polish_stages(batch, actions, passes, completions, pairs, only=only)
    jax.block_until_ready(final.time)
    return _solutions(batch, final, "learned-polish"), time.perf_counter() - t0, actions


def play_instances(insts, **kwargs):
    """``play_batch(encode_batch(insts), **kwargs)``; the wall time counts both."""
    batch = encode_batch(insts)
    sols, wall = play_batch(batch, **kwargs)
    return sols, wall + batch.encode_seconds


def default_simulations(inst) -> int:
    """DEFAULT_SIMULATIONS, or BIG_DEFAULT_SIMULATIONS above the rollout's bucket."""
    return (DEFAULT_SIMULATIONS if game._bucket(inst.num_buffers, game.BUFFER_BUCKETS)
            <= ROLLOUT_MAX_BUCKET else BIG_DEFAULT_SIMULATIONS)


def assign(inst, *, simulations: int | None = None, checkpoint=None, seed: int = 0,
           polish: int | None = None, polish_pairs: bool | None = None,
           repack: bool | None = None, relax: bool | str | None = None,
           local_search: bool | None = None, iterate: int | None = None):
    """A validated Solution for ``inst`` (an Instance) by the learned agent
    (``simulations``: default ``default_simulations(inst)``; ``polish``:
    local-improvement passes, default as ``play_batch``; ``polish_pairs``:
    the pair stage after them, default ``DEFAULT_POLISH_PAIRS``; ``repack``:
    msa.solvers.repack after it, placement mode, default as ``play_batch``;
    ``relax``: placement mode, also use the offload relaxation, True or
    "play" / "polish", default as ``play_batch``; ``local_search``:
    msa.solvers.localsearch after it, default as ``play_batch``; ``iterate``: rounds
    of msa.solvers.localsearch.iterate last, default as ``play_batch``)."""
    from ..core.validator import validate
    check_size(inst)
    if simulations is None:
        simulations = default_simulations(inst)
    params = load_params(checkpoint) if checkpoint is not None else None
    (sol,), _ = play_instances([inst], simulations=simulations, params=params, seed=seed,
                               polish=polish, polish_pairs=polish_pairs, repack=repack,
                               relax=relax, local_search=local_search, iterate=iterate)
    sol.method = "learned"
    v = validate(inst, sol)
    if not v.valid:
        raise MemfitError(f"BUG: the learned agent produced an invalid solution for "
                          f"{inst.program}: {v.summary()}")
    return sol
