"""The memory-space-assignment problem: instances and solutions (instance,
solution), the cost model (model) and its validator, the plan menus every
solver chooses from (plans), the buffer orders (order), and the problem as
a jit-able jax environment (game)."""
