"""The HTTP API of ``scat serve`` (docs/WEB_API.md), every endpoint and every refusal,
without a browser: Starlette's TestClient over the app, games saved in a temporary folder.

A refused request answers 4xx with ``{"error": one line}`` naming the problem and changes
nothing: the tests compare the saved file's bytes and the game's STATE before and after.
"""

from __future__ import annotations

import json
import random
import re
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from agents.base import Agent  # noqa: E402
from agents.registry import register  # noqa: E402
from scat_env import GameState, PlayerView, Rules, parse_card  # noqa: E402
from scat_env.actions import DECLARE, PASS  # noqa: E402
from scat_env.rules import PRESETS  # noqa: E402
from scat_session.savegame import SaveError  # noqa: E402
from scat_web.app import MAX_BODY, create_app  # noqa: E402
from scat_web.games import AGENTS, GameStore, WebSave  # noqa: E402

BASE = "http://127.0.0.1"
#: The access token of the test server (``scat serve`` makes a random one per launch).
TOKEN = "test-token-0123456789abcdef"
#: A card as the API writes it, or with a suit symbol: what a takeover line must not hold.
CARD = re.compile(r"\b(10|[2-9AJQK])[CDHS]\b|[♣♦♥♠]")


class _Broken(Agent):
    """Fails at its first decision (an agent with a bug)."""

    def act(self, view: PlayerView) -> int:
        raise RuntimeError(f"my cards are {view.hand}")


class _Cheat(Agent):
    """Answers a move the rules never allow."""

    def act(self, view: PlayerView) -> int:
        return 999


class _Quiet(Agent):
    """Keeps every 31 quiet, otherwise the first legal move."""

    def act(self, view: PlayerView) -> int:
        legal = view.legal_actions
        return PASS if DECLARE in legal else legal[0]


register("test_broken", lambda arg, seed: _Broken(seed), "fails (tests only)")
register("test_cheat", lambda arg, seed: _Cheat(seed), "illegal moves (tests only)")
register("test_quiet", lambda arg, seed: _Quiet(seed), "keeps 31s quiet (tests only)")
TEST_AGENTS = (*AGENTS, ("test_broken", "broken"), ("test_cheat", "cheat"),
               ("test_quiet", "quiet"))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    return tmp_path / "web"


def _client(home: Path, **kwargs: Any) -> TestClient:
    """A client of a server with :data:`TOKEN`, sending it as a script would."""
    store = GameStore(home, agents=TEST_AGENTS)
    return TestClient(create_app(home, store=store, token=TOKEN, **kwargs), base_url=BASE,
                      headers={"Authorization": f"token {TOKEN}"})


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    with _client(home) as c:
        yield c


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"opponents": "greedy", **body})
    assert r.status_code == 201, r.text
    return r.json()["game"]


def _move(client: TestClient, game: dict[str, Any], action: int | None = None) -> dict[str, Any]:
    action = game["legal"][0]["action"] if action is None else action
    r = client.post(f"/api/games/{game['id']}/move", json={"action": action, "seq": game["seq"]})
    assert r.status_code == 200, r.text
    return r.json()["game"]


def _finish(client: TestClient, game: dict[str, Any]) -> dict[str, Any]:
    while game["status"] == "playing":
        game = _move(client, game)
    return game


def _error(r: Any, status: int, *words: str) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    message = r.json()["error"]
    assert isinstance(message, str) and "\n" not in message and message
    for word in words:
        assert word in message, message
    return message


# -- options and new games --------------------------------------------------------------------
def test_options_list_every_preset_the_agents_and_the_default_opponent(client):
    r = client.get("/api/options")
    assert r.status_code == 200
    o = r.json()
    assert [p["name"] for p in o["presets"]] == list(PRESETS)
    assert {"name", "notes", "lives_name", "min_players", "max_players"} <= set(o["presets"][0])
    assert {a["spec"] for a in o["agents"]} >= {"compact:scat_batch_set", "expert", "greedy"}
    assert o["default_rules"] == "standard" and o["default_opponent"] == "compact:scat_batch_set"
    assert (o["min_players"], o["max_players"]) == (2, 10)
    by_name = {p["name"]: p for p in o["presets"]}  # how a turn goes and how a game is won
    assert (by_name["golf"]["play"], by_name["golf"]["scoring"]) == ("golf", "lives")
    assert by_name["french_canadian"]["scoring"] == "points"
    assert by_name["french_canadian"]["points_to_win"] == 31
    assert by_name["standard"]["points_to_win"] is None


def test_a_new_game_is_at_the_persons_first_decision_with_the_agents_moves_before_it(client):
    game = _new(client, players=4, rules="standard", name="Ann")
    assert game["status"] == "playing" and game["seq"] == 0 and game["to_move"] == 0
    assert game["you"] == 0 and game["players"][0]["name"] == "Ann"
    assert game["players"][0]["agent"] == "you" and game["players"][1]["agent"] == "greedy"
    assert game["events"][0]["kind"] == "deal"
    assert len(game["hand"]) == 3 and game["legal"] and game["stock"] > 0
    movers = [e["seat"] for e in game["events"][1:]]
    assert all(s != 0 for s in movers)
    assert {"seed", "stock_order"}.isdisjoint(game) and "hand" not in game["players"][1]


