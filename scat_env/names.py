"""Names that reach a screen: one rule for every name a file or a request supplies.

A rules file's ``name``, a player's name and a saved game's date are printed to a terminal
and to a page. A control character in one (``\\x1b[2J`` clears the terminal, a carriage
return overwrites a line) would act on the reader's screen instead of naming anything,
square brackets read as the terminal's markup (``[bold]`` restyles the table), and a long
name breaks the table's columns. So a name is checked where it enters -- a rules file as
it loads, a saved game as it is read back, a request as it arrives -- by
:func:`check_shown`, and refused in one line. The same function checks it everywhere, so
whatever loads also resumes: a game saved with a name is read back with the same rule.
"""

from __future__ import annotations

#: The longest rules name (``Rules.name``) shown in a title line.
MAX_RULES_NAME = 40


def check_shown(value: object, what: str, limit: int, *, blank_ok: bool = False) -> str:
    """``value`` if it may be printed as it is, else one ``ValueError`` line naming
    ``what``: a string (non-blank unless ``blank_ok``) of at most ``limit`` printable
    characters, without square brackets."""
    if not isinstance(value, str) or not (blank_ok or value.strip()):
        raise ValueError(f"{what} must be a non-empty string, got {str(value)[:30]!r}")
    if not value.isprintable():
        raise ValueError(f"{what} {value[:30]!r} holds control characters")
    if "[" in value or "]" in value:
        raise ValueError(f"{what} {value[:30]!r} holds a square bracket (the screen's markup)")
    if len(value) > limit:
        raise ValueError(f"{what} {value[:30]!r}... is longer than {limit} characters")
    return value


def is_shown(value: object, limit: int) -> bool:
    """Whether :func:`check_shown` accepts ``value`` (for a name offered, not demanded)."""
    try:
        check_shown(value, "name", limit)
    except ValueError:
        return False
    return True
