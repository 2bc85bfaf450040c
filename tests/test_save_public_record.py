"""A save in progress says no more than the person's own view: no private decision in clear.

With ``declare_31: choice`` (preset ``undeclared_31``) an opponent holding a new 31 decides,
unseen, whether to declare it; keeping it quiet shows nothing at the table. The clear part
of the save (its move list, its size), the ledger's count and hash, and when a save is
written must then be the same as in a twin game where that opponent held no 31; the sealed
part holds where the private decisions lie, so the game still resumes exactly, and the
ledger still refuses a save put back behind the game's last one.
"""

from __future__ import annotations

import io
import json
import shutil
import warnings
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from conftest import stack

from agents.base import Agent
from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_env import GameState, Phase, Rules, parse_card
from scat_env.actions import DECLARE, DRAW_STOCK, PASS
from scat_session import keystore
from scat_session.savegame import SavedGame
from scat_session.seating import new_game

RULES = Rules.preset("undeclared_31")
DATA = Path(__file__).parent / "data" / "saves"
#: The fixtures' game (tests/data/saves/README.md): Bob keeps a 31 quiet at decision 35.
SEED, QUIET_AT, ANSWERS_BEFORE = 237, 34, 13


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))


def _private_passes(game: SavedGame) -> list[int]:
    """Where, in the whole move list, an opponent kept a new 31 quiet (found on the engine,
    independently of the save's own bookkeeping)."""
    state, found = game.new_state(), []
    for i, (seat, action) in enumerate(game.actions):
        if state.phase is Phase.DECLARE and seat != game.human_seat and action == PASS:
            found.append(i)
        state.apply_action(action)
    return found


def _ledger(game_id: str) -> dict[str, Any]:
    return json.loads(keystore.ledger_path().read_text())["games"][game_id]


def _clear(path: Path) -> dict[str, Any]:
    """What anyone reading the file learns, less what differs between any two games (dates,
    game id, nonce, MAC): the sealed part by its length only."""
    data = json.loads(path.read_text())
    for key in ("updated", "created", "game_id", "mac"):
        data.pop(key, None)
    sealed = data.pop("sealed")
    data["sealed_length"] = len(sealed.get("hidden") or sealed["seeds"])  # or version 3
    return data


# -- a stacked twin game in scat play -------------------------------------------------------
#: Seat 1 draws the QH: in the first game to AH KH (a 31, kept quiet), in the twin to AH 9C.
#: Seat 2 then draws the QC to AC KC, declares, and the hand ends. The person is seat 0.
QUIET = ["QS 9D 8D", "AH KH 5D", "AC KC 4S"]
PLAIN = ["QS 9D 8D", "AH 9C 5D", "AC KC 4S"]
STOCK = ["3C", "QH", "QC"]
#: What each seat plays, per game; both games name their agents alike (``script:SEAT``).
SCRIPTS = {
    "quiet": {1: [DRAW_STOCK, parse_card("5D"), PASS], 2: [DRAW_STOCK, parse_card("4S"), DECLARE]},
    "plain": {1: [DRAW_STOCK, parse_card("5D")], 2: [DRAW_STOCK, parse_card("4S"), DECLARE]},
    "other": {1: [DRAW_STOCK, parse_card("AH")], 2: []},
}
_PLAYING = {"game": "quiet"}


class _Script(Agent):
    """Plays its seat's script, then the first legal move (the same in both games)."""

    def __init__(self, moves: list[int]) -> None:
        super().__init__(None)
        self.moves = list(moves)

    def reset(self, seed: int | None = None) -> None:
        return None

    def check_table(self, num_players: int, rules: Rules) -> None:
        return None

    def act(self, view) -> int:  # noqa: ANN001
        if self.moves and self.moves[0] in view.legal_actions:
            return self.moves.pop(0)
        return view.legal_actions[0]


@pytest.fixture
def scripted(monkeypatch):
    from agents import registry

    registry.available()

    def factory(arg: str | None, seed: int | None) -> Agent:
        return _Script(SCRIPTS[_PLAYING["game"]][int(str(arg))])

    monkeypatch.setitem(registry._FACTORIES, "script", (factory, "plays a script"))


def _stacked(which: str) -> SavedGame:
    """A ``scat play`` game whose first hand is dealt from the stacked deck."""
    deck = stack(PLAIN if which == "plain" else QUIET, "2D", STOCK, dealer=2)

    class Stacked(SavedGame):
        def new_state(self) -> GameState:
            return GameState(3, RULES, seed=self.seed, deck=deck, dealer=2)

    base = new_game(3, ["script:1", "script:2"], RULES, seed=5, name="You")
    game = Stacked(**{f.name: getattr(base, f.name) for f in fields(SavedGame) if f.init})
    game.first_dealer = 2
    return game


def _play_stacked(tmp_path: Path, monkeypatch, which: str) -> tuple[SavedGame, list[tuple]]:
    """Play the person's first turn (stock, then the 3C), the hand to its end, then quit;
    every save as it is written: its clear part and the ledger's entry."""
    saves: list[tuple] = []
    write = SavedGame.save

    def save(self: SavedGame, path: str | Path) -> Path:
        written = write(self, path)
        saves.append((_clear(written), _ledger(self.game_id)))
        return written

    monkeypatch.setattr(SavedGame, "save", save)
    _PLAYING["game"] = which
    game = _stacked(which)
    typed = iter(["s", "3c"])

    def ask(prompt: str) -> str:
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    path = tmp_path / f"{which}.json"
    assert PlaySession(game, path, color=False, fast=True, input_fn=ask).run() == 0
    monkeypatch.setattr(SavedGame, "save", write)
    return game, saves


