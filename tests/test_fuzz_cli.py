"""Fuzz the command line: every file or value it is given ends in a result or in exit status 2
with one line on stderr, never a traceback, within a time and memory limit.

The commands run in this process through :func:`scat_cli.main.main` (``tests/fuzz_inputs.py``:
``run_cli``); a subprocess costs half a second of start-up, so only the few cases that
must prove the whole program's behaviour under an operating-system memory limit run as
one. Inputs are valid files changed in one or two places, as in
``tests/test_fuzz_loaders.py``; what is checked here is what a person sees: the exit status,
the one line, and that a tampered save cannot put a control character (an escape sequence
that clears or retitles the terminal) on the screen.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzz_inputs import (
    ACCEPTED,
    TRIED,
    bounded,
    check_cli_refusal,
    damaged_bytes,
    fuzz_env,
    fuzz_settings,
    mutated_doc,
    run_cli,
    to_json,
    to_yaml,
)
from hang_limits import hang_limit
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_loaders import (
    RULES_DOCS,
    TOURNAMENT,
    TRAIN_DOCS,
    agent_specs,
    log_text,
    save_text,
    yaml_text,
)

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

#: What a terminal acts on: C0 controls but newline, DEL and the C1 controls (ESC [ ... ).
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, fuzz_saves: dict[str, Path]) -> Any:
    """A scratch folder; the key of the shared saves (tests/conftest.py) and no colours for
    the whole module."""
    with pytest.MonkeyPatch.context() as mp:
        fuzz_env(mp, fuzz_saves["finished"].parent)
        yield tmp_path_factory.mktemp("fuzz_cli")


@pytest.fixture(scope="module")
def saves(folder: Path, fuzz_saves: dict[str, Path]) -> dict[str, Path]:
    return fuzz_saves


def cli(what: str, argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """``run_cli`` within the time and memory limit; checks the refusal's form and counts."""
    TRIED[what] += 1
    status, out, err = bounded(lambda: run_cli(argv, stdin))
    check_cli_refusal(status, err, what)
    if status == 0:
        ACCEPTED[what] += 1
    return status, out, err


# -- scat play --rules FILE, scat train --config FILE ---------------------------------------------
def _fuzz_play_rules(folder: Path, examples: int) -> None:
    rules, save = folder / "rules.yaml", folder / "played.json"

    @fuzz_settings(examples, examples)
    @given(yaml_text(RULES_DOCS))
    def check(text: bytes) -> None:
        rules.write_bytes(text)
        save.unlink(missing_ok=True)
        cli("scat play --rules", ["play", "--rules", str(rules), "--opponents", "random",
                                  "--seed", "3", "--fast", "--no-color", "--save", str(save)])

    check()


def test_play_rules_file(folder):
    _fuzz_play_rules(folder, 40)


@pytest.mark.slow
def test_play_rules_file_long(folder):
    _fuzz_play_rules(folder, 800)


class _Accepted(BaseException):
    """Raised where a valid config would start training: the test stops there."""


