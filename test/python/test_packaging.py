"""Packaging: one version everywhere, optional dependencies behind extras.

The built wheel itself is exercised by `make wheel-smoke` (test/wheel/smoke.py)
from a fresh venv; these tests check the source tree's side of it."""
import ctypes
import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import memfit
from memfit import _core, _optional
from memfit.cli import main, plugin_path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


class _PluginInfo(ctypes.Structure):
    # mlir::PassPluginLibraryInfo (mlir/Tools/Plugins/PassPlugin.h)
    _fields_ = [("api_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("version", ctypes.c_char_p), ("register", ctypes.c_void_p)]


def plugin_version() -> str:
    lib = ctypes.CDLL(str(plugin_path()))
    lib.mlirGetPassPluginInfo.restype = _PluginInfo
    return lib.mlirGetPassPluginInfo().version.decode()


def test_one_version_everywhere(capsys):
    want = PYPROJECT["project"]["version"]
    assert memfit.__version__ == want
    assert _core.__version__ == want            # the C++ library's memfit::version()
    assert importlib.metadata.version("memfit") == want
    assert plugin_version() == want
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"memfit {want}"


def _hide(monkeypatch, top: str) -> None:
    """Makes `import top` (and its submodules) fail as if not installed."""
    for name in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, top, None)


@pytest.mark.parametrize("module,extra", [
    ("ortools.sat.python.cp_model", "msa"), ("mctx", "msa"), ("optax", "msa"),
    ("tqdm", "msa"), ("matplotlib", "plot"), ("iree.compiler", "iree"),
])
def test_missing_module_names_its_extra(monkeypatch, module, extra):
    _hide(monkeypatch, module.split(".")[0])
    with pytest.raises(_optional.MissingDependency) as e:
        _optional.require(module, "this feature")
    assert f"pip install 'memfit[{extra}]'" in str(e.value)
    assert str(e.value).startswith("this feature needs")
    assert isinstance(e.value, ImportError)


def test_present_module_is_returned():
    mpl = _optional.require("matplotlib")
    assert mpl is sys.modules["matplotlib"] and hasattr(mpl, "use")


def test_import_error_inside_an_installed_package_is_not_hidden(monkeypatch):
    # A broken dependency of an installed package is a bug to see, not an
    # extra to install.
    def broken(name, *a, **k):
        raise ImportError("No module named 'somethingelse'", name="somethingelse")
    monkeypatch.setattr(_optional.importlib, "import_module", broken)
    with pytest.raises(ImportError) as e:
        _optional.require("mctx")
    assert not isinstance(e.value, _optional.MissingDependency)


def test_extras_table_matches_pyproject():
    extras = PYPROJECT["project"]["optional-dependencies"]
    dists = {"ortools": "ortools", "mctx": "mctx", "optax": "optax", "tqdm": "tqdm",
             "matplotlib": "matplotlib", "iree.compiler": "iree-base-compiler",
             "iree.runtime": "iree-base-runtime"}
    assert set(_optional.EXTRAS) == set(dists)
    for module, extra in _optional.EXTRAS.items():
        names = [re.split(r"[<>=!~\[ ]", r)[0] for r in extras[extra]]
        assert dists[module] in names, (module, extra)
    assert extras["all"] == ["memfit[msa,plot,iree]"]


def test_every_optional_import_goes_through_optional():
    """No module of the package imports an optional dependency itself."""
    pattern = re.compile(r"^\s*(import|from)\s+(%s)\b" % "|".join(
        re.escape(m.split(".")[0]) for m in _optional.EXTRAS), re.M)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "python/memfit").rglob("*.py")
                 if p.name != "_optional.py" and pattern.search(p.read_text())]
    assert offenders == []


def test_cli_missing_extra_exits_2_without_traceback(tmp_path):
    """`memfit assign --method exact` without ortools: exit 2, the extra named."""
    inst = ROOT / "data/msa/instances/attention-offload-25.json"
    code = ("import sys; sys.modules['ortools'] = None\n"
            "from memfit.cli import main\n"
            f"sys.exit(main(['assign', {str(inst)!r}, '--method', 'exact', "
            f"'-o', {str(tmp_path / 'sol.json')!r}]))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2, p.stderr
    assert "pip install 'memfit[msa]'" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "sol.json").exists()


def test_shipped_libraries_carry_no_test_passes():
    """memfit-test-op-views lives in test/lib (memfit-opt and the build tree's
    libmemfit-test-passes.so): neither the libraries the wheel ships contain
    it nor does a process that did not load the test library know it."""
    core = Path(_core.__file__).resolve()
    for lib in [core, core.parent / "lib" / "libmemfit.so", plugin_path()]:
        assert b"memfit-test-op-views" not in lib.read_bytes(), lib
    code = ("import json, memfit._core as c\n"
            "print(json.dumps(c.run_pipeline('module {}', 'memfit-test-op-views')))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    r = json.loads(p.stdout)
    assert not r["ok"]
    assert "memfit-test-op-views" in r["diagnostics"][0]["message"]
