"""The levels' figures: each level against the others, and a beginner against each level.

A level is an agent (``scat_session/levels.py``); what a person picking one needs to know
is how it does against the others and whether they can beat it. Each cell seats one agent
against two of another at three players, on duplicate deals (``scat tournament --field
ROW,COL,COL --seating rotations``: every deal played with the row's agent in each seat),
win rate with its 95% interval clustered by deal. The row ``greedy`` is a steady beginner
(keeps its best cards, knocks at 25) in the person's seat.

    python scripts/level_table.py --games 900 --seed 20261128 \
        --json policies/levels.json --card policies/README.md

writes the figures both front ends show beside each level (``levels.json``, shipped beside
the policies) and rewrites the table between the ``<!-- level-table -->`` markers of the
model card, so neither is typed in. ``--out`` keeps each cell's tournament folder
(default ``runs/levels``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from scat_env import Rules
from scat_session.levels import LEVEL_NAMES, level_spec

PLAYERS = 3
#: (row, column): the row's agent in one seat, two of the column's in the others.
CELLS = (("easy", "medium"), ("hard", "medium"), ("strongest", "medium"),
         ("strongest", "hard"), ("hard", "easy"), ("greedy", "easy"), ("greedy", "medium"),
         ("greedy", "hard"), ("greedy", "strongest"), ("medium", "easy"))
MARKER = "level-table"


def spec_of(name: str) -> str:
    return "greedy" if name == "greedy" else level_spec(name, PLAYERS, Rules())


def measure(row: str, col: str, games: int, seed: int, out: Path) -> dict[str, Any]:
    """One cell: the row's agent against two of the column's, on duplicate deals."""
    from training.tournament import lineup_win_rate

    a, b = spec_of(row), spec_of(col)
    rate, played = lineup_win_rate((a, b, b), games, seed, out / f"{row}_vs_{col}")
    return {"row": a, "column": b, "win_rate": rate["value"], "ci95": rate["ci95"],
            "games": played}


def markdown(cells: dict[str, dict[str, dict[str, Any]]], command: str) -> str:
    rows = ["| level | agent | against two | win rate [95% CI] | games |",
            "| --- | --- | --- | --- | --- |"]
    order = [*LEVEL_NAMES, "greedy"]
    for row in sorted(cells, key=lambda r: order.index(r) if r in order else len(order)):
        for col, c in sorted(cells[row].items(), key=lambda kv: order.index(kv[0])):
            lo, hi = c["ci95"]
            who = "a beginner (`greedy`)" if row == "greedy" else f"**{row}**"
            rows.append(f"| {who} | `{c['row']}` | {col} (`{c['column']}`) | "
                        f"{100 * c['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] | "
                        f"{c['games']:,} |")
    return "\n".join(rows) + f"\n\nFair share: 33.3%. `{command}`"


def write_card(card: Path, table: str) -> None:
    """The table between the card's ``<!-- MARKER -->`` lines; a card without them is
    refused in one line."""
    from training.report import write_between_markers

    try:
        write_between_markers(card, MARKER, table)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=900, help="games a cell (default 900)")
    p.add_argument("--seed", type=int, default=20261128)
    p.add_argument("--out", type=Path, default=Path("runs/levels"))
    p.add_argument("--json", type=Path, default=None, help="write the figures here")
    p.add_argument("--card", type=Path, default=None, help="rewrite the model card's table")
    p.add_argument("--only", default=None,
                   help="measure only cells ROW:COL[,ROW:COL] (the others kept from --json)")
    p.add_argument("--from-json", type=Path, default=None,
                   help="measure nothing: write the card's table from this figures file")
    args = p.parse_args(argv)
    if args.from_json is not None:
        data = json.loads(args.from_json.read_text())
        table = markdown(data["cells"], data["command"])
        if args.card is not None:
            write_card(args.card, table)
        print(table)
        return 0
    if args.games < PLAYERS:
        p.error(f"--games must be at least {PLAYERS}")
    chosen = CELLS
    if args.only:
        chosen = tuple(tuple(c.split(":", 1)) for c in args.only.split(","))  # type: ignore[misc]
        for row, col in chosen:
            if row not in (*LEVEL_NAMES, "greedy") or col not in LEVEL_NAMES:
                p.error(f"--only: {row}:{col} is not a row level (or greedy) and a column "
                        "level")
    command = f"python scripts/level_table.py --games {args.games} --seed {args.seed}"
    previous: dict[str, Any] = {}
    if args.json is not None and args.json.is_file() and args.only:
        previous = json.loads(args.json.read_text()).get("cells", {})
    cells: dict[str, dict[str, dict[str, Any]]] = {r: dict(c) for r, c in previous.items()}
    for row, col in chosen:
        cell = measure(row, col, args.games, args.seed, args.out)
        cells.setdefault(row, {})[col] = cell
        print(f"{row} ({cell['row']}) against two {col} ({cell['column']}): "
              f"{100 * cell['win_rate']:.1f}% [{100 * cell['ci95'][0]:.1f}, "
              f"{100 * cell['ci95'][1]:.1f}] over {cell['games']} games", flush=True)
    data = {"players": PLAYERS, "seed": args.seed, "games": args.games, "command": command,
            "levels": {name: spec_of(name) for name in LEVEL_NAMES}, "cells": cells}
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.card is not None:
        write_card(args.card, markdown(cells, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
