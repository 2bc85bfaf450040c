"""``scat``: the command line of scat-env.

Each subcommand lives in its own module of this package and exposes
``add_parser(subparsers)``, which registers an ``argparse`` parser whose ``func`` default
runs it. Other installed packages add subcommands the same way, through an ``add_parser``
named by an entry point of the ``scat.commands`` group (the browser game brings ``scat
serve``): the command line finds them without importing them by name. Those modules
import only the standard library at module level (the game, the agents, rich, numpy and
torch are imported by the function that runs), so ``scat --help`` and the start of ``scat
play`` pay only for what they use.

Bad input (an unknown agent spec, a missing file, too many players) must end in one clear
line on stderr and exit status 2, never a traceback: subcommands raise
:class:`~scat_cli.errors.CliError` (or ``ValueError`` from the library) and :func:`main`
reports it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import bench, exploit, play, replay, rules, tournament, train, watch
from .errors import CliError

#: Subcommand modules, in the order ``scat --help`` lists them (before those of other
#: packages: :data:`COMMANDS_GROUP`).
SUBCOMMANDS = (play, replay, watch, tournament, train, exploit, bench, rules)
#: The entry-point group of the subcommands other packages add, each an ``add_parser``.
COMMANDS_GROUP = "scat.commands"


class _Parser(argparse.ArgumentParser):
    """One-line errors, and an epilog that may be computed only when help is shown.

    ``epilog_fn`` exists for ``scat play --help``, whose epilog lists every agent kind:
    building that list imports every agent module, which ``scat play`` itself need not pay
    for when no help is asked.
    """

    def __init__(self, *args: Any, epilog_fn: Callable[[], str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.epilog_fn = epilog_fn

    def format_help(self) -> str:
        if self.epilog_fn is not None:
            self.epilog = self.epilog_fn()
        return super().format_help()

    def error(self, message: str) -> None:  # one line, exit 2, as argparse does, no usage dump
        self.exit(2, f"{self.prog}: error: {message}\n")


class _SubcommandParser(_Parser):
    """A subcommand's parser: words it does not know are its own error ("scat play: error:
    unrecognized arguments: --bogus"). Left to argparse, they travel up to the top parser,
    whose error names only "scat" and leaves the user to guess which part was wrong."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        for action in self._actions:
            # argparse (Python 3.11.7) reads "--players=--" as an empty list, past its type
            # check: the command would then meet a list where it expects one value
            if (isinstance(action, argparse._StoreAction) and action.nargs is None
                    and isinstance(getattr(parsed, action.dest, None), list)
                    and not isinstance(action.default, list)):
                self.error(f"argument {'/'.join(action.option_strings) or action.dest}: "
                           "expected one argument")
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="scat",
        description="Scat (31, Blitz, Ride the Bus): play, watch, benchmark and train agents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                               parser_class=_SubcommandParser)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    for add_parser in added_commands():
        add_parser(sub)
    return parser


def added_commands() -> list[Callable[[argparse._SubParsersAction], None]]:
    """The ``add_parser`` of every installed :data:`COMMANDS_GROUP` entry point, by name (a
    stable order whatever the install order), each name once and none that ``scat`` has
    itself. One that cannot be loaded is left out: a broken add-on must not take ``scat
    play`` down with it."""
    from importlib.metadata import entry_points

    own = {module.__name__.rpartition(".")[2] for module in SUBCOMMANDS}
    found: dict[str, Callable[[argparse._SubParsersAction], None]] = {}
    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda ep: ep.name):
        if ep.name in own or ep.name in found:
            continue
        try:
            found[ep.name] = ep.load()
        except Exception:  # an add-on that fails to load is left out
            continue
    return list(found.values())


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
    except BrokenPipeError:  # the reader left (``scat rules | head``): stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a full disk, a read-only folder...: one line, never a traceback
        where = f" {str(exc.filename)[:120]}" if exc.filename else ""  # a path may be long
        print(f"scat {args.command}: error: cannot use{where}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return int(result or 0)


__all__ = ["CliError", "build_parser", "main"]
