"""The ``?`` help of ``scat play``, written from the fields of the :class:`~scat_env.Rules`
being played.

Why generated and not one text per preset: a fixed text said "make 31 and it is declared at
once" under presets where 31 is never declared (``italian``) or declared by choice
(``undeclared_31``), and never named the hammer, sudden death or the second knock. Here
each sentence comes from the field that makes it true, written by the family that declares
the field (:func:`scat_env.variants.describe`, which the page's rule summary shows too), so
a preset gets a sentence for every call it allows and none for a rule it lacks, and a new
preset is described the day it is added. The lines are plain text (the screen adds the
panel); each is short enough that the whole help, keys included, fits a terminal of 80
columns and 24 rows. The keys stay here: they are the terminal's.
"""

from __future__ import annotations

from scat_env import Rules
from scat_env.variants import describe

#: The keys in one line, for a help that would not fit the screen with all of them (a rules
#: file with many options on): the menu shows each move's key anyway.
SHORT_KEYS = "Keys: a menu number or key   h hint   ? help   Enter the table   q quit"


def key_lines(rules: Rules) -> list[str]:
    """The keys this game answers to: the knock and the end of play only where a turn has
    them, golf's slot moves in golf, the calls by the names the menu gives them."""
    if rules.play == "golf":
        lines = ["Keys: 1 2 3... a move of the menu   s stock   d the discard",
                 "      place2 put the card in slot 2   turn2 discard it, turn slot 2 up"]
    else:
        lines = ["Keys: 1 2 3... a move of the menu   s stock   d the discard   k knock",
                 "      7c 7♣ 10h discard that card   e end the play (stock exhausted)"]
    lines.append("      h hint   ? this help   Enter the table again   q quit (saved)")
    # A hammer is one more choice of the draw menu; the other calls have a phase of their
    # own, where "pass" declines them.
    passes = ["pass"] if set(rules.calls) - {"hammer"} else []
    if rules.calls:
        lines.append("      the calls, by name: " + ", ".join([*rules.calls, *passes]))
    return lines


def rules_lines(rules: Rules) -> list[str]:
    """The rules being played, one short paragraph per line, each from the fields that
    make it true: the families' own words (:func:`scat_env.variants.describe`)."""
    return describe(rules)


__all__ = ["SHORT_KEYS", "key_lines", "rules_lines"]
