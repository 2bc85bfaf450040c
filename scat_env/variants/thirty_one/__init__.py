"""Declaring 31: at once (standard), never (Italian), or by choice, a 31 kept quiet
counting 30 (002, 000)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declare import NUMBERS, Family, Field, Preset

if TYPE_CHECKING:
    from scat_env.rules import Rules

DECLARE_31 = ("auto", "never", "choice")

FIELDS = (
    Field("declare_31", str, "auto", "a 31 is declared at once and ends the hand; never "
          "declared (just a high hand; its holder knocks as usual); or declared by choice "
          "(actions `DECLARE` / `PASS`), a 31 kept quiet counting 30", "002, 000 / 002 Italian",
          order=17, choices=DECLARE_31),
)

PRESETS = (
    Preset("undeclared_31", {"declare_31": "choice"},
           note="declaring 31 is a choice; a quiet 31 counts 30",
           source="Pagat; a condensed copy of the standard rules",
           doc="`undeclared_31` (002, 000): a player who makes 31 (or is dealt it) chooses to "
               "declare it or keep quiet. A 31 kept quiet cannot be claimed later: while the "
               "holder keeps those three cards they count 30 (a new 31 made later can be "
               "declared). Dealt 31s are decided in turn from the dealer's left; if any "
               "holder declares, every player without a declared 31 loses one.", order=26),
)


def words(rules: Rules) -> list[tuple[str, str]]:
    """Declaring 31 (at once, by choice, or never), and what a declared 31 costs."""
    if rules.declare_31 == "never":
        return [("thirty_one", "A 31 is never declared: it is just a high hand; knock on it.")]
    gain = ("a point to its holder" if rules.scoring == "points"
            else "everyone else loses a life")
    if rules.declare_31 == "choice":
        text = f"A 31, made or dealt: declare it ({gain}) or pass (it then counts 30)."
    else:
        text = f"A 31, made or dealt, is declared at once: {gain}."
    if rules.scoring == "lives" and rules.knocker_loss_on_31 != 1:
        text = text[:-1] + f", after a knock the knocker {NUMBERS[rules.knocker_loss_on_31]}."
    return [("thirty_one", text)]


def calls(rules: Rules) -> tuple[str, ...]:
    """Declaring is a call of its own only where it is a choice."""
    return ("declare",) if rules.declare_31 == "choice" else ()


FAMILY = Family("thirty_one", "declaring 31", order=50, fields=FIELDS, presets=PRESETS,
                words=words, calls=calls,
                menu={"declare": "declare 31", "pass": "pass (decline the call)"})
