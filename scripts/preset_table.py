"""The model card's table of every preset, and who sits at each table by default: the
shipped policies, each measured in one seat against a field of ``expert``.

``--candidates A,B`` measures each candidate that plays the table (a family's member, a
policy trained on some presets, only on those: :func:`family_member`), and seats the one
with the highest figure, or ``expert`` where none beats its fair share (``expert`` against
itself is 1x by construction). The figures file this writes (``--json
policies/presets.json``, shipped beside the policies) is what
:func:`scat_session.seating.default_opponent` seats by and what the front ends show beside
each seat: the default opponent is chosen by measurement, and the choice is regenerated
with the figures. Every figure is measured as the model card's others are: duplicate deals
on the batched engine (``training.batch_eval``: each deal played once with the player in
each seat), win rate as a multiple of the fair share ``1/n``, and the 95% interval with
each deal a cluster. A cell whose lower bound clears 1.25x is in bold.

    python scripts/preset_table.py --players 3,6 --games 2000 --seed 20261128 \
        --candidates compact:scat_batch_set,compact:scat_rules,compact:scat_golf,compact:scat_gin,compact:scat_calls,compact:scat_points,compact:scat_lives_set,compact:scat_calls_b,compact:scat_calls_c,compact:scat_gin_italian,compact:scat_calls_avg,compact:scat_calls_set,compact:scat_calls_play \
        --confirm-games 10000 --confirm-more 40000,160000 --workers 2 \
        --json policies/presets.json --card policies/README.md

Without ``--candidates``, each table's current default opponent is measured; ``--spec``
measures one player everywhere.

``--confirm-games N`` measures each seated player again on N games of fresh deals (from
``--seed`` + 1), and the table shows that figure: the seat is the best of several
candidates' figures on the same deals, and the best of several noisy figures is biased
upward (the winner's curse); a second measurement on deals the choice never saw is not.
The candidates' screening figures stay in the figures file, and in the last column.

``--confirm-more M[,L]`` is the second stage of that measurement, and the third: a seated
figure whose 95% interval still holds the bar (1.25x against ``expert``) after
``--confirm-games`` is measured once more on M games from the same seed, the confirmation's
deals the first among them (each deal comes from its seed and number alone); one whose
interval still holds it then is measured on L games. A cell clearly above or below the bar
keeps its figure; one the stage before could not decide gets an interval half as wide for
four times the games, where the time goes where it decides something. The figures each stage
replaced stay in the file under ``first_confirm`` and ``second_confirm``.

Every stage is one more look at the same deals, and a cell is bold at whichever look clears
the bar: a cell whose true figure is exactly 1.25x is bold more often than the one time in
forty a single 95% interval allows. The card's table says how often for the looks it took
(:func:`false_bold_rate`, the looks as one random walk), for a plan fixed in advance: every
``--update`` that measures a retrained candidate on the confirmation's deals again is one
look more.

``--update`` measures only ``--presets`` and keeps every other cell of the ``--json`` file:
the same file the whole command writes, when what changed since (a family's set trained
further, or a new candidate that plays only those presets) plays only those presets. It
refuses a file written by another command (other players, deals, field or candidates, bar
candidates added at the end), and a kept cell whose candidates that play it are no longer
the ones measured there: a candidate added that plays a kept cell must measure it too.

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
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import make_agent
from scat_env import Rules
from scat_env.rules import PRESETS
from scat_env.variants import FAMILY_OF_PRESET
from scat_session.seating import default_opponent
from training.batch_eval import measure_cells
from training.report import write_between_markers

BAR = 1.25
MARKER = "preset-table"


def _short(spec: str) -> str:
    return spec.removeprefix("compact:")


def bar_of(opponent: str) -> float:
    """The bar a cell clears in bold: 1.25x against ``expert``; against ``greedy`` (the
    yardstick's own check) its fair share."""
    return BAR if opponent == "expert" else 1.0


def markdown(table: dict[str, dict[str, dict[str, Any]]], sizes: list[int],
             command: str, opponent: str = "expert") -> str:
    """The card's table: a row a preset, a column a size, each cell the seated player and
    its figure; bold where the lower bound clears the bar (1.25x against ``expert``;
    against ``greedy``, the yardstick's check: 1x). The last column: the other candidates'
    figures, where several were measured."""
    bar = bar_of(opponent)
    head = ("| preset | family | " + " | ".join(f"{n} players: seated, x fair [95% CI]"
                                                 for n in sizes) + " | other candidates |")
    lines = [head, "|" + " --- |" * (3 + len(sizes))]
    for preset, row in table.items():
        cells, others = [], []
        for n in sizes:
            c = row[str(n)]
            lo, hi = c["x_fair_ci95"]
            figure = f"{c['x_fair']:.2f}x [{lo:.2f}, {hi:.2f}]"
            unlearned = c["spec"].startswith("compact:") and not c["learned"]
            note = " (not trained on it)" if unlearned else ""
            if c.get("games"):
                figure = f"**{figure}**" if lo > bar else figure
            else:
                figure = "1x (itself)"
            cells.append(f"`{_short(c['spec'])}`{note} {figure}")
            others += [f"{n}p `{_short(s)}` {o['x_fair']:.2f}x"
                       for s, o in c.get("candidates", {}).items() if s != c["spec"]]
        lines.append(f"| `{preset}` | {FAMILY_OF_PRESET.get(preset, 'standard')} | "
                     + " | ".join(cells) + f" | {', '.join(others)} |")
    measured = [c for row in table.values() for c in row.values() if c.get("games")]
    passed = sum(c["x_fair_ci95"][0] > bar for c in measured)
    lines += ["", f"{passed} of {len(measured)} measured cells clear {bar}x (bold). "
              f"`{command}`"]
    confirmed = [c.get("first_confirm", c)["games"] for c in measured if c.get("screened")]
    if confirmed:
        lines[-1] += (f" Each seated figure was measured again on {min(confirmed):,} or more "
                      "games of fresh deals after the candidates' screening (module "
                      "docstring of `scripts/preset_table.py`); the other candidates' "
                      "figures are the screening's.")
    more = [c.get("second_confirm", c)["games"] for c in measured if c.get("first_confirm")]
    if more:
        lines[-1] += (f" The {len(more)} whose interval then held {bar}x were measured once "
                      f"more, on {min(more):,} games or more, those deals among them.")
    most = [c["games"] for c in measured if c.get("second_confirm")]
    if most:
        lines[-1] += (f" The {len(most)} whose interval still held it, once more on "
                      f"{min(most):,} games or more.")
    if confirmed and more:
        looks = [min(confirmed), min(more)] + ([min(most)] if most else [])
        lines[-1] += (f" Looks at {', '.join(f'{g:,}' for g in looks)} games bold a cell "
                      f"whose true figure is exactly {bar}x "
                      f"{100 * false_bold_rate(looks):.1f}% of the time, one look "
                      f"{100 * false_bold_rate(looks[:1]):.1f}% (`false_bold_rate`).")
    return "\n".join(lines)


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(x, float) / math.sqrt(2.0)))


