"""The compiled kernels' disk cache is read and written by one process at a time
(:mod:`scat_env.batch.cachelock`): two processes saving two signatures of one function at
once can leave an index that names the other's machine code, and the next process to load it
crashes the interpreter (numba/numba#4807; seen here as a test worker's segfault on a fresh
clone, where every worker compiles into the same cold cache).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hang_limits import hang_limit

fcntl = pytest.importorskip("fcntl")


def _defined_dispatchers(module):
    from numba.core.dispatcher import Dispatcher

    return [v for v in vars(module).values()
            if isinstance(v, Dispatcher) and v.py_func.__module__ == module.__name__]


@pytest.mark.parametrize("name", ["scat_env.batch.kernels", "agents.batch_expert"])
def test_every_cached_kernel_loads_and_saves_under_the_lock(name):
    import importlib

    from scat_env.batch.cachelock import LockedCache

    module = importlib.import_module(name)
    cached = [d for d in _defined_dispatchers(module) if type(d._cache).__name__ != "NullCache"]
    assert cached, f"{name} has no cached kernel"
    unlocked = [d.py_func.__name__ for d in cached if not isinstance(d._cache, LockedCache)]
    assert not unlocked, f"{name}: kernels whose cache is not locked: {unlocked}"


class _Cache:
    """What numba's cache does, recorded: the folder it writes to and each save."""

    def __init__(self, folder: Path) -> None:
        self.cache_path = str(folder)
        self.saved: list[str] = []

    def save_overload(self, sig, data) -> None:
        self.saved.append(sig)

    def load_overload(self, sig, target_context):
        return None


HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_save_waits_while_another_process_holds_the_folder(tmp_path):
    from scat_env.batch.cachelock import LOCK_NAME, LockedCache

    inner = _Cache(tmp_path / "cache")
    cache = LockedCache(inner)
    (tmp_path / "cache").mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "cache" / LOCK_NAME)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        saver = threading.Thread(target=cache.save_overload, args=("(int64,)", b"code"))
        saver.start()
        time.sleep(0.3)
        assert inner.saved == []  # the other process holds the index: no save yet
        holder.stdin.write("go\n")
        holder.stdin.flush()
        saver.join(hang_limit(120))
        assert inner.saved == ["(int64,)"]
    finally:
        holder.kill()
        holder.wait()


def test_a_folder_that_cannot_hold_a_lock_still_saves(tmp_path):
    """A read-only install (numba then caches elsewhere, or not at all) must still play."""
    from scat_env.batch.cachelock import LockedCache

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    inner = _Cache(blocker / "cache")  # makedirs fails: no lock, the save goes on
    LockedCache(inner).save_overload("(int64,)", b"code")
    assert inner.saved == ["(int64,)"]
