"""The ``scat serve`` page in a real headless Chromium, against a real server.

The server is started as a person would (``scat serve --port 0`` with its own
``SCAT_HOME``); Playwright drives Debian's ``chromium`` (never a downloaded browser). A
whole two-player game is played by clicking, and the screen is checked against what the
API says at key points: the hand, the discard pile, the lives in the preset's words, a
showdown, the end. A card clicked during the draw phase and a card typed that is not held
are refused with a message and change nothing; a reload in the middle of the game comes
back to the same game; the replay of the finished game, an uploaded save and the results
page open. The start form's opponents (the server's choice for the table, or one per seat),
golf's slots (a whole golf game by clicking, every seat's slots checked against STATE at
each turn), a race to points (the points at the table and in the showdown), a tab the game
has left behind and a trained opponent's hint are checked the same way. Skipped, with the reason, when no chromium binary or no playwright module exists.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright module")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no chromium binary (apt-get install chromium)", allow_module_level=True)

#: Seconds any one wait on the page may take (a move takes milliseconds).
WAIT_MS = 15000
#: Moves the person may make in the whole game before the test calls it stuck.
MAX_MOVES = 200


class Server:
    """``scat serve --port 0 --data HOME/web`` in a subprocess, on 127.0.0.1."""

    def __init__(self, home: Path) -> None:
        self.home = home
        env = {**os.environ, "SCAT_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scat_cli", "serve", "--port", "0", "--data",
             str(home / "web")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline() if self.proc.stdout else ""  # type: ignore[union-attr]
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            self.stop()
            raise AssertionError(f"scat serve printed no address: {line!r}")
        self.url = found.group(0)

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=10) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("scat-home"))
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    p = browser.new_page(viewport={"width": 1000, "height": 800})
    p.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    yield p
    p.close()
    assert not errors, f"the page raised: {errors}"


def ready(page: Any) -> None:
    page.wait_for_selector("body[data-ready='1'], body[data-showdown='1']")


def start(page: Any, server: Server, players: int = 2, opponents: str = "random") -> str:
    """A new game from the start form, the opponents' moves shown at once; its id."""
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    page.fill("#f-players", str(players))
    page.select_option("#f-opponents", opponents)
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    page.locator("#speed").fill("0")
    ready(page)
    game = page.get_attribute("body", "data-game")
    assert page.evaluate("location.hash") == f"#game={game}"
    return game


def settle(page: Any) -> None:
    """Ready for the person's next move, past any showdown on the way."""
    ready(page)
    while page.get_attribute("body", "data-showdown") == "1":
        page.click("#showdown-continue")
        ready(page)


def hand_on_screen(page: Any) -> list[str]:
    return page.eval_on_selector_all("#hand [data-card]", "els => els.map(e => e.dataset.card)")


def check_table(page: Any, state: dict[str, Any]) -> None:
    """The screen shows what the person's STATE holds."""
    assert hand_on_screen(page) == state["hand"]
    assert page.get_attribute("#discard", "data-top") == (state["top_discard"] or "")
    assert page.inner_text("#stock-count") == str(state["stock"])
    assert page.inner_text("#me-lives") == state["players"][0]["lives_text"]
    for p in state["players"][1:]:
        seat = page.locator(f"#opponents [data-seat='{p['seat']}']")
        assert p["lives_text"] in seat.inner_text()
        assert seat.locator(".card.face").count() == len(p["known"])  # no card but known ones


