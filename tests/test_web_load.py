"""``scat serve`` for real: uvicorn on 127.0.0.1 (a free port), many games at once.

The load test starts the server as ``scat serve --port 0`` would be started by a person,
plays :data:`GAMES` games at once through HTTP from as many client threads (cheap
opponents, the person choosing random legal moves), then restarts the server and checks
that nothing was lost: every game is listed, over, with the moves its client made, and its
save re-simulates. It prints its figures (games, moves, moves/s, time per move at the client
and on the server, p50 and p95); docs/WEB_API.md quotes them. Everything is bounded: a
deadline per game and for the whole run, a cap on moves, and the server is always stopped.
"""

from __future__ import annotations

import os
import random
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hang_limits import hang_limit

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

#: Games played, and client threads playing them at once (one game each by default);
#: ``SCAT_WEB_LOAD_CLIENTS=1`` plays them one after another, for the server's time per move
#: without contention.
GAMES = int(os.environ.get("SCAT_WEB_LOAD_GAMES", "50"))
CLIENTS = int(os.environ.get("SCAT_WEB_LOAD_CLIENTS", str(GAMES)))
#: Seconds the whole run may take before it is called a failure: it takes a few, the limit
#: only turns a hang into a failure, on however loaded a machine (tests/hang_limits.py).
DEADLINE = hang_limit(600)
#: Moves one game may take (a random player's game is a few dozen).
MAX_MOVES = 500
SETUPS = [(2, "random", "standard"), (3, "greedy", "standard"), (4, "random", "hammer"),
          (3, "greedy", "undeclared_31"), (2, "greedy", "moyer")]


class Server:
    """``scat serve --port 0`` in a subprocess; its address read from what it prints."""

    def __init__(self, home: Path, *args: str) -> None:
        env = {**os.environ, "SCAT_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scat_cli", "serve", "--port", "0",
             "--data", str(home / "web"), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline() if self.proc.stdout else ""  # type: ignore[union-attr]
        found = re.search(r"(http://\S+?:(\d+))/\?token=([\w-]+)", line)
        if not found:
            self.stop()
            raise AssertionError(f"no address printed: {line!r} {self.stderr()}")
        self.url, self.port, self.token = found.group(1), int(found.group(2)), found.group(3)
        #: What a script sends to be let in (the token printed at launch).
        self.auth = {"Authorization": f"token {self.token}"}
        self.line = line

    def stderr(self) -> str:
        try:
            return self.proc.communicate(timeout=10)[1]
        except subprocess.TimeoutExpired:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def _serve(home: Path, *args: str) -> Server:
    return Server(home, *args)


def _play(url: str, index: int, deadline: float, out: dict[int, dict[str, Any]],
          auth: dict[str, str]) -> None:
    """One game from start to end; notes its id, moves and per-move times in ``out``."""
    players, opponents, rules = SETUPS[index % len(SETUPS)]
    rng = random.Random(index)
    record: dict[str, Any] = {"moves": 0, "client": [], "server": [], "error": None}
    out[index] = record
    with httpx.Client(base_url=url, timeout=hang_limit(120), headers=auth) as client:
        try:
            r = client.post("/api/games", json={"players": players, "opponents": opponents,
                                                "rules": rules})
            assert r.status_code == 201, r.text
            game = r.json()["game"]
            record["id"] = game["id"]
            while game["status"] == "playing":
                if time.monotonic() > deadline or record["moves"] >= MAX_MOVES:
                    record["error"] = "out of time or moves"
                    return
                action = rng.choice(game["legal"])["action"]
                started = time.perf_counter()
                r = client.post(f"/api/games/{game['id']}/move",
                                json={"action": action, "seq": game["seq"]})
                record["client"].append(time.perf_counter() - started)
                assert r.status_code == 200, r.text
                record["server"].append(float(r.headers["server-timing"].split("dur=")[1]) / 1000)
                game = r.json()["game"]
                record["moves"] += 1
            record["seq"] = game["seq"]
            record["winner"] = game["winner"]
        except Exception as exc:  # noted, and the test fails naming it
            record["error"] = f"{type(exc).__name__}: {exc}"


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def test_fifty_games_at_once_all_finish_and_survive_a_restart(home: Path) -> None:
    server = _serve(home)
    out: dict[int, dict[str, Any]] = {}
    try:
        assert server.url.startswith("http://127.0.0.1:")
        deadline = time.monotonic() + DEADLINE
        started = time.perf_counter()
        todo = iter(range(GAMES))
        claim = threading.Lock()

        def client_thread() -> None:
            while True:
                with claim:
                    index = next(todo, None)
                if index is None:
                    return
                _play(server.url, index, deadline, out, server.auth)

        threads = [threading.Thread(target=client_thread, daemon=True) for _ in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()) + 5)
        wall = time.perf_counter() - started
    finally:
        server.stop()
    errors = {i: r["error"] for i, r in out.items() if r["error"]}
    assert len(out) == GAMES and not errors, errors
    moves = sum(r["moves"] for r in out.values())
    client = [t for r in out.values() for t in r["client"]]
    on_server = [t for r in out.values() for t in r["server"]]
    print(f"\n{GAMES} games, {CLIENTS} at once, {moves} moves in {wall:.1f} s: {moves / wall:.0f} moves/s; "
          f"per move at the client p50 {_pct(client, 50):.1f} ms, p95 {_pct(client, 95):.1f} ms; "
          f"on the server p50 {_pct(on_server, 50):.1f} ms, p95 {_pct(on_server, 95):.1f} ms")

    again = _serve(home)  # a restart: every game is there, over, as its client left it
    try:
        with httpx.Client(base_url=again.url, timeout=hang_limit(120),
                          headers=again.auth) as client_:
            listed = {g["id"]: g for g in client_.get("/api/games").json()["games"]}
            assert set(listed) == {r["id"] for r in out.values()}
            assert {g["status"] for g in listed.values()} == {"over"}
            for r in list(out.values())[:10]:
                state = client_.get(f"/api/games/{r['id']}").json()["game"]
                assert state["seq"] == r["seq"] == r["moves"]
                assert state["winner"] == r["winner"]
                assert client_.get(f"/api/games/{r['id']}/replay").status_code == 200
    finally:
        again.stop()


