"""How many XLA compiles memfit.jit makes, and its persistent calibration
cache (memfit.compile_cache).

* the calibration's count-only compiles (cheap code generation) give XLA's
  memory analysis exactly as a full compile does, on split programs;
* compiles per memfit.jit, counted by memfit.api.COMPILES: in this process
  (ynn fusions off: the calibration's compile is the executable that runs)
  and in jax's defaults (a fresh process: count-only compiles, one compile
  of the executable that runs), memory within the limit by XLA's count with
  ynn fusions off;
* the cache: a second process with the same program compiles nothing and
  runs the same results; a changed limit or program misses; a corrupt entry
  is ignored with a CacheWarning; MEMFIT_CACHE=0, an empty MEMFIT_CACHE_DIR
  and cache=False turn it off; records without executables compile once.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import memfit
from memfit import api, compile_cache
from memfit import _jax_handover as handover
from memfit.measure import ACCOUNTING_OPTIONS, NO_YNN, xla_bytes
from numerics import assert_matches

from memfit.testing import examples

MiB = 1024 * 1024
LIMIT = 5 * MiB  # knn below: 512 x 20,000 distances (39 MiB) split into chunks


def _knn_args(m=512):
    rng = np.random.default_rng(0)
    return (jax.numpy.asarray(rng.standard_normal((m, 16), np.float32)),
            jax.numpy.asarray(rng.standard_normal((20_000, 16), np.float32)))


def _attention_grad(q, k, v):
    return jax.grad(lambda q, k, v: examples.attention(q, k, v).sum(), argnums=(0, 1, 2))(q, k, v)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The cache on, in a directory of this test's own."""
    monkeypatch.setenv("MEMFIT_CACHE", "1")
    monkeypatch.setenv("MEMFIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMFIT_CACHE_EXECUTABLES", raising=False)
    compile_cache.stats.clear()
    return tmp_path / "cache"


def _entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json")) if root.exists() else []


def _compiles_of(fn):
    before = dict(api.COMPILES)
    result = fn()
    return result, {k: v - before.get(k, 0) for k, v in api.COMPILES.items()
                    if v != before.get(k, 0)}


# -- count-only compiles ------------------------------------------------------

@pytest.mark.parametrize("name", ["knn", "attention_grad"])
def test_count_only_compile_has_the_same_memory_analysis(name):
    rng = np.random.default_rng(1)
    if name == "knn":
        fun, args, limit = examples.knn, _knn_args(), LIMIT
    else:
        fun = _attention_grad
        args = tuple(rng.standard_normal((1024, 32), np.float32) for _ in range(3))
        limit = 6 * MiB
    text = memfit.jit(fun, memory_limit=limit, calibrate=False).lower(*args).as_text()
    assert "stablehlo.while" in text, "memfit did not split: the case tests nothing"

    def analysis(options):
        lowered = handover.replace_module(jax.jit(fun).lower(*args), text)
        m = lowered.compile(compiler_options=options).memory_analysis()
        return (m.argument_size_in_bytes, m.output_size_in_bytes, m.temp_size_in_bytes,
                m.alias_size_in_bytes)
    assert (analysis(api._count_options(ACCOUNTING_OPTIONS)) == analysis(ACCOUNTING_OPTIONS))


# -- compiles per memfit.jit --------------------------------------------------

def _two_pass_normaliser(x, y):
    # the max over the whole [4096, 2048] matrix comes before the sum of
    # exponentials: a first-of-two-passes loop and an accumulating one
    s = jax.numpy.sin(x[:, None] * y[None, :])
    return jax.numpy.exp(s - jax.numpy.max(s)).sum()


def test_one_compile_when_the_first_split_is_kept():
    # this process runs with ynn fusions off: the calibration's compile is
    # the executable that runs, so a split kept at margin 2 (here: several
    # loops, not re-split) costs one compile, and calling again none. The
    # program has no dot: a library dot's runtime scratch could push margin
    # 2 over the limit, and the scratch re-split is another test's subject.
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(4096, np.float32), rng.standard_normal(2048, np.float32))
    limit = 1 * MiB
    f = memfit.jit(_two_pass_normaliser, memory_limit=limit)
    out, compiles = _compiles_of(lambda: f(*args))
    cal = f.last_calibration
    assert len(cal.attempts) == 1 and "several loops" in cal.summary(), cal.summary()
    assert compiles == {"run": 1}
    assert cal.kept.total_bytes <= limit
    assert_matches(jax.jit(_two_pass_normaliser)(*args), out, 1e-5, True)
    _, again = _compiles_of(lambda: f(*args))
    assert again == {}


def test_a_resplit_costs_one_compile_per_margin():
    # attention's gradient at 8 MiB: margin 1.62's chunk is over the limit
    # with its runtime scratch, a larger margin's fits
    rng = np.random.default_rng(2)
    args = tuple(rng.standard_normal((2048, 64), np.float32) for _ in range(3))
    f = memfit.jit(_attention_grad, memory_limit=8 * MiB)
    _, compiles = _compiles_of(lambda: f.lower(*args))
    cal = f.last_calibration
    assert len(cal.attempts) == 2, cal.summary()
    assert compiles == {"run": 2}