def test_a_whole_game_by_clicking_with_a_reload_and_its_replay(page: Any, server: Server) -> None:
    game = start(page, server)
    state = server.get(f"/api/games/{game}")["game"]
    assert state["phase"] == "draw"
    check_table(page, state)
    assert "pennies" in page.inner_text("#me-lives")  # the standard game's own words

    # a card clicked before drawing: a one-line message, nothing changes
    page.locator("#hand [data-card]").first.click()
    assert "Draw first" in page.inner_text("#message")
    assert server.get(f"/api/games/{game}")["game"]["seq"] == state["seq"]
    assert hand_on_screen(page) == state["hand"]
    assert page.get_attribute("body", "data-phase") == "draw"

    showdowns, moves, reloaded, drew_this_hand = 0, 0, False, False
    while page.get_attribute("body", "data-status") != "over":
        assert moves < MAX_MOVES, "the game did not end"
        if page.get_attribute("body", "data-showdown") == "1":
            result = server.get(f"/api/games/{game}")["game"]["result"]
            text = page.inner_text("#showdown")
            assert f"Showdown · hand {result['hand_number']}" in text
            assert result["rule_text"] in text
            for seat, value in result["values"].items():
                row = page.locator(f"#showdown tr[data-seat='{seat}']")
                assert row.locator(".card").count() == len(result["hands"][seat])
                assert f"\t{value:g}\t" in row.inner_text()  # 13.0 is shown as 13
                if seat != "0":  # turned face up in their places at the table too
                    at_table = page.eval_on_selector_all(
                        f"#opponents [data-seat='{seat}'] .cards [data-card]",
                        "els => els.map(e => e.dataset.card)")
                    assert at_table == result["hands"][seat]
            showdowns += 1
            page.click("#showdown-continue")
            drew_this_hand = False
            ready(page)
            continue
        phase = page.get_attribute("body", "data-phase")
        if phase == "draw" and drew_this_hand and page.locator("[data-action='54']").count():
            page.click("[data-action='54']")  # knock: short hands, a short test
        elif phase == "draw":
            page.click("#stock")
            drew_this_hand = True
        elif phase == "discard":
            page.locator("#hand .card.playable").first.click()
        else:
            page.locator("#actions button").first.click()
        moves += 1
        ready(page)
        if moves >= 3 and not reloaded and page.get_attribute("body", "data-status") == "playing" \
                and page.get_attribute("body", "data-showdown") != "1":
            before = server.get(f"/api/games/{game}")["game"]
            page.reload()
            page.wait_for_selector("body[data-ready='1']")
            assert page.get_attribute("body", "data-game") == game
            assert page.get_attribute("body", "data-seq") == str(before["seq"])
            check_table(page, before)
            assert page.locator("#log li").count() == len(before["events"])
            reloaded = True

    assert reloaded and showdowns >= 1
    final = server.get(f"/api/games/{game}")["game"]
    over = page.inner_text("#gameover")
    assert ("You win!" in over) == (final["winner"] == [0])
    assert f"Hands played\n{final['summary']['hands']}" in over

    page.click("#open-replay")
    page.wait_for_selector("#view-replay:not([hidden])")
    replay = server.get(f"/api/games/{game}/replay")
    assert page.inner_text("#r-pos") == f"step 1 of {len(replay['steps'])}"
    for p in replay["steps"][0]["state"]["players"]:  # every hand face up
        assert page.locator(".replay-table tr").nth(p["seat"] + 1).locator(".card").count() == 3
    page.click("#r-next")
    assert page.inner_text("#r-text") == replay["steps"][1]["text"]
    page.keyboard.press("End")
    assert page.inner_text("#r-pos").startswith(f"step {len(replay['steps'])} ")
    assert "Showdown" in page.inner_text("#r-result")
    page.keyboard.press("Home")
    assert page.inner_text("#r-pos").startswith("step 1 ")
    page.click("#r-showdown")  # the first hand's end
    first_end = next(i for i, st in enumerate(replay["steps"]) if st["results"])
    assert page.inner_text("#r-pos").startswith(f"step {first_end + 1} ")
    assert page.inner_text("#r-text") == replay["steps"][first_end]["text"]
    assert "Showdown" in page.inner_text("#r-result")


def test_keys_draw_and_discard_like_the_terminal(page: Any, server: Server) -> None:
    game = start(page, server)
    state = server.get(f"/api/games/{game}")["game"]
    page.keyboard.press("s")
    ready(page)
    drawn = server.get(f"/api/games/{game}")["game"]
    assert drawn["phase"] == "discard" and drawn["seq"] == state["seq"] + 1
    assert hand_on_screen(page) == drawn["hand"]

    missing = next(c for c in ("KH", "10H", "2C", "3C") if c not in drawn["hand"])
    page.keyboard.type(missing.lower())
    page.keyboard.press("Enter")
    assert "You don't hold" in page.inner_text("#message")
    assert server.get(f"/api/games/{game}")["game"]["seq"] == drawn["seq"]

    page.keyboard.press("d")  # not now: four cards in hand
    assert "discard one first" in page.inner_text("#message")
    card = next(m["key"] for m in drawn["legal"] if m["action"] < 52)
    page.keyboard.type(card)
    page.keyboard.press("Enter")
    settle(page)
    after = server.get(f"/api/games/{game}")["game"]
    assert after["seq"] == drawn["seq"] + 1
    assert after["hand_number"] > drawn["hand_number"] or card.upper() not in after["hand"]
    if after["status"] == "over":
        return

    page.keyboard.press("h")
    page.wait_for_selector("#hint:not([hidden])")
    hint = server.get(f"/api/games/{game}/hint")
    assert hint["why"] in page.inner_text("#hint")


