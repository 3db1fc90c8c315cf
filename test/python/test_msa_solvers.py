"""Every solver's output validates; the heuristic beats the baselines; the
exact solver's bound is below every solution from the menu family."""
import itertools
import json
from pathlib import Path

import pytest

from memfit.msa.core.instance import Instance
from memfit.msa.core.model import simulate
from memfit.msa.core.plans import build_menus
from memfit.msa.core.solution import Solution
from memfit.msa.core.validator import validate
from memfit.msa.io.synthetic import instance_suite
from memfit.msa.io.tiny import tiny_instance
from memfit.msa.solvers import baselines, exact, heuristic

ROOT = Path(__file__).resolve().parents[2]
# The big programs (1,000+ buffers) are benched (bench/bench_msa_learned.py
# --big), not tested per instance: CP-SAT alone takes ~30 s to model each.
_BIG = {n for n, p in json.loads((ROOT / "data/msa/manifest.json").read_text())["programs"].items()
        if p["buffers"] > 256}
REAL = sorted(p for d in ("data/msa/instances", "bench/msa_instances", "test/python/data/msa")
              for p in (ROOT / d).glob("*.json") if not p.name.endswith(".solution.json")
              and p.name.rsplit("-", 2)[0] not in _BIG)

SUITE = instance_suite()
INSTANCES = [pytest.param(i, id=i.program) for i in SUITE] + \
    [pytest.param(p, id=p.name) for p in REAL]
# the exact solver on every instance, with a short time limit (the test budget)
EXACT_INSTANCES = INSTANCES


def _load(x):
    if isinstance(x, Path):
        return Instance.load(x)
    return x


def _time(inst, s):
    v = validate(inst, s)
    assert v.valid, f"{s.method}:\n{v.summary()}"
    return v.estimated_time


@pytest.mark.parametrize("inst", INSTANCES)
def test_heuristic_beats_baselines(inst):
    inst = _load(inst)
    h = _time(inst, heuristic.assign(inst))
    slow = _time(inst, baselines.all_slow(inst))
    g = _time(inst, baselines.greedy_by_size(inst))
    rs = [_time(inst, baselines.random_assignment(inst, seed)) for seed in range(3)]
    tol = 1e-9 * slow
    assert h <= g + tol
    assert all(h <= r + tol for r in rs)
    assert h <= slow + tol
    if any(b.size <= inst.capacity for b in inst.buffers):
        assert h < slow


@pytest.mark.parametrize("inst", EXACT_INSTANCES)
def test_exact_validates_and_bounds(inst):
    inst = _load(inst)
    r = exact.solve(inst, time_limit=1.5, num_workers=2)
    assert r.verdict.valid, r.verdict.summary()
    h = _time(inst, heuristic.assign(inst))
    t = r.verdict.estimated_time
    # hinted with the heuristic; CP-SAT compares times floored to ticks of
    # slow_time / TICKS per op, so a solution equal in ticks can be up to
    # one tick per op slower in seconds
    tick = simulate(inst, {}).estimated_time / exact.TICKS
    assert t <= h + (inst.num_ops + 1) * tick
    assert r.bound <= t * (1 + 1e-6)
    for s in [baselines.greedy_by_size(inst), baselines.random_assignment(inst, 1)]:
        assert r.bound <= _time(inst, s) * (1 + 1e-6)
    if r.status == "OPTIMAL":
        assert t == pytest.approx(r.bound, rel=1e-4)


@pytest.mark.parametrize("mode", ["offload", "placement"])
def test_exact_matches_brute_force_on_tiny(mode):
    inst = tiny_instance(mode, capacity=400)
    _, menus = build_menus(inst)
    best = None
    for combo in itertools.product(*[range(len(m)) for m in menus]):
        # placement: offsets by best-fit of the combination, tried in both orders
        s = Solution(mode, "brute", [menus[b][p].assignment(b) for b, p in enumerate(combo)])
        if mode == "placement":
            from memfit.msa.core.plans import FastMemory
            mem = FastMemory(inst)
            ok = True
            for b, p in sorted(enumerate(combo), key=lambda bp: -inst.buffers[bp[0]].size):
                ivs = menus[b][p].intervals(inst, b)
                if not ivs:
                    continue
                off = mem.best_fit(inst.buffers[b].size, ivs)
                if off is None:
                    ok = False
                    break
                mem.add(inst.buffers[b].size, ivs, off)
                s.buffers[b].offset = off
            if not ok:
                continue
        v = validate(inst, s)
        if v.valid and (best is None or v.estimated_time < best):
            best = v.estimated_time
    r = exact.solve(inst, time_limit=10, num_workers=2)
    assert r.status == "OPTIMAL"
    assert r.verdict.estimated_time == pytest.approx(best, rel=1e-5)
    assert r.bound <= best * (1 + 1e-9)


