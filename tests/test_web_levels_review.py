"""Levels, the review of a finished game, and the replay as the person saw it, in the
browser's API and on the page.

The API through Starlette's TestClient: ``GET /api/options`` offers the levels with their
measured lines and the first game's level until a game is over; ``POST /api/games`` with a
``level`` seats that level's agent in every opponent seat, and refuses a level beside
``opponents`` or a level that is none, in one line; ``GET /api/games/{id}/review`` waits
for the game's end (409), then says what its estimates were sampled from and lists the
costliest mistakes first, computed once. The page in Debian's headless Chromium against
``scat serve`` (tests/test_web_page.py's fixtures): a level picked in the form seats it; a
finished game's review opens beside its replay, a mistake clicked shows the table as it
stood then with the opponents' cards face down, and "Show every hand" turns them up.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from scat_env import Rules  # noqa: E402
from scat_session.levels import LEVEL_NAMES, level_spec, levels_payload  # noqa: E402
from scat_session.review import HONESTY  # noqa: E402
from scat_web import games  # noqa: E402
from scat_web.app import create_app  # noqa: E402

BASE = "http://127.0.0.1"
#: Where the page's pictures are left to be looked at.
SHOTS = Path(os.environ.get("SCAT_SHOTS", "/tmp/shots"))


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(games, "REVIEW_WORLDS", 8)  # a review in a second, not a few
    with TestClient(create_app(tmp_path / "web", token=None), base_url=BASE) as c:
        yield c


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"players": 2, **body})
    assert r.status_code == 201, r.text
    return r.json()["game"]


def _finish(client: TestClient, game: dict[str, Any]) -> dict[str, Any]:
    """The game played to its end, the person knocking whenever the rules let them (short
    hands, a short test), else taking the first legal move."""
    while game["status"] == "playing":
        legal = [m["action"] for m in game["legal"]]
        action = 54 if 54 in legal else legal[0]
        r = client.post(f"/api/games/{game['id']}/move",
                        json={"action": action, "seq": game["seq"]})
        assert r.status_code == 200, r.text
        game = r.json()["game"]
    return game


def _one_line(r: Any, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    message = r.json()["error"]
    assert isinstance(message, str) and message and "\n" not in message and len(message) <= 300
    return message


# -- levels ------------------------------------------------------------------------------
def test_options_offer_the_levels_and_the_first_games_level_until_a_game_is_over(client):
    options = client.get("/api/options").json()
    assert options["levels"] == levels_payload()
    assert [lv["name"] for lv in options["levels"]] == list(LEVEL_NAMES)
    assert all(lv["line"].startswith(f"{lv['name']}: ") for lv in options["levels"])
    assert options["default_level"] == "easy"
    _new(client, opponents="random")  # a game begun is not a game played
    assert client.get("/api/options").json()["default_level"] == "easy"
    _finish(client, _new(client, opponents="random"))
    assert client.get("/api/options").json()["default_level"] == "hard"


@pytest.mark.parametrize("name", ["easy", "medium", "hard"])
def test_a_level_seats_its_agent_in_every_opponent_seat(client, name):
    game = _new(client, players=3, level=name)
    want = level_spec(name, 3, Rules())
    assert [p["agent"] for p in game["players"]] == ["you", want, want]
    assert game["level"] == name
    listed = client.get("/api/games").json()["games"][0]
    assert listed["id"] == game["id"] and listed["level"] == name
    again = client.get(f"/api/games/{game['id']}").json()["game"]
    assert again["level"] == name and again["players"][1]["agent"] == want


def test_without_a_level_or_opponents_the_servers_default_opponent_sits(client):
    game = _new(client, players=3)
    default = client.get("/api/options").json()["default_opponent"]
    assert [p["agent"] for p in game["players"]][1:] == [default, default]
    assert game["level"] is None


def test_a_level_and_opponents_together_are_refused_in_one_line(client):
    r = client.post("/api/games", json={"players": 2, "level": "easy", "opponents": "random"})
    message = _one_line(r, 400)
    assert "level" in message and "opponents" in message and "not both" in message
    assert client.get("/api/games").json()["games"] == []  # nothing was made


@pytest.mark.parametrize("level", ["expert", "", 3, ["easy"]])
def test_an_unknown_level_is_refused_naming_the_levels(client, level):
    message = _one_line(client.post("/api/games", json={"level": level}), 400)
    assert all(name in message for name in LEVEL_NAMES), message
    assert client.get("/api/games").json()["games"] == []


# -- the review ----------------------------------------------------------------------------
def test_a_review_waits_for_the_game_to_end(client):
    game = _new(client, opponents="random")
    message = _one_line(client.get(f"/api/games/{game['id']}/review"), 409)
    assert "still being played" in message
    _one_line(client.get("/api/games/0000abcd/review"), 404)


def test_the_review_of_a_finished_game_says_what_it_sampled_and_lists_the_costliest_first(
        client, monkeypatch):
    from scat_session import review

    game = _finish(client, _new(client, opponents="random"))
    calls = []
    real = review.review_game
    monkeypatch.setattr(review, "review_game",
                        lambda *a, **k: calls.append(k) or real(*a, **k))
    r = client.get(f"/api/games/{game['id']}/review")
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["honesty"] == HONESTY and data["seat"] == 0 and data["worlds"] == 8
    assert data["summary"].startswith("You: ") and data["decisions"]
    by_index = {d["index"]: d for d in data["decisions"]}
    costs = [by_index[i]["cost"] for i in data["costliest"]]
    assert len(costs) <= 3 and costs == sorted(costs, reverse=True)
    assert all(by_index[i]["mistake"] for i in data["costliest"])
    mistakes = sorted((d["cost"] for d in data["decisions"] if d["mistake"]), reverse=True)
    assert costs == mistakes[:3]
    for d in data["decisions"]:  # each the person's, each legal move valued
        assert {v["action"] for v in d["values"]} >= {d["played"], d["best"]}
        assert all(0 <= v["win_chance"] <= 1 for v in d["values"])
    # kept: a second request is answered from memory, the same review
    assert client.get(f"/api/games/{game['id']}/review").json() == data
    assert len(calls) == 1


def test_a_finished_golf_game_is_reviewed_too(client):
    """Golf's take-or-draw and place-or-turn-up are the search's too (``agents/search.py``,
    with the golf policy): a finished golf game gets its review, every legal move valued."""
    game = _finish(client, _new(client, rules="golf", opponents="expert"))
    r = client.get(f"/api/games/{game['id']}/review")
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["decisions"] and data["summary"].startswith("You: ")
    for d in data["decisions"]:
        assert {v["action"] for v in d["values"]} >= {d["played"], d["best"]}
        assert all(0 <= v["win_chance"] <= 1 for v in d["values"])


def test_a_replay_step_says_what_the_person_saw_of_each_seat(client):
    """REPLAY's ``known``: the person's own hand, and of each opponent only cards it took
    from the pile and still holds, which the page shows when "Show every hand" is off."""
    game = _finish(client, _new(client, opponents="random"))
    replay = client.get(f"/api/games/{game['id']}/replay").json()
    took = 0
    for step in replay["steps"]:
        me, other = step["state"]["players"]
        assert sorted(me["known"]) == sorted(me["hand"]) or not me["known"]
        assert set(other["known"]) <= set(other["hand"])
        took += bool(other["known"])
    events = [e for step in replay["steps"] for e in step["events"]]
    assert took or not any(e["kind"] == "draw_discard" and e["seat"] == 1 for e in events)


def test_the_api_reference_names_the_new_route_and_fields(client):
    doc = (Path(__file__).resolve().parents[1] / "docs" / "WEB_API.md").read_text("utf-8")
    assert "`GET /api/games/{id}/review`" in doc
    game = _finish(client, _new(client, level="easy"))
    data = client.get(f"/api/games/{game['id']}/review").json()
    options = client.get("/api/options").json()
    records = [data, data["decisions"][0], data["decisions"][0]["values"][0], options,
               options["levels"][0], game, client.get("/api/games").json()["games"][0]]
    for record in records:
        for key in record:
            assert f'"{key}"' in doc or f"`{key}`" in doc, key


# -- the page ------------------------------------------------------------------------------
try:  # the page's tests are skipped, with the reason, where no browser runs; not the API's
    from test_web_page import (  # noqa: F401  (the fixtures)
        Server,
        browser,
        page,
        ready,
        server,
        wait_for_first_step,
    )
    NO_BROWSER = ""
except pytest.skip.Exception as exc:
    NO_BROWSER = str(exc) or "no browser"
needs_browser = pytest.mark.skipif(bool(NO_BROWSER), reason=NO_BROWSER)


def _shot(tab: Any, selector: str, name: str) -> None:
    """A picture of ``selector`` into :data:`SHOTS`, to look at how it reads."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.locator(selector).screenshot(path=str(SHOTS / name))