def false_bold_rate(looks: list[int], z: float = 1.96, points: int = 2001) -> float:
    """How often looks at ``looks`` games of the same deals bold a cell whose true figure
    is exactly the bar, each look taken only where the one before held the bar inside its
    interval: the figure after g games is a random walk's mean over g steps, so the looks
    are one walk's sums at ``looks``, and a look bolds where its z clears ``z``. One look:
    2.5%; each look more adds to it (module docstring). Computed, not sampled: the density
    of the sums still undecided is carried from look to look on a grid of ``points`` (its
    error is far below the 0.1% the card prints), so the card's figure is the same on every
    run."""
    bold, done = 0.0, 0
    grid = density = np.zeros(0)
    for games in looks:
        edge = z * math.sqrt(games)
        if not done:
            bold += float(1.0 - _normal_cdf(np.array(z)))
            grid = np.linspace(-edge, edge, points)
            density = np.exp(-grid**2 / (2 * games)) / math.sqrt(2 * math.pi * games)
        elif games > done:
            sd = math.sqrt(games - done)
            mass = density * np.gradient(grid)  # each grid point's share of the walks
            bold += float(mass @ (1.0 - _normal_cdf((edge - grid) / sd)))
            new = np.linspace(-edge, edge, points)
            kernel = np.exp(-((new[:, None] - grid[None, :]) / sd) ** 2 / 2)
            grid, density = new, kernel @ mass / (sd * math.sqrt(2 * math.pi))
        done = max(done, games)
    return bold


