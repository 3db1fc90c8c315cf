"""The learned mallocGame player (mallocMuZero-style).

``assign(instance)`` plays an instance with the packaged, trained
policy/value network and Gumbel MuZero search, its settings an
``AgentConfig`` (``DEFAULT_CONFIG``); see ``docs/msa.md``. Modules: features
(what the network sees), network, play (search and batched games), agent
(the player's stages and settings), train (self-play and learning), imitate
(expert games), programs (random training programs), recipe (``memfit
train-agent``), checkpoint.
"""
from .agent import DEFAULT_CONFIG, AgentConfig, PerMode, assign, load_params, play_instances

__all__ = ["assign", "load_params", "play_instances", "AgentConfig", "DEFAULT_CONFIG", "PerMode"]
