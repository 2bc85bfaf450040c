"""Every preset plays, saves and replays without a terminal: ``scat play`` (a scripted
person, menu option 1 each time) up to its first scored hand, quit and saved; ``scat
replay`` then re-simulates the save and shows that showdown in the preset's own terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_env import Rules
from scat_env.rules import PRESETS
from scat_session.savegame import SavedGame
from scat_session.seating import new_game


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / ".scat"))
    # A save is flushed to disk at every decision; what is checked here is what the save
    # holds, not the flush (tests/test_savegame_trust.py checks a flush that fails), and
    # the flushes were a fifth of this file's time.
    monkeypatch.setattr("scat_session.keystore.os.fsync", lambda fd: None)


def _play_one_hand(preset: str, path: Path, seed: int = 2) -> SavedGame:
    """Menu option 1 until the first hand is scored, then q and y: the game is saved."""
    game = new_game(2, ["greedy"], Rules.preset(preset), seed=seed, name="You")
    session: PlaySession
    quitting: list[str] = []

    def answer(prompt: str) -> str:
        if quitting:
            return quitting.pop(0)
        if session.state.results:
            quitting.extend(["y"])
            return "q"
        return "1"

    session = PlaySession(game, path, color=False, fast=True, width=100, input_fn=answer)
    assert session.run() == 0
    return SavedGame.load(path)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_plays_saves_and_replays_its_showdown(preset, tmp_path, capsys):
    path = tmp_path / f"{preset}.json"
    saved = _play_one_hand(preset, path)
    played = capsys.readouterr().out
    assert saved.results, "the first hand was scored before the game was saved"
    assert main(["replay", str(path), "--fast", "--no-color", "--width", "100"]) == 0
    out = capsys.readouterr().out
    hands = f"{len(saved.results)} hand{'s' if len(saved.results) != 1 else ''}"
    assert f"Verified: {len(saved.actions)} decisions and {hands}" in out
    assert "Showdown · hand 1" in out and "Showdown · hand 1" in played
    rules = Rules.preset(preset)
    if rules.scoring == "points":  # a race: what each scored and its points, no lives
        for text in (played, out):
            assert "Scored" in text and f"of {rules.points_to_win} points" in text
            assert "Lost" not in text and "lives left" not in text
    else:
        assert "Lost" in out and "Scored" not in out
    if rules.play == "golf":  # slot moves name their cards
        assert "in slot" in out and " that lay there to the pile" in out
