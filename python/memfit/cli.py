"""The ``memfit`` command line: opt, explain, profile, demo, pack, --plugin-path.

It parses arguments and calls library functions; the subcommands of a
feature (pack, msa) are added by that feature's module."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ._optional import MissingDependency
from .errors import MemfitError
from .textio import read_text, write_text


def plugin_path() -> Path:
    """The mlir-opt pass plugin built with this memfit."""
    from . import _core
    return Path(_core.__file__).resolve().parent / "lib" / "libMemfitPlugin.so"


def cmd_opt(args) -> int:
    from .transform import pipeline_for, transform
    if args.temp_margin is not None and args.memory_limit is None:
        raise SystemExit("memfit opt: --temp-margin needs --memory-limit")
    if args.report and (args.memory_limit is None or args.pipeline):
        raise SystemExit("memfit opt: --report explains a split: give --memory-limit "
                         "and no --pipeline")
    if args.report and args.target == "iree":
        raise SystemExit("memfit opt: --report compiles with XLA; leave out --target iree")
    if args.report:
        return _opt_with_report(args)
    pipeline = pipeline_for(args.pipeline, args.memory_limit, rewrite=not args.no_rewrite,
                            temp_margin=args.temp_margin, target=args.target)
    out = transform(read_text(args.file), pipeline, generic=not args.pretty)
    if args.target == "iree":
        from .consumers import check_for_iree
        check_for_iree(out)
    write_text(args.output, out)
    return 0


def _opt_with_report(args) -> int:
    """memfit opt --memory-limit L --report: the split module as usual, and
    what the split did on stderr (a table, or JSON with --report=json);
    exit 1 with the report (smallest reachable limit) when L cannot be met."""
    from .explain.split import explain_text
    from .transform import transform
    report, kept = explain_text(read_text(args.file), args.memory_limit,
                                rewrite=not args.no_rewrite, temp_margin=args.temp_margin,
                                xla=_xla_requested(args))
    print(report.to_json() if args.report == "json" else report.table(), file=sys.stderr)
    if kept is None:
        return 1
    if args.pretty:
        kept = transform(kept, "", generic=False, record_pipeline=False)
    write_text(args.output, kept)
    return 0


def _xla_requested(args) -> bool:
    """--xla: XLA's bytes count every buffer on CPU only without ynn fusions
    (DESIGN.md); the flag must be set before jax's backend starts."""
    if args.xla:
        from .measure import NO_YNN
        flags = os.environ.get("XLA_FLAGS", "")
        if "ynn_fusion_type" not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} {NO_YNN}".strip()
    return args.xla


def cmd_explain(args) -> int:
    """memfit explain: the split's report, and its memory timeline as PNG."""
    from .explain.split import explain_text
    report, kept = explain_text(read_text(args.file), args.memory_limit,
                                rewrite=not args.no_rewrite, temp_margin=args.temp_margin,
                                xla=_xla_requested(args))
    print(report.to_json() if args.json else report.table())
    if args.output:
        report.plot(args.output)
        print(f"memfit explain: wrote {args.output}", file=sys.stderr)
    return 0 if kept is not None else 1


def cmd_profile(args) -> int:
    from .api import profile_text
    reports = profile_text(read_text(args.file), top=args.top)
    if args.json:
        from dataclasses import asdict
        write_text(args.output, json.dumps([asdict(r) for r in reports], indent=2) + "\n")
    else:
        write_text(args.output, "\n\n".join(r.table() for r in reports) + "\n")
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memfit",
        description="Make StableHLO programs fit a memory budget.")
    from . import __version__
    p.add_argument("--version", action="version", version=f"memfit {__version__}")
    p.add_argument("--plugin-path", action="store_true",
                   help="print the path of the mlir-opt pass plugin and exit")
    sub = p.add_subparsers(dest="command")

    o = sub.add_parser("opt", help="run memfit passes over StableHLO text (generic or pretty)")
    o.add_argument("file", help="StableHLO module text, or - for stdin")
    o.add_argument("-p", "--pipeline", default="",
                   help='pass list, e.g. "memfit-inline,memfit-profile"')
    o.add_argument("--memory-limit", default=None,
                   help="split the program to fit this many bytes (e.g. 256MiB)")
    o.add_argument("--temp-margin", type=float, default=None,
                   help="with --memory-limit: budget loop temporaries this many times over "
                        "(default 2; memfit.jit calibrates it against XLA, this command cannot)")
    o.add_argument("--no-rewrite", action="store_true",
                   help="with --memory-limit: skip the algebraic rewrites (they change rounding)")
    o.add_argument("--pretty", action="store_true", help="print func/arith in pretty form")
    o.add_argument("--report", nargs="?", const="table", choices=("table", "json"),
                   help="with --memory-limit: say on stderr what the split did "
                        "(a table, or --report=json)")
    o.add_argument("--xla", action="store_true",
                   help="with --report: compile both programs with XLA for its bytes")
    o.add_argument("--target", choices=("xla", "iree"), default="xla",
                   help="the compiler that takes the output: with iree, no two-stage "
                        "top-k rewrite, and an error naming each op IREE cannot compile "
                        "(jax's LAPACK custom calls)")
    o.add_argument("-o", "--output", default=None)
    o.set_defaults(func=cmd_opt)

    e = sub.add_parser("explain", help="what memfit-split does to a file under a limit, "
                                       "with a before/after memory timeline (PNG)")
    e.add_argument("file", help="StableHLO module text, or - for stdin")
    e.add_argument("--memory-limit", required=True, help="e.g. 64MiB")
    e.add_argument("--temp-margin", type=float, default=None,
                   help="budget loop temporaries this many times over (default 2)")
    e.add_argument("--no-rewrite", action="store_true", help="skip the algebraic rewrites")
    e.add_argument("--json", action="store_true", help="the report as JSON instead of a table")
    e.add_argument("--xla", action="store_true",
                   help="compile both programs with XLA (jax's backend) for its bytes")
    e.add_argument("-o", "--output", default=None,
                   help="write the memory timeline here (PNG; needs memfit[plot])")
    e.set_defaults(func=cmd_explain)

    pr = sub.add_parser("profile", help="fusion-aware memory profile of a StableHLO module")
    pr.add_argument("file", help="StableHLO module text, or - for stdin")
    pr.add_argument("--json", action="store_true", help="JSON instead of a table")
    pr.add_argument("--top", type=int, default=5, help="largest tensors to list")
    pr.add_argument("-o", "--output", default=None)
    pr.set_defaults(func=cmd_profile)

    d = sub.add_parser("demo", help="split a kNN program under a memory limit")
    d.set_defaults(func=cmd_demo)

    # Subcommands that live with their feature: the packer and the
    # memory-space-assignment tools.
    from .msa import cli as msa_cli
    from .msa.io import export as msa_export
    from .pack import packer
    packer.add_subcommand(sub)
    msa_cli.add_subcommands(sub)
    msa_export.add_subcommands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.plugin_path:
        print(plugin_path())
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except MissingDependency as e:
        # An extra is not installed: the message says which; no traceback.
        print(f"memfit: error: {e}", file=sys.stderr)
        return 2
    except (MemfitError, ValueError) as e:
        print(f"memfit: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
