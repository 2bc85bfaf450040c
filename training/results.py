"""The baseline tournament tables of ``docs/results/``, run and assembled by one command.

    python -m training.results              # rebuild docs/results/README.md from the folders
    python -m training.results --run        # first re-run every tournament (~40 min, 2 cores)
    python -m training.results --run --only standard-3p thresholds

Each table is one ``scat tournament`` command whose ``--out`` folder under ``docs/results/``
keeps what a reader needs: ``results.md`` and ``results.json`` (deterministic: the same
command gives the same bytes, whatever ``--workers``), ``config.json``, ``timing.json`` and
the plots. The per-game log ``games.jsonl`` is deleted: the command regenerates it byte for
byte; so is the run's ``.lock`` (it only names the process that ran it). The
``thresholds`` sweep plays 32 tournaments (``expert`` against every ``threshold:K``) in a
scratch folder and keeps only their summary table,
``docs/results/expert-vs-thresholds.md``. The page is rebuilt from these files, so it never
drifts from the data.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
THRESHOLD_KS = [str(k) for k in range(17, 32)] + ["never"]
THRESHOLD_PLAYERS = (2, 4)
THRESHOLD_SUMMARY = "expert-vs-thresholds.md"


@dataclass(frozen=True)
class Table:
    """One tournament of the page: its folder, heading, a note, and ``scat tournament``'s
    arguments (``--out`` and the output switches are added)."""

    folder: str
    title: str
    note: str
    args: tuple[str, ...]

    def command(self) -> str:
        return " ".join(["scat tournament", *self.args, "--out", f"docs/results/{self.folder}"])


TABLES = (
    Table("standard-2p", "2 players: round-robin of random, greedy, expert (every pair, "
          "both seatings)", "",
          ("--agents", "random,greedy,expert", "--players", "2", "--games", "2000",
           "--rules", "standard", "--seed", "0")),
    Table("standard-3p", "3 players: random, greedy, expert at one table (all 6 seatings of "
          "every deal)", "",
          ("--agents", "random,greedy,expert", "--players", "3", "--games", "2000",
           "--rules", "standard", "--seed", "0")),
    Table("standard-4p", "4 players: random, greedy, threshold:20, expert (all 24 seatings of "
          "every deal)",
          "A fourth agent fills the table so every seat holds a distinct agent and the ratings "
          "stay meaningful; `threshold:20` is greedy play that knocks at 20+ instead of 25+.",
          ("--agents", "random,greedy,threshold:20,expert", "--players", "4", "--games", "2000",
           "--rules", "standard", "--seed", "0")),
    Table("standard-3p-expert-vs-2greedy", "3 players, lineup: one expert against two greedy",
          "Win rates are per seat (fair share 33.3%); no ratings when a spec fills several "
          "seats.",
          ("--field", "expert,greedy,greedy", "--games", "2000", "--rules", "standard",
           "--seed", "0")),
    Table("standard-3p-ismcts200", "3 players: greedy, expert, ismcts:200 (200 determinised "
          "deals per decision)",
          "ismcts costs tens of milliseconds a decision, so this table is smaller and its "
          "intervals are wider.",
          ("--agents", "greedy,expert,ismcts:200", "--players", "3", "--games", "300",
           "--rules", "standard", "--seed", "0")),
)

#: One preset of each family of variations, at three players: random, greedy and expert at
#: one table, so each family shows random < greedy < expert (or where it does not).
VARIANT_PRESETS = ("knocker_pays_ties", "three_of_a_kind_30_5", "straight_flush",
                   "min_knock_21", "flush_to_knock", "knock_when_exhausted", "swedish_points",
                   "cadillac", "gin", "ride_the_bus_extra_stops", "italian", "computer",
                   "moyer", "sudden_death", "hammer", "throw_down", "throw_down_any",
                   "undeclared_31", "french_canadian", "french_canadian_jacobs", "golf")
#: What a reader must know to read a family's table.
VARIANT_NOTES = {
    "french_canadian": "A points race: nobody loses a life or is put out, so the lives, "
    "knock success (knocks that cost no life), mean place and rating columns come from lives "
    "and eliminations and say nothing here; the win rate is the result.",
    "golf": "Golf has no knocking and no declaring: those columns stay empty.",
    "knock_when_exhausted": "The same games as the standard table, result for result: the "
    "preset only changes what a player may do once the stock is empty, and in these games a "
    "knock or a 31 always ends the hand before that.",
    "swedish_points": "The standard game under other names (four lives shown as points "
    "against three pennies and the county; a lowest knocker still pays two), so the table is "
    "the standard one, result for result.",
}
VARIANT_NOTES["french_canadian_jacobs"] = VARIANT_NOTES["french_canadian"]
TABLES = TABLES + tuple(
    Table(f"{preset}-3p", f"Preset `{preset}`, 3 players: random, greedy, expert at one table",
          VARIANT_NOTES.get(preset, ""),
          ("--agents", "random,greedy,expert", "--players", "3", "--games", "2000",
           "--rules", preset, "--seed", "0"))
    for preset in VARIANT_PRESETS)

INTRO = """# Tournament results

Baseline tournaments, under the standard rules and then one preset of each family of
variations, each run by the `scat tournament` command above its table; this page is assembled from their folders by `python -m training.results`
(`--run` re-runs them all first). Each folder holds `results.json` (deterministic: the same
command gives the same bytes, whatever `--workers`), `results.md`, the plots, `config.json`
and `timing.json` (wall-clock figures, measured on a 2-core machine, kept out of the
deterministic file). How fast each preset plays (engine decisions/s and env steps/s against
the standard game) is on a page of its own, [preset-speed.md](preset-speed.md), written by
`scat bench --presets all --out docs/results/preset-speed.md`.

