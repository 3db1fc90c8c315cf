"""memfit assign / score / plot."""
import json

import pytest

from memfit.cli import main
from memfit.msa.core.solution import Solution
from memfit.msa.core.validator import validate
from memfit.msa.io.synthetic import random_instance
from memfit.msa.io.tiny import tiny_instance


def test_assign_score_plot(tmp_path, capsys):
    inst = random_instance(4, num_ops=14, mode="placement")
    ip = tmp_path / "inst.json"
    inst.save(ip)
    for method in ("heuristic", "greedy", "random", "slow", "exact"):
        sp = tmp_path / f"{method}.json"
        args = ["assign", str(ip), "--method", method, "-o", str(sp)]
        if method == "exact":
            args += ["--time-limit", "1", "--num-workers", "2"]
        assert main(args) == 0
        assert json.loads(sp.read_text())["method"] == method
        assert main(["score", str(ip), str(sp)]) == 0
        out = capsys.readouterr().out
        assert "valid: yes" in out and "estimated time: " in out
    png = tmp_path / "a.png"
    assert main(["plot", str(ip), str(tmp_path / "heuristic.json"), "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["plot", str(ip), "-o", str(tmp_path / "b.png")]) == 0


def test_score_rejects_an_invalid_solution(tmp_path, capsys):
    inst = tiny_instance()
    ip = tmp_path / "inst.json"
    inst.save(ip)
    sp = tmp_path / "s.json"
    sp.write_text(json.dumps({"version": 1, "mode": "offload", "method": "hand", "buffers": [
        {"id": b, "space": "fast" if b in (1, 2) else "slow"} for b in range(5)]}))
    assert main(["score", str(ip), str(sp)]) == 1
    assert "capacity" in capsys.readouterr().out


def test_bad_instance_is_a_clear_error(tmp_path, capsys):
    d = tiny_instance().to_dict()
    d["buffers"][2]["end"] = 3
    ip = tmp_path / "inst.json"
    ip.write_text(json.dumps(d))
    assert main(["assign", str(ip)]) == 1
    assert "buffers[2] ('b2').end" in capsys.readouterr().err


def test_assign_passes_the_learned_options(tmp_path, monkeypatch):
    """--polish, --polish-pairs / --no-polish-pairs and --relax [play|polish] /
    --no-relax reach the learned player (its own tests play it; here its
    entry point is replaced)."""
    from memfit.msa import learned
    from memfit.msa.solvers import heuristic
    seen = []

    def fake(inst, **kw):
        seen.append(kw)
        return heuristic.assign(inst)

    monkeypatch.setattr(learned, "assign", fake)
    inst = random_instance(4, num_ops=14, mode="offload")
    ip = tmp_path / "inst.json"
    inst.save(ip)
    for flag, want in (([], None), (["--polish-pairs"], True), (["--no-polish-pairs"], False)):
        assert main(["assign", str(ip), "--method", "learned", "--polish", "1",
                     "-o", str(tmp_path / "s.json")] + flag) == 0
        assert seen[-1]["polish_pairs"] is want and seen[-1]["polish"] == 1
    for flag, want in (([], None), (["--relax"], "play"), (["--relax", "polish"], "polish"),
                       (["--no-relax"], False)):
        assert main(["assign", str(ip), "--method", "learned",
                     "-o", str(tmp_path / "s.json")] + flag) == 0
        assert seen[-1]["relax"] is want
    for flag, want in (([], None), (["--local-search"], True), (["--no-local-search"], False)):
        assert main(["assign", str(ip), "--method", "learned",
                     "-o", str(tmp_path / "s.json")] + flag) == 0
        assert seen[-1]["local_search"] is want
    for flag, want in (([], None), (["--iterate", "0"], 0), (["--iterate", "50"], 50)):
        assert main(["assign", str(ip), "--method", "learned",
                     "-o", str(tmp_path / "s.json")] + flag) == 0
        assert seen[-1]["iterate"] == want


def test_iterate_refuses_a_negative_round_count(tmp_path, capsys):
    """--iterate -3 (or a word) is a usage error that names the option, not a
    silent run without the search."""
    inst = random_instance(4, num_ops=14, mode="offload")
    ip = tmp_path / "inst.json"
    inst.save(ip)
    for bad in ("-3", "many"):
        with pytest.raises(SystemExit) as e:
            main(["assign", str(ip), "--method", "heuristic", "--iterate", bad,
                  "-o", str(tmp_path / "s.json")])
        assert e.value.code == 2
        assert "--iterate" in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()


def test_iterate_after_another_method(tmp_path):
    """--iterate N after a method other than learned: its solution through N
    rounds of msa.solvers.localsearch.iterate (seeded by --seed), never slower."""
    inst = random_instance(7, num_ops=24, num_args=3, mode="placement")
    h, got = _after_heuristic(tmp_path, inst, "--iterate", "10", "--seed", "2")
    want = _iterated(inst, h, seed=2, rounds=10)
    assert got.to_dict() == want.to_dict()
    assert validate(inst, want).estimated_time < validate(inst, h).estimated_time


def _after_heuristic(tmp_path, inst, *options):
    """``(heuristic's solution, memfit assign --method heuristic OPTIONS's)``."""
    from memfit.msa.solvers import heuristic
    ip, sp = tmp_path / "inst.json", tmp_path / "s.json"
    inst.save(ip)
    assert main(["assign", str(ip), "--method", "heuristic", *options, "-o", str(sp)]) == 0
    return heuristic.assign(inst), Solution.load(sp)


def _iterated(inst, sol, **kwargs):
    """msa.solvers.localsearch.iterate with the agent's kicks and passes."""
    from memfit.msa.learned.agent import DEFAULT_CONFIG as D
    from memfit.msa.solvers import localsearch
    return localsearch.iterate(inst, sol, kick=D.iterate_kick, passes=D.local_search_passes,
                               **kwargs)[0]


def test_layout_rounds_after_a_method(tmp_path):
    """--layout-rounds N: the method's solution through N layout rounds of
    msa.solvers.localsearch.iterate (placement mode; seeded by --seed), never slower;
    ignored in offload mode; a negative count is a usage error."""
    inst = random_instance(200, num_ops=24, num_args=3, mode="placement",
                           capacity_fraction=0.3)
    h, got = _after_heuristic(tmp_path, inst, "--layout-rounds", "10", "--seed", "1")
    want = _iterated(inst, h, seed=1, rounds=0, layout_rounds=10)
    assert got.to_dict() == want.to_dict()
    assert validate(inst, want).estimated_time < validate(inst, h).estimated_time
    off = random_instance(200, num_ops=24, num_args=3, mode="offload")
    h, got = _after_heuristic(tmp_path, off, "--layout-rounds", "10")
    assert got.to_dict() == h.to_dict()
    with pytest.raises(SystemExit):
        main(["assign", str(tmp_path / "inst.json"), "--layout-rounds", "-2"])


@pytest.mark.parametrize("mode,ops", [("offload", 60), ("placement", 30)])
def test_local_search_after_another_method(tmp_path, mode, ops):
    """--local-search after a method other than learned: its solution through
    msa.solvers.localsearch (with --repack: from the repacked solution), never slower."""
    from memfit.msa.solvers import heuristic, localsearch
    from memfit.msa.learned.agent import DEFAULT_CONFIG as D
    from memfit.msa.solvers.repack import repack
    inst = random_instance(5, num_ops=ops, num_args=4, mode=mode)
    ip, sp = tmp_path / "inst.json", tmp_path / "s.json"
    inst.save(ip)
    h = heuristic.assign(inst)
    for flags, start in (([], h), (["--repack"], repack(inst, h)[0])):
        assert main(["assign", str(ip), "--method", "heuristic", "--local-search",
                     "-o", str(sp)] + flags) == 0
        want, _ = localsearch.improve(inst, start, passes=D.local_search_passes,
                                      pairs=D.local_search_pairs, compact=D.local_search_compact)
        assert Solution.load(sp).to_dict() == want.to_dict()
        assert validate(inst, want).estimated_time <= validate(inst, start).estimated_time
    assert validate(inst, want).estimated_time < validate(inst, h).estimated_time
