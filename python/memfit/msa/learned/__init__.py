"""The learned mallocGame player (mallocMuZero-style).

``assign(instance, simulations=16)`` plays an instance with the packaged,
trained policy/value network and Gumbel MuZero search; see ``docs/msa.md``.
Modules: features (what the network sees), network, play (search and
batched games), train (self-play and learning), checkpoint, agent.
"""
from .agent import DEFAULT_SIMULATIONS, assign, load_params, play_instances

__all__ = ["assign", "load_params", "play_instances", "DEFAULT_SIMULATIONS"]
