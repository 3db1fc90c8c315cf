"""The validator catches each kind of violation; its times match hand computation."""
import pytest

from memfit.msa.core.solution import BufferAssignment as A, Prefetch as P, Solution
from memfit.msa.core.validator import validate
from memfit.msa.io.tiny import tiny_instance


def sol(inst, *assignments):
    by = {a.id: a for a in assignments}
    return Solution(inst.mode, "test", [by.get(b, A(b)) for b in range(inst.num_buffers)])


def kinds(v):
    return sorted({x.kind for x in v.violations})


def test_all_slow_time_by_hand():
    inst = tiny_instance()
    v = validate(inst, sol(inst))
    assert v.valid and v.estimated_time == pytest.approx(14.5)
    assert v.all_slow_time == pytest.approx(14.5)


def test_evict_and_prefetch_time_by_hand():
    # b0 fast at op0, evicted after op0 (1 s copy, done 3.1), prefetched before
    # op2 (issued 7.1, done 8.1), fast again at op3: 2.1 + 5 + 4 + 1.6 = 12.7.
    inst = tiny_instance()
    v = validate(inst, sol(inst, A(0, "fast", None, [P(3, 2)], 0)))
    assert v.valid, v.summary()
    assert v.estimated_time == pytest.approx(12.7)
    assert v.stall_time == pytest.approx(0.0)
    assert v.copy_time == pytest.approx(2.0)


def test_late_prefetch_is_a_stall_not_a_violation():
    # copies at 10 B/s: eviction 2.1 -> 12.1, prefetch waits for it -> 22.1;
    # op3 (ready at 11.1) stalls 11 s, then runs 1.6 s.
    inst = tiny_instance(copy_bandwidth=10.0)
    v = validate(inst, sol(inst, A(0, "fast", None, [P(3, 2)], 0)))
    assert v.valid, v.summary()
    assert v.estimated_time == pytest.approx(23.7)
    assert v.stall_time == pytest.approx(11.0)


def test_copies_without_overlap_block_the_ops():
    # eviction (1 s) after op0 and prefetch (1 s) before op2 run on the clock.
    inst = tiny_instance(overlap=False)
    v = validate(inst, sol(inst, A(0, "fast", None, [P(3, 2)], 0)))
    assert v.valid and v.estimated_time == pytest.approx(14.7)


def test_keep_time_by_hand():
    # b1 and b3 fast for their lifetimes: op0 2/100+... = 1+0.2, op1 0.2+3, op2 3+0.1, op3 1+0.1+0.5
    inst = tiny_instance()
    v = validate(inst, sol(inst, A(1, "fast"), A(3, "fast")))
    assert v.valid
    assert v.estimated_time == pytest.approx(1.2 + 3.2 + 3.1 + 1.6)


def test_malformed_missing_and_mode():
    inst = tiny_instance()
    s = Solution("offload", "t", [A(0), A(1)])
    assert "malformed" in kinds(validate(inst, s))
    s = sol(inst)
    s.mode = "placement"
    assert kinds(validate(inst, s)) == ["malformed"]
    s = sol(inst)
    s.buffers.append(A(2))
    assert kinds(validate(inst, s)) == ["malformed"]


def test_evict_on_slow_buffer():
    inst = tiny_instance()
    v = validate(inst, sol(inst, A(0, "slow", None, [], 1)))
    assert kinds(v) == ["evict"] and v.violations[0].buffer == 0


def test_evict_after_end():
    inst = tiny_instance()
    v = validate(inst, sol(inst, A(1, "fast", None, [], 1)))   # end of b1 is 1
    assert kinds(v) == ["evict"]


@pytest.mark.parametrize("a", [
    A(0, "fast", None, [P(2, 1)], 0),        # op2 is not a use of b0
    A(0, "fast", None, [P(3, 3)], 0),        # starts at its use
    A(0, "fast", None, [P(3, 0)], 0),        # starts before the eviction is issued
    A(0, "fast", None, [P(3, 1)], None),     # prefetch of a buffer that is never evicted
    A(1, "slow", None, [P(1, 0)], None),     # b1 exists only after op0
    A(0, "slow", None, [P(0, 0), P(3, 0)]),  # second window starts inside the first (through op0)
])
def test_prefetch_rules(a):
    inst = tiny_instance()
    v = validate(inst, sol(inst, a))
    assert kinds(v) == ["prefetch"], v.summary()


def test_placement_missing_and_out_of_bounds_offset():
    inst = tiny_instance("placement")
    assert kinds(validate(inst, sol(inst, A(1, "fast", None)))) == ["offset"]
    assert kinds(validate(inst, sol(inst, A(1, "fast", 250)))) == ["offset"]   # 250+200 > 400
    assert kinds(validate(inst, sol(inst, A(1, "fast", -1)))) == ["offset"]


def test_placement_overlap():
    inst = tiny_instance("placement")
    v = validate(inst, sol(inst, A(1, "fast", 0), A(3, "fast", 0), A(0, "fast", 50)))
    # b0 [0,3]x[50,150) hits b1 [0,1]x[0,200) and b3 [2,3]x[0,100)
    assert kinds(v) == ["overlap"] and len(v.violations) == 2
    ok = validate(inst, sol(inst, A(1, "fast", 0), A(3, "fast", 0), A(0, "fast", 200)))
    assert ok.valid, ok.summary()


def test_placement_prefetch_window_counts_as_rectangle():
    inst = tiny_instance("placement")
    # b0's window [2,3] at offset 0 collides with b3 [2,3] at offset 0
    v = validate(inst, sol(inst, A(0, "slow", 0, [P(3, 2)]), A(3, "fast", 0)))
    assert kinds(v) == ["overlap"]


def test_capacity_offload():
    inst = tiny_instance()
    v = validate(inst, sol(inst, A(1, "fast"), A(2, "fast")))   # 500 B at op1
    assert kinds(v) == ["capacity"] and v.violations[0].op == 1
    # the eviction frees b0 after op0; its prefetch window [2,3] counts again
    v = validate(inst, sol(inst, A(0, "fast", None, [P(3, 2)], 0), A(2, "fast")))
    assert v.valid, v.summary()
    v = validate(inst, sol(inst, A(0, "fast"), A(2, "fast")))   # 100 + 300 at op1,2 fits
    assert v.valid
    v = validate(inst, sol(inst, A(0, "fast"), A(2, "fast"), A(3, "fast")))  # 500 at op2
    assert kinds(v) == ["capacity"]
