"""``scat serve``: play Scat in the browser; the server holds the games.

The page and its API are :mod:`scat_web` (``docs/WEB_API.md``); this module reads the
command line, opens the listening socket itself (so a port in use or a bad address is one
line, exit 2, before anything starts) and runs uvicorn on it. ``scat`` finds it through the
``scat.commands`` entry point this package declares (pyproject.toml), so the command line
never imports the browser game, and an install without the ``web`` extra still lists the
command and says in one line what to install. It imports only the standard library at
module level, so ``scat --help`` does not load Starlette.

Every launch makes a new access token (:func:`secrets.token_urlsafe`) and prints the page's
address with it, as Jupyter does: only someone who has that address (or the token) can list
or play the games; another user or process of the machine cannot.

Examples::

    scat serve                         # http://127.0.0.1:8731/?token=..., games in ~/.scat/web
    scat serve --port 9000 --open      # and open the page in the default browser
    scat serve --host 0.0.0.0          # the network may connect (a warning says so); the
                                       # Host names served are still checked
    scat serve --host 0.0.0.0 --allow-host scat.lan   # and one more name
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import secrets
import socket
import sys
from pathlib import Path


class ServeError(ValueError):
    """A bad ``scat serve`` option or a server that cannot start: ``scat`` prints it as one
    line on stderr and exits with status 2 (as for every ``ValueError`` of a command)."""


#: The libraries of the ``web`` extra (and the one Starlette brings): a missing one means
#: the extra is not installed. Any other import error is a fault, reported as one.
WEB_LIBRARIES = ("starlette", "uvicorn", "anyio")
WEB_EXTRA = "the browser game needs the web extra: pip install 'scat-env[web]'"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8731
#: Host names a loopback server answers to (the same as :data:`scat_web.app.LOOPBACK_HOSTS`,
#: copied so that ``scat --help`` does not import Starlette).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
#: A name ``--allow-host`` takes: a DNS name or an IP address, no port, no wildcard.
_HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]")


def data_dir(given: str | None) -> Path:
    """``--data``, else ``web`` in ``$SCAT_HOME`` (``~/.scat``)."""
    if given:
        return Path(given).expanduser()
    home = os.environ.get("SCAT_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".scat") / "web"


def check_host(host: str) -> bool:
    """Whether ``host`` is a loopback address; :class:`ServeError` unless it is an IP address
    or ``localhost`` (a name would need a lookup, and nothing here may use the network)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise ServeError(f"--host must be an IP address such as 127.0.0.1 or 0.0.0.0, or "
                         f"localhost; got {host[:60]!r}") from None


def check_allowed(names: list[str]) -> list[str]:
    """``--allow-host`` names, each a DNS name or an address (IPv6 in brackets)."""
    for name in names:
        if not _HOST_NAME.fullmatch(name):
            raise ServeError(f"--allow-host takes a host name or an IP address without a "
                             f"port, got {name[:60]!r}")
    return names


def machine_names(host: str) -> list[str]:
    """The names a browser may use for this machine when the server listens on ``host``
    (not a loopback address): the loopback names, ``host`` itself unless it is a wildcard,
    the machine's host name (and ``NAME.local``) and the address the machine reaches the
    network from. Read without a DNS lookup: a UDP socket that is connected sends nothing."""
    names = list(LOOPBACK_HOSTS)
    wildcard = host in ("0.0.0.0", "::")
    if not wildcard:
        names.append(f"[{host}]" if ":" in host else host)
    hostname = socket.gethostname()
    if hostname:
        names += [hostname, f"{hostname}.local"]
    if wildcard:
        family, probe = ((socket.AF_INET6, "2001:db8::1") if host == "::"
                         else (socket.AF_INET, "192.0.2.1"))  # documentation addresses
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                own = sock.getsockname()[0]
            names.append(f"[{own}]" if ":" in own else own)
        except OSError:  # no route to any network: the loopback names are enough
            pass
    return list(dict.fromkeys(names))


def open_socket(host: str, port: int) -> socket.socket:
    """The listening socket, or one line saying why not (a port in use, no permission)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    bind_host = "127.0.0.1" if host == "localhost" else host
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle's algorithm off only on sockets
    # that say they are TCP, and with it on every answer waits 40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind_host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="play Scat in the browser (a local web server)",
        description=(
            "Serve Scat to a web browser: open the printed address and play against agents. "
            "The server holds every game and sends the page only what your seat may know; "
            "games are saved as scat play saves and survive a restart."
        ),
    )
    p.add_argument("--host", default=DEFAULT_HOST,
                   help="address to listen on (default 127.0.0.1: this machine only; "
                        "0.0.0.0 lets anyone on the network play)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="one more Host name to answer to (repeatable); with --host 0.0.0.0 the "
                        "machine's own names and address are answered to already")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="folder of the saved games (default $SCAT_HOME/web, ~/.scat/web)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise ServeError(f"--port must be between 0 and 65535, got {str(args.port)[:30]}")
    loopback = check_host(args.host)
    extra = check_allowed(list(args.allow_host))
    folder = data_dir(args.data)
    if folder.exists() and not folder.is_dir():
        raise ServeError(f"--data {folder} is a file; give a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ServeError(f"cannot use --data {folder}: {exc.strerror or exc}") from None
    try:
        import uvicorn

        from .app import create_app
        from .games import GameStore
    except ImportError as exc:  # an install without the web extra
        if (exc.name or "").partition(".")[0] not in WEB_LIBRARIES:
            raise
        raise ServeError(WEB_EXTRA) from None

    from scat_session.gamelock import LockError

    sock = open_socket(args.host, args.port)
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    token = secrets.token_urlsafe(32)
    url = f"http://{shown}:{port}/?token={token}"
    hosts = list(dict.fromkeys([*(LOOPBACK_HOSTS if loopback else machine_names(args.host)),
                                *extra]))
    try:  # holds the folder: a second server on it is refused here, before it serves
        store = GameStore(folder, holder=f"scat serve on {shown}:{port} (pid {os.getpid()})")
    except LockError as exc:
        sock.close()
        raise ServeError(str(exc)) from None
    app = create_app(folder, store=store, token=token, allowed_hosts=hosts)
    if not loopback:
        names = ", ".join(h for h in hosts if h != "::1")
        print(f"warning: listening on {args.host}, not this machine only: anyone on the "
              "network who can reach it and has the address below (its token) can open the "
              f"page, play, and see the games saved here; Host names answered: {names} "
              "(--allow-host NAME for another)", file=sys.stderr)
    print(f"Scat is served at {url} (Ctrl-C to stop); games are saved in {folder}",
          flush=True)
    if args.open:
        import webbrowser

        webbrowser.open(url if loopback else f"http://127.0.0.1:{port}/?token={token}")
    # log_config=None: uvicorn's own logging set-up (dictConfig) would close every logging
    # handler the process already has, other libraries' included; its warnings still reach
    # stderr through logging's last-resort handler.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            log_config=None)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        store.close()
    return 0


__all__ = ["ServeError", "add_parser", "run"]
