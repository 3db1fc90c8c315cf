"""An exact solver: CP-SAT over the plan menus with the validator's cost model.

Decision variables: one boolean per (buffer, menu plan), exactly one per
buffer; in placement mode an offset per buffer. Constraints:

* placement: every resident interval of the chosen plan is an optional
  interval in time (present iff the plan is chosen), paired with the buffer's
  fixed-size address interval ``[offset, offset + size)`` in ``NoOverlap2D``;
* both modes: resident bytes at every op <= capacity (linear, per op);
* time, exactly the validator's (model.py): op ``t`` has a ready time ``R_t``
  (previous op's end) and a start ``S_t >= R_t`` that also waits for every
  chosen prefetch whose use is ``t``; its duration ``d_t >= weight * compute``
  and ``d_t >= sum of its accesses' memory times`` (each access's time depends
  linearly on the plan booleans); a prefetch issued before op ``s`` starts at
  ``>= R_s``, after the buffer's eviction is done, and after the previous copy
  in its queue (FIFO in the validator's event order ``(op, phase, use,
  buffer)``, modelled as a chain of queue-free times); an eviction starts
  ``>= S_e + d_e``. Without copy/compute overlap, copies add their duration to
  the ops' clock instead. The objective is the makespan (last op's end, last
  copy's end).

Everything is monotone, so for a fixed choice the least makespan is the
validator's as-soon-as-possible schedule. Durations are integers in ticks
(``TICKS`` per all-slow run); each is rounded *down*, so CP-SAT's objective
bound is a true lower bound on the validator's time over the menu family
(the family the heuristic, the baselines' copy plans and the game choose
from; plans.py). It is not a bound over every solution the format can
express (several prefetches per buffer, windows the picker did not offer).
The returned solution is re-scored by the validator.
"""
from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass

from ..._optional import require
from ..core.instance import Instance
from ..core.model import access_seconds, compute_seconds, copy_seconds, op_seconds, simulate
from ..core.plans import build_menus, menu_index
from ..core.solution import NOTES, Solution
from ..core.validator import Verdict, validate

TICKS = 20_000_000


@dataclass
class ExactResult:
    solution: Solution
    verdict: Verdict
    objective: float          # CP-SAT's objective, seconds (rounded-down durations)
    bound: float              # lower bound over the menu family, seconds (see solve)
    status: str
    wall_time: float
    hinted_time: float | None  # validator time of the hint, if any

    @property
    def gap(self) -> float:
        t = self.verdict.estimated_time
        return (t - self.bound) / t if t else 0.0


def _hint_schedule(m, inst, choice, d_terms, R, S, d, M, pf_vars, ev_vars, pfs, evs, overlap):
    """Hint every timing variable with the as-soon-as-possible schedule of the
    hinted plans, in ticks (the validator's simulation with the model's
    rounded durations), so that CP-SAT starts from a complete solution."""
    T = inst.num_ops
    dur = []
    for t in range(T):
        c, terms = d_terms[t]
        mem = sum(fast if choice[b] in fps else slow for (b, slow, fast, fps) in terms)
        dur.append(max(c, mem))
    chosen_pf = [(key, b, p, du) for (key, b, p, du) in pfs if choice[b] == p]
    chosen_ev = [(key, b, p, du) for (key, b, p, du) in evs if choice[b] == p]
    events = sorted([(k, "pf", b, du) for (k, b, _p, du) in chosen_pf]
                    + [(k, "ev", b, du) for (k, b, _p, du) in chosen_ev]
                    + [((t, 1, 0, 0), "op", t, 0) for t in range(T)])
    clock = qh = qd = 0
    pf_start, pf_done, ev_start, ev_done = {}, {}, {}, {}
    r_val, s_val = [0] * T, [0] * T
    for (key, kind, i, du) in events:
        if kind == "pf":
            if overlap:
                st = max(clock, qh, ev_done.get(i, 0))
                qh = st + du
            else:
                st = clock
                clock = st + du
            pf_start[i], pf_done[i] = st, st + du
        elif kind == "ev":
            if overlap:
                st = max(clock, qd)
                qd = st + du
            else:
                st = clock
                clock = st + du
            ev_start[i], ev_done[i] = st, st + du
        else:
            t = i
            r_val[t] = clock
            wait = clock
            for (k2, b, _p, _du) in chosen_pf:
                if k2[2] == t:
                    wait = max(wait, pf_done[b])
            s_val[t] = wait
            clock = wait + dur[t]
    for t in range(T):
        m.AddHint(R[t], r_val[t])
        m.AddHint(S[t], s_val[t])
        m.AddHint(d[t], dur[t])
    m.AddHint(M, max(clock, qh, qd))
    if overlap:
        for vars_, starts in ((pf_vars, pf_start), (ev_vars, ev_start)):
            q = 0
            for item in vars_:
                b, p, st, q2, du = item[:5]
                if choice[b] == p:
                    m.AddHint(st, starts[b])
                    q = max(q, starts[b] + du)
                else:
                    m.AddHint(st, 0)
                m.AddHint(q2, q)


