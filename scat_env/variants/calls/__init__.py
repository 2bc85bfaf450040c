"""Calls before or instead of the play: the hammer, the throw-down and sudden death
(002 Variations, Doug Moyer; 003). Each is an action of its own; ``PASS`` declines the
throw-down and sudden death."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import Bad, Family, Field, Preset

if TYPE_CHECKING:
    from scat_env.rules import Rules

THROW_DOWN = ("none", "first", "any")

FIELDS = (
    Field("hammer", bool, False, "the first player may call a showdown instead of drawing "
          "(action `HAMMER`)", "002 Variations", order=22),
    Field("throw_down", str, "none", "a showdown called before looking at one's cards "
          "(action `THROW_DOWN`; `PASS` looks): the first player only, or each player in turn "
          "before play", "002 Variations / 003", order=23, choices=THROW_DOWN),
    Field("sudden_death", bool, False, "after one card each the dealer may call sudden death "
          "(action `SUDDEN_DEATH`; `PASS` deals on): the single cards are compared, the "
          "lowest lose one", "002 Doug Moyer", order=24),
)

_THROW = ("`throw_down` (002: the first player decides before looking at their cards) and "
          "`throw_down_any` (003: \"a player\" may call it without looking; here each player "
          "in turn, from the dealer's left, before play starts): the call shows every hand at "
          "once, scored like a knock with the caller as knocker (003: \"treated like knocks "
          "in respect to lives\"). A player who has not looked holds cards it has never seen: "
          "its view (and observation) holds none of them.")

PRESETS = (
    Preset("hammer", {"hammer": True},
           note="the first player may call a showdown instead of drawing",
           source="Pagat, Variations",
           doc="`hammer` (002 Variations, \"knocking under the gun\"): instead of drawing, the "
               "very first player of a hand may call a hammer: everyone shows at once and the "
               "hand is scored like a knock with the caller as knocker (a caller who is sole "
               "lowest loses two). A dealt 31 is declared before anyone plays, so it still "
               "pays.", order=21),
    Preset("throw_down", {"throw_down": "first"},
           note="the first player may call a showdown before looking",
           source="Pagat, Variations", doc=_THROW, order=22),
    Preset("throw_down_any", {"throw_down": "any"},
           note="any player may call a showdown before looking",
           source="a short rules summary, Variations", doc=_THROW, order=23),
    Preset("moyer", {"second_knock": True, "sudden_death": True, "knocker_loss": 1,
                     "knocker_tie": "all"},
           note="the second knock and the dealer's sudden death", source="Pagat, Doug Moyer",
           doc="`moyer` (002, Doug Moyer's game as a whole): `moyer_second_knock` plus the "
               "dealer's sudden death.", order=24),
    Preset("sudden_death", {"sudden_death": True},
           note="the dealer may call sudden death on one card each",
           source="Pagat, Doug Moyer",
           doc="`sudden_death` (002, Doug Moyer): after dealing one card to each player the "
               "dealer may call sudden death; the single cards, which nobody has seen, are "
               "compared by their points (ace 11, court cards 10) and the lowest lose one life "
               "each; a hand that would put everyone out is dealt again. Declined, the deal "
               "goes on with the same cards.", order=25),
)


def validate(rules: Rules, bad: Bad) -> None:
    """A throw-down caller must not look at the cards; a quiet 31 needs its holder to."""
    if rules.throw_down != "none" and rules.declare_31 == "choice":
        raise bad("throw_down", "cannot be combined with declare_31 'choice': a 31 holder "
                  "must look at the cards to decide, a throw-down caller must not")


def words(rules: Rules) -> list[tuple[str, str]]:
    """One line per call the rules offer before or instead of the play."""
    out = []
    if rules.sudden_death:
        out.append(("calls", "Sudden death: after one card each, the dealer may have those "
                             "single cards compared; the lowest lose a life (pass deals on)."))
    if rules.throw_down != "none":
        who = "the first player" if rules.throw_down == "first" else "each player in turn"
        out.append(("calls", f"Throw-down: before looking at their cards, {who} may call a "
                             "showdown, scored like a knock (pass to look)."))
    if rules.hammer:
        out.append(("calls", "Hammer: instead of the hand's first draw, the player may call "
                             "a showdown, scored like a knock."))
    return out


def calls(rules: Rules) -> tuple[str, ...]:
    """The calls on offer, in the order of their action ids."""
    out = []
    if rules.hammer:
        out.append("hammer")
    if rules.throw_down != "none":
        out.append("throw_down")
    if rules.sudden_death:
        out.append("sudden_death")
    return tuple(out)


FAMILY = Family("calls", "calls before or instead of the play", order=40, fields=FIELDS,
                presets=PRESETS, validate=validate, words=words, calls=calls,
                menu={"hammer": "call a hammer (showdown before anyone draws)",
                      "throw_down": "throw down (showdown without looking)",
                      "sudden_death": "call sudden death (compare the single cards)"})
