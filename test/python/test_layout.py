"""The package's shape (docs/architecture.md): no module of memfit imports,
directly or through others, a module that imports it back; memory-space
assignment's packages are layers (core, then solvers and io, then learned,
then the entry points msa.cli and msa.offload), each importing only from
the layers below it; the test harnesses (memfit.testing) are no dependency
of the product; and the top level holds at most 15 modules. Imports inside
functions count too: they only postpone a cycle."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "memfit"


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _imports(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The memfit modules `name` imports (a name imported from a package is
    the submodule when there is one; `from . import _core`, the compiled
    extension, is no module of the package)."""
    out = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in mods}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            for a in node.names:
                if f"{mod}.{a.name}" in mods:
                    out.add(f"{mod}.{a.name}")
                elif mod in mods and mod != "memfit":
                    out.add(mod)
    return out - {name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
                on.discard(comp[-1])
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    mods = _modules()
    graph = {name: _imports(name, path, mods) for name, path in mods.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_sees_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# What each of memfit.msa's packages may import from the others.
MSA_LAYERS = {
    "memfit.msa.core": set(),
    "memfit.msa.solvers": {"memfit.msa.core"},
    "memfit.msa.io": {"memfit.msa.core"},
    "memfit.msa.learned": {"memfit.msa.core", "memfit.msa.solvers", "memfit.msa.io"},
}
MAX_TOP_LEVEL_MODULES = 15


def _package(module: str, packages) -> str | None:
    return next((p for p in packages if module == p or module.startswith(p + ".")), None)


def _layer_violations(graph: dict[str, set[str]], layers: dict[str, set[str]]) -> list[str]:
    """Imports from a module of one layer into another layer it may not use."""
    out = []
    for a, targets in graph.items():
        pa = _package(a, layers)
        if pa is None:
            continue
        for b in targets:
            if b.startswith("memfit.msa.") and _package(b, layers) not in layers[pa] | {pa}:
                out.append(f"{a} -> {b}")
    return sorted(out)


def _harness_users(graph: dict[str, set[str]]) -> list[str]:
    """Modules outside memfit.testing that import it."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if b.startswith("memfit.testing") and not a.startswith("memfit.testing"))


def _graph():
    mods = _modules()
    return {name: _imports(name, path, mods) for name, path in mods.items()}


def test_msa_packages_are_layers():
    assert _layer_violations(_graph(), MSA_LAYERS) == []


def test_the_layer_check_sees_a_layer_used_from_below():
    graph = {"memfit.msa.core.game": {"memfit.msa.solvers.heuristic"},
             "memfit.msa.learned.agent": {"memfit.msa.solvers.heuristic", "memfit.msa.cli"},
             "memfit.msa.cli": {"memfit.msa.learned.agent"}}
    assert _layer_violations(graph, MSA_LAYERS) == [
        "memfit.msa.core.game -> memfit.msa.solvers.heuristic",
        "memfit.msa.learned.agent -> memfit.msa.cli"]


def test_the_product_does_not_import_the_test_harnesses():
    graph = _graph()
    assert _harness_users(graph) == []
    graph["memfit.api"] = graph["memfit.api"] | {"memfit.testing.oracle"}
    assert _harness_users(graph) == ["memfit.api -> memfit.testing.oracle"]


def test_top_level_modules():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