def test_the_default_opponent_is_a_trained_policy_where_one_can_play(client):
    assert _new(client, opponents=None, players=3)["players"][1]["agent"] == (
        "compact:scat_batch_set")
    assert _new(client, opponents=None, players=8)["players"][1]["agent"] == (
        "compact:scat_batch_set")
    # the model card's seat: the policy of every preset, measured ahead of expert there
    assert _new(client, opponents=None, rules="sudden_death")["players"][1]["agent"] == (
        "compact:scat_rules")
    # hammer: the standard game's set with the calls' set making the calls, measured the
    # strongest there
    assert _new(client, opponents=None, rules="hammer")["players"][1]["agent"] == (
        "compact:scat_calls_play")
    # golf: its family's member, measured ahead of scat_rules and of expert there
    assert _new(client, opponents=None, rules="golf")["players"][1]["agent"] == (
        "compact:scat_golf")
    # Jacobs at six: the points races' member, measured ahead of expert there
    assert _new(client, opponents=None, rules="french_canadian_jacobs",
                players=6)["players"][1]["agent"] == "compact:scat_points"


def test_the_browser_offers_every_default_policy_so_it_seats_as_the_terminal_does():
    """The server picks its default among the agents it offers (``GameStore.default_opponent``):
    a shipped policy missing from :data:`scat_web.games.AGENTS` would be seated by
    ``scat play`` and silently replaced by another agent in the browser."""
    from agents.registry import DEFAULT_POLICIES

    offered = {spec for spec, _ in AGENTS}
    assert set(DEFAULT_POLICIES) <= offered, set(DEFAULT_POLICIES) - offered


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"players": 1}, 400, ["players", "2 to 10"]),
    ({"players": 11}, 400, ["players"]),
    ({"players": "3"}, 400, ["players", "integer"]),
    ({"players": True}, 400, ["players"]),
    ({"opponents": "alphago"}, 400, ["unknown opponent", "alphago"]),
    ({"opponents": "ppo:/etc/passwd"}, 400, ["unknown opponent"]),
    ({"opponents": ["greedy"], "players": 3}, 400, ["1 agents for 2 opponents"]),
    ({"opponents": 7}, 400, ["opponents"]),
    ({"opponents": "ppo:scat_ppo_set", "players": 3}, 400, ["unknown opponent"]),
    ({"opponents": "compact:scat_batch_set", "rules": "hammer"}, 400, ["does not play"]),
    ({"rules": "nope"}, 400, ["rules", "preset"]),
    ({"rules": "configs/rules/hammer.yaml"}, 400, ["rules"]),
    ({"name": "x" * 25}, 400, ["name", "24"]),
    ({"name": "[bold]"}, 400, ["name", "bracket"]),
    ({"name": 5}, 400, ["name"]),
    ({"name": "human"}, 400, ["name"]),
    ({"teaching": "yes"}, 400, ["teaching"]),
    ({"color": "red"}, 400, ["unknown field", "color"]),
])
def test_a_bad_new_game_is_refused_naming_the_field_and_saves_nothing(client, home, body,
                                                                       status, words):
    _error(client.post("/api/games", json=body), status, *words)
    assert not list(home.glob("*.json"))


def test_bodies_that_are_not_json_objects_are_refused(client, home):
    _error(client.post("/api/games", content=b"{nope", headers={"content-type":
                                                                   "application/json"}),
           400, "not valid JSON")
    _error(client.post("/api/games", json=[1, 2]), 400, "JSON object")
    _error(client.post("/api/games", content=b'{"players": NaN}',
                       headers={"content-type": "application/json"}), 400, "NaN")
    _error(client.post("/api/games", content=b"\xff\xfe", headers={"content-type":
                                                                  "application/json"}),
           400, "UTF-8")
    deep = b"[" * 40 + b"]" * 40
    _error(client.post("/api/games", content=deep, headers={"content-type":
                                                           "application/json"}), 400, "nested")
    _error(client.post("/api/games", content=b"{}", headers={"content-type": "text/plain"}),
           415, "application/json")
    _error(client.post("/api/games", content=b" " * (MAX_BODY + 1),
                       headers={"content-type": "application/json"}), 413, str(MAX_BODY))
    assert not list(home.glob("*.json"))


# -- playing ----------------------------------------------------------------------------------
def test_a_move_answers_the_events_since_it_and_the_next_decision(client, home):
    game = _new(client, players=3)
    legal = game["legal"][0]
    after = _move(client, game, legal["action"])
    assert after["seq"] == 1
    first = after["events"][0]
    assert first["seat"] == 0 and first["action"] == legal["action"]
    assert after["status"] == "over" or after["to_move"] == 0
    saved = json.loads((home / f"{game['id']}.json").read_text())
    assert saved["status"] == "in_progress" and saved["seed"] is None and "sealed" in saved
    assert sum(1 for seat, _ in saved["actions"] if seat == 0) == after["seq"]


