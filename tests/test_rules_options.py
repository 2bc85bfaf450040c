"""Rule options and presets: validation, the YAML files, and a scenario for every option.

Each option comes from a source's variations section (002 "Variations" unless noted); the
scenarios are stacked so that the option changes who pays, and each is checked against the
standard game on the same deal so a test cannot pass by accident.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import yaml
from conftest import exhaust_stock, game, keep, knock_game, last, move

from scat_env import PRESETS, Rules, lives_label
from scat_env.actions import DRAW_DISCARD, END_PLAY, KNOCK

RULES_DIR = Path(__file__).resolve().parent.parent / "configs" / "rules"
H23, H17, H11, H10 = "KH 8H 5H", "QS 9D 8D", "AC 6S 4S", "JC 7H 4D"
H11B = "AD 2C 3H"

# -- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field,value",
    [("name", 5), ("deck", "tarot"), ("pennies", -1), ("pennies", 21), ("pennies", "3"),
     ("pennies", True), ("county", 1), ("lives_name", "coins"), ("knock_mode", "highest"),
     ("knocker_tie", "none"), ("knocker_loss", 0), ("knocker_loss", 3),
     ("knocker_loss_on_31", 3), ("three_of_a_kind", 31), ("three_of_a_kind", "30"),
     ("three_aces", 29), ("three_aces", 41), ("straight_flush", "yes"), ("min_knock", -1),
     ("min_knock", 32), ("min_knock", 17.5), ("knock_needs_flush", 1),
     ("knock_when_stock_exhausted", None), ("all_out", "draw"), ("trips_beat_31", 1),
     ("declare_31", "sometimes"), ("first_turn_knock", None), ("knock_then_draw", "no"),
     ("second_knock", 0), ("extra_stops", 1), ("extra_stops", -1), ("extra_stops", 3)],
)
def test_invalid_rule_values_name_the_field(field, value):
    with pytest.raises(ValueError, match=rf"Rules\.{field}"):
        Rules(**{field: value})


def test_a_player_needs_at_least_one_life():
    with pytest.raises(ValueError, match=r"Rules\.pennies.*at least one life"):
        Rules(pennies=0, county=False)
    assert Rules(pennies=0, county=True).start_lives == 1


def test_gin_has_no_knocker_tie_rule():
    with pytest.raises(ValueError, match=r"Rules\.knocker_tie"):
        Rules(knock_mode="gin", knocker_tie="all")


def test_replace_validates_again():
    assert Rules().replace(min_knock=17).min_knock == 17
    with pytest.raises(ValueError, match="min_knock"):
        Rules().replace(min_knock=40)


def test_unknown_preset_and_fields_are_reported():
    with pytest.raises(ValueError, match="unknown rules preset 'blitz'.*scat rules"):
        Rules.preset("blitz")
    with pytest.raises(ValueError, match="unknown rules preset 'hamer' .did you mean 'hammer'"):
        Rules.preset("hamer")
    with pytest.raises(ValueError, match=r"unknown rule field\(s\) 'lifes'; the \d+ fields"):
        Rules.from_dict({"lifes": 3})
    with pytest.raises(ValueError, match=r"'penies' .did you mean 'pennies'"):
        Rules.from_dict({"penies": 3})
    with pytest.raises(ValueError) as exc:  # an error never lists every field or preset
        Rules.from_dict({f"f{i}": 1 for i in range(50)})
    assert len(str(exc.value)) < 200
    with pytest.raises(ValueError, match="expected a mapping"):
        Rules.from_dict([1, 2])  # type: ignore[arg-type]


def test_yaml_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        Rules.from_yaml(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("pennies: [3\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        Rules.from_yaml(bad)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("knocker_loss: 5\n")
    with pytest.raises(ValueError, match=r"Rules\.knocker_loss"):
        Rules.from_yaml(wrong)


def test_yaml_may_start_from_a_preset(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("preset: gin\nmin_knock: 17\n")
    rules = Rules.from_yaml(f)
    assert rules == Rules.preset("gin").replace(min_knock=17) and rules.name == "custom"
    assert Rules.preset(str(f)) == rules


# -- the YAML presets ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_has_a_yaml_file_that_loads_to_it(name):
    path = RULES_DIR / f"{name}.yaml"
    assert path.is_file(), f"configs/rules/{name}.yaml is missing"
    rules = Rules.from_yaml(path)
    assert rules == Rules.preset(name) and rules.name == name
    data = yaml.safe_load(path.read_text())
    assert set(data) == {f.name for f in fields(Rules)}, "list every field"


def test_no_yaml_file_without_a_preset():
    assert {p.stem for p in RULES_DIR.glob("*.yaml")} == set(PRESETS)


# -- knocker in a tie ----------------------------------------------------------------------


def test_knocker_pays_ties_tie_knocker_two_others_one():
    st = knock_game([H11, H11B, H23], rules="knocker_pays_ties")
    assert last(st).lives_lost == {0: 2, 1: 1, 2: 0}
    assert knock_game([H11, H11B, H23]).results[-1].lives_lost == {0: 0, 1: 1, 2: 0}


def test_knocker_pays_ties_31_after_knock_holder_safe_knocker_two_rest_one():
    st = game([H23, "AH JH 2C", H11], "QH", rules="knocker_pays_ties")
    move(st, 0, "knock")
    move(st, 1, "take", "2C")
    assert last(st).reason == "thirty_one" and last(st).lives_lost == {0: 2, 1: 0, 2: 1}


def test_knocker_pays_ties_all_out_stays_on_last_life():
    # lives 2 and 1, knocker tied: knocker would pay 2 and the other 1: both would be out.
    st = knock_game(["KH QH 2C", "KS QS 2D"], upcard="3D", lives=[2, 1], dealer=1,
                    rules="knocker_pays_ties")
    res = last(st)
    assert st.lives == [1, 1] and res.lives_lost == {0: 1, 1: 0} and not res.replayed


def test_knocker_only_ties():
    st = knock_game([H11, H11B, H23], rules="knocker_only_ties")
    assert last(st).lives_lost == {0: 2, 1: 0, 2: 0}
    # sole lowest knocker and non-knocker ties are unchanged
    assert knock_game([H10, H17, H23], rules="knocker_only_ties").results[-1].lives_lost[0] == 2
    st = knock_game([H23, H11, H11B], rules="knocker_only_ties")
    assert last(st).lives_lost == {0: 0, 1: 1, 2: 1}


def test_knocker_loses_one():
    assert knock_game([H10, H17, H23], rules="knocker_loses_one").results[-1].lives_lost == {
        0: 1, 1: 0, 2: 0}


# -- special hands ---------------------------------------------------------------------------


def test_three_of_a_kind_30_beats_29():
    hands = ["7C 7D 7H", "9S 10S JS"]  # seat 1 (29) knocks
    assert knock_game(hands, knocker=1).results[-1].lives_lost == {0: 1, 1: 0}
    st = knock_game(hands, knocker=1, rules="three_of_a_kind_30")
    assert last(st).values == {0: 30, 1: 29} and last(st).lives_lost == {0: 0, 1: 2}


def test_three_of_a_kind_30_ties_three_ten_point_cards_but_30_5_beats_them():
    hands = ["7C 7D 7H", "KS QS JS"]  # seat 1 (30) knocks
    assert knock_game(hands, 1, rules="three_of_a_kind_30").results[-1].lives_lost == {
        0: 1, 1: 0}  # tie with the knocker: knocker safe
    assert knock_game(hands, 1, rules="three_of_a_kind_30_5").results[-1].lives_lost == {
        0: 0, 1: 2}


def test_three_of_a_kind_30_5_is_not_declared_like_31():
    st = game(["7C 7D 7H", H17], "2D", rules="three_of_a_kind_30_5")
    assert not st.results and st.hand_value(0) == 30.5


def test_straight_flush_counts_30():
    hands = ["5H 6H 7H", "KS QS 9S"]  # 18 (30 with the option) vs 29; seat 1 knocks
    assert knock_game(hands, 1).results[-1].lives_lost == {0: 1, 1: 0}
    assert knock_game(hands, 1, rules="straight_flush").results[-1].lives_lost == {0: 0, 1: 2}


def test_straight_flush_a23_is_not_a_straight_and_akq_is_31():
    st = game(["AS 2S 3S", "AH KH QH"], "2D", rules="straight_flush")
    assert last(st).values == {0: 16, 1: 31} and last(st).reason == "dealt_thirty_one"


# -- knocking limits -------------------------------------------------------------------------


@pytest.mark.parametrize("preset,limit", [("min_knock_17", 17), ("min_knock_19", 19),
                                          ("min_knock_21", 21)])
def test_min_knock(preset, limit):
    below = game([H11, H23], "2D", rules=preset)
    assert KNOCK not in below.legal_actions() and not below.is_legal(KNOCK)
    with pytest.raises(ValueError, match="illegal action 54"):
        below.apply_action(KNOCK)
    hand = {17: H17, 19: "10D 9D 2C", 21: "AD 10D 3C"}[limit]
    at = game([hand, H23], "2S", rules=preset)
    assert at.hand_value(0) == limit and KNOCK in at.legal_actions()
    one_less = Rules.preset(preset).replace(min_knock=limit + 1)
    assert KNOCK not in game([hand, H23], "2S", rules=one_less).legal_actions()


def test_flush_to_knock():
    assert KNOCK in game([H23, H17], "2D", rules="flush_to_knock").legal_actions()
    st = game(["AS KS 2D", H23], "2C", rules="flush_to_knock")  # 21, but two suits
    assert KNOCK not in st.legal_actions()
    assert KNOCK in game(["AS KS 2D", H23], "2C").legal_actions()


@pytest.mark.parametrize("preset", ["standard", "no_knock_when_exhausted"])
def test_no_knock_when_exhausted(preset):
    """002/000: with the stock empty, take the discard or end the play; no knock."""
    st = game([H23, H17, H11], "2D", rules=preset)
    exhaust_stock(st, leave=1)
    assert KNOCK in st.legal_actions()  # still one card in the stock
    keep(st, st.current_player)
    assert st.legal_actions() == [DRAW_DISCARD, END_PLAY]


def test_knock_when_exhausted_keeps_the_knock_as_a_third_choice():
    st = game([H23, H17, H11], "2D", rules="knock_when_exhausted")
    exhaust_stock(st, leave=1)
    keep(st, st.current_player)
    assert st.legal_actions() == [DRAW_DISCARD, KNOCK, END_PLAY]


# -- lives and their names -------------------------------------------------------------------


def test_standard_lives_and_labels():
    r = Rules()
    assert r.start_lives == 4
    assert [lives_label(r, x) for x in (4, 3, 2, 1, 0)] == [
        "3 pennies", "2 pennies", "1 penny", "on the county", "out"]


def test_no_county_three_losses_eliminate():
    r = Rules.preset("no_county")
    assert r.start_lives == 3 and lives_label(r, 1) == "1 penny"
    st = knock_game([H23, H17, H11], lives=[3, 3, 1], rules=r)
    assert last(st).eliminated == (2,)


def test_swedish_points_four_points_and_out():
    r = Rules.preset("swedish_points")
    assert r.start_lives == 4
    assert [lives_label(r, x) for x in (4, 3, 1, 0)] == ["0 points", "1 point", "3 points", "out"]
    # 004 Knacka: the knocker who is lowest still pays two
    assert knock_game([H10, H17, H23], rules=r).results[-1].lives_lost[0] == 2


def test_ride_the_bus_five_positions():
    r = Rules.preset("ride_the_bus")
    assert r.start_lives == 5
    assert [lives_label(r, x) for x in (5, 4, 3, 2, 1, 0)] == [
        "seated", "standing at the back", "in the middle", "at the front", "on the stairs",
        "off the bus"]


# -- Cadillac (002, Kent Hamilton) -----------------------------------------------------------


def test_cadillac_lives_and_labels():
    r = Rules.preset("cadillac")
    assert r.start_lives == 5
    assert lives_label(r, 5) == "4 nickels" and lives_label(r, 1) == "on poverty"


def test_cadillac_knocker_tie_knocker_two_others_nothing():
    st = knock_game([H11, H11B, H23], rules="cadillac")
    assert last(st).lives_lost == {0: 2, 1: 0, 2: 0}


def test_cadillac_grand_cadillac_is_declared_after_a_discard():
    st = game(["AC AD 2H", H23, "KD 2C 3H"], "AH", rules="cadillac")
    move(st, 0, "take", "2H")
    res = last(st)
    assert res.reason == "thirty_one" and res.values[0] == 33
    assert res.lives_lost == {0: 0, 1: 1, 2: 1}


def test_cadillac_dealt_grand_cadillac_and_trips_30():
    st = game(["AC AD AH", "KC KD KS", H23], "2D", rules="cadillac")
    res = st.results[0]
    assert res.reason == "dealt_thirty_one" and res.declarers == (0,)
    assert res.values == {0: 33, 1: 30, 2: 23} and res.lives_lost == {0: 0, 1: 1, 2: 1}


# -- Gin (002, Angie Barry; 000) ---------------------------------------------------------------


def test_gin_knocker_highest_everyone_else_loses_one():
    st = knock_game([H23, H17, H11], rules="gin")
    assert last(st).lives_lost == {0: 0, 1: 1, 2: 1}


def test_gin_knocker_equal_highest_still_wins():
    st = knock_game([H11, H11B, H10], rules="gin")
    assert last(st).lives_lost == {0: 0, 1: 1, 2: 1}


def test_gin_knocker_beaten_loses_one():
    st = knock_game([H17, H23, H10], rules="gin")
    assert last(st).lives_lost == {0: 1, 1: 0, 2: 0}


def test_gin_lives_trips_and_31():
    r = Rules.preset("gin")
    assert r.start_lives == 3 and [lives_label(r, x) for x in (3, 2, 1)] == ["clean", "G", "GI"]
    assert game(["7C 7D 7H", H23], "2D", rules=r).hand_value(0) == 30.5
    st = game([H23, "AH JH 2C", H11], "QH", rules=r)
    move(st, 0, "knock")
    move(st, 1, "take", "2C")
    assert last(st).lives_lost == {0: 1, 1: 0, 2: 1}


def test_gin_exhausted_stock_without_a_knock_lowest_loses():
    st = game([H23, H17, H11], "2D", rules="gin")
    exhaust_stock(st)
    st.apply_action(END_PLAY)
    assert last(st).lives_lost == {0: 0, 1: 0, 2: 1}
