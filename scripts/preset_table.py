"""The model card's table of every preset: the policy a table of it seats by default, one
seat against a field of ``expert``, at each table size.

Each cell is what ``scat play --rules P`` and ``scat serve`` seat
(:func:`scat_session.seating.default_opponent`), measured as every figure of the model card
is: duplicate deals on the batched engine (``training.batch_eval``: each deal played once
with the policy in each seat), win rate as a multiple of the fair share ``1/n``, and the 95%
interval with each deal a cluster. A cell whose lower bound clears 1.25x is in bold.

    python scripts/preset_table.py --players 3,6 --games 10000 --seed 20261128 \
        --workers 2 --json policies/presets.json --card policies/README.md

``--workers N`` measures N cells at once, each in its own process on its share of the
cores: the figures are the same for any N (every cell's deals come from the seed alone).

``--card`` rewrites the table between the ``<!-- preset-table -->`` markers of the model
card (``--marker`` names others), so the card's figures are this command's output, never
typed in. ``--spec expert --opponent greedy --marker yardstick`` writes the yardstick's own
check: ``expert`` in one seat against a field of ``greedy``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from scat_env import Rules
from scat_env.rules import PRESETS
from scat_env.variants import FAMILY_OF_PRESET
from scat_session.seating import default_opponent
from training.batch_eval import measure_cells

BAR = 1.25
MARKER = "preset-table"


def markdown(table: dict[str, dict[str, dict[str, Any]]], sizes: list[int],
             command: str, opponent: str = "expert") -> str:
    """The card's table: a row a preset, a column a size; bold where the lower bound clears
    the bar (1.25x against ``expert``; against ``greedy``, the yardstick's check: 1x)."""
    bar = BAR if opponent == "expert" else 1.0
    head = f"| preset | family | seated (against {opponent}) | " + " | ".join(
        f"{n} players: x fair [95% CI]" for n in sizes) + " |"
    lines = [head, "|" + " --- |" * (3 + len(sizes))]
    for preset, row in table.items():
        specs = sorted({row[str(n)]["spec"] for n in sizes})
        unlearned = any(not c["learned"] and c["spec"].startswith("compact:")
                        for c in row.values())
        who = ", ".join(f"`{s}`" for s in specs) + (" (not trained on it)" if unlearned else "")
        cells = []
        for n in sizes:
            c = row[str(n)]
            lo, hi = c["x_fair_ci95"]
            text = f"{c['x_fair']:.2f}x [{lo:.2f}, {hi:.2f}]"
            cells.append(f"**{text}**" if lo > bar else text)
        lines.append(f"| `{preset}` | {FAMILY_OF_PRESET.get(preset, 'standard')} | {who} | "
                     + " | ".join(cells) + " |")
    passed = sum(row[str(n)]["x_fair_ci95"][0] > bar for row in table.values() for n in sizes)
    total = len(table) * len(sizes)
    lines += ["", f"{passed} of {total} cells clear {bar}x (bold). `{command}`"]
    return "\n".join(lines)


def write_card(path: Path, text: str, marker: str = MARKER) -> None:
    """Replace what lies between the card's two ``<!-- marker -->`` lines with ``text``."""
    mark = f"<!-- {marker} -->"
    card = path.read_text()
    pattern = re.compile(re.escape(mark) + r".*?" + re.escape(mark), re.S)
    if len(pattern.findall(card)) != 1:
        raise ValueError(f"{path}: wants one pair of {mark} markers")
    path.write_text(pattern.sub(lambda _: f"{mark}\n{text}\n{mark}", card))


def measuring_command(args: argparse.Namespace) -> str:
    """The command that measures these figures, without the options that only say where
    they go or how many processes share the work (the figures do not depend on them)."""
    parts = ["python scripts/preset_table.py", "--players", ",".join(map(str, args.players)),
             "--games", str(args.games), "--seed", str(args.seed)]
    for flag, value in (("--presets", args.presets), ("--spec", args.spec)):
        if value:
            parts += [flag, value]
    if args.opponent != "expert":
        parts += ["--opponent", args.opponent]
    return " ".join(parts)


def _from_json(path: Path, card: str | None, marker: str) -> int:
    """The table of a figures file written by ``--json``, printed and written to ``card``."""
    try:
        data = json.loads(path.read_text())
        text = markdown(data["cells"], data["players"], data["command"], data["opponent"])
        if card:
            write_card(Path(card), text, marker)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"preset_table: {path}: {exc!r}"[:300], file=sys.stderr)
        return 2
    print(text)
    return 0


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or any(not 2 <= n <= 10 for n in sizes):
        raise argparse.ArgumentTypeError(f"--players wants sizes 2..10 like 3,6, got {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/preset_table.py",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=_sizes, default=[3, 6])
    ap.add_argument("--games", type=int, default=2000, help="games a cell, at least")
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--presets", help="comma-separated presets (default: every one)")
    ap.add_argument("--spec", help="seat this player instead of each table's default")
    ap.add_argument("--opponent", choices=("expert", "greedy"), default="expert",
                    help="the field every other seat holds")
    ap.add_argument("--workers", type=int, default=1, help="cells measured at once")
    ap.add_argument("--marker", default=MARKER, help="the card's markers to write between")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--card", help="rewrite the table between this file's markers")
    ap.add_argument("--from-json", help="measure nothing: the table of this --json file")
    args = ap.parse_args(argv)
    if args.from_json:
        return _from_json(Path(args.from_json), args.card, args.marker)
    presets = args.presets.split(",") if args.presets else list(PRESETS)
    unknown = [p for p in presets if p not in PRESETS]
    if unknown or args.games < 1 or args.workers < 1:
        what = (f"unknown preset {unknown[0]!r}" if unknown
                else "--games and --workers must be at least 1")
        print(f"preset_table: {what}", file=sys.stderr)
        return 2
    jobs = [(args.spec or default_opponent(n, Rules.preset(p)), p, n, args.games, args.seed,
             args.opponent) for p in presets for n in args.players]
    try:
        cells = measure_cells(jobs, args.workers)
    except ValueError as exc:
        print(f"preset_table: {exc}", file=sys.stderr)
        return 2
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for (spec, preset, n, *_), c in zip(jobs, cells, strict=True):
        table.setdefault(preset, {})[str(n)] = c
        lo, hi = c["x_fair_ci95"]
        print(f"{preset:26s} {n:2d}p {spec:28s} {c['x_fair']:.2f}x [{lo:.2f}, {hi:.2f}] "
              f"({c['games']} games, {c['seconds']:.0f} s)")
    command = measuring_command(args)
    text = markdown(table, args.players, command, args.opponent)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "command": command, "seed": args.seed, "opponent": args.opponent,
            "players": args.players, "cells": table}, indent=1) + "\n")
    if args.card:
        write_card(Path(args.card), text, args.marker)
    return 0


if __name__ == "__main__":
    sys.exit(main())
