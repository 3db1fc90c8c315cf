"""msa.solvers.localsearch: the plan-menu local search for instances of any size."""
import numpy as np
import pytest

from memfit.msa.core import plans
from memfit.msa.core.instance import Instance
from memfit.msa.core.solution import BufferAssignment, Solution
from memfit.msa.core.validator import validate
from memfit.msa.io.synthetic import random_instance
from memfit.msa.solvers import heuristic, localsearch


def test_improve_makes_a_game_faster_and_never_slower():
    """From the all-slow game the search reaches a faster valid solution whose
    reported time is the validator's; from its own result it is never slower;
    on instances where the heuristic is the start, never slower than it."""
    inst = random_instance(5, num_ops=60, num_args=4, mode="offload")
    slow = Solution.all_slow(inst, "test")
    out, st = localsearch.improve(inst, slow, passes=5)
    v = validate(inst, out)
    assert v.valid, v.summary()
    assert st.accepted > 0 and v.estimated_time < validate(inst, slow).estimated_time * 0.99
    assert st.final_time == pytest.approx(v.estimated_time, rel=1e-12)
    assert out.method == "test"
    again, st2 = localsearch.improve(inst, out, passes=1)
    assert validate(inst, again).estimated_time <= v.estimated_time
    for seed in range(10, 16):
        inst = random_instance(seed, num_ops=50, num_args=4, mode="offload")
        h = heuristic.assign(inst)
        out, st = localsearch.improve(inst, h)
        v = validate(inst, out)
        assert v.valid, v.summary()
        assert v.estimated_time <= validate(inst, h).estimated_time


def test_improve_stops_at_its_time_limit_and_at_convergence():
    inst = random_instance(5, num_ops=60, num_args=4, mode="offload")
    slow = Solution.all_slow(inst, "test")
    out, st = localsearch.improve(inst, slow, time_limit=0.0)
    assert st.stopped == "time limit" and st.accepted == 0
    assert validate(inst, out).estimated_time == validate(inst, slow).estimated_time
    out, st = localsearch.improve(inst, slow, passes=50)
    assert st.stopped == "converged" and st.passes < 50


def test_improve_places_moved_buffers_where_no_other_is_in_placement_mode():
    """Placement mode: every moved buffer gets an offset where its rectangles
    meet no other buffer's; the result validates (no overlap, offsets within
    the capacity) and is never slower than the start; from all-slow it is
    faster."""
    for seed in range(4):
        inst = random_instance(seed, num_ops=50, num_args=4, mode="placement")
        for start in (Solution.all_slow(inst, "test"), heuristic.assign(inst)):
            out, st = localsearch.improve(inst, start, passes=5)
            v = validate(inst, out)
            assert v.valid, v.summary()
            t0 = validate(inst, start).estimated_time
            assert v.estimated_time <= t0
            assert st.final_time == pytest.approx(v.estimated_time, rel=1e-12)
            if start.method == "test":
                assert v.estimated_time < t0 * 0.99


def test_layout_keeps_an_offset_that_fits_else_takes_the_lowest_free_one():
    """plans.FastMemory.fit, the layout the local search's moves use
    (buffers 0-2 of 30 bytes, the others of 10)."""
    inst = random_instance(0, num_ops=10, num_args=2, mode="placement")
    d = inst.to_dict()
    d["capacity"] = 100
    for k, buf in enumerate(d["buffers"]):
        buf["size"] = 30 if k < 3 else 10
    inst = Instance.from_dict(d)
    lay = plans.FastMemory(inst)
    lay.add(30, [(0, 9)], 0, owner=0)
    lay.add(30, [(0, 4)], 60, owner=1)
    assert lay.fit(30, [(2, 3)], 30) == 30         # preferred and free
    assert lay.fit(30, [(2, 3)], 40) == 30         # 40 meets buffer 1: lowest free
    assert lay.fit(30, [(5, 9)], None) == 30       # buffer 1 gone by then: top of 0
    lay.add(30, [(0, 9)], 30, owner=2)
    assert lay.fit(10, [(0, 4)], None) == 90       # above buffer 1
    assert lay.fit(10, [(0, 4)], 95) == 90         # 95 + 10 > capacity
    lay.add(10, [(0, 4)], 90, owner=3)
    assert lay.fit(10, [(3, 6)], None) is None     # no room at ops 3-4
    lay.remove(30, [(0, 4)], owner=1)
    assert lay.fit(10, [(3, 6)], None) == 60