def _unchanged(client: TestClient, home: Path, game: dict[str, Any]) -> Iterator[None]:
    path = home / f"{game['id']}.json"
    before_file = path.read_bytes()
    before = client.get(f"/api/games/{game['id']}").json()["game"]
    yield
    assert path.read_bytes() == before_file
    assert client.get(f"/api/games/{game['id']}").json()["game"] == before


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"action": 999, "seq": 0}, 400, ["action 999", "not legal now"]),
    ({"action": True, "seq": 0}, 400, ["action", "integer"]),
    ({"action": "52", "seq": 0}, 400, ["action", "integer"]),
    ({"action": 52, "seq": "0"}, 400, ["seq", "integer"]),
    ({"action": 52}, 400, ["missing field 'seq'"]),
    ({"seq": 0}, 400, ["missing field 'action'"]),
    ({"action": 52, "seq": 0, "undo": True}, 400, ["unknown field", "undo"]),
    ({"action": 52, "seq": 5}, 409, ["stale move", "seq 5"]),
    ({"action": 52, "seq": -1}, 400, ["seq", "0 or more", "-1"]),
    ({"action": 52, "seq": 0.5}, 400, ["seq", "integer", "0.5"]),
    ([52, 0], 400, ["JSON object"]),
])
def test_a_bad_move_is_refused_and_changes_nothing(client, home, body, status, words):
    game = _new(client, players=3)
    check = _unchanged(client, home, game)
    next(check)
    _error(client.post(f"/api/games/{game['id']}/move", json=body), status, *words)
    next(check, None)


def test_an_illegal_card_is_named_and_the_move_is_refused(client, home):
    game = _new(client, players=2)
    check = _unchanged(client, home, game)
    next(check)
    not_mine = next(c for c in range(52) if c not in {parse_card(x) for x in game["hand"]})
    message = _error(client.post(f"/api/games/{game['id']}/move",
                                 json={"action": not_mine, "seq": 0}), 400, "not legal now")
    assert f"action {not_mine} (discard " in message
    for raw, status, word in [(b"{", 400, "not valid JSON"),
                              (b"x" * (MAX_BODY + 10), 413, "bytes")]:
        _error(client.post(f"/api/games/{game['id']}/move", content=raw,
                           headers={"content-type": "application/json"}), status, word)
    _error(client.post(f"/api/games/{game['id']}/move", content=b'{"action": 52, "seq": 0}',
                       headers={"content-type": "text/plain"}), 415)
    next(check, None)


def test_unknown_games_are_404_and_odd_ids_never_reach_the_disk(client):
    for path in ("/api/games/00000000", "/api/games/ABCDEF12", "/api/games/x%00y",
                 "/api/games/00000000/hint", "/api/games/00000000/replay"):
        _error(client.get(path), 404, "no game")
    _error(client.get("/api/games/..%2F..%2Fkey"), 404)
    _error(client.post("/api/games/00000000/move", json={"action": 52, "seq": 0}), 404)
    _error(client.get("/api/nothing"), 404, "no such path")
    _error(client.delete("/api/games"), 405, "not allowed")


def test_a_finished_game_takes_no_move_and_a_move_out_of_turn_is_refused(client, home):
    game = _finish(client, _new(client, players=2))
    assert game["status"] == "over" and game["to_move"] is None and game["legal"] == []
    assert game["winner"] is not None and game["summary"]["hands"] >= 1
    assert game["events"][-1]["kind"] == "game_over"
    _error(client.post(f"/api/games/{game['id']}/move", json={"action": 52, "seq": game["seq"]}),
           409, "is over")
    saved = json.loads((home / f"{game['id']}.json").read_text())
    assert saved["status"] == "finished" and isinstance(saved["seed"], int)

    other = _new(client, players=3)
    store: GameStore = client.app.state.store  # type: ignore[attr-defined]
    live = store.get(other["id"])
    while live.state.current_player == 0:  # the person's turn played behind the server's back
        live.state.apply_action(live.state.legal_actions()[0])
    _error(client.post(f"/api/games/{other['id']}/move",
                       json={"action": 52, "seq": other["seq"]}), 409, "not your turn")


def test_the_same_move_sent_twice_at_once_is_played_once(client, home):
    game = _new(client, players=3)
    body = {"action": game["legal"][0]["action"], "seq": game["seq"]}
    answers: list[int] = []

    def send() -> None:
        answers.append(client.post(f"/api/games/{game['id']}/move", json=body).status_code)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers) == [200, 409, 409, 409]
    assert client.get(f"/api/games/{game['id']}").json()["game"]["seq"] == 1


def test_a_save_that_fails_answers_500_and_the_last_good_save_is_kept(client, home,
                                                                        monkeypatch):
    game = _new(client, players=3)
    path = home / f"{game['id']}.json"
    before = path.read_bytes()

    def full_disk(self: WebSave, where: Any) -> None:
        raise SaveError(f"cannot save the game to {where}: No space left on device")

    body = {"action": game["legal"][0]["action"], "seq": 0}
    with monkeypatch.context() as patch:
        patch.setattr(WebSave, "save", full_disk)
        _error(client.post(f"/api/games/{game['id']}/move", json=body), 500, "No space left",
               "last good save")
    assert path.read_bytes() == before
    again = client.get(f"/api/games/{game['id']}").json()["game"]
    assert again["seq"] == 0 and again["hand"] == game["hand"]
    assert _move(client, again)["seq"] == 1


