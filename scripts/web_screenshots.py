"""Screenshots and timings of the ``scat serve`` page, in a real headless Chromium.

Starts ``scat serve --port 0`` with a temporary ``SCAT_HOME``, plays a 3-player game by
clicking (against the opponents the start form offers by default: the server's trained
policy set; ``--opponents greedy`` for another), and writes into ``docs/img/``:

- ``web_turn.png``: the table at the person's turn (desktop, 1100 px wide);
- ``web_showdown.png``: a showdown (desktop);
- ``web_phone.png``: the table at phone width (390 px, a touch screen);
- ``web_phone_showdown.png``: a showdown's panel at phone width;
- ``web_gameover.png``: the game-over panel of a 4-player game played to its end through
  the API (the person knocking whenever it may, so it is often out first), with the
  standings by place;
- ``web_replay.png``: that game's replay on the table, at its first showdown.

With ``--variants`` it also plays golf and a race to points (``french_canadian``) against
random opponents and writes ``web_golf_turn.png`` (a golf turn, the card held beside the
person's slots), ``web_golf_showdown.png``, ``web_race_showdown.png`` and
``web_golf_replay.png`` (the finished golf game's replay at a step where a card is held and
slots lie face down).

It also prints the page's own timings (``window.scatMetrics``): page load, from navigation
to the table drawn for a game in progress, and each move from the click to the table ready
again, with the opponents' moves shown at the "instant" speed so that only the page and the
server are timed (``--speed 2`` times them at the page's default pace instead). Uses the system ``chromium`` through Playwright (never downloads one)::

    python scripts/web_screenshots.py [--out docs/img] [--moves 40] [--opponents SPEC]
                                      [--speed 0-4] [--chromium PATH] [--variants]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The names of the page's speed slider's steps (scat_web/static/app.js, SPEEDS).
SPEEDS = ("instant", "fast", "normal", "slow", "very slow")


#: The launch token ``scat serve`` printed, sent by every request of this script.
TOKEN_HEADER: dict[str, str] = {}


class TokenBrowser:
    """A browser whose every new page sends the server's token (as a script may, instead of
    the cookie the printed address sets), so each page can open any address of the server."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser

    def new_page(self, **kwargs: Any) -> Any:
        return self.browser.new_page(extra_http_headers=TOKEN_HEADER, **kwargs)

    def close(self) -> None:
        self.browser.close()


def start_server(home: Path) -> tuple[subprocess.Popen[str], str]:
    """``scat serve --port 0`` on 127.0.0.1; the process and its address (the launch token
    it printed goes to :data:`TOKEN_HEADER`)."""
    env = {**os.environ, "SCAT_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "scat_cli", "serve", "--port", "0",
                             "--data", str(home / "web")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline() if proc.stdout else ""
    found = re.search(r"(http://127\.0\.0\.1:\d+/)\?token=([\w-]+)", line)
    if not found:
        proc.terminate()
        raise SystemExit(f"scat serve printed no address: {line!r}")
    TOKEN_HEADER["X-Scat-Token"] = found.group(2)
    return proc, found.group(1)


def new_game(url: str) -> str:
    """A 4-player game against greedy opponents, made through the API; its id."""
    body = json.dumps({"players": 4, "opponents": "greedy"}).encode()
    req = urllib.request.Request(url + "api/games", data=body, method="POST",
                                 headers={"Content-Type": "application/json", **TOKEN_HEADER})
    with urllib.request.urlopen(req, timeout=10) as r:
        return str(json.loads(r.read())["game"]["id"])


def finished_game(url: str, opponents: str) -> str:
    """A 4-player game against ``opponents`` (``""``: the server's choice) played to its end
    through the API, the person knocking whenever it may and otherwise taking the first
    move offered; its id."""
    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json", **TOKEN_HEADER})
        with urllib.request.urlopen(req, timeout=60) as r:
            return dict(json.loads(r.read())["game"])

    game = post("api/games", {"players": 4, **({"opponents": opponents} if opponents else {})})
    for _ in range(2000):
        if game["status"] == "over":
            return str(game["id"])
        legal = [m["action"] for m in game["legal"]]
        action = 54 if 54 in legal else legal[0]
        game = post(f"api/games/{game['id']}/move", {"action": action, "seq": game["seq"]})
    raise SystemExit("the game played through the API did not end")


def end_shots(browser: Any, url: str, out: Path, opponents: str) -> list[str]:
    """The game-over panel and the replay on the table of a finished game, and a showdown
    at phone width; the files."""
    game = finished_game(url, opponents)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(url + f"#game={game}")
    page.wait_for_selector("#gameover:not([hidden])", timeout=20000)
    page.locator("#gameover").screenshot(path=str(out / "web_gameover.png"))
    page.goto(url + f"#replay={game}")
    page.locator("#r-pos", has_text=re.compile(r"^step ")).wait_for(timeout=20000)
    page.keyboard.press("n")  # the first hand as it ended, its showdown under the table
    page.wait_for_selector("#showdown:not([hidden])")
    page.screenshot(path=str(out / "web_replay.png"), full_page=True)
    page.close()
    phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2,
                             is_mobile=True, has_touch=True)
    new_game_by_form(phone, url, "standard", opponents="greedy", players=4)
    for step in range(400):
        if phone.get_attribute("body", "data-showdown") == "1":
            break
        if step > 2 and phone.locator("#actions [data-action='54']").count():
            phone.click("#actions [data-action='54']")  # knock: a short hand
        else:
            my_move(phone, 0)
        phone.wait_for_selector("body[data-ready='1'], body[data-showdown='1']", timeout=20000)
    phone.locator("#showdown").screenshot(path=str(out / "web_phone_showdown.png"))
    phone.close()
    return ["web_gameover.png", "web_replay.png", "web_phone_showdown.png"]


