"""``scat rules``: the presets listed with a line each, one preset's fields shown, bad names
refused in one line with a suggestion."""

from __future__ import annotations

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
