"""Solvers over the core's plan menus: the XLA-style heuristic, the exact
CP-SAT model, local search and repacking (improvers of a solution), and
simple baselines."""
