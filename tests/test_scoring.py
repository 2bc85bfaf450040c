"""Hand values: every worked example of the sources, and an exhaustive cross-check of all
22,100 three-card hands against an independent formulation written here from the text."""

from __future__ import annotations

from itertools import combinations, permutations

import pytest

from scat_env import Rules, card_str, hand_value, parse_cards
from scat_env.scoring import best_three, value_of, value_table

# -- the sources' own examples -----------------------------------------------------------


@pytest.mark.parametrize(
    "hand,value,source",
    [
        ("KH 8H 5H", 23, "002/000: all three hearts"),
        ("QS 9D 8D", 17, "002/000: the diamonds beat the queen"),
        ("AC 6S 4S", 11, "002/000: the ace beats the spades"),
        ("JC 7H 4S", 10, "002/000: three suits, the jack"),
        ("3H 5H 7H", 15, "004 example 1"),
        # 004 example 2 prints "8 poang (5+4)"; the hearts are 3 and 5, so 3+5 = 8 (typo).
        ("3H 5H 7S", 8, "004 example 2"),
        ("3H 5H 9S", 9, "004 example 3: the nine beats 3+5"),
        ("3H 9S AD", 11, "004 example 4: three suits, the ace"),
        ("AH KH QH", 31, "002: the maximum, ace and two ten-point cards"),
        ("AS 10S JS", 31, "002: the maximum"),
    ],
)
def test_examples_from_the_sources(hand, value, source):
    assert hand_value(hand) == value, source


def test_31_is_the_maximum_and_only_ace_plus_two_tens():
    table = value_table(Rules())
    best = max(table[a * 2704 + b * 52 + c] for a, b, c in combinations(range(52), 3))
    assert best == 31
    hands31 = [h for h in combinations(range(52), 3) if value_of(h) == 31]
    # per suit: the ace and two of the four ten-point cards (10, J, Q, K) -> 4 * C(4,2)
    assert len(hands31) == 4 * 6


def test_hand_value_input_handling():
    assert hand_value(["KH", "8H", "5H"]) == 23
    assert hand_value("KH KD KC", "three_of_a_kind_30") == 30
    assert hand_value("KH") == 10  # fewer cards: best suit total still defined
    with pytest.raises(ValueError, match="duplicate"):
        hand_value("KH KH 5H")
    with pytest.raises(ValueError, match="at least one"):
        hand_value([])
    with pytest.raises(ValueError, match="not a card"):
        hand_value("KH 8X 5H")


# -- independent formulation -------------------------------------------------------------

RANKS = "23456789TJQKA"  # ace high only (RULES.md decision b)


def _points(text: str) -> int:
    rank = text[:-1]
    if rank == "A":
        return 11
    if rank in ("K", "Q", "J"):
        return 10
    return int(rank)


def reference_value(cards: tuple[int, ...], rules: Rules) -> float:
    """Written from 002 directly: card strings, suits enumerated, no scoring.py helpers."""
    texts = [card_str(c) for c in cards]
    best = 0
    for suit in "CDHS":
        best = max(best, sum(_points(t) for t in texts if t[-1] == suit))
    value = float(best)
    ranks = [("T" if t[:-1] == "10" else t[:-1]) for t in texts]
    suits = {t[-1] for t in texts}
    if ranks[0] == ranks[1] == ranks[2]:
        if ranks[0] == "A" and rules.three_aces is not None:
            return max(value, rules.three_aces)
        if rules.three_of_a_kind is not None:
            return max(value, rules.three_of_a_kind)
    elif rules.straight_flush and len(suits) == 1:
        idx = sorted(RANKS.index(r) for r in ranks)
        if idx[1] == idx[0] + 1 and idx[2] == idx[1] + 1:
            value = max(value, 30.0)
    return value


SCORING_VARIANTS = ["standard", "three_of_a_kind_30", "three_of_a_kind_30_5", "straight_flush",
                    "cadillac", "gin"]


@pytest.mark.parametrize("preset", SCORING_VARIANTS)
def test_every_three_card_hand_matches_the_reference(preset):
    rules = Rules.preset(preset)
    table = value_table(rules)
    count = 0
    for combo in combinations(range(52), 3):
        expected = reference_value(combo, rules)
        assert value_of(combo, rules) == expected, (preset, [card_str(c) for c in combo])
        for a, b, c in permutations(combo):
            assert table[a * 2704 + b * 52 + c] == expected
        count += 1
    assert count == 22100


def test_hand_value_is_never_below_the_highest_card():
    # RULES.md decision (a): "or the highest card" needs no separate case.
    for combo in combinations(range(0, 52, 3), 3):
        assert value_of(combo) >= max(_points(card_str(c)) for c in combo)


@pytest.mark.parametrize(
    "hand,standard,straight",
    [("5H 6H 7H", 18, 30), ("2C 3C 4C", 9, 30), ("JS QS KS", 30, 30), ("AD KD QD", 31, 31),
     ("AS 2S 3S", 16, 16), ("QS KS AS", 31, 31), ("5H 6H 7D", 11, 11), ("9C 10C JC", 29, 30)],
)
def test_straight_flush_option(hand, standard, straight):
    # 002 Variations / 003: a straight flush counts 30, A-K-Q stays 31; ace is high only.
    assert hand_value(hand) == standard
    assert hand_value(hand, "straight_flush") == straight


@pytest.mark.parametrize(
    "hand,preset,value",
    [("7C 7D 7H", "standard", 7), ("7C 7D 7H", "three_of_a_kind_30", 30),
     ("7C 7D 7H", "three_of_a_kind_30_5", 30.5), ("AC AD AH", "three_of_a_kind_30", 30),
     ("AC AD AH", "cadillac", 33), ("KC KD KS", "cadillac", 30), ("AC AD AH", "gin", 30.5),
     ("2S 2H 2D", "gin", 30.5)],
)
def test_three_of_a_kind_options(hand, preset, value):
    # 002 Variations, Cadillac (Grand Cadillac 33) and Gin (30.5); decision (c) for aces.
    assert hand_value(hand, preset) == value


def test_best_three_matches_brute_force():
    table = value_table(Rules())
    hands = [parse_cards(h) for h in ("KH 8H 5H 2H", "AS 2C 3D 4H", "QS 9D 8D AD", "JH QH AS KH")]
    for four in hands:
        for keep in [None, *four]:
            expected = max(value_of(t) for t in combinations(four, 3) if keep in t or keep is None)
            assert best_three(four, table, keep) == expected