@pytest.mark.parametrize("rows", [3, 256])
def test_picker_use_reduction_is_op_seconds_with_one_access_fast(rows, monkeypatch):
    """plans.Picker.use_reduction (every access of an op at once, in row
    chunks of ``rows``) equals, bit for bit, the op's roofline time with all
    accesses slow minus that with the one buffer fast (model.op_seconds),
    on an exported program and synthetic instances."""
    from memfit.msa.core.model import op_seconds
    from memfit.msa.core.plans import Picker
    from memfit.msa.io.synthetic import random_instance
    monkeypatch.setattr(Picker, "REDUCTION_ROWS", rows)
    insts = [Instance.load(ROOT / "data/msa/instances/attention-offload-50.json")]
    insts += [random_instance(s, num_ops=40, num_args=6, mode="offload") for s in range(3)]
    for inst in insts:
        p = Picker(inst)
        for u in range(inst.num_ops):
            acc = inst.accesses(u)
            slow = op_seconds(inst, u, {})
            for b in acc:
                assert p.use_reduction(b, u) == slow - op_seconds(inst, u, {b: True})


def _windows_by_scan(p, b, lo, u):
    """Picker.windows as XLA's prefetch picker states it: the latest start
    whose overlap hides min_ratio of the copy, the earliest one resident no
    longer than max_elapsed, the start nearest preferred_ratio of the copy
    (earliest on ties), each found by walking the starts one by one."""
    if lo > u - 1:
        return []
    inst = p.inst
    copy = inst.buffers[b].size / inst.device.copy_bandwidth * inst.ops[u].weight
    red = p.use_reduction(b, u)
    latest = next((s for s in range(u - 1, lo - 1, -1)
                   if p.elapsed(s, u) + red >= p.min_ratio * copy), lo)
    earliest = lo
    while earliest < latest and p.elapsed(earliest, u) > p.max_elapsed:
        earliest += 1
    want = p.preferred_ratio * copy
    best = min(range(earliest, latest + 1), key=lambda s: (abs(want - p.elapsed(s, u)), s))
    return list(dict.fromkeys([best, latest]))


def test_picker_windows_are_the_one_by_one_scan():
    """Picker.windows forms all elapsed times of a range at once; the same
    starts, to the bit, as the scan, over the uses of every buffer of one
    exported program and of every 16th of a long many-access schedule."""
    from memfit.msa.core.plans import Picker
    n = 0
    for name, stride in (("attention-offload-50", 1), ("lstm_long-offload-50", 16)):
        inst = Instance.load(ROOT / f"data/msa/instances/{name}.json")
        p = Picker(inst)
        for b in range(0, inst.num_buffers, stride):
            for u in inst.buffers[b].uses:
                for lo in {0, max(0, u - 3), inst.available_from(b)}:
                    assert p.windows(b, lo, u) == _windows_by_scan(p, b, lo, u), (name, b, lo, u)
                    n += 1
    assert n > 1000


def test_buffer_order_cache_changes_no_value():
    """buffer_order shares each op's all-slow parts between its buffers
    (order.alternate_memory_benefit's cache): the same memory boundedness,
    to the bit, as computed alone, on a program whose ops touch many
    buffers."""
    from memfit.msa.core import order
    inst = Instance.load(Path(__file__).resolve().parents[2]
                         / "data/msa/instances/transformer_small-offload-50.json")
    assert max(len(inst.accesses(t)) for t in range(inst.num_ops)) > 8
    slow = {}
    for b in range(inst.num_buffers):
        assert order.memory_boundedness(inst, b, slow) == order.memory_boundedness(inst, b)
    assert slow
    assert order.buffer_order(inst) == sorted(
        range(inst.num_buffers),
        key=lambda b: (-order.memory_boundedness(inst, b), -inst.buffers[b].size,
                       -(inst.buffers[b].end - inst.buffers[b].start),
                       max(inst.buffers[b].uses, default=0), inst.buffers[b].start, b))
