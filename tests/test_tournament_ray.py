"""``--backend ray``: the same tournament played as Ray tasks writes the same bytes as the
local pool, resumes like it, and refuses what it cannot use in one line.

One local Ray instance (2 CPUs) serves the module's in-process runs; the CLI tests run
``scat tournament`` as a subprocess, which starts its own instance (or fails to reach a
cluster) as it does on a machine without one.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hang_limits import hang_guard, hang_limit

from scat_cli.main import main
from training.report import summarize, write_report
from training.tournament import (
    RAY_MISSING,
    TournamentConfig,
    TournamentRun,
    read_games,
    run_tournament,
    runner,
)
from training.tournament import run as tournament_run

REPO = Path(__file__).resolve().parent.parent
# Three distinct agents: 6 seatings a deal, 10 deals, 60 games.
CONFIG = TournamentConfig(tables=(("random", "greedy", "threshold:25"),), games=60, seed=5)
CLI_CONFIG = ["--agents", "random,greedy,threshold:25", "--players", "3", "--games", "60",
              "--seed", "5", "--quiet", "--no-plots"]


@pytest.fixture(scope="module")
def ray_instance() -> Any:
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR")
        try:
            yield ray
        finally:
            ray.shutdown()


@pytest.fixture(scope="module")
def local_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """``games.jsonl`` and ``results.json`` of CONFIG played by the local backend."""
    out = tmp_path_factory.mktemp("local")
    _run(out, workers=1)
    return _files(out)


def _forbid_local_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """Games played in this process now fail: a Ray run must play every one in Ray's
    workers (which import the module afresh), so a silent fall-back to local play cannot
    pass the tests below."""
    def forbidden(*_: Any) -> None:
        raise AssertionError("a game was played in this process, not as a Ray task")

    monkeypatch.setattr(runner, "_play_chunk", forbidden)
    monkeypatch.setattr(runner, "play_key", forbidden)


def _files(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in ("games.jsonl", "results.json")}


def _run(out: Path, **kw: Any) -> TournamentRun:
    run = run_tournament(CONFIG, out, progress=False, **kw)
    write_report(out, summarize(CONFIG.to_dict(), run.games), plots=False)
    return run


def _scat(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return subprocess.run([sys.executable, "-m", "scat_cli", "tournament", *args], cwd=REPO,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=hang_limit(600))


def _free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ray_results_are_byte_identical_to_the_local_pool(tmp_path, ray_instance, local_files,
                                                          monkeypatch):
    _forbid_local_play(monkeypatch)
    one = _run(tmp_path / "one", workers=1, backend="ray")
    two = _run(tmp_path / "two", workers=2, backend="ray", chunk_games=5)
    assert (one.workers, two.workers) == (1, 2)
    assert one.played_now == two.played_now == len(CONFIG.keys())
    assert _files(tmp_path / "one") == local_files
    assert _files(tmp_path / "two") == local_files


def test_interrupted_ray_run_resumes_to_the_bytes_of_an_uninterrupted_one(
        tmp_path, ray_instance, local_files, monkeypatch):
    _forbid_local_play(monkeypatch)
    out = tmp_path / "cut"
    real_append = tournament_run._Log.append
    logged = {"n": 0}

    def ctrl_c_after_13(log: Any, rec: dict[str, Any]) -> None:
        if logged["n"] == 13:
            raise KeyboardInterrupt  # as Ctrl-C while chunks are still out on the cluster
        logged["n"] += 1
        real_append(log, rec)

    monkeypatch.setattr(tournament_run._Log, "append", ctrl_c_after_13)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(CONFIG, out, workers=2, backend="ray", progress=False, chunk_games=4)
    monkeypatch.setattr(tournament_run._Log, "append", real_append)
    assert len(read_games(out / "games.jsonl")) == 13

    # The resume's re-play runs on the cluster too: a consistently edited record is caught.
    lines = (out / "games.jsonl").read_text().splitlines(keepends=True)
    edited = json.loads(lines[0])
    edited["decisions"] += 1
    (out / "games.jsonl").write_text(json.dumps(edited, separators=(",", ":")) + "\n"
                                     + "".join(lines[1:]))
    with pytest.raises(ValueError, match="does not replay as logged"):
        run_tournament(CONFIG, out, workers=2, backend="ray", progress=False, resume=True)
    (out / "games.jsonl").write_text("".join(lines))

    run = _run(out, workers=2, backend="ray", resume=True)
    assert (run.played_now, run.verified) == (60 - 13, 13)
    assert _files(out) == local_files


def test_cli_ray_backend_on_its_own_instance_matches_the_local_run(tmp_path, local_files):
    pytest.importorskip("ray")
    done = _scat(*CLI_CONFIG, "--backend", "ray", "--workers", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert _files(tmp_path) == local_files
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert (timing["backend"], timing["workers"], timing["games_played_now"]) == ("ray", 2, 60)


@pytest.mark.parametrize("how", ["--ray-address", "RAY_ADDRESS"])
def test_unreachable_ray_address_is_one_line_and_plays_nothing(tmp_path, how):
    pytest.importorskip("ray")
    address = f"127.0.0.1:{_free_port()}"
    if how == "--ray-address":
        done = _scat(*CLI_CONFIG, "--backend", "ray", "--ray-address", address,
                     "--out", str(tmp_path))
    else:
        done = _scat(*CLI_CONFIG, "--backend", "ray", "--out", str(tmp_path),
                     env={"RAY_ADDRESS": address})
    assert done.returncode == 2
    assert done.stderr == (f"scat tournament: error: cannot reach a Ray cluster at {address}: "
                           "Connection refused\n")
    assert not (tmp_path / "games.jsonl").exists()
    assert not (tmp_path / ".lock").exists()  # refused before the folder is touched


def _no_other_ray(monkeypatch, tmp_path) -> Path:
    """This machine as one where no Ray instance runs (Ray's ``auto`` also joins any Ray
    process it finds running, such as another test's), with its temp folder in tmp_path."""
    services = pytest.importorskip("ray._private.services")
    monkeypatch.setattr(services, "find_gcs_addresses", lambda: [])
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "raytmp"))
    (tmp_path / "raytmp" / "ray").mkdir(parents=True)
    return tmp_path / "raytmp" / "ray"


