"""A rules name is checked once, as the rules load, by the rule every shown name follows
(:func:`scat_env.names.check_shown`), so a name that would act on the terminal never loads,
and whatever loads also resumes."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_inputs import check_cli_refusal, fuzz_env, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scat_env import GameState, Rules
from scat_env.names import MAX_RULES_NAME, check_shown
from scat_session.savegame import PlayerEntry, SavedGame, check_name
from scat_session.seating import new_game

REFUSED = {
    "an escape code that clears the screen": "\x1b[2Jboom",
    "a carriage return": "ours\rtheirs",
    "a right-to-left override": "abc\u202edef",
    "the screen's markup": "[bold]x",
    "a closing bracket": "x]",
    f"{MAX_RULES_NAME + 1} characters": "x" * (MAX_RULES_NAME + 1),
    "blank": "   ",
}
KEPT = ["custom", "Règles d'été", "x" * MAX_RULES_NAME, "31 (house rules, 2024)", "über-scat"]


def _rules_file(folder: Path, name: str) -> Path:
    path = folder / "r.yaml"
    escaped = name.encode("unicode_escape").decode().replace('"', '\\"')
    path.write_text(f'preset: standard\nname: "{escaped}"\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("name", list(REFUSED.values()), ids=list(REFUSED))
def test_a_rules_file_whose_name_cannot_be_shown_is_refused_as_it_loads(tmp_path, name):
    path = _rules_file(tmp_path, name)
    assert Rules.from_dict({"preset": "standard"}).name == "custom"
    with pytest.raises(ValueError, match=r"^Rules\.name ") as err:
        Rules.from_yaml(path)
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value)


@pytest.mark.parametrize("command", [
    ["play", "--opponents", "random", "--fast", "--seed", "1"],
    ["watch", "--agents", "random,random", "--fast", "--seed", "1"],
    ["rules"],
    ["tournament", "--agents", "random,greedy", "--games", "2", "--quiet", "--no-plots"],
], ids=lambda c: c[0])
def test_an_escape_code_in_a_rules_name_is_one_line_and_exit_status_2(tmp_path, monkeypatch,
                                                                      command):
    fuzz_env(monkeypatch, tmp_path)
    path = _rules_file(tmp_path, "\x1b[2Jboom")
    argv = [*command, str(path)] if command == ["rules"] else [*command, "--rules", str(path)]
    if command[0] == "tournament":
        argv += ["--out", str(tmp_path / "t")]
    status, out, err = run_cli(argv)
    assert status == 2, (out[-300:], err[-300:])
    check_cli_refusal(status, err, command[0])
    assert "\x1b" not in out + err
    assert "Rules.name" in err


@pytest.mark.parametrize("name", KEPT)
def test_a_rules_name_that_loads_resumes(tmp_path, monkeypatch, name):
    fuzz_env(monkeypatch, tmp_path)
    rules = Rules.from_yaml(_rules_file(tmp_path, name))
    assert rules.name == name
    _save_and_resume(rules, tmp_path)


def _save_and_resume(rules: Rules, folder: Path) -> None:
    game = new_game(2, ["random"], rules, seed=3, name="You")
    path = game.save(folder / "game.json")
    back = SavedGame.load(path)
    assert back.rules == rules and back.rules.name == rules.name


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=MAX_RULES_NAME + 8))
def test_whatever_name_loads_also_resumes(tmp_path, monkeypatch, name):
    """The property: a name is refused at load, or the game saved with it resumes."""
    fuzz_env(monkeypatch, tmp_path)
    try:
        rules = Rules.preset("standard").replace(name=name)
    except ValueError:
        return
    _save_and_resume(rules, tmp_path)


@pytest.mark.parametrize("name", list(REFUSED.values()), ids=list(REFUSED))
def test_the_same_rule_refuses_a_name_in_a_saved_game(tmp_path, monkeypatch, name):
    """A finished save is in clear: editing its rules name to one that would not load is
    refused when it is read back, by the same check."""
    import json

    fuzz_env(monkeypatch, tmp_path)
    rules = Rules.preset("standard")
    players = [PlayerEntry("Ann", "random", 1), PlayerEntry("Bob", "random", 2)]
    game = SavedGame(2, rules, 3, GameState(2, rules, seed=3).dealer, players, human_seat=None)
    data = game.to_json()
    assert "sealed" not in data and "mac" not in data  # in clear: anyone may edit it
    data["rules"]["name"] = name
    with pytest.raises(ValueError, match=r"Rules\.name "):
        SavedGame.from_json(json.loads(json.dumps(data)), source="edited.json")


def test_player_names_follow_the_same_rule():
    for bad in ("\x1b[2J", "[red]x", "x" * 25, ""):
        with pytest.raises(ValueError):
            check_name(bad)
        with pytest.raises(ValueError):
            check_shown(bad, "player name", 24)
    assert check_name("Zoë") == "Zoë"