@needs_browser
def test_a_level_picked_in_the_form_seats_it(page: Any, server: Server) -> None:  # noqa: F811
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-levels input", state="attached")
    assert page.is_checked("#f-level-easy")  # no game over yet: the first game's level
    lines = page.eval_on_selector_all("#f-levels label", "els => els.map(e => e.innerText)")
    assert lines == [lv["line"] for lv in server.get("/api/options")["levels"]]
    page.fill("#f-players", "2")
    page.check("#f-level-medium")
    _shot(page, "#start-form", "level-picker.png")
    with page.expect_request("**/api/games") as sent:
        page.click("#f-start")
    body = sent.value.post_data_json
    assert body["level"] == "medium" and "opponents" not in body
    page.wait_for_selector("#view-table:not([hidden])")
    page.locator("#speed").fill("0")
    game = server.get(f"/api/games/{page.get_attribute('body', 'data-game')}")["game"]
    assert [p["agent"] for p in game["players"]] == ["you", "expert"]
    assert "(expert)" in page.inner_text("#opponents [data-seat='1'] .seat-head")
    assert page.inner_text("#t-level") == "Level: medium"

    # opponents chosen otherwise play instead of the level, and the form says so: one spec
    # for all, or the server's best for the table (neither field sent, as before levels)
    for choice, sends in (("random", {"opponents": "random"}), ("", {})):
        page.goto(server.url + "#new")
        page.wait_for_selector("#f-levels input", state="attached")
        assert page.is_hidden("#f-level-note")
        page.fill("#f-players", "2")
        page.select_option("#f-opponents", choice)
        assert page.is_visible("#f-level-note") and page.is_disabled("#f-level-easy")
        with page.expect_request("**/api/games") as sent:
            page.click("#f-start")
        body = sent.value.post_data_json
        assert "level" not in body and body.get("opponents") == sends.get("opponents")
        page.wait_for_selector("#view-table:not([hidden])")
        ready(page)


