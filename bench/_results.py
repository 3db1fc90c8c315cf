"""``--write`` for every bench: what the bench prints, kept as its latest result.

A bench adds the flag to its parser and runs its ``main`` through ``run``::

    _results.add_write_flag(ap)
    ...
    if __name__ == "__main__":
        sys.exit(_results.run(main, __file__))

With ``--write`` on the command line, everything the bench prints to stdout
is also written, when ``main`` succeeds, to ``bench/results/<bench
stem>.txt`` (replacing the last result: one file per bench, regenerated,
never accumulated), under a header with the command and the machine. A
bench whose named variants measure other things (``--big``) writes
``<stem>.<variant>.txt`` for them, so that one run does not replace the
other's table.
"""
from __future__ import annotations

import io
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

RESULTS = Path(__file__).resolve().parent / "results"
FLAG = "--write"


def add_write_flag(parser) -> None:
    parser.add_argument(FLAG, action="store_true",
                        help="also write what this prints to bench/results/<bench>.txt "
                             "(replacing the last result)")


def chosen(ap, value: str, known, what: str) -> list[str]:
    """The comma-separated names in ``value`` (all of ``known`` when empty);
    an unknown one is a usage error that lists the known ``what``."""
    names = [n for n in value.split(",") if n] or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        ap.error(f"unknown {what} {unknown}; {what}: {', '.join(known)}")
    return names


def result_path(script: str, argv: Sequence[str], variants: Sequence[str] = ()) -> Path:
    """Where ``script`` run with ``argv`` keeps its result: the first of
    ``variants`` (flags such as ``--big``) present in ``argv`` names it."""
    stem = Path(script).stem
    for flag in variants:
        if flag in argv:
            return RESULTS / f"{stem}.{flag.lstrip('-')}.txt"
    return RESULTS / f"{stem}.txt"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _commit(root: Path) -> str:
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (rev or "unknown") + (" with uncommitted changes" if dirty else "")


def header(script: str, argv: Sequence[str]) -> str:
    """The command that reproduces the result and the machine it ran on."""
    root = Path(script).resolve().parents[1]
    cmd = " ".join([".venv/bin/python", f"bench/{Path(script).name}",
                    *(shlex.quote(a) for a in argv if a != FLAG)])
    versions = []
    for mod in ("jax", "memfit"):
        if mod in sys.modules:
            versions.append(f"{mod} {getattr(sys.modules[mod], '__version__', '?')}")
    machine = f"CPU: {_cpu_model()}, {os.cpu_count()} cores"
    if hasattr(os, "getloadavg"):
        machine += f", load average {os.getloadavg()[0]:.1f} at the end"
    return (f"# {cmd}\n# {machine}; " + ", ".join(versions + [f"commit {_commit(root)}"])
            + "\n")


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, out):
        self.out, self.copy = out, io.StringIO()

    def write(self, s: str) -> int:
        self.copy.write(s)
        return self.out.write(s)

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        return self.out.isatty()

    @property
    def encoding(self):
        return self.out.encoding


def run(main: Callable[[], object], script: str, variants: Sequence[str] = ()) -> int:
    """Runs ``main`` (which parses ``sys.argv`` itself); with ``--write``,
    writes what it printed to its result file when it returns 0 or None.
    Returns ``main``'s exit status."""
    argv = sys.argv[1:]
    if FLAG not in argv or "-h" in argv or "--help" in argv:
        status = main()
        return 0 if status is None else status
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        status = main()
    finally:
        sys.stdout = tee.out
    status = 0 if status is None else status
    if status == 0:
        path = result_path(script, argv, variants)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header(script, argv) + tee.copy.getvalue())
        print(f"wrote {path.relative_to(path.parents[2])}", file=sys.stderr)
    return status