def test_auto_with_a_stopped_clusters_note_left_behind_is_one_line_not_minutes(
        tmp_path, monkeypatch):
    """``ray start --head`` notes its address in Ray's temp folder, and the note outlives the
    cluster: ``auto`` then names a dead address, which ``ray.init`` retries for minutes."""
    from training.tournament import check_ray_address

    address = f"127.0.0.1:{_free_port()}"
    (_no_other_ray(monkeypatch, tmp_path) / "ray_current_cluster").write_text(address + "\n")
    with pytest.raises(ValueError) as err:
        check_ray_address("auto")
    assert str(err.value) == f"cannot reach a Ray cluster at auto ({address}): Connection refused"


def test_auto_with_no_cluster_on_this_machine_is_one_line(tmp_path, monkeypatch):
    from training.tournament import check_ray_address

    _no_other_ray(monkeypatch, tmp_path)
    with pytest.raises(ValueError) as err:
        check_ray_address("auto")
    assert str(err.value) == ("no Ray cluster runs on this machine for --ray-address auto "
                              "(start one with ray start --head): Could not find any running "
                              "Ray instance")


def test_the_cli_checks_the_address_before_the_out_folder_is_touched(tmp_path, monkeypatch,
                                                                      capsys):
    _no_other_ray(monkeypatch, tmp_path)
    out = tmp_path / "out"
    assert main(["tournament", *CLI_CONFIG, "--backend", "ray", "--ray-address", "auto",
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith("scat tournament: error: no Ray cluster runs")
    assert not out.exists()


def test_ray_address_without_the_ray_backend_is_refused(tmp_path, capsys):
    assert main(["tournament", *CLI_CONFIG, "--ray-address", "10.0.0.5:6379",
                 "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("scat tournament: error: --ray-address needs "
                                       "--backend ray\n")


def test_ray_backend_without_ray_installed_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if absent
    assert main(["tournament", *CLI_CONFIG, "--backend", "ray", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"scat tournament: error: {RAY_MISSING}\n"
    # scat-env is not on a package index: `pip install 'scat-env[ray]'` finds nothing
    assert RAY_MISSING == ('--backend ray needs Ray (pip install "ray>=2.40,<3", or pip '
                           'install -e ".[ray]" in a scat-env checkout)')
    assert not (tmp_path / "games.jsonl").exists()


@contextmanager
def _http_server() -> Iterator[str]:
    """A local port that accepts connections and answers, but not as a Ray head."""
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_port_that_answers_but_not_as_a_ray_head_is_refused_at_once():
    """A TCP connection alone proved nothing (a proxy or another service accepts it), and
    ``ray.init`` then retried for 20 s to minutes: the head's control service is asked."""
    from training.tournament import check_ray_address

    pytest.importorskip("ray")
    with _http_server() as address, hang_guard(120, "the address check"):
        start = time.monotonic()
        with pytest.raises(ValueError) as err:
            check_ray_address(address)
        took = time.monotonic() - start
    assert str(err.value).startswith(f"cannot reach a Ray cluster at {address}: no answer "
                                     "from its control service within 5 s")
    assert took < 15  # the probe's own 5 s, never Ray's retries


def _gcs(ray: Any) -> str:
    return ray.get_runtime_context().gcs_address


def test_a_token_cluster_without_ray_auth_mode_is_one_line_naming_the_fix(
        ray_instance, monkeypatch):
    """Ray 2.60 sends its token only with RAY_AUTH_MODE=token, and said only "failed to
    connect", after 20 s, when a cluster wanted one. A local ``ray.init`` (this module's
    instance) turns token authentication on."""
    from training.tournament import check_ray_address

    address = _gcs(ray_instance)
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    with pytest.raises(ValueError) as err:
        check_ray_address(address)
    assert str(err.value) == (f"the Ray cluster at {address} uses token authentication: set "
                              "RAY_AUTH_MODE=token and give this machine the head's token "
                              "(~/.ray/auth_token or RAY_AUTH_TOKEN; docs/SCALING.md)")


def test_a_missing_or_wrong_token_is_one_line_and_the_right_one_passes(
        ray_instance, monkeypatch, tmp_path):
    from training.tournament import check_ray_address
    from training.tournament.ray_backend import ray_token

    address = _gcs(ray_instance)
    token = ray_token()
    assert token, "a local ray.init writes ~/.ray/auth_token"
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "none"))
    with pytest.raises(ValueError, match="uses token authentication and this machine has no "
                                         "token: copy the head's ~/.ray/auth_token here"):
        check_ray_address(address)
    monkeypatch.setenv("RAY_AUTH_TOKEN", "0" * len(token))
    with pytest.raises(ValueError, match="refuses this machine's token"):
        check_ray_address(address)
    monkeypatch.setenv("RAY_AUTH_TOKEN", token)
    check_ray_address(address)


def test_ray_auth_mode_token_without_a_token_is_one_line(monkeypatch):
    """Joining a cluster without tokens with RAY_AUTH_MODE=token and no token: Ray raised
    its AuthenticationError as a traceback."""
    ray = pytest.importorskip("ray")
    from training.tournament import init_ray, ray_backend

    def refuse(*_: Any, **__: Any) -> None:
        raise ray.exceptions.AuthenticationError("Token authentication is enabled but no "
                                                 "authentication token was found. Ensure...")

    monkeypatch.setattr(ray_backend, "_check_reachable", lambda address: None)
    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(ValueError) as err:
        init_ray("10.0.0.5:6379", {}, "ERROR")
    assert str(err.value) == ("cannot use the Ray cluster at 10.0.0.5:6379: RAY_AUTH_MODE=token "
                              "but this machine has no Ray token: copy the head's "
                              "~/.ray/auth_token here or set RAY_AUTH_TOKEN (docs/SCALING.md)")


def test_a_worker_missing_a_module_is_one_line_naming_it_the_node_and_the_fix(
        tmp_path, ray_instance, monkeypatch):
    """Ray reported it as the worker's whole traceback, in colour."""
    from training.tournament import ray_backend

    def play_without_a_module(*_: Any) -> list[dict[str, Any]]:
        import scat_missing_module_for_the_test  # noqa: F401  (absent on the worker)

        return []

    monkeypatch.setattr(ray_backend, "_ray_play_chunk", play_without_a_module)
    with pytest.raises(ValueError) as err:
        run_tournament(CONFIG, tmp_path / "out", workers=1, backend="ray", progress=False)
    line = str(err.value)
    assert "\n" not in line and "\x1b" not in line
    assert line.startswith("a Ray worker on node ")
    assert line.endswith(" cannot import 'scat_missing_module_for_the_test': install scat-env "
                         "and its dependencies there as on this machine, the same version on "
                         'every node (pip install "ray>=2.40,<3", or pip install -e ".[ray]" '
                         "in a scat-env checkout)")