def test_scat_serve_listens_on_this_machine_unless_told_and_then_warns(home: Path) -> None:
    local = _serve(home)
    try:
        with httpx.Client(base_url=local.url, timeout=hang_limit(120), headers=local.auth) as client:
            assert client.get("/api/options").status_code == 200
    finally:
        local.stop()
    assert "http://127.0.0.1:" in local.line and "warning" not in local.stderr()
    everyone = _serve(home, "--host", "0.0.0.0", "--allow-host", "scat.example")
    try:
        with httpx.Client(timeout=hang_limit(120), headers=everyone.auth) as client:
            url = f"http://127.0.0.1:{everyone.port}/api/options"
            assert client.get(url).status_code == 200
            assert client.get(url, headers={"host": "scat.example"}).status_code == 200
            refused = client.get(url, headers={"host": "rebound.example"})
            assert refused.status_code == 400 and "Host" in refused.json()["error"]
            assert client.get(url, headers={"authorization": ""}).status_code == 403
    finally:
        everyone.stop()
    err = everyone.stderr()
    assert "warning" in err and "anyone on the network" in err and "Traceback" not in err
    assert "Host names answered: 127.0.0.1, localhost, [::1]" in err and "scat.example" in err


def _whole_answer(sock: Any) -> str:
    """The server's whole answer on ``sock``: the head, then as many body bytes as its
    Content-Length says (they may come in later segments than the head)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data.decode()
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return (head + b"\r\n\r\n" + body).decode()


def test_a_client_that_stops_sending_its_body_gets_408_and_the_server_goes_on(home: Path) -> None:
    """A real socket that sends the headers and half the body, then nothing: 408 within
    the body deadline (scat_web.app.BODY_SECONDS), and the server answers others meanwhile."""
    import socket

    from scat_web.app import BODY_SECONDS

    server = _serve(home)
    try:
        with socket.create_connection(("127.0.0.1", server.port),
                                      timeout=BODY_SECONDS + hang_limit(120)) as s:
            s.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      b"Content-Type: application/json\r\nContent-Length: 100\r\n"
                      + f"X-Scat-Token: {server.token}\r\n\r\n".encode() + b'{"players": ')
            started = time.monotonic()
            with httpx.Client(base_url=server.url, timeout=hang_limit(120),
                              headers=server.auth) as other:
                assert other.get("/api/options").status_code == 200
            answer = _whole_answer(s)
            waited = time.monotonic() - started
        assert answer.startswith("HTTP/1.1 408"), answer[:200]
        assert "did not arrive within" in answer, answer
        # not before the deadline; the upper bound only guards against a hang
        assert BODY_SECONDS - 1 < waited < BODY_SECONDS + hang_limit(60), waited
    finally:
        server.stop()
    assert "Traceback" not in server.stderr()


def test_a_server_killed_mid_game_resumes_it_after_a_restart(home: Path) -> None:
    """SIGKILL (no clean shutdown) after some moves: the next launch (a new token) has the
    game at the last move it answered, and the old token no longer opens anything."""
    server = _serve(home)
    try:
        with httpx.Client(base_url=server.url, timeout=hang_limit(120), headers=server.auth) as client:
            game = client.post("/api/games", json={"players": 2, "opponents": "random"}).json()
            game = game["game"]
            for _ in range(3):
                r = client.post(f"/api/games/{game['id']}/move",
                                json={"action": game["legal"][0]["action"], "seq": game["seq"]})
                game = r.json()["game"]
    finally:
        server.proc.kill()
        server.proc.wait(timeout=10)
    again = _serve(home)
    try:
        assert again.token != server.token
        with httpx.Client(base_url=again.url, timeout=hang_limit(120)) as client:
            assert client.get(f"/api/games/{game['id']}", headers=server.auth).status_code == 403
            state = client.get(f"/api/games/{game['id']}", headers=again.auth).json()["game"]
        assert state["seq"] == game["seq"] and state["hand"] == game["hand"]
    finally:
        again.stop()


def test_the_listening_socket_says_it_is_tcp_so_answers_leave_at_once() -> None:
    """asyncio turns Nagle's algorithm off only on a socket whose protocol is TCP; left 0,
    every answer waits about 40 ms for the client's delayed ACK. Checked on the socket, not
    by a stopwatch: a loaded machine can take 40 ms for any answer (the timing is
    :func:`test_answers_go_out_without_waiting_for_a_delayed_ack`, ``pytest -m slow``)."""
    from scat_web.command import open_socket

    sock = open_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP and sock.type == socket.SOCK_STREAM
    finally:
        sock.close()


@pytest.mark.slow
def test_answers_go_out_without_waiting_for_a_delayed_ack(home: Path) -> None:
    """The time it buys, measured: with Nagle's algorithm left on, each answer would wait
    for the client's delayed ACK (40 ms). A measurement, so in the slow tier: run it on a
    quiet machine."""
    local = _serve(home)
    try:
        with httpx.Client(base_url=local.url, timeout=hang_limit(120),
                          headers=local.auth) as client:
            times = []
            for _ in range(7):
                started = time.perf_counter()
                assert client.get("/api/options").status_code == 200
                times.append(time.perf_counter() - started)
        assert statistics.median(times) < 0.035, times
    finally:
        local.stop()


@pytest.mark.parametrize(("args", "words"), [
    (["--port", "70000"], "--port must be between 0 and 65535"),
    (["--host", "example.com"], "--host must be an IP address"),
    (["--host", "203.0.113.9"], "cannot listen on 203.0.113.9"),
    (["--allow-host", "*.example"], "--allow-host takes a host name"),
    (["--allow-host", "x" * 5000], "--allow-host takes a host name"),
])
def test_scat_serve_refuses_bad_arguments_in_one_line(home: Path, args: list[str],
                                                      words: str) -> None:
    env = {**os.environ, "SCAT_HOME": str(home)}
    out = subprocess.run([sys.executable, "-m", "scat_cli", "serve", "--port", "0", *args],
                         capture_output=True, text=True, env=env, timeout=hang_limit(300))
    assert out.returncode == 2, out
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
