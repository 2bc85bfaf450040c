"""The HTTP side of ``scat serve``: a Starlette app over a :class:`~scat_web.games.GameStore`.

Routes and payloads are documented in ``docs/WEB_API.md``. Every error is a 4xx (5xx for
the server's own failures: a save that cannot be written) whose body is
``{"error": "<one line>"}``; a refused request changes nothing.

Why the checks beyond the game's own (each promise, with the test that holds it, is in
``docs/SECURITY.md``, "The local server"):

- Every request but ``/static/*`` needs this launch's access token (:class:`TokenCheck`):
  any other local process or user could otherwise list and play every game. ``scat serve``
  makes the token with :mod:`secrets` and prints it in the page's address, as Jupyter does;
  ``GET /?token=T`` keeps it in an ``HttpOnly``, ``SameSite=Strict`` cookie and sends the
  browser on to ``/`` without it; a script sends ``Authorization: token T`` or
  ``X-Scat-Token: T``.
- A POST must say ``Content-Type: application/json``. A page on another site can send a
  form or ``text/plain`` POST to ``127.0.0.1`` without asking; a JSON one needs a CORS
  preflight, which this server never grants, so other sites cannot play your games.
- Only the Host names given are served (on a loopback address ``127.0.0.1``,
  ``localhost``, ``[::1]``; on another the machine's names as well, and ``--allow-host``),
  so a site that re-points its own name at the server (DNS rebinding) gets nothing.
- Bodies are read up to a limit (:data:`MAX_BODY`, :data:`MAX_REPLAY_BODY` for an uploaded
  replay) and within :data:`BODY_SECONDS` (a client that stops sending gets 408 and its
  connection back), nested at most :data:`~scat_session.savegame.MAX_DEPTH` deep, before any
  parsing. A replay holds at most :data:`~scat_web.games.MAX_REPLAY_DECISIONS` decisions
  and no answer weighs more than :data:`MAX_ANSWER_BYTES` (422 and 413 beyond).
- Every answer, the static files and every refusal included, carries
  :data:`SECURITY_HEADERS` (:class:`SecurityHeaders`); an error line quotes at most
  :data:`ECHO` characters of what was sent and never a folder of this machine.

Game work is CPU-bound Python; it runs in Starlette's thread pool, one request per game at
a time (:class:`~scat_web.games.LiveGame` ``lock``), so many games are played at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS
from scat_session.levels import DEFAULT_LEVEL, FIRST_GAME_LEVEL, levels_payload
from scat_session.savegame import ReplayError, check_depth

from .games import (
    AGENTS,
    MAX_ANSWER_BYTES,
    GameStore,
    WebError,
    check_move,
    check_new_game,
    replay_upload,
)
from .serialize import actions_payload, preset_option

#: The largest request body, except an uploaded replay (a move is a few dozen bytes).
MAX_BODY = 16 * 1024
#: The largest uploaded replay (a long ten-player game is a few hundred KiB).
MAX_REPLAY_BODY = 4 * 1024 * 1024
#: Seconds a request body may take to arrive, from the first byte read to the last: a
#: client that stops sending half-way gets 408 instead of holding a connection for ever.
BODY_SECONDS = 10.0
#: Characters of what was sent (a path, a field's value) an error line may quote.
ECHO = 60
#: The longest error line (a refusal never grows with its input).
MAX_ERROR = 300
#: Host names served when the server listens on a loopback address.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
#: What a request without this launch's token is told, API and page alike.
NO_TOKEN = ("this server needs the access token it printed at launch: open the URL that "
            "scat serve printed (it ends in ?token=...), or send the header "
            "Authorization: token TOKEN")
STATIC_DIR = Path(str(resources.files("scat_web") / "static"))
#: Sent with every response: no framing by other sites, no content sniffing, and the page
#: may load scripts, styles and images from this server only (inline styles allowed, for
#: card layouts built in script; no inline scripts).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": ("default-src 'self'; img-src 'self' data:; "
                                "style-src 'self' 'unsafe-inline'; object-src 'none'; "
                                "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"),
}

Handler = Callable[[Request], Awaitable[Response]]


def error(status: int, message: str) -> JSONResponse:
    """The API's refusal: ``{"error": one line}``, at most :data:`MAX_ERROR` characters
    whatever a message built from the input holds (a last guard; messages quote at most
    :data:`ECHO` characters of the input themselves)."""
    line = " ".join(message.splitlines())
    if len(line) > MAX_ERROR:
        line = line[:MAX_ERROR - 3] + "..."
    return JSONResponse({"error": line}, status_code=status)


def echo(text: str) -> str:
    """At most :data:`ECHO` characters of ``text`` as a quoted literal (control characters
    escaped), for an error line that names what was sent."""
    return repr(text if len(text) <= ECHO else text[:ECHO - 3] + "...")


async def read_json(request: Request, limit: int = MAX_BODY) -> Any:
    """The request's JSON body, refused (413, 415, 400) before parsing when it is too big,
    not JSON, or nested too deep."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise WebError(415, "send the body as JSON with Content-Type: application/json "
                            f"(got {ctype[:40] or 'none'!r})")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise WebError(413, f"the body is {int(length)} bytes; at most {limit} are read here")
    body = bytearray()
    seconds: float = getattr(request.app.state, "body_seconds", BODY_SECONDS)
    with anyio.move_on_after(seconds) as deadline:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise WebError(413, f"the body is over {limit} bytes; at most {limit} are "
                                    "read here")
    if deadline.cancelled_caught:
        raise WebError(408, f"the body did not arrive within {seconds:g} s (got {len(body)} "
                            "bytes); send it again, whole")
    try:
        text = body.decode("utf-8")
        check_depth(text, "the body")
        return json.loads(text, parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise WebError(400, "the body is not UTF-8 text") from None
    except ReplayError as exc:
        raise WebError(400, str(exc)) from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise WebError(400, f"the body is not valid JSON: {exc}") from None
    except ValueError as exc:
        raise WebError(400, f"the body is not valid JSON: {exc}") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _store(request: Request) -> GameStore:
    return request.app.state.store  # type: ignore[no-any-return]


def guarded(fn: Handler) -> Handler:
    """``fn`` with its refusals as JSON errors, and no answer heavier than
    :data:`~scat_web.games.MAX_ANSWER_BYTES` (the security headers are added to every
    answer by :class:`SecurityHeaders`)."""
    async def handle(request: Request) -> Response:
        try:
            response = await fn(request)
        except WebError as exc:
            response = error(exc.status, exc.message)
        size = len(getattr(response, "body", b""))  # a file streams: the page, small
        if size > MAX_ANSWER_BYTES:
            response = error(413, f"the answer would be {size} bytes; at most "
                                  f"{MAX_ANSWER_BYTES} are sent")
        return response
    handle.__name__ = fn.__name__
    return handle


async def index(request: Request) -> Response:
    page = STATIC_DIR / "index.html"
    if page.is_file():
        return FileResponse(page, media_type="text/html")
    return HTMLResponse("<!doctype html><title>Scat</title><p>The page is not installed; "
                        "the API is under /api/ (docs/WEB_API.md).</p>")


async def options(request: Request) -> Response:
    from scat_env import Rules

    store = _store(request)
    presets = [preset_option(name) for name in PRESETS]
    default = await run_in_threadpool(store.default_opponent, 3, Rules())
    played = await run_in_threadpool(store.has_finished_game)
    return JSONResponse({
        "presets": presets, "default_rules": "standard",
        "agents": [{"spec": spec, "label": label} for spec, label in store.agents],
        "default_opponent": default, "default_players": 3,
        # a first game is one a beginner wins sometimes; later ones meet the trained AI
        "levels": levels_payload(),
        "default_level": DEFAULT_LEVEL if played else FIRST_GAME_LEVEL,
        "min_players": MIN_PLAYERS, "max_players": MAX_PLAYERS,
        "actions": actions_payload(),
    })


async def list_games(request: Request) -> Response:
    games = await run_in_threadpool(_store(request).summaries)
    return JSONResponse({"games": [_public_summary(g) for g in games]})


async def new_game(request: Request) -> Response:
    store = _store(request)
    body = await read_json(request)
    new = check_new_game(body, store)

    def run() -> dict[str, Any]:
        live, events = store.create(new.players, new.specs, new.rules_name, new.name,
                                    new.teaching, new.level)
        with store.locked(live.game_id) as held:
            return store.state_of(held, events)

    return JSONResponse({"game": await run_in_threadpool(run)}, status_code=201)


async def get_game(request: Request) -> Response:
    store, game_id = _store(request), request.path_params["game_id"]

    def run() -> dict[str, Any]:
        with store.locked(game_id) as live:
            return store.state_of(live)

    return JSONResponse({"game": await run_in_threadpool(run)})


async def move(request: Request) -> Response:
    store, game_id = _store(request), request.path_params["game_id"]
    await run_in_threadpool(store.get, game_id)  # 404 before reading the body
    action, seq = check_move(await read_json(request))

    def run() -> tuple[dict[str, Any], float]:
        started = time.perf_counter()
        with store.locked(game_id) as live:
            events = store.move(live, action, seq)
            return store.state_of(live, events), time.perf_counter() - started

    state, seconds = await run_in_threadpool(run)
    response = JSONResponse({"game": state})
    response.headers["Server-Timing"] = f"move;dur={seconds * 1000:.2f}"
    return response


async def hint(request: Request) -> Response:
    store, game_id = _store(request), request.path_params["game_id"]

    def run() -> dict[str, Any]:
        with store.locked(game_id) as live:
            return store.hint(live)

    return JSONResponse(await run_in_threadpool(run))


async def replay(request: Request) -> Response:
    store, game_id = _store(request), request.path_params["game_id"]

    def run() -> dict[str, Any]:
        with store.locked(game_id) as live:
            return store.replay(live)

    return JSONResponse(await run_in_threadpool(run))


async def review(request: Request) -> Response:
    """The person's decisions in a finished game, each played out (seconds, the first
    time: in the thread pool, so other games go on meanwhile)."""
    store, game_id = _store(request), request.path_params["game_id"]
    return JSONResponse(await run_in_threadpool(store.review, game_id))


async def upload_replay(request: Request) -> Response:
    data = await read_json(request, MAX_REPLAY_BODY)
    return JSONResponse({"replay": await run_in_threadpool(replay_upload, data)})


async def stats(request: Request) -> Response:
    return JSONResponse(await run_in_threadpool(_store(request).stats))


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, wrong method) in the API's error form."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    path = echo(request.url.path)
    text = {404: f"no such path: {path}",
            405: f"{echo(request.method)} is not allowed on {path}"}.get(
                status, "the request was refused")
    return error(status, text)


