"""The default method: several solvers in turn within one wall-time budget
(``memfit assign`` without ``--method``, ``--method auto``;
``memfit.jit(..., offload=True)`` or ``offload="auto"``).

Why a portfolio: bench/bench_msa_anytime.py measures every method's best
answer at 0.5, 2 and 10 s. Local search from the heuristic converges in
well under a second up to a few hundred buffers; CP-SAT hinted with a good
solution proves small instances optimal or improves on the hint within
seconds; iterated local search finds the coordinated changes the descent
misses; the learned player's worker (jax, its checkpoint, the compiled game)
does not answer within 10 s. So the stages, each given what the ones before
it left of the one deadline (msa.solvers.budget), are:

1. the heuristic (XLA-style; stopped at the deadline);
2. local search from it (the learned agent's settings: pairs, compaction);
3. CP-SAT hinted with the best so far, for ``CPSAT_SHARE`` of the time left,
   on instances of at most ``CPSAT_MAX_BUFFERS`` buffers (above, its model
   alone takes seconds and it found nothing in the bench) and where ortools
   is installed (``memfit[msa]``); a proven optimum over the plan menus ends
   the search there;
4. iterated local search from the best so far until the deadline.

Every stage's result is validated and only a faster one replaces the best,
so the answer is never slower than the heuristic's, nor than the local
search's when that finished. Stages 3 and 4 run until the deadline unless
CP-SAT proves the optimum: the budget is the time the caller gives.
"""
from __future__ import annotations

import os

from ..._optional import MissingDependency
from ..core.solution import Solution
from ..core.validator import validate
from .budget import Budget

#: seconds when the caller names none (memfit assign, memfit.jit's offload)
DEFAULT_SECONDS = 10.0
#: CP-SAT's share of the time left after the local search
CPSAT_SHARE = 0.5
#: CP-SAT only up to this many buffers
CPSAT_MAX_BUFFERS = 512
#: no stage starts with less than this many seconds left
MIN_STAGE_SECONDS = 0.02
#: msa.solvers.localsearch's settings, the learned agent's
#: (AgentConfig.local_search_passes, _pairs, _compact, iterate_kick; a test
#: checks they agree), repeated so that the default does not import jax
LOCAL_SEARCH = {"passes": 20, "pairs": True, "compact": True}
ITERATE_KICK = (2, 10)


class _Best:
    """The fastest valid solution seen, by the validator."""

    def __init__(self, inst, sol: Solution):
        self.inst = inst
        self.sol, self.time = sol, self._time(sol)

    def _time(self, sol: Solution) -> float:
        v = validate(self.inst, sol)
        return v.estimated_time if v.valid else float("inf")

    def offer(self, sol: Solution) -> None:
        t = self._time(sol)
        if t < self.time:
            self.sol, self.time = sol, t


def _left(budget: Budget) -> float:
    return budget.left() if budget.deadline is not None else float("inf")


def assign(inst, budget: Budget | float | None = None, *, num_workers: int | None = None,
           seed: int = 0) -> Solution:
    """The best valid solution the stages above find for ``inst`` within
    ``budget`` (a Budget, or seconds; None: ``DEFAULT_SECONDS``);
    ``num_workers``: CP-SAT's (None: the CPU count, at most 8); ``seed``: CP-SAT's and the iterated local
    search's."""
    from . import exact, heuristic, localsearch
    if num_workers is None:
        num_workers = min(8, os.cpu_count() or 1)
    if not isinstance(budget, Budget):
        budget = Budget(DEFAULT_SECONDS if budget is None else budget)
    if budget.deadline is None:
        raise ValueError("the portfolio needs a bounded budget")
    best = _Best(inst, heuristic.assign(inst, deadline=budget.deadline))
    if _left(budget) > MIN_STAGE_SECONDS:
        best.offer(localsearch.improve(inst, best.sol, time_limit=budget.left(),
                                       **LOCAL_SEARCH)[0])
    if inst.num_buffers <= CPSAT_MAX_BUFFERS and _left(budget) > MIN_STAGE_SECONDS:
        try:
            res = exact.solve(inst, time_limit=CPSAT_SHARE * budget.left(),
                              num_workers=num_workers, seed=seed, hint=best.sol,
                              deadline=budget.deadline)
        except MissingDependency:       # without memfit[msa]: the other stages only
            res = None
        if res is not None:
            best.offer(res.solution)
            if res.status == "OPTIMAL":
                return _named(best.sol)
    if _left(budget) > MIN_STAGE_SECONDS:
        best.offer(localsearch.iterate(inst, best.sol, rounds=10**9, kick=ITERATE_KICK,
                                       seed=seed, time_limit=budget.left(),
                                       **LOCAL_SEARCH)[0])
    return _named(best.sol)


def _named(sol: Solution) -> Solution:
    sol.method = "auto"
    return sol
