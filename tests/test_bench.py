"""``scat bench``: the env benchmark, ``scat bench agents`` and ``scat bench training``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hang_limits import hang_limit

from training import bench
from training.config import load_config

ROOT = Path(__file__).resolve().parents[1]


def scat(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scat_cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=hang_limit(300))


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


def test_agents_bench_times_the_batched_expert(capsys):
    assert bench.agents_main(["--agent", "greedy", "--players", "4", "--games", "2",
                              "--batched", "64"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("batched expert, 4 players, 64 games at once")
    assert "decisions/s" in lines[1]


@pytest.mark.parametrize("argv, words", [
    (["--agent", "bogus"], "bad agent spec 'bogus'"),
    (["--players", "11"], "between 2 and 10"),
    (["--games", "0"], "at least 1"),
    (["--batched", "-1"], "--batched must be 0 or more"),
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
    # The batched trainer plays its opponents batched: greedy, random, expert.
    field = "greedy,random,expert" if trainer == "batch" else "greedy,expert"
    overrides = bench.training_overrides(trainer, 5.0, field)
    name, cfg = load_config(bench.CONFIGS[trainer], overrides)
    assert name == trainer
    threads = {"batch": 2, "sb3": bench.SB3_TORCH_THREADS}.get(trainer, 1)
    assert cfg.final_eval_games == 0 and cfg.torch_threads == threads
    assert cfg.opponents == dict.fromkeys(field.split(","), 1.0)


def test_training_bench_refuses_an_unknown_trainer():
    proc = scat("bench", "training", "--trainers", "batch,tf")
    assert proc.returncode == 2
    assert "unknown tf" in proc.stderr


def test_training_bench_refuses_a_bad_opponent_before_any_trainer_starts():
    proc = scat("bench", "training", "--opponents", "greedy,nosuch", "--seconds", "1")
    assert proc.returncode == 2
    assert proc.stderr.startswith("scat bench training: error: --opponents: bad agent spec "
                                  "'nosuch': unknown agent spec 'nosuch'")
    assert proc.stderr.count("\n") == 1 and not proc.stdout


def test_presets_mode_measures_standard_first_and_last_and_each_preset_once(tmp_path, capsys):
    from scat_env import bench as env_bench

    page = tmp_path / "speed.md"
    argv = ["--presets", "golf,standard,gin", "--seconds", "0.05", "--repeat", "2", "--out",
            str(page)]
    assert env_bench.main(argv, "scat bench") == 0
    text = page.read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip() for line in text.splitlines()
            if line.startswith("| `")]
    assert rows == ["`standard`", "`golf`", "`gin`", "`standard (again)`"]
    assert "scat bench --presets golf,standard,gin --seconds 0.05 --repeat 2 --out" in text
    assert "the fastest of 2 runs of 0.05 s" in text
    assert f"a machine with {os.cpu_count()} CPUs" in text
    assert "| `standard` |" in text
    assert "Slowest: engine `" in capsys.readouterr().out


def test_each_preset_is_compared_with_the_standard_game_measured_alongside():
    from scat_env.bench import PresetSpeed, preset_table, slowest

    rows = [PresetSpeed("standard", 1000, 10, 200, 2, 1010, 190),
            PresetSpeed("golf", 400, 3, 150, 1, 1000, 200),
            PresetSpeed("gin", 700, 9, 50, 1, 2000, 200),
            PresetSpeed("standard (again)", 900, 9, 210, 2, 1000, 200)]
    table = preset_table(rows)
    assert "| `golf` | 400 | 1,000 | 40% | 3.0 | 150 | 200 | 75% | 1.0 |" in table
    assert "| `standard (again)` | 900 | 1,000 | 90% | 9.0 | 210 | 200 | 105% | 2.0 |" in table
    # gin's 700 against the 2,000 measured beside it: slower than golf's 400 against 1,000
    assert slowest(rows) == "Slowest: engine `gin` at 35% of standard, env `gin` at 25%."
    assert slowest(rows[:1] + rows[3:]) == "Only the standard game was measured."


def test_the_preset_and_the_standard_game_are_run_in_turn():
    from scat_env.bench import _paired

    calls = []

    def run(name, speeds):
        def measure():
            calls.append(name)
            return speeds.pop(0), 1.0
        return measure

    preset, standard = _paired(3, run("preset", [5.0, 7.0, 6.0]), run("standard", [9.0, 8.0, 10.0]))
    assert calls == ["standard", "preset"] * 3
    assert preset == (7.0, 1.0) and standard == (10.0, 1.0)


@pytest.mark.parametrize("argv, words", [
    (["--presets", "bogus"], "unknown preset 'bogus'"),
    (["--presets", ","], "name at least one preset"),
    (["--out", "x.md"], "give --presets too"),
    (["--presets", "all", "--rules", "gin"], "leave out --rules"),
    (["--presets", "all", "--out", "no/such/folder/x.md"], "no folder"),
    (["--presets", "all", "--players", "2", "3", "--out", "x.md"], "one player count"),
    (["--rules", "bogus"], "unknown rules preset 'bogus'"),
    (["--repeat", "0"], "at least 1"),
])
def test_env_bench_refuses_bad_input_in_one_line(argv, words, capsys):
    from scat_env import bench as env_bench

    with pytest.raises(SystemExit) as exc:
        env_bench.main(argv, "scat bench")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_best_of_keeps_the_run_with_the_most_steps_per_second():
    from scat_env.bench import best_of

    runs = iter([(100.0, 9.0), (300.0, 1.0), (200.0, 5.0)])
    assert best_of(3, lambda: next(runs)) == (300.0, 1.0)


def test_the_sb3_batch_bench_evaluates_its_model_as_an_sb3_agent():
    """MaskablePPO on BatchVecEnv leaves a model ``sb3:PATH`` plays, so its row gets a
    win rate against expert like every other trainer's."""
    pytest.importorskip("sb3_contrib")
    r = bench.train_once("sb3_batch", 1.0, "greedy", eval_games=2)
    assert r["learner_decisions"] > 0
    assert 0.0 <= r["win_rate"] <= 1.0 and r["eval_games"] >= 2
