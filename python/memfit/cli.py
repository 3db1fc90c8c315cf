"""The ``memfit`` command line: opt, profile, demo, pack, --plugin-path.

It parses arguments and calls library functions; the subcommands of a
feature (pack, msa) are added by that feature's module."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
    pipeline = pipeline_for(args.pipeline, args.memory_limit, rewrite=not args.no_rewrite,
                            temp_margin=args.temp_margin)
    out = transform(read_text(args.file), pipeline, generic=not args.pretty)
    write_text(args.output, out)
    return 0


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
    o.add_argument("-o", "--output", default=None)
    o.set_defaults(func=cmd_opt)

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
    from . import pack
    from .msa import cli as msa_cli, export as msa_export
    pack.add_subcommand(sub)
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
    except (MemfitError, ValueError) as e:
        print(f"memfit: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
