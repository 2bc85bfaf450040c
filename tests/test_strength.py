"""How strong a seated agent is (:mod:`scat_session.strength`): the model card's figure,
picked for the table's preset, spec and size, shown beside the opponents in the terminal's
start line and in the browser's STATE; a missing or damaged file shows nothing and never
stops a game.

Every test writes its own figures file (``scripts/preset_table.py --json``'s shape) and
points the module at it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scat_env import Rules
from scat_session import strength
from scat_session.strength import strength_text

TEXT_3 = "wins 1.31x its fair share against expert at 3 players (model card)"


def _cell(spec: str, x_fair: float) -> dict[str, Any]:
    return {"spec": spec, "x_fair": x_fair, "x_fair_ci95": [x_fair - 0.04, x_fair + 0.04],
            "games": 4002, "learned": True, "seconds": 1.0}


CARD: dict[str, Any] = {
    "command": "python scripts/preset_table.py --players 3,6 --games 4000",
    "seed": 20261128,
    "cells": {
        "standard": {"3": _cell("compact:scat_batch_set", 1.31),
                     "6": _cell("compact:scat_batch_set", 1.52)},
        "gin": {"3": _cell("greedy", 0.88), "6": _cell("compact:scat_batch_set", 1.2)},
    },
}


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    strength.load.cache_clear()
    yield
    strength.load.cache_clear()


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "presets.json"
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The figures above, as the shipped file every front end reads."""
    path = _write(tmp_path, CARD)
    monkeypatch.setattr(strength, "strength_file", lambda: path)
    return path


# -- picking the cell ------------------------------------------------------------------------
def test_the_figure_is_the_cell_of_the_preset_spec_and_table_size(card):
    standard = Rules.preset("standard")
    assert strength_text("compact:scat_batch_set", 3, standard) == TEXT_3
    assert strength_text("compact:scat_batch_set", 6, standard) == (
        "wins 1.52x its fair share against expert at 6 players (model card)")
    assert strength_text("greedy", 3, Rules.preset("gin")) == (
        "wins 0.88x its fair share against expert at 3 players (model card)")


def test_an_unmeasured_size_gets_the_nearest_measured_one_and_names_it(card):
    standard = Rules.preset("standard")
    said = {n: strength_text("compact:scat_batch_set", n, standard) for n in range(2, 11)}
    assert [n for n in range(2, 11) if said[n] == TEXT_3] == [2, 3, 4]  # 4.5 ties go down
    assert all("at 6 players" in said[n] for n in range(5, 11))


def test_the_nearest_size_is_one_measured_for_that_spec(card):
    """In gin the card seated greedy at 3 and the policy at 6: a table of 4 with the policy
    gets the policy's figure at 6, never greedy's at 3."""
    assert "1.20x" in (strength_text("compact:scat_batch_set", 4, Rules.preset("gin")) or "")
    assert "0.88x" in (strength_text("greedy", 10, Rules.preset("gin")) or "")


def test_nothing_is_said_where_nothing_was_measured(card):
    standard = Rules.preset("standard")
    assert strength_text("expert", 3, standard) is None  # another spec
    assert strength_text("greedy", 3, standard) is None  # measured in another preset only
    assert strength_text("compact:scat_batch_set", 3, Rules.preset("golf")) is None  # no row


def test_rules_that_change_a_preset_or_borrow_its_name_get_no_figure(card):
    """The card measured the preset's exact rules: a rules file that starts from one and
    changes it plays another game."""
    changed = Rules.preset("standard").replace(name="standard", pennies=1)
    assert strength_text("compact:scat_batch_set", 3, changed) is None
    # the standard rules under another name compare equal to the preset: asked after it,
    # they still get nothing
    assert strength_text("compact:scat_batch_set", 3, Rules.preset("standard")) == TEXT_3
    assert strength_text("compact:scat_batch_set", 3, Rules(name="custom")) is None


# -- the file --------------------------------------------------------------------------------
def test_the_shipped_file_is_presets_json_beside_the_shipped_policies():
    from agents.neural.policy_file import shipped_dir

    folder = shipped_dir()
    assert folder is not None and strength.strength_file() == folder / "presets.json"


def test_the_shipped_file_when_present_has_the_shape_read_here():
    """``scripts/preset_table.py --json`` writes what this module reads: a regenerated card
    that changed shape would show nothing, silently."""
    path = strength.strength_file()
    if path is None or not path.is_file():
        pytest.skip("no policies/presets.json in this checkout yet")
    assert strength.parse(json.loads(path.read_text(encoding="utf-8")))


