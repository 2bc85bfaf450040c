"""Saved games against bad luck and bad files: a save that cannot be written ends the game in
one line with the last good save kept and no stray temp file; a hostile file (deep nesting,
oversized, a changed seat) is refused in one line before it is parsed deeply; a declared 31
keeps the other hands hidden on screen and in the save while the game is on."""

from __future__ import annotations

import errno
import io
import json
import os
from pathlib import Path

import pytest

from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_env import Rules
from scat_session.savegame import MAX_FILE_BYTES, SavedGame
from scat_session.seating import new_game


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))


def _play(monkeypatch, capsys, args: list[str], typed: str = "1\n" * 6) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    code = main(["play", "--fast", "--no-color", "--opponents", "random", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


# -- the operating system says no ------------------------------------------------------------
def test_save_naming_a_folder_is_refused_before_the_first_move(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "saves"
    folder.mkdir()
    code, out, err = _play(monkeypatch, capsys, ["--save", str(folder)])
    assert code == 2 and "is a folder" in _one_line(err)
    assert "Your turn" not in out and not list(folder.iterdir())


def test_save_under_a_file_is_refused_before_the_first_move(tmp_path, monkeypatch, capsys):
    (tmp_path / "plain.txt").write_text("x")
    code, out, err = _play(monkeypatch, capsys, ["--save", str(tmp_path / "plain.txt" / "g.json")])
    assert code == 2 and "cannot save to" in _one_line(err) and "Your turn" not in out


def test_a_folder_without_write_permission_is_refused(tmp_path, monkeypatch, capsys):
    """As an ordinary user the folder is made read-only; as root (who may write anyway) the
    refusal the system would give is simulated."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() == 0:
        import tempfile

        def refuse(*args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
    else:
        folder.chmod(0o555)
    try:
        code, out, err = _play(monkeypatch, capsys, ["--save", str(folder / "g.json")])
    finally:
        folder.chmod(0o755)
    assert code == 2 and "Permission denied" in _one_line(err)
    assert "Your turn" not in out and not list(folder.iterdir())


class _DiskFillsUp:
    """``os.fsync`` that reports a full disk from its ``after``-th call on."""

    def __init__(self, after: int) -> None:
        self.after, self.calls = after, 0
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        self.calls += 1
        if self.calls > self.after:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.real(fd)


def test_a_full_disk_at_the_start_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(os, "fsync", _DiskFillsUp(0))
    save = tmp_path / "g.json"
    code, out, err = _play(monkeypatch, capsys, ["--save", str(save)])
    assert code == 2 and "No space left on device" in _one_line(err)
    assert not save.exists() and not _temp_files(tmp_path)


def test_a_full_disk_mid_game_keeps_the_last_good_save(tmp_path, monkeypatch, capsys):
    save = tmp_path / "g.json"
    disk = _DiskFillsUp(8)  # a save and its ledger entry are two writes
    monkeypatch.setattr(os, "fsync", disk)
    code, out, err = _play(monkeypatch, capsys, ["--save", str(save)], "1\n" * 40)
    line = _one_line(err)
    assert code == 2 and "No space left on device" in line and "last good save" in line
    assert disk.calls > 8 and not _temp_files(tmp_path)
    monkeypatch.setattr(os, "fsync", disk.real)
    kept = SavedGame.load(save)  # whole, readable, and it resumes
    assert kept.status == "in_progress" and kept.actions
    code, _, err = _play(monkeypatch, capsys, ["--resume", str(save)], "1\n")
    assert code == 0, err


# -- hostile files ----------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["replay", "play"])
def test_json_nested_100000_deep_is_refused_in_one_line(tmp_path, capsys, command):
    bad = tmp_path / "deep.json"
    bad.write_text('{"format": "scat-replay", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    args = ["replay", str(bad)] if command == "replay" else ["play", "--resume", str(bad)]
    assert main(args) == 2
    assert "nested more than" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("command", ["replay", "play"])
def test_an_oversized_file_is_refused_before_it_is_read(tmp_path, capsys, command):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk spent
    args = ["replay", str(big)] if command == "replay" else ["play", "--resume", str(big)]
    assert main(args) == 2
    assert "at most 16 MiB" in _one_line(capsys.readouterr().err)


def _finished(tmp_path: Path, seed: int = 1, rules: Rules | None = None) -> Path:
    game = new_game(3, ["greedy", "greedy"], rules or Rules(), seed=seed, name="You")
    path = tmp_path / f"done{seed}.json"
    PlaySession(game, path, color=False, fast=True, input_fn=lambda prompt: "1").run()
    return path


def test_a_finished_game_whose_human_seat_was_changed_is_refused(tmp_path, capsys):
    path = _finished(tmp_path, rules=Rules(pennies=1))
    data = json.loads(path.read_text())
    data["human_seat"] = 1
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["replay", str(path), "--fast"]) == 2
    assert "does not match the players" in _one_line(capsys.readouterr().err)


# -- a declared 31 shows only the declarer's hand -------------------------------------------
def test_a_declared_31_keeps_the_other_hands_hidden_while_the_game_is_on(tmp_path, capsys):
    """Seed 1, greedy opponents, the person always choosing option 1: Alice declares 31 in
    hand 4, and Bob's hand goes back into the pack unseen."""
    done = SavedGame.load(_finished(tmp_path))
    index, result = next((i, r) for i, r in enumerate(done.results)
                         if r["reason"] == "thirty_one" and "player_0" not in r["declarers"])
    assert result["declarers"] == ["player_1"] and "player_2" in result["hands"]  # in full
    out = capsys.readouterr().out
    assert "(not shown)" in out  # Bob's row at the table's showdown
    # Stop right after that hand: the save in progress holds the hand as the person saw it.
    state, answers = done.new_state(), 0
    for seat, action in done.actions:
        state.apply_action(action)
        answers += seat == 0
        if len(state.results) > index:
            break
    replies = iter(["1"] * answers)

    def ask(prompt: str) -> str:
        try:
            return next(replies)
        except StopIteration:
            raise EOFError from None

    path = tmp_path / "g.json"
    game = new_game(3, ["greedy", "greedy"], Rules(), seed=1, name="You")
    PlaySession(game, path, color=False, fast=True, input_fn=ask).run()
    saved = json.loads(path.read_text())
    assert saved["status"] == "in_progress" and len(saved["results"]) == index + 1
    assert sorted(saved["results"][index]["hands"]) == ["player_0", "player_1"]
    SavedGame.load(path).resimulate()  # and it still checks against the engine
