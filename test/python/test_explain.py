"""memfit explains its split: f.report(), `memfit explain`, `memfit opt --report`.

The report's numbers are checked against the tools that measure them
independently (memfit.profile, XLA's memory analysis of the programs), its
loops against their own arithmetic, and the plot against the timelines."""
import json

import jax
import numpy as np
import pytest

import memfit
from memfit import _jax_handover as handover
from memfit.cli import main
from memfit.explain.split import explain_text
from memfit.measure import xla_bytes
from memfit.testing import examples

MIB = 2.0 ** 20
LIMIT = 2 * 2**20


def knn(x, y):
    # the kNN with its distances written as a GEMM: memfit-split chunks it
    # (the exact kNN rewrite takes the broadcast form into its own loops)
    return examples.knn_expanded(y, x, 10)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((512, 16), dtype=np.float32),
            rng.standard_normal((8192, 16), dtype=np.float32))


@pytest.fixture(scope="module")
def fitted(data):
    f = memfit.jit(knn, memory_limit=LIMIT)
    got = f(*data)
    want = jax.jit(knn)(*data)
    np.testing.assert_array_equal(got[1], want[1])
    return f, f.report()


def test_report_agrees_with_profile_and_xla(data, fitted):
    f, r = fitted
    assert r.fits and r.memory_limit == LIMIT and r.function == "main"
    assert r.before.peak_bytes == memfit.profile(knn)(*data).peak_bytes
    assert r.after.peak_bytes == memfit.profile(f)(*data).peak_bytes
    assert r.xla_bytes_before == xla_bytes(jax.jit(knn).lower(*data).compile())
    assert r.xla_bytes_after == xla_bytes(f.lower(*data).compile())
    assert r.xla_bytes_after <= LIMIT < r.xla_bytes_before
    # memfit's own model of the kept program: below the unsplit one; it can
    # sit a little above the limit (the rewrites after the split, e.g. the
    # two-stage top-k, are modelled without all of XLA's fusions), XLA's
    # count above is what must fit
    assert r.before.peak_bytes > LIMIT and r.after.peak_bytes < 1.25 * LIMIT
    kept = [m for m in r.margins if m.kept]
    assert len(kept) == 1 and kept[0].xla_bytes == r.xla_bytes_after


def test_loops_say_what_they_split(fitted):
    _, r = fitted
    assert r.loops, "the kNN distance matrix must be split"
    assert "top-k" in r.rewrites  # the two-stage top-k ran in the loop
    for loop in r.loops:
        assert loop.seed_shape[loop.dim] == loop.size
        assert loop.seed_bytes == np.prod(loop.seed_shape) * 4 and loop.seed_element == "f32"
        assert loop.chunk * loop.chunks + loop.remainder == loop.size
        assert 0 <= loop.remainder < loop.chunk
        assert loop.seed_bytes > LIMIT and "examples.py" in loop.location
    # The profile tags exactly these loops' ops.
    steps = {p["split_step"] for p in r.after.timeline} - {-1}
    assert steps == {loop.step for loop in r.loops}
    assert all(p["split_step"] == -1 for p in r.before.timeline)


def test_table_and_json(fitted):
    _, r = fitted
    d = json.loads(r.to_json())
    assert d["loops"][0]["chunk"] == r.loops[0].chunk
    assert d["xla_bytes_after"] == r.xla_bytes_after
    assert len(d["after"]["timeline"]) == len(r.after.timeline)
    table = r.table()
    loop = r.loops[0]
    assert f"{loop.chunk} x {loop.chunks}" in table and loop.seed_type in table
    assert "fits" in table.splitlines()[0] and "top-k x" in table


def test_plot_is_headless_and_draws_the_timelines(fitted, tmp_path):
    _, r = fitted
    path = tmp_path / "split.png"
    fig = r.plot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    top, bottom = fig.axes[:2]
    for ax, prof, name in ((top, r.before, "before"), (bottom, r.after, "after memfit")):
        by_label = {ln.get_label().split(":")[0]: ln for ln in ax.get_lines()}
        assert set(by_label) == {name, f"limit {memfit.explain.report.format_bytes(LIMIT)}"}
        np.testing.assert_allclose(by_label[name].get_ydata(),
                                   [p["live_bytes"] / MIB for p in prof.timeline])
        limit_line = [ln for k, ln in by_label.items() if k.startswith("limit")][0]
        np.testing.assert_allclose(limit_line.get_ydata(), [LIMIT / MIB] * 2)
    # Loop ops shaded, the first span of each loop labelled with it.
    spans = [p for p in bottom.patches if p.get_label().startswith("loop")]
    assert len(spans) == len(r.loops)
    assert f"{r.loops[0].chunks} x {r.loops[0].chunk}" in spans[0].get_label()
    assert not top.patches


