"""Help matches rules: every preset's description (:func:`scat_env.variants.describe`, the
``?`` help of ``scat play`` and the page's rule summary) and the terminal's keys name each
call the preset allows and no rule it lacks; the page's form carries the same lines."""

from __future__ import annotations

import pytest

from scat_env import Rules
from scat_env.rules import PRESETS
from scat_env.variants import describe
from scat_session.helptext import key_lines, rules_lines

#: Each call or move a preset may allow, the words that name it in the help, and whether the
#: rules allow it. The help holds the words exactly when the rules allow the call.
ALLOWED = {
    "hammer": ("Hammer:", lambda r: r.hammer),
    "throw-down": ("Throw-down:", lambda r: r.throw_down != "none"),
    "sudden death": ("Sudden death:", lambda r: r.sudden_death),
    "declare or pass": ("declare it (", lambda r: r.declare_31 == "choice"),
    "31 declared at once": ("declared at once", lambda r: r.declare_31 == "auto"),
    "31 never declared": ("never declared", lambda r: r.declare_31 == "never"
                          and r.play == "draw"),
    "second knock": ("Second knock:", lambda r: r.second_knock),
    "a knock": ("Knock", lambda r: r.play == "draw"),
    "a showdown line": ("Showdown:", lambda r: r.play == "draw"),
    "golf's slots": ("face down in a row", lambda r: r.play == "golf"),
    "a race to points": ("points wins", lambda r: r.scoring == "points"),
    "the county": ("on the county", lambda r: r.county and r.lives_name == "pennies"
                   and r.scoring == "lives"),
}
#: The same for the terminal's keys.
KEYS = {
    "k knock": lambda r: r.play == "draw",
    "e end the play": lambda r: r.play == "draw",
    "place2": lambda r: r.play == "golf",
    "turn2": lambda r: r.play == "golf",
    "pass": lambda r: any(c != "hammer" for c in r.calls),
}


@pytest.mark.parametrize("name", PRESETS)
def test_the_description_names_each_call_the_preset_allows_and_no_rule_it_lacks(name):
    rules = Rules.preset(name)
    text = " ".join(describe(rules))
    for rule, (words, has) in ALLOWED.items():
        assert (words in text) == bool(has(rules)), f"{name}: {rule} ({words!r})\n{text}"


@pytest.mark.parametrize("name", PRESETS)
def test_the_keys_name_each_call_and_move_of_the_preset(name):
    rules = Rules.preset(name)
    keys = " ".join(key_lines(rules))
    for call in rules.calls:
        assert call in keys, (name, call, keys)
    for words, has in KEYS.items():
        assert (words in keys) == bool(has(rules)), f"{name}: {words!r}\n{keys}"


def test_golf_says_no_knock_and_no_31_to_make():
    text = describe(Rules.preset("golf"))
    assert not any(line.startswith(("Knock", "A 31", "Showdown", "Stock")) for line in text)
    assert "No knock, no 31." in " ".join(text)


@pytest.mark.parametrize("name", PRESETS)
def test_the_terminal_and_the_page_show_the_same_lines(name):
    pytest.importorskip("starlette")
    from scat_web.serialize import preset_option

    rules = Rules.preset(name)
    assert rules_lines(rules) == describe(rules) == preset_option(name)["help"]


def test_a_changed_field_changes_its_line():
    """The words come from the fields, not from the preset's name."""
    base = Rules.preset("standard")
    assert "Hammer:" in " ".join(describe(base.replace(hammer=True)))
    assert "three of a kind counts 30.5" in " ".join(describe(base.replace(three_of_a_kind=30.5)))
    assert "a hand of 19+" in " ".join(describe(base.replace(min_knock=19)))


@pytest.mark.parametrize("name", ["standard", "moyer", "golf", "french_canadian"])
def test_scat_rules_name_says_the_rules_in_words_each_line_within_80_columns(name, capsys):
    from scat_cli.main import main

    assert main(["rules", name]) == 0
    out = capsys.readouterr().out
    words = out.split("In words:\n", 1)[1]
    assert " ".join(words.split()) == " ".join(" ".join(describe(Rules.preset(name))).split())
    assert max(len(line) for line in words.splitlines()) <= 80
