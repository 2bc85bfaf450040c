"""Two runs on one output folder: the second is refused while the first runs, whatever it is
(a tournament or a training run), and the folder is free again once the first ends or dies."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from training.runlock import exclusive_folder
from training.tournament import TournamentConfig, run_tournament

REPO = Path(__file__).resolve().parents[1]

HOLDER = """
import sys, time
from training.runlock import exclusive_folder
with exclusive_folder(sys.argv[1], "tournament"):
    print("held", flush=True)
    time.sleep(60)
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
    deadline = time.monotonic() + 5
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
