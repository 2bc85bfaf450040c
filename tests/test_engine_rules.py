"""Every rule of the standard game, each as a stacked-deck scenario on the engine.

Sources are cited per test (002 = the reference, pagat; 000/001/003/004 cross-checks).
Hand values used throughout: KH 8H 5H = 23, QS 9D 8D = 17, AC 6S 4S = 11, JC 7H 4D = 10.
"""

from __future__ import annotations

import pytest
from conftest import exhaust_stock, game, keep, knock_game, last, move, stack

from scat_env import GameState, Rules, parse_card, parse_cards
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK
from scat_env.engine import Phase
from scat_env.rules import PRESETS
from scat_env.view import make_view

H23, H17, H11, H10 = "KH 8H 5H", "QS 9D 8D", "AC 6S 4S", "JC 7H 4D"
H11B = "AD 2C 3H"  # also 11, no card shared with the hands above


def cards(text: str) -> list[int]:
    return sorted(parse_cards(text))


# -- deal (002 "Deal", 000 "deal") --------------------------------------------------------


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_deal_one_card_at_a_time_from_the_dealers_left_then_upcard_then_stock(dealer):
    deck = parse_cards("2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC")
    deck += [c for c in range(52) if c not in deck]
    st = GameState(3, deck=deck, dealer=dealer)
    first = (dealer + 1) % 3
    order = [first, (first + 1) % 3, (first + 2) % 3]
    for i, seat in enumerate(order):
        assert sorted(st.hands[seat]) == [deck[i], deck[i + 3], deck[i + 6]]
    assert st.discard == [deck[9]]  # the upcard
    assert st.stock[-1] == deck[10] and st.stock[-2] == deck[11]  # top of stock is next
    assert len(st.stock) == 52 - 10
    assert st.current_player == first  # 002 "Play": dealer's left begins
    assert st.dealer == dealer and st.turn == 0 and st.hand_number == 1


def test_stack_helper_matches_the_engine_deal():
    st = game([H23, H17, H11], "2D", "9S 3C", dealer=1)
    assert [sorted(h) for h in st.hands] == [cards(H23), cards(H17), cards(H11)]
    assert st.discard == parse_cards("2D") and st.stock[-2:] == parse_cards("3C 9S")


