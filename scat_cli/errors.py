"""The one exception type of the ``scat`` command line.

It lives in its own module, below every subcommand, so :mod:`scat_cli.main` can import the
subcommands and the subcommands can raise it without importing ``main`` back.
"""


class CliError(Exception):
    """A user error (bad option, unknown agent, a file that is not a game): :func:`main`
    prints it as one line on stderr and exits with status 2, never a traceback."""
