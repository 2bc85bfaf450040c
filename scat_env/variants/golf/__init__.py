"""How a turn goes: draw and discard (every game but one), or golf (002, Mike Armstrong):
three face-down cards, one put in place or turned face up each turn, no knocking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import Bad, Family, Field, Preset
from ..lives import lives_label, start_lives

if TYPE_CHECKING:
    from scat_env.rules import Rules

#: How a turn goes: draw and discard, or golf.
PLAYS = ("draw", "golf")

#: The options golf leaves out (no knocking, no declaring, hands scored by suit or by rank).
NOT_IN_GOLF = ("min_knock", "knock_needs_flush", "straight_flush", "three_of_a_kind",
               "three_aces", "trips_beat_31", "hammer", "throw_down", "sudden_death",
               "second_knock", "knock_then_draw", "knock_when_stock_exhausted",
               "poker_tiebreak")

FIELDS = (
    Field("play", str, "draw", "the turn: draw and discard, or golf's face-down slots (needs "
          "`declare_31: never`; refuses every knocking and hand-value option)",
          "002 Mike Armstrong", order=28, choices=PLAYS, suggest=True, changes_value=True),
)

PRESETS = (
    Preset("golf", {"play": "golf", "declare_31": "never", "pennies": 3, "county": True,
                    "lives_name": "quarters", "one_on_the_bus": True},
           note="three face-down cards, one turned up a turn; quarters, then the bus",
           source="Pagat, Mike Armstrong",
           doc="`golf` (002, Mike Armstrong): three cards face down in a row, which nobody may "
               "look at, their owner included. A turn takes the top discard and puts it face "
               "up in place of a face-down card (which goes face up onto the pile), or draws "
               "from the stock and either places the card the same way or discards it and "
               "turns a face-down card up. Face-up cards stay; no knocking, no declaring. "
               "After three turns each every card is face up and the hands are compared, each "
               "worth all cards of one suit or all cards of one rank, whichever is more (5H 8H "
               "8C = 16); the lowest lose a quarter. Three quarters, then \"on the bus\", one "
               "player at a time (decision (w)).", order=30),
)


def validate(rules: Rules, bad: Bad) -> None:
    """Golf leaves out every option that has no meaning in it, so that a table of rules
    never promises something the engine does not do."""
    if rules.play != "golf":
        return
    if rules.declare_31 != "never":
        raise bad("declare_31", "golf has no declaring (nobody sees a whole hand "
                  "before the end): use 'never'")
    plain = type(rules)()
    for name in NOT_IN_GOLF:
        if getattr(rules, name) != getattr(plain, name):
            raise bad(name, "has no meaning in golf (no knocking, hands scored by "
                      "suit or by rank); leave it at its default")


def whole_words(rules: Rules) -> list[str] | None:
    """Golf's rules in full: none of the draw game's lines apply."""
    if rules.play != "golf":
        return None
    bus = (": one player at a time; another who loses the last quarter meanwhile is out"
           if rules.one_on_the_bus else "")
    return [
        "Your three cards lie face down in a row: nobody may look at them, you included.",
        "Each turn: take the top discard, or draw, and put the card face up in place of a "
        "face-down one (that card goes to the pile); or discard the card drawn and turn "
        "one of yours up.",
        "Once every card is face up, hands count the cards of their best suit or best "
        "rank (8♥ 8♣ 5♥ is 16). The lowest hand loses a life. No knock, no 31.",
        f"Everyone starts with {lives_label(rules, start_lives(rules))}, then the bus{bus}. "
        "The last player in wins.",
    ]


FAMILY = Family("golf", "how a turn goes: draw and discard, or golf", order=80, fields=FIELDS,
                presets=PRESETS, validate=validate, whole_words=whole_words,
                menu={"place": "put the card in face-down slot {slot}",
                      "turn": "discard it and turn slot {slot} face up"})
