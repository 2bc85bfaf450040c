"""The search player's strength against its cost: the model card's table for ``search:W``.

Each row seats one agent against a field of another (``scat tournament --field
A,B,B... --seating rotations``: duplicate deals, every deal played with ``A`` in each
seat; 95% interval clustered by deal) and times ``A``'s decisions in those games
(milliseconds per decision over every decision of a few games, after one game that warms
up the process, and the slowest one; ``--retime`` times the rows of a figures file again).
The shipped policy, which the search starts from, is measured on the same deals, so the
rows compare as the same games.

    python scripts/search_table.py --rows search:16@3,search:64@3,search:256@3 \
        --games 1200 --card policies/README.md

A row is ``SPEC@PLAYERS`` or ``SPEC@PLAYERS/FIELD`` (default field ``expert``). The table
goes between the ``<!-- search-table -->`` markers of the model card (``--card``) and the
figures into ``--json``; ``--out`` keeps each row's tournament (default
``runs/search_table``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

MARKER = "search-table"


def parse_row(text: str) -> tuple[str, int, str]:
    spec, _, rest = text.partition("@")
    players, _, field = rest.partition("/")
    if not spec or not players.isdigit():
        raise ValueError(f"{text!r} is not SPEC@PLAYERS[/FIELD]")
    return spec, int(players), field or "expert"


def decision_times(spec: str, field: str, players: int, games: int,
                   seed: int) -> tuple[float, float]:
    """Mean and slowest seconds a decision of ``spec`` in ``games`` games against ``field``
    (every decision of the game timed, one process)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from agents.match import play_game
    from agents.registry import make_agent

    times: list[float] = []
    agent = make_agent(spec, seed=seed)

    class Timed:
        def __getattr__(self, name: str) -> Any:
            return getattr(agent, name)

        def act(self, view: Any) -> int:
            t = time.perf_counter()
            a = agent.act(view)
            times.append(time.perf_counter() - t)
            return a

    for g in range(games + 1):  # the first game warms up (loading, compiling): untimed
        seats = [make_agent(field, seed=seed + s) for s in range(players)]
        seats[g % players] = Timed()  # type: ignore[call-overload]
        play_game(seats, seed=seed + 7919 * g)
        if g == 0:
            times.clear()
    return sum(times) / len(times), max(times)


def measure(spec: str, players: int, field: str, games: int, seed: int,
            out: Path, timing_games: int) -> dict[str, Any]:
    from training.tournament import lineup_win_rate

    folder = out / f"{spec.replace(':', '_')}_{players}p_vs_{field.replace(':', '_')}"
    rate, played = lineup_win_rate((spec, *[field] * (players - 1)), games, seed, folder)
    mean_s, max_s = decision_times(spec, field, players, timing_games, seed)
    return {"spec": spec, "players": players, "field": field, "games": played,
            "win_rate": rate["value"], "ci95": rate["ci95"], "x_fair": rate["value"] * players,
            "x_fair_ci95": [v * players for v in rate["ci95"]], "ms_mean": 1000 * mean_s,
            "ms_max": 1000 * max_s}


def _ms(ms: float) -> str:
    return f"{ms:.1f}" if ms < 10 else f"{ms:.0f}"


def markdown(rows: list[dict[str, Any]], command: str) -> str:
    out = ["| player | players | against | win rate [95% CI] | x fair share [95% CI] | "
           "ms a decision: mean / slowest | games |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lo, hi = r["ci95"]
        xlo, xhi = r["x_fair_ci95"]
        out.append(f"| `{r['spec']}` | {r['players']} | `{r['field']}` | "
                   f"{100 * r['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] | "
                   f"{r['x_fair']:.2f}x [{xlo:.2f}, {xhi:.2f}] | "
                   f"{_ms(r['ms_mean'])} / {_ms(r['ms_max'])} | {r['games']:,} |")
    return "\n".join(out) + f"\n\n`{command}`"


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
    p.add_argument("--rows", default="", help="SPEC@PLAYERS[/FIELD],...")
    p.add_argument("--games", type=int, default=1200)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--timing-games", type=int, default=6,
                   help="games in which each row's decisions are timed (default 6)")
    p.add_argument("--out", type=Path, default=Path("runs/search_table"))
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--card", type=Path, default=None)
    p.add_argument("--retime", action="store_true",
                   help="measure no strength: time the rows of --json again, rewrite it")
    args = p.parse_args(argv)
    if args.retime:
        if args.json is None:
            p.error("--retime needs --json")
        data = json.loads(args.json.read_text())
        for r in data["rows"]:
            mean_s, max_s = decision_times(r["spec"], r["field"], r["players"],
                                           args.timing_games, args.seed)
            r["ms_mean"], r["ms_max"] = 1000 * mean_s, 1000 * max_s
            print(f"{r['spec']} at {r['players']}: {r['ms_mean']:.0f} ms a decision "
                  f"(slowest {r['ms_max']:.0f})", flush=True)
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        if args.card is not None:
            write_card(args.card, markdown(data["rows"], data["command"]))
        return 0
    try:
        rows = [parse_row(t) for t in args.rows.split(",")]
    except ValueError as exc:
        p.error(str(exc))
    command = (f"python scripts/search_table.py --rows {args.rows} --games {args.games} "
               f"--seed {args.seed}")
    measured = []
    for spec, players, field in rows:
        r = measure(spec, players, field, args.games, args.seed, args.out, args.timing_games)
        measured.append(r)
        print(f"{spec} at {players} against {field}: {r['x_fair']:.2f}x "
              f"[{r['x_fair_ci95'][0]:.2f}, {r['x_fair_ci95'][1]:.2f}], "
              f"{r['ms_mean']:.0f} ms a decision (slowest {r['ms_max']:.0f})", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps({"command": command, "rows": measured}, indent=1)
                             + "\n", encoding="utf-8")
    if args.card is not None:
        write_card(args.card, markdown(measured, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