def test_unreachable_limit_reports_smallest_reachable(data):
    limit = 600 * 1024  # arguments and outputs (584 KiB) fit; the split cannot get there
    f = memfit.jit(knn, memory_limit=limit)
    with pytest.raises(memfit.MemfitError):
        f(*data)
    r = f.report()
    assert not r.fits and r.after is None and r.loops == []
    assert r.smallest_reachable is not None and r.smallest_reachable > limit
    assert "smallest limit memfit can reach" in r.table()
    assert r.xla_bytes_before == xla_bytes(jax.jit(knn).lower(*data).compile())
    fig = r.plot()
    assert "cannot fit" in fig.axes[1].texts[0].get_text()
    # ... and the limit it names is one memfit meets.
    g = memfit.jit(knn, memory_limit=r.smallest_reachable, calibrate=False)
    g.lower(*data)
    assert g.report().fits


@pytest.fixture(scope="module")
def knn_file(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "knn.mlir"
    path.write_text(handover.module_text(jax.jit(knn).lower(*data)))
    return path


def test_cli_explain_writes_report_and_png(data, knn_file, tmp_path, capsys):
    png = tmp_path / "split.png"
    assert main(["explain", str(knn_file), "--memory-limit", "2MiB", "--json", "--xla",
                 "-o", str(png)]) == 0
    d = json.loads(capsys.readouterr().out)
    report, _ = explain_text(knn_file.read_text(), "2MiB")
    assert d["loops"] == [vars(loop) for loop in report.loops] and d["fits"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    # The file's XLA bytes are those of the same programs compiled through jax.
    assert d["xla_bytes_before"] == xla_bytes(jax.jit(knn).lower(*data).compile())
    g = memfit.jit(knn, memory_limit="2MiB", calibrate=False)
    g.lower(*data)
    assert d["xla_bytes_after"] == g.report().xla_bytes_after
    assert d["margins"][0]["xla_bytes"] == d["xla_bytes_after"]


def test_cli_opt_report(knn_file, tmp_path, capsys):
    out = tmp_path / "split.mlir"
    assert main(["opt", str(knn_file), "--memory-limit", "2MiB", "--report",
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "memfit split of @main" in err and "chunk x count" in err
    assert "memfit.split" in out.read_text()
    assert main(["opt", str(knn_file), "--memory-limit", "300KiB", "--report=json"]) == 1
    d = json.loads(capsys.readouterr().err)
    assert not d["fits"] and d["smallest_reachable"] > 300 * 1024


def test_two_loops_are_told_apart(tmp_path):
    """Two oversized regions (test_split's program): two loops, each with its
    own plan, its own ops in the timeline and its own shaded span."""
    def f(x, y, z):
        s = jax.numpy.sum(jax.numpy.exp(-(x[:, None] - y[None, :]) ** 2), 1)
        return s, jax.lax.top_k(z[:, None] * s[None, :], 2)
    args = [jax.ShapeDtypeStruct((n,), np.float32) for n in (3000, 3001, 2999)]
    report, kept = explain_text(handover.module_text(jax.jit(f).lower(*args)), "256KiB")
    assert report.fits and len(report.loops) >= 2
    assert [lp.step for lp in report.loops] == sorted({lp.step for lp in report.loops})
    assert {lp.seed_shape[lp.dim] for lp in report.loops} >= {3001, 2999}
    for lp in report.loops:
        assert lp.chunk * lp.chunks + lp.remainder == lp.size
    steps = {p["split_step"] for p in report.after.timeline} - {-1}
    assert steps == {lp.step for lp in report.loops}
    fig = report.plot(str(tmp_path / "two.png"))
    labels = [p.get_label() for p in fig.axes[1].patches if p.get_label().startswith("loop")]
    assert len(labels) == len(report.loops)
    for lp, label in zip(report.loops, labels):
        assert label.startswith(f"loop {lp.step}: dim {lp.dim} of {lp.seed_type}")


def test_rewrites_with_quoted_names_are_read():
    """MLIR quotes dictionary keys that are not identifiers ("reduce-to-dot")."""
    from memfit.explain.split import applied_rewrites
    def f(a, b):
        return jax.numpy.sum(a[:, None, :] * b[None, :, :], -1)
    args = [jax.ShapeDtypeStruct((16, 8), np.float32), jax.ShapeDtypeStruct((32, 8), np.float32)]
    text = memfit.transform(handover.module_text(jax.jit(f).lower(*args)), "memfit-rewrite")
    assert '"reduce-to-dot" = 1' in text
    assert applied_rewrites(text) == {"reduce-to-dot": 1}


_DEFAULT_FLAGS_SCRIPT = """
import json, jax.numpy as jnp, memfit
f = memfit.jit(lambda x: jnp.tanh(x @ x.T).sum(0), memory_limit="1GiB")
f(jnp.ones((256, 64), jnp.float32))
r = f.report()
print(json.dumps([r.xla_bytes_before, r.xla_bytes_after, len(r.loops), r.rewrites]))
"""


def test_report_counts_before_and_after_alike_in_jax_defaults():
    """Under jax's default flags (ynn fusions on) XLA leaves the fusions'
    scratch out of its count; "before" and "after" must both be counted with
    them off, as the calibration counts, or a program memfit left unchanged
    reads as having grown (it read 65 KiB -> 329 KiB here)."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # jax's defaults
    out = subprocess.run([sys.executable, "-c", _DEFAULT_FLAGS_SCRIPT], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after, loops, rewrites = json.loads(out.stdout.strip().splitlines()[-1])
    assert loops == 0 and not rewrites  # memfit left the program as it was
    assert before == after
