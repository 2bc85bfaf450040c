"""How strong a seated agent is, in the model card's own figure, where a person meets it.

A person choosing or facing opponents cannot tell a policy that wins 1.3 times its fair
share from one that barely beats chance; the model card measures exactly that for the
policy each preset seats by default (``python scripts/preset_table.py ... --json
policies/presets.json``: one seat against a field of ``expert``, win rate as a multiple of
the fair share ``1/n``). The file ships beside the policies (package data ``scat_policies``),
so both front ends show the card's figure beside the opponents it measured, never a figure
typed in twice.

The figure is only shown where it was measured: the same spec, at a table of exactly the
preset's rules (a rules file that borrows a preset's name plays another game). A table size
that was not measured gets the nearest one that was, and the text names it. A missing file
shows nothing; a damaged one shows nothing and says so in one warning line.
"""

from __future__ import annotations

import json
import logging
import math
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scat_env import Rules

#: The file ``scripts/preset_table.py --json`` writes, among the shipped policies.
STRENGTH_FILE = "presets.json"

#: A cell: where ``x_fair`` was measured (``spec`` at a table size) and what it is.
Cell = tuple[str, int, float]

log = logging.getLogger(__name__)


@cache
def strength_file() -> Path | None:
    """Where the shipped figures are (:data:`STRENGTH_FILE` in the shipped policies'
    folder), or ``None`` when no policies are installed. Looked up once: a server asks at
    every seat of every STATE it sends."""
    from agents.neural.policy_file import shipped_dir

    folder = shipped_dir()
    return folder / STRENGTH_FILE if folder is not None else None


def _cell(preset: str, size: str, entry: Any) -> Cell:
    """One measured cell, checked: a spec, a table size, a positive finite ``x_fair``."""
    if not size.isdigit() or not isinstance(entry, dict):
        raise ValueError(f"cells.{preset}.{size} is not a table size with its figures")
    spec, x_fair = entry.get("spec"), entry.get("x_fair")
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"cells.{preset}.{size}.spec is not a spec")
    if (isinstance(x_fair, bool) or not isinstance(x_fair, (int, float))
            or not math.isfinite(x_fair) or x_fair < 0):
        raise ValueError(f"cells.{preset}.{size}.x_fair is not a multiple of the fair share")
    return spec, int(size), float(x_fair)


def parse(data: Any) -> dict[str, list[Cell]]:
    """The cells of a strength file by preset, or :class:`ValueError` naming the first
    field that is not as ``scripts/preset_table.py`` writes it."""
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, dict):
        raise ValueError("no 'cells' object")
    table: dict[str, list[Cell]] = {}
    for preset, sizes in cells.items():
        if not isinstance(sizes, dict):
            raise ValueError(f"cells.{preset} is not an object of table sizes")
        table[preset] = [_cell(preset, size, entry) for size, entry in sizes.items()]
    return table


@lru_cache(maxsize=4)
def load(path: Path | None) -> dict[str, list[Cell]]:
    """The figures of ``path``, read once. Absent: none. Damaged: none, and one warning
    line naming the file and what is wrong (a game is never stopped for a figure)."""
    if path is None or not path.is_file():
        return {}
    try:
        return parse(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        log.warning("%s: not read, no strength shown (%s)", path, exc)
        return {}


def _preset(rules: Rules) -> str | None:
    """The preset ``rules`` are exactly, by their name, else ``None`` (a rules file that
    starts from a preset and changes it plays a game the card never measured)."""
    return rules.name if _is_preset(rules.name, rules) else None


@lru_cache(maxsize=64)
def _is_preset(name: str, rules: Rules) -> bool:
    """Cached, as building a preset to compare costs more than the rest of a lookup; keyed
    by the name too, since two rules that differ only by name compare equal."""
    from scat_env import Rules
    from scat_env.rules import PRESETS

    return name in PRESETS and rules == Rules.preset(name)


def measured(spec: str, players: int, rules: Rules,
             path: Path | None = None) -> tuple[int, float] | None:
    """``(table size, x_fair)`` of ``spec`` at a table of ``rules``: the cell at ``players``
    seats, else the nearest size measured (the smaller on a tie), else ``None``."""
    preset = _preset(rules)
    if preset is None:
        return None
    table = load(path if path is not None else strength_file())
    found = [c for c in table.get(preset, []) if c[0] == spec]
    if not found:
        return None
    _, n, x_fair = _nearest(found, players)
    return n, x_fair


def card_seat(players: int, rules: Rules, path: Path | None = None) -> str | None:
    """Who the model card seats at a table of ``rules``: the spec of its cell at
    ``players`` seats, else at the nearest size measured (the smaller on a tie); ``None``
    where the card measured no table of these rules. ``scripts/preset_table.py
    --candidates`` wrote that cell's spec as the best measured player there."""
    preset = _preset(rules)
    if preset is None:
        return None
    cells = load(path if path is not None else strength_file()).get(preset, [])
    return _nearest(cells, players)[0] if cells else None


def _nearest(cells: list[Cell], players: int) -> Cell:
    """The cell measured at ``players`` seats, else at the nearest size (the smaller on a
    tie): what both the figure shown and the seat chosen read."""
    return min(cells, key=lambda c: (abs(c[1] - players), c[1]))


def strength_text(spec: str, players: int, rules: Rules, path: Path | None = None) -> str | None:
    """The model card's figure for ``spec`` at this table, in words: "wins 1.31x its fair
    share against expert at 3 players (model card)"; ``None`` where it was not measured.
    ``path`` is the figures file (default: the shipped one, :func:`strength_file`)."""
    cell = measured(spec, players, rules, path)
    if cell is None:
        return None
    n, x_fair = cell
    return f"wins {x_fair:.2f}x its fair share against expert at {n} players (model card)"


__all__ = ["STRENGTH_FILE", "card_seat", "load", "measured", "parse", "strength_file",
           "strength_text"]