def test_a_31_kept_quiet_leaves_the_save_and_the_ledger_as_in_a_game_without_it(
        tmp_path, monkeypatch, capsys, scripted):
    quiet, quiet_saves = _play_stacked(tmp_path, monkeypatch, "quiet")
    plain, plain_saves = _play_stacked(tmp_path, monkeypatch, "plain")
    assert _private_passes(quiet) == [4] and _private_passes(plain) == []  # not vacuous
    assert quiet.results[0]["declarers"] == plain.results[0]["declarers"] == ["player_2"]
    assert len(quiet_saves) == len(plain_saves) >= 6
    for step, (a, b) in enumerate(zip(quiet_saves, plain_saves, strict=True)):
        assert a == b, f"save {step}: the quiet 31 shows in the file or the ledger"
    last, ledger = quiet_saves[-1]
    assert ledger["actions"] == len(last["actions"]) == len(quiet.actions) - 1
    # The sealed part puts the private decision back: the game resumes exactly.
    again = type(quiet).load(tmp_path / "quiet.json")
    assert again.actions == quiet.actions
    again.resimulate()


def test_the_twin_check_can_fail(tmp_path, monkeypatch, scripted):
    """The same comparison tells apart a game on the same deal whose public moves differ
    (Alice discards the AH instead of the 5D)."""
    _, quiet_saves = _play_stacked(tmp_path, monkeypatch, "quiet")
    _, other_saves = _play_stacked(tmp_path, monkeypatch, "other")
    assert quiet_saves[:4] == other_saves[:4] and quiet_saves[4] != other_saves[4]


# -- scat play, scat replay and scat serve on a seeded game ------------------------------------
def _play(monkeypatch, args: list[str], answers: int) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * answers))
    return main(["play", "--fast", "--no-color", *args])


def test_scat_play_writes_no_private_decision_in_clear(tmp_path, monkeypatch, capsys):
    save = tmp_path / "g.json"
    args = ["--seed", str(SEED), "--opponents", "random", "--rules", "undeclared_31",
            "--save", str(save)]
    assert _play(monkeypatch, args, ANSWERS_BEFORE) == 0
    data = json.loads(save.read_text())
    game = SavedGame.load(save)
    assert _private_passes(game) == [QUIET_AT]  # Bob kept a 31 quiet
    assert len(data["actions"]) == len(game.actions) - 1 == QUIET_AT + 1
    assert not any(seat != 0 and token == "pass" for seat, token in data["actions"])
    assert _ledger(game.game_id)["actions"] == len(data["actions"])
    capsys.readouterr()
    # scat replay of the game in progress: the table as the person saw it, nothing more.
    assert main(["replay", str(save), "--fast", "--no-color"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "quiet" not in out and f"Verified: {QUIET_AT + 1} decisions" in out
    # It resumes, and plays out exactly as the whole game played at once.
    assert _play(monkeypatch, ["--resume", str(save)], 400) == 0
    whole = json.loads((DATA / "v3-finished.json").read_text())
    assert json.loads(save.read_text())["actions"] == whole["actions"]


def test_scat_serve_writes_no_private_decision_in_clear(tmp_path):
    """Seed 97: Bob is dealt a 31 and keeps it quiet before the person's first decision."""
    warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
    from scat_web.games import GameStore

    store = GameStore(tmp_path / "data", seed_source=lambda: 97)
    live, events = store.create(3, ["random", "random"], "undeclared_31", "You", False)
    assert _private_passes(live.save) == [0]
    data = json.loads(live.path.read_text())
    assert data["actions"] == live.save.actions_json()[1:]  # all but Bob's quiet pass
    assert "pass" not in json.dumps(data["actions"]) and "pass" not in json.dumps(events)
    assert _ledger(live.game_id)["actions"] == len(data["actions"])
    store.move(live, live.state.legal_actions()[0], live.seq)
    store.forget(live.game_id)
    again = store.get(live.game_id)
    assert again.save.actions[:1] == live.save.actions[:1] and again.state.current_player == 0


# -- saves an older scat wrote (version 3) ---------------------------------------------------
def _old_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    for name in ("key", "ledger.json"):
        shutil.copy(DATA / name, home / name)
        (home / name).chmod(0o600)
    save = tmp_path / "old.json"
    shutil.copy(DATA / "v3-in-progress.json", save)
    return save


def test_a_version_3_save_in_progress_resumes_and_is_then_sealed_whole(
        tmp_path, monkeypatch, capsys):
    save = _old_home(tmp_path)
    old = json.loads(save.read_text())
    assert old["version"] == 3 and old["actions"][QUIET_AT] == [2, "pass"]  # the fixture's leak
    game = SavedGame.load(save)
    game.resimulate()
    assert [[s, t] for s, t in game.actions_json()] == old["actions"]
    # Its ledger entry (an older scat's: every decision counted) lets it resume.
    assert _play(monkeypatch, ["--resume", str(save)], 2) == 0, capsys.readouterr().err
    new = json.loads(save.read_text())
    assert new["version"] == 4 and "seeds" not in new["sealed"]
    assert not any(seat != 0 and token == "pass" for seat, token in new["actions"])
    assert _ledger(old["game_id"])["actions"] == len(new["actions"])
    # Putting the old copy back is a take-back: refused.
    shutil.copy(DATA / "v3-in-progress.json", save)
    capsys.readouterr()
    assert _play(monkeypatch, ["--resume", str(save)], 2) == 2
    assert "take-backs are not allowed" in capsys.readouterr().err


def test_a_version_3_finished_game_replays_with_no_key(tmp_path, capsys):
    path = tmp_path / "done.json"
    shutil.copy(DATA / "v3-finished.json", path)
    assert main(["replay", str(path), "--fast", "--no-color"]) == 0
    assert "Verified: 82 decisions" in " ".join(capsys.readouterr().out.split())
    assert not keystore.key_path().exists()
