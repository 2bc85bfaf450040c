"""A game saved against an agent kind that was since retired (the native ``ppo:`` policies)
still resumes: the seat goes to today's default opponent from the next decision, recorded as
a takeover, and the person is told in one line. Nothing of the game is lost.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from scat_cli.main import main
from scat_env import Rules
from scat_session.savegame import SavedGame
from scat_session.seating import build_agents, hand_over_retired, new_game
from scat_web.app import create_app
from scat_web.games import GameStore, WebSave

RETIRED_SPEC = "ppo:scat_ppo_set"
SUCCESSOR = "compact:scat_batch_set"


@pytest.fixture(autouse=True)
def _scat_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))


def _play(monkeypatch, capsys, args: list[str], typed: str) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    code = main(["play", "--fast", "--no-color", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _as_if_saved_against_the_retired_set(path: Path, cls: type[SavedGame] = SavedGame) -> None:
    """Rewrite seat 1's agent as the retired default (the seal is made again with the
    player's key, as the version that saved it would have)."""
    game = cls.load(path)
    game.players[1].agent = RETIRED_SPEC
    game.save(path)


def test_the_terminal_resumes_a_game_of_a_retired_agent_with_its_successor(
        tmp_path, monkeypatch, capsys):
    save = tmp_path / "game.json"
    code, _, err = _play(monkeypatch, capsys, ["--opponents", "random", "--seed", "7",
                                               "--save", str(save)], "1\n" * 2)
    assert code == 0, err
    _as_if_saved_against_the_retired_set(save)
    moves = len(SavedGame.load(save).actions)

    code, out, err = _play(monkeypatch, capsys, ["--resume", str(save)], "1\n" * 3)
    assert code == 0, err
    assert "retired since this game was saved" in out and SUCCESSOR in out, out
    game = SavedGame.load(save)
    assert [(r.seat, r.from_action, r.agent) for r in game.replacements] == [
        (1, moves, SUCCESSOR)]
    assert len(game.actions) > moves  # the game went on

    code, out, err = _play(monkeypatch, capsys, ["--resume", str(save)], "1\n")
    assert code == 0 and "retired" not in out, err  # said once; the successor is asked again


def test_the_successor_is_built_at_its_decision_on_every_resimulation():
    """A takeover saved before its agent's first move still seats that agent."""
    game = new_game(3, ["random", "random"], Rules(), 11, "You")
    game.players[2].agent = RETIRED_SPEC
    assert hand_over_retired(game) == [2]
    assert game.agent_now(2) == SUCCESSOR
    agents = build_agents(game)
    assert agents[2] is None  # the retired agent is never built
    game.resimulate(agents=agents)
    assert agents[2] is not None and agents[2].spec == SUCCESSOR
    assert hand_over_retired(game) == []  # already handed over


def test_the_browser_resumes_a_game_of_a_retired_agent_and_says_so(tmp_path):
    web = tmp_path / "web"
    with TestClient(create_app(web, store=GameStore(web), token=None),
                    base_url="http://127.0.0.1") as client:
        r = client.post("/api/games", json={"players": 2, "opponents": "greedy"})
        assert r.status_code == 201, r.text
        game = r.json()["game"]
    _as_if_saved_against_the_retired_set(web / f"{game['id']}.json", WebSave)
    with TestClient(create_app(web, store=GameStore(web), token=None),
                    base_url="http://127.0.0.1") as client:
        r = client.get(f"/api/games/{game['id']}")
        assert r.status_code == 200, r.text
        game = r.json()["game"]
        texts: list[str] = []
        for _ in range(6):  # the person's moves until the retired seat's turn comes
            r = client.post(f"/api/games/{game['id']}/move",
                            json={"action": game["legal"][0]["action"], "seq": game["seq"]})
            assert r.status_code == 200, r.text
            game = r.json()["game"]
            texts += [e["text"] for e in game["events"] if e["kind"] == "takeover"]
            if texts:
                break
        assert texts and "retired since this game was saved" in texts[0], texts
        assert SUCCESSOR in texts[0]
