"""``scat tournament``'s own checks of ``--seed`` and ``--resume`` (an ``--out`` that is a file:
tests/test_tournament_fault.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hang_limits import hang_limit

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--agents", "random,greedy", "--players", "2", "--games", "8", "--workers", "1",
         "--no-plots"]


def _tournament(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scat_cli", "tournament", *SMALL, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=hang_limit(300),
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_seed_past_64_bits_is_refused_as_scat_play_refuses_it(tmp_path):
    done = _tournament("--seed", str(10**23), "--out", "t", "--quiet", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("scat tournament: error: --seed must be between 0 and 2**63 - 1, "
                           f"got {10**23}\n")
    assert not (tmp_path / "t").exists()


def test_resume_with_nothing_to_resume_says_so_and_plays_the_whole_tournament(tmp_path):
    done = _tournament("--out", "t", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "nothing to resume in t yet: the tournament starts from its first game" in done.stderr
    assert (tmp_path / "t" / "results.json").exists()
