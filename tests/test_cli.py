"""The `scat watch`, `scat tournament` and `scat bench` commands, run as a user runs them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hang_limits import hang_limit

ROOT = Path(__file__).resolve().parents[1]


def scat(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scat_cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=hang_limit(300),
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("args", [
    ["play", "--players=--"], ["play", "--name=--"], ["replay", "x.json", "--seat=--"],
    ["tournament", "--agents", "greedy,random", "--seed=--"], ["train", "--config=--"],
    ["exploit", "expert", "--players", "3", "--minutes=--"],
])
def test_an_option_given_as_equals_dash_dash_is_one_line(args):
    """argparse reads ``--opt=--`` as an empty list, past the option's type: every
    subcommand refuses it in one line rather than meeting the list later."""
    done = scat(*args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith("expected one argument"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, words", [
    (["tournament", "--agents", "greedy,nosuchagent", "--games", "4"], "unknown agent spec"),
    (["tournament", "--agents", "greedy,random", "--players", "11"], "between 2 and 10"),
    (["tournament", "--agents", "greedy,random", "--players", "1"], "between 2 and 10"),
    (["tournament", "--field", ",".join(["random"] * 11)], "2 to 10"),
    (["tournament", "--agents", "greedy,random", "--players", "4"], "--field"),
    (["tournament", "--agents", "greedy,random", "--rules", "missing_rules.yaml"],
     "--rules missing_rules.yaml: no such file"),
    (["tournament", "--agents", "greedy,random", "--rules", "tests"],
     "--rules tests: a folder, not a rules file"),
    (["tournament", "--agents", "greedy,random", "--rules", "nosuchpreset"],
     "unknown rules preset"),
    (["tournament", "--agents", "greedy,random", "--games", "0"], "--games"),
    (["tournament", "--field", "greedy,random", "--field", "greedy,random,random"],
     "same number of seats"),
    (["watch", "--agents", "greedy,nosuchagent"], "unknown agent spec"),
    (["watch", "--agents", "greedy"], "2 to 10"),
    (["watch", "--agents", "greedy,random", "--rules", "missing_rules.yaml"],
     "--rules missing_rules.yaml: no such file"),
    (["watch", "--agents", "greedy,random", "--delay", "-1"], "--delay"),
])
def test_bad_arguments_give_one_clear_line_and_exit_2(tmp_path, args, words):
    if args[0] == "tournament":
        args = [*args, "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]
    proc = scat(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert words in lines[0]


def test_watch_plays_a_whole_game_to_a_winner():
    proc = scat("watch", "--agents", "greedy,random,threshold:20", "--seed", "7", "--reveal")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("hand 1 |") >= 1 and "game over:" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("winner: ") and "after" in last
    assert out.count(": draw from the stock") >= 1
    assert "* hand 1:" in out
    assert scat("watch", "--agents", "greedy,random,threshold:20", "--seed", "7",
                "--reveal").stdout == out  # the seed replays the game


def test_tournament_command_writes_a_reproducible_report(tmp_path):
    common = ["tournament", "--agents", "greedy,random,threshold:20", "--players", "2",
              "--games", "24", "--seed", "3", "--quiet"]
    a = scat(*common, "--workers", "1", "--out", str(tmp_path / "a"))
    assert a.returncode == 0, a.stderr
    b = scat(*common, "--workers", "2", "--out", str(tmp_path / "b"), "--no-plots")
    assert b.returncode == 0, b.stderr
    for name in ("results.json", "results.md", "games.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    for name in ("winrate.png", "ratings.png", "timing.json", "config.json"):
        assert (tmp_path / "a" / name).stat().st_size > 0
    # The same command again into the same folder must not silently redo or lose work.
    again = scat(*common, "--workers", "1", "--out", str(tmp_path / "a"))
    assert again.returncode == 2 and "--resume" in again.stderr
    resumed = scat(*common, "--workers", "1", "--out", str(tmp_path / "a"), "--resume")
    assert resumed.returncode == 0, resumed.stderr


def test_tournament_prints_the_table_and_speed(tmp_path):
    proc = scat("tournament", "--field", "greedy,random,random", "--games", "6",
                "--workers", "1", "--out", str(tmp_path / "t"))
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^ *greedy +\d", proc.stdout, re.M) and "games/s" in proc.stdout


def test_tournament_table_fits_the_terminal_width(tmp_path):
    long_spec = "expert:beta=0.4,risk=0.6,feed=0.5"
    for width in (80, 60):
        proc = scat("tournament", "--agents", f"greedy,random,{long_spec}", "--players", "3",
                    "--games", "6", "--workers", "1", "--no-plots", "--overwrite",
                    "--out", str(tmp_path / "t"), env={"COLUMNS": str(width)})
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.split("\nHands:")[0].splitlines()  # then the files written
        assert max(len(line) for line in lines) <= width, proc.stdout
        table = "".join(line.split("  ")[0].strip() for line in lines)
        assert long_spec in table.replace(" ", "")  # wrapped in its column, not cut
        assert "win rate" in proc.stdout


def test_watch_fast_plays_without_pauses():
    proc = scat("watch", "--agents", "greedy,greedy", "--seed", "1", "--fast")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("winner: ")


def test_bench_forwards_its_arguments():
    pytest.importorskip("scat_env.bench")
    proc = scat("bench", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "--players" in proc.stdout and "--seconds" in proc.stdout
    proc = scat("bench", "--players", "2", "--seconds", "0.2", "--mode", "engine")
    assert proc.returncode == 0, proc.stderr
    assert "engine" in proc.stdout


@pytest.mark.parametrize("command", ["watch", "tournament"])
def test_a_policy_that_cannot_play_the_table_is_refused_before_any_game(tmp_path, command):
    heads_up = tmp_path / "heads_up.yaml"  # a set with a two-player member only
    heads_up.write_text("format: scat-policy-set\npolicies:\n"
                        f"  2: {ROOT / 'policies' / 'scat_batch_2p.npz'}\n")
    seats = ",".join([f"compact:{heads_up}"] + ["random"] * 7)
    args = (["watch", "--agents", seats] if command == "watch" else
            ["tournament", "--field", seats, "--games", "8", "--workers", "1",
             "--out", str(tmp_path / "t")])
    proc = scat(*args)
    assert proc.returncode == 2, proc.stdout[-500:] + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "8" in lines[0], proc.stderr
    assert not (tmp_path / "t" / "games.jsonl").exists()


@pytest.mark.parametrize("args, prog, words", [
    (["play", "--bogus"], "scat play", "--bogus"),
    (["rules", "standard", "extra"], "scat rules", "extra"),
    (["watch", "--agents", "greedy,random", "--fast", "--x", "1"], "scat watch", "--x 1"),
    (["replay", "game.json", "--nope"], "scat replay", "--nope"),
    (["--bogus", "play"], "scat", "--bogus"),  # before the subcommand: the top level's own
])
def test_an_unknown_option_is_named_by_the_command_it_was_given_to(capsys, args, prog, words):
    from scat_cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err == f"{prog}: error: unrecognized arguments: {words}\n"


@pytest.mark.parametrize("command", [["watch", "--agents", "random,random", "--fast"],
                                     ["play", "--fast"]])
@pytest.mark.parametrize("seed", ["-3", str(2**63)])
def test_every_command_takes_seeds_from_0_to_2_pow_63_minus_1(tmp_path, capsys, command, seed):
    from scat_cli.main import main

    assert main([*command, "--seed", seed]) == 2
    assert capsys.readouterr().err == (
        f"scat {command[0]}: error: --seed must be between 0 and 2**63 - 1, got {seed}\n")
