"""Where does a policy's edge come from at a larger table: reaching heads-up, or winning it?

A game of three or more ends heads-up: two players left, one of them the winner. So a seat's
win rate is P(reach heads-up) x P(win | heads-up), and the second factor depends on the
lives each of the last two carries into it. This plays one seat of SPEC against a field of
one baseline on the same duplicate deals as the training evaluation
(:func:`training.evaluate.duplicate_games`) and splits its win rate that way, with the
heads-up games split by the seat's lives against the other survivor's (lead / level /
behind). Run the baseline itself as SPEC for the mirror (fair share: heads-up 2/n, then 1/2).

    python -m training.heads_up compact:scat_batch_set expert --players 3 --games 2000 --seed 777

Why: to tell whether a policy's edge over a baseline comes from reaching the heads-up or from
playing it.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable

from agents.match import GameRecord
from agents.registry import make_agent
from scat_env import Rules

from .evaluate import duplicate_games

SPLITS = ("lead", "level", "behind")


def heads_up_lives(rec: GameRecord) -> tuple[int, ...] | None:
    """Every seat's lives when only two players were left (0 = out), or None when the game
    never got there (a truncated game)."""
    for result in rec.results:
        if sum(v > 0 for v in result.lives_after) == 2:
            return result.lives_after
    return None


def split(games: Iterable[tuple[int, GameRecord]]) -> Counter[str]:
    """Count games, wins, heads-ups reached and won by ``seat``, overall and by lives."""
    c: Counter[str] = Counter()
    for seat, rec in games:
        won = rec.winner == seat
        c["games"] += 1
        c["win"] += won
        lives = heads_up_lives(rec)
        if lives is None or lives[seat] == 0:
            continue
        other = next(s for s, v in enumerate(lives) if v > 0 and s != seat)
        d = lives[seat] - lives[other]
        key = SPLITS[0] if d > 0 else SPLITS[1] if d == 0 else SPLITS[2]
        for k in ("hu", f"hu_{key}"):
            c[k] += 1
            c[k + "_win"] += won
    return c


def format_split(spec: str, c: Counter[str]) -> str:
    """One markdown row: win rate, P(heads-up), P(win | heads-up), then share and win rate
    of each lives split."""
    def rate(a: str, b: str) -> str:
        return f"{c[a] / c[b]:.3f}" if c[b] else "-"

    cells = [spec, str(c["games"]), rate("win", "games"), rate("hu", "games"), rate("hu_win", "hu")]
    cells += [f"{rate(f'hu_{k}', 'hu')} / {rate(f'hu_{k}_win', f'hu_{k}')}" for k in SPLITS]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| seat | games | win | reach heads-up | win given heads-up | "
          + " | ".join(f"{k}: share / win" for k in SPLITS) + " |\n|" + " --- |" * 8)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.heads_up",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("spec", help="the seat's agent spec, e.g. compact:scat_batch_set")
    parser.add_argument("opponent", help="the baseline in every other seat, e.g. expert")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.players < 3:
        parser.error(f"--players must be at least 3 (a game of {args.players} starts heads-up)")
    for spec in (args.spec, args.opponent):
        try:
            make_agent(spec)
        except (ValueError, OSError) as e:  # unknown name, bad option, missing policy file
            parser.error(f"bad agent spec {spec!r}: {e}")
    c = split(duplicate_games(lambda s: make_agent(args.spec, seed=s), Rules(), args.opponent,
                              args.players, args.games, args.seed))
    print(HEADER)
    print(format_split(args.spec, c))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
