"""memfit-split never crashes and never changes results: a seeded fuzz of
random small StableHLO programs over every element type and op family
(memfit/testing/fuzz.py), each split at a tiny, a generous and a profile-chosen
limit in a worker subprocess, results compared with XLA's on the original.
bench/fuzz_split.py runs thousands of cases; this runs a few hundred."""
from __future__ import annotations

import pytest

from memfit.testing import fuzz


@pytest.fixture(scope="module")
def report():
    return fuzz.run(seed=16, programs=100, per_program=3)


def test_no_crash_and_no_wrong_result(report):
    assert len(report.cases) >= 250
    assert report.failures() == []


def test_every_element_type_and_family_was_tried(report):
    assert {c["dtype"] for c in report.cases} == set(fuzz.DTYPES)
    assert {c["family"] for c in report.cases} == set(fuzz.FAMILIES)
    counts = report.counts()
    # Cases of each kind, so the test sees splits as well as refusals.
    assert counts["split"] >= 5 and counts["refused"] >= 20


def test_a_dying_worker_is_counted_as_a_crash(monkeypatch):
    # The harness pins a worker's death on the case it had started, counts
    # it, and resumes with a new worker after that program.
    monkeypatch.setenv(fuzz.SELF_TEST_ABORT, "1")
    r = fuzz.run(seed=3, programs=3, per_program=1)
    crashed = [c for c in r.cases if c["outcome"] == "crash"]
    assert [c["i"] for c in crashed] == [1]
    assert {c["i"] for c in r.cases} == {0, 1, 2}
