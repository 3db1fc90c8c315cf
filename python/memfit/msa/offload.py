"""Host offload for a memory limit: export, solve, annotate.

``offload_pipeline(text, memory_limit, method)`` takes a StableHLO module and
returns it with jax's own host-offload annotations
(``stablehlo.custom_call @annotate_device_placement``, "pinned_host" after
the producer and "device" before the uses) on the buffers a memory-space
assignment solver chose to keep in host memory:

1. ``memfit-inline``, then ``memfit-export-buffers`` (the instance, with
   fast-memory capacity ``memory_limit``);
2. the solver: :func:`memfit.msa.solvers.portfolio.assign` ("auto", the
   default: heuristic, local search, CP-SAT and iterated local search within
   the budget), :func:`memfit.msa.solvers.heuristic.assign` ("heuristic",
   XLA-style), :func:`memfit.msa.solvers.exact.solve` ("exact", CP-SAT) or
   :func:`memfit.msa.learned.assign` ("learned", the trained player);
3. ``memfit-assign-memory-space{assignment=<solution.json>}`` on the same
   inlined module (so buffer ids agree).

XLA on a GPU moves the offloaded buffers to pinned host memory; XLA on CPU
ignores the annotations (the program computes the same values).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import MemfitError

METHODS = ("auto", "heuristic", "exact", "learned")


def solve_instance(inst, method: str, *, time_limit: float = 10.0,
                   time_budget: float | None = None):
    """A Solution for an Instance by ``method`` ("auto": msa.solvers.portfolio,
    "heuristic", "exact" or "learned": the trained player with search,
    memfit.msa.learned), within ``time_budget`` seconds when given (the best
    valid solution by then, as ``memfit assign --time-budget``; "auto"
    without one: portfolio.DEFAULT_SECONDS)."""
    if method not in METHODS:
        raise MemfitError(f"unknown offload method {method!r}; choose one of {', '.join(METHODS)}")
    from .solvers.budget import Budget
    budget = Budget(time_budget)
    if method == "auto":
        from .solvers import portfolio
        return portfolio.assign(inst, time_budget)
    if method == "heuristic":
        from .solvers.heuristic import assign
        return assign(inst, deadline=budget.deadline)
    if method == "exact":
        from .solvers.exact import solve, solve_within
        if budget.deadline is not None:
            return solve_within(inst, budget)
        return solve(inst, time_limit=time_limit).solution
    from .learned import assign
    return assign(inst, budget=budget if budget.deadline is not None else None)


def assign_memory_space(text: str, solution_path: str, *, function: str | None = None) -> str:
    """Runs memfit-assign-memory-space with a solution file on ``text``
    (which must be the module the instance was exported from)."""
    from ..transform import transform
    from .io.export import _option_text
    opts = [f"assignment={_option_text(solution_path)}"]
    if function:
        opts.append(f"function={_option_text(function)}")
    return transform(text, "memfit-assign-memory-space{" + " ".join(opts) + "}")


def offload_pipeline(text: str, memory_limit: int | str, method: str = "auto", *,
                     device: str = "h200", function: str | None = None,
                     time_limit: float = 10.0, time_budget: float | None = None,
                     return_details: bool = False):
    """``text`` with host-offload annotations so that the buffers kept in
    device memory fit ``memory_limit`` (bytes, "2GiB", or "50%" of the
    program's fusion-aware peak), chosen by ``method`` (within
    ``time_budget`` seconds when given).

    With ``return_details=True`` returns ``(text, instance, solution)``.
    """
    from ..transform import transform
    from .core.instance import Instance
    from .io.export import export_buffers
    if method not in METHODS:
        raise MemfitError(f"unknown offload method {method!r}; choose one of {', '.join(METHODS)}")
    inlined = transform(text, "memfit-inline", record_pipeline=False)
    inst_dict = export_buffers(inlined, device, memory_limit, "offload", function=function)
    inst = Instance.from_dict(inst_dict)
    sol = solve_instance(inst, method, time_limit=time_limit, time_budget=time_budget)
    fd, path = tempfile.mkstemp(prefix="memfit-solution-", suffix=".json")
    os.close(fd)
    try:
        sol.save(path)
        out = assign_memory_space(inlined, path, function=function)
    finally:
        Path(path).unlink(missing_ok=True)
    if return_details:
        return out, inst, sol
    return out
