"""One writer per game, a ledger that never blocks play, and no temporary file left behind.

A game is held by one process at a time (:mod:`scat_session.gamelock`): the terminal refuses a
game a server holds in one line, a server answers 409 for a game the terminal plays, and a
second server on a data folder refuses to start; each names where the game is played. The
ledger keeps finished games by id only and stays bounded; one too big or damaged is set
aside with a warning and play goes on. Temporary files a killed writer left are removed at
the next start, never one a live writer holds.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_session import gamelock, keystore
from scat_session.savegame import SavedGame
from scat_web.app import create_app
from scat_web.games import GameStore

BASE = "http://127.0.0.1"
SHORT_RULES = "preset: standard\npennies: 1\ncounty: true\n"  # two lives each: short games
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _scat_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))


def _server(web: Path) -> TestClient:
    return TestClient(create_app(web, store=GameStore(web), token=None), base_url=BASE)


def _new(client: TestClient) -> dict[str, Any]:
    r = client.post("/api/games", json={"players": 2, "opponents": "greedy"})
    assert r.status_code == 201, r.text
    return r.json()["game"]


def _move(client: TestClient, game: dict[str, Any]) -> Any:
    return client.post(f"/api/games/{game['id']}/move",
                       json={"action": game["legal"][0]["action"], "seq": game["seq"]})


def _play(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
          typed: str = "1\n" * 3) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    code = main(["play", "--fast", "--no-color", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- one writer per game ----------------------------------------------------------------------
def test_a_game_a_server_holds_is_refused_by_the_terminal_in_one_line(tmp_path, monkeypatch,
                                                                     capsys):
    """The browser's game, resumed in the terminal, a move there, then one in the browser:
    the terminal is refused before any move, and the browser's game goes on unforked."""
    web = tmp_path / "web"
    with _server(web) as client:
        game = _new(client)
        save = web / f"{game['id']}.json"
        before = save.read_bytes()
        code, out, err = _play(monkeypatch, capsys, ["--resume", str(save)])
        line = _one_line(err)
        assert code == 2 and f"game {game['id']} is being played in scat serve" in line, line
        assert f"(pid {os.getpid()})" in line and "Your turn" not in out
        assert save.read_bytes() == before
        r = _move(client, game)
        assert r.status_code == 200 and r.json()["game"]["seq"] == game["seq"] + 1, r.text


def test_a_game_the_terminal_plays_answers_409_in_the_browser(tmp_path):
    """While ``scat play`` has the game, the server neither opens it nor takes a move for
    it; once the terminal quits, the server opens the terminal's continuation."""
    web = tmp_path / "web"
    with _server(web) as client:
        game = _new(client)
    save = web / f"{game['id']}.json"
    answers: list[Any] = []

    def ask(prompt: str) -> str:
        with _server(web) as browser:
            answers.append(browser.get(f"/api/games/{game['id']}"))
            answers.append(_move(browser, game))
        if len(answers) > 2:
            raise EOFError  # the person quits; the game is saved
        return "1"  # a move in the terminal while the browser waits

    PlaySession(SavedGame.load(save), save, color=False, fast=True, input_fn=ask).run()
    for r in answers:
        assert r.status_code == 409, r.text
        message = r.json()["error"]
        assert "\n" not in message and (f"game {game['id']} is being played in the terminal "
                                         f"(pid {os.getpid()})") in message, message
    with _server(web) as client:
        now = client.get(f"/api/games/{game['id']}")
        assert now.status_code == 200 and now.json()["game"]["seq"] == game["seq"] + 1
        stale = _move(client, game)  # the browser's move from before the terminal's
        assert stale.status_code == 409 and "stale move" in stale.json()["error"]


def test_two_game_stores_on_one_data_folder_the_second_refuses(tmp_path):
    web = tmp_path / "web"
    first = GameStore(web, holder="scat serve on 127.0.0.1:8731 (pid 1)")
    with pytest.raises(gamelock.Busy, match=r"is in use by scat serve on 127\.0\.0\.1:8731 "
                                             r"\(pid 1\)"):
        GameStore(web)
    first.close()
    second = GameStore(web)  # once the first let go
    second.close()


def test_two_scat_serve_on_one_data_folder_the_second_refuses_in_one_line(
        tmp_path, monkeypatch, capsys):
    """The second ``scat serve`` is started while the first serves (inside its serving
    loop, stood in for so that nothing blocks) and exits 2 with one line."""
    import uvicorn

    web = tmp_path / "web"
    second: dict[str, Any] = {}

    def serve(self: Any, sockets: Any = None) -> None:
        if second:  # the second one got this far: it would serve too
            return
        second["port"] = sockets[0].getsockname()[1]
        capsys.readouterr()
        second["code"] = main(["serve", "--port", "0", "--data", str(web)])
        second["err"] = capsys.readouterr().err

    monkeypatch.setattr(uvicorn.Server, "run", serve)
    assert main(["serve", "--port", "0", "--data", str(web)]) == 0
    line = _one_line(second["err"])
    assert second["code"] == 2, line
    assert (f"is in use by scat serve on 127.0.0.1:{second['port']} (pid {os.getpid()})"
            in line), line
    assert main(["serve", "--port", "0", "--data", str(web)]) == 0  # the first let go


