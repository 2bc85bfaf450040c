"""What a person reads where they pick a rules preset: plain notes without source tags,
lines within 80 columns, how long a game usually lasts (measured), and the opponents a
table of each size really gets."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from scat_cli.main import main
from scat_env import Rules
from scat_env.rules import PRESET_NOTES, PRESETS

REPO = Path(__file__).resolve().parents[1]
LENGTHS = REPO / "scat_session" / "game_lengths.json"
#: A source tag such as "[002 Variations]" or "[003]".
TAG = re.compile(r"\[\d{3}")


def test_preset_notes_carry_no_source_tags():
    for name, note in PRESET_NOTES.items():
        assert not TAG.search(note), (name, note)
        assert "[" not in note and "]" not in note, (name, note)


def test_scat_rules_keeps_every_line_within_80_columns_and_shows_no_tag(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    long = [line for line in out.splitlines() if len(line) > 80]
    assert not long, long
    assert not TAG.search(out)


def test_scat_rules_lists_how_long_a_game_of_each_preset_usually_lasts(capsys):
    assert main(["rules"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()
            if line.split() and line.split()[0] in PRESETS}
    assert set(rows) == set(PRESETS)
    for line in rows.values():
        assert re.search(r"\b\d+ min\b", line), line
    minutes = {name: int(re.search(r"(\d+) min", line).group(1)) for name, line in rows.items()}
    assert minutes["french_canadian"] > 5 * minutes["standard"]  # a race to 31 points


def test_scat_rules_name_gives_the_source_and_the_range_of_a_games_length(capsys):
    assert main(["rules", "french_canadian"]) == 0
    out = capsys.readouterr().out
    assert "from: Pagat, French Canadian" in out
    assert re.search(r"A game usually takes \d+ min \(\d+-\d+\): \d+ hands, \d+ of your moves",
                     out), out
    assert not TAG.search(out)


# -- the measured lengths --------------------------------------------------------------------
def _script():
    spec = importlib.util.spec_from_file_location("game_lengths",
                                                  REPO / "scripts" / "game_lengths.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lengths_file_measures_every_preset_against_todays_default_opponents():
    from scat_session.seating import default_opponent

    data = json.loads(LENGTHS.read_text())
    assert list(data["presets"]) == list(PRESETS)
    for name, entry in data["presets"].items():
        # A new shipped policy changes who sits at the table: regenerate the file then.
        assert entry["opponent"] == default_opponent(data["players"], Rules.preset(name)), name
        for key in ("minutes", "hands", "decisions", "person_decisions"):
            low, mid, high = (entry[key][k] for k in ("low", "median", "high"))
            assert 0 < low <= mid <= high, (name, key)
        assert entry["person_decisions"]["median"] < entry["decisions"]["median"]


def test_the_lengths_file_is_what_its_command_writes():
    """Regenerated for one quick preset, the file's entry comes back the same: its figures
    are made by the command it names, not written by hand."""
    data = json.loads(LENGTHS.read_text())
    games = int(data["command"].rsplit(" ", 1)[1])
    assert _script().measure("gin", games, base_seed=1) == data["presets"]["gin"]


def test_a_rules_file_that_changes_a_preset_gets_no_length():
    from scat_session.lengths import preset_length_text

    assert preset_length_text(Rules.preset("standard")).startswith("A game usually takes")
    assert preset_length_text(Rules.preset("standard").replace(name="standard", pennies=1)) == ""
    assert preset_length_text(Rules(name="custom")) == ""


def test_scat_play_says_how_long_a_game_usually_lasts_before_it_starts(tmp_path, monkeypatch,
                                                                      capsys):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / ".scat"))
    monkeypatch.setattr("sys.stdin", open("/dev/null", encoding="utf-8"))
    assert main(["play", "--rules", "gin", "--opponents", "random", "--fast", "--no-color",
                 "--seed", "3", "--save", str(tmp_path / "g.json")]) == 0
    first = capsys.readouterr().out.split("Opponents:")[0]
    assert re.search(r"A game usually takes \d+ min \(\d+-\d+\)", first), first


# -- scat play --help ------------------------------------------------------------------------
def test_scat_play_help_names_the_default_opponent_of_every_table_size(capsys):
    from scat_session.seating import default_opponent

    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    standard = text.split("standard and ")[1].split(";")[0]
    for n in range(2, 11):
        spec = default_opponent(n)
        said = re.search(re.escape(spec) + r" at (\d+)-(\d+) players", standard)
        assert said and int(said.group(1)) <= n <= int(said.group(2)), (n, spec, standard)
    golf = default_opponent(3, Rules.preset("golf"))
    assert re.search(r"golf: " + re.escape(golf) + " at 2-10 players", text), text


def test_scat_play_help_lists_a_games_usual_minutes_per_preset(capsys):
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in ("standard", "french_canadian", "golf"):
        assert re.search(rf"\b{name} \d+\b", text), name


# -- the browser's new-game form -------------------------------------------------------------
def test_the_new_game_form_gets_each_presets_usual_length_and_no_source_tag():
    from scat_web.serialize import preset_option

    for name in PRESETS:
        option = preset_option(name)
        assert not TAG.search(json.dumps(option)), option
        assert option["length"].startswith("A game usually takes"), option
        assert option["minutes"]["low"] <= option["minutes"]["median"] <= option["minutes"]["high"]
    assert (preset_option("french_canadian")["minutes"]["median"]
            > 5 * preset_option("standard")["minutes"]["median"])


def test_the_page_shows_the_length_with_the_presets_notes():
    script = (REPO / "scat_web" / "static" / "app.js").read_text()
    form = script[script.index("function showNotes()"):]
    assert "p.length" in form.split("\n}\n")[0]
    listing = script[script.index("for (const p of o.presets)"):]
    assert "p.minutes" in listing.split("\n    }\n")[0]