def tick_seconds(inst: Instance) -> float:
    """The length of one of CP-SAT's integer time steps for ``inst``."""
    slow_time = simulate(inst, {}).estimated_time
    return slow_time / TICKS if slow_time > 0 else 1.0


def _pin(m, menus, x, y, sol: Solution) -> None:
    """Constrains the choice (and offset) of every buffer to ``sol``'s."""
    by_id = sol.by_id()
    for b in range(len(menus)):
        p = menu_index(menus[b], by_id[b])
        if p is None:
            raise ValueError(f"buffer {b}: the fixed solution's plan is not on its menu")
        m.Add(x[b][p] == 1)
        if y[b] is not None and p != 0 and by_id[b].offset is not None:
            m.Add(y[b] == by_id[b].offset)


def solve(inst: Instance, *, time_limit: float = 10.0, num_workers: int = 8,
          hint: Solution | None = None, use_heuristic_hint: bool = True,
          seed: int = 0, log: bool = False, presolve: bool | None = None,
          fixed: Solution | None = None, deadline: float | None = None) -> ExactResult:
    """Solve with CP-SAT.

    ``presolve`` defaults to on up to 40 buffers only: on the exported
    instances with 49-308 buffers CP-SAT's presolve alone used up 1.5-30 s
    time limits and returned UNKNOWN, while without it the (complete) hint is
    found at once. The reported ``bound`` is the larger of CP-SAT's objective
    bound and the all-fast bound (every op with all its accesses in fast
    memory, no copies: below the time of any solution).

    ``fixed`` pins every buffer to that solution's menu plan (and offset):
    the objective is then the solution's time as CP-SAT encodes it, at most
    one tick (``tick_seconds``) per duration term below the validator's.

    ``deadline`` (a ``time.perf_counter()`` value, msa.solvers.budget):
    CP-SAT's limit is cut to the time left once the model is built (its
    encoding is not interruptible)."""
    t0 = _time.time()
    cp_model = require("ortools.sat.python.cp_model", "exact memory-space assignment (CP-SAT)")
    if hint is None and use_heuristic_hint:
        from .heuristic import assign
        hint = assign(inst)
    picker, menus = build_menus(inst)
    dev = inst.device
    n, T = inst.num_buffers, inst.num_ops
    slow_time = simulate(inst, {}).estimated_time
    scale = TICKS / slow_time if slow_time > 0 else 1.0
    horizon = int(TICKS * 4 + 1000)

    def ticks(sec: float) -> int:
        return int(math.floor(sec * scale))

    m = cp_model.CpModel()
    x = [[m.NewBoolVar(f"x{b}_{p}") for p in range(len(menus[b]))] for b in range(n)]
    plans = [[menus[b][p].plan(inst, b) for p in range(len(menus[b]))] for b in range(n)]
    for b in range(n):
        m.AddExactlyOne(x[b])
        if inst.buffers[b].size > inst.capacity:
            m.Add(x[b][0] == 1)

    # capacity per op; the (buffer, plan) pairs resident at each op gathered
    # from the plans' intervals, in (buffer, plan) order: asking every plan
    # about every op took seconds above 1,000 buffers
    resident_at = [[] for _ in range(T)]
    for b in range(n):
        for p in range(1, len(menus[b])):
            ops = set()
            for lo, hi in plans[b][p].intervals():
                ops.update(range(max(lo, 0), min(hi, T - 1) + 1))
            for t in sorted(ops):
                resident_at[t].append((b, p))
    for t in range(T):
        terms = [inst.buffers[b].size * x[b][p] for b, p in resident_at[t]]
        if terms:
            m.Add(sum(terms) <= inst.capacity)

    # placement rectangles
    y = [None] * n
    if inst.mode == "placement":
        xs, ys = [], []
        for b in range(n):
            size = inst.buffers[b].size
            if size > inst.capacity:
                continue
            y[b] = m.NewIntVar(0, inst.capacity - size, f"y{b}")
            if size == 0:
                continue
            for p in range(1, len(menus[b])):
                for (lo, hi) in plans[b][p].intervals():
                    xs.append(m.NewOptionalFixedSizeIntervalVar(lo, hi - lo + 1, x[b][p], f"t{b}_{p}_{lo}"))
                    ys.append(m.NewOptionalFixedSizeIntervalVar(y[b], size, x[b][p], f"a{b}_{p}_{lo}"))
        if xs:
            m.AddNoOverlap2D(xs, ys)

    if fixed is not None:
        _pin(m, menus, x, y, fixed)

    # op durations
    R = [m.NewIntVar(0, horizon, f"R{t}") for t in range(T)]
    S = [m.NewIntVar(0, horizon, f"S{t}") for t in range(T)]
    d = [m.NewIntVar(0, horizon, f"d{t}") for t in range(T)]
    d_terms = []   # per op: (compute ticks, [(b, slow ticks, fast ticks, plans fast at t)])
    for t in range(T):
        w = inst.ops[t].weight
        m.Add(d[t] >= ticks(w * compute_seconds(inst, t)))
        d_terms.append((ticks(w * compute_seconds(inst, t)), []))
        mem = []
        for b in inst.accesses(t):
            slow = ticks(w * access_seconds(inst, b, False))
            fast = ticks(w * access_seconds(inst, b, True))
            fast_ps = [p for p in range(1, len(menus[b])) if plans[b][p].fast_at(t)]
            d_terms[t][1].append((b, slow, fast, set(fast_ps)))
            mem.append(slow - (slow - fast) * sum(x[b][p] for p in fast_ps) if fast_ps else slow)
        if mem:
            m.Add(d[t] >= sum(mem))
        m.Add(S[t] >= R[t])

    # copies
    overlap = dev.copy_overlaps_compute
    pfs, evs = [], []   # (key, b, p, dur)
    for b in range(n):
        for p in range(1, len(menus[b])):
            pl = plans[b][p]
            for (s, u, _r) in pl.windows:
                pfs.append(((s, 0, u, b), b, p, ticks(copy_seconds(inst, b, u))))
            if pl.evict is not None:
                evs.append(((pl.evict, 2, 0, b), b, p, ticks(copy_seconds(inst, b, pl.evict))))
    pfs.sort()
    evs.sort()
    M = m.NewIntVar(0, horizon, "makespan")
    if T:
        m.Add(M >= S[T - 1] + d[T - 1])
        # redundant (ops run one after another), but it hands the LP relaxation
        # the sum of the op durations directly
        m.Add(M >= sum(d))
    pf_vars, ev_vars = [], []   # in chain order
    if overlap:
        for t in range(1, T):
            m.Add(R[t] >= S[t - 1] + d[t - 1])
        ev_end = {}
        q = None
        for (key, b, p, dur) in evs:
            st = m.NewIntVar(0, horizon, f"es{b}_{p}")
            e = key[0]
            m.Add(st >= S[e] + d[e]).OnlyEnforceIf(x[b][p])
            if q is not None:
                m.Add(st >= q).OnlyEnforceIf(x[b][p])
            q2 = m.NewIntVar(0, horizon, f"qd{b}_{p}")
            ev_vars.append((b, p, st, q2, dur))
            if q is not None:
                m.Add(q2 >= q)
            m.Add(q2 >= st + dur).OnlyEnforceIf(x[b][p])
            q = q2
            ev_end[(b, p)] = st + dur
        if q is not None:
            m.Add(M >= q)
        q = None
        for (key, b, p, dur) in pfs:
            s, _, u, _ = key
            st = m.NewIntVar(0, horizon, f"ps{b}_{p}")
            m.Add(st >= R[s]).OnlyEnforceIf(x[b][p])
            if (b, p) in ev_end:
                m.Add(st >= ev_end[(b, p)]).OnlyEnforceIf(x[b][p])
            if q is not None:
                m.Add(st >= q).OnlyEnforceIf(x[b][p])
            q2 = m.NewIntVar(0, horizon, f"qh{b}_{p}")
            pf_vars.append((b, p, st, q2, dur, s, u))
            if q is not None:
                m.Add(q2 >= q)
            m.Add(q2 >= st + dur).OnlyEnforceIf(x[b][p])
            m.Add(S[u] >= st + dur).OnlyEnforceIf(x[b][p])
            q = q2
        if q is not None:
            m.Add(M >= q)
    else:
        pf_at = {t: [] for t in range(T)}
        ev_at = {t: [] for t in range(T)}
        for (key, b, p, dur) in pfs:
            pf_at[key[0]].append(dur * x[b][p])
        for (key, b, p, dur) in evs:
            ev_at[key[0]].append(dur * x[b][p])
        if T:
            m.Add(R[0] >= sum(pf_at[0]) if pf_at[0] else R[0] >= 0)
        for t in range(1, T):
            m.Add(R[t] >= S[t - 1] + d[t - 1] + sum(ev_at[t - 1]) + sum(pf_at[t]))
    m.Minimize(M)

    hinted_time = None
    if hint is not None:
        hv = validate(inst, hint)
        if hv.valid:
            hinted_time = hv.estimated_time
            hb = hint.by_id()
            choice = []
            for b in range(n):
                idx = menu_index(menus[b], hb[b])
                choice.append(idx)
                if idx is None:
                    continue
                for p in range(len(menus[b])):
                    m.AddHint(x[b][p], p == idx)
                if y[b] is not None:
                    m.AddHint(y[b], hb[b].offset if (hb[b].offset is not None and idx != 0) else 0)
            if all(c is not None for c in choice):
                _hint_schedule(m, inst, choice, d_terms, R, S, d, M, pf_vars, ev_vars, pfs, evs,
                               overlap)

    solver = cp_model.CpSolver()
    limit = float(time_limit)
    if deadline is not None:
        limit = max(0.01, min(limit, deadline - _time.perf_counter()))
    solver.parameters.max_time_in_seconds = limit
    solver.parameters.num_workers = int(num_workers)
    solver.parameters.random_seed = int(seed)
    solver.parameters.log_search_progress = bool(log)
    if presolve is None:
        presolve = n <= 40
    solver.parameters.cp_model_presolve = bool(presolve)
    status = solver.Solve(m)
    sname = solver.StatusName(status)
    all_fast = sum(op_seconds(inst, t, {b: True for b in inst.accesses(t)}) for t in range(T))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sol = hint if hint is not None else Solution.all_slow(inst, "exact")
        v = validate(inst, sol)
        return ExactResult(sol, v, float("nan"), all_fast, sname, _time.time() - t0, hinted_time)
    out = []
    for b in range(n):
        p = next(p for p in range(len(menus[b])) if solver.Value(x[b][p]))
        off = solver.Value(y[b]) if (y[b] is not None and p != 0) else None
        out.append(menus[b][p].assignment(b, off))
    sol = Solution(inst.mode, "exact", out, NOTES[inst.mode])
    v = validate(inst, sol)
    bound = max(solver.BestObjectiveBound() / scale, all_fast)
    return ExactResult(sol, v, solver.ObjectiveValue() / scale, bound, sname,
                       _time.time() - t0, hinted_time)


def solve_within(inst: Instance, budget, *, num_workers: int = 8, seed: int = 0) -> Solution:
    """CP-SAT within ``budget`` (msa.solvers.budget.Budget): the heuristic
    (its hint) stopped at the deadline, then CP-SAT with the time left as
    its limit (its model's encoding is not interruptible and counts against
    the budget), the faster of the two by the validator."""
    from ..core.validator import validate
    from . import heuristic
    hint = heuristic.assign(inst, deadline=budget.deadline)
    if budget.expired():
        return hint
    sol = solve(inst, time_limit=max(budget.left(), 0.01), num_workers=num_workers,
                seed=seed, hint=hint, deadline=budget.deadline).solution
    v = validate(inst, sol)
    if not v.valid or validate(inst, hint).estimated_time < v.estimated_time:
        return hint
    return sol