def _opponent_cards(tab: Any) -> list[str]:
    return tab.eval_on_selector_all("#opponents [data-seat='1'] .cards .card[data-card]",
                                     "els => els.map(e => e.dataset.card)")


@needs_browser
def test_a_finished_games_review_beside_its_replay_with_the_hands_shown_or_not(
        page: Any, server: Server) -> None:  # noqa: F811
    final = server.play_through_api({"players": 2, "opponents": "random"}, until="game")
    game = final["id"]
    page.goto(server.url + f"#game={game}")
    page.wait_for_selector("#open-review")
    assert page.is_visible("#open-replay")  # beside "Replay this game"
    page.click("#open-review")
    page.wait_for_selector("#review:not([hidden])")
    page.wait_for_selector("body[data-review='ready'], body[data-review='failed']",
                           timeout=180_000)
    assert page.get_attribute("body", "data-review") == "ready", page.inner_text("#review")
    review = server.get(f"/api/games/{game}/review")  # kept: answered at once
    replay = server.get(f"/api/games/{game}/replay")
    wait_for_first_step(page)
    assert page.inner_text("#review-honesty") == review["honesty"]
    assert page.is_visible("#review-honesty") and page.is_visible("#review-costliest")
    assert review["summary"] in page.inner_text("#review-summary")
    listed = page.eval_on_selector_all("#review-costliest [data-index]",
                                       "els => els.map(e => Number(e.dataset.index))")
    assert listed == review["costliest"] and len(listed) <= 3
    by_index = {d["index"]: d for d in review["decisions"]}
    for i in listed:  # each with its line and every legal move's win chance
        item = page.locator(f"#review-costliest [data-index='{i}']")
        assert by_index[i]["text"] in item.inner_text()
        assert item.locator(".top-move").count() == len(by_index[i]["values"])
    _shot(page, "#review", "review-panel.png")

    # a decision clicked: the table as it stood then, seen from the person's seat
    if listed:
        index = listed[0]
        page.click(f"#review-costliest [data-index='{index}'] .review-jump")
    else:
        index = review["decisions"][0]["index"]
        page.click("#review-all-box summary")
        page.click(f"#review-all [data-index='{index}'] .review-jump")
    assert page.get_attribute("body", "data-replay-decision") == str(index)
    assert page.get_attribute("body", "data-show-all") == "0"
    assert not page.is_checked("#r-show-all")
    assert page.get_attribute("body", "data-reviewed-decision") == str(index)
    assert by_index[index]["text"] in page.inner_text("#r-decision")
    assert page.locator("#review .review-item.current").count() >= 1
    state = replay["steps"][index]["state"]
    assert state["to_move"] == 0
    opponent = state["players"][1]
    hand = page.eval_on_selector_all("#hand .card[data-card]", "els => els.map(e => e.dataset.card)")
    assert hand == state["players"][0]["hand"]  # the person's own cards, face up
    assert _opponent_cards(page) == opponent["known"]  # only what was seen taken
    backs = page.locator("#opponents [data-seat='1'] .cards .card.back").count()
    assert backs == len(opponent["hand"]) - len(opponent["known"]) > 0
    _shot(page, "main", "review-jump.png")

    page.click("#r-show-all")  # every hand face up
    assert page.get_attribute("body", "data-show-all") == "1"
    assert _opponent_cards(page) == opponent["hand"]
    page.keyboard.press("v")  # and off again, by its key
    assert _opponent_cards(page) == opponent["known"]

    # a game is over now: a new game is offered at the default level
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-levels input", state="attached")
    assert page.is_checked("#f-level-hard")


