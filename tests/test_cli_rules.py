"""``scat rules``: the presets listed with a line each, one preset's fields shown, bad names
refused in one line with a suggestion."""

from __future__ import annotations

import pytest

from scat_cli.main import main
from scat_env.rules import PRESET_NOTES, PRESETS


def test_every_preset_has_a_note():
    assert set(PRESET_NOTES) == set(PRESETS)
    assert all(note and len(note) < 120 for note in PRESET_NOTES.values())


def test_scat_rules_lists_every_preset(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    for name in PRESETS:
        assert any(line.split()[0] == name for line in out.splitlines() if line.strip())


def test_scat_rules_shows_one_preset_and_marks_what_differs(capsys):
    assert main(["rules", "moyer"]) == 0
    out = capsys.readouterr().out
    assert "second_knock                True  *" in out
    assert "calls: sudden_death" in out


def test_scat_rules_refuses_an_unknown_name_with_a_suggestion(capsys):
    assert main(["rules", "stndard"]) == 2
    err = capsys.readouterr().err.strip()
    assert "did you mean 'standard'" in err and "\n" not in err and len(err) < 200


def _paths(tmp_path):
    """A folder, a missing file under a path, a missing .yaml, a text file, a good file."""
    (tmp_path / "notes.txt").write_text("pennies: 1\n")
    (tmp_path / "short.yaml").write_text("preset: standard\npennies: 1\n")
    return tmp_path


@pytest.mark.parametrize("command, flag", [
    (["rules"], ""),
    (["play", "--fast", "--rules"], "--rules "),
    (["watch", "--agents", "random,random", "--fast", "--rules"], "--rules "),
])
@pytest.mark.parametrize("name, words", [
    ("here", "a folder, not a rules file"),
    ("here/nothing/there", "no such file"),
    ("./no_such_rules", "no such file"),
    ("no_such_rules.yaml", "no such file"),
    ("here/notes.txt", "a rules file is YAML, named *.yaml or *.yml"),
])
def test_a_rules_path_is_named_as_a_path_not_as_an_unknown_preset(
        tmp_path, capsys, monkeypatch, command, flag, name, words):
    # Paths relative to the working folder: short enough to be shown whole (a long one is
    # shortened in the middle, as every one-line error is).
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))
    (tmp_path / "here").mkdir()
    _paths(tmp_path / "here")
    monkeypatch.chdir(tmp_path)
    value = name
    assert main([*command, value]) == 2
    assert capsys.readouterr().err == f"scat {command[0]}: error: {flag}{value}: {words}\n"
    assert not (tmp_path / "replays").exists()


def test_a_rules_file_given_by_its_path_is_read(tmp_path, capsys):
    assert main(["rules", str(_paths(tmp_path) / "short.yaml")]) == 0
    assert "pennies                     1  *" in capsys.readouterr().out
