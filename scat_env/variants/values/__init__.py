"""What a hand is worth beyond its best suit: three of a kind, three aces, straight
flushes, trips above 31 (Italian) and the poker tie-break (002 Variations, 003)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import Bad, Family, Field, Preset

if TYPE_CHECKING:
    from scat_env.rules import Rules

FIELDS = (
    Field("three_of_a_kind", float, None, "value of three cards of one rank",
          "002 Variations, 003", order=9, choices=(30.0, 30.5), nullable=True,
          message="must be null, 30 or 30.5", changes_value=True),
    Field("three_aces", float, None, "value of three aces (Grand Cadillac = 33)",
          "002 Cadillac", order=10, low=30, high=40, nullable=True,
          message="must be null or a value between 30 and 40", changes_value=True),
    Field("straight_flush", bool, False, "three suited cards in sequence count 30",
          "002 Variations, 003", order=11, changes_value=True),
    Field("trips_beat_31", bool, False, "three of a kind beats 31 and ranks among itself "
          "(32 for three 2s up to 44 for three aces)", "002 Antonio di Sebastiano",
          order=16, changes_value=True),
    Field("poker_tiebreak", bool, False, "equal hands told apart by the ranks of the cards "
          "that count, highest first (decision (v))", "002 Jeffrey Jacobs", order=27,
          changes_value=True),
)

_TRIPS = ("`three_of_a_kind_30`, `three_of_a_kind_30_5`: trips count 30 (tying three "
          "ten-point cards of a suit) or 30.5 (beating everything but 31).")

PRESETS = (
    Preset("three_of_a_kind_30", {"three_of_a_kind": 30}, note="three of a kind counts 30",
           source="Pagat, Variations; a short rules summary", doc=_TRIPS, order=4),
    Preset("three_of_a_kind_30_5", {"three_of_a_kind": 30.5},
           note="three of a kind counts 30.5", source="Pagat, Variations", doc=_TRIPS,
           order=5),
    Preset("straight_flush", {"straight_flush": True},
           note="three suited cards in sequence count 30",
           source="Pagat, Variations; a short rules summary",
           doc="`straight_flush`: three suited cards in sequence count 30; A-K-Q is 31 "
               "anyway.", order=6),
    Preset("cadillac",
           {"pennies": 4, "county": True, "lives_name": "nickels",
            "knocker_tie": "knocker_only", "knocker_loss": 2, "three_of_a_kind": 30,
            "three_aces": 33},
           note="four nickels; a tied knocker pays; three aces 33 (a Grand Cadillac)",
           source="Pagat, Cadillac",
           doc="`cadillac` (002, Kent Hamilton): four nickels plus poverty (5 lives); a "
               "knocker tied for lowest pays two and the others nothing; three aces are a "
               "Grand Cadillac worth 33, declared like 31; other trips count 30.", order=16),
)


def validate(rules: Rules, bad: Bad) -> None:
    """Trips above 31 already value three of a kind: the other trips options would
    contradict them."""
    if rules.trips_beat_31 and (rules.three_of_a_kind is not None
                                or rules.three_aces is not None):
        raise bad("trips_beat_31", "already values three of a kind; leave "
                  "three_of_a_kind and three_aces null")


def words(rules: Rules) -> list[tuple[str, str]]:
    """The hand's value, and what these rules add to it (phrases of one "Here ..." line)."""
    out = [("hand", "A hand counts its best suit: A 11, K Q J 10, others their pips; "
                    "31 is best.")]
    if rules.trips_beat_31:
        out.append(("values", "three of a kind beats 31 (three 2s 32 ... three aces 44)"))
    if rules.three_of_a_kind is not None:
        out.append(("values", f"three of a kind counts {rules.three_of_a_kind:g}"))
    if rules.three_aces is not None:
        out.append(("values", f"three aces {rules.three_aces:g}"))
    if rules.straight_flush:
        out.append(("values", "three suited cards in sequence 30"))
    if rules.poker_tiebreak:
        out.append(("values", "equal hands are told apart by their ranks, as in poker"))
    return out


FAMILY = Family("values", "what a hand is worth", order=20, fields=FIELDS, presets=PRESETS,
                validate=validate, words=words)