@needs_browser
def test_a_golf_games_review_jumps_to_the_slots_as_they_stood(
        page: Any, server: Server) -> None:  # noqa: F811
    """Golf's review in the page: its decisions listed with each move's win chance, and a
    decision clicked shows the person's slots as they stood then, face down where they
    were."""
    final = server.play_through_api({"players": 2, "opponents": "expert", "rules": "golf"},
                                    until="game")
    game = final["id"]
    page.goto(server.url + f"#game={game}")
    page.wait_for_selector("#open-review")
    page.click("#open-review")
    page.wait_for_selector("body[data-review='ready'], body[data-review='failed']",
                           timeout=180_000)
    assert page.get_attribute("body", "data-review") == "ready", page.inner_text("#review")
    review = server.get(f"/api/games/{game}/review")
    replay = server.get(f"/api/games/{game}/replay")
    wait_for_first_step(page)
    assert review["summary"] in page.inner_text("#review-summary")
    index = review["decisions"][-1]["index"]
    page.click("#review-all-box summary")
    page.click(f"#review-all [data-index='{index}'] .review-jump")
    assert page.get_attribute("body", "data-reviewed-decision") == str(index)
    mine = replay["steps"][index]["state"]["players"][0]
    shown = page.eval_on_selector_all("#hand .card[data-card]",
                                      "els => els.map(e => e.dataset.card)")
    assert sorted(shown) == sorted(mine["known"])  # the face-up slots and the card held
    assert page.locator("#hand .card.back").count() == mine["face_up"].count(False)
    _shot(page, "main", "review-golf.png")


@needs_browser
def test_the_review_button_of_a_replay_asks_for_the_review(
        page: Any, server: Server) -> None:  # noqa: F811
    """Opened from the replay: "Reviewing..." while the server plays the decisions out
    (seconds: this game's review is not kept yet), then the review."""
    final = server.play_through_api({"players": 2, "opponents": "random"}, until="game")
    page.goto(server.url + f"#replay={final['id']}")
    wait_for_first_step(page)
    assert page.is_hidden("#review")
    page.click("#r-review")
    # the click shows "Reviewing..." at once, unless the answer came first
    assert ("Reviewing" in page.inner_text("#review-status")
            or page.get_attribute("body", "data-review") == "ready")
    assert page.evaluate("location.hash") == f"#review={final['id']}"
    page.wait_for_selector("body[data-review='ready']", timeout=180_000)
    assert page.is_visible("#review-honesty") and page.is_hidden("#r-review")
    assert page.inner_text("#review-status") == ""
