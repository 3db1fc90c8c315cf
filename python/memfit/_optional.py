"""The one place memfit imports an optional dependency.

``pip install memfit`` brings jax and numpy only: the splitting passes, the
profile and the packer need nothing else. Memory-space assignment
(CP-SAT, Gumbel MuZero search, training), plots and the IREE comparison need
extras; every such import goes through ``require`` so that a missing module
is an error that names the extra to install, and the command line turns it
into exit status 2 without a traceback.
"""
from __future__ import annotations

import importlib
from types import ModuleType

# Top-level module (or package prefix) -> the extra of pyproject.toml that
# installs it. Keep in step with [project.optional-dependencies].
EXTRAS = {
    "ortools": "msa",
    "mctx": "msa",
    "optax": "msa",
    "tqdm": "msa",
    "matplotlib": "plot",
    "iree.compiler": "iree",
    "iree.runtime": "iree",
}


class MissingDependency(ImportError):
    """An optional dependency is not installed; says which extra brings it.

    An ImportError, so code that already falls back on ImportError keeps
    working."""

    def __init__(self, module: str, extra: str, feature: str | None):
        self.module, self.extra, self.feature = module, extra, feature
        what = f"{feature} needs" if feature else "this needs"
        super().__init__(f"{what} the Python package '{module.split('.')[0]}', which is not "
                         f"installed: pip install 'memfit[{extra}]' (or 'memfit[all]')",
                         name=module)


def extra_for(module: str) -> str:
    """The extra that installs ``module`` (longest matching prefix)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        extra = EXTRAS.get(".".join(parts[:n]))
        if extra:
            return extra
    raise KeyError(f"{module!r} is not an optional dependency of memfit (see EXTRAS)")


def require(module: str, feature: str | None = None) -> ModuleType:
    """``importlib.import_module(module)``, or MissingDependency naming the
    extra when it (or its top-level package) is not installed.

    ``feature`` says what needs it, e.g. "memfit assign --method exact".
    """
    extra = extra_for(module)
    try:
        return importlib.import_module(module)
    except ImportError as e:
        # Only a missing optional package is the user's to install; an
        # ImportError from inside an installed one is a real bug.
        missing = e.name or ""
        if missing and not (module == missing or module.startswith(missing + ".")):
            raise
        raise MissingDependency(module, extra, feature) from None


def matplotlib_agg(feature: str | None = None) -> ModuleType:
    """matplotlib with the Agg backend: memfit only writes image files, so
    plots work headless (no display, CI)."""
    mpl = require("matplotlib", feature)
    mpl.use("Agg")
    return mpl
