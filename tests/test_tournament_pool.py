"""The local worker pool: workers start clean (nothing inherited from the tournament
process by fork) and shutting the pool down never waits forever."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from hang_limits import hang_guard, hang_limit

from training.runlock import LOCK_FILE, exclusive_folder
from training.tournament import TournamentConfig, run_tournament, runner

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _open_files(pid: int) -> set[str]:
    """What process ``pid`` has open (Linux)."""
    fds = Path(f"/proc/{pid}/fd")
    found = set()
    for fd in fds.iterdir():
        try:
            found.add(os.readlink(fd))
        except OSError:  # closed in the meantime
            continue
    return found


@linux_only
def test_pool_workers_do_not_inherit_the_run_folders_lock(tmp_path):
    """A forked worker holds the folder's lock file open, and would keep the folder locked
    after its tournament was killed; a worker from the forkserver has never seen it."""
    with exclusive_folder(tmp_path, "tournament"), hang_guard(300, "a pool of one worker"):
        pool = runner.pool_context().Pool(1)
        try:
            worker = pool.apply(os.getpid)
            held = _open_files(worker)
        finally:
            runner.shut_down(pool, finished=True)
    assert str((tmp_path / LOCK_FILE).resolve()) not in held


def test_shutting_down_a_pool_with_a_stuck_worker_ends_within_its_limit():
    """close + join waits for the stuck task only ``seconds``, then the workers are
    terminated: a pool that will not finish costs a bounded wait, never a hung run."""
    pool = runner.pool_context().Pool(2)
    workers = list(pool._pool)
    pool.apply_async(time.sleep, (3600,))
    began = time.monotonic()
    with hang_guard(300, "shutting down a pool with a stuck worker"):
        runner.shut_down(pool, finished=True, seconds=1.0)
    assert time.monotonic() - began < hang_limit(60)
    for process in workers:
        process.join(hang_limit(60))
        assert not process.is_alive()


def test_a_pool_run_gives_the_bytes_of_a_run_in_this_process(tmp_path):
    cfg = TournamentConfig(tables=(("greedy", "random", "threshold:20"),), games=30, seed=6)
    with hang_guard(300, "two tournaments"):
        one = run_tournament(cfg, tmp_path / "one", workers=1, progress=False)
        two = run_tournament(cfg, tmp_path / "two", workers=2, progress=False, chunk_games=2)
    assert two.workers == 2
    assert (tmp_path / "one" / "games.jsonl").read_bytes() == \
        (tmp_path / "two" / "games.jsonl").read_bytes()
    assert one.games == two.games
