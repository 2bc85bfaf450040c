"""Fuzz the browser API as ``tests/test_fuzz_cli.py`` fuzzes the command line: every request
ends in a 2xx, a redirect or a 4xx, never a 5xx or a traceback, within a time and memory
limit (``tests/fuzz_inputs.py``: :func:`bounded`); every refusal on ``/api/`` is
``{"error": one line}``; every answer carries the security headers.

Inputs, against the app in this process (Starlette's TestClient, a temporary data folder):
valid bodies changed in one or two places (``POST /api/games``, a move, an uploaded replay
made by ``scat play``), damaged bytes, odd Content-Types, bodies past the size limit and
nested past the depth limit; odd paths and methods; odd Host, token and cookie headers. The
default suite runs a fixed set of examples (``derandomize=True``); ``pytest -m slow`` about
twenty times as many.
"""

from __future__ import annotations

import json
import string
import urllib.parse
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
pytest.importorskip("starlette")
pytest.importorskip("httpx")

from fuzz_inputs import (  # noqa: E402
    ACCEPTED,
    ODD_TEXT,
    TRIED,
    bounded,
    check_error_line,
    damaged_bytes,
    fuzz_env,
    fuzz_settings,
    mutated_doc,
    to_json,
)
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from scat_web.app import MAX_BODY, SECURITY_HEADERS, cookie_name, create_app  # noqa: E402
from scat_web.games import GameStore  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")
TOKEN = "fuzz-token-0123456789abcdef"
AUTH = {"Authorization": f"token {TOKEN}"}
NEW_GAME = {"players": 3, "opponents": "random", "rules": "standard", "name": "Ann",
            "teaching": False}
CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
                 "text/plain", "", "application/x-www-form-urlencoded", "multipart/form-data",
                 "application/json\x00", "a" * 300]
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]


class Site:
    """The app with one game in progress and the shared finished save (a replay)."""

    def __init__(self, client: TestClient, game: dict[str, Any], replay: dict[str, Any]):
        self.client, self.game, self.replay = client, game, replay


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, fuzz_saves: dict[str, Path]
         ) -> Iterator[Site]:
    with pytest.MonkeyPatch.context() as mp:
        fuzz_env(mp, fuzz_saves["finished"].parent)
        home = tmp_path_factory.mktemp("fuzz_web")
        app = create_app(home, store=GameStore(home), token=TOKEN)
        with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as client:
            r = client.post("/api/games", json={"players": 2, "opponents": "random"},
                            headers=AUTH)
            assert r.status_code == 201, r.text
            replay = json.loads(fuzz_saves["finished"].read_text("utf-8"))
            yield Site(client, r.json()["game"], replay)


def ask(site: Site, what: str, method: str, path: str, *, content: bytes | None = None,
        headers: dict[str, str] | None = None) -> Any:
    """One request within the limits; checks the answer's form and counts it."""
    TRIED[what] += 1
    r = bounded(lambda: site.client.request(method, path, content=content,
                                            headers=headers or {}))
    assert r.status_code < 500, (what, method, path[:200], r.status_code, r.text[:500])
    for name, value in SECURITY_HEADERS.items():
        assert r.headers.get(name) == value, (what, path[:200], name)
    api = r.request.url.path.startswith("/api/")  # as sent: the client drops "." segments
    if api:
        assert r.headers["cache-control"] == "no-store", (what, path[:200])
    if api and r.status_code >= 400 and method != "HEAD":
        body = r.json()
        assert set(body) == {"error"}, (what, body)
        check_error_line(body["error"], what)
        assert len(body["error"]) <= 300, (what, body["error"])
    if r.status_code < 300:
        ACCEPTED[what] += 1
    return r


# -- bodies --------------------------------------------------------------------------------
@st.composite
def json_body(draw: st.DrawFn, docs: list[Any]) -> bytes:
    """A valid body changed in one or two places, as JSON; sometimes its bytes damaged."""
    text = to_json(draw(mutated_doc(docs))).encode("utf-8", "replace")
    if draw(st.integers(0, 3)) == 0:
        text = draw(damaged_bytes(text))
    return text


def _content_type(draw: st.DrawFn) -> dict[str, str]:
    kind = draw(st.sampled_from(CONTENT_TYPES[:1] * 6 + CONTENT_TYPES))
    return {**AUTH, "content-type": kind}


def _fuzz_bodies(site: Site, examples: int) -> None:
    game = site.game["id"]
    move = {"action": site.game["legal"][0]["action"], "seq": site.game["seq"]}

    @fuzz_settings(examples, examples)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(["new", "move", "replay"]))
        docs = {"new": [NEW_GAME], "move": [move], "replay": [site.replay]}[target]
        body = data.draw(json_body(docs))
        path = {"new": "/api/games", "move": f"/api/games/{game}/move",
                "replay": "/api/replays"}[target]
        ask(site, f"POST {path.replace(game, '{id}')}", "POST", path, content=body,
            headers=_content_type(data.draw))

    check()


