"""The calls of the variations (002 "Variations", 003 "VARIATIONS"), played on stacked decks
built from the sources' own descriptions: the hammer, the throw-down, Doug Moyer's sudden
death and second knock, and declaring 31 as a choice."""

from __future__ import annotations

import pytest
from conftest import game, keep, last, move

from scat_env import GameState, Rules, make_view, parse_card
from scat_env.actions import (
    DECLARE,
    DRAW_DISCARD,
    DRAW_STOCK,
    HAMMER,
    KNOCK,
    PASS,
    SUDDEN_DEATH,
    THROW_DOWN,
)
from scat_env.engine import Phase

H23 = "KH 8H 5H"
H17 = "QS 9D 8D"
H11 = "AC 6S 4S"


# -- the hammer (002: "knocking under the gun") -------------------------------------------------


def test_hammer_is_the_first_players_call_instead_of_drawing():
    st = game([H17, H23, H11], "2D", "3C 4C", rules="hammer")
    assert st.legal_actions() == [DRAW_STOCK, DRAW_DISCARD, KNOCK, HAMMER]
    keep(st, 0)
    assert HAMMER not in st.legal_actions()  # only the very first player, at once
    assert HAMMER not in game([H17, H23, H11], "2D").legal_actions()  # standard: no hammer


def test_hammer_shows_every_hand_at_once_scored_like_a_knock():
    st = game([H17, H23, H11], "2D", rules="hammer")
    st.apply_action(HAMMER)
    res = last(st)
    assert res.reason == "hammer" and res.knocker == 0 and res.shown == (0, 1, 2)
    assert res.lives_lost == {0: 0, 1: 0, 2: 1}  # nobody drew: the lowest dealt hand pays


def test_a_lowest_hammer_caller_loses_two():
    st = game([H11, H23, H17], "2D", rules="hammer")
    st.apply_action(HAMMER)
    assert last(st).lives_lost == {0: 2, 1: 0, 2: 0}


def test_hammer_dealt_31_still_pays():
    st = game([H17, "AH KH QH", H11], "2D", rules="hammer")
    res = last(st)  # the 31 is declared at the deal, before any call
    assert res.reason == "dealt_thirty_one" and res.lives_lost == {0: 1, 1: 0, 2: 1}


# -- the throw-down / shotgun (002: the first player; 003: any player) -------------------------


def test_throw_down_is_decided_before_looking():
    st = game([H17, H23, H11], "2D", rules="throw_down")
    assert st.phase is Phase.BLIND and st.current_player == 0
    assert st.legal_actions() == [THROW_DOWN, PASS]
    assert make_view(st, 0).hand == ()  # the caller has not seen its cards
    assert make_view(st, 1).hand != ()  # the others may have looked
    st.apply_action(PASS)  # looks at the cards and plays
    assert st.phase is Phase.DRAW and st.current_player == 0 and make_view(st, 0).hand


def test_throw_down_is_scored_like_a_knock_with_the_caller_as_knocker():
    st = game([H11, H23, H17], "2D", rules="throw_down")
    st.apply_action(THROW_DOWN)
    res = last(st)
    assert res.reason == "throw_down" and res.knocker == 0
    assert res.lives_lost == {0: 2, 1: 0, 2: 0}


def test_throw_down_any_each_player_in_turn_before_looking():
    st = game([H17, H23, H11], "2D", rules="throw_down_any")
    assert all(make_view(st, s).hand == () for s in range(3))
    st.apply_action(PASS)  # seat 0 looks
    assert st.phase is Phase.BLIND and st.current_player == 1
    assert make_view(st, 0).hand and make_view(st, 1).hand == ()
    st.apply_action(THROW_DOWN)  # seat 1 calls it blind
    res = last(st)
    assert res.reason == "throw_down" and res.knocker == 1
    assert res.lives_lost == {0: 0, 1: 0, 2: 1}


def test_throw_down_any_play_starts_when_everyone_has_looked():
    st = game([H17, H23, H11], "2D", rules="throw_down_any")
    for _ in range(3):
        st.apply_action(PASS)
    assert st.phase is Phase.DRAW and st.current_player == 0
    assert all(make_view(st, s).hand for s in range(3))


def test_throw_down_cannot_be_combined_with_a_declare_choice():
    with pytest.raises(ValueError, match="throw_down"):
        Rules(throw_down="first", declare_31="choice")


# -- Doug Moyer's sudden death ---------------------------------------------------------------------


def test_sudden_death_the_dealer_calls_after_one_card_each():
    st = game([H17, H23, H11], "2D", rules="sudden_death")  # dealer 2
    assert st.phase is Phase.SUDDEN_DEATH and st.current_player == 2
    assert [len(h) for h in st.hands] == [1, 1, 1]
    assert all(make_view(st, s).hand == () for s in range(3))  # nobody has looked
    st.apply_action(SUDDEN_DEATH)
    res = last(st)
    # the first cards dealt: QS (10), KH (10), AC (11): the two ten-point cards lose
    assert res.reason == "sudden_death" and res.values == {0: 10, 1: 10, 2: 11}
    assert res.lives_lost == {0: 1, 1: 1, 2: 0}