def test_an_uploaded_save_replays_and_the_results_count_the_game(page: Any,
                                                                  server: Server) -> None:
    finished = [g for g in server.get("/api/games")["games"] if g["status"] == "over"]
    if not finished:
        pytest.skip("needs the finished game of the whole-game test (run the module)")
    save = server.home / "web" / f"{finished[0]['id']}.json"
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-start")
    page.set_input_files("#replay-file", str(save))
    page.wait_for_selector("#view-replay:not([hidden])")
    assert save.name in page.inner_text("#r-title")
    assert page.locator(".replay-table tr").count() == 3

    page.set_input_files("#replay-file", {"name": "bad.json", "mimeType": "application/json",
                                          "buffer": b"{\"not\": \"a save\"}"})
    page.wait_for_selector("#message:not(:empty)")
    assert page.inner_text("#message").startswith("bad.json: ")
    assert page.locator(".replay-table tr").count() == 3  # the replay shown stays

    page.click("#nav-results")
    page.wait_for_selector("table.stats")
    row = page.locator("table.stats tr", has_text="random").inner_text()
    stats = server.get("/api/stats")["opponents"]
    games = next(o["games"] for o in stats if o["spec"] == "random")
    assert row.split("\t")[1] == str(games)


def test_the_table_fits_a_phone(browser: Any, server: Server) -> None:
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        phone.set_default_timeout(WAIT_MS)
        start(phone, server, players=4, opponents="greedy")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        box = phone.locator("#stock").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    finally:
        phone.close()


def test_teaching_mode_is_marked_and_shows_the_opponents_cards(page: Any, server: Server) -> None:
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    assert not page.is_checked("#f-teaching")  # off unless asked for
    page.fill("#f-players", "2")
    page.select_option("#f-opponents", "random")
    page.check("#f-teaching")
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    page.locator("#speed").fill("0")
    settle(page)
    state = server.get(f"/api/games/{page.get_attribute('body', 'data-game')}")["game"]
    assert state["teaching"] and page.is_visible("#t-teaching")
    shown = page.eval_on_selector_all("#opponents [data-seat='1'] .cards [data-card]",
                                      "els => els.map(e => e.dataset.card)")
    assert shown == state["players"][1]["hand"]


def test_opponents_default_to_the_servers_choice_and_may_be_chosen_per_seat(
        page: Any, server: Server) -> None:
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    # untouched, the form sends no opponents: the server seats what can play the table
    # (its trained set plays at most 6, so picking it for 7 would be refused)
    page.fill("#f-players", "7")
    with page.expect_request("**/api/games") as sent:
        page.click("#f-start")
    assert "opponents" not in sent.value.post_data_json
    page.locator("#speed").fill("0")
    settle(page)
    assert page.inner_text("#message") == ""
    game = page.get_attribute("body", "data-game")
    agents = [p["agent"] for p in server.get(f"/api/games/{game}")["game"]["players"]]
    assert len(agents) == 7 and "ppo:scat_ppo_set" not in agents

    page.goto(server.url + "#new")
    page.wait_for_selector("#resume-link")  # the game left playing is one click away
    page.fill("#f-players", "3")
    page.check("#f-each")
    seats = page.locator("#f-seats select")
    assert seats.count() == 2 and not page.is_visible("#f-opponents")
    seats.nth(0).select_option("random")
    seats.nth(1).select_option("greedy")
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    settle(page)
    game = page.get_attribute("body", "data-game")
    agents = [p["agent"] for p in server.get(f"/api/games/{game}")["game"]["players"]]
    assert agents == ["you", "random", "greedy"]
    assert "(greedy)" in page.inner_text("#opponents [data-seat='2']")