def test_improve_refuses_what_it_cannot_search():
    """A plan outside the menus, a fast placement buffer without an offset
    and a start above the capacity are errors that say so (the search never
    returns a solution it did not check)."""
    inst = random_instance(5, num_ops=40, num_args=4, mode="placement")
    sol = Solution.all_slow(inst)
    sol.buffers[0] = BufferAssignment(0, "fast")
    with pytest.raises(ValueError, match="buffer 0: a fast plan without an offset"):
        localsearch.improve(inst, sol)
    inst = random_instance(5, num_ops=40, num_args=4, mode="offload")
    sol = Solution.all_slow(inst)
    b = next(x.id for x in inst.buffers if x.end - x.start >= 3)
    sol.buffers[b] = BufferAssignment(b, "fast", None, [], inst.buffers[b].start + 1)
    with pytest.raises(ValueError, match=f"buffer {b}: .* not a plan of its menu"):
        localsearch.improve(inst, sol)
    d = inst.to_dict()
    d["capacity"] = max(x.size for x in inst.buffers) - 1
    small = Instance.from_dict(d)
    big = max(range(small.num_buffers), key=lambda x: small.buffers[x].size)
    sol = Solution.all_slow(small)
    sol.buffers[big] = BufferAssignment(big, "fast")
    with pytest.raises(ValueError, match="exceeds the capacity"):
        localsearch.improve(small, sol)


@pytest.mark.parametrize("mode,seed", [("offload", 3), ("placement", 10)])
def test_pair_moves_reach_what_single_changes_cannot(mode, seed):
    """Where no single change pays any more (1-opt converged), a pass of pair
    moves (a change that does not fit, made to fit by a change of a buffer
    in its way) reaches a faster valid solution; pairs off, the search stops
    there."""
    inst = random_instance(seed, num_ops=40, num_args=4, mode=mode)
    h = heuristic.assign(inst)
    single, st = localsearch.improve(inst, h, passes=20)
    assert st.stopped == "converged"
    again, st = localsearch.improve(inst, single, passes=1)
    assert st.accepted == 0 and again.to_dict() == single.to_dict()
    paired, st = localsearch.improve(inst, single, passes=20, pairs=True)
    v = validate(inst, paired)
    assert v.valid, v.summary()
    assert st.accepted > 0
    assert v.estimated_time < validate(inst, single).estimated_time * 0.97
    assert st.final_time == pytest.approx(v.estimated_time, rel=1e-12)


def test_compaction_moves_fast_buffers_down_and_keeps_the_time():
    """moves.Engine.compact re-places every fast buffer at or below its offset,
    the plans (and so the time) unchanged, the layout still valid."""
    inst = random_instance(3, num_ops=60, num_args=4, mode="placement")
    h = heuristic.assign(inst)
    s = localsearch._Search(inst, h)
    before = dict(s.offset)
    s.compact()
    out = s.solution(h)
    v = validate(inst, out)
    assert v.valid, v.summary()
    assert v.estimated_time == validate(inst, h).estimated_time
    moved = [b for b in before if before[b] is not None and s.offset[b] != before[b]]
    assert moved and all(s.offset[b] < before[b] for b in moved)
    assert all(s.offset[b] is None for b in before if before[b] is None)


def test_compaction_reaches_what_single_and_pair_moves_cannot():
    """Placement mode: where single and pair moves have converged, compacting
    the layout frees room at the top for changes that did not fit, and the
    search goes on to a faster valid solution; in offload mode there are no
    offsets and ``compact`` changes nothing."""
    inst = random_instance(3, num_ops=60, num_args=4, mode="placement")
    h = heuristic.assign(inst)
    plain, st = localsearch.improve(inst, h, passes=20, pairs=True)
    assert st.stopped == "converged" and st.compactions == 0
    packed, st = localsearch.improve(inst, h, passes=20, pairs=True, compact=True)
    v = validate(inst, packed)
    assert v.valid, v.summary()
    assert st.compactions >= 1 and st.stopped == "converged"
    assert v.estimated_time < validate(inst, plain).estimated_time * 0.95
    assert st.final_time == pytest.approx(v.estimated_time, rel=1e-12)
    off = random_instance(3, num_ops=60, num_args=4, mode="offload")
    h = heuristic.assign(off)
    a, sa = localsearch.improve(off, h, passes=20, pairs=True)
    b, sb = localsearch.improve(off, h, passes=20, pairs=True, compact=True)
    assert sb.compactions == 0 and a.to_dict() == b.to_dict()


