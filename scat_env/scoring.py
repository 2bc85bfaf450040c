"""Hand values, and the lookup tables that make them free in the engine's hot path.

The value of a hand is the best total of the cards of any one suit (002 "Cards and their
value"); that total is never below the highest single card, so "or the highest card" needs
no separate case. The options of :class:`~scat_env.rules.Rules` add special three-card
hands: three of a kind (30 or 30.5), three aces (Grand Cadillac, 33) and straight flushes
(30; A-K-Q is 31 anyway). With the ace high only, A-2-3 is not a straight (see RULES.md).
In the Italian game three of a kind beats 31 and ranks among itself (:data:`TRIPS_BASE`).

Two variations order hands differently, and the value carries that order so that one
comparison of values decides every showdown:

- golf (002, Mike Armstrong) counts all cards of one suit or all cards of one rank,
  whichever is more: 5H 8H 8C is 16 (the two 8s), not 13;
- the poker tie-break (002, Jeffrey Jacobs) tells equal hands apart by the ranks of the
  cards that count, highest first: the value is the points plus a fraction below one
  (:func:`poker_fraction`), so A-10-9 (30.9...) beats K-Q-J (30.8...) and ``int(value)`` is
  still the points.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations, permutations

from .cards import ACE_RANK, CARD_POINTS, CARD_RANK, CARD_SUIT, NUM_CARDS, parse_card
from .rules import Rules

_STANDARD = Rules()
THIRTY_ONE = 31.0
#: With ``trips_beat_31`` three of a kind counts ``TRIPS_BASE + rank index``: 32 for three
#: 2s up to 44 for three aces, above any 31 and ordered by rank (002, the Italian game).
TRIPS_BASE = 32.0


def _suit_best(cards: Iterable[int]) -> float:
    sums = [0, 0, 0, 0]
    for c in cards:
        sums[CARD_SUIT[c]] += CARD_POINTS[c]
    return float(max(sums))


def _rank_best(cards: Iterable[int]) -> float:
    """Golf: the best total of the cards of one rank."""
    sums = [0] * 13
    for c in cards:
        sums[CARD_RANK[c]] += CARD_POINTS[c]
    return float(max(sums))


def poker_fraction(cards: Sequence[int]) -> float:
    """The poker tie-break as a fraction in ``[0, 1)``: the ranks of the cards of the best
    suit (the cards that count), highest first, as base-14 digits. Between two suits of the
    same total the one with the higher ranks counts. Cards outside that suit play no part:
    a tie that the counting cards leave stays a tie (RULES.md, decision (v))."""
    best: tuple[int, ...] = ()
    best_sum = -1
    for suit in range(4):
        ranks = tuple(sorted((CARD_RANK[c] for c in cards if CARD_SUIT[c] == suit),
                             reverse=True))
        total = sum(CARD_POINTS[c] for c in cards if CARD_SUIT[c] == suit)
        if ranks and (total, ranks) > (best_sum, best):
            best, best_sum = ranks, total
    fraction, scale = 0.0, 1.0
    for r in best:
        scale /= 14.0
        fraction += (r + 1) * scale
    return fraction


def value_of(cards: Sequence[int], rules: Rules = _STANDARD) -> float:
    """Value of a hand of card ids under ``rules`` (the slow, readable definition)."""
    if rules.play == "golf":
        return max(_suit_best(cards), _rank_best(cards))
    if rules.poker_tiebreak:
        return _plain_value(cards, rules) + poker_fraction(cards)
    return _plain_value(cards, rules)


def _plain_value(cards: Sequence[int], rules: Rules) -> float:
    value = _suit_best(cards)
    if len(cards) != 3:
        return value
    a, b, c = cards
    ra, rb, rc = CARD_RANK[a], CARD_RANK[b], CARD_RANK[c]
    if ra == rb == rc:
        if rules.trips_beat_31:
            return TRIPS_BASE + ra  # above 31, ranked among themselves (Italian)
        if ra == ACE_RANK and rules.three_aces is not None:
            return max(value, float(rules.three_aces))
        if rules.three_of_a_kind is not None:
            return max(value, float(rules.three_of_a_kind))
        return value
    if rules.straight_flush and CARD_SUIT[a] == CARD_SUIT[b] == CARD_SUIT[c]:
        lo, mid, hi = sorted((ra, rb, rc))
        if mid == lo + 1 and hi == mid + 1:
            return max(value, 30.0)
    return value


def hand_value(cards: Sequence[int | str] | str, rules: Rules | str | None = None) -> float:
    """Public hand value: accepts card ids or strings (``"KH 8H 5H"``) and a rules preset.

    >>> hand_value("KH 8H 5H")
    23.0
    """
    from .cards import parse_cards

    ids = parse_cards(cards) if isinstance(cards, str) else [parse_card(c) for c in cards]
    if not ids:
        raise ValueError("hand_value needs at least one card")
    if len(set(ids)) != len(ids):
        raise ValueError(f"hand has a duplicate card: {cards!r}")
    if rules is None:
        rules = _STANDARD
    elif isinstance(rules, str):
        rules = Rules.preset(rules)
    return value_of(ids, rules)


_TABLES: dict[tuple, list[float]] = {}


def value_table(rules: Rules) -> list[float]:
    """Flat table ``t[a*2704 + b*52 + c]`` = value of the three cards ``a, b, c``.

    Built once per scoring variant and shared: a single list index is the
    cheapest hand evaluation Python has, and the engine does several per decision.
    """
    key = rules.scoring_key
    table = _TABLES.get(key)
    if table is None:
        table = [0.0] * (NUM_CARDS**3)
        for combo in combinations(range(NUM_CARDS), 3):
            v = value_of(combo, rules)
            for a, b, c in permutations(combo):
                table[a * 2704 + b * 52 + c] = v
        _TABLES[key] = table
    return table


def best_three(cards: Sequence[int], table: list[float], keep: int | None = None) -> float:
    """Best value of any three of four ``cards`` that keeps the card ``keep`` (if given)."""
    a, b, c, d = cards
    best = -1.0
    for drop, v in (
        (d, table[a * 2704 + b * 52 + c]),
        (c, table[a * 2704 + b * 52 + d]),
        (b, table[a * 2704 + c * 52 + d]),
        (a, table[b * 2704 + c * 52 + d]),
    ):
        if drop != keep and v > best:
            best = v
    return best
