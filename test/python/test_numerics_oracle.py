"""The numerics contract against float64 (memfit.testing.oracle): every rewrite and
split shape on data that is hard for it; memfit's error within
oracle.FACTOR x jax's + oracle.FLOOR_ULPS ulps, and index results equal
to float64's wherever jax's are."""
import jax
import numpy as np
import pytest

import memfit
from memfit.testing import oracle

SEEDS = range(4)  # 17 programs x 6 families x 4 seeds = 408 cases


@pytest.fixture(scope="module")
def runner():
    return oracle.Runner()


@pytest.mark.parametrize("program", oracle.PROGRAMS, ids=lambda p: p.name)
def test_contract_holds_on_hard_data(runner, program):
    failures = [o for fam in oracle.FAMILIES for s in SEEDS
                if not (o := runner.case(program, fam, s)).ok]
    assert not failures, [(o.family, o.seed, o.detail) for o in failures]


@pytest.mark.parametrize("program", oracle.PROGRAMS, ids=lambda p: p.name)
def test_each_program_really_is_transformed(program):
    # A harness over programs memfit leaves alone would prove nothing.
    args = program.make_args("normal", np.random.default_rng(0))
    text = memfit.jit(program.fn, memory_limit=program.limit).lower(*args).as_text()
    plain = memfit.jit(program.fn, memory_limit=program.limit, rewrite=False,
                       calibrate=False)
    ops = lambda t: sorted(ln.split("=", 1)[-1].split("loc(")[0].strip()
                           for ln in t.splitlines() if "stablehlo." in ln)
    assert "stablehlo.while" in text or ops(text) != ops(plain.lower(*args).as_text()), \
        program.name


def test_oracle_catches_the_inexact_expansion():
    # fast-distance alone (no certificate) loses neighbours on offset data:
    # the judge must say so.
    knn = next(p for p in oracle.PROGRAMS if p.name == "knn_top_k")
    args = knn.make_args("offset", np.random.default_rng(1))
    fast = memfit.jit(knn.fn, passes="memfit-rewrite{fast-distance=true}")
    got_jax = np.asarray(jax.jit(knn.fn)(*args))
    outcome = oracle.judge(knn, "offset", 1, got_jax, np.asarray(fast(*args)),
                           knn.reference(*args))
    assert not outcome.ok and outcome.memfit_error > outcome.jax_error


def test_judge_values_floor_and_factor():
    p = next(p for p in oracle.PROGRAMS if not p.indices)
    ref = np.ones(4)
    jax_out = ref + 1e-6
    assert oracle.judge(p, "normal", 0, jax_out, ref + 3.9e-6, ref).ok
    assert not oracle.judge(p, "normal", 0, jax_out, ref + 1e-4, ref).ok
    assert not oracle.judge(p, "normal", 0, jax_out, ref * np.nan, ref).ok
