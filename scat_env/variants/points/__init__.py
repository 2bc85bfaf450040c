"""A race to points instead of lives (002 French Canadian, Jeffrey Jacobs): the highest
hand after a knock scores a point, a declared 31 scores one at once, nobody loses a life."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import Bad, Family, Field, Preset

if TYPE_CHECKING:
    from scat_env.rules import Rules

#: How a game is won: by lives (the last player in) or by points (the first to
#: ``points_to_win``; 002 French Canadian).
SCORINGS = ("lives", "points")

FIELDS = (
    Field("scoring", str, "lives", "how a game is won: the last player in, or the first to "
          "`points_to_win` points (nobody loses a life); points games refuse the calls, the "
          "quiet 31, gin and the second knock", "002 French Canadian", order=25,
          choices=SCORINGS, suggest=True),
    Field("points_to_win", int, 31, "the points that win a points game",
          "002 French Canadian", order=26, low=1, high=100),
)

PRESETS = (
    Preset("french_canadian", {"scoring": "points", "points_to_win": 31},
           note="a race to 31 points: the best hand after a knock, or a 31, scores",
           source="Pagat, French Canadian",
           doc="`french_canadian` (002 French Canadian, from Cribbage.ca): points instead of "
               "lives. After a knock and the last round the highest hand scores a point; if "
               "the knocker ties for highest, the others in the tie score and the knocker does "
               "not; players tied for highest of whom none knocked each score. A declared 31 "
               "scores its declarer a point at once (a dealt 31: each holder). The first to 31 "
               "points wins (decision (u)). A hand that hits the turn cap ends the episode like "
               "any other (`max_turns` counts turns per hand).", order=28),
    Preset("french_canadian_jacobs",
           {"scoring": "points", "points_to_win": 31, "knock_needs_flush": True,
            "poker_tiebreak": True},
           note="French Canadian, a flush to knock, ties told apart as in poker",
           source="Pagat, Jeffrey Jacobs",
           doc="`french_canadian_jacobs` (002, Jeffrey Jacobs): `french_canadian`, knocking "
               "only with three cards of one suit, and equal hands told apart by their ranks "
               "as in poker (A-10-9 beats K-Q-J, K-10-9 beats Q-J-9, K-J-7 beats K-9-8; "
               "decision (v)).", order=29),
)


def validate(rules: Rules, bad: Bad) -> None:
    """A race leaves out what only a lives game means: the lives calls, the quiet 31, gin's
    knock, the second knock and golf."""
    if rules.scoring != "points":
        return
    for name in ("hammer", "sudden_death"):
        if getattr(rules, name):
            raise bad(name, "is a lives call; a points game has none")
    if rules.throw_down != "none" or rules.declare_31 == "choice":
        raise bad("scoring", "a points game has no throw-down and no quiet 31: "
                  "leave throw_down 'none' and declare_31 'auto' or 'never'")
    if rules.knock_mode != "lowest" or rules.second_knock or rules.play != "draw":
        raise bad("scoring", "points are scored only in the draw-and-discard game "
                  "with the plain knock (knock_mode 'lowest', no second_knock)")


def words(rules: Rules) -> list[tuple[str, str]]:
    """A race's showdown and its end."""
    if rules.scoring != "points":
        return []
    return [("showdown", "Showdown: the highest hand scores a point (tied with the knocker, "
                         "the others score)."),
            ("end", f"Nobody is ever out: the first to {rules.points_to_win} points wins.")]


FAMILY = Family("points", "a race to points", order=70, fields=FIELDS, presets=PRESETS,
                validate=validate, words=words)
