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
has left behind and a trained opponent's hint are checked the same way. Golf is also played
with its moves animated: the cards that fly and the discard pile shown after every event
follow the server's events, and a showdown shows the slots as the hand ended. A replay is
shown on the game table: the seats named as the live table names them ("Alice (trained AI)"),
every hand face up at its seat as the replay's FULLSTATE says, "Next showdown" on the hand
as it ended (then the next deal); a golf replay's slots in order, the face-down ones marked,
the card held, a race's points. The game-over standings follow the places; sudden death
shows one card at each seat; a phone names no keys and its showdown keeps each column to
one line. Skipped, with the reason, when no chromium binary or no playwright module exists.
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
from hang_limits import hang_limit

sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright module")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no chromium binary (apt-get install chromium)", allow_module_level=True)

#: Milliseconds any one wait on the page may take: a move takes milliseconds, the limit
#: only turns a hang into a failure (tests/hang_limits.py).
WAIT_MS = int(hang_limit(120) * 1000)
#: Moves the person may make in the whole game before the test calls it stuck.
MAX_MOVES = 200


class Server:
    """``scat serve --port 0 --data HOME/web`` in a subprocess, on 127.0.0.1."""

    def __init__(self, home: Path, strength_file: Path | None = None) -> None:
        self.home = home
        env = {**os.environ, "SCAT_HOME": str(home)}
        run = ["-m", "scat_cli"]
        if strength_file is not None:  # the model card's figures read from this file
            run = ["-c", "import pathlib, sys; from scat_session import strength; "
                   f"strength.strength_file = lambda: pathlib.Path({str(strength_file)!r}); "
                   "from scat_cli.main import main; sys.exit(main(sys.argv[1:]))"]
        self.proc = subprocess.Popen(
            [sys.executable, *run, "serve", "--port", "0", "--data", str(home / "web")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline() if self.proc.stdout else ""  # type: ignore[union-attr]
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=([\w-]+)", line)
        if not found:
            self.stop()
            raise AssertionError(f"scat serve printed no address: {line!r}")
        #: The printed address, token and all: what a person opens (a fresh browser page
        #: has no cookie yet, so every page opens it).
        self.url = found.group(0)
        self.base, self.token = found.group(1), found.group(2)

    def get(self, path: str) -> Any:
        req = urllib.request.Request(self.base + path,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=hang_limit(120)) as r:
            return json.loads(r.read())

    def post(self, path: str, body: dict[str, Any]) -> Any:
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=hang_limit(120)) as r:
            return json.loads(r.read())

    def play_through_api(self, body: dict[str, Any], until: str) -> dict[str, Any]:
        """A game made and played through the API, the person choosing a legal move by a
        fixed rule (the first hand is short: knocking when it may), until ``until`` is
        ``"hand"`` (the first hand is over) or ``"game"``; its last STATE."""
        game = self.post("/api/games", body)["game"]
        for n in range(2000):
            if game["status"] == "over" or (until == "hand" and game["result"]):
                return game
            legal = [m["action"] for m in game["legal"]]
            action = 54 if 54 in legal else legal[(n * 7) % len(legal)]
            game = self.post(f"/api/games/{game['id']}/move",
                             {"action": action, "seq": game["seq"]})["game"]
        raise AssertionError("the game did not end")

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


def showdown_hand(page: Any) -> int | None:
    """The number of the hand whose showdown the page shows (None: no showdown title)."""
    shown = re.search(r"Showdown · hand (\d+)", page.inner_text("#showdown"))
    return int(shown.group(1)) if shown else None


def start(page: Any, server: Server, players: int = 2, opponents: str = "random",
          rules: str | None = None, speed: str = "0") -> str:
    """A new game from the start form (the opponents' moves shown at once unless ``speed``
    says otherwise: "1" is "fast", every move flies); its id."""
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    page.fill("#f-players", str(players))
    page.select_option("#f-opponents", opponents)
    if rules is not None:
        page.select_option("#f-rules", rules)
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    page.locator("#speed").fill(speed)
    ready(page)
    game = page.get_attribute("body", "data-game")
    assert page.evaluate("location.hash") == f"#game={game}"
    return game


def test_the_printed_address_lets_the_page_in_and_leaves_no_token_in_the_address_bar(
        page: Any, server: Server) -> None:
    """The token's way in, in the browser: the bare address says how to get in; the
    printed one sets the cookie and lands on the page without the token, and the page then
    plays under the security headers (its scripts, styles and images within the CSP)."""
    bare = page.goto(server.base + "/")
    assert bare is not None and bare.status == 403
    assert "open the URL that scat serve printed" in page.inner_text("body")
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text)
            if "Content Security Policy" in msg.text else None)
    game = start(page, server)
    assert server.token not in page.url and page.url.startswith(server.base + "/#game=")
    cookies = page.context.cookies()
    assert [(c["httpOnly"], c["sameSite"]) for c in cookies] == [(True, "Strict")]
    assert server.get(f"/api/games/{game}")["game"]["seq"] == 0 and not violations


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
            # the attribute may still be the last showdown's while the page draws this one
            # (a hand can end before the person moves: a dealt 31): wait for its number
            title = f"Showdown · hand {result['hand_number']}"
            page.locator("#showdown", has_text=re.compile(r"Showdown · hand \d+")).wait_for()
            if showdown_hand(page) < result["hand_number"]:
                # the page shows an earlier hand's, waiting for the person, while the
                # server's result is already the next hand's, ended as it was dealt (a
                # dealt 31): it comes after this one's "continue"
                try:
                    page.locator("#showdown", has_text=title).wait_for(timeout=5000)
                except Exception:  # noqa: BLE001 - playwright's TimeoutError
                    page.click("#showdown-continue")
                    ready(page)
                    continue
            text = page.inner_text("#showdown")
            assert title in text
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
    # the view opens at once; its first step is drawn when the replay has been fetched
    wait_for_first_step(page)
    replay = server.get(f"/api/games/{game}/replay")
    assert page.inner_text("#r-pos").startswith("step 1 of ")
    assert page.is_visible("#view-table")  # on the game table, every hand face up
    check_replay_frame(page, replay)
    page.click("#r-next")
    assert page.inner_text("#r-text") == replay["steps"][1]["text"]
    check_replay_frame(page, replay)
    page.keyboard.press("End")
    assert page.get_attribute("body", "data-replay-decision") == str(len(replay["steps"]) - 1)
    assert "Showdown" in page.inner_text("#showdown")
    page.keyboard.press("Home")
    assert page.inner_text("#r-pos").startswith("step 1 ")
    page.click("#r-showdown")  # the first hand's end
    first_end = next(i for i, st in enumerate(replay["steps"]) if st["results"])
    assert page.get_attribute("body", "data-replay-decision") == str(first_end)
    assert page.inner_text("#r-text") == replay["steps"][first_end]["text"]
    assert check_replay_frame(page, replay) == replay["steps"][first_end]["results"][0]


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
    wait_for_first_step(page)
    assert save.name in page.inner_text("#r-title")
    assert page.locator("#opponents [data-seat]").count() == 1  # on the table, two players
    shown = page.inner_text("#r-pos")

    page.set_input_files("#replay-file", {"name": "bad.json", "mimeType": "application/json",
                                          "buffer": b"{\"not\": \"a save\"}"})
    page.wait_for_selector("#message:not(:empty)")
    assert page.inner_text("#message").startswith("bad.json: ")
    assert page.inner_text("#r-pos") == shown  # the replay shown stays
    assert page.locator("#opponents [data-seat]").count() == 1

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