How to read the tables:

- Duplicate deals: every deal (a seed for the whole sequence of shuffles) is replayed in every
  seating of the table, so each agent plays each seat's cards; the luck of the deal cancels.
- Win rate = games won / seats played. Brackets are 95% intervals that treat the games of one
  deal as a cluster (they are correlated): proportions use a Wilson interval on the
  design-effect-adjusted sample size, means a cluster-robust (delta-method) normal interval.
  `results.json` also gives the naive Wilson interval (`win_rate.wilson95`).
- Lives lost / hand and the knock and 31 rates are per hand the agent was dealt in; knock
  success = fraction of its knocks after which it lost no life; showdown value = mean hand
  value in hands ended by a knock or an exhausted stock; mean place = finishing place
  (1 = winner).
- Ratings: OpenSkill Plackett-Luce, one update per game with the elimination order as ranks,
  games in a fixed order; ordinal = mu - 3 sigma.
"""

SWEEP_INTRO = """## expert against every threshold:K

`expert` in one seat against `threshold:K` in the others, 2 and 4 players, 2,000 games per
matchup (duplicate deals, every seating); "yes" = the expert's 95% lower bound is above the
fair share.

```
python -m training.results --run --only thresholds
```

"""


def _tournament(args: Sequence[str], out: Path, workers: int, plots: bool = True) -> None:
    cmd = [sys.executable, "-m", "scat_cli", "tournament", *args, "--out", str(out),
           "--workers", str(workers), "--quiet", "--overwrite"]
    subprocess.run(cmd + ([] if plots else ["--no-plots"]), check=True)
    (out / "games.jsonl").unlink(missing_ok=True)  # regenerated by the command
    (out / ".lock").unlink(missing_ok=True)  # the finished run's lock: a process id, not a result


def run_thresholds(games: int, workers: int, seed: int = 0,
                   ks: Sequence[str] = tuple(THRESHOLD_KS)) -> str:
    """Play ``expert`` against each ``threshold:K`` and return the summary table."""
    rows = ["| opponent | " + " | ".join(f"{n}p expert win [95% CI] (fair {1 / n:.0%})"
                                          for n in THRESHOLD_PLAYERS) + " |",
            "|---|" + "---|" * len(THRESHOLD_PLAYERS)]
    with tempfile.TemporaryDirectory(prefix="expert_vs_thresholds_") as scratch:
        for k in ks:
            cells = []
            for n in THRESHOLD_PLAYERS:
                out = Path(scratch) / f"{n}p-threshold-{k}"
                field = ",".join(["expert"] + [f"threshold:{k}"] * (n - 1))
                _tournament(["--field", field, "--games", str(games), "--seed", str(seed)],
                            out, workers, plots=False)
                results = json.loads((out / "results.json").read_text(encoding="utf-8"))
                win = results["agents"]["expert"]["win_rate"]
                low, high = win["ci95"]
                cells.append(f"{win['value']:.3f} [{low:.3f}, {high:.3f}] "
                             f"{'yes' if low > 1 / n else 'NO'}")
            rows.append(f"| `threshold:{k}` | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    return "\n".join(rows) + "\n"


def assemble(results: Path = RESULTS) -> str:
    """The page: each table's command, ``results.md``, timing and plots, then the sweep."""
    parts = [INTRO]
    for table in TABLES:
        path = results / table.folder
        if not (path / "results.md").is_file():
            continue
        parts.append(f"## {table.title}\n")
        if table.note:
            parts.append(table.note + "\n")
        parts.append(f"```\n{table.command()}\n```\n")
        parts.append((path / "results.md").read_text(encoding="utf-8").strip() + "\n")
        timing = json.loads((path / "timing.json").read_text(encoding="utf-8"))
        parts.append(
            f"Measured: {timing['games_played_now']} games in {timing['seconds']:.1f} s = "
            f"{timing['games_per_second']:.1f} games/s with {timing['workers']} worker(s).\n")
        images = [f"![{name}]({table.folder}/{name}.png)" for name in ("winrate", "ratings")
                  if (path / f"{name}.png").is_file()]
        parts.append(" ".join(images) + "\n")
    summary = results / THRESHOLD_SUMMARY
    if summary.is_file():
        parts.append(SWEEP_INTRO + summary.read_text(encoding="utf-8"))
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    names = [t.folder for t in TABLES] + ["thresholds"]
    p = argparse.ArgumentParser(prog="python -m training.results",
                                description="Rebuild docs/results/README.md; --run re-runs "
                                            "the tournaments first.")
    p.add_argument("--run", action="store_true", help="re-run the tournaments first")
    p.add_argument("--only", nargs="+", choices=names, metavar="NAME",
                   help=f"with --run: only these ({', '.join(names)})")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threshold-games", type=int, default=2000,
                   help="games per matchup of the threshold sweep")
    p.add_argument("--dir", type=Path, default=RESULTS,
                   help="the results folder (default: docs/results of this checkout)")
    args = p.parse_args(argv)
    if args.only and not args.run:
        p.error("--only needs --run")
    if args.run:
        chosen = set(args.only or names)
        for table in TABLES:
            if table.folder in chosen:
                _tournament(table.args, args.dir / table.folder, args.workers)
        if "thresholds" in chosen:
            summary = run_thresholds(args.threshold_games, args.workers)
            (args.dir / THRESHOLD_SUMMARY).write_text(summary, encoding="utf-8")
    (args.dir / "README.md").write_text(assemble(args.dir), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