# -- restarts -----------------------------------------------------------------------------------
def test_a_restarted_server_resumes_every_game_from_its_save(home):
    with _client(home) as first:
        game = _new(first, players=3, opponents="expert")
        for _ in range(3):
            if game["status"] == "playing":
                game = _move(first, game)
        ids = {g["id"] for g in first.get("/api/games").json()["games"]}
        before = first.get(f"/api/games/{game['id']}").json()["game"]
    with _client(home) as second:
        again = second.get(f"/api/games/{game['id']}").json()["game"]
        assert {g["id"] for g in second.get("/api/games").json()["games"]} == ids
        assert again == before  # the table and this hand's events, rebuilt from the save
        assert again["events"][0]["kind"] == "deal"
        _finish(second, again)


def test_a_save_changed_on_disk_is_refused_in_one_line(home):
    with _client(home) as first:
        game = _new(first, players=3)
    path = home / f"{game['id']}.json"
    data = json.loads(path.read_text())
    data["players"][1]["agent"] = "random"
    path.write_text(json.dumps(data))
    with _client(home) as second:
        _error(second.get(f"/api/games/{game['id']}"), 409, "cannot resume", "changed")


# -- agents that break ----------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "what"), [("test_broken", "failed (RuntimeError)"),
                                            ("test_cheat", "made a move the rules do not allow")])
def test_a_broken_agent_is_taken_over_in_one_line_naming_no_card(home, spec, what):
    with _client(home) as client:
        game = _new(client, players=2, opponents=spec)
        events = list(game["events"])
        while not any(e["kind"] == "takeover" for e in events) and game["status"] == "playing":
            game = _move(client, game)
            events += game["events"]
        takeover = next(e for e in events if e["kind"] == "takeover")
        assert what in takeover["text"] and "expert" in takeover["text"]
        assert not CARD.search(takeover["text"]), takeover["text"]
        assert game["players"][1]["agent"] == "expert"
        saved = WebSave.load(home / f"{game['id']}.json")  # sealed while the game is on
        assert saved.replacements[0].agent == "expert"
    with _client(home) as again:  # the takeover is replayed on resume
        state = again.get(f"/api/games/{game['id']}").json()["game"]
        assert state["players"][1]["agent"] == "expert"
        _finish(again, state)


def test_an_opponent_keeping_a_dealt_31_quiet_leaves_no_trace(client, monkeypatch):
    """The decision is private: no event, and ``seq`` counts only the person's moves."""
    deck = ["AH", "2C", "KH", "3C", "QH", "5D", *[c for c in (
        f"{r}{s}" for s in "CDHS" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10",
                                            "J", "Q", "K"))
        if c not in ("AH", "2C", "KH", "3C", "QH", "5D")]]
    rules = Rules.preset("undeclared_31")
    monkeypatch.setattr(WebSave, "new_state", lambda self: GameState(
        2, rules, deck=deck, dealer=0))
    game = _new(client, players=2, opponents="test_quiet", rules="undeclared_31")
    live = client.app.state.store.get(game["id"])  # type: ignore[attr-defined]
    assert (1, PASS) in live.save.actions  # the opponent did keep it quiet
    assert game["seq"] == 0
    assert [e["kind"] for e in game["events"]] == ["deal", "draw_stock", "discard"]


# -- hints, replays, teaching, statistics ------------------------------------------------------------
def test_a_hint_gives_the_experts_move_and_a_trained_opponents_ranking(client):
    game = _new(client, players=3, opponents="compact:scat_batch_set")
    hint = client.get(f"/api/games/{game['id']}/hint").json()
    legal = {m["action"] for m in game["legal"]}
    assert hint["action"] in legal and hint["label"] and len(hint["why"]) > 20
    top = hint["top"]
    assert 1 <= len(top) <= 3 and {t["action"] for t in top} <= legal
    assert [t["p"] for t in top] == sorted((t["p"] for t in top), reverse=True)
    assert 0 < sum(t["p"] for t in top) <= 1.0001
    assert client.get(f"/api/games/{game['id']}/hint").json() == hint  # same position
    plain = _new(client, players=3, opponents="expert")
    assert client.get(f"/api/games/{plain['id']}/hint").json()["top"] == []
    over = _finish(client, _new(client, players=2))
    _error(client.get(f"/api/games/{over['id']}/hint"), 409, "your turn")


def test_hints_answer_the_calls_of_the_variations(client):
    asked: dict[str, int] = {}
    for rules in ("throw_down", "sudden_death", "hammer"):
        game = _new(client, players=2, rules=rules, opponents="expert")
        while game["status"] == "playing" and asked.get(rules, 0) < 2:
            legal = {m["action"] for m in game["legal"]}
            if max(legal) >= 56:  # a call is on offer
                hint = client.get(f"/api/games/{game['id']}/hint").json()
                assert hint["action"] in legal and hint["why"]
                asked[rules] = asked.get(rules, 0) + 1
            game = _move(client, game)
    assert len(asked) == 3, asked


def test_a_replay_shows_every_hand_only_once_the_game_is_over(client, home):
    game = _new(client, players=3)
    _error(client.get(f"/api/games/{game['id']}/replay"), 409, "still being played")
    game = _finish(client, game)
    replay = client.get(f"/api/games/{game['id']}/replay").json()
    saved = json.loads((home / f"{game['id']}.json").read_text())
    assert len(replay["steps"]) == len(saved["actions"]) + 1
    assert replay["seed"] == saved["seed"] and replay["winner"] == game["winner"][0]
    first = replay["steps"][0]["state"]
    assert all(len(p["hand"]) == 3 for p in first["players"])
    assert sum(len(s["results"]) for s in replay["steps"]) == len(saved["results"])
    assert replay["players"][0]["agent"] == "you"

    uploaded = client.post("/api/replays", json=saved)
    assert uploaded.status_code == 200 and uploaded.json()["replay"] == replay


