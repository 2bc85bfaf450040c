"""``scat``: the command line of scat-env.

Each subcommand lives in its own module of this package and exposes
``add_parser(subparsers)``, which registers an ``argparse`` parser whose ``func`` default
runs it. Bad input (an unknown agent spec, a missing file, too many players) must end in one
clear line on stderr and exit status 2, never a traceback: subcommands raise
:class:`CliError` (or ``ValueError`` from the library) and :func:`main` reports it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Subcommand modules, in the order ``scat --help`` lists them. A module missing from a
#: checkout is skipped so the CLI works while features are being added.
SUBCOMMANDS = ("play", "replay", "watch", "tournament", "train", "bench")


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as argparse does, no usage dump
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="scat",
        description="Scat (31, Blitz, Ride the Bus): play, watch, benchmark and train agents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"scat_cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"scat_cli.{name}":
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        result = args.func(args)
    except (CliError, ValueError, FileNotFoundError) as exc:
        print(f"scat {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return int(result or 0)
