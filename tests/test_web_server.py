"""The doors of ``scat serve`` (docs/SECURITY.md, "The local server"): the access token, the
security headers on every answer, stalled and oversized bodies, bounded replays and answers,
and error lines that quote little of the input and nothing of the machine.

In process, through Starlette's TestClient (the real server is started in
``tests/test_web_load.py``); each test names the promise it holds.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from scat_env import GameState, Rules  # noqa: E402
from scat_env.actions import DRAW_DISCARD, END_PLAY, KNOCK  # noqa: E402
from scat_session.seating import new_game  # noqa: E402
from scat_web import games  # noqa: E402
from scat_web.app import ECHO, SECURITY_HEADERS, cookie_name, create_app  # noqa: E402
from scat_web.games import GameStore  # noqa: E402

BASE = "http://127.0.0.1"
TOKEN = "launch-token-abcdefghijklmnop"
#: Every route of the API with a method it answers, ``{id}`` a game's id.
ROUTES = [("GET", "/api/options"), ("GET", "/api/games"), ("POST", "/api/games"),
          ("GET", "/api/games/{id}"), ("POST", "/api/games/{id}/move"),
          ("GET", "/api/games/{id}/hint"), ("GET", "/api/games/{id}/replay"),
          ("POST", "/api/replays"), ("GET", "/api/stats")]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    return tmp_path / "web"


def _app(home: Path, **kwargs: Any) -> Any:
    return create_app(home, store=GameStore(home), **{"token": TOKEN, **kwargs})


@pytest.fixture
def anonymous(home: Path) -> Iterator[TestClient]:
    """A client that has not shown the token (another user or process of the machine)."""
    with TestClient(_app(home), base_url=BASE, follow_redirects=False) as c:
        yield c


def _authorized(client: TestClient) -> dict[str, str]:
    return {"Authorization": f"token {TOKEN}"}


def _game(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"players": 2, "opponents": "random", **body},
                    headers=_authorized(client))
    assert r.status_code == 201, r.text
    return r.json()["game"]


def _one_line(r: Any, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    message = r.json()["error"]
    assert isinstance(message, str) and message and "\n" not in message and len(message) <= 300
    return message


def _has_security_headers(r: Any) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert r.headers.get(name) == value, (r.request.url, name, r.headers.get(name))
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]


# -- the access token ------------------------------------------------------------------------
def test_every_api_route_refuses_a_request_without_the_token_saying_how_to_get_in(anonymous):
    game = _game(anonymous)
    for method, path in ROUTES:
        r = anonymous.request(method, path.replace("{id}", game["id"]), json={})
        message = _one_line(r, 403)
        assert "open the URL that scat serve printed" in message, message
        _has_security_headers(r)
        assert r.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("headers", [
    {"Authorization": "token wrong-token-abcdefghijklmnop"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"X-Scat-Token": TOKEN[:-1]},
    {"X-Scat-Token": ""},
    {"Cookie": f"{cookie_name(TOKEN)}=nope"},
    {"Cookie": f"scat_token_00000000={TOKEN}"},  # the token under another server's name
])
def test_a_wrong_token_in_any_form_is_refused(anonymous, headers):
    _one_line(anonymous.get("/api/games", headers=headers), 403)


@pytest.mark.parametrize("headers", [
    {"Authorization": f"token {TOKEN}"}, {"Authorization": f"Token {TOKEN}"},
    {"X-Scat-Token": TOKEN},
])
def test_a_script_shows_the_token_in_a_header(anonymous, headers):
    assert anonymous.get("/api/games", headers=headers).status_code == 200


def test_the_printed_url_keeps_the_token_in_a_strict_httponly_cookie_and_drops_it(home):
    with TestClient(_app(home), base_url=BASE, follow_redirects=False) as browser:
        assert browser.get("/").status_code == 403  # the bare address: how to get in
        r = browser.get(f"/?token={TOKEN}")
        assert r.status_code == 303 and r.headers["location"] == "/"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"{cookie_name(TOKEN)}={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        _has_security_headers(r)
        page = browser.get("/")  # the cookie, as a browser sends it from now on
        assert page.status_code == 200 and "<script" in page.text
        assert browser.get("/api/games").status_code == 200


def test_a_wrong_token_in_the_url_sets_no_cookie(anonymous):
    r = anonymous.get("/?token=guessed-abcdefghijklmnop")
    assert r.status_code == 403 and "set-cookie" not in r.headers
    assert "open the URL that scat serve printed" in r.text
    assert anonymous.get("/api/games").status_code == 403


def test_the_static_files_need_no_token_and_carry_the_security_headers(anonymous):
    for name in ("app.js", "style.css", "favicon.svg"):
        r = anonymous.get(f"/static/{name}")
        assert r.status_code == 200, name
        _has_security_headers(r)
    _has_security_headers(anonymous.get("/static/nothing-here.js"))


def test_a_short_or_missing_token_cannot_be_configured(home):
    with pytest.raises(TypeError):
        create_app(home)  # type: ignore[call-arg]  # no default: nobody forgets it
    with pytest.raises(ValueError, match="at least 16"):
        create_app(home, token="1234")


# -- headers on every answer --------------------------------------------------------------------
def test_every_answer_carries_the_security_headers_refusals_and_failures_included(home):
    store = GameStore(home)

    def broken() -> None:
        raise RuntimeError("a bug")

    store.stats = broken  # type: ignore[method-assign]
    app = create_app(home, store=store, token=TOKEN)
    auth = {"Authorization": f"token {TOKEN}"}
    with TestClient(app, base_url=BASE, raise_server_exceptions=False,
                    follow_redirects=False) as client:
        answers = [
            client.get("/", headers=auth), client.get("/api/options", headers=auth),
            client.get("/api/nowhere", headers=auth), client.delete("/api/games", headers=auth),
            client.get("/api/games/0000abcd", headers=auth),
            client.post("/api/games", content="x", headers=auth),
            client.post("/api/games", content=b"{" * 20000,
                        headers={**auth, "content-type": "application/json"}),
            client.get("/api/options", headers={**auth, "host": "evil.example"}),
            client.get("/", headers={"host": "evil.example"}),
            client.get("/api/options"), client.get(f"/?token={TOKEN}"),
            client.get("/api/stats", headers=auth),
        ]
    assert [r.status_code for r in answers] == [200, 200, 404, 405, 404, 415, 413, 400, 400,
                                                403, 303, 500]
    for r in answers:
        _has_security_headers(r)
        assert r.headers["cache-control"] == "no-store", r.request.url


# -- bodies: stalled, oversized -------------------------------------------------------------------
def _asgi_post(app: Any, path: str, chunks: list[bytes], stall: bool,
               length: int) -> tuple[int, dict[str, str], bytes, float]:
    """POST ``chunks`` to ``app`` as a server would hand them over, then (``stall``) wait
    for ever for the rest: what a client that stops sending looks like to the app."""
    sent: list[dict[str, Any]] = []

    async def run() -> float:
        queue = [{"type": "http.request", "body": c, "more_body": True} for c in chunks]

        async def receive() -> dict[str, Any]:
            if queue:
                return queue.pop(0)
            if stall:
                await asyncio.sleep(3600)
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
                 "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
                 "server": ("127.0.0.1", 8731),
                 "headers": [(b"host", b"127.0.0.1:8731"),
                             (b"content-type", b"application/json"),
                             (b"content-length", str(length).encode()),
                             (b"x-scat-token", TOKEN.encode())]}
        started = time.perf_counter()
        await asyncio.wait_for(app(scope, receive, send), timeout=30)
        return time.perf_counter() - started

    seconds = asyncio.run(run())
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, body, seconds


def test_a_body_that_stops_arriving_gets_408_within_the_deadline(home):
    app = _app(home, body_seconds=0.5)
    status, headers, body, seconds = _asgi_post(app, "/api/games", [b'{"players": '],
                                                stall=True, length=40)
    # a hang guard, not a measure: well under the default deadline (10 s) it overrides
    assert status == 408 and seconds < 8, (status, seconds)
    assert "did not arrive within 0.5 s" in json.loads(body)["error"]
    assert headers["x-content-type-options"] == "nosniff"
    assert app.state.store.summaries() == []  # nothing was made


def test_a_body_sent_slowly_but_whole_in_time_is_read(home):
    app = _app(home, body_seconds=5)
    body = json.dumps({"players": 2, "opponents": "random"}).encode()
    status, _, answer, _ = _asgi_post(app, "/api/games", [body[:5], body[5:]], stall=False,
                                      length=len(body))
    assert status == 201, answer


# -- replays and answers: bounded ---------------------------------------------------------------
def _endless_first_hand(turns: int) -> dict[str, Any]:
    """A legal finished two-player game whose first hand lasts ``turns`` turns (both
    players take the discard and throw another card), played without the engine's turn
    cap, then to its end (knocking, or ending the play, when they may): the shape of a
    crafted 60,000-decision replay."""
    save = new_game(2, ["random"], Rules(), 11, "You")
    state = GameState(2, Rules(), seed=11)
    while not state.is_terminal():
        assert len(save.actions) < 2 * turns + 10_000  # the game ends (see the policy)
        legal = state.legal_actions()
        if state.hand_number == 1 and state.turn < turns and DRAW_DISCARD in legal:
            action = DRAW_DISCARD
        else:
            action = next((a for a in (KNOCK, END_PLAY) if a in legal), legal[0])
        seat = state.current_player
        state.apply_action(action)
        save.record(state, seat, action)
    data = save.to_json()
    assert data["status"] == "finished" and "sealed" not in data
    return data


def test_a_replay_of_sixty_thousand_decisions_is_refused_at_once(home):
    """The crafted game of the report: 60,000 decisions, about 0.7 MB, once answered with
    36 MB after 36 s. Refused before it is re-simulated, in one line."""
    data = _endless_first_hand(30_000)
    text = json.dumps(data)
    assert len(data["actions"]) > 60_000 and len(text) < 4 * 1024 * 1024
    with TestClient(_app(home), base_url=BASE, headers={"X-Scat-Token": TOKEN}) as client:
        started = time.perf_counter()
        r = client.post("/api/replays", content=text,
                        headers={"content-type": "application/json"})
        seconds = time.perf_counter() - started
    message = _one_line(r, 422)
    assert f"at most {games.MAX_REPLAY_DECISIONS}" in message and seconds < 30, seconds


def test_a_replay_over_the_decision_bound_is_refused_and_one_under_it_shown(home, monkeypatch):
    data = _endless_first_hand(40)
    decisions = len(data["actions"])
    with TestClient(_app(home), base_url=BASE, headers={"X-Scat-Token": TOKEN}) as client:
        monkeypatch.setattr(games, "MAX_REPLAY_DECISIONS", decisions)
        assert client.post("/api/replays", json=data).status_code == 200
        monkeypatch.setattr(games, "MAX_REPLAY_DECISIONS", decisions - 1)
        _one_line(client.post("/api/replays", json=data), 422)


def test_a_replay_heavier_than_the_answer_bound_is_refused_while_it_is_built(home, monkeypatch):
    data = _endless_first_hand(40)
    with TestClient(_app(home), base_url=BASE, headers={"X-Scat-Token": TOKEN}) as client:
        shown = client.post("/api/replays", json=data)
        game = _finished_game(client)  # a dealt game: its length, and its replay's, vary
        replayed = client.get(f"/api/games/{game}/replay")
        assert shown.status_code == replayed.status_code == 200
        bound = min(len(shown.content), len(replayed.content)) // 4
        monkeypatch.setattr(games, "MAX_ANSWER_BYTES", bound)
        message = _one_line(client.post("/api/replays", json=data), 413)
        assert "too long to show here" in message
        _one_line(client.get(f"/api/games/{game}/replay"), 413)


def _finished_game(client: TestClient) -> str:
    game = _game(client)
    while game["status"] == "playing":
        r = client.post(f"/api/games/{game['id']}/move",
                        json={"action": game["legal"][0]["action"], "seq": game["seq"]})
        game = r.json()["game"]
    return str(game["id"])


def test_a_replay_whose_hand_passes_the_turn_cap_is_refused(home):
    """Under :data:`~scat_env.DEFAULT_MAX_TURNS` the engine ends such a game at the cap,
    so the file's later decisions do not re-simulate."""
    data = _endless_first_hand(400)
    with TestClient(_app(home), base_url=BASE, headers={"X-Scat-Token": TOKEN}) as client:
        message = _one_line(client.post("/api/replays", json=data), 400)
    assert "already over" in message


