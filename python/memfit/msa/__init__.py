"""Memory-space assignment: the problem (core), its solvers (solvers),
instances in and plots out (io) and the learned player (learned); offload
ties them into memfit.jit, cli into the command line."""
