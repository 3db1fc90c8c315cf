"""Training the player: self-play with Gumbel MuZero, a replay buffer, Adam.

Instances are grouped by shape class (game bucket of buffers, of ops, and
the access-table width) so that a class's games are played with one
``vmap``. Each iteration plays a batch of games of one class with search
(``play.play_batch(record=True)``), stores every real move (the state, the
search's improved policy, and the value target: the fraction of ``T0`` the
game still saved after that state), then takes gradient steps on minibatches
drawn from the same class's replay buffer.

Warm start (``imitate``): expert games (the best of the heuristic's and
CP-SAT's solutions of each training instance, replayed through the game) go
to a separate per-class expert buffer; ``learn`` draws ``expert_fraction``
of every minibatch from it (all of it before any self-play), so that the
self-play targets cannot make the policy drift far from the experts'.

Big classes (above ``SEARCH_MAX_BUCKET`` buffers, the 1,000-4,000-buffer
programs) are not played with search: a searched move there costs
(simulations + 1) network evaluations and game steps at the 1,024-4,096
bucket (minutes per game per simulation). They learn by *self-imitation*
(``Trainer.self_imitate``, expert iteration with the argmax policy as the
improver): the policy's argmax game of every instance is played; where it
is faster than the best game known for the instance (the heuristic's, or an
earlier argmax game), its moves join the class's expert buffer. So the
network is trained at the sizes where the agent plays its argmax by
default, on targets never slower than the heuristic's.

Loss: cross-entropy to the improved policy + ``value_weight`` x squared error
of the value, with AdamW.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from ..._optional import require
from ..core import game
from . import network, play


@dataclass
class Config:
    seed: int = 0
    hidden: int = network.HIDDEN
    simulations: int = 16
    games_per_batch: int = 8
    updates_per_batch: int = 8
    minibatch: int = 64
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    value_weight: float = 1.0
    replay_size: int = 20000
    expert_fraction: float = 0.5
    value_mode: str = "rollout"     # the self-play search's leaf value (play.VALUE_MODES)


@dataclass
class ClassData:
    """The instances of one shape class and their replay buffer."""
    key: tuple
    specs: list
    arrays: game.GameArrays         # stacked over the class's instances
    static: object                  # stacked features.Static
    replay: dict = field(default_factory=dict)
    filled: int = 0
    cursor: int = 0
    expert: dict = field(default_factory=dict)
    best_time: np.ndarray | None = None   # per instance: the fastest expert game (self-imitation)

    @property
    def expert_rows(self) -> int:
        return len(self.expert["step"]) if self.expert else 0

    def add_expert(self, rows: dict) -> None:
        """Appends expert rows (``imitate.expert_rows``) for this class."""
        self.expert = ({k: np.concatenate([self.expert[k], v]) for k, v in rows.items()}
                       if self.expert else dict(rows))

    def improves(self, inst_index: int, time: float) -> bool:
        """Whether a game of ``time`` beats the best game known for the
        instance by more than 1e-6 of its time (expert iteration's rule)."""
        if self.best_time is None:
            self.best_time = np.full(len(self.specs), np.inf)
        return time < self.best_time[inst_index] * (1 - 1e-6)

    def replace_expert(self, inst_index: int, rows: dict, time: float) -> None:
        """The expert rows of one instance replaced by ``rows``, a faster
        game of ``time`` (the slower game's moves must not stay as
        conflicting targets)."""
        if self.expert:
            keep = self.expert["inst"] != inst_index
            self.expert = {k: v[keep] for k, v in self.expert.items()}
        self.add_expert(rows)
        self.best_time[inst_index] = time


def group_by_class(encoded) -> list[ClassData]:
    """``encoded``: ``[(spec, static)]`` -> one ClassData per shape class."""
    groups: dict[tuple, list] = {}
    for spec, sf in encoded:
        groups.setdefault(play.shape_class(spec, sf), []).append((spec, sf))
    out = []
    for key in sorted(groups):
        items = groups[key]
        out.append(ClassData(key, [s for s, _ in items], play.stack([s.arrays for s, _ in items]),
                             play.stack([f for _, f in items])))
    return out


def _add_to_replay(cd: ClassData, idx: np.ndarray, traj, targets, capacity: int) -> int:
    """Appends the real moves of ``traj`` (games ``idx`` of the class)."""
    active = np.asarray(traj.active)
    m, n = np.nonzero(active)
    rows = {"inst": idx[n], "step": np.asarray(traj.step)[m, n],
            "choice": np.asarray(traj.choice)[m, n], "offset": np.asarray(traj.offset)[m, n],
            "live": np.asarray(traj.live)[m, n], "time": np.asarray(traj.time)[m, n],
            "policy": np.asarray(traj.policy)[m, n], "value": np.asarray(targets)[m, n]}
    if not cd.replay:
        cd.replay = {k: np.zeros((capacity,) + v.shape[1:], v.dtype) for k, v in rows.items()}
    k = len(m)
    pos = (cd.cursor + np.arange(k)) % capacity
    for name, v in rows.items():
        cd.replay[name][pos] = v
    cd.cursor = int((cd.cursor + k) % capacity)
    cd.filled = min(cd.filled + k, capacity)
    return k


ROW_KEYS = ("inst", "step", "choice", "offset", "live", "time", "policy", "value")


def _states(arrays, rows) -> game.State:
    inst = jax.tree.map(lambda x: x[rows["inst"]], arrays)
    return game.State(inst=inst, step=rows["step"], choice=rows["choice"],
                      offset=rows["offset"], live=rows["live"], time=rows["time"],
                      done=jnp.zeros_like(rows["step"], bool))


def loss_fn(net, arrays, static, rows, value_weight: float = 1.0):
    states = _states(arrays, rows)
    st = jax.tree.map(lambda x: x[rows["inst"]], static)
    logits, value, _ = jax.vmap(network.apply, (None, 0, 0))(net, st, states)
    logp = jax.nn.log_softmax(logits)
    policy_loss = -(rows["policy"] * logp).sum(-1).mean()
    value_loss = ((value - rows["value"]) ** 2).mean()
    return policy_loss + value_weight * value_loss, (policy_loss, value_loss)


jitted_loss = jax.jit(loss_fn, static_argnames=("value_weight",))


def make_optimizer(cfg: Config):
    optax = require("optax", "training the learned player")
    return optax.adamw(cfg.learning_rate, weight_decay=cfg.weight_decay)


@functools.partial(jax.jit, static_argnames=("opt", "value_weight"))
def update(net, opt_state, arrays, static, rows, *, opt, value_weight: float):
    optax = require("optax", "training the learned player")
    (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(
        net, arrays, static, rows, value_weight)
    upd, opt_state = opt.update(grads, opt_state, net)
    return optax.apply_updates(net, upd), opt_state, loss, parts


#: Classes above this buffer bucket learn by self-imitation, not search
#: (AgentConfig.rollout_max_bucket: above it the agent's default is the argmax).
SEARCH_MAX_BUCKET = 256


def is_big(cd: ClassData) -> bool:
    return cd.key[0] > SEARCH_MAX_BUCKET


class Trainer:
    """Self-play + learning over a list of ClassData."""

    def __init__(self, classes: list[ClassData], cfg: Config, net=None):
        self.classes, self.cfg = classes, cfg
        self.net = net if net is not None else network.init_params(cfg.seed, cfg.hidden)
        self.opt = make_optimizer(cfg)
        self.opt_state = self.opt.init(self.net)
        self.rng = np.random.default_rng(cfg.seed)
        self.key = jax.random.PRNGKey(cfg.seed)

    def self_play(self, cd: ClassData, simulations: int | None = None,
                  games: int | None = None) -> int:
        """Plays a batch of the class's games with search; returns moves stored."""
        n = len(cd.specs)
        k = min(games or self.cfg.games_per_batch, n)
        idx = np.sort(self.rng.choice(n, size=k, replace=False))
        arrays = jax.tree.map(lambda x: x[idx], cd.arrays)
        static = jax.tree.map(lambda x: x[idx], cd.static)
        self.key, sub = jax.random.split(self.key)
        final, traj, _, _ = play.play_batch(self.net, arrays, static, sub,
                                      num_simulations=simulations or self.cfg.simulations,
                                      record=True, value_mode=self.cfg.value_mode)
        targets = play.value_targets(traj, final.time, static.scale)
        return _add_to_replay(cd, idx, traj, targets, self.cfg.replay_size)

    def self_imitate(self, cd: ClassData) -> int:
        """Plays the policy's argmax game on every instance of the class;
        each game faster than the best known for its instance (by more than
        1e-6 of its time) replaces that instance's expert rows (one-hot
        targets of its moves, its own returns as value targets). Returns the
        rows added."""
        final, _, actions, _ = play.play_batch(self.net, cd.arrays, cd.static,
                                               jax.random.PRNGKey(0), record=False)
        return imitate_faster_games(cd, np.asarray(final.time), np.asarray(actions))

    def local_search_imitate(self, cd: ClassData) -> int:
        """Expert iteration with msa.solvers.localsearch as the improvement operator
        (the big checkpoint's rounds, ``memfit train-agent
        --big-checkpoint``): the policy's argmax game on every instance of the
        class, improved by the local search with the agent's big default's
        settings, replaces the instance's expert rows where its replay
        through the game is faster than the best game known. Returns the
        instances whose rows were replaced."""
        from . import agent, imitate
        final, _, _, _ = play.play_batch(self.net, cd.arrays, cd.static, jax.random.PRNGKey(0),
                                         record=False)
        sols = agent._solutions(agent.Batch(cd.specs, cd.arrays, cd.static, 0.0), final,
                                "learned-policy")
        replaced = 0
        for i, spec in enumerate(cd.specs):
            sol = agent.local_search(spec.inst, sols[i])[0]
            rows, t = imitate.expert_rows(spec, float(cd.static.scale[i]), [sol], i,
                                          spec.num_actions, return_time=True)
            if cd.improves(i, t):
                cd.replace_expert(i, rows, t)
                replaced += 1
        return replaced

    def learn(self, cd: ClassData, steps: int | None = None) -> tuple[float, float, float]:
        """Gradient steps on the class's replay; mean (loss, policy, value)."""
        out = []
        for _ in range(steps or self.cfg.updates_per_batch):
            rows = self._minibatch(cd)
            self.net, self.opt_state, loss, (pl, vl) = update(
                self.net, self.opt_state, cd.arrays, cd.static, rows, opt=self.opt,
                value_weight=self.cfg.value_weight)
            out.append((float(loss), float(pl), float(vl)))
        return tuple(np.mean(out, axis=0))

    def _minibatch(self, cd: ClassData) -> dict:
        """``expert_fraction`` of the rows from the expert buffer (all of them
        while the replay is empty, none without experts), the rest from the
        self-play replay."""
        n = self.cfg.minibatch
        n_exp = (0 if not cd.expert_rows else n if not cd.filled
                 else int(round(n * self.cfg.expert_fraction)))
        parts = []
        if n_exp:
            pick = self.rng.integers(0, cd.expert_rows, size=n_exp)
            parts.append({k: cd.expert[k][pick] for k in ROW_KEYS})
        if n - n_exp:
            pick = self.rng.integers(0, cd.filled, size=n - n_exp)
            parts.append({k: cd.replay[k][pick] for k in ROW_KEYS})
        return {k: jnp.asarray(np.concatenate([p[k] for p in parts])) for k in ROW_KEYS}

    def fixed_loss(self, cd: ClassData) -> float:
        """Loss over the class's whole replay (for tests and logs)."""
        rows = {k: jnp.asarray(v[:cd.filled]) for k, v in cd.replay.items()}
        return float(jitted_loss(self.net, cd.arrays, cd.static, rows, self.cfg.value_weight)[0])


def imitate_faster_games(cd: ClassData, times, actions) -> int:
    """Expert iteration's update of the targets: the games ``actions`` [N, M]
    (one per instance of the class, in the game's move order; ``times`` [N]
    their estimated times) replace an instance's expert rows where they are
    faster than the best game known for it (by more than 1e-6 of its time),
    as one-hot targets of their moves and their own returns as value
    targets. Used with the policy's argmax games (``Trainer.self_imitate``)
    and with the agent's searched and polished games
    (``memfit train-agent --search-experts``). Returns the rows added."""
    from . import imitate
    added = 0
    for i, spec in enumerate(cd.specs):
        if cd.improves(i, times[i]):
            rows = imitate.action_rows(spec, float(cd.static.scale[i]), actions[i], i,
                                       spec.num_actions)
            cd.replace_expert(i, rows, times[i])
            added += len(rows["step"])
    return added
