"""Two runs on one output folder: the second is refused while the first runs, whatever it is
(a tournament or a training run), and the folder is free again once the first ends or dies."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hang_limits import hang_limit

from training.runlock import exclusive_folder
from training.tournament import TournamentConfig, deal_seed, run_tournament

REPO = Path(__file__).resolve().parents[1]

HOLDER = """
import sys, time
from training.runlock import exclusive_folder
with exclusive_folder(sys.argv[1], "tournament"):
    print("held", flush=True)
    time.sleep(3600)  # killed by the test; held however slowly the test runs
"""


@pytest.fixture()
def held(tmp_path):
    """Another process holding ``tmp_path / 'out'``; killed at the end of the test."""
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield out, proc
    proc.kill()
    proc.wait()


def test_a_tournament_is_refused_on_a_folder_another_run_holds(held):
    out, proc = held
    config = TournamentConfig(tables=[["random", "greedy"]], games=4, seed=0)
    with pytest.raises(ValueError, match=f"in use by another tournament \\(process {proc.pid}\\)"):
        run_tournament(config, out, workers=1, progress=False, overwrite=True)
    assert not (out / "games.jsonl").exists()  # --overwrite deleted nothing, wrote nothing


def test_scat_train_is_refused_on_a_folder_another_run_holds(held, capsys):
    from scat_cli.main import main

    out, _ = held
    (out / "config.json").write_text("{}")
    code = main(["train", "--config", str(REPO / "configs" / "train" / "smoke.yaml"),
                 "--out", str(out), "--overwrite"])
    assert code == 2 and "in use by another" in capsys.readouterr().err
    assert (out / "config.json").read_text() == "{}"  # not overwritten


def test_the_folder_is_free_once_the_holder_dies(held):
    out, proc = held
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + hang_limit(60)
    while True:
        try:
            with exclusive_folder(out):
                break
        except ValueError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_the_lock_is_reentrant_within_one_process(tmp_path):
    with exclusive_folder(tmp_path / "x", "tournament"), exclusive_folder(tmp_path / "x"):
        pass
    config = TournamentConfig(tables=[["random", "greedy"]], games=4, seed=0)
    with exclusive_folder(tmp_path / "t", "tournament"):
        run = run_tournament(config, tmp_path / "t", workers=1, progress=False)
    assert run is not None and (tmp_path / "t" / "games.jsonl").exists()


# -- two scat tournament commands on one folder --------------------------------------------------
def _scat_tournament(out: Path, seed: int, *extra: str, games: int = 400) -> list[str]:
    return [sys.executable, "-m", "scat_cli", "tournament", "--field", "greedy,random",
            "--games", str(games), "--seed", str(seed), "--workers", "1", "--quiet",
            "--no-plots", "--out", str(out), *extra]


def _one_run_in(out: Path, seed: int) -> None:
    """The folder holds one run's files: its config, its games, results of those games."""
    config = json.loads((out / "config.json").read_text())
    results = json.loads((out / "results.json").read_text())
    assert config["seed"] == seed and results["config"] == config
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == results["games"] == config["total_games"]
    assert {g["seed"] for g in games if g["deal"] == 0} == {deal_seed(seed, 0)}


def test_a_second_scat_tournament_on_a_running_ones_folder_is_refused(tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen(_scat_tournament(out, 1, games=4000), cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + hang_limit(300)
    while not ((out / ".lock").exists() and (out / ".lock").read_text().strip()):
        assert first.poll() is None and time.monotonic() < deadline
        time.sleep(0.005)
    first.send_signal(signal.SIGSTOP)  # held, and paused: however slowly the second starts
    try:
        second = subprocess.run(_scat_tournament(out, 2, "--overwrite"), cwd=REPO,
                                capture_output=True, text=True, timeout=hang_limit(300))
    finally:
        first.send_signal(signal.SIGCONT)
    _, err = first.communicate(timeout=hang_limit(600))
    assert first.returncode == 0, err
    assert second.returncode == 2
    assert second.stderr == (f"scat tournament: error: {out} is in use by another tournament "
                             f"(process {first.pid}); wait for it to finish or choose another "
                             "--out\n")
    _one_run_in(out, 1)


def test_the_folder_stays_held_while_the_report_is_written(tmp_path, monkeypatch):
    """A second run that starts when the first has played its games but not yet written its
    report is refused too (else it would replace the config and games under the report)."""
    import training.report
    from scat_cli.main import main

    out = tmp_path / "out"
    real = training.report.write_report
    seen: dict[str, subprocess.CompletedProcess] = {}

    def write_report(*args, **kwargs):
        seen["second"] = subprocess.run(_scat_tournament(out, 2, "--overwrite"), cwd=REPO,
                                        capture_output=True, text=True, timeout=hang_limit(300))
        return real(*args, **kwargs)

    monkeypatch.setattr(training.report, "write_report", write_report)
    assert main(_scat_tournament(out, 1)[3:]) == 0
    assert seen["second"].returncode == 2
    assert "is in use by another tournament" in seen["second"].stderr
    _one_run_in(out, 1)
