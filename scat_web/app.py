"""The HTTP side of ``scat serve``: a Starlette app over a :class:`~scat_web.games.GameStore`.

Routes and payloads are documented in ``docs/WEB_API.md``. Every error is a 4xx (5xx for
the server's own failures: a save that cannot be written) whose body is
``{"error": "<one line>"}``; a refused request changes nothing.

Why the checks beyond the game's own:

- A POST must say ``Content-Type: application/json``. A page on another site can send a
  form or ``text/plain`` POST to ``127.0.0.1`` without asking; a JSON one needs a CORS
  preflight, which this server never grants, so other sites cannot play your games.
- On a loopback address only ``Host: 127.0.0.1``, ``localhost`` or ``[::1]`` are served,
  so a site that re-points its own name at 127.0.0.1 (DNS rebinding) gets nothing.
- Bodies are read up to a limit (:data:`MAX_BODY`, :data:`MAX_REPLAY_BODY` for an uploaded
  replay), nested at most :data:`~scat_cli.savegame.MAX_DEPTH` deep, before any parsing.

Game work is CPU-bound Python; it runs in Starlette's thread pool, one request per game at
a time (:class:`~scat_web.games.LiveGame` ``lock``), so many games are played at once.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scat_cli.savegame import ReplayError, check_depth
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS

from .games import AGENTS, GameStore, WebError, check_move, check_new_game, replay_upload
from .serialize import preset_option

#: The largest request body, except an uploaded replay (a move is a few dozen bytes).
MAX_BODY = 16 * 1024
#: The largest uploaded replay (a long ten-player game is a few hundred KiB).
MAX_REPLAY_BODY = 4 * 1024 * 1024
#: Host names served when the server listens on a loopback address.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
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
    return JSONResponse({"error": message}, status_code=status)


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
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise WebError(413, f"the body is over {limit} bytes; at most {limit} are read here")
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
    """``fn`` with its refusals as JSON errors, and the security headers on every answer."""
    async def handle(request: Request) -> Response:
        try:
            response = await fn(request)
        except WebError as exc:
            response = error(exc.status, exc.message)
        response.headers.update(SECURITY_HEADERS)
        if request.url.path.startswith("/api/"):
            response.headers["Cache-Control"] = "no-store"
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
    return JSONResponse({
        "presets": presets, "default_rules": "standard",
        "agents": [{"spec": spec, "label": label} for spec, label in store.agents],
        "default_opponent": default, "default_players": 3,
        "min_players": MIN_PLAYERS, "max_players": MAX_PLAYERS,
    })


async def list_games(request: Request) -> Response:
    games = await run_in_threadpool(_store(request).summaries)
    return JSONResponse({"games": [_public_summary(g) for g in games]})


async def new_game(request: Request) -> Response:
    store = _store(request)
    body = await read_json(request)
    players, specs, rules_name, name, teaching = check_new_game(body, store)

    def run() -> dict[str, Any]:
        live, events = store.create(players, specs, rules_name, name, teaching)
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


async def upload_replay(request: Request) -> Response:
    data = await read_json(request, MAX_REPLAY_BODY)
    return JSONResponse({"replay": await run_in_threadpool(replay_upload, data)})


async def stats(request: Request) -> Response:
    return JSONResponse(await run_in_threadpool(_store(request).stats))


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, wrong method) in the API's error form."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    text = {404: f"no such path: {request.url.path[:80]}",
            405: f"{request.method} is not allowed on {request.url.path[:80]}"}.get(
                status, "the request was refused")
    response = error(status, text)
    response.headers.update(SECURITY_HEADERS)
    return response


async def server_error(request: Request, exc: Exception) -> Response:
    return error(500, f"the server failed ({type(exc).__name__}); the game is as it was "
                      "last saved")


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
            response.headers.update(SECURITY_HEADERS)
            response.headers["Cache-Control"] = "no-store"
            await response(scope, receive, send)
            return
        for message in refusal:  # a redirect, or a refusal off the API: Starlette's own
            await send(message)


def create_app(
    data_dir: str | Path,
    *,
    store: GameStore | None = None,
    allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS,
    agents: Sequence[tuple[str, str]] = AGENTS,
) -> Starlette:
    """The app serving the games of ``data_dir``. ``allowed_hosts=None`` serves any Host
    header (a server on a non-loopback address); tests may pass their own ``store``."""
    routes = [
        Route("/", guarded(index)),
        Route("/api/options", guarded(options)),
        Route("/api/games", guarded(list_games), methods=["GET"]),
        Route("/api/games", guarded(new_game), methods=["POST"]),
        Route("/api/games/{game_id}", guarded(get_game)),
        Route("/api/games/{game_id}/move", guarded(move), methods=["POST"]),
        Route("/api/games/{game_id}/hint", guarded(hint)),
        Route("/api/games/{game_id}/replay", guarded(replay)),
        Route("/api/replays", guarded(upload_replay), methods=["POST"]),
        Route("/api/stats", guarded(stats)),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
    ]
    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(HostCheck, allowed_hosts=list(allowed_hosts)))
    app = Starlette(routes=routes, middleware=middleware, lifespan=_lets_go_when_stopped,
                    exception_handlers={HTTPException: http_error, 500: server_error})
    app.state.store = store if store is not None else GameStore(data_dir, agents=agents)
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
            "teaching", "winner")
    return {k: g[k] for k in keep}


__all__ = ["MAX_BODY", "MAX_REPLAY_BODY", "create_app", "read_json"]
