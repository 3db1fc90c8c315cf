"""Planning in the mallocGame with mctx, without a network.

``plan(spec)`` plays one game, choosing each move with
``mctx.gumbel_muzero_policy`` over the real environment (game.step is the
model): uniform prior over legal actions, value 0 at the leaves. Because the
game's time counts undecided buffers as slow, a value of 0 means "no further
saving", so the search is a plain lookahead over the true rewards. It shows
that the game runs inside mctx under jit. The learned player
(``memfit.msa.learned``) replaces the uniform prior and the zero value with a
trained policy/value network and plays batches of games.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ..._optional import require
from ..core import game


def _policy_fn(num_simulations: int, max_depth: int | None):
    mctx = require("mctx", "Monte-Carlo tree search")

    def recurrent_fn(params, rng, action, embedding):
        nxt, reward, done = jax.vmap(game.step)(embedding, action)
        legal = jax.vmap(game.legal_actions)(nxt)
        out = mctx.RecurrentFnOutput(
            reward=reward,
            discount=jnp.where(done, 0.0, 1.0).astype(jnp.float32),
            prior_logits=jnp.where(legal, 0.0, -1e9).astype(jnp.float32),
            value=jnp.zeros_like(reward))
        return out, nxt

    @jax.jit
    def policy(state, key):
        batch = jax.tree.map(lambda x: x[None], state)
        legal = jax.vmap(game.legal_actions)(batch)
        root = mctx.RootFnOutput(prior_logits=jnp.where(legal, 0.0, -1e9).astype(jnp.float32),
                                 value=jnp.zeros((1,), jnp.float32), embedding=batch)
        out = mctx.gumbel_muzero_policy(params=(), rng_key=key, root=root,
                                        recurrent_fn=recurrent_fn,
                                        num_simulations=num_simulations,
                                        invalid_actions=~legal, max_depth=max_depth,
                                        max_num_considered_actions=16)
        return out.action[0]

    return policy


@functools.lru_cache(maxsize=8)
def _cached_policy(num_simulations: int, max_depth):
    return _policy_fn(num_simulations, max_depth)


def plan(spec: game.GameSpec, *, num_simulations: int = 32, max_depth: int | None = None,
         seed: int = 0):
    """Play a whole game with MCTS; returns the solution (method "mcts")."""
    policy = _cached_policy(num_simulations, max_depth)
    step = jax.jit(game.step)
    s = game.init(spec.arrays)
    key = jax.random.PRNGKey(seed)
    while not bool(s.done):
        key, sub = jax.random.split(key)
        a = policy(s, sub)
        s, _, _ = step(s, a)
    return spec.solution(s, method="mcts")
