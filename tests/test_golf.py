"""Golf-like 31 (002, Mike Armstrong): stacked deals built from the source's description.

"Each player is dealt three cards in a row face down and they must not look at them. ...
At your turn you must either take the top card of the discard pile and put it face up in
place of one of your (unknown) face down cards. The replaced card is discarded face up, or
draw the top card of the stock, look at it and then either place it face up in place of one
of your face down cards as above, or discard the card you drew face up and turn one of your
face down cards face up. Face up cards cannot be discarded or replaced. There is no
knocking. After everyone has had three turns all the players' cards will be face up and the
hand is scored. A player may score for either all cards of one suit or all cards of one
rank, whichever is greater. So for example heart5, heart8, club8 would score 16 ...
Each player starts with three lives (represented by quarters) and the player(s) with the
lowest score(s) lose one life. A player who loses their last life is 'on the bus'. A player
who loses while on the bus is eliminated. Only one player at a time can be on the bus."
"""

from __future__ import annotations

import pytest
from conftest import game

from scat_env import Rules, hand_value, lives_label, make_view, parse_card
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK, PLACE_SLOT, TURN_UP
from scat_env.engine import Phase
from scat_env.showdown import one_on_the_bus

GOLF = Rules.preset("golf")
HANDS = ["5H 8H 8C", "KS QS 2D", "AD 9D 3C"]  # slot order; 16 (two 8s), 20, 20
STOCK = "3S 4S 5S 6S 7S 9S 10S 2H 3H"


def _turn_all_up(g) -> None:
    """Three turns each: draw, discard the drawn card and turn slot t face up."""
    for t in range(3):
        for _ in range(3):
            g.apply_action(DRAW_STOCK)
            g.apply_action(TURN_UP + t)


def test_nobody_sees_a_face_down_card_not_even_its_owner():
    g = game(HANDS, "2C", STOCK, rules=GOLF)
    for seat in range(3):
        view = make_view(g, seat)
        assert view.hand == () and view.slots == ((None,) * 3,) * 3
    assert g.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]  # no knocking in golf
    assert KNOCK not in g.legal_actions()


def test_a_taken_discard_goes_face_up_into_a_slot_and_the_replaced_card_is_discarded():
    g = game(HANDS, "2C", STOCK, rules=GOLF)
    g.apply_action(DRAW_DISCARD)
    assert g.legal_actions() == [PLACE_SLOT, PLACE_SLOT + 1, PLACE_SLOT + 2]
    g.apply_action(PLACE_SLOT + 1)
    view = make_view(g, 2)
    assert view.slots[0] == (None, parse_card("2C"), None)
    assert view.top_discard == parse_card("8H")  # the replaced card, face up
    assert make_view(g, 0).hand == (parse_card("2C"),)


def test_a_drawn_card_is_placed_or_discarded_with_a_slot_turned_up():
    g = game(HANDS, "2C", STOCK, rules=GOLF)
    g.apply_action(DRAW_STOCK)
    mine = make_view(g, 0)
    assert mine.drawn_card == parse_card("3S") and make_view(g, 1).drawn_card is None
    assert g.legal_actions() == [PLACE_SLOT + i for i in range(3)] + [TURN_UP + i for i in range(3)]
    g.apply_action(TURN_UP + 2)
    assert make_view(g, 1).slots[0] == (None, None, parse_card("8C"))
    assert make_view(g, 1).top_discard == parse_card("3S")


def test_face_up_cards_cannot_be_replaced():
    g = game(HANDS, "2C", STOCK, rules=GOLF)
    g.apply_action(DRAW_STOCK)
    g.apply_action(TURN_UP + 1)
    for _ in range(2):  # seats 1 and 2
        g.apply_action(DRAW_STOCK)
        g.apply_action(TURN_UP)
    g.apply_action(DRAW_STOCK)
    assert g.legal_actions() == [PLACE_SLOT, PLACE_SLOT + 2, TURN_UP, TURN_UP + 2]


def test_after_three_turns_each_the_lowest_hand_by_suit_or_rank_loses_a_quarter():
    assert hand_value("5H 8H 8C", "golf") == 16 and hand_value("5H 8H 8C") == 13
    g = game(HANDS, "2C", STOCK, rules=GOLF)
    _turn_all_up(g)
    res = g.results[-1]
    assert res.reason == "face_up" and dict(res.values) == {0: 16, 1: 20, 2: 20}
    assert dict(res.lives_lost) == {0: 1, 1: 0, 2: 0}
    assert lives_label(GOLF, g.lives[0]) == "2 quarters"
    assert g.hand_number == 2 and g.phase is Phase.GOLF_DRAW