def test_layout_fit_is_the_lowest_free_offset_of_a_brute_force_scan():
    """plans.FastMemory.fit (a sweep over the rectangles met) returns the preferred
    offset when it is free, else the lowest offset where the buffer meets no
    other rectangle and ends by the capacity, as a scan of every offset
    finds it (and as the first of ``lowest_offsets``), or None where the
    scan finds none."""
    rng = np.random.default_rng(3)
    inst = random_instance(0, num_ops=12, num_args=2, mode="placement")
    d = inst.to_dict()
    d["capacity"] = 40
    for buf in d["buffers"]:
        buf["size"] = int(rng.integers(1, 12))
    inst = Instance.from_dict(d)
    n = inst.num_buffers
    for _ in range(300):
        lay = plans.FastMemory(inst)
        for b in rng.permutation(n)[: int(rng.integers(0, n))]:
            lo = int(rng.integers(0, 10))
            iv = [(lo, lo + int(rng.integers(0, 3)))]
            at = lay.fit(inst.buffers[b].size, iv, int(rng.integers(0, 40)))
            if at is not None:
                lay.add(inst.buffers[b].size, iv, at, owner=int(b))
        placed = set(lay.rects[:, 4].tolist())
        b = next(x for x in range(n) if x not in placed) if len(placed) < n else None
        if b is None:
            continue
        lo = int(rng.integers(0, 10))
        iv = [(lo, lo + int(rng.integers(0, 3)))]
        size, r = inst.buffers[b].size, lay.rects
        meet = r[(r[:, 0] <= iv[0][1]) & (iv[0][0] <= r[:, 1])]
        free = [y for y in range(0, 40 - size + 1)
                if not ((y < meet[:, 3]) & (meet[:, 2] < y + size)).any()]
        assert lay.fit(size, iv) == (free[0] if free else None)
        assert lay.lowest_offsets(size, iv, 1) == free[:1]     # the game's first candidate
        prefer = int(rng.integers(0, 40))
        assert lay.fit(size, iv, prefer) == (prefer if prefer in free else free[0] if free else None)


@pytest.mark.parametrize("mode,seed,factor", [("offload", 1, 0.99), ("placement", 7, 0.95)])
def test_iterated_search_reaches_what_the_descent_cannot(mode, seed, factor):
    """Where single and pair moves (and compaction) have converged, the
    iterated search's kicks (a few buffers living together changed at
    random, then descents) reach a faster valid solution; zero rounds are
    the descent itself, and the same seed gives the same solution."""
    inst = random_instance(seed, num_ops=24, num_args=3, mode=mode)
    h = heuristic.assign(inst)
    desc, st = localsearch.improve(inst, h, passes=20, pairs=True, compact=True)
    assert st.stopped == "converged"
    same, _ = localsearch.iterate(inst, h, rounds=0)
    assert same.to_dict() == desc.to_dict()
    out, st = localsearch.iterate(inst, h, rounds=20, seed=0)
    v = validate(inst, out)
    assert v.valid, v.summary()
    assert v.estimated_time < validate(inst, desc).estimated_time * factor
    assert st.final_time == pytest.approx(v.estimated_time, rel=1e-12)
    again, _ = localsearch.iterate(inst, h, rounds=20, seed=0)
    assert again.to_dict() == out.to_dict()


def test_iterated_search_is_never_slower_than_its_descent():
    """Every round starts from the best solution found and only a faster one
    replaces it: on random instances of both modes the result is valid and
    at most the descent's time."""
    for mode in ("offload", "placement"):
        for seed in range(3):
            inst = random_instance(100 + seed, num_ops=30, num_args=4, mode=mode)
            h = heuristic.assign(inst)
            desc, _ = localsearch.improve(inst, h, passes=20, pairs=True, compact=True)
            out, _ = localsearch.iterate(inst, h, rounds=5, seed=seed)
            v = validate(inst, out)
            assert v.valid, v.summary()
            assert v.estimated_time <= validate(inst, desc).estimated_time * (1 + 1e-12)


def test_iterated_search_refuses_bad_rounds_and_kicks():
    """A negative round count or a kick range that is empty or starts below
    one buffer is a clear error, not a silent no-op."""
    inst = random_instance(1, num_ops=12, num_args=2, mode="offload")
    h = heuristic.assign(inst)
    with pytest.raises(ValueError, match="rounds must be >= 0"):
        localsearch.iterate(inst, h, rounds=-1)
    for kick in ((0, 3), (5, 2)):
        with pytest.raises(ValueError, match="kick must be"):
            localsearch.iterate(inst, h, rounds=1, kick=kick)