def test_a_hand_over_before_the_persons_first_move_names_its_game(page: Any,
                                                                  server: Server) -> None:
    """The opponents' first moves can end a hand (a 31 drawn before the person's turn): its
    showdown waits for the person, and the page names the game on the table meanwhile. The
    start is answered with a game whose first hand is already over."""
    over = server.play_through_api({"players": 3, "opponents": "random"}, until="hand")
    assert over["result"] and over["status"] != "over"

    def answer(route: Any) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        route.fulfill(status=201, content_type="application/json",
                      body=json.dumps({"game": over}))

    page.route("**/api/games", answer)
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    page.click("#f-start")
    page.wait_for_selector("body[data-showdown='1']")
    assert page.get_attribute("body", "data-game") == over["id"]
    assert page.evaluate("location.hash") == f"#game={over['id']}"


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
    # "the best the server has" sends no opponents and no level: the server seats what can
    # play the table (untouched, the form sends the level it preselects)
    page.fill("#f-players", "7")
    page.select_option("#f-opponents", "")
    with page.expect_request("**/api/games") as sent:
        page.click("#f-start")
    assert "opponents" not in sent.value.post_data_json
    assert "level" not in sent.value.post_data_json
    page.locator("#speed").fill("0")
    settle(page)
    assert page.inner_text("#message") == ""
    game = page.get_attribute("body", "data-game")
    agents = [p["agent"] for p in server.get(f"/api/games/{game}")["game"]["players"]]
    assert len(agents) == 7 and agents[1] == "compact:scat_batch_set"

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