def test_sudden_death_declined_the_deal_goes_on_exactly_as_stacked():
    st = game([H17, H23, H11], "2D", "3C 4C", rules="sudden_death")
    st.apply_action(PASS)
    plain = game([H17, H23, H11], "2D", "3C 4C")
    assert st.hands == plain.hands and st.stock == plain.stock and st.discard == plain.discard
    assert st.phase is Phase.DRAW and st.current_player == 0


def test_moyer_sudden_death_all_out_keeps_lives_and_redeals():
    st = game([H17, "QH 8S 7S"], "2D", rules="moyer", lives=[1, 1])  # QS and QH: a tie
    dealer = st.dealer
    st.apply_action(SUDDEN_DEATH)
    res = last(st)
    assert res.replayed and st.lives == [1, 1] and st.dealer == dealer


# -- declaring 31 as a choice (002/000) ----------------------------------------------------------


def test_a_new_31_offers_declare_or_keep_quiet():
    st = game([H23, "AH JH 2C", H11], "2D", "2S QH", rules="undeclared_31")
    keep(st, 0)
    move(st, 1, "stock", "2C")
    assert st.phase is Phase.DECLARE and st.current_player == 1
    assert st.legal_actions() == [DECLARE, PASS]
    st.apply_action(DECLARE)
    assert last(st).reason == "thirty_one" and last(st).lives_lost == {0: 1, 1: 0, 2: 1}


def test_a_31_kept_quiet_counts_30_and_cannot_be_claimed_later():
    st = game([H23, "AH JH 2C", "KS QS 10S"], "2D", "2S QH 3C 4C", rules="undeclared_31")
    keep(st, 0)
    move(st, 1, "stock", "2C")
    st.apply_action(PASS)  # keeps quiet: the 31 now counts 30
    assert st.phase is Phase.DRAW and st.current_player == 2
    move(st, 2, "knock")
    keep(st, 0)
    keep(st, 1)  # same cards: no new 31 to declare
    res = last(st)
    assert res.reason == "knock" and res.values[1] == 30 and res.values[2] == 30
    assert res.lives_lost == {0: 1, 1: 0, 2: 0}


def test_dealt_31s_each_holder_chooses_in_turn():
    st = game(["AH KH QH", "JD 9C 8C", "AS KS QS"], "2D", rules="undeclared_31")
    assert st.phase is Phase.DECLARE and st.current_player == 0
    st.apply_action(PASS)  # seat 0 keeps quiet
    assert st.current_player == 2
    st.apply_action(DECLARE)
    res = last(st)
    assert res.reason == "dealt_thirty_one" and res.declarers == (2,)
    assert res.lives_lost == {0: 1, 1: 1, 2: 0}  # the quiet holder loses with the rest


def test_dealt_31_nobody_declares_play_starts():
    st = game(["AH KH QH", H17, H11], "2D", rules="undeclared_31")
    st.apply_action(PASS)
    assert st.phase is Phase.DRAW and st.current_player == 0 and not st.results


def test_calls_are_named_and_logged():
    from scat_env import action_str

    st = game([H17, H23, H11], "2D", rules="hammer")
    st.apply_action(HAMMER)
    assert "hammer" in action_str(HAMMER)
    assert last(st).describe().startswith("hand 1: player_0 called a hammer")


@pytest.mark.parametrize(("preset", "reason"), [
    ("hammer", "hammer"), ("throw_down", "throw_down"), ("throw_down_any", "throw_down"),
    ("sudden_death", "sudden_death"), ("moyer", "sudden_death"),
    ("undeclared_31", "declare")])
def test_random_play_reaches_every_call(preset, reason):
    """Random legal play of each call preset makes its call and plays games to the end
    (knocks are left out so that hands last long enough to make a 31)."""
    import random

    rng = random.Random(3)
    seen, finished = set(), 0  # hand endings, and call phases visited
    for seed in range(6):
        st = GameState(3, Rules.preset(preset), seed=seed)
        for _ in range(20_000):
            if st.is_terminal() or st.turn >= 300:
                break
            seen.add(str(st.phase))
            legal = st.legal_actions()
            st.apply_action(rng.choice([a for a in legal if a != KNOCK] or legal))
        finished += st.is_terminal()
        seen |= {r.reason for r in st.results}
    assert reason in seen and finished >= 4


def test_a_card_in_a_stacked_deck_is_dealt_as_it_lies_with_sudden_death():
    st = game([H17, H23, H11], "2D", rules="sudden_death")
    assert st.hands[0] == [parse_card("QS")] and st.hands[2] == [parse_card("AC")]
