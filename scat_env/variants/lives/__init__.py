"""Lives: how many, what they are called (pennies, nickels, points, the bus, letters,
tokens, quarters), the county, Ride the Bus's extra stops and a hand that would put everyone
out (002 Scoring, Ride the Bus, Cadillac, Gin; 003; 004)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import Bad, Family, Field, Preset, count, lives_count

if TYPE_CHECKING:
    from scat_env.rules import Rules

ALL_OUT = ("replay", "last_life")
LIVES_NAMES = ("pennies", "nickels", "points", "bus", "letters", "tokens", "quarters")
#: Extra stops a Ride the Bus game may add after "on the stairs" (002 Ride the Bus).
BUS_EXTRA_STOPS = ("on the second step", "asking the driver to stop")
#: Ride the Bus's stops, seated first; the extra stops of :data:`BUS_EXTRA_STOPS` come
#: after "on the stairs".
BUS_POSITIONS = ("seated", "standing at the back", "in the middle", "at the front",
                 "on the stairs", "off the bus")

FIELDS = (
    Field("pennies", int, 3, "lives before the county", "002 Scoring", order=2, low=0, high=20),
    Field("county", bool, True, "one extra life \"on the county\" after the last penny",
          "002 Scoring", order=3),
    Field("lives_name", str, "pennies", "how lives are shown; never changes play", "002, 004",
          order=4, choices=LIVES_NAMES),
    Field("all_out", str, "replay", "a hand that would put everyone out: dealt again with "
          "lives unchanged, or everyone stays on their last life", "002 Scoring / Variations",
          order=15, choices=ALL_OUT),
    Field("extra_stops", int, 0, "Ride the Bus stops after \"on the stairs\": \"on the second "
          "step\", \"asking the driver to stop\" (one more life each, every player); needs "
          "`lives_name: bus`", "002 Ride the Bus", order=21, low=0, high=len(BUS_EXTRA_STOPS)),
    Field("one_on_the_bus", bool, False, "only one player at a time on the last life (the "
          "county, \"on the bus\"); needs `county`", "002 Mike Armstrong", order=29),
)

_BUS = {"pennies": 5, "county": False, "lives_name": "bus", "knocker_loss": 1}

PRESETS = (
    Preset("no_county", {"county": False}, note="three lives, no county",
           source="a short rules summary",
           doc="`no_county`: three lives, no county (003's SCORING section reads this way, "
               "though its play section mentions the county).", order=11),
    Preset("swedish_points", {"pennies": 4, "county": False, "lives_name": "points"},
           note="each lost hand a point; four points and out",
           source="a Swedish description (Alternativ poängräkning)",
           doc="`swedish_points` (004 \"Alternativ poängräkning\"): each lost hand gives a "
               "point; four points and you are out (4 lives, shown as points). The lowest "
               "knocker still takes two (004 \"Knacka\").", order=14),
    Preset("ride_the_bus", _BUS, note="five stops, seated to the stairs, then off the bus",
           source="Pagat, Ride the Bus",
           doc="`ride_the_bus` (002 Ride the Bus): seated, standing at the back, in the "
               "middle, at the front, on the stairs, off the bus: five losses put you off "
               "(5 lives). Every lost hand moves a player one stop forward, a knocker's too "
               "(002; `knocker_loss: 1`).", order=15),
    Preset("ride_the_bus_extra_stops", {**_BUS, "extra_stops": 2},
           note="Ride the Bus with two more stops, seven in all",
           source="Pagat, Ride the Bus",
           doc="`ride_the_bus_extra_stops` (002 Ride the Bus): the five stops plus \"on the "
               "second step\" and \"asking the driver to stop\", for every player: seven "
               "losses put you off the bus; every lost hand moves a player one stop forward, "
               "a knocker's too (002; `knocker_loss: 1`). The extra stops are agreed at the "
               "start of the game: 002 lets a table add them mid-game by agreement, here that "
               "is a new game with this preset.", order=17),
)


def start_lives(rules: Rules) -> int:
    """Losses a player can take before elimination, county life included."""
    return rules.pennies + int(rules.county) + rules.extra_stops


def validate(rules: Rules, bad: Bad) -> None:
    """A player needs a life; extra stops are stops of the bus; the bus is the county."""
    if rules.pennies + int(rules.county) < 1:
        raise bad("pennies", "a player needs at least one life: pennies >= 1 or county")
    if rules.extra_stops and rules.lives_name != "bus":
        raise bad("extra_stops", "is a Ride the Bus rule: it needs lives_name 'bus'")
    if rules.one_on_the_bus and not rules.county:
        raise bad("one_on_the_bus", "the bus is the last life: it needs county true")


def lives_label(rules: Rules, lives: int) -> str:
    """Human words for a player's standing, in the chosen game's own vocabulary. In a
    points game nobody loses a life: the standing is the points (``PlayerView.points``)."""
    if rules.scoring == "points":
        return "in the race" if lives > 0 else "out"
    if lives <= 0:
        return "off the bus" if rules.lives_name == "bus" else "out"
    lost = start_lives(rules) - lives
    if rules.lives_name == "points":
        return f"{lost} point{'s' if lost != 1 else ''}"
    if rules.lives_name == "letters":
        return "GIN"[:lost] or "clean"
    if rules.lives_name == "bus":
        stops = BUS_POSITIONS[:-1] + BUS_EXTRA_STOPS[: rules.extra_stops]
        if start_lives(rules) == 5 + rules.extra_stops and lost < len(stops):
            return stops[lost]
        return f"{lives} stop{'s' if lives != 1 else ''} left"
    return _coins_label(rules, lives)


def _coins_label(rules: Rules, lives: int) -> str:
    """Quarters, tokens, nickels and pennies: the coins left, then the last life's name."""
    coins = lives - int(rules.county)
    if rules.lives_name == "quarters":
        if coins <= 0:
            return "on the bus"
        return f"{coins} quarter{'s' if coins != 1 else ''}"
    if rules.lives_name == "tokens":
        if coins <= 0:
            return "playing on, no tokens"
        return f"{coins} token{'s' if coins != 1 else ''}"
    if coins <= 0:
        return "on poverty" if rules.lives_name == "nickels" else "on the county"
    if rules.lives_name == "nickels":
        return f"{coins} nickel{'s' if coins != 1 else ''}"
    return f"{coins} penn{'y' if coins == 1 else 'ies'}"


def _lives_sentence(rules: Rules) -> str:
    """The lives everyone starts with, counted as the preset counts them."""
    n = start_lives(rules)
    first, last = lives_label(rules, n), lives_label(rules, 1)
    if rules.lives_name == "points":
        return f"Each lost hand is a point; {count(n, 'point', 'points')} and you are out"
    if rules.lives_name == "letters":
        return f"Each lost hand is a letter of {'GIN'[:n]}; all {n} and you are out"
    if rules.lives_name == "bus":
        return f"{lives_count(rules, n).capitalize()}, {first} to {last}"
    if rules.county:
        return f"{lives_count(rules, n).capitalize()}: {first}, then {last}"
    return f"{lives_count(rules, n).capitalize()} ({first})"


def words(rules: Rules) -> list[tuple[str, str]]:
    """How a lives game ends, in the preset's own words (a race to points says its own)."""
    if rules.scoring == "points":
        return []
    again = "is dealt again" if rules.all_out == "replay" else "leaves all on their last life"
    return [("end", f"{_lives_sentence(rules)}; the last one in wins. A hand putting all out "
                    f"{again}.")]


FAMILY = Family("lives", "lives, their names and the end of a lives game", order=60,
                fields=FIELDS, presets=PRESETS, validate=validate, words=words)