def test_a_missing_file_shows_nothing_and_warns_nothing(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(strength, "strength_file", lambda: tmp_path / "presets.json")
    with caplog.at_level(logging.WARNING):
        assert strength_text("compact:scat_batch_set", 3, Rules.preset("standard")) is None
    assert caplog.records == []
    monkeypatch.setattr(strength, "strength_file", lambda: None)  # no policies installed
    assert strength_text("compact:scat_batch_set", 3, Rules.preset("standard")) is None


DAMAGED = {
    "not JSON": "{\"cells\": {",
    "not UTF-8": b"\xff\xfe{}",
    "a list": [1, 2],
    "no cells": {"command": "x"},
    "cells a list": {"cells": []},
    "a preset a number": {"cells": {"standard": 3}},
    "a size not a number": {"cells": {"standard": {"three": _cell("greedy", 1.0)}}},
    "a cell a string": {"cells": {"standard": {"3": "1.31x"}}},
    "no spec": {"cells": {"standard": {"3": {"x_fair": 1.31}}}},
    "x_fair a string": {"cells": {"standard": {"3": {"spec": "greedy", "x_fair": "1.31"}}}},
    "x_fair true": {"cells": {"standard": {"3": {"spec": "greedy", "x_fair": True}}}},
    "x_fair negative": {"cells": {"standard": {"3": {"spec": "greedy", "x_fair": -1}}}},
    "x_fair NaN": '{"cells": {"standard": {"3": {"spec": "greedy", "x_fair": NaN}}}}',
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_file_shows_nothing_anywhere_with_one_warning_line(damage, tmp_path,
                                                                      monkeypatch, caplog):
    """One bad cell spoils the file: a figure next to a broken one cannot be trusted. The
    game goes on; the log gets one line naming the file, however often it is asked."""
    good = {"3": _cell("greedy", 1.0)}
    data = DAMAGED[damage]
    if isinstance(data, dict) and isinstance(data.get("cells"), dict):
        data = {"cells": {**data["cells"], "gin": good}}  # a good preset beside the bad one
    path = _write(tmp_path, data)
    monkeypatch.setattr(strength, "strength_file", lambda: path)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert strength_text("greedy", 3, Rules.preset("gin")) is None
            assert strength_text("greedy", 3, Rules.preset("standard")) is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and str(path) in lines[0] and "\n" not in lines[0], lines


def test_the_file_is_read_once(card):
    standard = Rules.preset("standard")
    assert strength_text("compact:scat_batch_set", 3, standard) == TEXT_3
    card.write_text("{}", encoding="utf-8")
    assert strength_text("compact:scat_batch_set", 3, standard) == TEXT_3


# -- the terminal ----------------------------------------------------------------------------
def test_the_opponents_line_puts_the_figure_after_the_policy_it_measured(card):
    from rich.text import Text

    from scat_cli.tui import opponents_markup, seats_by_spec

    seats = [("Alice", "compact:scat_batch_set"), ("Bob", "expert"),
             ("Carol", "compact:scat_batch_set")]
    line = Text.from_markup(opponents_markup(seats, 4, Rules.preset("standard"))).plain
    assert line == ("Alice and Carol: trained AI (compact:scat_batch_set), " + TEXT_3
                    + "; Bob: expert")
    # rules the card did not measure: the line is the opponents alone, as before
    golf = opponents_markup(seats, 4, Rules.preset("golf"))
    assert golf == seats_by_spec(seats)


def test_scat_play_names_each_opponents_figure_before_the_first_card(card, tmp_path,
                                                                   monkeypatch, capsys):
    from scat_cli.main import main

    monkeypatch.setenv("SCAT_HOME", str(tmp_path / ".scat"))
    monkeypatch.setattr("sys.stdin", open("/dev/null", encoding="utf-8"))
    monkeypatch.setitem(CARD["cells"], "standard", {"3": _cell("greedy", 1.31)})
    _write(tmp_path, CARD)
    assert main(["play", "--players", "3", "--opponents", "greedy,random", "--fast",
                 "--no-color", "--seed", "3", "--save", str(tmp_path / "g.json")]) == 0
    out = capsys.readouterr().out
    line = " ".join(out.split("Opponents:", 1)[1].split("\n\n", 1)[0].split())
    assert line.startswith(f"Alice: greedy, {TEXT_3}; Bob: random."), line


# -- the browser's STATE ---------------------------------------------------------------------
def test_the_browsers_state_gives_each_opponent_its_figure(card, tmp_path, monkeypatch):
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from scat_web.app import create_app

    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setitem(CARD["cells"], "standard", {"3": _cell("greedy", 1.31)})
    _write(tmp_path, CARD)
    with TestClient(create_app(tmp_path / "web", token=None), base_url="http://127.0.0.1") as c:
        r = c.post("/api/games", json={"players": 3, "opponents": ["greedy", "random"]})
        assert r.status_code == 201, r.text
        players = r.json()["game"]["players"]
    assert [p["strength"] for p in players] == [None, TEXT_3, None]
    assert re.fullmatch(r"wins \d\.\d\dx .* at \d+ players \(model card\)", players[1]["strength"])
