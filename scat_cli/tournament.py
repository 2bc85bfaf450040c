"""``scat tournament``: duplicate-deal tournaments between agents, with a report.

Two ways to say who plays (exactly one of them):

- ``--agents A,B,C`` a *population*: with as many specs as ``--players`` it is one table;
  with more, a round-robin over every table of ``--players`` distinct specs.
- ``--field A,B,B,B`` a *lineup*, one spec per seat (repeats allowed); give ``--field``
  several times for several tables. Use it when there are fewer agents than seats.

Every deal is replayed in every seating of each table (see ``--seating``), so the luck of
the cards cancels. Results go to ``--out``: ``games.jsonl`` (one line per game, appended as
games finish; ``--resume`` continues an interrupted run), ``results.json`` (deterministic),
``results.md``, ``winrate.png``, ``ratings.png`` and ``timing.json``.

``--resume`` reads the log back as untrusted input: every record is checked against the
configuration and the games are played again -- every one when that costs a few seconds,
else a random sample (``--verify``); the last line says how many were; a log that does not
belong is refused in one line naming its file and line.

``--backend ray`` plays the same games as Ray tasks on a cluster (``--ray-address``, else
``RAY_ADDRESS``, else a Ray instance started on this machine for the run): the same
``games.jsonl`` and ``results.json``, byte for byte, with resume and the folder's lock
unchanged (docs/SCALING.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import CliError

if TYPE_CHECKING:
    from training.tournament import TournamentConfig


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from scat_env import DEFAULT_MAX_TURNS

    p = subparsers.add_parser(
        "tournament",
        help="play many duplicate-deal games between agents and report win rates and ratings",
        description=(__doc__ or "").split("\n\n", 1)[-1].replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agents", metavar="SPECS",
                     help="population, comma-separated agent specs, e.g. expert,greedy,random")
    who.add_argument("--field", metavar="SPECS", action="append",
                     help="a lineup, one spec per seat, e.g. expert,greedy,greedy,greedy "
                          "(repeat for more tables)")
    p.add_argument("--players", type=int, default=None,
                   help="players per game, 2..10 (default: the number of specs per table)")
    p.add_argument("--games", type=int, default=1000,
                   help="at least this many games in all, rounded up to whole duplicate "
                        "deals (default 1000)")
    p.add_argument("--rules", default="standard", help="rules preset name or YAML file")
    p.add_argument("--seed", type=int, default=0, help="master seed of the deals (default 0)")
    p.add_argument("--seating", default="auto",
                   choices=("auto", "permutations", "rotations", "mirrored"),
                   help="seat arrangements per deal: every permutation, the n rotations, or "
                        "rotations of the lineup and its mirror (auto: permutations up to "
                        "24, else mirrored)")
    p.add_argument("--single-hand", action="store_true",
                   help="each game is one hand (stats per hand; places by lives lost)")
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS,
                   help=f"turns per hand before a game is cut off (default {DEFAULT_MAX_TURNS})")
    p.add_argument("--workers", type=int, default=None,
                   help=f"worker processes (default: every core, here {os.cpu_count()}); "
                        "with --backend ray, chunks of games running at once (default: the "
                        "cluster's CPUs)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="where games are played: processes on this machine (default) or Ray "
                        "tasks on a cluster")
    p.add_argument("--ray-address", metavar="HOST:PORT", default=None,
                   help="the Ray cluster's head (ray start --head prints it; default: "
                        "RAY_ADDRESS, else a Ray instance started here for the run)")
    p.add_argument("--out", default="runs/tournament",
                   help="output folder (default runs/tournament)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--resume", action="store_true",
                       help="continue the tournament in --out, playing only missing games")
    group.add_argument("--overwrite", action="store_true",
                       help="discard the games already in --out and start again")
    p.add_argument("--verify", choices=("auto", "sample", "all"), default="auto",
                   help="on --resume, re-play the logged games and refuse a log they do not "
                        "reproduce: 'auto' (default) all of them when that takes at most "
                        "about 5 s more than a sample, else the sample; 'sample' a random "
                        "5%% (at least 64); 'all' every one")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar and no table on stdout (files are still written)")
    p.set_defaults(func=run)


def build_config(args: argparse.Namespace) -> TournamentConfig:
    """Validate the arguments into a tournament config (CliError on bad input)."""
    from training.tournament import TournamentConfig, parse_specs, population_tables

    if args.games is not None and args.games < 1:
        raise CliError(f"--games must be at least 1, got {args.games}")
    if args.players is not None and not 2 <= args.players <= 10:
        raise CliError(f"--players must be between 2 and 10, got {args.players}")
    if args.workers is not None and args.workers < 1:
        raise CliError(f"--workers must be at least 1, got {args.workers}")
    if not 0 <= args.seed <= 2**63 - 1:
        raise CliError(f"--seed must be between 0 and 2**63 - 1, got {str(args.seed)[:30]}")
    if args.ray_address is not None and args.backend != "ray":
        raise CliError("--ray-address needs --backend ray")
    if args.backend == "ray":
        from training.tournament import check_ray_address

        # One line, before --out is touched: Ray missing, or no cluster at the address.
        check_ray_address(args.ray_address)
    if args.agents is not None:
        population = parse_specs(args.agents)
        players = args.players if args.players is not None else len(population)
        if not 2 <= players <= 10:
            raise CliError(f"{players} players: Scat is played by 2 to 10 players (--players)")
        tables = population_tables(population, players)
    else:
        tables = [tuple(parse_specs(f)) for f in args.field]
        sizes = sorted({len(t) for t in tables})
        if len(sizes) > 1:
            raise CliError(f"every --field needs the same number of seats, got {sizes}")
        if args.players is not None and args.players != sizes[0]:
            raise CliError(
                f"--field seats {sizes[0]} players but --players is {args.players}; "
                "give one spec per seat"
            )
        if not 2 <= sizes[0] <= 10:
            raise CliError(f"--field seats {sizes[0]} players: Scat is played by 2 to 10")
    from .rules import rules_from_arg

    rules_from_arg(args.rules)  # a path named as a path (a folder, a missing file), one line
    config = TournamentConfig(
        tables=tuple(tables),
        games=args.games,
        rules=args.rules,
        seed=args.seed,
        seating=args.seating,
        single_hand=args.single_hand,
        max_turns=args.max_turns,
    )
    config.check_agents()  # before the header line, so a refusal is the only line printed
    return config


def run(args: argparse.Namespace) -> int:
    """Play, then report, holding ``--out`` throughout: a second run on the folder is refused
    until this one has written its last file, so the folder never mixes two runs."""
    from training.runlock import exclusive_folder
    from training.tournament import GAMES_FILE

    config = build_config(args)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CliError(f"--out {args.out}: a file, not a folder")
    total = len(config.keys())
    if not args.quiet:
        print(
            f"{total} games: {len(config.tables)} table(s) x {config.deals_per_table()} deals "
            f"x seatings; {config.num_players} players; rules {config.rules}; out {args.out}",
            file=sys.stderr,
        )
    if args.resume and not args.quiet and not os.path.exists(os.path.join(args.out, GAMES_FILE)):
        # Not an error (a job restarted on a cluster may always pass --resume), but said.
        print(f"nothing to resume in {args.out} yet: the tournament starts from its first game",
              file=sys.stderr)
    try:
        with exclusive_folder(args.out, "tournament"):
            return _play_and_report(config, args)
    except OSError as exc:
        raise CliError(os_error_line(exc, args.out)) from None


def os_error_line(exc: OSError, out: str) -> str:
    """An operating-system error (a full disk, a read-only folder) as one line: which file,
    what the system said, and, when games were logged, that ``--resume`` continues."""
    from training.tournament import GAMES_FILE

    where = exc.filename if exc.filename is not None else out
    line = f"cannot write {where}: {exc.strerror or type(exc).__name__}"
    try:
        kept = os.path.getsize(os.path.join(out, GAMES_FILE)) > 0
    except OSError:
        kept = False
    if kept:
        line += ("; the games finished so far are kept: fix this and run the same command "
                 "with --resume")
    return line


def _play_and_report(config: TournamentConfig, args: argparse.Namespace) -> int:
    from training.report import PLOTS_MISSING, plots_available, summarize, write_report
    from training.tournament import run_tournament

    try:
        result = run_tournament(
            config, args.out, workers=args.workers, resume=args.resume,
            overwrite=args.overwrite, progress=not args.quiet, verify=args.verify,
            backend=args.backend, ray_address=args.ray_address,
        )
    except KeyboardInterrupt:
        print(f"\nfinished games are kept in {args.out}/games.jsonl: run the same command "
              "with --resume to continue", file=sys.stderr)
        raise
    summary = summarize(config.to_dict(), result.games)
    timing = {
        "games_played_now": result.played_now,
        "seconds": round(result.seconds, 3),
        "games_per_second": round(result.games_per_second, 2) if result.played_now else None,
        "workers": result.workers,
        "backend": args.backend,
        "cpu_count": os.cpu_count(),
    }
    paths = write_report(args.out, summary, timing, plots=not args.no_plots)
    # An optional extra missing: one line each, where those results would be.
    for line in (summary.get("ratings_missing"),
                 PLOTS_MISSING if not args.no_plots and not plots_available() else None):
        if line:
            print(line, file=sys.stderr)
    if not args.quiet:
        print_summary(summary)
        if result.played_now:
            print(f"played {result.played_now} games in {result.seconds:.1f} s "
                  f"({result.games_per_second:.1f} games/s, {result.workers} "
                  f"worker{'s' if result.workers != 1 else ''})")
        if result.logged:
            print(result.verify_line())
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _columns() -> list[tuple[str, Callable[[dict, dict], str]]]:
    """Columns of the terminal table after the agent's spec: header, and the cell for one
    agent (its stats, its rating), formatted as results.md formats them."""
    from training.report import number, percent

    return [
        ("win rate [95% CI]", lambda a, r: percent(a["win_rate"])),
        ("lives/hand", lambda a, r: number(a["lives_per_hand"], digits=3)),
        ("knocks (kept)", lambda a, r: f"{percent(a['knock_rate'], ci=False)} "
                                       f"({percent(a['knock_success'], ci=False)})"),
        ("mean place", lambda a, r: number(a["mean_place"], digits=2)),
        ("rating", lambda a, r: f"{r['ordinal']:.2f}" if r else "-"),
    ]


def summary_table(summary: dict[str, Any], width: int) -> Any:
    """The results as a rich table no wider than ``width``: long agent specs wrap inside
    their column, and where even that does not fit, the last columns are left out (every
    figure is in results.md)."""
    from rich import box
    from rich.table import Table

    from training.report import ranked_specs

    specs = ranked_specs(summary)
    rows = [(s, summary["agents"][s], summary["ratings"].get(s, {})) for s in specs]
    columns = _columns()
    spec_min = min(16, max(len(s) for s in specs))

    def needed(cols: list) -> int:  # the agent column at its narrowest, borders, padding
        cells = [max(len(h), *(len(f(a, r)) for _, a, r in rows)) for h, f in cols]
        return spec_min + sum(cells) + 3 * len(cols) + 4

    while len(columns) > 1 and needed(columns) > width:
        columns.pop()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("agent", overflow="fold", min_width=spec_min)
    for header, _ in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for spec, a, r in rows:
        table.add_row(spec, *(f(a, r) for _, f in columns))
    return table


def print_summary(summary: dict[str, Any]) -> None:
    """What ``scat tournament`` prints when it is done: the setup in one paragraph and the
    table, both within the terminal's width (results.md holds the full report)."""
    from rich.console import Console

    console = Console(highlight=False, emoji=False)
    cfg = summary["config"]
    mode = "single hands" if cfg["single_hand"] else "games"
    console.print(
        f"{summary['games']} {mode}, {cfg['num_players']} players, rules {cfg['rules']}, "
        f"seed {cfg['seed']}, {len(cfg['tables'])} table(s) x {cfg['deals_per_table']} "
        f"duplicate deals; a fair win rate is {100 * summary['fair_win_rate']:.1f}%. "
        "Brackets: 95% intervals clustered by deal.", markup=False)
    console.print(summary_table(summary, console.width))
    if not summary["ratings"] and not summary.get("ratings_missing"):
        console.print("No ratings: every table seats one spec more than once.")
    console.print(f"Hands: {summary['hands']} ({summary['mean_hands_per_game']:.2f} per game); "
                  f"truncated games: {summary['truncated_games']}.")
    if len(summary["tables"]) > 1:
        console.print("The win rate at each table of the round-robin is in results.md.")