async def server_error(request: Request, exc: Exception) -> Response:
    """A failure of the server itself. Starlette answers it outside every middleware, so
    the security headers are put on here."""
    response = error(500, f"the server failed ({type(exc).__name__}); the game is as it "
                          "was last saved")
    response.headers.update(SECURITY_HEADERS)
    response.headers["Cache-Control"] = "no-store"
    return response


class SecurityHeaders:
    """:data:`SECURITY_HEADERS` on every answer, whoever makes it (a route, the static
    files, Starlette's 404 and 405, the Host and token checks); ``Cache-Control:
    no-store`` on all but the static files, so no game's state is kept by a browser or a
    proxy. A middleware, not a decorator on the routes, so no answer can miss them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        store = not scope["path"].startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
                if store:
                    headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def cookie_name(token: str) -> str:
    """The cookie that keeps ``token``: named after it, so two servers on one machine (or
    two launches of one) do not overwrite each other's cookie (cookies ignore ports)."""
    return "scat_token_" + hashlib.sha256(token.encode()).hexdigest()[:8]


class TokenCheck:
    """Every request but ``/static/*`` shows this launch's token, or gets 403 saying how
    to get in (:data:`NO_TOKEN`), before any route runs. Accepted: the cookie
    :func:`cookie_name`, ``Authorization: token T``, ``X-Scat-Token: T``. ``GET /?token=T``
    is the way in from the printed address: it sets the cookie (``HttpOnly``: no script
    reads it; ``SameSite=Strict``: no other site's page sends it) and redirects to ``/``,
    so the token leaves the address bar and the history. Compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()
        self.cookie = cookie_name(token)

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(
            given.encode("utf-8", "surrogateescape"), self.token)

    def _shown(self, request: Request) -> bool:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return (self._matches(request.cookies.get(self.cookie))
                or (scheme.lower() == "token" and self._matches(value.strip()))
                or self._matches(request.headers.get("x-scat-token")))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/static/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token") if scope["path"] == "/" else None
        if given is not None and self._matches(given):
            response: Response = RedirectResponse("/", status_code=303)
            response.set_cookie(self.cookie, self.token.decode(), httponly=True,
                                samesite="strict", path="/")
        elif given is None and self._shown(request):
            await self.app(scope, receive, send)
            return
        elif scope["path"].startswith("/api/"):
            response = error(403, NO_TOKEN)
        else:
            response = HTMLResponse("<!doctype html><title>Scat</title><p>"
                                    f"{NO_TOKEN}.</p>", status_code=403)
        await response(scope, receive, send)


class HostCheck:
    """Starlette's :class:`TrustedHostMiddleware`, with its refusal on ``/api/`` routes in
    the API's error form (``{"error": ...}`` JSON, the same status 400) so a client reads
    every error of the API one way; other paths keep Starlette's answer.

    Why a wrapper and not a copy of its checks: the host parsing (ports, IPv6 brackets,
    wildcards) stays Starlette's, so it cannot drift from what Starlette serves. The
    middleware is run with an inner app that only marks the request as passed; a refusal is
    what it sends instead, held back here and answered in JSON."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str]) -> None:
        self.app = app
        self.hosts = list(allowed_hosts)
        self.check = TrustedHostMiddleware(self._passed, allowed_hosts=self.hosts)

    @staticmethod
    async def _passed(scope: Scope, receive: Receive, send: Send) -> None:
        scope["scat.host_ok"] = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        probe: dict[str, Any] = dict(scope)
        refusal: list[Message] = []

        async def hold(message: Message) -> None:
            refusal.append(message)

        await self.check(probe, receive, hold)
        if probe.get("scat.host_ok"):
            await self.app(scope, receive, send)
            return
        status = next((m.get("status") for m in refusal if m["type"] == "http.response.start"),
                      None)
        if scope["type"] == "http" and scope["path"].startswith("/api/") and status == 400:
            names = ", ".join(h for h in self.hosts if h != "::1")
            response = error(400, f"invalid Host header: this server answers only to {names} "
                                  "(open the page by one of these)")
            await response(scope, receive, send)
            return
        for message in refusal:  # a redirect, or a refusal off the API: Starlette's own
            await send(message)