def test_golf_puts_the_card_held_into_the_slot_clicked(page: Any, server: Server) -> None:
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    page.fill("#f-players", "2")
    page.select_option("#f-opponents", "random")
    page.select_option("#f-rules", "golf")
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    page.locator("#speed").fill("0")
    settle(page)
    game = page.get_attribute("body", "data-game")
    state = server.get(f"/api/games/{game}")["game"]
    assert state["phase"] == "golf_draw"
    assert page.locator("#hand .slot").count() == 3
    page.locator("#hand .slot").first.click()  # a slot before drawing: refused, nothing sent
    assert "Draw first" in page.inner_text("#message")
    page.keyboard.press("s")  # the menu calls it "stock"; s draws, as in the terminal
    ready(page)
    held = server.get(f"/api/games/{game}")["game"]
    assert held["phase"] == "golf_place" and held["seq"] == state["seq"] + 1
    assert page.get_attribute("#hand .card.held", "data-card") == held["drawn"]
    slot = page.locator("#hand .slot.playable").first
    index = int(slot.get_attribute("data-slot") or "-1")
    slot.click()
    settle(page)
    placed = server.get(f"/api/games/{game}")["game"]
    assert placed["seq"] == held["seq"] + 1
    assert f"in slot {index + 1} and discarded the " in page.inner_text("#log")


def slots_on_screen(page: Any, where: str) -> list[str | None]:
    """The cards of ``where``'s slots, left to right; ``None`` for a card back."""
    return page.eval_on_selector_all(where, "els => els.map(e => e.dataset.card || null)")


def check_golf_table(page: Any, state: dict[str, Any]) -> None:
    """Every seat's slots on screen are the STATE's, face-down ones as card backs (the
    person's own too), the card held beside the person's, the log this hand's events."""
    me = state["players"][0]
    if not me["out"]:
        assert slots_on_screen(page, "#hand .slot") == me["slots"]
    held = state["drawn"] or state["taken"]
    assert page.locator("#hand .card.held").count() == (1 if held else 0)
    if held:
        assert page.get_attribute("#hand .card.held", "data-card") == held
    for p in state["players"][1:]:
        if not p["out"]:
            assert slots_on_screen(
                page, f"#opponents [data-seat='{p['seat']}'] .cards .card") == p["slots"]
        assert p["lives_text"] in page.inner_text(f"#opponents [data-seat='{p['seat']}']")
    logged = page.eval_on_selector_all("#log li", "els => els.map(e => e.innerText)")
    assert logged == [e["text"] for e in state["events"]]


def test_a_whole_golf_game_by_clicking_slots_shows_every_slot_as_the_server_says(
        page: Any, server: Server) -> None:
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    page.fill("#f-players", "3")
    page.select_option("#f-opponents", "random")
    page.select_option("#f-rules", "golf")
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    page.locator("#speed").fill("0")
    ready(page)
    game = page.get_attribute("body", "data-game")
    moves, showdowns, kinds = 0, 0, set()
    while True:
        ready(page)
        if page.get_attribute("body", "data-showdown") == "1":
            # one answer may end several hands (the agents play on once the person is out)
            last = server.get(f"/api/games/{game}")["game"]["result"]["hand_number"]
            shown = re.search(r"Showdown · hand (\d+)", page.inner_text("#showdown"))
            assert shown and 1 <= int(shown.group(1)) <= last
            showdowns += 1
            page.click("#showdown-continue")
            continue
        if page.get_attribute("body", "data-status") == "over":
            break
        assert moves < MAX_MOVES, "the game did not end"
        state = server.get(f"/api/games/{game}")["game"]
        check_golf_table(page, state)
        legal = {m["action"] for m in state["legal"]}
        if state["phase"] == "golf_draw":
            take = 53 in legal and (moves % 3 == 0 or 52 not in legal)
            page.click("#discard" if take else "#stock")
        elif state["taken"] or moves % 2:  # into a slot, by a click on it
            page.locator("#hand .slot.playable").first.click()
        else:  # discard the card drawn and turn a slot up, by its button
            page.locator("#actions button[data-action='64'], #actions button[data-action='65'],"
                         " #actions button[data-action='66']").first.click()
        moves += 1
        ready(page)
        if page.get_attribute("body", "data-showdown") != "1":
            after = server.get(f"/api/games/{game}")["game"]
            kinds.update(e["kind"] for e in after["events"])
    final = server.get(f"/api/games/{game}")["game"]
    check_golf_table(page, final)
    assert showdowns >= 1 and {"place", "turn_up"} <= kinds
    over = page.inner_text("#gameover")
    assert ("You win!" in over) == (final["winner"] == [0])
    winner = final["players"][final["winner"][0]]
    assert winner["lives_text"] in over


