"""How long a game of each rules preset usually lasts, in words, where a person picks one.

The presets differ by an order of magnitude (a French Canadian race to 31 points runs to
hundreds of decisions, the standard game to about a hundred), so ``scat rules``, ``scat
play`` and the browser's new-game form say it before the game starts. The figures are
measured, not guessed: ``python scripts/game_lengths.py`` plays each preset and writes
:data:`LENGTHS_FILE`, which ships with the package. A rules file of one's own has no entry
and gets no line.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from scat_env import Rules

#: The measured lengths (written by ``scripts/game_lengths.py``).
LENGTHS_FILE = Path(__file__).with_name("game_lengths.json")


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        return json.loads(LENGTHS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a broken install shows no lengths, never a traceback
        return {}


def measured_players() -> int:
    """The table size the lengths were measured at."""
    return int(_table().get("players", 3))


def game_length(preset: str) -> dict[str, Any] | None:
    """The measured length of a game of ``preset`` (medians and 10th-90th percentiles of
    minutes, hands, decisions of the person and of everyone), or ``None`` if unmeasured."""
    entry = _table().get("presets", {}).get(preset)
    return entry if isinstance(entry, dict) else None


def _whole(x: float) -> int:
    return max(1, round(x))


def minutes_text(preset: str) -> str:
    """The usual minutes of a game, short: "6 min (3-11)"; "" for an unmeasured preset."""
    entry = game_length(preset)
    if entry is None:
        return ""
    m = entry["minutes"]
    low, mid, high = _whole(m["low"]), _whole(m["median"]), _whole(m["high"])
    return f"{mid} min ({low}-{high})"


def length_text(preset: str) -> str:
    """One sentence on a game's usual length: "A game usually takes 6 min (3-11) and 40 of
    your moves, at 3 players." ("" for an unmeasured preset)."""
    entry = game_length(preset)
    if entry is None:
        return ""
    moves = _whole(entry["person_decisions"]["median"])
    hands = _whole(entry["hands"]["median"])
    return (f"A game usually takes {minutes_text(preset)}: {hands} hands, {moves} of your "
            f"moves, at {measured_players()} players.")


def preset_length_text(rules: Rules) -> str:
    """:func:`length_text` for rules that are a preset exactly (a rules file that starts
    from a preset and changes it, or only borrows its name, plays another game: "")."""
    from scat_env.rules import PRESETS

    if rules.name not in PRESETS or rules != Rules.preset(rules.name):
        return ""
    return length_text(rules.name)


__all__ = ["LENGTHS_FILE", "game_length", "length_text", "measured_players", "minutes_text", "preset_length_text"]