def test_the_exact_knn_alone_compiles_once():
    # the kNN's two-level loop, no memfit-split loop: the model's own margin
    # is compiled first, and XLA's count keeps it
    q, x = _knn_args()
    f = memfit.jit(examples.knn, memory_limit=LIMIT)
    _, compiles = _compiles_of(lambda: f.lower(q, x))
    cal = f.last_calibration
    assert len(cal.attempts) == 1 and cal.kept.total_bytes <= LIMIT, cal.summary()
    assert compiles == {"run": 1}


_AS_USERS_RUN_IT = """
import json, sys
import jax, numpy as np
import memfit
from memfit import api, compile_cache
from memfit.testing import examples
from memfit.measure import ACCOUNTING_OPTIONS, xla_bytes
from memfit import _jax_handover as handover
rng = np.random.default_rng(0)
q = jax.numpy.asarray(rng.standard_normal((int(sys.argv[2]), 16), np.float32))
x = jax.numpy.asarray(rng.standard_normal((20_000, 16), np.float32))
f = memfit.jit(examples.knn, memory_limit=int(sys.argv[1]))
out = f(q, x)
want = jax.jit(examples.knn)(q, x)
kept = f.last_calibration.kept
accounted = xla_bytes(handover.replace_module(jax.jit(examples.knn).lower(q, x), kept.text)
                      .compile(compiler_options=ACCOUNTING_OPTIONS))
print("RESULT", json.dumps({
    "compiles": dict(api.COMPILES), "cache": dict(compile_cache.stats),
    "same_indices": bool(np.array_equal(np.asarray(out[1]), np.asarray(want[1]))),
    "accounted": accounted, "recorded": kept.xla_bytes, "total": kept.total_bytes,
    "cached": f.last_calibration.cached, "summary": f.last_calibration.summary()}))
"""


