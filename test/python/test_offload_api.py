"""memfit.jit(f, memory_limit=..., offload=...): host offload written into the
module as jax writes it, and the same results (XLA:CPU ignores placement)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import memfit
from memfit.measure import xla_bytes


def chain(x, w1, w2, w3):
    h1 = jnp.tanh(x @ w1)
    h2 = jnp.tanh(h1 @ w2)
    h3 = jnp.tanh(h2 @ w3)
    return (h1.sum() + h3.sum(), h2.mean())


def _args():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s, dtype=np.float32) / 8
            for s in ((256, 256), (256, 256), (256, 256), (256, 256))]


@pytest.mark.parametrize("method", [True, "heuristic", "learned"])
def test_offload_keeps_results_and_annotates(method, monkeypatch):
    if method == "learned":
        from memfit.msa.learned import agent
        # the learned player end to end with the 4-simulation search the
        # learned tests compile, without the pair stage (the default's 16
        # simulations and the pair stage's compiles only cost time here; both
        # are tested in test_msa_learned.py)
        monkeypatch.setattr(agent, "DEFAULT_CONFIG", agent.DEFAULT_CONFIG.replace(
            search_simulations=4, pair_max_buffers=agent.PerMode(0, 0)))
    args = _args()
    need = xla_bytes(jax.jit(chain).lower(*args).compile())
    # the learned player without a budget: played in this process, with the
    # search set above
    budget = math.inf if method == "learned" else None
    f = memfit.jit(chain, memory_limit=need // 2, offload=method, time_budget=budget)
    text = f.lower(*args).as_text()
    assert "memfit.pipeline" in text
    got = f(*args)
    want = jax.jit(chain)(*args)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert "annotate_device_placement" in text
    assert '"pinned_host"' in text


def test_offload_needs_a_limit_and_a_known_method():
    with pytest.raises(ValueError, match="memory_limit"):
        memfit.jit(chain, offload="heuristic")
    with pytest.raises(ValueError, match="heuristic"):
        memfit.jit(chain, memory_limit="1MiB", offload="magic")


def test_offload_time_budget_bounds_the_learned_placement():
    # The learned player's search compiles for tens of seconds on this chain
    # (26 s with the smaller search of the test above); with a budget it
    # returns by the deadline the best valid placement found, at worst the
    # heuristic's, and the program carries the host-offload annotations and
    # jax's results.
    import time
    args = _args()
    need = xla_bytes(jax.jit(chain).lower(*args).compile())
    f = memfit.jit(chain, memory_limit=need // 2, offload="learned", time_budget=2.0)
    t0 = time.perf_counter()
    text = f.lower(*args).as_text()
    placement = time.perf_counter() - t0
    assert placement < 2.0 + 10.0, placement   # lowering, export and the budget's slack
    assert '"pinned_host"' in text
    for g, w in zip(f(*args), jax.jit(chain)(*args)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_time_budget_needs_offload_and_a_positive_number():
    with pytest.raises(ValueError, match="needs offload"):
        memfit.jit(chain, memory_limit="1MiB", time_budget=1.0)
    with pytest.raises(ValueError, match="positive"):
        memfit.jit(chain, memory_limit="1MiB", offload="heuristic", time_budget=0)


def test_offload_default_method_and_budget():
    """offload=True is the default method (auto) and every offload has a
    default budget of memfit.api.OFFLOAD_SECONDS; math.inf lifts it."""
    f = memfit.jit(chain, memory_limit="1MiB", offload=True)
    assert f.offload == "auto" and f.time_budget == memfit.api.OFFLOAD_SECONDS == 10.0
    assert memfit.jit(chain, memory_limit="1MiB", offload="exact", time_budget=3).time_budget == 3
    assert memfit.jit(chain, memory_limit="1MiB", offload="learned",
                      time_budget=math.inf).time_budget is None
    assert memfit.jit(chain, memory_limit="1MiB").offload is None
