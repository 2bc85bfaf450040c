"""Golden playthroughs: seeded games must replay exactly as recorded in tests/playthroughs/.

A diff here means the engine's behaviour changed (deal, legal actions, scoring, rotation).
If that change is intended, regenerate the files and review the diff in the commit:

    python -m scat_env.playthrough --write tests/playthroughs
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from scat_env.playthrough import GAMES, main, record_game

GOLDEN = Path(__file__).resolve().parent / "playthroughs"
REGENERATE = "python -m scat_env.playthrough --write tests/playthroughs"


@pytest.mark.parametrize("stem,n,preset,seed", GAMES, ids=[g[0] for g in GAMES])
def test_playthrough_matches_golden_file(stem, n, preset, seed):
    path = GOLDEN / f"{stem}.txt"
    assert path.is_file(), f"missing golden file {path}; create it with: {REGENERATE}"
    expected = path.read_text(encoding="utf-8")
    actual = record_game(n, preset, seed)
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"golden/{stem}.txt", tofile="engine now", n=1))[:60])
        pytest.fail(
            f"playthrough {stem} changed: the engine no longer plays this seeded game as "
            f"recorded. If the rule change is intended, regenerate with `{REGENERATE}` and "
            f"review the diff.\n{diff}"
        )


def test_no_stray_golden_files():
    assert {p.name for p in GOLDEN.glob("*.txt")} == {f"{g[0]}.txt" for g in GAMES}


def test_playthroughs_are_deterministic_and_end():
    a = record_game(3, "standard", 2)
    assert a == record_game(3, "standard", 2)
    assert a.rstrip().splitlines()[-1].startswith(("end: game_over, winner p", "truncated"))


def test_check_command(tmp_path, capsys):
    assert main(["--write", str(tmp_path)]) == 0
    assert main(["--check", str(tmp_path)]) == 0
    (tmp_path / "gin_3p.txt").write_text("changed\n")
    assert main(["--check", str(tmp_path)]) == 1
    assert "gin_3p.txt" in capsys.readouterr().err