def seat_best(cells: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The seat of one table from its candidates' figures: the highest ``x_fair``, or
    ``expert`` where none beats its fair share against ``expert`` (the expert's own figure
    against itself, 1x by construction, not measured)."""
    best = max(cells.values(), key=lambda c: c["x_fair"])
    if best["x_fair"] < 1.0:
        best = {"x_fair": 1.0, "x_fair_ci95": [1.0, 1.0], "games": 0,
                                "spec": "expert", "learned": False}
    seat = dict(best)
    seat["candidates"] = {s: {k: c[k] for k in ("x_fair", "x_fair_ci95", "games")}
                          for s, c in cells.items()}
    return seat


def write_card(path: Path, text: str, marker: str = MARKER) -> None:
    """Replace what lies between the card's two ``<!-- marker -->`` lines with ``text``."""
    write_between_markers(path, marker, text)


def family_member(agent: Any) -> bool:
    """Whether ``agent`` is a family's member: a policy trained on a mix of some presets,
    not all of them. It reads the rules, so it would play any table, but it learned only
    its family's: a candidate there alone (the every-preset policy and the standard game's
    set stay candidates everywhere they play)."""
    mix = getattr(agent, "policy", None) and agent.policy.meta.get("rules_mix")
    return bool(mix) and set(mix) != set(PRESETS)


def _players(args: argparse.Namespace, preset: str, n: int) -> list[str]:
    """Who is measured at one table: ``--spec``, else each of ``--candidates`` that plays
    it, else the seat :func:`~scat_session.seating.default_opponent` gives it."""
    rules = Rules.preset(preset)
    if args.spec:
        return [args.spec]
    if not args.candidates:
        return [default_opponent(n, rules)]
    playing = []
    for spec in args.candidates.split(","):
        try:
            agent = make_agent(spec)
            agent.check_table(n, rules)
        except ValueError:
            continue
        if family_member(agent) and not agent.trained_on(rules):
            continue
        playing.append(spec)
    if not playing:
        raise ValueError(f"no candidate plays {preset} at {n} players")
    return playing


def measuring_command(args: argparse.Namespace) -> str:
    """The command that measures these figures, without the options that only say where
    they go or how many processes share the work (the figures do not depend on them)."""
    parts = ["python scripts/preset_table.py", "--players", ",".join(map(str, args.players)),
             "--games", str(args.games), "--seed", str(args.seed)]
    for flag, value in (("--presets", args.presets), ("--spec", args.spec),
                        ("--candidates", args.candidates)):
        if value:
            parts += [flag, value]
    if args.opponent != "expert":
        parts += ["--opponent", args.opponent]
    if args.confirm_games:
        parts += ["--confirm-games", str(args.confirm_games)]
    if args.confirm_more:
        parts += ["--confirm-more", ",".join(map(str, args.confirm_more))]
    return " ".join(parts)


def _progress(preset: str, n: int, spec: str, c: dict[str, Any], note: str = "") -> str:
    """One measured cell as the script prints it while it runs."""
    lo, hi = c["x_fair_ci95"]
    return (f"{preset:26s} {n:2d}p {spec:28s} {c['x_fair']:.2f}x [{lo:.2f}, {hi:.2f}] "
            f"{note}({c['games']} games, {c['seconds']:.0f} s)")


FIGURES = ("games", "deals", "win_rate", "ci95", "x_fair", "x_fair_ci95", "seconds")


Cells = list[tuple[str, str, dict[str, Any]]]


def _measure_again(cells: Cells, games: int, args: argparse.Namespace, keep_as: str,
                   note: str) -> None:
    """Each ``(preset, size, cell)``'s seated player measured on ``games`` games of the deals
    of seed ``--seed`` + 1; the cell takes those figures, the ones it had kept under
    ``keep_as``."""
    jobs = [(c["spec"], preset, int(size), games, args.seed + 1, args.opponent)
            for preset, size, c in cells]
    for (preset, size, c), again in zip(cells, measure_cells(jobs, args.workers), strict=True):
        c[keep_as] = {k: c[k] for k in ("games", "x_fair", "x_fair_ci95")}
        c.update({k: again[k] for k in FIGURES})
        print(_progress(preset, int(size), c["spec"], c, note))


def confirm(table: dict[str, dict[str, dict[str, Any]]], args: argparse.Namespace) -> None:
    """Measure every seated player again on ``--confirm-games`` games of fresh deals (seed
    ``--seed`` + 1) and take those figures as the cells', the screening's kept under
    ``screened`` (module docstring: the best of several noisy figures is biased upward)."""
    seated = [(preset, size, c) for preset, row in table.items() for size, c in row.items()
              if c.get("games")]
    _measure_again(seated, args.confirm_games, args, "screened", "confirmed ")


#: Where each stage of ``--confirm-more`` keeps the figure it replaced.
STAGE_KEEPS = ("first_confirm", "second_confirm")


def confirm_more(table: dict[str, dict[str, dict[str, Any]]], args: argparse.Namespace,
                 bar: float) -> None:
    """The later stages (module docstring): at each stage of ``--confirm-more``, every
    seated cell whose interval holds ``bar`` and that has fewer games than the stage is
    measured on that many games from the confirmation's seed, which extend its deals; the
    figure it had is kept under the stage's :data:`STAGE_KEEPS` name. A cell measured so
    already is left as it is, so an ``--update`` that keeps it measures nothing again."""
    for games, keep_as in zip(args.confirm_more, STAGE_KEEPS, strict=False):
        undecided = [(preset, size, c) for preset, row in table.items()
                     for size, c in row.items()
                     if c.get("screened") and c["games"] < games
                     and c["x_fair_ci95"][0] <= bar <= c["x_fair_ci95"][1]]
        _measure_again(undecided, games, args, keep_as, "measured once more ")


def _whole_command(args: argparse.Namespace) -> str:
    """The command that measures every preset with these options: what an ``--update``'s
    file is the output of, and the one it must have been written by."""
    return measuring_command(argparse.Namespace(**{**vars(args), "presets": None}))


def _with_fewer_candidates(args: argparse.Namespace) -> set[str]:
    """The whole commands of ``args`` with some of the last ``--candidates`` left out: a
    file one of them wrote holds the cells this command would write wherever the candidates
    added play none of them, which :func:`_kept` checks cell by cell (each cell's deals come
    from the seed, its preset and its size alone, never from who else is measured)."""
    specs = (args.candidates or "").split(",")
    return {_whole_command(argparse.Namespace(**{**vars(args), "candidates": ",".join(specs[:k])}))
            for k in range(1, len(specs))}


def _with_fewer_stages(args: argparse.Namespace) -> set[str]:
    """The whole commands of ``args`` with the last stages of ``--confirm-more`` left out: a
    file one of them wrote holds every cell up to those stages, and :func:`confirm_more`
    then measures what the stages added bring to the kept cells as to the new ones."""
    commands: set[str] = set()
    for k in range(len(args.confirm_more)):
        fewer = argparse.Namespace(**{**vars(args), "confirm_more": args.confirm_more[:k]})
        commands |= {_whole_command(fewer)} | _with_fewer_candidates(fewer)
    return commands


def _kept(path: Path, args: argparse.Namespace, presets: list[str]) -> dict[str, Any]:
    """The cells of ``path`` that ``--update`` keeps: every preset but ``presets``, from a
    file the whole command wrote (same players, deals, candidates and field), each still
    played by the candidates measured there. Raises ``ValueError`` naming what differs."""
    whole = _whole_command(args)
    try:
        data = json.loads(path.read_text())
        stored, cells = data["command"], data["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"--update reads {path}: {exc!r}"[:300]) from None
    if (stored != whole and stored not in _with_fewer_candidates(args)
            and stored not in _with_fewer_stages(args)):
        raise ValueError(f"--update: {path} was written by `{stored}`, not `{whole}`")
    kept = {p: row for p, row in cells.items() if p not in presets}
    for preset, row in kept.items():
        for size, cell in row.items():
            now = set(_players(args, preset, int(size)))
            if now != set(cell.get("candidates", {})):
                raise ValueError(f"--update: {preset} at {size} players is now played by "
                                 f"{sorted(now)}, not the {sorted(cell.get('candidates', {}))}"
                                 f" measured there; measure it too")
    return kept


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


def _stages(text: str) -> list[int]:
    """``--confirm-more``: one or two game counts, each more than the one before, or 0
    (no later stage)."""
    try:
        games = [int(x) for x in text.split(",")]
    except ValueError:
        games = []
    rising = all(a < b for a, b in zip(games, games[1:], strict=False))
    if games != [0] and (not 0 < len(games) <= len(STAGE_KEEPS) or not rising
                         or games[0] <= 0):
        raise argparse.ArgumentTypeError(
            f"--confirm-more wants one or two rising game counts like 40000,160000, got "
            f"{text[:40]!r}")
    return [] if games == [0] else games


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/preset_table.py",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=_sizes, default=[3, 6])
    ap.add_argument("--games", type=int, default=2000, help="games a cell, at least")
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--presets", help="comma-separated presets (default: every one)")
    ap.add_argument("--spec", help="seat this player instead of each table's default")
    ap.add_argument("--candidates", help="comma-separated players: measure each where it "
                    "plays the table, and seat the best (module docstring)")
    ap.add_argument("--opponent", choices=("expert", "greedy"), default="expert",
                    help="the field every other seat holds")
    ap.add_argument("--confirm-games", type=int, default=0,
                    help="measure each seated player again on this many games of fresh "
                    "deals, and show that figure (module docstring); 0: no")
    ap.add_argument("--confirm-more", type=_stages, default=[],
                    help="measure a confirmed figure whose interval holds the bar again on "
                    "this many games, and on the second count where it still holds it "
                    "(module docstring); 0: no")
    ap.add_argument("--update", action="store_true", help="measure only --presets and "
                    "keep the --json file's other cells (module docstring)")
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
    more_bad = args.confirm_more and not 0 < args.confirm_games < args.confirm_more[0]
    if unknown or args.games < 1 or args.workers < 1 or args.confirm_games < 0 or more_bad:
        what = (f"unknown preset {unknown[0]!r}" if unknown
                else "--confirm-games must be at least 0" if args.confirm_games < 0
                else "--confirm-more must be 0, or more than --confirm-games (which it "
                     "follows)" if more_bad
                else "--games and --workers must be at least 1")
        print(f"preset_table: {what}", file=sys.stderr)
        return 2
    if args.update and not (args.json and args.presets and args.candidates):
        print("preset_table: --update wants --json, --presets and --candidates",
              file=sys.stderr)
        return 2
    try:
        kept = _kept(Path(args.json), args, presets) if args.update else {}
        jobs = [(spec, p, n, args.games, args.seed, args.opponent)
                for p in presets for n in args.players for spec in _players(args, p, n)]
        cells = measure_cells(jobs, args.workers)
    except ValueError as exc:
        print(f"preset_table: {exc}", file=sys.stderr)
        return 2
    measured: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for (spec, preset, n, *_), c in zip(jobs, cells, strict=True):
        measured.setdefault((preset, n), {})[spec] = c
        print(_progress(preset, n, spec, c))
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for (preset, n), found in measured.items():
        table.setdefault(preset, {})[str(n)] = (seat_best(found) if args.candidates
                                                else next(iter(found.values())))
    if args.confirm_games:
        confirm(table, args)
    if args.update:
        table = {p: table[p] if p in table else kept[p] for p in PRESETS
                 if p in table or p in kept}
    if args.confirm_more:
        confirm_more(table, args, bar_of(args.opponent))
    command = _whole_command(args) if args.update else measuring_command(args)
    text = markdown(table, args.players, command, args.opponent)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "command": command, "seed": args.seed, "opponent": args.opponent,
            "confirm_games": args.confirm_games, "confirm_more": args.confirm_more,
            "players": args.players, "cells": table}, indent=1) + "\n")
    if args.card:
        write_card(Path(args.card), text, args.marker)
    return 0


if __name__ == "__main__":
    sys.exit(main())
