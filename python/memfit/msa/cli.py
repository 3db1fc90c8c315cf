"""``memfit assign | score | plot | train-agent``: memory-space assignment from the
command line.

Wired into memfit's CLI by ``add_subcommands(subparsers)``.
"""
from __future__ import annotations

import argparse
import sys

from .solvers.budget import Budget

METHODS = ("auto", "heuristic", "exact", "learned", "greedy", "random", "slow")


def run_method(inst, method: str, *, time_limit: float = 10.0, num_workers: int | None = None,
               seed: int = 0,
               simulations: int | None = None, polish: int | None = None,
               polish_pairs: bool | None = None, repack: bool | None = None,
               relax: bool | str | None = None, local_search: bool | None = None,
               iterate: int | None = None, time_budget=None):
    """``method``'s solution; ``repack`` (placement mode): then msa.solvers.repack,
    ``local_search``: then msa.solvers.localsearch (None: the learned agent's
    default, off for the other methods); ``iterate``: then that many rounds
    of msa.solvers.localsearch.iterate (None: the learned agent's default, off for
    the other methods).

    ``time_budget`` (seconds, or a msa.solvers.budget.Budget shared with the
    caller): wall time for the whole method, its stages after it included,
    from this call on; each stage gets what the ones before it left, and the
    best valid solution found by then is returned (see ``_budgeted``).
    ``time_limit``: CP-SAT's own limit where no budget is given.
    ``num_workers``: CP-SAT's (None: 8 for exact, the CPU count up to 8 for
    auto)."""
    budget = time_budget if isinstance(time_budget, Budget) else Budget(time_budget)
    kw = dict(time_limit=time_limit, num_workers=num_workers, seed=seed, simulations=simulations,
              polish=polish, time_budget=budget)
    if method != "learned" and iterate:
        from .learned.agent import iterated_search
        sol = run_method(inst, method, repack=repack, local_search=local_search, **kw)
        if budget.expired():
            return sol
        return iterated_search(inst, sol, rounds=iterate, seed=seed, time_limit=budget.left())[0]
    if method != "learned" and local_search:
        from .learned.agent import local_search as agents_local_search
        sol = run_method(inst, method, repack=repack, **kw)
        if budget.expired():
            return sol
        return agents_local_search(inst, sol, time_limit=budget.left())[0]
    if method != "learned" and repack and inst.mode == "placement":
        from .solvers.repack import repack as run_repack
        sol = run_method(inst, method, **kw)
        if budget.expired():
            return sol
        return run_repack(inst, sol)[0]
    from .solvers import baselines, exact, heuristic
    if method == "auto":
        from .solvers import portfolio
        return portfolio.assign(inst, budget if budget.deadline is not None else None,
                                num_workers=num_workers, seed=seed)
    if method == "heuristic":
        return heuristic.assign(inst, deadline=budget.deadline)
    if method == "learned":
        from . import learned
        from .learned.agent import use_compilation_cache
        use_compilation_cache()
        return learned.assign(inst, simulations=simulations, seed=seed, polish=polish,
                              polish_pairs=polish_pairs, repack=repack, relax=relax,
                              local_search=local_search, iterate=iterate, budget=budget)
    if method == "exact":
        if budget.deadline is None:
            return exact.solve(inst, time_limit=time_limit, num_workers=num_workers or 8,
                               seed=seed).solution
        return exact.solve_within(inst, budget, num_workers=num_workers or 8, seed=seed)
    if method == "greedy":
        return baselines.greedy_by_size(inst)
    if method == "random":
        return baselines.random_assignment(inst, seed)
    if method == "slow":
        return baselines.all_slow(inst)
    raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")


