"""Where instances come from and how solutions are shown: export from
StableHLO (export), jax workloads and synthetic or hand-made instances
(workloads, synthetic, tiny), XLA's own buffer assignment (xla_buffers)
and plots (plot)."""
