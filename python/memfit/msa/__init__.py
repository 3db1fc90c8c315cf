"""Memory-space assignment: the mallocGame, an XLA-style heuristic, an exact solver."""