def _fuzz_train_config(folder: Path, examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_training(monkeypatch)
    config = folder / "train.yaml"

    @fuzz_settings(examples, examples)
    @given(yaml_text(TRAIN_DOCS))
    def check(text: bytes) -> None:
        config.write_bytes(text)
        try:
            cli("scat train --config", ["train", "--config", str(config),
                                        "--out", str(folder / "run")])
        except _Accepted:
            ACCEPTED["scat train --config"] += 1

    check()


def test_train_config_file(folder, monkeypatch):
    _fuzz_train_config(folder, 80, monkeypatch)


@pytest.mark.slow
def test_train_config_file_long(folder, monkeypatch):
    _fuzz_train_config(folder, 2000, monkeypatch)


# -- scat replay FILE, scat play --resume FILE ----------------------------------------------------
def _fuzz_saves(folder: Path, saves: dict[str, Path], examples: int, resume: bool) -> None:
    docs = [json.loads(p.read_text()) for p in saves.values()]
    path, copy = folder / "fuzzed.json", folder / "resumed.json"
    what = "scat play --resume" if resume else "scat replay"

    @fuzz_settings(examples, examples)
    @given(save_text(docs))
    def check(text: bytes) -> None:
        path.write_bytes(text)
        if resume:
            argv = ["play", "--resume", str(path), "--fast", "--no-color", "--save", str(copy)]
        else:
            argv = ["replay", str(path), "--fast", "--no-color"]
        status, out, err = cli(what, argv)
        shown = CONTROL.findall(out + err)
        assert not shown, f"{what}: control characters reach the terminal: {sorted(set(shown))}"

    check()


def test_replay_file(folder, saves):
    _fuzz_saves(folder, saves, 80, resume=False)


def test_play_resume_file(folder, saves):
    _fuzz_saves(folder, saves, 60, resume=True)


@pytest.mark.slow
def test_replay_and_resume_long(folder, saves):
    _fuzz_saves(folder, saves, 1500, resume=False)
    _fuzz_saves(folder, saves, 1500, resume=True)


# -- scat tournament --resume ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def tournament(folder: Path) -> Path:
    out = folder / "tournament"
    status, _, err = run_cli([*TOURNAMENT, "--out", str(out)])
    assert status == 0, err
    return out


@st.composite
def tournament_files(draw: st.DrawFn, lines: list[str], config: dict[str, Any]
                     ) -> tuple[bytes, bytes]:
    """``(games.jsonl, config.json)`` with one of them changed."""
    config_text = json.dumps(config, indent=2, sort_keys=True).encode()
    log = "".join(lines).encode()
    which = draw(st.sampled_from(["log", "log", "config"]))
    if which == "log":
        return draw(log_text(lines)), config_text
    if draw(st.booleans()):
        return log, draw(damaged_bytes(config_text))
    return log, to_json(draw(mutated_doc([config]))).encode("utf-8", "replace")


def _fuzz_tournament(folder: Path, tournament: Path, examples: int) -> None:
    lines = (tournament / "games.jsonl").read_text().splitlines(keepends=True)
    config = json.loads((tournament / "config.json").read_text())
    out = folder / "resumed_tournament"

    @fuzz_settings(examples, examples)
    @given(tournament_files(lines, config))
    def check(files: tuple[bytes, bytes]) -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        (out / "games.jsonl").write_bytes(files[0])
        (out / "config.json").write_bytes(files[1])
        cli("scat tournament --resume", [*TOURNAMENT, "--resume", "--out", str(out)])

    check()


def test_tournament_resume(folder, tournament):
    _fuzz_tournament(folder, tournament, 60)


@pytest.mark.slow
def test_tournament_resume_long(folder, tournament):
    _fuzz_tournament(folder, tournament, 1500)


# -- scat play --opponents SPEC, and odd option values ---------------------------------------------
def _fuzz_opponents(folder: Path, examples: int) -> None:
    save = folder / "opponents.json"

    @fuzz_settings(examples, examples)
    @given(agent_specs())
    def check(spec: str) -> None:
        save.unlink(missing_ok=True)
        cli("scat play --opponents", ["play", "--opponents", spec, "--seed", "4", "--fast",
                                      "--no-color", "--save", str(save)])

    check()


def test_play_opponents(folder):
    _fuzz_opponents(folder, 60)


@pytest.mark.slow
def test_play_opponents_long(folder):
    _fuzz_opponents(folder, 1500)


ODD_ARGS = ["-1", "0", "nan", "inf", "-inf", "1e999", "99999999999999999999", "x", "",
            "\x1b[2J", "[bold]x", "2.5", " ", "--", "-", "é", "11", "/dev/null", "/tmp"]


def _fuzz_options(folder: Path, saves: dict[str, Path], examples: int) -> None:
    save = folder / "options.json"
    finished = str(saves["finished"])
    bases = {
        "play": (["play", "--opponents", "random", "--seed", "2", "--fast", "--no-color",
                  "--save", str(save)], ["--players", "--seed", "--name", "--delay", "--width",
                                         "--rules", "--save"]),
        "replay": (["replay", finished, "--fast", "--no-color"], ["--seat", "--delay", "--width"]),
        # --games and --workers are left out: a large value is a valid, long request.
        "tournament": ([*TOURNAMENT, "--out", str(folder / "options_tournament"),
                        "--overwrite"], ["--players", "--seed", "--max-turns", "--rules",
                                         "--agents", "--seating"]),
        "train": (["train", "--config", str(ROOT / "configs" / "train" / "smoke.yaml"),
                   "--out", str(folder / "options_run")], ["--samples", "--time-limit",
                                                           "--seed", "--config"]),
        "exploit": (["exploit", "expert", "--players", "3", "--minutes", "0.01", "--out",
                     str(folder / "options_exploit"), "--overwrite"],
                    ["--players", "--minutes", "--games", "--rules", "--seed", "--start",
                     "--workers"]),
    }

    @fuzz_settings(examples, examples)
    @given(st.sampled_from(sorted(bases)), st.data())
    def check(command: str, data: st.DataObject) -> None:
        argv, options = bases[command]
        option = data.draw(st.sampled_from(options))
        value = data.draw(st.one_of(st.sampled_from(ODD_ARGS), st.text(max_size=6)))
        if option == "--save" and not value.strip():
            return
        save.unlink(missing_ok=True)
        try:
            cli(f"scat {command} options", [*argv, f"{option}={value}"])
        except _Accepted:
            ACCEPTED[f"scat {command} options"] += 1

    check()


def _no_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stop ``scat train`` and ``scat exploit`` where a valid request would start training
    (raise ``_Accepted``)."""
    import training.exploit
    import training.runlock

    def stop(*args: Any, **kwargs: Any) -> Any:
        raise _Accepted

    monkeypatch.setattr(training.runlock, "exclusive_folder", stop)
    monkeypatch.setattr(training.exploit, "run_exploit", stop)


def test_odd_option_values(folder, saves, monkeypatch):
    _no_training(monkeypatch)
    monkeypatch.chdir(folder)  # a relative --save value writes here, not in the checkout
    _fuzz_options(folder, saves, 80)


@pytest.mark.slow
def test_odd_option_values_long(folder, saves, monkeypatch):
    _no_training(monkeypatch)
    monkeypatch.chdir(folder)
    _fuzz_options(folder, saves, 2000)


# -- a few whole programs under an operating-system memory limit ----------------------------------
def _limited() -> None:  # pragma: no cover - runs in the child
    limit = 2 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _alias_bomb(path: Path) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(8):
        prev, name = chr(97 + i), chr(98 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    lines.append("pennies: *i")
    path.write_text("\n".join(lines) + "\n")






def test_yaml_texts_are_real_yaml():
    """The fuzzer's YAML writer writes YAML: unchanged documents read back as themselves."""
    for doc in RULES_DOCS[:3]:
        for block in (True, False):
            assert yaml.safe_load(to_yaml(doc, block)) == doc


# Inputs the fuzzer found, kept as plain cases so they stay checked whatever it draws next.
KEPT = {
    "replay --width past any index": ["replay", "{finished}", "--fast", "--no-color",
                                      "--width=99999999999999999999"],
    "play --width past any index": ["play", "--opponents", "random", "--fast", "--no-color",
                                    "--save", "{save}", "--width=99999999999999999999"],
    "a spec naming a file too long for the system": ["play", "--opponents", "random:" + "9" * 300,
                                                     "--fast", "--no-color", "--save", "{save}"],
    "an unknown rules preset": ["play", "--rules", "-1", "--opponents", "random", "--fast",
                                "--save", "{save}"],
    "tournament with an unknown rules preset": [*TOURNAMENT, "--rules", "x", "--out", "{out}"],
}


@pytest.mark.parametrize("case", sorted(KEPT))
def test_kept_command_lines(folder, saves, case):
    values = {"finished": str(saves["finished"]), "save": str(folder / "kept.json"),
              "out": str(folder / "kept_tournament")}
    cli(f"kept: {case}", [arg.format(**values) for arg in KEPT[case]])


@pytest.mark.parametrize("field", ["rules.name", "created", "players.1.agent"])
def test_text_of_a_finished_save_cannot_act_on_the_terminal(folder, saves, field):
    """A finished save is in clear and anyone may edit it: the text ``scat replay`` shows
    from it (the rules' name, the date, an agent's spec) is refused, or shown as written,
    never as escape sequences or screen markup."""
    data = json.loads(saves["finished"].read_text())
    odd = "\x1b[2J\x1b]0;owned\x07[bold]X[/bold]"
    if field == "rules.name":
        data["rules"]["name"] = odd
    elif field == "created":
        data["created"] = odd
    else:
        data["players"][1]["agent"] = odd
    path = folder / "edited_finished.json"
    path.write_text(json.dumps(data))
    status, out, err = cli(f"replay of an edited {field}", ["replay", str(path), "--fast",
                                                            "--no-color"])
    assert not CONTROL.findall(out + err), f"{field}: an escape sequence reached the terminal"
    assert status == 2 or "[bold]X" in out, f"{field}: the file's markup restyled the screen"


def _huge_policy(path: Path) -> None:
    """A compact policy file whose metadata asks for a 4-billion-unit layer: refused before
    anything is allocated."""
    from test_fuzz_loaders import _members, _metadata_member, _write_zip

    from agents.compact import load_compact

    good = ROOT / "policies" / "scat_batch_2p.npz"
    members, (_, metadata) = _members(good), load_compact(good)
    members["metadata.json.npy"] = _metadata_member(
        json.dumps({**metadata, "hidden": 2**32}).encode())
    _write_zip(path, members)


@pytest.mark.parametrize("case", ["replay nested 100,000 deep", "rules alias bomb",
                                  "policy asking for 2**32 units"])
def test_whole_program_refuses_in_one_line_under_a_memory_limit(tmp_path, case):
    """``python -m scat_cli`` under a 2 GiB address-space limit and 60 s: exit 2, one line."""
    save = tmp_path / "game.json"
    if case.startswith("replay"):
        bad = tmp_path / "deep.json"
        bad.write_text("[" * 100_000 + "]" * 100_000)
        argv = ["replay", str(bad), "--fast"]
    elif case.startswith("rules"):
        bad = tmp_path / "bomb.yaml"
        _alias_bomb(bad)
        argv = ["play", "--rules", str(bad), "--opponents", "random", "--fast", "--save",
                str(save)]
    else:
        bad = tmp_path / "huge.npz"
        _huge_policy(bad)
        argv = ["play", "--opponents", f"compact:{bad}", "--fast", "--save", str(save)]
    env = {**os.environ, "SCAT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "scat_cli", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=hang_limit(300),
                          stdin=subprocess.DEVNULL, preexec_fn=_limited)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert not save.exists(), "a refused game left a save behind"
