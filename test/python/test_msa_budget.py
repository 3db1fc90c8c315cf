"""A wall-clock budget honoured by every method of memfit assign (--time-budget):
the method returns by then, plus a stated slack, with a valid solution, and
with time enough never one slower than the heuristic's."""
import time
from pathlib import Path

import pytest

from memfit.cli import main
from memfit.msa.cli import run_method
from memfit.msa.core.instance import Instance
from memfit.msa.core.solution import Solution
from memfit.msa.core.validator import validate
from memfit.msa.solvers import heuristic
from memfit.msa.solvers.budget import Budget

DATA = Path(__file__).resolve().parents[2] / "data/msa/instances"
BIG = "transformer_deep_heldout-offload-50"     # 1,664 buffers: heuristic ~1 s
MEDIUM = "transformer_medium-offload-50"        # 188 buffers: CP-SAT runs its 10 s
SMALL = "sgpr-offload-25"                       # 25 buffers


def _load(name: str) -> Instance:
    return Instance.load(DATA / f"{name}.json")


def _timed(inst, method, budget, **kw):
    t0 = time.perf_counter()
    sol = run_method(inst, method, time_budget=budget, num_workers=2, **kw)
    wall = time.perf_counter() - t0
    v = validate(inst, sol)
    assert v.valid, v.summary()
    return v.estimated_time, wall


def test_budget_object():
    assert Budget(None).left() is None and not Budget(None).expired()
    for bad in (0, -1.0):
        with pytest.raises(ValueError):
            Budget(bad)
    b = Budget(0.05)
    assert 0 < b.left() <= 0.05 and not b.expired()
    time.sleep(0.06)
    assert b.expired() and b.left() == 0.0


def test_heuristic_stops_at_a_passed_deadline():
    """A deadline already passed: not one buffer placed, so the all-slow
    solution (valid), strictly slower than the heuristic's full pass."""
    inst = _load(MEDIUM)
    sol = heuristic.assign(inst, deadline=time.perf_counter() - 1.0)
    v = validate(inst, sol)
    assert v.valid
    assert v.estimated_time == validate(inst, Solution.all_slow(inst)).estimated_time
    assert v.estimated_time > validate(inst, heuristic.assign(inst)).estimated_time


# (method, options, instance, budget s, slack s). What each runs without the
# budget, on this 2-core CPU: heuristic ~1 s on BIG; heuristic + local search
# several seconds on BIG; CP-SAT its 10 s time limit on MEDIUM; the argmax
# game then 10**6 iterated rounds for ever on SMALL; the default ~60 s on
# MEDIUM (its searched game at the 256 bucket with its compilation). The
# slack: the heuristic's menus and last validation, CP-SAT's model encoding
# (not interruptible), the learned child's answer and its end.
CASES = [
    ("heuristic", {}, BIG, 0.3, 0.5),
    ("heuristic", {"local_search": True}, BIG, 1.5, 0.8),
    ("exact", {}, MEDIUM, 1.0, 1.5),
    ("learned", {"simulations": 0, "iterate": 10**6}, SMALL, 8.0, 1.0),
    ("learned", {}, MEDIUM, 3.0, 1.0),
    ("auto", {}, BIG, 2.0, 0.8),
    ("auto", {}, MEDIUM, 1.0, 1.0),
]


@pytest.mark.parametrize("method,options,name,budget,slack", CASES,
                         ids=["heuristic", "local-search", "exact", "argmax+iterate", "learned",
                              "auto-big", "auto-cpsat"])
def test_budget_is_honoured(method, options, name, budget, slack):
    inst = _load(name)
    _, wall = _timed(inst, method, budget, **options)
    assert wall <= budget + slack, f"{method} took {wall:.2f}s on a {budget}s budget"


@pytest.mark.parametrize("method,options", [
    ("heuristic", {"local_search": True}), ("exact", {}), ("learned", {"simulations": 0}),
    ("auto", {})])
def test_a_budget_the_heuristic_fits_in_is_never_worse_than_it(method, options):
    """With time for the heuristic, a method's answer is at most the
    heuristic's time (the heuristic is its start or its fallback); local
    search and the argmax game (then its stages) find faster ones here."""
    inst = _load(SMALL)
    h = validate(inst, heuristic.assign(inst)).estimated_time
    t, wall = _timed(inst, method, 30.0, **options)
    assert t <= h
    if method != "exact":
        assert t < h


