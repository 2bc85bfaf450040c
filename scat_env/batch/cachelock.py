"""One process at a time reads or writes a compiled kernel's entry in numba's disk cache.

numba keeps each compiled signature of a ``cache=True`` function as an index file (signature
-> data file name) beside numbered data files, and saves a new entry by reading the index,
taking the first free number, then writing the index and the data. Two processes that
compile two signatures of one function at once both take number 1, and the index left
behind can name the other's machine code: the next process to load it runs code compiled
for other argument types and takes the interpreter down (numba/numba#4807). That happens
whenever the cache is cold and several processes start together: the test suite's workers,
a tournament's pool, Ray workers, a ``scat train`` beside any of them.

:func:`lock_caches` wraps the cache of every cached dispatcher of a module so that each load
and each save holds an advisory lock on a file in the cache's own folder: a save's
read-modify-write of the index is then whole, and no load reads an index without its data.
Compilation itself stays outside the lock (two processes may still compile the same kernel;
only the disk is serialised). Without ``fcntl`` (Windows) the cache is left as numba has it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: The lock file, one per cache folder.
LOCK_NAME = "scat-kernels.lock"


class LockedCache:
    """A numba function cache whose loads and saves hold the folder's lock; every other
    attribute is the wrapped cache's."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        with self._locked():
            return self._cache.load_overload(sig, target_context)

    def save_overload(self, sig: Any, data: Any) -> None:
        with self._locked():
            self._cache.save_overload(sig, data)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The folder's lock, held until the block ends; no lock (numba's own behaviour)
        where the folder cannot hold one, so a read-only install still plays."""
        fd = None
        try:
            folder = self._cache.cache_path
            os.makedirs(folder, exist_ok=True)
            fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing the descriptor lets the lock go


def lock_caches(namespace: Mapping[str, Any]) -> int:
    """Wrap the disk cache of every ``cache=True`` dispatcher in ``namespace`` (a module's
    ``globals()``) in a :class:`LockedCache`; returns how many. Call it once, after the
    module's last definition."""
    if fcntl is None:  # pragma: no cover - not POSIX
        return 0
    from numba.core.caching import Cache
    from numba.core.dispatcher import Dispatcher

    count = 0
    for obj in namespace.values():
        if isinstance(obj, Dispatcher) and isinstance(getattr(obj, "_cache", None), Cache):
            obj._cache = LockedCache(obj._cache)
            count += 1
    return count