def test_each_opponent_shows_how_strong_the_model_card_measured_it(
        page: Any, tmp_path: Path) -> None:
    """The seats of a policy the card measured at this table say its figure under the
    name; a seat it did not measure says nothing. The table's picture is left in the
    test's ``tmp_path`` (``strength.png``) to look at."""
    figures = tmp_path / "presets.json"
    cell = {"spec": "compact:scat_batch_set", "x_fair": 1.31, "x_fair_ci95": [1.27, 1.35],
            "games": 4002, "learned": True}
    figures.write_text(json.dumps({"command": "test", "seed": 1,
                                   "cells": {"standard": {"3": cell}}}), encoding="utf-8")
    srv = Server(tmp_path / "home", strength_file=figures)
    try:
        start(page, srv, players=3, opponents="")
        said = "wins 1.31x its fair share against expert at 3 players (model card)"
        for seat in (1, 2):
            shown = page.locator(f"#opponents [data-seat='{seat}'] .strength")
            assert shown.is_visible() and shown.inner_text() == said
        page.screenshot(path=str(tmp_path / "strength.png"))
        start(page, srv, players=3, opponents="random")
        assert page.locator("#opponents .strength").count() == 0
    finally:
        srv.stop()


def test_golf_puts_the_card_held_into_the_slot_clicked(page: Any, server: Server) -> None:
    game = start(page, server, 2, rules="golf")
    settle(page)
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
    game = start(page, server, 3, rules="golf")
    moves, showdowns, kinds = 0, 0, set()
    while True:
        ready(page)
        if page.get_attribute("body", "data-showdown") == "1":
            # one answer may end several hands (the agents play on once the person is out)
            last = server.get(f"/api/games/{game}")["game"]["result"]["hand_number"]
            shown = showdown_hand(page)
            assert shown is not None and 1 <= shown <= last
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
    game = start(page, server, 3, rules="french_canadian")

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
    game = start(page, server, opponents="compact:scat_batch_set")
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


#: Watches the table while moves are animated: every value the discard pile's top takes
#: (each record's old value, then the value now) and every card that flies (null: a back).
WATCH_TABLE = """() => {
  const seen = { tops: [], flown: [] };
  const pile = new MutationObserver((records) => {
    for (const r of records) seen.tops.push(r.oldValue);
  });
  pile.observe(document.getElementById("discard"),
               { attributes: true, attributeFilter: ["data-top"], attributeOldValue: true });
  const fly = new MutationObserver((records) => {
    for (const r of records) {
      for (const n of r.addedNodes) seen.flown.push(n.dataset ? n.dataset.card || null : null);
    }
  });
  fly.observe(document.getElementById("fly-layer"), { childList: true });
  window.scatWatch = () => {
    pile.takeRecords().forEach((r) => seen.tops.push(r.oldValue));
    fly.takeRecords().forEach((r) => r.addedNodes.forEach(
      (n) => seen.flown.push(n.dataset ? n.dataset.card || null : null)));
    pile.disconnect();
    fly.disconnect();
    return { tops: [...seen.tops, document.getElementById("discard").dataset.top],
             flown: seen.flown };
  };
}"""


def squeeze(values: list[Any]) -> list[Any]:
    """``values`` without a value repeated right after itself."""
    return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]


def wait_for_first_step(page: Any) -> None:
    """Wait until the replay view has drawn its first step.

    A locator wait, not ``wait_for_function``: the page's Content-Security-Policy forbids
    ``eval``, and Playwright polls a string predicate with ``eval`` whenever the condition is
    not already true at the first look (a slower machine), so such a wait fails only there.
    """
    page.locator("#r-pos", has_text=re.compile(r"^step ")).wait_for()