def create_app(
    data_dir: str | Path,
    *,
    token: str | None,
    store: GameStore | None = None,
    allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS,
    agents: Sequence[tuple[str, str]] = AGENTS,
    body_seconds: float = BODY_SECONDS,
) -> Starlette:
    """The app serving the games of ``data_dir`` to whoever shows ``token``.

    ``token`` has no default, so no caller forgets it: ``scat serve`` passes a fresh
    :func:`secrets.token_urlsafe` per launch. ``None`` turns the check off, for tests and
    programs that call the app in their own process (no socket, nobody else to keep out);
    the command line never passes it. ``allowed_hosts=None`` likewise serves any Host
    header, for the same callers. Tests may pass their own ``store`` and a shorter
    ``body_seconds``."""
    routes = [
        Route("/", guarded(index)),
        Route("/api/options", guarded(options)),
        Route("/api/games", guarded(list_games), methods=["GET"]),
        Route("/api/games", guarded(new_game), methods=["POST"]),
        Route("/api/games/{game_id}", guarded(get_game)),
        Route("/api/games/{game_id}/move", guarded(move), methods=["POST"]),
        Route("/api/games/{game_id}/hint", guarded(hint)),
        Route("/api/games/{game_id}/replay", guarded(replay)),
        Route("/api/games/{game_id}/review", guarded(review)),
        Route("/api/replays", guarded(upload_replay), methods=["POST"]),
        Route("/api/stats", guarded(stats)),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
    ]
    if token is not None and (not isinstance(token, str) or len(token) < 16):
        raise ValueError("token must be a string of at least 16 characters "
                         "(secrets.token_urlsafe()), or None for an in-process app")
    middleware = [Middleware(SecurityHeaders)]  # outermost: every answer below gets them
    if allowed_hosts is not None:
        middleware.append(Middleware(HostCheck, allowed_hosts=list(allowed_hosts)))
    if token is not None:
        middleware.append(Middleware(TokenCheck, token=token))
    app = Starlette(routes=routes, middleware=middleware, lifespan=_lets_go_when_stopped,
                    exception_handlers={HTTPException: http_error, 500: server_error})
    app.state.store = store if store is not None else GameStore(data_dir, agents=agents)
    app.state.body_seconds = body_seconds
    return app


@contextlib.asynccontextmanager
async def _lets_go_when_stopped(app: Starlette) -> AsyncIterator[None]:
    """A server that stops lets go of its games and its data folder, so another process
    may play them (a process that ends lets go anyway)."""
    try:
        yield
    finally:
        app.state.store.close()


def _public_summary(g: dict[str, Any]) -> dict[str, Any]:
    """A list entry as the API documents it (the store keeps a few more numbers)."""
    keep = ("id", "created", "updated", "players", "names", "rules", "opponents", "status",
            "teaching", "level", "winner")
    return {k: g[k] for k in keep}


__all__ = ["BODY_SECONDS", "MAX_BODY", "MAX_REPLAY_BODY", "create_app", "read_json"]