def test_first_dealer_comes_from_the_seeded_rng():
    dealers = {GameState(4, seed=s).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    assert GameState(4, seed=7).dealer == GameState(4, seed=7).dealer


def test_bad_dealer_and_player_count_are_rejected():
    with pytest.raises(ValueError, match="dealer"):
        GameState(3, dealer=3)
    with pytest.raises(ValueError, match="num_players"):
        GameState(1)
    with pytest.raises(ValueError, match="num_players"):
        GameState(11)


# -- a turn (002 "Play") -------------------------------------------------------------------


def test_draw_from_stock_is_hidden_from_the_others():
    st = game([H23, H17, H11], "2D", "9S")
    move(st, 0, "stock")
    me, other = make_view(st, 0), make_view(st, 1)
    assert me.drawn_card == parse_card("9S") and parse_card("9S") in me.hand
    assert other.log[-1] == (0, "draw_stock", None)
    assert other.known_cards[0] == () and other.drawn_card is None
    assert parse_card("9S") not in other.hand


def test_may_discard_the_card_just_drawn_from_the_stock():
    st = game([H23, H17, H11], "2D", "9S")
    move(st, 0, "stock")
    assert parse_card("9S") in st.legal_actions()
    move(st, 0, "9S")
    assert sorted(st.hands[0]) == cards(H23) and st.discard[-1] == parse_card("9S")
    assert st.current_player == 1 and st.phase is Phase.DRAW


def test_take_the_top_discard_and_it_may_not_go_straight_back():
    st = game([H23, H17, H11], "2D")
    move(st, 0, "take")
    two_d = parse_card("2D")
    assert st.phase is Phase.DISCARD and two_d in st.hands[0]
    assert two_d not in st.legal_actions() and not st.is_legal(two_d)
    assert st.legal_actions() == sorted(parse_cards(H23))
    with pytest.raises(ValueError, match=r"illegal action .*discard 2D.*legal: "):
        st.apply_action(two_d)
    # the taken card is public: the others know it is in seat 0's hand
    assert make_view(st, 1).known_cards[0] == (two_d,)
    move(st, 0, "5H")
    assert make_view(st, 2).known_cards[0] == (two_d,)
    assert st.discard[-1] == parse_card("5H")


def test_draw_phase_legal_actions():
    st = game([H23, H17, H11], "2D")
    assert st.legal_actions() == [DRAW_STOCK, DRAW_DISCARD, KNOCK]
    for bad in (END_PLAY, parse_card("KH"), -1, 99):
        assert not st.is_legal(bad)
        with pytest.raises(ValueError, match="illegal action"):
            st.apply_action(bad)


# -- knocking (002 "Knocking") -------------------------------------------------------------


def test_knock_instead_of_drawing_on_the_first_turn_keeps_the_hand():
    st = game([H23, H17, H11], "2D")
    assert st.turn == 0 and KNOCK in st.legal_actions()
    move(st, 0, "knock")
    assert st.knocker == 0 and sorted(st.hands[0]) == cards(H23)
    assert st.current_player == 1 and st.phase is Phase.DRAW


def test_no_second_knock_in_a_hand():
    st = game([H23, H17, H11], "2D")
    move(st, 0, "knock")
    assert KNOCK not in st.legal_actions() and not st.is_legal(KNOCK)
    keep(st, 1)
    assert KNOCK not in st.legal_actions()


def test_after_a_knock_each_other_player_gets_exactly_one_turn():
    # 4 players, seat 1 knocks mid-round: seats 2, 3, 0 play once; the hand ends after the
    # discard of seat 0, the player on the knocker's right.
    st = game([H23, H17, H11, H10], "2D", dealer=3)
    keep(st, 0)
    move(st, 1, "knock")
    for seat in (2, 3):
        keep(st, seat)
        assert not st.results
    keep(st, 0)
    assert len(st.results) == 1 and last(st).reason == "knock" and last(st).knocker == 1
    assert st.hand_number == 2  # the next hand is dealt at once


def test_knocker_right_is_the_last_seat_also_when_the_dealer_knocks():
    st = game([H23, H17, H11], "2D", dealer=2)  # order 0, 1, 2
    keep(st, 0)
    keep(st, 1)
    move(st, 2, "knock")
    keep(st, 0)
    assert not st.results
    keep(st, 1)
    assert last(st).knocker == 2


def test_sole_lowest_loses_one_life():
    st = knock_game([H23, H17, H11])
    res = last(st)
    assert res.values == {0: 23, 1: 17, 2: 11}
    assert res.lives_lost == {0: 0, 1: 0, 2: 1} and st.lives == [4, 4, 3]


def test_tie_involving_the_knocker_others_lose_knocker_safe():
    st = knock_game([H11, H11B, H23])
    assert last(st).lives_lost == {0: 0, 1: 1, 2: 0}


def test_tie_of_three_including_the_knocker():
    st = knock_game([H11, H11B, H23, "AH 2S 3D"], dealer=3)
    assert last(st).lives_lost == {0: 0, 1: 1, 2: 0, 3: 1}


def test_knocker_sole_lowest_loses_two():
    st = knock_game([H10, H17, H23])
    assert last(st).lives_lost == {0: 2, 1: 0, 2: 0} and st.lives == [2, 4, 4]


def test_tie_for_lowest_between_non_knockers_all_lose():
    st = knock_game([H23, H11, H11B])
    assert last(st).lives_lost == {0: 0, 1: 1, 2: 1}


# -- declaring 31 (002 "Declaring 31") ---------------------------------------------------


def test_31_after_a_discard_ends_the_hand_and_costs_everyone_else_a_life():
    st = game([H23, "AH JH 2C", H11], "2D", "2S QH")
    keep(st, 0)
    move(st, 1, "stock", "2C")
    res = last(st)
    assert res.reason == "thirty_one" and res.declarers == (1,) and res.knocker is None
    assert res.values[1] == 31
    assert res.lives_lost == {0: 1, 1: 0, 2: 1}  # seat 2 never got its turn
    assert st.hand_number == 2


def test_31_after_a_knock_costs_the_knocker_one_like_everyone_else():
    st = game([H23, "AH JH 2C", H11], "QH")
    move(st, 0, "knock")
    move(st, 1, "take", "2C")
    res = last(st)
    assert res.reason == "thirty_one" and res.knocker == 0
    assert res.lives_lost == {0: 1, 1: 0, 2: 1}


def test_dealt_31_ends_the_hand_before_any_play():
    st = game([H23, "AH JH QH", H11], "2D")
    res = st.results[0]
    assert res.reason == "dealt_thirty_one" and res.declarers == (1,)
    assert res.lives_lost == {0: 1, 1: 0, 2: 1} and res.hand_number == 1
    assert st.hand_number == 2 and st.turn == 0 and st.dealer == 0  # next deal, next dealer


def test_several_dealt_31s_all_holders_are_safe():
    st = game(["AH JH QH", H11, "AS 10S JS"], "2D")
    res = st.results[0]
    assert res.declarers == (0, 2) and res.lives_lost == {0: 0, 1: 1, 2: 0}


def test_dealt_31_with_single_hand_is_already_over():
    st = game([H23, "AH JH QH", H11], "2D", single_hand=True)
    assert st.phase is Phase.HAND_OVER and st.is_terminal() and st.legal_actions() == []


def test_31_is_declared_even_by_the_last_player_after_a_knock():
    # seat 2 is the knocker's right: its 31 still counts as a declaration, not a showdown
    st2 = game([H23, H17, "AH JH 2C"], "2S", "3S QH")
    move(st2, 0, "knock")
    keep(st2, 1)
    move(st2, 2, "stock", "2C")
    assert last(st2).reason == "thirty_one" and last(st2).lives_lost == {0: 1, 1: 1, 2: 0}


# -- two players: taking back your own discard (002 "Knocking", last paragraph) ----------------


def test_two_players_take_back_own_discard_after_the_opponent_knocks():
    st = game(["KH 8H 5C", H17], "2D", "2S")
    move(st, 0, "stock", "8H")  # breaks up the hearts
    move(st, 1, "knock")
    eight = parse_card("8H")
    assert st.discard[-1] == eight and DRAW_DISCARD in st.legal_actions()
    move(st, 0, "take")
    assert eight not in st.legal_actions()
    move(st, 0, "2S")
    res = last(st)  # seat 0 was the knocker's right: the hand is over
    assert res.values == {0: 18, 1: 17} and res.lives_lost == {0: 0, 1: 2}


# -- stock exhausted (002 "Draw pile exhausted") ------------------------------------------


def test_empty_stock_offers_take_or_end_play_and_play_may_go_on():
    """002/000 "Draw pile exhausted": the player to move takes the previous discard or
    ends the play; there is no third choice."""
    st = game([H23, H17, H11], "2D")
    exhaust_stock(st)
    assert st.stock == [] and st.legal_actions() == [DRAW_DISCARD, END_PLAY]
    assert not st.is_legal(KNOCK)
    seat = st.current_player
    move(st, seat, "take")
    top_before = st.hands[seat][-1]
    discard = next(c for c in st.hands[seat] if c != top_before)
    st.apply_action(discard)
    assert not st.results and st.current_player == (seat + 1) % 3


def test_end_play_on_empty_stock_lowest_loses_one():
    st = game([H23, H17, H11], "2D")
    exhaust_stock(st)
    st.apply_action(END_PLAY)
    res = last(st)
    assert res.reason == "stock_exhausted" and res.knocker is None
    assert res.lives_lost == {0: 0, 1: 0, 2: 1}


def test_end_play_on_empty_stock_ties_all_lose():
    st = game([H23, H11, H11B], "2D")
    exhaust_stock(st)
    st.apply_action(END_PLAY)
    assert last(st).lives_lost == {0: 0, 1: 1, 2: 1}


def test_knock_on_an_empty_stock_is_scored_as_a_knock():
    st = game([H10, H23, H17], "2D", rules="knock_when_exhausted")
    exhaust_stock(st)
    assert st.legal_actions() == [DRAW_DISCARD, KNOCK, END_PLAY]
    knocker = st.current_player
    st.apply_action(KNOCK)
    while not st.results:
        st.apply_action(END_PLAY)  # declining ends the play at once
    res = last(st)
    assert res.reason == "stock_exhausted" and res.knocker == knocker
    expected = {0: 1, 1: 0, 2: 0} if knocker != 0 else {0: 2, 1: 0, 2: 0}
    assert res.lives_lost == expected


def test_stock_runs_out_in_the_last_round_after_a_knock():
    st = game([H23, H17, H11], "2D")
    exhaust_stock(st, leave=1)
    knocker = st.current_player
    st.apply_action(KNOCK)
    keep(st, st.current_player)  # draws the last card of the stock
    assert st.stock == [] and st.current_player == (knocker + 2) % 3  # the knocker's right
    assert st.legal_actions() == [DRAW_DISCARD, END_PLAY]  # no second knock
    st.apply_action(END_PLAY)
    res = last(st)
    assert res.knocker == knocker and res.reason == "stock_exhausted"
    assert res.lives_lost[2] == (2 if knocker == 2 else 1)


# -- lives, elimination, dealer rotation (002 "Scoring") -------------------------------------


def test_three_pennies_and_the_county_four_losses_eliminate():
    st = game([H23, H17, H11], "2D")
    assert st.lives == [4, 4, 4] and Rules().start_lives == 4
    st = knock_game([H23, H17, H11], lives=[4, 4, 1])
    res = last(st)
    assert res.eliminated == (2,) and st.lives == [4, 4, 0] and st.active == [True, True, False]


def test_knocker_sole_lowest_with_two_lives_is_out():
    st = knock_game([H10, H17, H23], lives=[2, 4, 4])
    assert last(st).eliminated == (0,) and st.lives[0] == 0


def test_lives_lost_are_capped_by_lives_left():
    st = knock_game([H10, H17, H23], lives=[1, 4, 4])
    assert last(st).lives_lost[0] == 1 and st.lives[0] == 0


def test_deal_passes_left_skipping_eliminated_players():
    # dealer 2, seat 0 (on the county) loses and is out: the deal passes to seat 1.
    st = knock_game([H11, H17, H23], knocker=1, lives=[1, 4, 4], dealer=2)
    assert last(st).eliminated == (0,) and last(st).dealer == 2
    assert st.dealer == 1 and st.current_player == 2  # next hand: seat 2 leads
    assert st.hands[0] == []


def test_eliminated_dealer_passes_the_deal_to_the_next_player_still_in():
    st = knock_game([H23, H17, H11], knocker=1, lives=[4, 4, 1], dealer=2)
    assert last(st).eliminated == (2,) and last(st).dealer == 2
    assert st.dealer == 0 and st.current_player == 1


def test_deal_passes_left_each_hand():
    st = GameState(3, seed=3, dealer=0)
    while not st.is_terminal() and len(st.results) < 8:
        legal = st.legal_actions()
        st.apply_action(KNOCK if KNOCK in legal else legal[0])
    checked = 0
    for prev, nxt in zip(st.results, st.results[1:], strict=False):
        if prev.replayed:
            continue
        expected = (prev.dealer + 1) % 3
        while prev.lives_after[expected] == 0:  # the deal skips players who are out
            expected = (expected + 1) % 3
        assert nxt.dealer == expected
        checked += 1
    assert checked >= 3


def test_game_goes_on_until_one_player_is_left():
    st = game([None, H23, H11], "2D", lives=[0, 4, 1], dealer=2)
    assert st.current_player == 1  # seat 0 is out: play skips it
    move(st, 1, "knock")
    keep(st, 2)
    assert st.phase is Phase.GAME_OVER and st.winner == 1 and st.is_terminal()
    assert st.returns() == [-0.5, 1.0, -0.5] and st.legal_actions() == []


# -- the all-out hand (002 "Scoring", last paragraph; variant 1) --------------------------------


def test_all_out_hand_is_replayed_by_the_same_dealer():
    st = game(["KH QH 2C", "KS QS 2D"], "3D", lives=[1, 1], dealer=1)
    exhaust_stock(st)
    st.apply_action(END_PLAY)
    res = last(st)
    assert res.replayed and res.lives_lost == {0: 0, 1: 0} and res.values == {0: 20, 1: 20}
    assert st.lives == [1, 1] and st.active == [True, True]
    assert st.dealer == 1 and st.hand_number == 2 and not st.is_terminal()


def test_all_out_last_life_keeps_everyone_on_their_last_life():
    rules = Rules(all_out="last_life")
    st = game(["KH QH 2C", "KS QS 2D"], "3D", lives=[1, 1], dealer=1, rules=rules)
    exhaust_stock(st)
    st.apply_action(END_PLAY)
    res = last(st)
    assert not res.replayed and st.lives == [1, 1] and res.lives_lost == {0: 0, 1: 0}
    assert st.dealer == 0  # an ordinary hand: the deal moves on


def test_31_can_never_put_everyone_out():
    st = game(["AH JH 2C", H17], "QH", lives=[1, 1])
    move(st, 0, "take", "2C")
    assert last(st).eliminated == (1,) and st.winner == 0


def test_stack_rejects_a_card_named_twice():
    with pytest.raises(ValueError, match="twice"):
        stack([H23, H23], "2D")


# -- which rule decided the hand (HandResult.rule) ----------------------------------------


def _all_out(rules: Rules) -> GameState:
    st = game(["KH QH 2C", "KS QS 2D"], "3D", lives=[1, 1], dealer=1, rules=rules)
    exhaust_stock(st)
    st.apply_action(END_PLAY)
    return st


def _thirty_one_after_knock() -> GameState:
    st = game([H23, "AH JH 2C", H11], "QH")
    move(st, 0, "knock")
    move(st, 1, "take", "2C")
    return st


def _ended_on_empty_stock() -> GameState:
    st = game([H23, H17, H11], "2D")
    exhaust_stock(st)
    st.apply_action(END_PLAY)
    return st


@pytest.mark.parametrize("make,rule", [
    (lambda: knock_game([H23, H17, H11]), "lowest"),
    (lambda: knock_game([H23, H11, H11B]), "lowest"),
    (_ended_on_empty_stock, "lowest"),
    (lambda: knock_game([H10, H17, H23]), "knocker_lowest"),
    (lambda: knock_game([H11, H11B, H23]), "knocker_tie_safe"),
    (lambda: knock_game([H11, H11B, H23], rules=Rules.preset("knocker_pays_ties")),
     "knocker_tie_all"),
    (lambda: knock_game([H11, H11B, H23], rules=Rules.preset("knocker_only_ties")),
     "knocker_tie_only"),
    (lambda: knock_game([H23, H17, H11], rules=Rules.preset("gin")), "gin_knocker_highest"),
    (lambda: knock_game([H17, H23, H10], rules=Rules.preset("gin")), "gin_knocker_beaten"),
    (lambda: game([H23, "AH JH QH", H11], "2D"), "dealt_thirty_one"),
    (_thirty_one_after_knock, "thirty_one_after_knock"),
    (lambda: _all_out(Rules()), "all_out_replay"),
    (lambda: _all_out(Rules(all_out="last_life")), "all_out_last_life"),
])
def test_the_result_names_the_rule_that_decided_the_hand(make, rule):
    from scat_env.showdown import RULES, rule_text

    res = make().results[0]
    assert res.rule == rule and rule in RULES
    assert res.replayed == (rule == "all_out_replay")
    assert rule_text(rule).endswith(".")


def test_a_31_declared_without_a_knock_is_its_own_rule():
    st = game([H23, "AH JH 2C", H11], "2D", "2S QH")
    keep(st, 0)
    move(st, 1, "stock", "2C")
    assert last(st).rule == "thirty_one"


def test_every_rule_has_words_and_an_unknown_one_is_refused():
    from scat_env.showdown import RULES, rule_text

    assert len(set(RULES)) == len(RULES) and len({rule_text(r) for r in RULES}) == len(RULES)
    with pytest.raises(ValueError, match="unknown rule"):
        rule_text("highest")


def test_to_dict_names_every_seat_and_survives_json():
    import json

    res = _thirty_one_after_knock().results[0]
    d = res.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["rule"] == "thirty_one_after_knock" and d["reason"] == "thirty_one"
    assert d["knocker"] == "player_0" and d["declarers"] == ["player_1"]
    assert d["lives_lost"] == {"player_0": 1, "player_1": 0, "player_2": 1}
    assert d["hands"]["player_1"] == ["AH", "JH", "QH"]
    assert d["lives_after"] == {"player_0": 3, "player_1": 4, "player_2": 3}
    named = res.to_dict(["Ann", "Bob", "Cy"])
    assert named["knocker"] == "Ann" and set(named["values"]) == {"Ann", "Bob", "Cy"}


_WORDS = {1: "a life", 2: "two lives"}


@pytest.mark.parametrize("preset", [p for p in PRESETS if Rules.preset(p).scoring == "lives"])
def test_the_rule_text_says_what_this_presets_knocker_pays(preset):
    """The text of a scored hand names what the knocker lost under these rules, as scored:
    never "the knocker's penalty", and no second penalty where the knocker loses one like
    everyone else (the standard game's 31 after a knock)."""
    from scat_env.showdown import RULES, knock_losses, rule_text, thirty_one_losses

    rules = Rules.preset(preset)
    for rule in RULES:
        text = rule_text(rule, rules)
        assert text.startswith(rule_text(rule)) and "penalty" not in text
    cases = [thirty_one_losses([0, 1, 2], [1], 0, rules),
             knock_losses({0: 10.0, 1: 20.0, 2: 25.0}, 0, rules)]
    for losses, rule in cases:
        text = rule_text(rule, rules)
        unit = _WORDS[losses[0]]
        if rules.lives_name == "bus":
            unit = unit.replace("lives", "stops").replace("life", "stop")
        if rule == "thirty_one_after_knock" and losses[0] == 1:
            assert text == "A player declared 31 after a knock: everyone else loses a life."
        elif rule != "gin_knocker_highest":
            assert text.endswith(f" The knocker loses {unit}."), (rule, text)


def test_the_standard_games_knocker_pays_two_lives_alone_and_one_after_a_31():
    from scat_env.showdown import rule_text

    standard = Rules()
    assert rule_text("knocker_lowest", standard) == (
        "The knocker had the lowest hand alone and pays for the knock. "
        "The knocker loses two lives.")
    assert rule_text("thirty_one_after_knock", standard) == (
        "A player declared 31 after a knock: everyone else loses a life.")
    assert rule_text("thirty_one_after_knock", Rules.preset("knocker_pays_ties")).endswith(
        "everyone else loses a life. The knocker loses two lives.")
    assert rule_text("knocker_lowest", Rules.preset("knocker_loses_one")).endswith(
        "The knocker loses a life.")
