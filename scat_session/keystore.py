"""The player's secret key, the seal on a game in progress, and the ledger against take-backs.

A saved game in progress must not tell the person playing it anything they have not seen: the
game seed alone deals every hand and orders the stock. So a save in progress holds its seeds
*sealed* under a per-user key, and carries a MAC over its whole content; once the game is
over the save is rewritten in clear, for anyone to replay and verify (see
:mod:`scat_session.savegame`). Everything here uses the standard library only (``secrets``,
``hmac``, ``hashlib``): the seal is a keystream XOR, the keystream HMAC-SHA256 of the key
over a random per-game nonce and a block counter (a stream cipher built from a PRF), and
the MAC HMAC-SHA256 of the key over the canonical JSON.

Files, in :func:`scat_home` (``$SCAT_HOME``, default ``~/.scat``):

- ``key``: 32 random bytes in hex, created on first use with mode 0600 (only its owner may
  read it). Another account or machine has another key, so it can neither read nor resume
  a game started here.
- ``ledger.json``: per game id, how many decisions the latest save holds and a hash of
  them, written at every save. A resume whose save is behind the ledger (its decisions cut
  short, or an older copy restored over the newer) is refused: no take-backs. A finished
  game keeps only its id there (a copy of it from before its end does not resume either),
  and the ledger keeps the latest games up to a bound, so it stays small. It never stops a
  game: one that cannot be read is set aside with a warning (:func:`_set_aside`).

The limit, plainly: the machine's owner can read the key file and the process's memory, and
can delete the ledger. The seal keeps the cards off the screen, out of the file name and out
of a save shared with someone else; it is not a defence against the owner of the machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # POSIX: locks; elsewhere the atomic writes alone
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: Environment variable that moves the key and the ledger (tests point it at a tmp dir).
HOME_ENV = "SCAT_HOME"
KEY_FILE = "key"
LEDGER_FILE = "ledger.json"
KEY_BYTES = 32
#: Sealed plaintexts are padded to a multiple of this, so their length says nothing about
#: how many digits a seed has.
PAD = 64
#: The largest ledger read. Versions before the bounds below kept every game ever saved
#: (about 125 bytes each), so a ledger they grew may be this big; a larger one is set aside.
MAX_LEDGER_BYTES = 32 * 1024 * 1024
#: Games in progress the ledger keeps, the most recently saved: a game not saved while this
#: many others were loses its take-back check. With :data:`MAX_FINISHED` the ledger stays
#: under about 2 MiB.
MAX_IN_PROGRESS = 10_000
#: Finished games it keeps (by id alone: an older copy of one must not resume), the latest.
MAX_FINISHED = 50_000


class SealError(ValueError):
    """The key, the seal or the ledger refuses something: one line saying why."""

    def __init__(self, message: str) -> None:
        from scat_env.yamlfile import one_line

        super().__init__(one_line(message))


def scat_home() -> Path:
    """The folder of the key and the ledger: ``$SCAT_HOME`` or ``~/.scat``."""
    env = os.environ.get(HOME_ENV)
    return Path(env).expanduser() if env else Path.home() / ".scat"


# -- writing files whole ------------------------------------------------------------------
#: How :func:`atomic_write` names its temporary file beside ``NAME``: ``.NAME.<8 random>.tmp``
#: (:func:`tempfile.mkstemp`'s random part), so :func:`sweep_temp_files` can tell ours apart.
_TEMP_NAME = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")
#: A temporary file younger than this is never swept, locked or not: it covers the instant
#: between a writer creating its file and locking it.
TEMP_GRACE_S = 30.0


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new temporary file beside ``path``, locked (``flock``) for as long as its writer
    has it open, so :func:`sweep_temp_files` never removes one being written."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    if fcntl is None:  # not POSIX: the grace period alone protects it
        return fd, tmp
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd, tmp


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` whole or not at all: a unique temp file beside it, flushed
    to disk, then renamed over it. On any error the temp file is removed and the old file
    is left as it was; the ``OSError`` is raised for the caller to put in one line.

    A path that exists and is neither a file nor a folder (``/dev/null``, a pipe) is written
    into instead: a rename would put a file where the device was (as root, for every
    program on the machine)."""
    if _is_special(path):
        with open(path, "wb") as f:
            f.write(data)
        return
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)  # renamed while still locked: never swept half-way
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _is_special(path: Path) -> bool:
    """Whether ``path`` exists as something other than a regular file or a folder."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def sweep_temp_files(folder: Path, names: Iterable[str] | None = None) -> list[Path]:
    """Remove the temporary files of :func:`atomic_write` that a killed process left in
    ``folder``: only those named as it names them, for one of ``names`` (any ``*.json``
    when ``None``), at least :data:`TEMP_GRACE_S` old, and not locked by a live writer.
    Returns what was removed; a file that cannot be looked at is left alone."""
    wanted = set(names) if names is not None else None
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        found = _TEMP_NAME.fullmatch(entry.name)
        if found is None or not entry.is_file(follow_symlinks=False):
            continue
        name = found.group("name")
        ours = name in wanted if wanted is not None else name.endswith(".json")
        if not ours:
            continue
        if _remove_if_abandoned(Path(entry.path)):
            removed.append(Path(entry.path))
    return removed


def _remove_if_abandoned(path: Path) -> bool:
    """Remove ``path`` if it is old enough and no process holds its lock."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if time.time() - os.fstat(fd).st_mtime < TEMP_GRACE_S:
            return False
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a live writer has it
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def os_error_text(exc: OSError) -> str:
    """An ``OSError`` as a few words ("No space left on device"), without the traceback."""
    return exc.strerror or type(exc).__name__


