"""Levels a person picks by name: easy, medium, hard, strongest.

A person choosing an opponent knows "easy" and "hard", not ``threshold:23`` or
``compact:scat_batch_set``. Each level is one agent, and each was measured against the
others (``python scripts/level_table.py``, written to ``levels.json`` beside the shipped
policies): both front ends show those figures where the level is picked, never a figure
typed in twice.

- ``easy``: knocks early, at 21, on any fair hand; a steady beginner (``greedy``, who keeps
  its best cards and knocks at 25, playing as the person) beats it more than a third of the
  time at three players. The level of a person's first game.
- ``medium``: ``expert``, the rule-based player that counts cards.
- ``hard``: the table's trained policy (:func:`scat_session.seating.default_opponent`), the
  default opponent of ``scat play`` and ``scat serve`` once a person has played a game.
- ``strongest``: ``search``, the table's trained policy that also plays out its decisions
  on sampled deals (agents/search.py), where the search plays the table: the standard
  game's set in the draw-and-discard games without calls, the golf policy in golf
  (:func:`agents.search.search_policy`; its strength: the model card's "The search
  player"); elsewhere it is ``hard``.

The figures were measured in the standard game at three players; a table of other rules,
or where a level seats another agent (another preset's policy, or ``expert`` where no
policy plays), names the agent instead of showing them (:func:`level_line` with the seated
spec and the rules).
"""

from __future__ import annotations

import json
import logging
import math
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from scat_env import Rules

log = logging.getLogger(__name__)


class Level(NamedTuple):
    """A level: its name, what it is in a few words, and the spec that plays it (``None``:
    the table's trained policy, which depends on the table)."""

    name: str
    blurb: str
    spec: str | None


LEVELS = (
    Level("easy", "knocks early, at 21: beatable", "threshold:21"),
    Level("medium", "the rule-based expert: counts cards", "expert"),
    Level("hard", "the trained AI", None),
    Level("strongest", "the trained AI, searching its close calls", "search"),
)
LEVEL_NAMES = tuple(level.name for level in LEVELS)
#: A person's first game: one a beginner wins sometimes.
FIRST_GAME_LEVEL = "easy"
#: The level every later game gets when nobody picks one: the trained policy.
DEFAULT_LEVEL = "hard"
#: The file ``scripts/level_table.py`` writes, among the shipped policies.
LEVELS_FILE = "levels.json"


def level(name: str) -> Level:
    """The level called ``name``; ``ValueError`` naming the levels otherwise."""
    for lv in LEVELS:
        if lv.name == name:
            return lv
    raise ValueError(f"unknown level {name[:30]!r}; the levels are {', '.join(LEVEL_NAMES)}")


def level_spec(name: str, players: int, rules: Rules,
               trained: str | None = None) -> str:
    """The agent spec that plays level ``name`` at a table of ``players`` under ``rules``:
    ``hard`` is the table's trained policy (``trained``, default
    :func:`scat_session.seating.default_opponent`: a server passes its own choice);
    ``strongest`` is ``search`` where the search plays (the table's policy is the one the
    search plays out: the standard game's set in the draw-and-discard games without calls,
    the golf policy in golf), else it is ``hard``."""
    from scat_session.seating import default_opponent

    lv = level(name)
    if trained is None:
        trained = default_opponent(players, rules)
    if lv.spec is None:
        return trained
    if lv.name == "strongest" and not _search_plays(players, rules, trained):
        return trained
    return lv.spec


def _search_plays(players: int, rules: Rules, trained: str) -> bool:
    """Whether ``search`` plays this table: it searches the shipped set (the golf policy in
    golf), so the table's trained policy must be that one, and its rules ones the search
    plays out."""
    from agents.registry import make_agent
    from agents.search import search_policy

    if trained != f"compact:{search_policy(rules)}":
        return False
    try:
        make_agent("search:1").check_table(players, rules)
    except ValueError:
        return False
    from agents.search import searched_rules

    return searched_rules(rules)


@cache
def _figures_path() -> Path | None:
    from agents.neural.policy_file import shipped_dir

    folder = shipped_dir()
    return folder / LEVELS_FILE if folder is not None else None


@cache
def level_figures(path: Path | None = None) -> dict[str, Any]:
    """The measured figures (``levels.json``): ``{"players": 3, "cells": {row: {column:
    {"win_rate", "ci95", "games"}}}, "command": ...}``, where a row level sits against
    two of a column level (``"greedy"`` as a column: a beginner against two of the row
    level, read the other way round). Empty when the file is missing or damaged (one
    warning line: a screen without figures is better than no game)."""
    where = path if path is not None else _figures_path()
    if where is None or not where.is_file():
        return {}
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
        cells = data["cells"]
        for row, cols in cells.items():
            for col, cell in cols.items():
                rate = cell["win_rate"]
                if not (isinstance(rate, (int, float)) and math.isfinite(rate)
                        and 0 <= rate <= 1):
                    raise ValueError(f"cells.{row}.{col}.win_rate is not a rate")
        return data
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("%s: not the level figures (%s); levels are shown without them",
                    where, str(exc)[:100])
        return {}


#: The level each level's line is compared with: one yardstick for all, so the lines read
#: side by side (``medium`` itself against ``easy``).
YARDSTICK = {"easy": "medium", "medium": "easy", "hard": "medium", "strongest": "medium"}


def level_line(name: str, figures: dict[str, Any] | None = None,
               spec: str | None = None, rules: Rules | None = None) -> str:
    """One line a person reads beside a level, e.g. "hard: the trained AI; wins 44% against
    two medium; a beginner beats it 21% (fair share 33%)". ``spec``: the agent the level
    seats at this table; where it is not the one measured (another preset, where the
    trained policy is another or the search does not play), or ``rules`` are not the
    standard game's, where the figures were measured, the line names that agent and gives
    no figure. Without figures, the blurb alone."""
    from scat_env import Rules

    figures = level_figures() if figures is None else figures
    lv = level(name)
    measured = figures.get("levels", {}).get(name)
    elsewhere = rules is not None and rules != Rules()
    if spec is not None and (elsewhere or spec != (measured or lv.spec or spec)):
        from .seating import agent_label

        return f"{lv.name}: here {agent_label(spec)} ({spec})"
    parts = [f"{lv.name}: {lv.blurb}"]
    cells = figures.get("cells", {})
    n = figures.get("players", 3)
    other = YARDSTICK[name]
    cell = cells.get(name, {}).get(other)
    if cell is not None:
        parts.append(f"wins {round(100 * cell['win_rate'])}% against two {other}")
    beginner = cells.get("greedy", {}).get(name)
    if beginner is not None:
        parts.append(f"a beginner beats it {round(100 * beginner['win_rate'])}% "
                     f"(fair share {round(100 / n)}%)")
    return "; ".join(parts)


def levels_payload(figures: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every level with its line (as measured: the standard game at three players) and its
    measured cells, for the browser's picker."""
    figures = level_figures() if figures is None else figures
    cells = figures.get("cells", {})
    return [{"name": lv.name, "blurb": lv.blurb, "line": level_line(lv.name, figures),
             "against": cells.get(lv.name, {}),
             "beginner": cells.get("greedy", {}).get(lv.name)} for lv in LEVELS]


__all__ = ["DEFAULT_LEVEL", "FIRST_GAME_LEVEL", "LEVELS", "LEVEL_NAMES", "Level",
           "level", "level_figures", "level_line", "level_spec", "levels_payload"]
