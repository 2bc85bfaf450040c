"""Card ids, points and the string forms (cards.py, actions.py)."""

from __future__ import annotations

import pytest

from scat_env import action_str, card_str, discard_action, parse_card, parse_cards
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, NUM_ACTIONS, action_short
from scat_env.cards import CARD_POINTS, CARD_RANK, CARD_SUIT, cards_str, make_card


def test_every_card_round_trips_through_its_string():
    for c in range(52):
        assert parse_card(card_str(c)) == c
        assert parse_card(card_str(c, symbols=True)) == c


def test_card_points_follow_the_sources():
    # 002 "Cards and their value": ace 11, court cards 10, others their pip value.
    assert CARD_POINTS[parse_card("AS")] == 11
    for r in "KQJ":
        assert CARD_POINTS[parse_card(r + "D")] == 10
    for pip in range(2, 11):
        assert CARD_POINTS[parse_card(f"{pip}C")] == pip
    assert sum(CARD_POINTS) == 4 * (sum(range(2, 11)) + 30 + 11)


def test_ids_are_suit_major_in_bridge_order():
    assert parse_card("2C") == 0 and parse_card("AC") == 12
    assert parse_card("2D") == 13 and parse_card("AS") == 51
    assert [CARD_SUIT[parse_card(s)] for s in ("5C", "5D", "5H", "5S")] == [0, 1, 2, 3]
    assert CARD_RANK[parse_card("AH")] == 12 and make_card(12, 2) == parse_card("AH")


@pytest.mark.parametrize(
    "text,expected",
    [("KH", "KH"), ("kh", "KH"), ("10H", "10H"), ("TH", "10H"), ("K♥", "KH"), ("♥K", "KH"),
     (" 7c ", "7C"), ("A♤", "AS"), (51, "AS")],
)
def test_parse_card_accepts_the_common_spellings(text, expected):
    assert card_str(parse_card(text)) == expected


@pytest.mark.parametrize("bad", ["", "K", "KX", "1X", "11H", "ZH", "HK", 52, -1, True, None, 3.0])
def test_parse_card_rejects_bad_input_with_the_input_quoted(bad):
    with pytest.raises(ValueError) as err:
        parse_card(bad)
    assert repr(bad) in str(err.value) or str(bad) in str(err.value)


def test_parse_cards_and_cards_str():
    assert cards_str(parse_cards("KH, 8H 5H")) == "KH 8H 5H"
    assert parse_cards(["AS", 0]) == [51, 0]


def test_make_card_and_card_str_check_their_range():
    with pytest.raises(ValueError, match="rank"):
        make_card(13, 0)
    with pytest.raises(ValueError, match="suit"):
        make_card(0, 4)
    with pytest.raises(ValueError, match="card id"):
        card_str(52)


def test_action_names():
    assert action_str(discard_action("KH")) == "discard KH"
    assert action_str(DRAW_STOCK) == "draw from the stock"
    assert action_str(DRAW_DISCARD) == "take the top discard"
    assert action_str(KNOCK) == "knock"
    assert "end play" in action_str(END_PLAY)
    assert action_short(parse_card("10S")) == "d:10S" and action_short(KNOCK) == "knock"
    assert NUM_ACTIONS == 67
    from scat_env.actions import (
        CORE_ACTIONS,
        DECLARE,
        HAMMER,
        PASS,
        PLACE_SLOT,
        SUDDEN_DEATH,
        THROW_DOWN,
        TURN_UP,
    )

    assert CORE_ACTIONS == 56
    assert [HAMMER, THROW_DOWN, SUDDEN_DEATH, DECLARE, PASS] == list(range(56, 61))
    assert (PLACE_SLOT, TURN_UP) == (61, 64)  # golf's slot choices come after every call
    names = {action_str(a) for a in range(CORE_ACTIONS, NUM_ACTIONS)}
    assert len(names) == 11 and all(names)  # every call and slot choice has its own name
    shorts = {action_short(a) for a in range(52, NUM_ACTIONS)}
    assert len(shorts) == NUM_ACTIONS - 52
    with pytest.raises(ValueError, match="not an action"):
        action_str(NUM_ACTIONS)
    with pytest.raises(ValueError, match="not an action"):
        action_str("knock")
