"""One run per output folder: an exclusive lock held for as long as a run writes there.

Two tournaments (or two trainings) started on the same ``--out`` would both report success
and leave the folder holding one run's config beside the other's results. A run therefore
takes an advisory ``flock`` on ``FOLDER/.lock`` before it looks at what the folder holds
(so ``--overwrite`` cannot delete a running run's files) and keeps it to the end; the
operating system drops the lock when the process ends, however it ends, so a killed run
never leaves a stale lock behind. The lock is re-entrant within one process: the command
line locks around its own checks, and the library function it calls locks again freely.

Where ``fcntl`` does not exist (Windows), runs are not locked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"

_HELD: dict[Path, int] = {}  # folders this process holds, and how deeply


@contextmanager
def exclusive_folder(folder: str | Path, what: str = "run") -> Iterator[Path]:
    """Hold ``folder`` (created if missing) for one ``what`` (e.g. "tournament"); raise
    ``ValueError`` in one line when another process holds it."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    key = path.resolve()
    if key in _HELD or fcntl is None:
        _HELD[key] = _HELD.get(key, 0) + 1
        try:
            yield path
        finally:
            _HELD[key] -= 1
            if not _HELD[key]:
                del _HELD[key]
        return
    handle = open(key / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held to the end
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise ValueError(f"{path} is in use by another {what} (process {holder}); wait for "
                         "it to finish or choose another --out") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    _HELD[key] = 1
    try:
        yield path
    finally:
        del _HELD[key]
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
