"""One process per game: a game is held by the terminal or by one server, never by two.

A game in progress is a save on disk plus a ledger entry (:mod:`scat_session.keystore`). Two
processes playing it at once (``scat play --resume`` of a game a browser has open, or two
``scat serve`` on one data folder) would each write their own continuation over the other's:
a fork, with no refusal. So a process that opens a game first takes an exclusive ``flock``
on a lock file named after the game's id and keeps it for as long as it has the game open;
a second one is refused in one line that says where the game is being played, read from the
holder's description written inside the lock file ("the terminal (pid 4242)", "scat serve on
127.0.0.1:8731 (pid 4243)").

Why by game id and not by save file: a copy of the save, or ``--save`` naming another file,
is still the same game with the same ledger entry. The lock files live in
``$SCAT_HOME/locks`` (beside the key and the ledger that define what a game is), so they are
never in a folder of saves, never listed or loaded as games.

The operating system drops a ``flock`` when its process ends, however it ends: a lock file
left by a killed process blocks nothing, and :func:`sweep_stale` removes such files at the
next start. A holder removes its lock file as it lets go; a process that locked a file just
as its holder removed it notices (the path no longer names the file it locked) and tries
again, so two holders can never each hold a different file of the same name.

``fcntl`` is POSIX: where it is missing (Windows), taking a lock fails in one line rather
than playing unguarded.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: The folder of the game locks, in :func:`scat_session.keystore.scat_home`.
LOCKS_DIR = "locks"
LOCK_SUFFIX = ".lock"
#: The most bytes of a holder's description read back (it is one short line).
MAX_HOLDER = 200
#: Tries when the lock file is replaced under us by its holder letting go.
_TRIES = 20
_SAFE_NAME = re.compile(r"[0-9A-Za-z_-]{1,64}")


class LockError(ValueError):
    """A lock that cannot be taken: one line saying why."""


class Busy(LockError):
    """Another process holds the lock; ``holder`` says which ("the terminal (pid 12)")."""

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder


def terminal_holder() -> str:
    """How ``scat play`` names itself to a process it refuses."""
    return f"the terminal (pid {os.getpid()})"


def locks_dir() -> Path:
    from .keystore import scat_home

    return scat_home() / LOCKS_DIR


def game_lock_path(game_id: str) -> Path:
    """The lock file of ``game_id`` (an id a save accepts: hex digits, ``v2-`` and hex)."""
    if not _SAFE_NAME.fullmatch(game_id):
        raise LockError(f"bad game id {game_id[:40]!r}")
    return locks_dir() / f"{game_id}{LOCK_SUFFIX}"


class HeldLock:
    """An exclusive ``flock`` on ``path``, taken at construction and kept until
    :meth:`release` (or the process ends). Raises :class:`Busy` when another process holds
    it, :class:`LockError` when it cannot be taken at all."""

    def __init__(self, path: Path, holder: str, what: str) -> None:
        self.path = path
        self.holder = holder
        self._fd: int | None = _acquire(path, holder, what)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let go: remove the lock file (while still holding it, so nobody can lock the
        file we remove and believe it current) and close it. Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            with contextlib.suppress(OSError):
                if _names_file(self.path, fd):
                    os.unlink(self.path)
        finally:
            os.close(fd)

    def __del__(self) -> None:  # a holder dropped without release() lets go too
        with contextlib.suppress(Exception):
            self.release()

    def __enter__(self) -> HeldLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold_game(game_id: str, holder: str) -> HeldLock:
    """Hold the game ``game_id`` for this process; :class:`Busy` names where it is played."""
    from .keystore import scat_home

    path = game_lock_path(game_id)
    with contextlib.suppress(OSError):  # the key's folder is its owner's alone, as keystore makes it
        scat_home().mkdir(parents=True, exist_ok=True, mode=0o700)
    return HeldLock(path, holder, f"game {game_id}")


def hold_folder(folder: Path, holder: str, what: str) -> HeldLock:
    """Hold ``folder`` (which must exist) for this process: its lock file is
    ``FOLDER/.lock`` (the name the training runs use for theirs)."""
    return HeldLock(folder / LOCK_SUFFIX, holder, what)


def _names_file(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        st, fst = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)


def _acquire(path: Path, holder: str, what: str) -> int:
    if fcntl is None:
        raise LockError(f"cannot lock {what}: this system has no fcntl (scat needs a POSIX "
                        "system such as Linux or macOS to keep one process per game)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LockError(f"cannot lock {what}: {path.parent}: {exc.strerror or exc}") from None
    for _ in range(_TRIES):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise LockError(f"cannot lock {what}: {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            found = _read_holder(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise LockError(f"cannot lock {what}: {path}: {exc.strerror or exc}") from None
            raise Busy(f"{what} is in use by {found}", found) from None
        if _names_file(path, fd):  # not a file its last holder removed as we opened it
            _write_holder(fd, holder)
            return fd
        os.close(fd)
    raise LockError(f"cannot lock {what}: {path} keeps being replaced")


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, MAX_HOLDER, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    line = text.splitlines()[0] if text else ""
    return line if line and line.isprintable() else "another process"


def _write_holder(fd: int, holder: str) -> None:
    with contextlib.suppress(OSError):  # the description is a courtesy; the lock holds anyway
        os.ftruncate(fd, 0)
        os.pwrite(fd, (holder + "\n").encode("utf-8"), 0)


def sweep_stale() -> list[Path]:
    """Remove the game lock files no process holds (left by a process that was killed);
    returns them. Each is locked before it is removed, so a held one is never touched."""
    removed: list[Path] = []
    folder = locks_dir()
    if fcntl is None or not folder.is_dir():
        return removed
    for path in folder.glob(f"*{LOCK_SUFFIX}"):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _names_file(path, fd):
                os.unlink(path)
                removed.append(path)
        except OSError:
            pass  # held: a game being played
        finally:
            os.close(fd)
    return removed


__all__ = ["Busy", "HeldLock", "LockError", "game_lock_path", "hold_folder", "hold_game",
           "locks_dir", "sweep_stale", "terminal_holder"]