def test_a_scat_play_replay_file_opens_as_a_replay(client, tmp_path, capsys):
    from scat_cli.game import PlaySession
    from scat_session.seating import new_game

    path = tmp_path / "played.json"
    game = new_game(3, ["greedy", "random"], Rules.preset("hammer"), 5, "Ann")
    PlaySession(game, path, color=False, fast=True, input_fn=lambda prompt: "1").run()
    capsys.readouterr()
    data = json.loads(path.read_text())
    assert data["status"] == "finished"
    replay = client.post("/api/replays", json=data).json()["replay"]
    assert replay["players"][0] == {"seat": 0, "name": "Ann", "agent": "you", "label": ""}
    assert replay["seed"] == 5 and replay["rules"]["name"] == "hammer"
    assert len(replay["steps"]) == len(data["actions"]) + 1


def test_an_uploaded_replay_must_be_a_finished_game_that_re_simulates(client, home):
    game = _new(client, players=2)
    sealed = json.loads((home / f"{game['id']}.json").read_text())
    _error(client.post("/api/replays", json=sealed), 400, "still in progress")
    _error(client.post("/api/replays", json={"hello": 1}), 400, "not a scat replay")
    done = _finish(client, game)
    data = json.loads((home / f"{done['id']}.json").read_text())
    data["actions"] = data["actions"][:-1]
    _error(client.post("/api/replays", json=data), 400)
    _error(client.post("/api/replays", content=b"[" + b" " * (4 * 2**20) + b"]",
                       headers={"content-type": "application/json"}), 413)


def test_a_teaching_game_shows_the_hands_says_so_in_its_save_and_stays_out_of_stats(client,
                                                                                      home):
    game = _new(client, players=3, teaching=True, opponents="expert")
    assert game["teaching"] and all(len(p["hand"]) == 3 for p in game["players"][1:])
    events, state = list(game["events"]), game

    def theirs() -> list[dict[str, Any]]:
        return [e for e in events if e["action"] is not None and e["seat"] != 0]

    while state["status"] == "playing" and not theirs():
        state = _move(client, state)
        events += state["events"]
    assert theirs() and all(e["why"] for e in theirs())
    saved = json.loads((home / f"{game['id']}.json").read_text())
    assert saved["web"] == {"teaching": True} and "mac" in saved
    assert client.get(f"/api/games/{game['id']}/replay").status_code == 200
    _finish(client, client.get(f"/api/games/{game['id']}").json()["game"])
    plain = _finish(client, _new(client, players=2, opponents="random"))
    stats = client.get("/api/stats").json()
    assert stats["teaching"] == {"games": 1, "finished": 1}
    assert [r["spec"] for r in stats["opponents"]] == ["random"]
    row = stats["opponents"][0]
    assert row["games"] == 1 and row["wins"] == (plain["winner"] == [0])
    assert row["hands"] >= 1 and row["lives_lost_per_hand"] == round(
        row["lives_lost"] / row["hands"], 4)
    listed = client.get("/api/games").json()["games"]
    assert [g["id"] for g in listed][:1] in ([plain["id"]], [game["id"]])
    assert {g["teaching"] for g in listed} == {True, False}


def test_a_teaching_flag_edited_into_a_sealed_save_is_refused(home):
    with _client(home) as first:
        game = _new(first, players=3)
    path = home / f"{game['id']}.json"
    data = json.loads(path.read_text())
    data["web"] = {"teaching": True}
    path.write_text(json.dumps(data))
    with _client(home) as second:
        _error(second.get(f"/api/games/{game['id']}"), 409, "changed")