def test_a_race_to_points_shows_the_points_at_the_table_and_in_the_showdown(
        page: Any, server: Server) -> None:
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    page.fill("#f-players", "3")
    page.select_option("#f-opponents", "random")
    page.select_option("#f-rules", "french_canadian")
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    page.locator("#speed").fill("0")
    ready(page)
    game = page.get_attribute("body", "data-game")

    def points_shown() -> None:
        state = server.get(f"/api/games/{game}")["game"]
        assert page.inner_text("#me-lives") == state["players"][0]["points_text"]
        for p in state["players"][1:]:
            seat = page.locator(f"#opponents [data-seat='{p['seat']}'] .lives")
            assert seat.inner_text() == p["points_text"]

    ready(page)
    points_shown()
    assert page.inner_text("#me-lives") == "0 of 31 points"
    for _ in range(MAX_MOVES):
        ready(page)
        if page.get_attribute("body", "data-showdown") == "1":
            break
        phase = page.get_attribute("body", "data-phase")
        if phase == "draw" and page.locator("[data-action='54']").count():
            page.click("[data-action='54']")  # knock: the hand ends after a round
        elif phase == "draw":
            page.click("#stock")
        elif phase == "discard":
            page.locator("#hand .card.playable").first.click()
        else:
            page.locator("#actions button").first.click()
    else:
        raise AssertionError("no hand ended")
    result = server.get(f"/api/games/{game}")["game"]["result"]
    heads = page.eval_on_selector_all("#showdown th", "els => els.map(e => e.innerText)")
    assert heads == ["Player", "Hand", "Value", "Scored", "Points"]
    # (a dealt 31 may end the next hand in the same answer: the panel is then the one before)
    if f"Showdown · hand {result['hand_number']}" in page.inner_text("#showdown"):
        for seat, won in result["points_won"].items():
            row = page.locator(f"#showdown tr[data-seat='{seat}']").inner_text()
            assert row.split("\t")[-2:] == [f"+{won}" if won else "0",
                                             str(result["points_after"][int(seat)])]
    assert "scores a point" in page.inner_text("#showdown") or \
        "score a point" in page.inner_text("#showdown")
    page.click("#showdown-continue")
    ready(page)
    if page.get_attribute("body", "data-status") != "over":
        points_shown()


def test_a_move_from_a_stale_tab_is_refused_and_the_tab_catches_up(
        page: Any, browser: Any, server: Server) -> None:
    game = start(page, server)
    other = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        other.set_default_timeout(WAIT_MS)
        other.goto(server.url + f"#game={game}")
        ready(other)
        page.click("#stock")  # the first tab draws
        ready(page)
        drawn = server.get(f"/api/games/{game}")["game"]
        other.click("#stock")  # the second still shows the draw: the server refuses it
        other.wait_for_selector("#message:not(:empty)")
        ready(other)
        assert "the game has moved on" in other.inner_text("#message")
        assert server.get(f"/api/games/{game}")["game"]["seq"] == drawn["seq"]
        assert other.get_attribute("body", "data-phase") == "discard"
        assert hand_on_screen(other) == drawn["hand"]
    finally:
        other.close()


def test_a_hint_against_a_trained_policy_shows_its_likeliest_moves(
        page: Any, server: Server) -> None:
    game = start(page, server, opponents="ppo:scat_ppo_set")
    page.click("#hint-button")
    page.wait_for_selector("#hint .top-move")
    hint = server.get(f"/api/games/{game}/hint")
    assert hint["top"], "a trained opponent ranks the moves in the person's seat"
    assert page.inner_text("#hint h3") == f"Hint: {hint['label']}"
    shown = page.locator("#hint .top-move")
    assert shown.count() == len(hint["top"])
    for i, move in enumerate(hint["top"]):
        assert shown.nth(i).inner_text().split()[0] == f"{int(move['p'] * 100 + 0.5)}%"  # Math.round
        assert move["label"] in shown.nth(i).inner_text()