def test_the_unchanged_bodies_are_accepted(site):
    """The inputs start from bodies the server takes, so a change reaches the checks
    behind the parser."""
    json_type = {**AUTH, "content-type": "application/json"}
    assert ask(site, "POST /api/replays", "POST", "/api/replays",
               content=json.dumps(site.replay).encode(), headers=json_type).status_code == 200
    assert ask(site, "POST /api/games", "POST", "/api/games",
               content=json.dumps(NEW_GAME).encode(), headers=json_type).status_code == 201


def test_bodies(site):
    _fuzz_bodies(site, 60)


@pytest.mark.slow
def test_bodies_long(site):
    _fuzz_bodies(site, 1200)


@pytest.mark.parametrize("body", [
    b" " * (MAX_BODY + 1) + b"{}", b"[" * 5000 + b"]" * 5000, b'{"players": ' + b"9" * 5000 + b"}",
    b'{"players": NaN}', b'{"name": "\\ud800"}', b"\xff\xfe{}", b"", b"null", b"{}" * 9000,
    json.dumps({"players": 2, "name": "\x1b[2J" * 100}).encode(),
], ids=["oversized", "deep", "huge_number", "nan", "lone_surrogate", "not_utf8", "empty",
        "null", "over_limit_repeated", "escapes"])
def test_bodies_at_the_limits(site, body):
    r = ask(site, "POST /api/games (limits)", "POST", "/api/games", content=body,
            headers={**AUTH, "content-type": "application/json"})
    assert 400 <= r.status_code < 500 or r.status_code == 201


# -- paths, methods, headers ----------------------------------------------------------------
SEGMENTS = st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=30),
                     st.text(string.hexdigits, min_size=8, max_size=8),
                     st.sampled_from(["..", ".", "%2e%2e", "%00", "games", "replay", "hint",
                                      "move", "static", "api", "index.html", "app.js"]))


@st.composite
def odd_path(draw: st.DrawFn, game: str) -> str:
    """A route of the API with one or two segments changed, or a path made of odd ones."""
    base = draw(st.sampled_from(["/", "/api/options", "/api/games", f"/api/games/{game}",
                                 f"/api/games/{game}/move", f"/api/games/{game}/hint",
                                 f"/api/games/{game}/replay", "/api/replays", "/api/stats",
                                 "/static/app.js", "/static/"]))
    parts = base.split("/")
    for _ in range(draw(st.integers(0, 2))):
        segment = urllib.parse.quote(draw(SEGMENTS), safe="")
        at = draw(st.integers(1, len(parts) - 1)) if len(parts) > 1 else 1
        if draw(st.booleans()) or at >= len(parts):
            parts.insert(at, segment)
        else:
            parts[at] = segment
    path = "/".join(parts) or "/"
    if draw(st.integers(0, 4)) == 0:
        path += "?" + urllib.parse.urlencode({draw(st.sampled_from(["token", "x", "seq"])):
                                              draw(st.text(max_size=40))})
    return path if path.startswith("/") else "/" + path


@st.composite
def odd_headers(draw: st.DrawFn) -> dict[str, str]:
    """The token shown, not shown, shown wrongly; odd Host and cookie headers."""
    printable = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
    headers: dict[str, str] = draw(st.sampled_from([
        AUTH, {}, {"X-Scat-Token": TOKEN}, {"Authorization": "token"},
        {"Authorization": f"token {TOKEN} {TOKEN}"}, {"Cookie": f"{cookie_name(TOKEN)}={TOKEN}"},
    ]))
    if draw(st.integers(0, 3)) == 0:
        headers = {**headers, draw(st.sampled_from(["Authorization", "X-Scat-Token", "Cookie",
                                                    "Host"])): draw(printable)}
    return headers


def _fuzz_requests(site: Site, examples: int) -> None:
    game = site.game["id"]

    @fuzz_settings(examples, examples)
    @given(st.sampled_from(METHODS), odd_path(game), odd_headers())
    def check(method: str, path: str, headers: dict[str, str]) -> None:
        body = b"{}" if method in ("POST", "PUT", "PATCH") else None
        if body is not None:
            headers = {**headers, "content-type": "application/json"}
        ask(site, "paths, methods, headers", method, path, content=body, headers=headers)

    check()


def test_paths_methods_and_headers(site):
    _fuzz_requests(site, 150)


@pytest.mark.slow
def test_paths_methods_and_headers_long(site):
    _fuzz_requests(site, 3000)