def test_losing_the_last_quarter_puts_a_player_on_the_bus_and_losing_there_puts_it_out():
    g = game(HANDS, "2C", STOCK, rules=GOLF, lives=[2, 4, 4])
    _turn_all_up(g)
    assert g.lives[0] == 1 and lives_label(GOLF, 1) == "on the bus"
    g = game(HANDS, "2C", STOCK, rules=GOLF, lives=[1, 4, 4])
    _turn_all_up(g)
    assert g.lives[0] == 0 and not g.active[0] and g.results[-1].eliminated == (0,)


def test_only_one_player_at_a_time_can_be_on_the_bus():
    # Seat 1 rides the bus; seat 0 loses its last quarter: it is out at once.
    g = game(HANDS, "2C", STOCK, rules=GOLF, lives=[2, 1, 4])
    _turn_all_up(g)
    assert g.lives[:2] == [0, 1] and g.results[-1].eliminated == (0,)


def test_the_bus_rule_for_players_losing_together():
    # Bus empty, seats 1 and 2 lose their last quarter together: nobody is named to board
    # first, so the hand is replayed (None), as an all-out hand is.
    assert one_on_the_bus([1, 2, 0], [4, 2, 2], {0: 0, 1: 1, 2: 1}) is None
    # The bus taken and kept: both are out at once.
    assert one_on_the_bus([1, 2, 0], [1, 2, 2], {0: 0, 1: 1, 2: 1}) == {0: 0, 1: 2, 2: 2}
    # The rider is put off in the same hand: the bus is free for the new rider.
    assert one_on_the_bus([0, 1, 2], [1, 2, 4], {0: 1, 1: 1, 2: 0}) == {0: 1, 1: 1, 2: 0}
    # A rider who does not lose stays on: a new loser is out.
    assert one_on_the_bus([0, 1, 2], [1, 2, 4], {0: 0, 1: 1, 2: 0}) == {0: 0, 1: 2, 2: 0}


def test_two_players_losing_their_last_quarter_together_with_the_bus_free_replay_the_hand():
    # 16, 16 and 20: seats 0 and 1 lose their last quarter in the same hand and the bus is
    # free. Seat order must not pick who boards: the hand is dealt again, lives unchanged.
    g = game(["5H 8H 8C", "5S 8S 8D", "AD 9D 3C"], "2C", "3S 4S 6S 7S 9S 10S 2H 3H 4H",
             rules=GOLF, lives=[2, 2, 4])
    dealer = g.dealer
    _turn_all_up(g)
    res = g.results[-1]
    assert res.rule == "bus_tie_replay" and res.replayed
    assert dict(res.lives_lost) == {0: 0, 1: 0, 2: 0} and g.lives == [2, 2, 4]
    assert g.dealer == dealer and all(g.active)


def test_golf_refuses_rules_it_has_no_use_for():
    with pytest.raises(ValueError, match="Rules.min_knock"):
        GOLF.replace(min_knock=17)
    with pytest.raises(ValueError, match="Rules.declare_31"):
        GOLF.replace(declare_31="auto")
    with pytest.raises(ValueError, match="did you mean 'golf'"):
        Rules(play="gollf", declare_31="never")
    with pytest.raises(ValueError, match="one_on_the_bus"):
        GOLF.replace(county=False)


def test_a_golf_state_is_assembled_from_its_parts_with_its_slots():
    """``GameState.from_parts`` (how a search builds a sampled world) takes golf's phases
    and face-up slots, and only golf's: a golf world without them, or slots for another
    game, is refused in one line rather than simulated wrong."""
    import random

    from scat_env import GameState

    state = GameState(3, GOLF, rng=random.Random(4))
    for action in (DRAW_STOCK, TURN_UP + 1, DRAW_DISCARD):
        state.apply_action(action)
    parts = dict(hands=state.hands, stock=state.stock, discard=state.discard,
                 lives=state.lives, dealer=state.dealer, current_player=state.current_player,
                 turn=state.turn, log=state.log, taken=state.taken, drawn=state.drawn,
                 known=[[c for c in range(52) if state.known[s] >> c & 1] for s in range(3)])
    world = GameState.from_parts(GOLF, phase="golf_place", face_up=state.face_up, **parts)
    assert world.face_up == state.face_up and world.phase is Phase.GOLF_PLACE
    for seat in range(3):
        assert make_view(world, seat) == make_view(state, seat)
    assert sorted(world.legal_actions()) == sorted(state.legal_actions())
    with pytest.raises(ValueError, match="golf takes face_up"):
        GameState.from_parts(GOLF, phase="golf_place", **parts)
    with pytest.raises(ValueError, match="phase must be 'golf_draw' or 'golf_place'"):
        GameState.from_parts(GOLF, phase="discard", face_up=state.face_up, **parts)
    with pytest.raises(ValueError, match="golf takes face_up"):
        GameState.from_parts(Rules(), phase="draw", face_up=[0, 0, 0],
                             **{**parts, "hands": [h[:3] for h in state.hands]})
