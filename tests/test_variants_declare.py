"""The variation families' declarations, and the ``Rules`` assembled from them: one field of
``Rules`` per declared field, in declared order, with the public contract of a frozen
dataclass (keywords, defaults, equality, pickling, ``repr``) and plain attribute reads."""

from __future__ import annotations

import ast
import dataclasses
import pickle
from pathlib import Path

import pytest

from scat_env import Rules, actions, variants
from scat_env.rules import PRESET_NOTES, PRESET_SOURCES, PRESETS
from scat_env.variants.declare import Field, Preset

VARIANTS_DIR = Path(variants.__file__).parent

#: The fields in the order rules files, saved games and ``to_dict`` have always had.
FIELD_ORDER = [
    "name", "deck", "pennies", "county", "lives_name", "knock_mode", "knocker_tie",
    "knocker_loss", "knocker_loss_on_31", "three_of_a_kind", "three_aces", "straight_flush",
    "min_knock", "knock_needs_flush", "knock_when_stock_exhausted", "all_out", "trips_beat_31",
    "declare_31", "first_turn_knock", "knock_then_draw", "second_knock", "extra_stops",
    "hammer", "throw_down", "sudden_death", "scoring", "points_to_win", "poker_tiebreak",
    "play", "one_on_the_bus"]


def test_rules_has_the_declared_fields_in_their_order_with_their_defaults():
    assert [f.name for f in dataclasses.fields(Rules)] == FIELD_ORDER
    assert [f.name for f in variants.FIELDS] == FIELD_ORDER
    for f in variants.FIELDS:
        assert getattr(Rules(), f.name) == f.default, f.name


def test_each_field_and_preset_is_declared_by_one_family():
    names = [f.name for fam in variants.FAMILIES for f in fam.fields]
    assert sorted(names) == sorted(FIELD_ORDER[1:])
    assert list(PRESETS) == [p.name for p in variants.PRESETS]
    assert set(PRESET_NOTES) == set(PRESET_SOURCES) == set(PRESETS)
    for p in variants.PRESETS:
        assert p.note and p.source and p.doc, p.name
        assert set(p.changes) <= set(FIELD_ORDER), p.name


def test_a_name_or_order_used_twice_is_refused_at_import():
    a = Field("a", int, 0, "", "", order=5)
    b = Field("b", int, 0, "", "", order=5)
    with pytest.raises(ValueError, match="share the order 5: a and b"):
        variants._unique("field", [a, b], "order")
    p = Preset("x", {}, note="", source="", doc="", order=1)
    with pytest.raises(ValueError, match="share the name 'x'"):
        variants._unique("preset", [p, dataclasses.replace(p, order=2)], "name")


def test_rules_keeps_the_contract_of_a_frozen_dataclass():
    rules = Rules.preset("cadillac")
    assert Rules.__module__ == "scat_env.rules" and Rules.__qualname__ == "Rules"
    assert pickle.loads(pickle.dumps(rules)) == rules
    assert repr(rules).startswith("Rules(name='cadillac', deck='standard', pennies=4")
    assert Rules(pennies=4) == Rules(name="other", pennies=4)  # the name is not compared
    assert hash(Rules()) == hash(Rules(name="x"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.pennies = 2  # type: ignore[misc]
    assert rules.replace(min_knock=17).min_knock == 17
    assert list(rules.to_dict()) == FIELD_ORDER


def test_field_reads_are_plain_attributes():
    """Read at every move: no property or descriptor between a field and its value."""
    rules = Rules()
    for name in FIELD_ORDER:
        assert name in vars(rules), name
        assert not hasattr(type(Rules.__dict__.get(name)), "__get__"), name


def test_the_docstring_lists_every_field():
    for name in FIELD_ORDER[1:]:
        assert f"``{name}``" in Rules.__doc__, name


def test_derived_values_come_from_the_declarations():
    assert Rules.preset("moyer").calls == ("sudden_death",)
    assert Rules(hammer=True, throw_down="first", sudden_death=True).calls == (
        "hammer", "throw_down", "sudden_death")
    assert Rules.preset("undeclared_31").calls == ("declare",)
    assert Rules().scoring_key != Rules(three_of_a_kind=30).scoring_key
    assert Rules().scoring_key != Rules.preset("golf").scoring_key
    assert Rules().scoring_key == Rules.preset("cadillac").replace(
        three_of_a_kind=None, three_aces=None).scoring_key
    assert len(Rules.preset("italian").deck_cards) == 40
    assert Rules.preset("ride_the_bus_extra_stops").start_lives == 7


def test_every_default_passes_its_own_check_and_every_choice_loads():
    for f in variants.FIELDS:
        assert f.complaint(f.default) is None, f.name
        for value in f.choices:
            if f.name in ("throw_down", "declare_31", "play", "knock_mode", "scoring"):
                continue  # these tie to other fields; each is loaded by its preset
            Rules(**{f.name: value})


def test_the_menu_words_of_the_calls_are_the_actions_words():
    menu = variants.menu_words()
    for call, action in (("hammer", actions.HAMMER), ("throw_down", actions.THROW_DOWN),
                         ("sudden_death", actions.SUDDEN_DEATH), ("declare", actions.DECLARE),
                         ("pass", actions.PASS)):
        assert menu[call] == actions.action_str(action), call
    for i in range(actions.GOLF_SLOTS):
        assert menu["place"].format(slot=i + 1) == actions.action_str(actions.PLACE_SLOT + i)
        assert menu["turn"].format(slot=i + 1) == actions.action_str(actions.TURN_UP + i)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out.add(("." * node.level) + (node.module or ""))
    return out


DECLARATIONS = [VARIANTS_DIR / "__init__.py", VARIANTS_DIR / "declare.py",
                *sorted(VARIANTS_DIR.glob("*/__init__.py"))]


@pytest.mark.parametrize("path", DECLARATIONS, ids=lambda p: str(p.relative_to(VARIANTS_DIR)))
def test_a_family_is_pure_declarations(path):
    """No engine, no rules module (it is built from the families), no numpy. (A family's
    engine hooks, in files of their own beside its declaration, may read more.)"""
    found = _imports(path)
    assert not {m for m in found if m.split(".")[0] in {"numpy", "torch"}}, found
    assert not {m for m in found if m.lstrip(".") in {"engine", "rules", "scat_env.engine",
                                                       "scat_env.rules"}}, found
