"""The learned mallocGame player (mallocMuZero-style): network, search, training."""