def _in_fresh_process(env_extra: dict, limit=LIMIT, m=512) -> dict:
    """Runs the kNN above in a fresh process with jax's default flags."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = env.get("XLA_FLAGS", "").replace(NO_YNN, "").strip()
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", _AS_USERS_RUN_IT, str(limit), str(m)],
                          capture_output=True, text=True, env=env, timeout=600)
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, proc.stderr[-3000:]
    return json.loads(line[0].split(" ", 1)[1])


def test_in_jax_defaults_the_calibration_counts_cheaply_and_compiles_the_run_once(tmp_path):
    # ynn fusions on: each margin's memory count is a count-only compile,
    # and the kept program is compiled once as it runs
    r = _in_fresh_process({"MEMFIT_CACHE": "0"})
    assert r["compiles"].get("run") == 1, r
    assert r["compiles"].get("count", 0) >= 1, r
    assert r["compiles"].get("count", 0) + r["compiles"].get("lean", 0) <= 3, r
    assert r["same_indices"]
    # the memory guarantee: XLA's bytes of the kept program with ynn
    # fusions off (a full compile) are the calibration's, within the limit
    assert r["accounted"] == r["recorded"] and r["total"] <= LIMIT, r["summary"]


def test_in_jax_defaults_a_program_far_under_the_limit_compiles_once(tmp_path):
    # memfit does not split it and both the model and XLA's count as it
    # runs put it under half the limit: the executable that runs is the
    # only compile; XLA's accounting count (ynn fusions off, a full compile)
    # is still within the limit
    limit = 512 * MiB
    r = _in_fresh_process({"MEMFIT_CACHE": "0"}, limit=limit)
    assert r["compiles"] == {"run": 1}, r
    assert "counted as it runs" in r["summary"]
    assert r["accounted"] <= limit and r["total"] <= limit / 2, r["summary"]
    assert r["same_indices"]


# -- the persistent cache -----------------------------------------------------

def test_a_second_process_with_the_same_program_compiles_nothing(tmp_path):
    env = {"MEMFIT_CACHE": "1", "MEMFIT_CACHE_DIR": str(tmp_path / "c")}
    first = _in_fresh_process(env)
    assert first["cache"] == {"misses": 1, "writes": 1} and not first["cached"], first
    second = _in_fresh_process(env)
    assert second["cache"] == {"hits": 1, "executables": 1}, second
    assert second["compiles"] == {} and second["cached"]
    assert second["same_indices"]
    assert second["accounted"] == first["accounted"] and second["total"] <= LIMIT


def test_without_executables_a_hit_compiles_once(tmp_path):
    env = {"MEMFIT_CACHE": "1", "MEMFIT_CACHE_DIR": str(tmp_path / "c"),
           "MEMFIT_CACHE_EXECUTABLES": "0"}
    _in_fresh_process(env)
    assert not list((tmp_path / "c").rglob("*.exe"))
    second = _in_fresh_process(env)
    assert second["cache"] == {"hits": 1} and second["compiles"] == {"run": 1}, second
    assert second["same_indices"] and second["total"] <= LIMIT


def test_a_hit_runs_the_kept_program_and_reports_it(cache_dir):
    q, x = _knn_args()
    first = memfit.jit(examples.knn, memory_limit=LIMIT)
    want = first(q, x)
    f = memfit.jit(examples.knn, memory_limit=LIMIT)
    got, compiles = _compiles_of(lambda: f(q, x))
    assert compile_cache.stats["hits"] == 1 and compiles == {}
    assert_matches(want, got, 0, True)
    cal = f.last_calibration
    assert cal.cached and cal.kept.margin == first.last_calibration.kept.margin
    assert cal.kept.xla_bytes == first.last_calibration.kept.xla_bytes <= LIMIT
    assert f.lower(q, x).as_text() == first.lower(q, x).as_text()
    assert "calibration cache" in cal.summary()
    assert f.report().xla_bytes_after == cal.kept.xla_bytes


def test_a_changed_limit_or_program_misses(cache_dir):
    q, x = _knn_args()
    memfit.jit(examples.knn, memory_limit=LIMIT)(q, x)
    memfit.jit(examples.knn, memory_limit=LIMIT + MiB)(q, x)
    memfit.jit(lambda q, x: examples.knn(q, x, k=5), memory_limit=LIMIT)(q, x)
    memfit.jit(examples.knn, memory_limit=LIMIT)(*_knn_args(m=256))
    assert compile_cache.stats["misses"] == 4 and compile_cache.stats["hits"] == 0
    assert len(_entries(cache_dir)) == 4
    memfit.jit(examples.knn, memory_limit=LIMIT + MiB)(q, x)
    assert compile_cache.stats["hits"] == 1


def _corrupt_record(path: Path):
    path.write_text(path.read_text()[:40])


def _corrupt_executable(path: Path):
    exe = path.with_suffix(".exe")
    exe.write_bytes(exe.read_bytes()[:100])


def _unloadable_executable(path: Path):
    # the checksum matches, the payload is not an executable
    import hashlib
    exe = path.with_suffix(".exe")
    exe.write_bytes(b"not an executable")
    record = json.loads(path.read_text())
    record["executable_sha256"] = hashlib.sha256(b"not an executable").hexdigest()
    path.write_text(json.dumps(record))


def _edited_text(path: Path):
    mlir = path.with_suffix(".mlir")
    mlir.write_text(mlir.read_text().replace("stablehlo.while", "stablehlo.whilst", 1))


@pytest.mark.parametrize("damage", [_corrupt_record, _corrupt_executable,
                                    _unloadable_executable, _edited_text])
def test_a_corrupt_entry_is_ignored_with_a_warning(cache_dir, damage):
    q, x = _knn_args()
    want = memfit.jit(examples.knn, memory_limit=LIMIT)(q, x)
    [entry] = _entries(cache_dir)
    damage(entry)
    f = memfit.jit(examples.knn, memory_limit=LIMIT)
    with pytest.warns(compile_cache.CacheWarning, match="ignoring the calibration cache entry"):
        got = f(q, x)
    assert_matches(want, got, 0, True)
    assert compile_cache.stats["errors"] == 1 and not f.last_calibration.cached
    assert f.last_calibration.kept.total_bytes <= LIMIT
    # written again: the next process reads it
    memfit.jit(examples.knn, memory_limit=LIMIT)(q, x)
    assert compile_cache.stats["hits"] == 1


def test_an_unwritable_directory_only_warns(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("MEMFIT_CACHE", "1")
    monkeypatch.setenv("MEMFIT_CACHE_DIR", str(blocker / "cache"))  # under a file
    q, x = _knn_args()
    with pytest.warns(compile_cache.CacheWarning, match="could not write"):
        out = memfit.jit(examples.knn, memory_limit=LIMIT)(q, x)
    assert_matches(jax.jit(examples.knn)(q, x), out, 1e-5, True)


@pytest.mark.parametrize("how", ["env", "empty_dir", "argument"])
def test_the_cache_can_be_turned_off(cache_dir, monkeypatch, how):
    if how == "env":
        monkeypatch.setenv("MEMFIT_CACHE", "0")
    elif how == "empty_dir":
        monkeypatch.setenv("MEMFIT_CACHE_DIR", "")
    q, x = _knn_args()
    for _ in range(2):
        memfit.jit(examples.knn, memory_limit=LIMIT, cache=how != "argument")(q, x)
    assert not _entries(cache_dir) and not compile_cache.stats


def test_default_directory_follows_the_cache_conventions(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMFIT_CACHE", raising=False)
    monkeypatch.delenv("MEMFIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compile_cache.directory() == tmp_path / "memfit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert compile_cache.directory() == Path.home() / ".cache" / "memfit"


def test_a_sharded_program_hits_on_its_devices(cache_dir):
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2,), ("d",), axis_types=(AxisType.Auto,))
    q, x = _knn_args()
    x = jax.device_put(x, NamedSharding(mesh, P("d", None)))
    want = memfit.jit(examples.knn, memory_limit=LIMIT)(q, x)
    f = memfit.jit(examples.knn, memory_limit=LIMIT)
    got = f(q, x)
    assert compile_cache.stats["hits"] == 1 and compile_cache.stats["executables"] == 1
    assert_matches(want, got, 0, True)
    assert got[1].sharding == want[1].sharding