_HOLDER = """
import sys, time
from scat_session import gamelock
held = gamelock.hold_game(sys.argv[1], "the terminal (pid %d)" % __import__("os").getpid())
print("held", flush=True)
time.sleep(120)
"""


def test_a_lock_left_by_a_killed_process_blocks_nothing(tmp_path):
    """flock goes with the process, however it ends: the lock file a ``kill -9`` leaves
    behind is taken over at once and swept up at the next start."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, "3f9c01ab"], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(gamelock.Busy) as refused:
            gamelock.hold_game("3f9c01ab", "the test")
        assert refused.value.holder == f"the terminal (pid {proc.pid})"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    left = gamelock.game_lock_path("3f9c01ab")
    assert left.exists()  # a kill removes nothing...
    assert gamelock.sweep_stale() == [left] and not left.exists()  # ...the next start does
    with gamelock.hold_game("3f9c01ab", "the test") as held:
        assert held.held and left.read_text() == "the test\n"
        assert gamelock.sweep_stale() == []  # a held lock is never swept
    assert not left.exists()  # let go: its file goes with it


def test_without_fcntl_a_game_is_refused_in_one_line_not_played_unguarded(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gamelock, "fcntl", None)
    code, out, err = _play(monkeypatch, capsys, ["--opponents", "random",
                                                 "--save", str(tmp_path / "g.json")])
    assert code == 2 and "no fcntl" in _one_line(err) and "Your turn" not in out


def test_lock_files_are_not_games(tmp_path):
    """The folder's lock is a dot file and the game locks live beside the key: neither is
    listed or loaded as a game."""
    web = tmp_path / "web"
    with _server(web) as client:
        game = _new(client)
        assert (web / ".lock").is_file() and gamelock.game_lock_path(game["id"]).is_file()
        listed = client.get("/api/games").json()["games"]
        assert [g["id"] for g in listed] == [game["id"]]
    assert not (web / ".lock").exists() and not gamelock.game_lock_path(game["id"]).exists()


# -- the ledger never blocks play -----------------------------------------------------------
def _ledger() -> dict[str, Any]:
    return json.loads(keystore.ledger_path().read_text())


def _in_progress(tmp_path: Path, monkeypatch, capsys, moves: int = 2) -> Path:
    save = tmp_path / "game.json"
    code, _, err = _play(monkeypatch, capsys, ["--opponents", "random", "--seed", "7",
                                               "--save", str(save)], "1\n" * moves)
    assert code == 0, err
    return save


def _old_ledger_past_8_mib(keep: dict[str, Any]) -> None:
    """A ledger as versions that never pruned it grew it: 70,000 finished games (8.4 MiB)
    and ``keep``, the games still in progress."""
    games = {f"{i:08x}": {"actions": 200, "sha256": "0" * 64, "finished": True}
             for i in range(70_000)}
    games.update(keep)
    keystore.ledger_path().write_text(json.dumps({"games": games}, indent=0))
    assert keystore.ledger_path().stat().st_size > 8 * 2**20


def test_a_ledger_past_8_mib_still_lets_a_game_start_and_move(tmp_path, monkeypatch, capsys):
    """... and is pruned to its bound on the next save, the take-back check of the games
    in progress kept: an older copy of one still does not resume."""
    save = _in_progress(tmp_path, monkeypatch, capsys)
    older = tmp_path / "older.json"
    older.write_bytes(save.read_bytes())
    assert _play(monkeypatch, capsys, ["--resume", str(save)], "1\n")[0] == 0
    _old_ledger_past_8_mib(_ledger()["games"])
    code, out, err = _play(monkeypatch, capsys, ["--opponents", "random", "--seed", "8",
                                                 "--save", str(tmp_path / "new.json")])
    assert code == 0 and ("Your turn" in out or "Your last turn" in out) and not err.strip(), err
    assert len(SavedGame.load(tmp_path / "new.json").actions) > 1
    ledger = _ledger()
    assert keystore.ledger_path().stat().st_size < 2**20
    assert len(ledger["finished"]) == keystore.MAX_FINISHED and len(ledger["games"]) == 2
    code, _, err = _play(monkeypatch, capsys, ["--resume", str(older)], "1\n")
    assert code == 2 and "older than the game's last move" in _one_line(err)


def test_a_browser_game_starts_and_moves_with_a_ledger_past_8_mib(tmp_path):
    keystore.ledger_path().parent.mkdir(parents=True)
    _old_ledger_past_8_mib({})
    with _server(tmp_path / "web") as client:
        game = _new(client)
        r = _move(client, game)
        assert r.status_code == 200, r.text


@pytest.mark.parametrize("ledger", ["damaged", "too big"])
def test_an_unusable_ledger_is_set_aside_with_one_warning_and_play_goes_on(
        tmp_path, monkeypatch, capsys, ledger):
    save = _in_progress(tmp_path, monkeypatch, capsys)
    path = keystore.ledger_path()
    if ledger == "damaged":
        path.write_text("not what scat wrote")
    else:
        with open(path, "wb") as f:
            f.truncate(keystore.MAX_LEDGER_BYTES + 1)  # sparse: no disk spent
    code, out, err = _play(monkeypatch, capsys, ["--resume", str(save)], "1\n")
    line = _one_line(err)
    assert code == 0 and "Resuming" in out, err
    assert line.startswith("scat: warning: the ledger") and "set aside" in line, line
    aside = path.with_name("ledger.json.damaged")
    assert aside.is_file() and (ledger != "damaged" or aside.read_text() == "not what scat wrote")
    assert list(_ledger()["games"]) == [SavedGame.load(save).game_id]  # a new ledger


def test_a_finished_game_leaves_the_games_in_progress_of_the_ledger(tmp_path, monkeypatch,
                                                                   capsys):
    rules = tmp_path / "short.yaml"
    rules.write_text(SHORT_RULES)
    save = tmp_path / "g.json"
    code, _, err = _play(monkeypatch, capsys, ["--opponents", "random", "--players", "2",
                                               "--rules", str(rules), "--save", str(save)],
                         "1\n" * 2000)
    assert code == 0, err
    done = SavedGame.load(save)
    assert done.status == "finished"
    ledger = _ledger()
    assert done.game_id not in ledger["games"] and ledger["finished"] == [done.game_id]


def test_the_ledger_keeps_the_latest_games_up_to_its_bounds(monkeypatch):
    monkeypatch.setattr(keystore, "MAX_IN_PROGRESS", 3)
    monkeypatch.setattr(keystore, "MAX_FINISHED", 2)
    for i in range(5):
        keystore.ledger_record(f"p{i}", [[0, "stock"]] * i, finished=False)
    keystore.ledger_record("p1", [[0, "stock"]] * 9, finished=False)  # saved again: latest
    for i in range(4):
        keystore.ledger_record(f"f{i}", [], finished=True)
    ledger = _ledger()
    assert list(ledger["games"]) == ["p3", "p4", "p1"]
    assert ledger["finished"] == ["f2", "f3"]


# -- leftover temporary files ---------------------------------------------------------------
def _left(folder: Path, name: str, age: float = 3600.0) -> Path:
    """A temporary file named as :func:`keystore.atomic_write` names them, ``age`` old."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("half a save")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_temporary_files_left_by_a_kill_are_removed_when_scat_play_starts(
        tmp_path, monkeypatch, capsys):
    saves, replays, home = tmp_path / "saves", tmp_path / "replays", tmp_path / "home"
    removed = [_left(saves, ".g.json.abcd1234.tmp"),
               _left(replays, ".scat-20250101-120000-3p-3f9c01ab.json.k2j4_x9z.tmp"),
               _left(home, ".ledger.json.zz99aa11.tmp"), _left(home, ".key.q1w2e3r4.tmp")]
    kept = [_left(saves, ".notes.txt.abcd1234.tmp"),  # another file's: not ours to remove
            _left(saves, ".other.json.abcd1234.tmp"),  # another save's, outside our folders
            _left(saves, "g.json.tmp"), _left(replays, ".x.json.short.tmp"),
            _left(replays, ".fresh.json.abcdefgh.tmp", age=0.0)]  # maybe being created now
    busy = _left(replays, ".busy.json.abcdefgh.tmp")
    with open(busy, "rb") as writer:  # a live writer holds it
        fcntl.flock(writer.fileno(), fcntl.LOCK_EX)
        code, _, err = _play(monkeypatch, capsys, ["--opponents", "random",
                                                   "--save", str(saves / "g.json")])
    assert code == 0, err
    assert [p for p in removed if p.exists()] == []
    assert [p for p in [*kept, busy] if not p.exists()] == []


