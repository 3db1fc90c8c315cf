"""Instance / solution formats: round trips and schema errors that say where."""
import json

import pytest

from memfit.msa.core.instance import Instance, InstanceError
from memfit.msa.core.solution import Solution
from memfit.msa.io.synthetic import instance_suite, random_instance
from memfit.msa.io.tiny import tiny_instance


def test_round_trip(tmp_path):
    inst = random_instance(3, num_ops=12)
    p = tmp_path / "i.json"
    inst.save(p)
    assert Instance.load(p).to_dict() == inst.to_dict()
    s = Solution.all_slow(inst)
    s.save(tmp_path / "s.json")
    assert Solution.load(tmp_path / "s.json").to_dict() == s.to_dict()


def test_suite_instances_are_consistent():
    for inst in instance_suite():
        Instance.from_dict(json.loads(inst.dumps()))


def _bad(mutate):
    d = tiny_instance().to_dict()
    mutate(d)
    with pytest.raises(InstanceError) as e:
        Instance.from_dict(d)
    return str(e.value)


@pytest.mark.parametrize("mutate,where", [
    (lambda d: d.pop("capacity"), "missing field 'capacity'"),
    (lambda d: d.update(version=2), "instance.version"),
    (lambda d: d.update(mode="scratch"), "instance.mode"),
    (lambda d: d["device"].update(name="tpu"), "device.name"),
    (lambda d: d["device"].update(slow_bandwidth=0), "device.slow_bandwidth"),
    (lambda d: d["device"].update(copy_overlaps_compute=1), "device.copy_overlaps_compute"),
    (lambda d: d["ops"][1].update(operands=[9]), "ops[1].operands[0]"),
    (lambda d: d["ops"][1].update(id=5), "ops[1].id"),
    (lambda d: d["ops"][2].update(weight=0), "ops[2].weight"),
    (lambda d: d["buffers"][2].update(end=3), "buffers[2] ('b2').end"),
    (lambda d: d["buffers"][2].update(start=0), "buffers[2] ('b2').start"),
    (lambda d: d["buffers"][3].update(uses=[2, 3]), "buffers[3] ('b3').uses"),
    (lambda d: d["ops"][0].update(results=[]), "buffers[1] ('b1')"),
    (lambda d: d["buffers"][0].update(size="100"), "buffers[0].size"),
    (lambda d: d["buffers"][0].update(kind="weight"), "buffers[0].kind"),
])
def test_schema_errors_name_the_field(mutate, where):
    assert where in _bad(mutate)


def test_in_place_writes_are_accepted():
    d = tiny_instance().to_dict()
    d["ops"][2]["results"].append(0)        # op2 updates the argument b0 in place
    d["ops"][1]["results"].append(1)        # op1 reads and rewrites b1
    inst = Instance.from_dict(d)
    assert 0 in inst.accesses(2) and inst.buffers[0].start == 0


def test_solution_schema_errors():
    with pytest.raises(InstanceError, match="space"):
        Solution.from_dict({"version": 1, "mode": "offload", "method": "x",
                            "buffers": [{"id": 0, "space": "host"}]})
    with pytest.raises(InstanceError, match="prefetches"):
        Solution.from_dict({"version": 1, "mode": "offload", "method": "x",
                            "buffers": [{"id": 0, "space": "slow", "prefetches": [{"use": 1}]}]})
