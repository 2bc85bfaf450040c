"""Quick head-to-head of baselines: the hero's win rate with a 95% Wilson interval.

The hero plays one seat against ``--opponents`` (cycled over the other seats); the hero's
seat rotates every game and game ``g`` uses seed ``base_seed + g``, so runs are
reproducible. Example (2 players, expert against every threshold)::

    nice -n 10 python scripts/eval_baselines.py --hero expert --opponents threshold:25 \\
        --players 2 --games 400

``--sweep`` runs the hero against each opponent spec in turn (one table row each).
The full 2,000-game tables come from the tournament harness; this is a tuning tool.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from agents.match import play_game  # noqa: E402
from scat_env import Rules  # noqa: E402
from training.ratings import wilson_ci  # noqa: E402


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate; ``(0, 1)`` when nothing was observed."""
    if n == 0:
        return 0.0, 1.0
    return wilson_ci(wins, n, z)


def head_to_head(
    hero: str, opponents: list[str], players: int, games: int, rules: Rules, base_seed: int = 0
) -> tuple[int, int, float]:
    """(hero wins, games finished, seconds) with the hero's seat rotating."""
    wins = done = 0
    start = time.perf_counter()
    for g in range(games):
        hero_seat = g % players
        specs = []
        k = 0
        for s in range(players):
            if s == hero_seat:
                specs.append(hero)
            else:
                specs.append(opponents[k % len(opponents)])
                k += 1
        agents = [make_agent(spec, seed=base_seed + g * 10 + s) for s, spec in enumerate(specs)]
        record = play_game(agents, rules, seed=base_seed + g)
        if record.winner is not None:
            done += 1
            wins += record.winner == hero_seat
    return wins, done, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hero", default="expert")
    p.add_argument("--opponents", nargs="+", default=["greedy"])
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--rules", default="standard")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sweep", action="store_true", help="one row per opponent spec")
    args = p.parse_args(argv)
    rules = Rules.preset(args.rules)
    fair = 1.0 / args.players
    groups = [[o] for o in args.opponents] if args.sweep else [args.opponents]
    print(f"{args.hero} vs {'/'.join(args.opponents)}: {args.players} players, "
          f"{args.games} games, rules={args.rules}, fair share {fair:.3f}")
    for opp in groups:
        wins, done, secs = head_to_head(args.hero, opp, args.players, args.games, rules, args.seed)
        lo, hi = wilson(wins, done)
        rate = wins / done if done else float("nan")
        flag = "BEATS" if lo > fair else ("loses" if hi < fair else "~")
        print(f"  vs {'/'.join(opp):<22} win {rate:.3f}  CI [{lo:.3f}, {hi:.3f}]  "
              f"n={done:<5} {flag:<5}  {secs:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
