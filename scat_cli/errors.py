"""The one exception type of the ``scat`` command line.

It lives in its own module, below every subcommand, so :mod:`scat_cli.main` can import the
subcommands and the subcommands can raise it without importing ``main`` back.
"""


class CliError(Exception):
    """A user error (bad option, unknown agent, a file that is not a game): :func:`main`
    prints it as one line on stderr and exits with status 2, never a traceback."""


def write_error(exc: OSError) -> CliError:
    """An operating-system error while a command writes its output (a read-only folder, a
    full disk) as the one line :func:`main` prints: the file, and what the system said."""
    where = f" {exc.filename!s:.200}" if exc.filename else ""
    return CliError(f"cannot write{where}: {exc.strerror or exc}")
