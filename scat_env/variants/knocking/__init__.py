"""The knock: what it promises, who may knock and when, and what a losing knocker pays
(002 Variations, Gin, Doug Moyer, Scat software; 003)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import Bad, Family, Field, Preset, lives_count

if TYPE_CHECKING:
    from scat_env.rules import Rules

KNOCK_MODES = ("lowest", "gin")
KNOCKER_TIES = ("safe", "all", "knocker_only")

FIELDS = (
    Field("knock_mode", str, "lowest", "lowest hand loses, or a knock promises the highest "
          "hand", "002 Gin", order=5, choices=KNOCK_MODES),
    Field("knocker_tie", str, "safe", "who pays when the knocker ties for lowest",
          "002 Variations", order=6, choices=KNOCKER_TIES),
    Field("knocker_loss", int, 2, "lives a losing knocker pays", "002 Variations", order=7,
          choices=(2, 1), message="must be 1 or 2"),
    Field("knocker_loss_on_31", int, 1, "lives the knocker pays when 31 is declared after "
          "the knock", "002 Variations", order=8, choices=(1, 2), message="must be 1 or 2"),
    Field("min_knock", int, 0, "least hand value allowed to knock", "002 Variations, 003",
          order=12, low=0, high=31, message="must be between 0 (no minimum) and 31"),
    Field("knock_needs_flush", bool, False, "knocking needs three cards of one suit",
          "002 Variations", order=13),
    Field("knock_when_stock_exhausted", bool, False, "may a player knock once the stock is "
          "empty", "002, 000 Draw pile exhausted (decision f)", order=14),
    Field("first_turn_knock", bool, True, "may a player knock on their first turn of a hand",
          "002 Scat software", order=18),
    Field("knock_then_draw", bool, False, "the knocker goes on to draw and discard in the "
          "same turn", "002 Scat software", order=19),
    Field("second_knock", bool, False, "after a knock the next player may knock too, ending "
          "the play at once", "002 Doug Moyer", order=20),
)

_MIN_KNOCK = "`min_knock_17`, `min_knock_19`, `min_knock_21`: knocking needs at least that value."
_MIN_SOURCE = "Pagat, Variations; a short rules summary"

PRESETS = (
    Preset("knocker_pays_ties",
           {"knocker_tie": "all", "knocker_loss_on_31": 2, "all_out": "last_life"},
           note="a tied knocker pays two, the others one; a 31 after a knock spares its "
                "holder",
           source="Pagat, Variations",
           doc="`knocker_pays_ties` (002 Variations, first paragraph): a knocker tied for "
               "lowest pays two and the others in the tie one; a 31 declared after a knock "
               "spares its holder while the knocker pays two and everyone else one; when "
               "everyone left would go out together they all stay in on their last life "
               "(`all_out: last_life`).", order=1),
    Preset("knocker_only_ties", {"knocker_tie": "knocker_only"},
           note="a knocker tied for lowest alone pays", source="Pagat, Variations",
           doc="`knocker_only_ties`: in a tie involving the knocker only the knocker pays "
               "(the usual two).", order=2),
    Preset("knocker_loses_one", {"knocker_loss": 1},
           note="a lone lowest knocker pays one, not two", source="Pagat, Variations",
           doc="`knocker_loses_one`: the sole lowest knocker pays one instead of two.",
           order=3),
    Preset("min_knock_17", {"min_knock": 17}, note="knocking needs a hand of 17 or more",
           source=_MIN_SOURCE, doc=_MIN_KNOCK, order=7),
    Preset("min_knock_19", {"min_knock": 19}, note="knocking needs a hand of 19 or more",
           source=_MIN_SOURCE, doc=_MIN_KNOCK, order=8),
    Preset("min_knock_21", {"min_knock": 21}, note="knocking needs a hand of 21 or more",
           source=_MIN_SOURCE, doc=_MIN_KNOCK, order=9),
    Preset("flush_to_knock", {"knock_needs_flush": True},
           note="knocking needs three cards of one suit", source="Pagat, Variations",
           doc="`flush_to_knock`: knocking needs three cards of one suit.", order=10),
    Preset("knock_when_exhausted", {"knock_when_stock_exhausted": True},
           note="a knock stays allowed once the stock is empty", source="a house rule",
           doc="`knock_when_exhausted`: a knock stays allowed once the stock is empty, beside "
               "taking the discard and ending the play.", order=12),
    Preset("no_knock_when_exhausted", {}, note="the standard game under its former name",
           source="Pagat",
           doc="`no_knock_when_exhausted`: the standard game under its former name (no knock "
               "once the stock is empty is now the standard rule); kept so that files naming "
               "it still load.", order=13),
    Preset("moyer_second_knock", {"second_knock": True, "knocker_loss": 1, "knocker_tie": "all"},
           note="the next player may knock too, ending the play", source="Pagat, Doug Moyer",
           doc="`moyer_second_knock` (002, Doug Moyer): after a knock the next player may "
               "knock too, which ends the play at once (the hand result's `reason` is "
               "`second_knock`); the lowest hands simply lose one each, a knocker included "
               "(`knocker_loss: 1`, `knocker_tie: all`); a hand that would put everyone out "
               "is redealt with lives unchanged (`all_out: replay`).", order=18),
    Preset("computer", {"knock_then_draw": True, "first_turn_knock": False},
           note="knock, then draw and discard; no knock on a first turn",
           source="Pagat, Scat software",
           doc="`computer` (002 \"Scat software\"): a knocker goes on to draw and discard in "
               "the same turn; nobody knocks on their first turn of a hand. See decision (o) "
               "for \"points at the end\".", order=19),
    Preset("gin",
           {"knock_mode": "gin", "pennies": 3, "county": False, "lives_name": "letters",
            "knocker_loss": 1, "three_of_a_kind": 30.5},
           note="a knock promises the best hand; G-I-N and out",
           source="Pagat, Gin; a condensed copy of the standard rules",
           doc="`gin` (002, Angie Barry; 000): a knock promises the highest hand. If the "
               "knocker's hand is highest or equal highest after the last round, every other "
               "player loses one; if anyone beats it, the knocker alone loses one. 31 is "
               "declared as usual. Trips count 30.5; three letters G-I-N and you are out "
               "(3 lives).", order=27),
)


def validate(rules: Rules, bad: Bad) -> None:
    """Gin's knock has no lowest hand for a knocker to tie."""
    if rules.knock_mode == "gin" and rules.knocker_tie != "safe":
        raise bad("knocker_tie", "has no meaning with knock_mode='gin'; leave it 'safe'")