# -- the key ------------------------------------------------------------------------------
def key_path() -> Path:
    return scat_home() / KEY_FILE


def load_key(create: bool = True) -> bytes | None:
    """The user's key; created (mode 0600, never overwritten) on first use when ``create``.
    ``None`` when there is none and ``create`` is false. A damaged key file is refused in one
    line rather than replaced: replacing it would strand every game in progress."""
    path = key_path()
    try:
        text = path.read_text(encoding="ascii").strip()
        if path.stat().st_mode & 0o077:  # readable by others: it would unseal for them too
            path.chmod(0o600)
    except FileNotFoundError:
        if not create:
            return None
        return _create_key(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise SealError(f"cannot read the key file {path}: {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise SealError(f"the key file {path} is damaged (it should hold {KEY_BYTES * 2} hex "
                        "digits); games in progress sealed under it cannot be resumed")
    return key


def _create_key(path: Path) -> bytes:
    """Create the key file whole or not at all. The key is written to a temp file first and
    then hard-linked into place: the link fails if another scat made the key first (its key
    wins), and no reader can ever see a key file that exists but is still empty, which an
    ``O_EXCL`` create followed by a write would show to a second game started at once."""
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = _temp_beside(path)
    except OSError as exc:
        raise SealError(f"cannot create the key file {path}: {os_error_text(exc)}") from None
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(key.hex() + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.link(tmp, path)
    except FileExistsError:  # another scat made it first: use that one
        return load_key(create=False)  # type: ignore[return-value]
    except OSError as exc:
        raise SealError(f"cannot write the key file {path}: {os_error_text(exc)}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return key


def key_id(key: bytes) -> str:
    """A short public name of ``key``, so a save can say "sealed under another key" rather
    than "tampered with"; it is an HMAC output and tells nothing about the key."""
    return hmac.new(key, b"scat key id", hashlib.sha256).hexdigest()[:16]


# -- sealing and signing ------------------------------------------------------------------
def _keystream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = []
    for counter in range((length + 31) // 32):
        blocks.append(hmac.new(key, b"scat seal\0" + nonce + counter.to_bytes(4, "big"),
                               hashlib.sha256).digest())
    return b"".join(blocks)[:length]


def new_nonce() -> str:
    """A fresh per-game nonce (hex): no two games share a keystream."""
    return secrets.token_hex(16)


def seal(key: bytes, nonce: str, value: Any) -> str:
    """``value`` (plain JSON) sealed under ``key`` and ``nonce``, as hex."""
    plain = json.dumps(value, separators=(",", ":")).encode()
    plain += b" " * (-len(plain) % PAD)
    stream = _keystream(key, bytes.fromhex(nonce), len(plain))
    return bytes(a ^ b for a, b in zip(plain, stream, strict=True)).hex()


def unseal(key: bytes, nonce: str, sealed: str) -> Any:
    """Inverse of :func:`seal`; ``ValueError`` if it does not open to JSON."""
    data = bytes.fromhex(sealed)
    stream = _keystream(key, bytes.fromhex(nonce), len(data))
    return json.loads(bytes(a ^ b for a, b in zip(data, stream, strict=True)).decode())


def canonical(data: Any) -> bytes:
    """The one byte form of a JSON document that its MAC is computed over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def mac(key: bytes, data: Any) -> str:
    return hmac.new(key, b"scat save\0" + canonical(data), hashlib.sha256).hexdigest()


def mac_ok(key: bytes, data: Any, tag: object) -> bool:
    return isinstance(tag, str) and hmac.compare_digest(mac(key, data), tag)


# -- the ledger ---------------------------------------------------------------------------
def actions_hash(actions: list[Any]) -> str:
    """A hash of a decision list (its JSON form), to tell a continuation from a fork."""
    return hashlib.sha256(canonical(actions)).hexdigest()


def ledger_path() -> Path:
    return scat_home() / LEDGER_FILE


@contextlib.contextmanager
def _ledger_lock() -> Iterator[None]:
    """Two ``scat play`` at once must not lose each other's ledger entries."""
    if fcntl is None:  # not on POSIX: the atomic write alone
        yield
        return
    home = scat_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(home / ".ledger.lock", "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


@dataclass
class _Ledger:
    """The ledger's content: the games in progress by id (the least recently saved first)
    and the ids of the games that finished (the least recently finished first)."""

    games: dict[str, dict[str, Any]] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)

    def prune(self) -> None:
        """Keep the ledger bounded: each finished id once, the latest
        :data:`MAX_FINISHED` of them, and the latest :data:`MAX_IN_PROGRESS` games in
        progress. Why: it is read and rewritten whole at every save."""
        latest = list(dict.fromkeys(reversed(self.finished)))[:MAX_FINISHED]
        self.finished = latest[::-1]
        for game_id in list(self.games)[:max(0, len(self.games) - MAX_IN_PROGRESS)]:
            del self.games[game_id]

    def to_bytes(self) -> bytes:
        return json.dumps({"games": self.games, "finished": self.finished},
                          indent=0).encode()


def _read_ledger() -> _Ledger:
    """The ledger, pruned; called under :func:`_ledger_lock`. One that is too big to be
    read, unreadable or damaged is set aside (:func:`_set_aside`) and play goes on."""
    path = ledger_path()
    try:
        if path.stat().st_size > MAX_LEDGER_BYTES:
            return _set_aside(path, f"it is larger than {MAX_LEDGER_BYTES // 2**20} MiB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _Ledger()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return _set_aside(path, f"it cannot be read ({type(exc).__name__})")
    games = data.get("games") if isinstance(data, dict) else None
    finished = data.get("finished", []) if isinstance(data, dict) else None
    if not isinstance(games, dict) or not isinstance(finished, list):
        return _set_aside(path, "it is damaged")
    ledger = _Ledger(finished=[f for f in finished if isinstance(f, str)])
    for game_id, entry in games.items():
        if not isinstance(entry, dict):
            continue
        if entry.get("finished"):  # how versions before the finished list noted one
            ledger.finished.append(game_id)
        else:
            ledger.games[game_id] = entry
    ledger.prune()
    return ledger


def _set_aside(path: Path, why: str) -> _Ledger:
    """Move a ledger that cannot be used out of the way (``ledger.json.damaged``, kept for
    a look) and go on with an empty one, saying so once: a ledger must never stop play.
    What this gives up is the take-back check of games saved before now, which deleting
    the ledger gives up too (the machine's owner can always do that)."""
    aside = path.with_name(path.name + ".damaged")
    try:
        os.replace(path, aside)
        where = f"moved to {aside}"
    except OSError as exc:
        where = f"it could not be moved ({os_error_text(exc)})"
    _warn_once(f"the ledger {path} was set aside: {why}; {where}. A new ledger is started: "
               "games saved before now are not checked against take-backs")
    return _Ledger()


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    """One line on stderr, once per process: a warning, not a refusal."""
    from scat_env.yamlfile import one_line

    if message not in _WARNED:
        _WARNED.add(message)
        print(f"scat: warning: {one_line(message)}", file=sys.stderr, flush=True)


def ledger_entry(game_id: str) -> dict[str, Any] | None:
    """What the ledger holds for ``game_id`` (``None``: never saved here);
    ``{"finished": True}`` for a game that finished."""
    with _ledger_lock():
        ledger = _read_ledger()
    if game_id in ledger.finished:
        return {"finished": True}
    entry = ledger.games.get(game_id)
    return entry if isinstance(entry, dict) else None


def ledger_record(game_id: str, actions: list[Any], finished: bool) -> None:
    """Note that the latest save of ``game_id`` holds ``actions`` (called after the save
    itself is on disk: a crash between the two leaves the save ahead of the ledger, which a
    resume accepts, never behind it). A finished game leaves the games in progress for the
    list of finished ids: a copy of it from before its end must still not resume."""
    with _ledger_lock():
        ledger = _read_ledger()
        ledger.games.pop(game_id, None)
        if finished:
            ledger.finished.append(game_id)
        elif game_id not in ledger.finished:
            ledger.games[game_id] = {"actions": len(actions), "sha256": actions_hash(actions)}
        ledger.prune()
        atomic_write(ledger_path(), ledger.to_bytes(), mode=0o600)


def ledger_check(game_id: str, actions: list[Any], source: str) -> None:
    """Refuse to resume a save that is behind the game's latest save (``SealError``)."""
    entry = ledger_entry(game_id)
    if entry is None:
        return
    saved = entry.get("actions")
    if entry.get("finished"):
        raise SealError(f"{source}: this game is already over (its last save was finished); "
                        "take-backs are not allowed")
    if not isinstance(saved, int):
        return
    if len(actions) < saved:
        raise SealError(f"{source}: this save is older than the game's last move "
                        f"({len(actions)} decisions saved, the game had reached {saved}); "
                        "take-backs are not allowed")
    if actions_hash(actions[:saved]) != entry.get("sha256"):
        raise SealError(f"{source}: this save does not continue the game's last saved "
                        "position; take-backs are not allowed")