# -- golf and the race to points ------------------------------------------------------------------
def _play_through(client: TestClient, game: dict[str, Any], seed: int,
                  check: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The game to its end, the person playing random legal moves; ``check(state, events)``
    on every STATE. Returns the last STATE and every event."""
    rng = random.Random(seed)
    events = list(game["events"])
    check(game, game["events"])
    for _ in range(2000):
        if game["status"] != "playing":
            break
        game = _move(client, game, rng.choice(game["legal"])["action"])
        events += game["events"]
        check(game, game["events"])
    assert game["status"] == "over"
    return game, events


def _golf_state_is_coherent(game: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Slots as the person's view shows them: three per seat still in, face-down ones null;
    the person's face-up slots are their hand (plus the card held), an opponent's its known
    cards; a golf move's event says what is now face up in that slot and on the pile."""
    assert game["rules"]["play"] == "golf" and game["rules"]["points_to_win"] is None
    for p in game["players"]:
        assert p["points"] is None and p["points_text"] is None
        if not p["slots"]:
            assert p["out"]
            continue
        assert len(p["slots"]) == 3
        up = [c for c in p["slots"] if c is not None]
        if p["seat"] == game["you"]:
            held = game["drawn"] or game["taken"]
            assert sorted(up + ([held] if held else [])) == sorted(game["hand"])
        else:
            assert sorted(up) == sorted(p["known"])
    if game["status"] == "playing":
        assert game["phase"] in ("golf_draw", "golf_place")
        assert None in game["players"][game["you"]]["slots"]  # a slot left to play
    for e in events:
        assert e["kind"] in ("deal", "draw_stock", "draw_discard", "place", "turn_up",
                             "hand_over", "game_over", "takeover"), e
        if e["kind"] in ("place", "turn_up"):
            assert e["action"] - (61 if e["kind"] == "place" else 64) == e["slot"]
            assert e["card"] and e["discarded"] and e["card"] != e["discarded"]
            assert e["card"] in e["text"].replace("♣", "C").replace("♦", "D") \
                .replace("♥", "H").replace("♠", "S")
            if e["hand_number"] == game["hand_number"] and e is events[-1]:
                assert game["players"][e["seat"]]["slots"][e["slot"]] == e["card"]
                assert game["top_discard"] == e["discarded"]


def test_a_whole_golf_game_through_the_api_shows_the_slots_and_ends_with_a_winner(client,
                                                                                  home):
    game = _new(client, players=3, rules="golf", opponents=["random", "greedy"])
    assert game["players"][0]["slots"] == [None, None, None]
    for p in game["players"]:  # one slot face up for each turn played before the person's
        turns = sum(1 for e in game["events"] if e["seat"] == p["seat"]
                    and e["kind"] in ("place", "turn_up"))
        assert 3 - p["slots"].count(None) == turns
    placed = {"place": 0, "turn_up": 0}

    def check(state: dict[str, Any], events: list[dict[str, Any]]) -> None:
        _golf_state_is_coherent(state, events)
        for e in events:
            placed[e["kind"]] = placed.get(e["kind"], 0) + 1
            if e["kind"] == "place" and e["seat"] == 0 and state["seq"] and e is events[0]:
                assert e["card"] == last["held"]  # the card the person held went in
        last["held"] = state["drawn"] or state["taken"]

    last: dict[str, Any] = {"held": None}
    over, events = _play_through(client, game, 5, check)
    assert placed["place"] and placed["turn_up"]
    assert len(over["winner"]) == 1
    winner = over["players"][over["winner"][0]]
    assert not winner["out"] and all(p["out"] for p in over["players"] if p is not winner)
    assert over["result"]["reason"] == "face_up" and over["result"]["points_won"] is None
    assert [e["kind"] for e in events[-2:]] == ["hand_over", "game_over"]

    replay = client.get(f"/api/games/{over['id']}/replay").json()
    for step in replay["steps"]:
        for p in step["state"]["players"]:  # the replay is face up: every slot has its card
            if p["slots"]:
                assert len(p["slots"]) == 3 and None not in p["slots"]
                assert len(p["face_up"]) == 3
    first = replay["steps"][0]["state"]["players"]
    assert all(p["face_up"] == [False, False, False] for p in first)
    ended = [s for s in replay["steps"] if s["results"]]
    for step in ended[:-1]:  # a hand ends with every card of it face up
        before = replay["steps"][step["index"] - 1]["state"]["players"]
        assert all(sum(p["face_up"]) >= 2 for p in before if p["slots"])
    before = client.get(f"/api/games/{over['id']}").json()["game"]
    client.app.state.store.close()  # the server stops (one server per data folder)...
    with _client(home) as again:  # ...and, restarted, rebuilds the golf events from the save
        assert again.get(f"/api/games/{over['id']}").json()["game"] == before


def test_a_golf_game_resumed_mid_hand_rebuilds_its_slots_and_events(home):
    with _client(home) as first:
        game = _new(first, players=2, rules="golf", opponents="random")
        for _ in range(3):
            game = _move(first, game)
        before = first.get(f"/api/games/{game['id']}").json()["game"]
    assert any(e["kind"] in ("place", "turn_up") for e in before["events"])
    with _client(home) as second:
        assert second.get(f"/api/games/{game['id']}").json()["game"] == before


def test_a_whole_points_race_through_the_api_scores_points_and_ends_at_the_goal(client):
    game = _new(client, players=3, rules="french_canadian", opponents=["greedy", "random"])
    goal = game["rules"]["points_to_win"]
    assert game["rules"]["scoring"] == "points" and goal == 31
    seen: dict[int, dict[str, Any]] = {}

    def check(state: dict[str, Any], events: list[dict[str, Any]]) -> None:
        for p in state["players"]:
            assert p["slots"] == [] and not p["out"]
            assert p["points_text"] == f"{p['points']} of {goal} points"
            assert p["lives_text"] == "in the race"
        for e in events:
            if e["kind"] == "hand_over":
                seen[e["result"]["hand_number"]] = e["result"]
        if state["result"] is not None:  # points change only when a hand is scored
            assert state["result"]["points_after"] == [p["points"] for p in state["players"]]

    over, _ = _play_through(client, game, 7, check)
    points = [0, 0, 0]
    for number in sorted(seen):  # each hand adds what it says it scored
        result = seen[number]
        for key, won in result["points_won"].items():
            assert won in (0, 1) and key in result["lives_lost"]
            points[int(key)] += won
        assert result["points_after"] == points
        assert set(result["lives_lost"].values()) == {0}
    final = [p["points"] for p in over["players"]]
    assert final == points
    winner = over["winner"][0]
    assert final[winner] >= goal and final.count(max(final)) == 1 and final[winner] == max(final)
    assert over["result"]["race_winner"] == winner
    assert "wins the race" in over["result"]["text"] or "win the race" in over["result"]["text"]
    summary = over["summary"]
    assert summary["your_points"] == final[0]
    assert summary["place"] == 1 + sum(1 for s in range(3) if final[s] > final[0])
    assert summary["your_hands_lost"] == sum(
        1 for r in seen.values() if "0" in r["lives_lost"] and not r["points_won"]["0"])

    replay = client.get(f"/api/games/{over['id']}/replay").json()
    last = replay["steps"][-1]["state"]["players"]
    assert [p["points"] for p in last] == final and all(p["slots"] == [] for p in last)


def test_a_lives_game_sends_no_points_and_no_slots(client):
    game = _finish(client, _new(client, players=2, opponents="random"))
    assert game["rules"]["play"] == "draw" and game["rules"]["scoring"] == "lives"
    assert game["rules"]["points_to_win"] is None
    assert all(p["slots"] == [] and p["points"] is None and p["points_text"] is None
               for p in game["players"])
    result = game["result"]
    assert result["points_won"] is None and result["points_after"] is None
    assert result["race_winner"] is None and game["summary"]["your_points"] is None


# -- the page and the transport ------------------------------------------------------------------
def test_the_page_is_served_with_its_security_headers(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    api = client.get("/api/options")
    for r in (page, api):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "default-src 'self'" in r.headers["content-security-policy"]
    assert api.headers["cache-control"] == "no-store"


def test_other_host_names_are_refused_on_a_loopback_server(home):
    with _client(home) as client:
        assert client.get("/api/options", headers={"host": "evil.example"}).status_code == 400
        assert client.get("/api/options", headers={"host": "localhost:8731"}).status_code == 200
    with _client(home, allowed_hosts=None) as open_client:
        assert open_client.get("/api/options",
                               headers={"host": "192.168.1.5"}).status_code == 200


def test_a_refused_host_gets_the_apis_json_error_on_api_routes(home):
    """docs/WEB_API.md: every /api error is ``{"error": ...}``; the page keeps Starlette's."""
    with _client(home) as client:
        for path in ("/api/options", "/api/games/0000abcd", "/api/nowhere"):
            r = client.get(path, headers={"host": "evil.example"})
            message = _error(r, 400, "Host", "127.0.0.1, localhost, [::1]")
            assert "evil" not in message and r.headers["cache-control"] == "no-store"
            assert r.headers["x-frame-options"] == "DENY"
        r = client.post("/api/games", json={}, headers={"host": "evil.example"})
        _error(r, 400, "Host")
        page = client.get("/", headers={"host": "evil.example"})
        assert page.status_code == 400 and page.text == "Invalid host header"
        assert client.get("/api/games", headers={"host": "[::1]:8731"}).status_code == 200


def test_the_move_answer_says_how_long_the_server_took(client):
    game = _new(client, players=2)
    r = client.post(f"/api/games/{game['id']}/move",
                    json={"action": game["legal"][0]["action"], "seq": 0})
    assert re.fullmatch(r"move;dur=\d+\.\d\d", r.headers["server-timing"])



def test_the_api_reference_names_every_route_and_every_field(client):
    """docs/WEB_API.md is what the page is written from: every route is in its table and
    every field the server sends is named in it."""
    from starlette.routing import Route

    doc = (Path(__file__).resolve().parents[1] / "docs" / "WEB_API.md").read_text("utf-8")
    for route in client.app.routes:  # type: ignore[attr-defined]
        if isinstance(route, Route):
            for method in sorted((route.methods or {"GET"}) - {"HEAD"}):
                path = route.path.replace("{game_id}", "{id}")
                assert f"`{method} {path}`" in doc, (method, path)
    game = _finish(client, _new(client, players=2, opponents="random"))
    replay = client.get(f"/api/games/{game['id']}/replay").json()
    hint_game = _new(client, players=2, opponents="compact:scat_batch_set")
    hint = client.get(f"/api/games/{hint_game['id']}/hint").json()
    records = [game, game["players"][0], game["result"], game["summary"], game["rules"],
               *game["events"], hint, hint["top"][0], replay, replay["steps"][1],
               replay["steps"][1]["state"], replay["steps"][1]["state"]["players"][0],
               hint_game["legal"][0], client.get("/api/stats").json()["opponents"][0],
               client.get("/api/games").json()["games"][0],
               client.get("/api/options").json()["presets"][0]]
    golf, events = _play_through(client, _new(client, players=2, rules="golf",
                                              opponents="random"), 3, lambda s, e: None)
    race = _finish(client, _new(client, players=2, rules="french_canadian",
                                opponents="random"))
    golf_replay = client.get(f"/api/games/{golf['id']}/replay").json()
    records += [golf["players"][1], race["players"][1], race["result"], race["summary"],
                golf_replay["steps"][1]["state"]["players"][1]]
    for kind in ("place", "turn_up"):  # each golf move's event, as a game sends it
        sent = [e for e in events if e["kind"] == kind]
        assert sent and f"`{kind}`" in doc, kind
        records.append(sent[0])
    for record in records:
        for key in record:
            assert f'"{key}"' in doc or f"`{key}`" in doc, key


def test_the_options_example_lists_the_agents_the_server_offers(home):
    """The example of ``GET /api/options`` in docs/WEB_API.md is the server's own list, in
    its order and with its labels: a page written from the doc offers what is accepted."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "WEB_API.md").read_text("utf-8")
    example = doc.split("### `GET /api/options`", 1)[1].split("```", 2)[1]
    listed = [json.loads(m) for m in re.findall(r'\{"spec": [^{}]*\}', example)]
    with TestClient(create_app(home, token=None), base_url=BASE) as client:
        options = client.get("/api/options").json()
    assert listed == options["agents"]
    assert f'"default_opponent": "{options["default_opponent"]}"' in example


# -- every preset, every table size ----------------------------------------------------------
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_plays_through_the_api(client, preset):
    """Each preset at the largest table its pack allows, the person's moves drawn from the
    server's legal list, random opponents: 150 of the person's moves (a whole game where it
    ends sooner; a race to 31 points at 10 players lasts thousands), every answer a table
    whose hands and slots fit the preset, and a game that ends names its winner."""
    import random

    rng = random.Random(preset)
    players = 10 if preset not in ("italian", "golf") else 6
    game = _new(client, rules=preset, players=players, opponents="random")
    assert len(game["players"]) == players and game["rules"]["name"] == preset
    golf = game["rules"]["play"] == "golf"
    for _ in range(150):
        if game["status"] != "playing":
            break
        game = _move(client, game, rng.choice(game["legal"])["action"])
        for p in game["players"]:  # (at the end the last hand's seats keep its slots)
            if not p["out"]:
                assert len(p["slots"]) == (3 if golf else 0)
            elif game["status"] == "playing" or not golf:
                assert p["slots"] == []
    if game["status"] == "over":
        assert game["winner"] is not None and game["summary"]["hands"] >= 1
    else:
        assert game["legal"] and game["to_move"] == game["you"]


@pytest.mark.parametrize("players", [2, 3, 6, 10])
def test_every_table_size_plays_through_the_api(client, players):
    game = _finish(client, _new(client, players=players, opponents="random"))
    assert game["status"] == "over" and len(game["players"]) == players


# -- what the table tells: places, cards held, a replay's events -------------------------------
def test_the_summary_places_every_seat_by_when_it_went_out(client):
    """SUMMARY's ``places`` ranks every seat: the winner first, a player who went out later
    above one who went out earlier, those out in the same hand sharing a place; ``place`` is
    the person's."""
    for _ in range(3):
        game = _finish(client, _new(client, players=4, opponents="greedy"))
        summary = game["summary"]
        replay = client.get(f"/api/games/{game['id']}/replay").json()
        out_by_hand = [r["eliminated"] for s in replay["steps"] for r in s["results"]
                       if r["eliminated"]]
        places = summary["places"]
        assert places[summary["winner"]] == 1 and summary["place"] == places[game["you"]]
        worst = len(places)
        for group in out_by_hand:  # first out, last place
            assert {places[s] for s in group} == {worst - len(group) + 1}
            worst -= len(group)
        assert sorted(places)[0] == 1


def test_every_seat_holds_one_card_while_the_dealer_decides_on_sudden_death(client):
    """Sudden death deals one card each, face down: the table says each seat holds one (the
    person's own too, unseen), and three once the dealer deals on."""
    game = _new(client, players=3, rules="moyer", opponents="random")
    for _ in range(400):
        if game["phase"] == "sudden_death" or game["status"] != "playing":
            break
        legal = [m["action"] for m in game["legal"]]
        game = _move(client, game, 54 if 54 in legal else legal[0])
    assert game["phase"] == "sudden_death", "the person deals a hand of the game"
    assert game["hand"] == [] and [p["held"] for p in game["players"]] == [1, 1, 1]
    after = _move(client, game, PASS)  # dealt on: the agents play to the person's turn
    sudden = after["phase"] == "sudden_death"  # (or to the person's next deal)
    assert [p["held"] for p in after["players"]] == [
        0 if p["out"] else 1 if sudden else 3 for p in after["players"]]


def test_a_replay_step_carries_the_events_the_live_table_shows(client):
    """Each replay step has the events of its decision as a live game sends them: the move,
    then for each hand it ended a ``hand_over`` with the whole RESULT, then the next deal;
    the players carry the labels the table shows."""
    game = _finish(client, _new(client, players=3, opponents="random"))
    replay = client.get(f"/api/games/{game['id']}/replay").json()
    assert [p["label"] for p in replay["players"]] == ["", "random", "random"]
    assert [e["kind"] for e in replay["steps"][0]["events"]] == ["deal"]
    for step in replay["steps"][1:]:
        kinds = [e["kind"] for e in step["events"]]
        assert step["events"][0]["text"] == step["text"] and step["events"][0]["seat"] == step["seat"]
        ended = [e["result"] for e in step["events"] if e["kind"] == "hand_over"]
        assert ended == step["results"]
        for i, kind in enumerate(kinds):
            if kind == "deal":
                assert kinds[i - 1] == "hand_over"
    assert [e["kind"] for e in replay["steps"][-1]["events"]][-2:] == ["hand_over", "game_over"]
