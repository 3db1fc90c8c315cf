"""Harnesses that check memfit, shipped so that users can run them on their
own build: examples (programs as users write them), oracle (float64
references and the numerics contract's check), fuzz (random programs split
at random limits and checked against XLA)."""