def test_cli_time_budget_and_its_alias(tmp_path, capsys):
    """--time-budget reaches the method (CP-SAT stops long before its 10 s
    default); --time-limit is the same option; a budget <= 0 is a usage
    error."""
    ip, sp = DATA / f"{MEDIUM}.json", tmp_path / "s.json"
    for flag in ("--time-budget", "--time-limit"):
        t0 = time.perf_counter()
        assert main(["assign", str(ip), "--method", "exact", flag, "1", "--num-workers", "2",
                     "-o", str(sp)]) == 0
        assert time.perf_counter() - t0 <= 1.0 + 2.0
        assert validate(_load(MEDIUM), Solution.load(sp)).valid
    assert main(["assign", str(ip), "--time-budget", "0", "-o", str(sp)]) == 2
    assert "--time-budget" in capsys.readouterr().err


def test_learned_worker_is_kept_until_a_deadline_kills_it():
    """The budgeted agent's worker process is reused by the next call (jax,
    checkpoint and compiled games kept) and killed when a game runs past the
    deadline."""
    from memfit.msa.learned import agent
    small, argmax = _load(SMALL), {"simulations": 0, "local_search": False, "iterate": 0}
    h = validate(small, heuristic.assign(small)).estimated_time
    assert _timed(small, "learned", 30.0, **argmax)[0] < h      # the game, not the fallback
    first = agent._Worker.process
    assert first is not None and first.is_alive()
    assert _timed(small, "learned", 30.0, **argmax)[0] < h
    assert agent._Worker.process is first
    _timed(_load(MEDIUM), "learned", 2.0)       # its searched game takes far longer
    assert agent._Worker.process is None and not first.is_alive()


@pytest.mark.parametrize("name", [SMALL, "gru_train-placement-50", "cnn_train-offload-50"])
def test_the_default_is_never_worse_than_local_search_from_the_heuristic(name):
    """The default method (auto, msa.solvers.portfolio) runs the heuristic and
    the local search first and keeps only faster solutions after them: with a
    budget they fit in, never slower than that pair (deterministic: both
    stages are counted in passes, not time). On the CNN, CP-SAT hinted with
    that solution proves a far faster one optimal within the budget."""
    from memfit.msa.solvers import localsearch, portfolio
    inst = _load(name)
    ls, _ = localsearch.improve(inst, heuristic.assign(inst), **portfolio.LOCAL_SEARCH)
    want = validate(inst, ls).estimated_time
    t, wall = _timed(inst, "auto", 1.5)
    assert t <= want * (1 + 1e-12)
    assert wall <= 1.5 + 0.5
    if name == "cnn_train-offload-50":
        assert t < 0.8 * want


def test_the_default_is_the_cli_default_with_a_budget(tmp_path, capsys):
    """memfit assign without --method runs auto, within its default budget."""
    from memfit.msa.solvers import portfolio
    ip, sp = DATA / f"{MEDIUM}.json", tmp_path / "s.json"
    t0 = time.perf_counter()
    assert main(["assign", str(ip), "--num-workers", "2", "--time-budget", "1", "-o", str(sp)]) == 0
    assert time.perf_counter() - t0 <= 1.0 + 1.5
    assert capsys.readouterr().err.startswith("auto: valid")
    assert Solution.load(sp).method == "auto"
    assert portfolio.DEFAULT_SECONDS == 10.0


def test_the_defaults_local_search_settings_are_the_agents():
    from memfit.msa.learned.agent import DEFAULT_CONFIG as c
    from memfit.msa.solvers import portfolio
    assert portfolio.LOCAL_SEARCH == {"passes": c.local_search_passes,
                                      "pairs": c.local_search_pairs,
                                      "compact": c.local_search_compact}
    assert portfolio.ITERATE_KICK == tuple(c.iterate_kick)


def test_the_default_runs_without_ortools(monkeypatch):
    """Without memfit[msa] (no ortools) the default skips CP-SAT and still
    returns a valid solution at least as fast as the local search's."""
    from memfit import _optional
    from memfit.msa.solvers import localsearch, portfolio
    real = _optional.require

    def no_ortools(module, *a, **k):
        if module.startswith("ortools"):
            raise _optional.MissingDependency(module, "msa", None)
        return real(module, *a, **k)

    monkeypatch.setattr(_optional, "require", no_ortools)
    from memfit.msa.solvers import exact
    monkeypatch.setattr(exact, "require", no_ortools)
    inst = _load(SMALL)
    ls, _ = localsearch.improve(inst, heuristic.assign(inst), **portfolio.LOCAL_SEARCH)
    t, wall = _timed(inst, "auto", 0.5)
    assert t <= validate(inst, ls).estimated_time * (1 + 1e-12) and wall <= 0.5 + 0.5
