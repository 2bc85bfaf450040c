"""The compiled kernels' disk cache is read and written by one process at a time
(:mod:`scat_env.batch.cachelock`): two processes saving two signatures of one function at
once can leave an index that names the other's machine code, and the next process to load it
crashes the interpreter (numba/numba#4807; seen here as a test worker's segfault on a fresh
clone, where every worker compiles into the same cold cache).
"""

from __future__ import annotations

import json
import os
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


KERNELS = """
import numba
import numpy as np

from scat_env.batch.cachelock import lock_caches


@numba.njit(cache=True)
def helper(x):
    return x * x + 1.0 if x > 0.5 else np.sqrt(abs(x))


@numba.njit(cache=True)
def kernel(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += helper(a[i, j]) - np.exp(-a[i, j])
    return s


lock_caches(globals())
"""

RUNNER = """
import json, os, sys, time
from numba.core import event

compiled = []


class Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)


event.register("numba:compile", Listener())
sys.path.insert(0, sys.argv[1])
import numpy as np
import kmod

print("ready", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.005)
value = kmod.kernel(np.full((4, 5), 0.75))
print(json.dumps({"compiled": compiled, "value": value}), flush=True)
"""


def _cache_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a process whose numba cache is ``tmp_path / "cache"`` (cold)."""
    return dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))


def _runners(tmp_path: Path, count: int) -> list[subprocess.Popen]:
    (tmp_path / "kmod.py").write_text(KERNELS)
    return [subprocess.Popen([sys.executable, "-c", RUNNER, str(tmp_path), str(tmp_path / "go")],
                             stdout=subprocess.PIPE, text=True, env=_cache_env(tmp_path))
            for _ in range(count)]


def test_processes_that_need_a_kernel_at_once_compile_it_once(tmp_path):
    """Three processes on a cold cache call the same kernel at the same moment: one compiles
    it (and the helper it calls) and the others wait for its save and load it; every one
    computes the same value."""
    runners = _runners(tmp_path, 3)
    try:
        for runner in runners:
            assert runner.stdout.readline().strip() == "ready"
        (tmp_path / "go").touch()
        results = [json.loads(r.stdout.readline()) for r in runners]
    finally:
        for runner in runners:
            runner.kill()
            runner.wait()
    compiled = [name for result in results for name in result["compiled"]]
    assert sorted(compiled) == ["helper", "kernel"], compiled
    assert len({result["value"] for result in results}) == 1


FIRST = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from numba import types
import kmod
from scat_env.batch.cachelock import compile_lock_name, compile_lock_path, held

# this process is the one compiling: numba's own compile, under the signature's lock
for f in (kmod.kernel, kmod.helper):
    vars(f).pop("compile", None)
args = (types.Array(types.float64, 2, "C"),)
name = compile_lock_name(kmod.kernel)
with held(compile_lock_path(kmod.kernel._cache, name, args)):
    print("held", flush=True)
    sys.stdin.readline()
    kmod.kernel(np.full((4, 5), 0.75))
print("saved", flush=True)
"""


def test_a_process_waits_for_another_ones_compile_of_the_signature_and_loads_it(tmp_path):
    """A process that needs a signature another process is compiling waits for that one's
    save and loads it: it compiles nothing. (Without the wait it would find the cache empty
    and compile everything itself.)"""
    (runner,) = _runners(tmp_path, 1)
    first = subprocess.Popen([sys.executable, "-c", FIRST, str(tmp_path)],
                             env=_cache_env(tmp_path),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert runner.stdout.readline().strip() == "ready"
        assert first.stdout.readline().strip() == "held"
        (tmp_path / "go").touch()
        time.sleep(0.5)
        assert runner.poll() is None  # waiting
        first.stdin.write("go\n")
        first.stdin.flush()
        assert first.stdout.readline().strip() == "saved"
        result = json.loads(runner.stdout.readline())
        assert result["compiled"] == []
    finally:
        for proc in (runner, first):
            proc.kill()
            proc.wait()


def test_a_lock_held_too_long_is_given_up_and_the_compile_goes_on(tmp_path):
    from scat_env.batch.cachelock import held

    path = str(tmp_path / "x.compiling")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, path],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with held(path, wait_s=0.3) as got:
            assert got is False
        assert time.monotonic() - started >= 0.3
    finally:
        holder.kill()
        holder.wait()
    with held(path, wait_s=0.3) as got:  # let go when its holder ended
        assert got is True


SAME_NAME = {
    "moda.py": "import numba\nimport modb\nfrom scat_env.batch.cachelock import lock_caches\n\n\n"
               "@numba.njit(cache=True)\ndef f(x):\n    return modb.f(x) + 1.0\n\n\n"
               "lock_caches(globals())\n",
    "modb.py": "import numba\nfrom scat_env.batch.cachelock import lock_caches\n\n\n"
               "@numba.njit(cache=True)\ndef f(x):\n    return x * 2.0\n\n\n"
               "lock_caches(globals())\n",
}

SAME_NAME_RUN = """
import sys
sys.path.insert(0, sys.argv[1])
from scat_env.batch import cachelock
cachelock.COMPILE_WAIT_S = 1e9  # a lock this process waited on itself would never go
import moda, modb
from scat_env.batch.cachelock import compile_lock_name
assert compile_lock_name(moda.f) != compile_lock_name(modb.f)
print(moda.f(3.0), flush=True)
"""


def test_two_functions_of_one_name_in_one_folder_never_share_a_compile_lock(tmp_path):
    """``moda.f`` calls ``modb.f`` with the same argument types: a lock named after the
    function's name alone would be the same file, and the nested compile would wait on its
    own process's lock. Each lock is named after numba's index name (module, name, line)."""
    for name, text in SAME_NAME.items():
        (tmp_path / name).write_text(text)
    proc = subprocess.run([sys.executable, "-c", SAME_NAME_RUN, str(tmp_path)],
                          env=_cache_env(tmp_path),
                          capture_output=True, text=True, timeout=hang_limit(120))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "7.0"
    locks = sorted(p.name for p in (tmp_path / "cache").rglob("*.compiling"))
    assert len(locks) == 2 and locks[0].startswith("moda.f-") and locks[1].startswith("modb.f-")