def _knock_line(rules: Rules) -> str:
    """The knock: what it does, and what these rules ask of a knocker."""
    what = ("Knock instead of drawing to promise the highest hand" if rules.knock_mode == "gin"
            else "Knock, then draw and discard" if rules.knock_then_draw
            else "Knock instead of drawing")
    text = f"{what}: the others get one last turn, then the showdown."
    need = []
    if rules.min_knock:
        need.append(f"a hand of {rules.min_knock}+")
    if rules.knock_needs_flush:
        need.append("three cards of one suit")
    limits = ["Knocking needs " + " and ".join(need)] if need else []
    if not rules.first_turn_knock:
        limits.append("no knock on your first turn")
    if limits:
        said = "; ".join(limits)
        text += f" {said[0].upper()}{said[1:]}."
    return text


def _showdown_line(rules: Rules) -> str:
    """Who pays at a showdown of a lives game."""
    pays = lives_count(rules, rules.knocker_loss)
    if rules.knock_mode == "gin":
        return (f"Showdown: a beaten knocker pays {pays}, else all the others lose a life; "
                "with no knock the lowest hand loses one.")
    tie = {"safe": f"a knocker lowest alone pays {pays}, tied for lowest is safe",
           "all": f"a knocker lowest, alone or tied, pays {pays}",
           "knocker_only": f"a knocker lowest alone pays {pays}; in a tie with the knocker "
                           "only the knocker pays"}[rules.knocker_tie]
    return f"Showdown: the lowest hand loses a life; {tie}."


def words(rules: Rules) -> list[tuple[str, str]]:
    """The turn, the knock, the second knock, the showdown of a lives game, the empty
    stock."""
    out = [("turn", "Turn: draw from the stock or the pile, then discard (not the card you "
                    "took)."),
           ("knock", _knock_line(rules))]
    if rules.second_knock:
        out.append(("second_knock", "Second knock: the next player may knock too, ending "
                                    "the play at once."))
    if rules.scoring != "points":  # a race's showdown scores points: the points family says it
        out.append(("showdown", _showdown_line(rules)))
    knock = ", knock" if rules.knock_when_stock_exhausted else ""
    out.append(("stock", f"Stock exhausted: take the top discard{knock} or end the play (e)."))
    return out


FAMILY = Family("knocking", "the knock and what it costs", order=30, fields=FIELDS,
                presets=PRESETS, validate=validate, words=words)
