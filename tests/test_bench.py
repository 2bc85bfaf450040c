"""``scat bench``: the env benchmark, ``scat bench agents`` and ``scat bench training``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from training import bench
from training.config import load_config

ROOT = Path(__file__).resolve().parents[1]


def scat(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scat_cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, prog", [
    ((), "scat bench"), (("agents",), "scat bench agents"),
    (("training",), "scat bench training"),
])
def test_help_names_the_command_a_user_typed(args, prog):
    proc = scat("bench", *args, "--help")
    assert proc.returncode == 0, proc.stderr
    assert f"usage: {prog} " in proc.stdout


def test_the_env_help_points_at_the_other_benchmarks():
    out = scat("bench", "--help").stdout
    assert "scat bench agents" in out and "scat bench training" in out


def test_agents_bench_times_only_the_agents_own_decisions(capsys):
    assert bench.agents_main(["--agent", "greedy", "--opponents", "random", "--players", "2",
                              "3", "--games", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(",")[1].strip() for line in lines] == ["2 players", "3 players"]
    assert all("us/decision over" in line for line in lines)
    per, calls = bench.time_agent("greedy", "random", 3, 6, bench.Rules())
    assert calls > 0 and 0 < per < 0.01  # greedy decides in microseconds, not milliseconds


@pytest.mark.parametrize("argv, words", [
    (["--agent", "bogus"], "bad agent spec 'bogus'"),
    (["--players", "11"], "between 2 and 10"),
    (["--games", "0"], "at least 1"),
])
def test_agents_bench_refuses_bad_input_in_one_line(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.agents_main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("trainer", [t for t in bench.TRAINERS if t != "sb3_batch"])
def test_training_bench_overrides_are_fields_of_each_trainers_config(trainer):
    """The benchmark switches evaluation and checkpoints off through config fields: a
    renamed field must fail here, not an hour into a benchmark."""
    # The batched trainer plays its opponents batched: greedy and random, not expert.
    field = "greedy,random" if trainer == "batch" else "greedy,expert"
    overrides = bench.training_overrides(trainer, 5.0, field)
    name, cfg = load_config(bench.CONFIGS[trainer], overrides)
    assert name == trainer
    assert cfg.final_eval_games == 0 and cfg.torch_threads == (2 if trainer == "batch" else 1)
    assert cfg.opponents == dict.fromkeys(field.split(","), 1.0)


def test_training_bench_refuses_an_unknown_trainer():
    proc = scat("bench", "training", "--trainers", "native,tf")
    assert proc.returncode == 2
    assert "unknown tf" in proc.stderr