def wait_ready(page: Any) -> None:
    page.wait_for_selector("body[data-ready='1']", timeout=20000)


def settle(page: Any) -> None:
    """Waits for the table to be ready, going on past any showdown."""
    while True:
        page.wait_for_selector("body[data-ready='1'], body[data-showdown='1']", timeout=20000)
        if page.get_attribute("body", "data-showdown") != "1":
            return
        page.click("#showdown-continue")


def my_move(page: Any, rng_step: int) -> None:
    """One of the person's moves by clicking: draw from the stock, discard the lowest
    playable card (the page marks the cards it may discard)."""
    phase = page.get_attribute("body", "data-phase")
    if phase == "draw":
        page.click("#stock")
    elif phase == "discard":
        cards = page.locator("#hand .card.playable")
        cards.nth(rng_step % cards.count()).click()
    else:
        page.locator("#actions button").first.click()


def new_game_by_form(page: Any, url: str, rules: str, opponents: str = "random",
                     players: int = 3) -> None:
    """A game of ``rules`` from the start form, shown at the "instant" speed."""
    page.goto(url + "#new")
    page.wait_for_selector("#f-opponents option", state="attached")
    page.evaluate("(() => { const s = document.getElementById('speed'); s.value = '0';"
                  " s.dispatchEvent(new Event('input')); })()")
    page.fill("#f-players", str(players))
    page.select_option("#f-opponents", opponents)
    page.select_option("#f-rules", rules)
    page.click("#f-start")
    page.wait_for_selector("#view-table:not([hidden])")
    page.wait_for_selector("body[data-ready='1'], body[data-showdown='1']", timeout=20000)


def golf_move(page: Any, step: int) -> None:
    """One golf decision by clicking: the stock (now and then the pile), then a face-down
    slot or, every other turn, the first "discard it and turn a slot up" button."""
    phase = page.get_attribute("body", "data-phase")
    if phase == "golf_draw":
        take = step % 3 == 0 and page.locator("#discard.playable").count()
        page.click("#discard" if take else "#stock")
    elif phase == "golf_place":
        turn = page.locator("#actions [data-action='64'], #actions [data-action='65'], "
                            "#actions [data-action='66']")
        if step % 2 and turn.count():
            turn.first.click()
        else:
            page.locator("#hand .slot.playable").first.click()
    else:
        page.locator("#actions button").first.click()