# -- error lines ----------------------------------------------------------------------------
def test_a_404_never_shows_the_data_folder(home):
    with TestClient(_app(home), base_url=BASE, headers={"X-Scat-Token": TOKEN}) as client:
        _game(client)  # the folder exists
        for path in ("/api/games/0000abcd", "/api/games/0000abcd/replay",
                     "/api/games/../../etc/passwd", "/static/../../secret"):
            r = client.get(path)
            text = r.text
            assert r.status_code == 404 and str(home) not in text and "/tmp" not in text, text


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/api/" + "x" * 5000, None),
    ("DELETE", "/api/games/" + "y" * 5000, None),
    ("GET", "/api/games/" + "z" * 5000, None),
    ("POST", "/api/games", {"players": "p" * 5000}),
    ("POST", "/api/games", {"q" * 5000: 1}),
    ("POST", "/api/games", {"name": "n" * 5000}),
    ("POST", "/api/games", {"opponents": ["o" * 5000]}),
    ("POST", "/api/games/{id}/move", {"action": int("9" * 4000), "seq": 0}),
    ("POST", "/api/games/{id}/move", {"action": 0, "seq": int("8" * 4000)}),
    ("POST", "/api/games/{id}/move", {"action": "a" * 5000, "seq": 0}),
])
def test_an_error_line_quotes_at_most_a_short_piece_of_the_input(home, method, path, body):
    with TestClient(_app(home), base_url=BASE, headers={"X-Scat-Token": TOKEN}) as client:
        path = path.replace("{id}", _game(client)["id"])
        r = client.request(method, path, json=body)
        message = _one_line(r, r.status_code)
    assert 400 <= r.status_code < 500
    longest = max(len(m.group(0)) for m in re.finditer(r"([a-z0-9])\1*", message))
    assert longest <= ECHO, message


def test_scat_serve_leaves_the_processs_logging_handlers_open(tmp_path, monkeypatch):
    """uvicorn's default logging set-up closes every handler the process has (another
    library's, or a test runner's whose stream is its capture file): ``scat serve`` keeps
    uvicorn's loggers without that set-up."""
    import io
    import logging

    import uvicorn

    from scat_cli.main import main

    class ClosesItsStream(logging.StreamHandler):
        def close(self) -> None:
            self.stream.close()
            super().close()

    stream = io.StringIO()
    handler = ClosesItsStream(stream)
    logging.getLogger("scat-test-library").addHandler(handler)
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    try:
        assert main(["serve", "--port", "0", "--data", str(tmp_path / "web")]) == 0
        assert not stream.closed
    finally:
        logging.getLogger("scat-test-library").removeHandler(handler)