def test_relayout_reaches_what_single_pair_and_compaction_moves_cannot():
    """Placement mode: where single and pair moves and compaction have
    converged, a relayout move (a faster change that fits the bytes but not
    the layout, made to fit by re-placing the buffers in its way) reaches a
    faster valid solution; the descent's ``relayout`` runs it (and does
    nothing in offload mode, which has no layout)."""
    inst = random_instance(1, num_ops=30, num_args=4, mode="placement")
    h = heuristic.assign(inst)
    conv, st = localsearch.improve(inst, h, passes=20, pairs=True, compact=True)
    assert st.stopped == "converged"
    s = localsearch._Search(inst, conv)
    assert any(s.relayout(b) for b in s.order)
    v = validate(inst, s.solution(conv))
    assert v.valid, v.summary()
    assert v.estimated_time < validate(inst, conv).estimated_time * (1 - 1e-6)
    assert s.best == pytest.approx(v.estimated_time, rel=1e-12)
    off = random_instance(1, num_ops=30, num_args=4, mode="offload")
    s = localsearch._Search(off, heuristic.assign(off))
    before = s.state()
    localsearch._descend(s, 20, True, True, None, relayout=True)
    t = localsearch._Search(off, heuristic.assign(off))
    localsearch._descend(t, 20, True, True, None)
    assert (s.choice == t.choice).all() and before[2] >= s.best


def test_layout_kicks_keep_the_layout_valid():
    """Ejections (a buffer to a fast plan, every buffer in its way made slow)
    and neighbourhood re-layouts (buffers lifted and re-placed in a random
    order) leave a valid layout, and between them they move fast buffers
    into slow memory and move unkicked buffers' offsets."""
    inst = random_instance(3, num_ops=60, num_args=4, mode="placement")
    h = heuristic.assign(inst)
    s = localsearch._Search(inst, h)
    rng = np.random.default_rng(0)
    evicted = relaid = 0
    for k in range(30):
        before = s.state()
        kicked = s.eject(rng) if k % 2 else s.relayout_kick(rng, 3)
        v = validate(inst, s.solution(h))
        assert v.valid, v.summary()
        assert s.best == pytest.approx(v.estimated_time, rel=1e-12)
        choice, offset, _ = before
        evicted += sum(1 for b in kicked if choice[b] and not s.choice[b])
        relaid += sum(1 for b in range(inst.num_buffers) if b not in kicked and choice[b]
                      and s.choice[b] == choice[b] and s.offset[b] != offset[b])
        s.restore(before)
    assert evicted and relaid


def test_layout_rounds_reach_what_random_kicks_cannot():
    """Placement mode: rounds of layout kicks after the random kicks' rounds
    reach faster valid solutions on some random instances and are never
    slower on any (they start from the random rounds' best and keep only a
    faster one); the same seed gives the same solution; offload mode ignores
    them; a negative count is refused."""
    faster = 0
    for seed in (200, 205, 210):
        inst = random_instance(seed, num_ops=24, num_args=3, mode="placement",
                               capacity_fraction=0.3)
        h = heuristic.assign(inst)
        a, _ = localsearch.iterate(inst, h, rounds=20, seed=0)
        b, st = localsearch.iterate(inst, h, rounds=20, seed=0, layout_rounds=20)
        va, vb = validate(inst, a), validate(inst, b)
        assert vb.valid, vb.summary()
        assert vb.estimated_time <= va.estimated_time * (1 + 1e-12)
        assert st.final_time == pytest.approx(vb.estimated_time, rel=1e-12)
        faster += vb.estimated_time < va.estimated_time * (1 - 1e-6)
        if seed == 200:
            again, _ = localsearch.iterate(inst, h, rounds=20, seed=0, layout_rounds=20)
            assert again.to_dict() == b.to_dict()
    assert faster >= 2
    off = random_instance(200, num_ops=24, num_args=3, mode="offload")
    h = heuristic.assign(off)
    assert (localsearch.iterate(off, h, rounds=5, layout_rounds=5)[0].to_dict()
            == localsearch.iterate(off, h, rounds=5)[0].to_dict())
    with pytest.raises(ValueError, match="rounds must be >= 0"):
        localsearch.iterate(off, h, rounds=1, layout_rounds=-1)