def expected_table(before: dict[str, Any], after: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """The discard pile's top after each of ``after``'s events, from ``before``'s pile, and
    the cards that fly, as the events say: a draw from the stock flies a back (the person's
    own the card drawn), a take its card, a discard its card, a golf ``place`` the card put
    into the slot and then the card that lay there, a ``turn_up`` the card drawn. The pile
    the events build must be the one the server ends with."""
    pile = list(before["discard_pile"])
    tops, flown = [pile[-1] if pile else ""], []
    events = after["events"]
    for i, e in enumerate(events):
        if e["kind"] == "draw_stock":
            last_own = e["seat"] == after["you"] and i == len(events) - 1
            flown.append(after["drawn"] if last_own else None)
        elif e["kind"] == "draw_discard":
            assert pile and pile[-1] == e["card"], (pile, e)
            pile.pop()
            flown.append(e["card"])
        elif e["kind"] == "discard":
            pile.append(e["card"])
            flown.append(e["card"])
        elif e["kind"] == "place":
            pile.append(e["discarded"])
            flown += [e["card"], e["discarded"]]
        elif e["kind"] == "turn_up":
            pile.append(e["discarded"])
            flown.append(e["discarded"])
        tops.append(pile[-1] if pile else "")
    assert pile == after["discard_pile"]
    return squeeze(tops), flown


def golf_slots_from(events: list[dict[str, Any]], seats: int) -> list[list[str | None]]:
    """Every seat's slots as this hand's events left them (None: never turned up)."""
    slots: list[list[str | None]] = [[None] * 3 for _ in range(seats)]
    for e in events:
        if e["kind"] in ("place", "turn_up"):
            slots[e["seat"]][e["slot"]] = e["card"]
    return slots


def test_golf_moves_fly_their_cards_and_the_pile_follows_every_event_to_the_showdown(
        page: Any, server: Server) -> None:
    game = start(page, server, 3, rules="golf", speed="1")  # "fast": every move flies
    state = server.get(f"/api/games/{game}")["game"]
    hand_events = list(state["events"])  # this hand's, from its deal
    checked: set[str] = set()
    for decision in range(12):
        assert page.get_attribute("body", "data-showdown") != "1"
        legal = {m["action"] for m in state["legal"]}
        turn = decision // 2  # the person's turns: stock, pile, stock, pile...
        if state["phase"] == "golf_draw":
            target = "#discard" if turn % 2 and 53 in legal else "#stock"
        elif state["taken"] or turn % 4 == 2:  # into a slot by a click on it
            target = "#hand .slot.playable"
        else:  # the card drawn discarded, a slot turned up, by its button
            target = "#actions button[data-action='64'], #actions button[data-action='65'], " \
                     "#actions button[data-action='66']"
        page.evaluate(WATCH_TABLE)
        with page.expect_response(lambda r: r.url.endswith("/move")) as answer:
            page.locator(target).first.click()
        after = answer.value.json()["game"]
        ready(page)
        seen = page.evaluate("window.scatWatch()")
        kinds = [e["kind"] for e in after["events"]]
        if "hand_over" in kinds:
            # the showdown waits for the person: the slots are those the hand ended with
            assert page.get_attribute("body", "data-showdown") == "1"
            ended = hand_events + after["events"][:kinds.index("hand_over")]
            final = golf_slots_from(ended, len(state["players"]))
            assert slots_on_screen(page, "#hand .slot") == final[0]
            assert page.locator("#hand .held").count() == 0
            for seat in range(1, len(final)):
                assert slots_on_screen(
                    page, f"#opponents [data-seat='{seat}'] .cards .card") == final[seat]
            assert checked >= {"draw_stock", "draw_discard", "place", "turn_up"}, checked
            return
        tops, flown = expected_table(state, after)
        assert squeeze(seen["tops"]) == tops, after["events"]
        assert seen["flown"] == flown, after["events"]
        check_golf_table(page, server.get(f"/api/games/{game}")["game"])  # and its log
        checked.update(kinds)
        hand_events += after["events"]
        state = after
    raise AssertionError("no golf hand ended in 12 of the person's decisions")


def test_a_golf_replay_shows_the_slots_in_order_marks_the_face_down_and_the_card_held(
        page: Any, server: Server) -> None:
    final = server.play_through_api({"players": 2, "opponents": "random", "rules": "golf"},
                                    until="game")
    replay = server.get(f"/api/games/{final['id']}/replay")
    page.goto(server.url + f"#replay={final['id']}")
    wait_for_first_step(page)
    held_seen, down_seen, showdowns = 0, 0, 0
    while True:
        result = check_replay_frame(page, replay)
        showdowns += result is not None
        if result is None:
            st = replay["steps"][int(page.get_attribute("body", "data-replay-decision") or 0)]
            st = st["state"]
            for p in st["players"]:
                if p["out"]:
                    continue
                where = seat_selector(p["seat"], st, replay)
                down = page.eval_on_selector_all(
                    where, "els => els.map((e) => e.classList.contains('face-down'))")
                assert down == [not up for up in p["face_up"]], p
                down_seen += sum(down)
                holding = st["drawn"] if st["drawn"] and st["to_move"] == p["seat"] else None
                box = "#hand" if p["seat"] == replay["you"] else \
                    f"#opponents [data-seat='{p['seat']}'] .cards"
                held = page.eval_on_selector_all(f"{box} .card.held",
                                                 "els => els.map((e) => e.dataset.card)")
                assert held == ([holding] if holding else []), p
                held_seen += holding is not None
        if page.is_disabled("#r-next"):
            break
        page.keyboard.press("ArrowRight")
    assert held_seen and down_seen and showdowns >= 1


def test_a_race_replay_shows_every_players_points(page: Any, server: Server) -> None:
    # a teaching game's replay is open while it is played: one hand is enough
    state = server.play_through_api({"players": 3, "opponents": "random",
                                     "rules": "french_canadian", "teaching": True}, until="hand")
    replay = server.get(f"/api/games/{state['id']}/replay")
    page.goto(server.url + f"#replay={state['id']}")
    wait_for_first_step(page)
    while not page.is_disabled("#r-next"):
        page.keyboard.press("ArrowRight")
        if check_replay_frame(page, replay) is not None:
            break
        st = replay["steps"][int(page.get_attribute("body", "data-replay-decision") or 0)]
        for p in st["state"]["players"]:
            where = "#me-lives" if p["seat"] == replay["you"] else \
                f"#opponents [data-seat='{p['seat']}'] .lives"
            assert page.inner_text(where) == p["points_text"]
    # the hand's end: what each scored, in the showdown's columns
    assert page.eval_on_selector_all("#showdown th", "els => els.map(e => e.innerText)") == \
        ["Player", "Hand", "Value", "Scored", "Points"]
    result = check_replay_frame(page, replay)
    assert result is not None and any(result["points_won"].values())


# -- the table tells the truth: standings, the replay on the table, sudden death, a phone ----
def table_cards(page: Any, replay: dict[str, Any]) -> dict[int, list[str]]:
    """The cards face up at each seat of the table, left to right (golf's slots in order),
    the card a seat holds mid-turn beside them left out."""
    you = replay["you"] if replay["you"] is not None else 0
    cards = {you: page.eval_on_selector_all("#hand .card[data-card]:not(.held)",
                                            "els => els.map((e) => e.dataset.card)")}
    for p in replay["players"]:
        if p["seat"] != you:
            cards[p["seat"]] = page.eval_on_selector_all(
                f"#opponents [data-seat='{p['seat']}'] .cards .card[data-card]:not(.held)",
                "els => els.map((e) => e.dataset.card)")
    return cards


def seat_selector(seat: int, state: dict[str, Any], replay: dict[str, Any]) -> str:
    """The cards of ``seat`` on the table in a replay (golf: its slots in order)."""
    if seat == replay["you"]:
        return "#hand [data-slot]" if state["players"][seat]["slots"] else "#hand .card"
    return f"#opponents [data-seat='{seat}'] .cards .card:not(.held)"


def check_replay_frame(page: Any, replay: dict[str, Any]) -> dict[str, Any] | None:
    """The replay on the table shows what REPLAY says. At a showdown (its panel under the
    table) every hand the RESULT shows lies face up at its seat, as the hand ended, and the
    title names that hand; returns the RESULT. Otherwise the step's FULLSTATE: every seat's
    cards (golf's slots in order), the pile's top, the stock, each seat's lives or points
    in the table's words, the hand in the title; returns None."""
    k = int(page.get_attribute("body", "data-replay-decision") or "-1")
    step = replay["steps"][k]
    cards = table_cards(page, replay)
    hand_shown = re.search(r"hand (\d+) ·", page.inner_text("#t-title"))
    assert hand_shown, page.inner_text("#t-title")
    if page.is_visible("#showdown"):
        heading = showdown_hand(page)
        assert heading is not None and heading == int(hand_shown.group(1))
        result = next(r for r in step["results"] if r["hand_number"] == heading)
        for seat, hand in result["hands"].items():
            assert cards[int(seat)] == hand, (k, seat)
        return result
    st = step["state"]
    assert int(hand_shown.group(1)) == st["hand_number"]
    golf = replay["rules"]["play"] == "golf"
    for p in st["players"]:
        if not p["out"]:
            assert cards[p["seat"]] == (p["slots"] if golf else p["hand"]), (k, p)
        where = "#me-lives" if p["seat"] == replay["you"] else \
            f"#opponents [data-seat='{p['seat']}'] .lives"
        assert page.inner_text(where) == (p["points_text"] or p["lives_text"]), (k, p)
    assert page.get_attribute("#discard", "data-top") == (st["top_discard"] or "")
    assert page.inner_text("#stock-count") == str(st["stock"])
    return None


def test_the_game_over_standings_list_the_players_by_place(page: Any, server: Server) -> None:
    """A player who went out later finishes above the person who went out first: the
    standings follow the places, as "Your place" does."""
    for _ in range(10):  # the person knocks at once, so it is usually out first
        final = server.play_through_api({"players": 3, "opponents": "greedy"}, until="game")
        if final["summary"]["place"] == 3:
            break
    else:
        raise AssertionError("the person never finished last in 10 games")
    places = final["summary"]["places"]
    page.goto(server.url + f"#game={final['id']}")
    page.wait_for_selector("#gameover:not([hidden])")
    assert "Your place\n3rd" in page.inner_text("#gameover")
    names = ["You", *(f"{p['name']} (" for p in final["players"][1:])]
    rows = page.eval_on_selector_all("#gameover table.standings tr",
                                     "els => els.slice(1).map((e) => e.innerText)")
    seats = [next(s for s, name in enumerate(names) if name in row) for row in rows]
    assert seats == sorted(range(3), key=lambda s: (places[s], s))
    assert seats[-1] == final["you"] and rows[-1].startswith("3rd\tYou")


def test_the_replay_is_played_on_the_game_table_naming_players_as_the_table_does(
        page: Any, server: Server) -> None:
    """A replay is the game table, step by step: the seats named as in the live game
    ("Alice (trained AI)", never the agent's spec), every hand face up where it is held, the pile,
    the stock, the lives, this hand's log; a click on a card plays nothing."""
    final = server.play_through_api({"players": 3, "opponents": "compact:scat_batch_set"},
                                    until="game")
    replay = server.get(f"/api/games/{final['id']}/replay")
    page.goto(server.url + f"#replay={final['id']}")
    wait_for_first_step(page)
    assert page.is_visible("#view-table") and page.is_visible("#view-replay")
    for seat in (1, 2):
        head = page.inner_text(f"#opponents [data-seat='{seat}'] .seat-head")
        assert head.startswith(f"{final['players'][seat]['name']} (trained AI)"), head
    assert "compact:" not in page.inner_text("main")
    assert not page.is_visible("#actions") and not page.is_visible("#hint-button")
    page.locator("#hand .card").first.click()  # nothing is played, nothing is said
    assert page.inner_text("#message") == ""
    shown = 0
    for _ in range(60):
        check_replay_frame(page, replay)
        logged = page.eval_on_selector_all("#log li", "els => els.map((e) => e.innerText)")
        assert logged and logged[0].startswith("Hand ")  # this hand's log, from its deal
        assert page.inner_text("#r-text") in logged
        shown += 1
        page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    check_replay_frame(page, replay)
    assert shown == 60


def test_next_showdown_lands_on_the_showdown_of_the_hand_then_the_next_deal(
        page: Any, server: Server) -> None:
    """"Next showdown" shows the hand as it ended: every hand at its seat, the showdown's
    panel under it; the step after it is the next hand's deal, with no showdown shown."""
    final = server.play_through_api({"players": 3, "opponents": "random"}, until="game")
    replay = server.get(f"/api/games/{final['id']}/replay")
    results = [r for s in replay["steps"] for r in s["results"]]
    page.goto(server.url + f"#replay={final['id']}")
    wait_for_first_step(page)
    i = 0
    while i < min(3, len(results)):
        result = results[i]
        page.click("#r-showdown")
        shown = check_replay_frame(page, replay)
        assert shown == result
        assert page.is_visible("#showdown") and page.inner_text("#t-title").count(
            f"hand {result['hand_number']} ") == 1
        if result is results[-1]:
            break
        page.keyboard.press("ArrowRight")
        after = check_replay_frame(page, replay)
        if after is not None:  # a dealt 31 ends the next hand at once: its showdown is next,
            assert after == results[i + 1]  # and "Next showdown" goes on past it
            i += 2
            continue
        assert f"hand {result['hand_number'] + 1} " in page.inner_text("#t-title")
        first = page.locator("#log li").first.inner_text()
        assert first.startswith(f"Hand {result['hand_number'] + 1} · ")
        page.keyboard.press("ArrowLeft")
        assert check_replay_frame(page, replay) == result
        i += 1


def test_sudden_death_shows_one_card_at_each_seat(page: Any, server: Server) -> None:
    """Moyer's sudden death deals one card each, face down: the table shows one card back
    at every seat, the person's own included, until the dealer decides."""
    game = server.post("/api/games", {"players": 3, "opponents": "random", "rules": "moyer"})
    game = game["game"]
    for _ in range(400):
        if game["phase"] == "sudden_death" or game["status"] != "playing":
            break
        legal = [m["action"] for m in game["legal"]]
        action = 54 if 54 in legal else legal[0]
        game = server.post(f"/api/games/{game['id']}/move",
                           {"action": action, "seq": game["seq"]})["game"]
    assert game["phase"] == "sudden_death", "the person deals a hand of the game"
    page.goto(server.url + f"#game={game['id']}")
    ready(page)
    assert page.locator("#hand .card").count() == 1
    assert page.locator("#hand .card.back").count() == 1
    for p in game["players"][1:]:
        if not p["out"]:
            seat = f"#opponents [data-seat='{p['seat']}'] .cards .card"
            assert page.locator(seat).count() == 1 == p["held"]
    assert "call sudden death" in page.inner_text("#prompt")


def text_lines(page: Any, selector: str) -> list[float]:
    """How many lines the text of each element of ``selector`` takes: its text's height
    over the height of one line of the same font."""
    return page.eval_on_selector_all(selector, """els => els.map((e) => {
      const r = document.createRange();
      r.selectNodeContents(e);
      const rects = [...r.getClientRects()].filter((x) => x.width > 0);
      if (!rects.length) return 0;
      const top = Math.min(...rects.map((x) => x.top));
      const bottom = Math.max(...rects.map((x) => x.bottom));
      return (bottom - top) / (parseFloat(getComputedStyle(e).fontSize) * 1.25);
    })""")


def test_a_phone_names_no_keys_and_its_showdown_keeps_each_column_to_one_line(
        browser: Any, server: Server) -> None:
    """On a touch screen nothing says to type a card or press Enter, and at 390 px the
    showdown fits the screen with every column's text on one line."""
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True,
                             has_touch=True)
    try:
        phone.set_default_timeout(WAIT_MS)
        start(phone, server, players=4, opponents="greedy")
        prompts = []
        for moves in range(MAX_MOVES):
            ready(phone)
            if phone.get_attribute("body", "data-showdown") == "1":
                break
            prompts.append(phone.inner_text("#prompt"))
            assert phone.locator("#actions kbd:visible").count() == 0
            assert phone.inner_text("#hint-button") == "Hint"
            assert not phone.is_visible("#keys")
            phase = phone.get_attribute("body", "data-phase")
            if phase == "draw" and moves > 2 and phone.locator("[data-action='54']").count():
                phone.click("[data-action='54']")  # knock: a short hand
            elif phase == "draw":
                phone.click("#stock")
            elif phase == "discard":
                phone.locator("#hand .card.playable").first.click()
            else:
                phone.locator("#actions button").first.click()
        else:
            raise AssertionError("no hand ended")
        assert any(p.startswith("Now discard a card: tap it") for p in prompts), prompts
        for p in prompts:
            assert "type it" not in p and "Enter" not in p, p
        assert phone.inner_text("#showdown-continue") in ("Next hand", "See the end of the game")
        panel = phone.locator("#showdown")
        width = panel.evaluate("(e) => [e.scrollWidth, e.clientWidth]")
        assert width[0] <= width[1], width  # no column pushed out of the screen
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        lines = text_lines(phone, "#showdown table.result td:not(:nth-child(2))")
        assert lines and max(lines) < 1.5, lines
    finally:
        phone.close()
