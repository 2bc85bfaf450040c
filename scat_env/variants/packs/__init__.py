"""The pack: the standard 52 cards, or the Italian 40 (002, Antonio di Sebastiano)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import Family, Field, Preset

if TYPE_CHECKING:
    from scat_env.rules import Rules

DECKS = ("standard", "italian")
#: Ranks missing from the Italian 40-card pack (002, Antonio di Sebastiano): 8, 9 and 10
#: (rank indices of :data:`scat_env.cards.RANK_NAMES`).
ITALIAN_MISSING_RANKS = (6, 7, 8)

#: The card ids of each pack, built once: the engine reads them at every deal.
DECK_CARDS: dict[str, tuple[int, ...]] = {
    "standard": tuple(range(52)),
    "italian": tuple(c for c in range(52) if c % 13 not in ITALIAN_MISSING_RANKS),
}

FIELDS = (
    Field("deck", str, "standard", "the pack: 52 cards, or the Italian 40 (no 8, 9, 10)",
          "002 Antonio di Sebastiano", order=1, choices=DECKS),
)

PRESETS = (
    Preset("italian",
           {"deck": "italian", "trips_beat_31": True, "declare_31": "never", "pennies": 3,
            "county": True, "lives_name": "tokens", "knocker_loss": 1, "knocker_tie": "all"},
           note="the 40-card Italian pack; trips beat 31; no declaring",
           source="Pagat, Antonio di Sebastiano",
           doc="`italian` (002, Antonio di Sebastiano): the 40-card Italian pack; three of a "
               "kind beats 31 and ranks among itself, aces highest; 31 is never declared "
               "(players knock as usual, a dealt 31 is just a good hand); three tokens, and a "
               "player who loses the last one plays on until losing again (`county: true`, "
               "shown as \"playing on, no tokens\"); after a knock the lowest hands lose one "
               "token each, a knocker included.",
           order=20),
)


def words(rules: Rules) -> list[tuple[str, str]]:
    """The pack, where it is not the standard one."""
    if rules.deck == "italian":
        return [("values", "a 40-card pack (no 8, 9, 10)")]
    return []


FAMILY = Family("packs", "the cards in play", order=10, fields=FIELDS, presets=PRESETS,
                words=words)