def _rounds(text: str) -> int:
    """--iterate's and --layout-rounds' ROUNDS: a count, 0 or more."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number of rounds >= 0, got {text!r}")
    return n


def cmd_assign(args) -> int:
    from ..errors import MemfitError
    from .core.instance import Instance
    from .core.validator import validate
    inst = Instance.load(args.instance)
    try:
        budget = Budget(args.time_budget)
    except ValueError as e:
        print(f"memfit assign: --time-budget: {e}", file=sys.stderr)
        return 2
    try:
        sol = run_method(inst, args.method, num_workers=args.num_workers, seed=args.seed,
                         simulations=args.simulations, polish=args.polish,
                         polish_pairs=args.polish_pairs, repack=args.repack,
                         relax=args.relax, local_search=args.local_search,
                         iterate=args.iterate, time_budget=budget)
    except MemfitError as e:
        print(f"memfit assign: {e}", file=sys.stderr)
        return 2
    if args.layout_rounds and inst.mode == "placement" and not budget.expired():
        from .learned.agent import iterated_search
        sol = iterated_search(inst, sol, rounds=0, seed=args.seed,
                              layout_rounds=args.layout_rounds, time_limit=budget.left())[0]
    v = validate(inst, sol)
    text = sol.dumps()
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    print(f"{args.method}: {'valid' if v.valid else 'INVALID'}, estimated time: "
          f"{v.estimated_time if v.estimated_time is not None else 'n/a'}", file=sys.stderr)
    return 0 if v.valid else 1


def cmd_score(args) -> int:
    from .core.instance import Instance
    from .core.solution import Solution
    from .core.validator import validate
    inst = Instance.load(args.instance)
    sol = Solution.load(args.solution)
    v = validate(inst, sol)
    print(v.summary())
    return 0 if v.valid else 1


def cmd_plot(args) -> int:
    from .core.instance import Instance
    from .core.solution import Solution
    from .io.plot import plot_assignment
    inst = Instance.load(args.instance)
    sol = Solution.load(args.solution) if args.solution else None
    plot_assignment(inst, sol, args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def add_subcommands(sub) -> None:
    a = sub.add_parser("assign", help="memory-space assignment of an exported instance (JSON)")
    a.add_argument("instance", help="instance JSON (memfit-export-buffers)")
    a.add_argument("--method", choices=METHODS, default="auto",
                   help="auto (the default): the heuristic, local search from it, CP-SAT "
                        "hinted with the best so far (up to 512 buffers) and iterated local "
                        "search, within --time-budget (default 10 s), the fastest valid "
                        "solution kept (msa.solvers.portfolio); heuristic: XLA-style; "
                        "exact: CP-SAT; learned: the trained player (minutes without a "
                        "budget); greedy, random, slow: baselines")
    a.add_argument("--time-budget", "--time-limit", dest="time_budget", type=float, default=None,
                   metavar="S",
                   help="wall-clock seconds for the whole method, counted once the instance "
                        "is loaded: the heuristic, encoding, jax compilation, the search and "
                        "every stage after it (--local-search, --iterate, --repack, "
                        "--layout-rounds) included; the best valid solution found by then "
                        "is printed (at least the heuristic's, or its partial pass if even "
                        "that did not finish). Checked between buffers (heuristic, local "
                        "search), as CP-SAT's limit (exact; its model's encoding is not "
                        "interruptible) and between stages (learned: the heuristic, then "
                        "the game in a worker process killed at the deadline, the faster "
                        "kept; auto: each stage gets what the ones before it left). Default: none, "
                        "except 10 s for auto and exact. --time-limit is the same option")
    a.add_argument("--num-workers", type=int, default=None,
                   help="CP-SAT workers (exact: default 8; auto: the CPU count, at most 8)")
    a.add_argument("--simulations", type=int, default=None,
                   help="search simulations per move (learned; default 16 up to 256 buffers, "
                        "the argmax above, then --local-search: msa.learned.agent.AgentConfig; "
                        "0 = the policy's argmax)")
    a.add_argument("--polish", type=int, default=None,
                   help="local-improvement passes after the search (learned; default 2 "
                        "after a search with the rollout value on offload instances up to "
                        "256 buffers and placement ones up to 64, else 0)")
    a.add_argument("--polish-pairs", action=argparse.BooleanOptionalAction, default=None,
                   help="after the polish, the pair stage: every single change tried as a "
                        "kick, completed by its best second change and a polish pass "
                        "(learned; only where the game is polished: --polish > 0, by default "
                        "up to 64 buffers). Default: on offload instances of at most 64 "
                        "buffers (AgentConfig.pair_max_buffers); --polish-pairs runs it on "
                        "every instance (far slower in placement mode), --no-polish-pairs on "
                        "none")
    a.add_argument("--repack", action=argparse.BooleanOptionalAction, default=None,
                   help="placement mode: then change plans with offsets re-derived by "
                        "relayouts and the exact packer (msa.solvers.repack; never slower; "
                        "default: on for --method learned where it polishes, off for "
                        "the other methods)")
    a.add_argument("--relax", nargs="?", const="play", choices=("play", "polish"), default=None,
                   help="placement mode (learned, where it polishes): use the instance's "
                        "offload relaxation (fast memory counted per op, no offsets): "
                        "'play' (the default of a bare --relax) plays it again, search and "
                        "polish; 'polish' polishes the game's own plans there (no second "
                        "search). Its plans are laid out by a first-fit order search and "
                        "repacked, and the faster solution is kept (never slower; default: "
                        "polish, AgentConfig.relax)")
    a.add_argument("--no-relax", dest="relax", action="store_const", const=False,
                   help="placement mode: no offload relaxation")
    a.add_argument("--local-search", action=argparse.BooleanOptionalAction, default=None,
                   help="then a local search over the buffers' plan menus, every other "
                        "plan (and offset) kept and each change timed by the cost model "
                        "(msa.solvers.localsearch; never slower; default: on for --method "
                        "learned above the 256-buffer bucket, where its game is not searched or "
                        "polished, and there also from the heuristic's solution, the faster "
                        "kept; off for the other methods)")
    a.add_argument("--iterate", type=_rounds, default=None, metavar="ROUNDS",
                   help="then ROUNDS rounds of iterated local search "
                        "(msa.solvers.localsearch.iterate: a few buffers living together "
                        "changed at random, then descents; the best kept, never slower; "
                        "0 = off; default: for --method learned AgentConfig.iterate_rounds "
                        "(200) on games of at most iterate_max_bucket (64) buffers, off for "
                        "the other methods)")
    a.add_argument("--layout-rounds", type=_rounds, default=0, metavar="ROUNDS",
                   help="placement mode: last, ROUNDS rounds of layout kicks from the "
                        "method's solution (msa.solvers.localsearch.iterate's layout_rounds: "
                        "ejections and re-layouts of a neighbourhood, relayout moves; "
                        "never slower; default 0: off; ignored in offload mode)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("-o", "--output", default=None, help="solution JSON (default stdout)")
    a.set_defaults(func=cmd_assign)

    s = sub.add_parser("score", help="validate a solution and print its estimated time")
    s.add_argument("instance")
    s.add_argument("solution")
    s.set_defaults(func=cmd_score)

    p = sub.add_parser("plot", help="plot an assignment (time x address) and the memory timeline")
    p.add_argument("instance")
    p.add_argument("solution", nargs="?", default=None)
    p.add_argument("-o", "--output", required=True, help="PNG file")
    p.set_defaults(func=cmd_plot)

    from .learned import recipe
    recipe.add_subcommand(sub)
