"""What memfit tells a user about a program's memory: the fusion-aware
profile (profiling, report) and what memfit-split did (split: the
``SplitReport`` of ``memfit.jit(...).report()`` and ``memfit explain``;
plot: its picture)."""