def variant_shots(browser: Any, url: str, out: Path) -> list[str]:
    """Golf mid-turn, a golf showdown, a race's showdown and a golf replay; the files."""
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    written = []
    new_game_by_form(page, url, "golf")
    step, turn_shot, showdown_shot = 0, False, False
    while page.get_attribute("body", "data-status") != "over" and step < 400:
        if page.get_attribute("body", "data-showdown") == "1":
            if not showdown_shot:
                page.locator("#showdown").scroll_into_view_if_needed()
                page.screenshot(path=str(out / "web_golf_showdown.png"), full_page=True)
                written.append("web_golf_showdown.png")
                showdown_shot = True
            page.click("#showdown-continue")
        else:
            golf_move(page, step)
            step += 1
        page.wait_for_selector("body[data-ready='1'], body[data-showdown='1']", timeout=20000)
        if (not turn_shot and step >= 3 and page.get_attribute("body", "data-phase") == "golf_place"
                and page.get_attribute("body", "data-showdown") != "1"):
            page.screenshot(path=str(out / "web_golf_turn.png"), full_page=True)
            written.append("web_golf_turn.png")
            turn_shot = True
    if page.get_attribute("body", "data-status") == "over":
        page.click("#open-replay")
        page.locator("#r-pos", has_text=re.compile(r"^step ")).wait_for(timeout=20000)
        steps = page.evaluate("document.getElementById('r-slider').max")
        # the first step where a seat holds a card and some slot is still face down
        for k in range(int(steps) + 1):
            page.evaluate(f"document.getElementById('r-slider').value = {k};"
                          "document.getElementById('r-slider').dispatchEvent(new Event('input'))")
            if page.locator("#view-table .held").count() and \
                    page.locator("#view-table .face-down").count() >= 3 and k > 6:
                break
        page.screenshot(path=str(out / "web_golf_replay.png"), full_page=True)
        written.append("web_golf_replay.png")
    new_game_by_form(page, url, "french_canadian")
    for _ in range(400):
        if page.get_attribute("body", "data-showdown") == "1":
            page.locator("#showdown").scroll_into_view_if_needed()
            page.screenshot(path=str(out / "web_race_showdown.png"), full_page=True)
            written.append("web_race_showdown.png")
            break
        if page.locator("#actions [data-action='54']").count():
            page.click("#actions [data-action='54']")  # knock: a short hand
        else:
            my_move(page, 0)
        page.wait_for_selector("body[data-ready='1'], body[data-showdown='1']", timeout=20000)
    page.close()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"))
    ap.add_argument("--moves", type=int, default=40, help="moves timed (default 40)")
    ap.add_argument("--opponents", default="",
                    help="an agent spec the start form offers (default: the form's own choice)")
    ap.add_argument("--speed", type=int, choices=range(5), default=0,
                    help="the page's speed slider: 0 instant (default) .. 4 very slow")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--variants", action="store_true",
                    help="also golf and a race to points (four more screenshots)")
    args = ap.parse_args(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("needs playwright: pip install playwright (it uses the system chromium)",
              file=sys.stderr)
        return 2
    if not Path(args.chromium).exists():
        print(f"no chromium at {args.chromium}: apt-get install chromium", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="scat-shots-"))
    proc, url = start_server(home)
    try:
        with sync_playwright() as pw:
            browser = TokenBrowser(pw.chromium.launch(executable_path=args.chromium,
                                                      args=["--no-sandbox", "--disable-gpu"]))
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(url + "#new")
            page.wait_for_selector("#f-opponents option", state="attached")
            page.fill("#f-players", "3")
            page.select_option("#f-opponents", args.opponents)
            page.evaluate(f"localStorage.setItem('scat-speed', '{args.speed}')")
            page.click("#f-start")
            wait_ready(page)
            game = page.get_attribute("body", "data-game")
            page.locator("#speed").fill(str(args.speed))
            # the turn: a full round first, so the log has the opponents' moves
            for _ in range(2):
                my_move(page, 0)
                settle(page)
            page.click("#hint-button")
            page.wait_for_selector("#hint:not([hidden])")
            page.screenshot(path=str(out / "web_turn.png"), full_page=True)
            # the timed moves, and the first showdown on the way
            shot = False
            step = 1
            while step < args.moves + 1 or not shot:
                if page.get_attribute("body", "data-status") == "over":
                    break
                my_move(page, step)
                step += 1
                page.wait_for_selector("body[data-ready='1'], body[data-showdown='1']",
                                       timeout=20000)
                if page.get_attribute("body", "data-showdown") == "1":
                    if not shot:
                        page.locator("#showdown").scroll_into_view_if_needed()
                        page.screenshot(path=str(out / "web_showdown.png"), full_page=True)
                        shot = True
                    settle(page)
            moves = page.evaluate("window.scatMetrics.moves")
            # the phone, and the page load of a game in progress
            phone = browser.new_page(viewport={"width": 390, "height": 844},
                                     device_scale_factor=2, is_mobile=True, has_touch=True)
            loads, own = [], []
            game = new_game(url)  # a game in progress, 4 players
            for _ in range(5):
                phone.goto("about:blank")
                started = time.perf_counter()
                phone.goto(url + f"#game={game}")
                wait_ready(phone)
                loads.append((time.perf_counter() - started) * 1000)
                own.append(phone.evaluate("window.scatMetrics.load"))
            phone.screenshot(path=str(out / "web_phone.png"), full_page=True)
            ends = end_shots(browser, url, out, args.opponents)
            variants = variant_shots(browser, url, out) if args.variants else []
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(home, ignore_errors=True)
    # a move that ended a hand waited for the person to close the showdown: not timed
    ready = [m["ready"] for m in moves if not m["showdown"]]
    server = [m["server"] for m in moves if m["server"] is not None]
    print(f"screenshots in {out}: web_turn.png web_showdown.png web_phone.png "
          + " ".join(ends + variants))
    print(f"page load of a game in progress, navigation to table ready, 5 loads: median "
          f"{statistics.median(loads):.0f} ms as Playwright sees it, "
          f"{statistics.median(own):.0f} ms on the page's own clock")
    speed = SPEEDS[args.speed]
    for what, kept in (("all", ready),
                       ("draws: nobody else moves",
                        [m["ready"] for m in moves if not m["showdown"] and not m["others"]]),
                       ("discards, then the opponents' turns",
                        [m["ready"] for m in moves if not m["showdown"] and m["others"]])):
        if kept:
            q = statistics.quantiles(kept, n=20) if len(kept) > 1 else [kept[0]] * 19
            print(f"{len(kept)} moves ({what}), not ending a hand, click to table ready "
                  f"(speed {speed}): median {statistics.median(kept):.0f} ms, "
                  f"p95 {q[18]:.0f} ms")
    if server:
        print(f"the server's part of a move (Server-Timing): median "
              f"{statistics.median(server):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
