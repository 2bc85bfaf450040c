"""Cards: ids, points, and the string forms people and files use.

A card is an ``int`` in ``0..51``: ``card = suit * 13 + rank``. Suits are in bridge order
(clubs, diamonds, hearts, spades) and ranks run ``2, 3, ..., 10, J, Q, K, A`` so that a
card's rank index also orders it for straights. Plain ints keep the engine's hot path free
of object churn; everything human-facing goes through :func:`card_str` / :func:`parse_card`.

Points follow every source (002 "Cards and their value"): Ace 11, K/Q/J 10, others pip.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

NUM_CARDS = 52
NUM_SUITS = 4
NUM_RANKS = 13

SUIT_LETTERS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
ACE_RANK = 12

#: Points of each rank index (2..10 pip, J/Q/K 10, A 11).
RANK_POINTS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11)

#: Points of each card id; a tuple so lookups in the engine are a single index.
CARD_POINTS: tuple[int, ...] = tuple(RANK_POINTS[c % 13] for c in range(NUM_CARDS))
CARD_SUIT: tuple[int, ...] = tuple(c // 13 for c in range(NUM_CARDS))
CARD_RANK: tuple[int, ...] = tuple(c % 13 for c in range(NUM_CARDS))

_RANK_ALIASES = {name: i for i, name in enumerate(RANK_NAMES)}
_RANK_ALIASES.update({"T": 8, "1": 12})  # "T" for ten as in many card libraries; "1" for ace
_SUIT_ALIASES = {ch: i for i, ch in enumerate(SUIT_LETTERS)}
_SUIT_ALIASES.update({ch: i for i, ch in enumerate(SUIT_SYMBOLS)})
# Outline symbols people paste from word processors.
_SUIT_ALIASES.update({"♧": 0, "♢": 1, "♡": 2, "♤": 3})


def make_card(rank: int, suit: int) -> int:
    """Card id from a rank index (0 = 2 .. 12 = A) and a suit index (0..3 = C, D, H, S)."""
    if not 0 <= rank < NUM_RANKS:
        raise ValueError(f"rank index must be 0..12, got {rank!r}")
    if not 0 <= suit < NUM_SUITS:
        raise ValueError(f"suit index must be 0..3, got {suit!r}")
    return suit * 13 + rank


def card_str(card: int, symbols: bool = False) -> str:
    """``"KH"`` / ``"10H"`` (or ``"K♥"`` with ``symbols=True``); always parseable back."""
    if not isinstance(card, int) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id must be an int 0..51, got {card!r}")
    suit = SUIT_SYMBOLS[card // 13] if symbols else SUIT_LETTERS[card // 13]
    return RANK_NAMES[card % 13] + suit


def cards_str(cards: Iterable[int], symbols: bool = False) -> str:
    """Space-separated :func:`card_str` of several cards."""
    return " ".join(card_str(c, symbols) for c in cards)


def parse_card(text: str | int) -> int:
    """Parse ``"KH"``, ``"kh"``, ``"10H"``, ``"TH"``, ``"K♥"`` or ``"♥K"`` into a card id.

    Ints 0..51 pass through so that decks may be given either way. Anything else raises a
    ``ValueError`` that quotes the bad input, because a silently misread card would stack a
    different deck than the user meant.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a card: {text!r}")
    if isinstance(text, int):
        if 0 <= text < NUM_CARDS:
            return text
        raise ValueError(f"card id must be 0..51, got {text}")
    if not isinstance(text, str):
        raise ValueError(f"not a card: {text!r} (expected a string like 'KH' or '10♥')")
    s = text.strip().upper()
    if len(s) < 2:
        raise ValueError(f"not a card: {text!r} (expected rank and suit, like 'KH' or '10♥')")
    # Suit may come last ("KH", "K♥") or first ("♥K", "HK" is not accepted: ambiguous with
    # nothing, but rare; we only accept a leading suit when it is a symbol).
    if s[-1] in _SUIT_ALIASES:
        rank_part, suit = s[:-1], _SUIT_ALIASES[s[-1]]
    elif s[0] in _SUIT_ALIASES and s[0] not in SUIT_LETTERS:
        rank_part, suit = s[1:], _SUIT_ALIASES[s[0]]
    else:
        raise ValueError(
            f"not a card: {text!r} (unknown suit; use one of C D H S or ♣ ♦ ♥ ♠)"
        )
    rank = _RANK_ALIASES.get(rank_part.strip())
    if rank is None:
        raise ValueError(
            f"not a card: {text!r} (unknown rank {rank_part!r}; use 2-10, J, Q, K or A)"
        )
    return suit * 13 + rank


def parse_cards(text: str | Sequence[str | int]) -> list[int]:
    """Parse ``"KH 8H 5H"`` (space or comma separated) or a list of card strings/ids."""
    if isinstance(text, str):
        parts = text.replace(",", " ").split()
    else:
        parts = list(text)
    return [parse_card(p) for p in parts]