def test_temporary_files_left_by_a_kill_are_removed_when_scat_serve_starts(tmp_path):
    web = tmp_path / "web"
    left = _left(web, ".3f9c01ab.json.abcd1234.tmp")
    other = _left(web, ".notes.txt.abcd1234.tmp")
    GameStore(web).close()
    assert not left.exists() and other.exists()


_WRITER = """
import os, sys
from pathlib import Path
from scat_session import keystore
real = os.fsync
def stuck(fd):
    print("writing", flush=True)
    sys.stdin.readline()  # killed here, half-way through its write
os.fsync = stuck
keystore.atomic_write(Path(sys.argv[1]), b"a whole save")
"""


def test_a_temporary_file_is_removed_only_once_its_writer_is_gone(tmp_path):
    """A real ``atomic_write`` stopped half-way: its file is kept while the writer lives
    (however old it looks) and removed at the first start after a ``kill -9``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    target = tmp_path / "replays" / "g.json"
    target.parent.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        (tmp,) = [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]
        assert re.fullmatch(r"\.g\.json\.[a-z0-9_]{8}\.tmp", tmp.name)
        os.utime(tmp, (time.time() - 3600, time.time() - 3600))
        assert keystore.sweep_temp_files(target.parent) == [] and tmp.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert keystore.sweep_temp_files(target.parent) == [tmp] and not target.exists()
