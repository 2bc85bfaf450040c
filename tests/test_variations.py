"""The variations of 002 ("Variations", "Scat software") as stacked-deck scenarios built
from the source's own description. Each test names the preset it plays."""

from __future__ import annotations

import pytest
from conftest import game, keep, last, move

from scat_env import GameState, Rules, hand_value, lives_label
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK
from scat_env.engine import Phase

H23 = "KH 8H 5H"
H17 = "QS 9D 8D"
H11 = "AC 6S 4S"


# -- the Italian game (Antonio di Sebastiano) ---------------------------------------------------


def test_italian_pack_has_forty_cards_without_8_9_10():
    rules = Rules.preset("italian")
    assert len(rules.deck_cards) == 40
    names = {c % 13 for c in rules.deck_cards}
    assert names.isdisjoint({6, 7, 8})  # rank indices of 8, 9, 10
    with pytest.raises(ValueError, match="not in this pack"):
        GameState(3, rules, deck=list(rules.deck_cards)[:39] + [6])  # an 8 for the 40th


def test_italian_three_of_a_kind_beats_31_and_ranks_among_itself():
    assert hand_value("2H 2S 2C", "italian") > hand_value("AH KH QH", "italian") == 31
    assert hand_value("AH AS AC", "italian") > hand_value("KH KS KC", "italian")
    assert hand_value("KH KS KC", "italian") > hand_value("7H 7S 7C", "italian")
    assert hand_value("JH JS JC", "italian") > hand_value("7H 7S 7C", "italian")


def test_italian_31_is_not_declared_players_knock_as_usual():
    st = game([H11, "AH JH QH", "2C 3D 5S"], "5D", "7S 7H", rules="italian")
    assert not st.results and st.current_player == 0  # a dealt 31 is not declared
    keep(st, 0)
    move(st, 1, "knock")
    keep(st, 2)
    keep(st, 0)
    res = last(st)
    assert res.reason == "knock" and res.lives_lost == {0: 0, 1: 0, 2: 1}


def test_italian_lowest_lose_one_token_knocker_included():
    st = game(["2C 3D 4S", "KH 7H 5H", "2D 3S 4C"], "5D", "7S 6H 6D", rules="italian")
    move(st, 0, "knock")
    keep(st, 1)
    keep(st, 2)
    assert last(st).lives_lost == {0: 1, 1: 0, 2: 1}  # tied lowest: both pay one


def test_italian_a_player_who_loses_the_last_token_plays_on():
    rules = Rules.preset("italian")
    assert rules.start_lives == 4  # three tokens, then one more loss on no tokens
    assert lives_label(rules, 1) == "playing on, no tokens"
    assert lives_label(rules, 4) == "3 tokens"


# -- the computer versions (002 "Scat software") -----------------------------------------------


def test_computer_no_knock_on_a_players_first_turn():
    st = game([H23, H17, H11], "2D", "3C 4C 5C 6C", rules="computer")
    for seat in (0, 1, 2):
        assert KNOCK not in st.legal_actions()
        keep(st, seat)
    assert KNOCK in st.legal_actions()  # seat 0's second turn


def test_computer_knock_then_draw_and_discard_in_the_same_turn():
    st = game([H23, H17, H11], "2D", "3C 4C 5C 6C 7C 9C", rules="computer")
    for seat in (0, 1, 2):
        keep(st, seat)
    move(st, 0, "knock")
    assert st.current_player == 0 and st.phase is Phase.DRAW and st.knocker == 0
    assert st.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]  # no second knock
    keep(st, 0)
    keep(st, 1)
    assert not st.results
    keep(st, 2)  # the knocker's right discards: showdown
    res = last(st)
    assert res.reason == "knock" and res.knocker == 0 and res.lives_lost == {0: 0, 1: 0, 2: 1}


def test_computer_points_reading_is_a_rules_file_away():
    # RULES.md (o): "players also score points when the play ends according to the cards in
    # their hands" read as points: `preset: computer` with `scoring: points`. The computer
    # turn stays (knock, then draw and discard) and the highest hand scores.
    rules = Rules.from_dict({"preset": "computer", "scoring": "points"})
    st = game([H23, H17, H11], "2D", "3C 4C 5C 6C 7C 9C", rules=rules)
    for seat in (0, 1, 2):
        keep(st, seat)
    move(st, 0, "knock")
    assert st.current_player == 0 and st.phase is Phase.DRAW
    for seat in (0, 1, 2):
        keep(st, seat)
    res = last(st)
    assert res.reason == "knock" and res.points_won == {0: 1} and st.points == [1, 0, 0]
    assert st.lives == [rules.start_lives] * 3


# -- Doug Moyer's second knock ------------------------------------------------------------------


def test_moyer_the_next_player_may_knock_too_and_play_ends_at_once():
    st = game([H17, H23, H11], "2D", "3C 4C", rules="moyer_second_knock")
    move(st, 0, "knock")
    assert KNOCK in st.legal_actions()
    move(st, 1, "knock")
    res = last(st)
    assert res.reason == "second_knock" and res.knocker == 0
    assert res.lives_lost == {0: 0, 1: 0, 2: 1}  # seat 2 never got its last turn


def test_moyer_only_the_next_player_on_the_next_turn():
    st = game([H17, H23, H11], "2D", "3C 4C 5C", rules="moyer_second_knock")
    move(st, 0, "knock")
    keep(st, 1)  # declines the second knock
    assert KNOCK not in st.legal_actions()  # seat 2 is not next to the knocker
    standard = game([H17, H23, H11], "2D", "3C 4C")
    move(standard, 0, "knock")
    assert KNOCK not in standard.legal_actions()  # the standard game: one knock a hand


def test_moyer_a_losing_knocker_simply_loses_one():
    st = game([H11, H23, H17], "2D", "3C 4C", rules="moyer_second_knock")
    move(st, 0, "knock")
    move(st, 1, "knock")
    assert last(st).lives_lost == {0: 1, 1: 0, 2: 0}


def test_moyer_everyone_out_together_keeps_their_lives_and_redeals():
    st = game([H11, "AD 6C 4C"], "2D", "3C 4D", rules="moyer_second_knock", lives=[1, 1])
    move(st, 0, "knock")
    move(st, 1, "knock")
    res = last(st)
    assert res.replayed and res.lives_lost == {0: 0, 1: 0} and st.lives == [1, 1]


# -- Ride the Bus extra stops -------------------------------------------------------------------


def test_ride_the_bus_extra_stops_for_every_player():
    rules = Rules.preset("ride_the_bus_extra_stops")
    assert rules.start_lives == 7
    labels = [lives_label(rules, lives) for lives in range(7, -1, -1)]
    assert labels == ["seated", "standing at the back", "in the middle", "at the front",
                      "on the stairs", "on the second step", "asking the driver to stop",
                      "off the bus"]
    with pytest.raises(ValueError, match="extra_stops"):
        Rules(extra_stops=1)  # a Ride the Bus rule only
