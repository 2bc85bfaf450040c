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

It also makes each compile single-flight across processes: a process that is about to compile
a signature first takes a lock of that signature's own (a ``*.compiling`` file beside the
index), and loads from the disk once it holds it. A second process that needs the same kernel
then waits for the first one's save and loads it, instead of spending the same minute of a
core on it: the workers of ``scripts/preset_table.py --workers 2`` or of the test suite, on a
fresh install, compile each kernel once between them (``scripts/bench_compile.py``). Each lock is held for one signature's
compile, and a kernel's compile only waits on the kernels it calls, which never call it back,
so two processes cannot wait on each other; a wait longer than :data:`COMPILE_WAIT_S` (a
process stopped under a debugger, say) gives up and compiles anyway. Without ``fcntl``
(Windows) the cache is left as numba has it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: The lock file, one per cache folder.
LOCK_NAME = "scat-kernels.lock"
#: How long a process waits for another one's compile of the same signature before it
#: compiles the signature itself. The slowest kernel compiles in under a minute on one core;
#: this leaves room for a machine loaded several times over.
COMPILE_WAIT_S = 600.0
#: How often a waiting process looks at the lock again.
_POLL_S = 0.05


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


def compile_lock_name(dispatcher: Any) -> str:
    """numba's index file name for ``dispatcher`` ("module.function-line.pyXY.nbi") without
    its suffix, or its module and name where the cache has none."""
    index = getattr(getattr(dispatcher._cache, "_cache_file", None), "_index_name", None)
    if isinstance(index, str):
        return index.rsplit(".", 2)[0]
    return f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"


def compile_lock_path(cache: Any, name: str, args: Any) -> str:
    """The lock file of one signature of one function: in the cache's folder, named after
    ``name`` (numba's own index name for the function: its module, name and line, so two
    functions of one name in one folder never share a lock) and a digest of its argument
    types (``str`` of numba types is the same in every process)."""
    digest = hashlib.sha1(str(tuple(args)).encode()).hexdigest()[:16]
    return os.path.join(cache.cache_path, f"{name}-{digest}.compiling")


@contextlib.contextmanager
def held(path: str, wait_s: float | None = None) -> Iterator[bool]:
    """Hold the advisory lock on ``path`` until the block ends; yields whether it is held.
    Waits at most ``wait_s`` (default :data:`COMPILE_WAIT_S`) for another process to let it
    go, and goes on without it (as it does where the folder cannot hold a lock): a lock can
    only cost time, never a compile."""
    if wait_s is None:
        wait_s = COMPILE_WAIT_S
    fd = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    fd = None
                    break
                time.sleep(_POLL_S)
    except OSError:
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)


def _single_flight(dispatcher: Any) -> Any:
    """``dispatcher.compile`` that holds its signature's lock around numba's own compile
    (which loads from the disk first): the second process to need a signature waits for the
    first's save, then loads it."""
    from numba.core import sigutils
    from numba.core.compiler_lock import global_compiler_lock

    compile_ = dispatcher.compile
    name = compile_lock_name(dispatcher)

    def compile(sig: Any) -> Any:  # noqa: A001 - numba's name for it
        args, _ = sigutils.normalize_signature(sig)
        if tuple(args) in dispatcher.overloads:  # compiled in this process already
            return compile_(sig)
        # numba's compiler lock first: only one thread of a process waits on the disk lock,
        # so a thread holding numba's lock never waits on one of its own process's.
        with global_compiler_lock, held(compile_lock_path(dispatcher._cache, name, args)):
            return compile_(sig)

    return compile


def lock_caches(namespace: Mapping[str, Any]) -> int:
    """Wrap the disk cache of every ``cache=True`` dispatcher in ``namespace`` (a module's
    ``globals()``) in a :class:`LockedCache` and make its compile single-flight; returns
    how many. Call it once, after the module's last definition."""
    if fcntl is None:  # pragma: no cover - not POSIX
        return 0
    from numba.core.caching import Cache
    from numba.core.dispatcher import Dispatcher

    count = 0
    for obj in namespace.values():
        if isinstance(obj, Dispatcher) and isinstance(getattr(obj, "_cache", None), Cache):
            obj._cache = LockedCache(obj._cache)
            obj.compile = _single_flight(obj)
            count += 1
    return count
