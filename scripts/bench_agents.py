"""Time one agent's decisions: mean microseconds per ``act`` call in real games.

The hero plays seat ``g % players`` of game ``g`` (seed ``base_seed + g``) against
``--opponents``; only the hero's ``act`` calls are timed (view building and the engine are
not), so the figure is the agent's own cost per decision. Example (the expert's speed
target, 3 players against greedy)::

    nice -n 10 python scripts/bench_agents.py --agent expert --players 3 --games 300
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


class TimedAgent:
    """Forwards to an agent and adds up the wall time of its ``act`` calls."""

    def __init__(self, agent) -> None:  # noqa: ANN001 - any Agent
        self.agent = agent
        self.seconds = 0.0
        self.calls = 0

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, view) -> int:  # noqa: ANN001 - PlayerView
        start = time.perf_counter()
        action = self.agent.act(view)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return action


def bench(agent: str, opponent: str, players: int, games: int, rules: Rules,
          base_seed: int = 0) -> tuple[float, int]:
    """(mean seconds per hero decision, hero decisions) over ``games`` games."""
    total = 0.0
    calls = 0
    for g in range(games):
        hero_seat = g % players
        hero = TimedAgent(make_agent(agent, seed=base_seed + g))
        seats = [hero if s == hero_seat else make_agent(opponent, seed=base_seed + g * 10 + s)
                 for s in range(players)]
        play_game(seats, rules, seed=base_seed + g)
        total += hero.seconds
        calls += hero.calls
    return total / max(calls, 1), calls


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agent", default="expert")
    p.add_argument("--opponents", default="greedy")
    p.add_argument("--players", type=int, nargs="+", default=[3])
    p.add_argument("--games", type=int, default=300)
    p.add_argument("--rules", default="standard")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1, help="report the best of this many runs")
    args = p.parse_args(argv)
    rules = Rules.preset(args.rules)
    # Warm-up: lookup tables are built once per scoring variant, not per decision.
    bench(args.agent, args.opponents, 2, 1, rules, args.seed)
    for n in args.players:
        runs = [bench(args.agent, args.opponents, n, args.games, rules, args.seed)
                for _ in range(args.repeat)]
        per, calls = min(runs)
        print(f"{args.agent} vs {args.opponents}, {n} players, {args.games} games, "
              f"rules={args.rules}: {per * 1e6:.1f} us/decision over {calls} decisions "
              f"(best of {args.repeat})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
