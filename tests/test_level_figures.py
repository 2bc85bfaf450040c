"""The levels' figures: what ``scripts/level_table.py`` writes is what both front ends show,
and the shipped file says what the picker promises (a beginner beats ``easy`` more than a
third of the time at three players)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from scat_env import Rules
from scat_session.levels import (
    FIRST_GAME_LEVEL,
    LEVEL_NAMES,
    level_figures,
    level_line,
    level_spec,
    levels_payload,
)

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "policies" / "levels.json"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_figures_cover_every_level_and_keep_the_first_games_promise():
    data = json.loads(SHIPPED.read_text())
    cells = data["cells"]
    assert set(data["levels"]) == set(LEVEL_NAMES)
    for name in LEVEL_NAMES:  # each level has its yardstick and a beginner's figure
        assert cells[name], name
        assert name in cells["greedy"], name
    assert data["levels"][name] == level_spec(name, 3, Rules())
    beginner = cells["greedy"][FIRST_GAME_LEVEL]
    assert beginner["ci95"][0] > 1 / 3, "a beginner must beat the first game's level"


def test_a_line_shows_the_measured_figures_where_the_table_seats_the_measured_agent():
    figures = level_figures(SHIPPED)
    line = level_line("easy", figures, spec=level_spec("easy", 3, Rules()))
    assert "against two medium" in line and "a beginner beats it" in line
    # golf seats another agent as hard: its line names it, with no figure measured elsewhere
    golf = level_spec("hard", 3, Rules.preset("golf"))
    other = level_line("hard", figures, spec=golf)
    assert "here" in other and golf in other and "%" not in other
    # and a level measured in the standard game shows no figure at a golf table
    for name in LEVEL_NAMES:
        here = level_line(name, figures, spec=level_spec(name, 3, Rules.preset("golf")),
                          rules=Rules.preset("golf"))
        assert "here" in here and "%" not in here
    assert "%" in level_line("strongest", figures, spec="search", rules=Rules.preset("standard"))
    assert [p["name"] for p in levels_payload(figures)] == list(LEVEL_NAMES)


def test_strongest_is_the_search_only_where_the_search_plays():
    assert level_spec("strongest", 3, Rules()) == "search"
    # golf: the search plays out the golf policy, which is golf's hard
    golf = Rules.preset("golf")
    assert level_spec("hard", 3, golf) == "compact:scat_golf"
    assert level_spec("strongest", 3, golf) == "search"
    assert level_spec("strongest", 3, golf, trained="expert") == "expert"
    for preset in ("hammer", "french_canadian"):
        rules = Rules.preset(preset)
        assert level_spec("strongest", 3, rules) == level_spec("hard", 3, rules)


def test_a_damaged_figures_file_shows_no_figures(tmp_path, caplog):
    bad = tmp_path / "levels.json"
    bad.write_text('{"cells": {"easy": {"medium": {"win_rate": 7}}}}')
    assert level_figures(bad) == {}
    assert "not the level figures" in caplog.text
    assert level_line("easy", {}) == "easy: knocks early, at 21: beatable"


def test_the_card_table_is_the_scripts_output(tmp_path):
    script = _script("level_table")
    card = tmp_path / "card.md"
    card.write_text("before\n<!-- level-table -->\nSTALE TABLE\n<!-- level-table -->\nafter\n")
    assert script.main(["--from-json", str(SHIPPED), "--card", str(card)]) == 0
    text = card.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "STALE TABLE" not in text
    assert "| **easy** | `threshold:21` | medium (`expert`) |" in text
    card.write_text("no markers")
    with pytest.raises(SystemExit, match="markers"):
        script.main(["--from-json", str(SHIPPED), "--card", str(card)])


@pytest.mark.parametrize("row", ["search:64", "search@x", "@3"])
def test_a_search_table_row_that_is_not_one_is_refused(row):
    with pytest.raises(ValueError, match="SPEC@PLAYERS"):
        _script("search_table").parse_row(row)
