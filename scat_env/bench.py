"""Speed benchmark: ``python -m scat_env.bench`` (also ``scat bench``).

Plays random legal games and prints steps per second for

- ``engine``: :class:`~scat_env.engine.GameState` alone, no views or observations
  (decisions/s: what search agents and batched trainers pay per step);
- ``env``: ``scat_env.env()`` through the standard ``agent_iter()/last()/step()`` loop with
  observations and masks (agent steps/s: what a PettingZoo user pays);
- ``wrapped``: the same raw env inside PettingZoo's usual wrapper chain
  (TerminateIllegal + AssertOutOfBounds + OrderEnforcing), the reference run in the same
  process that shows what doing the checks inside ``env()`` saves.

It prints figures; it asserts nothing about time (machines differ).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from .engine import GameState
from .rules import DEFAULT_MAX_TURNS, Rules


def bench_engine(num_players: int, seconds: float, rules: Rules, seed: int = 0) -> tuple[float, float]:
    """Decisions/s and games/s of random legal play on the bare engine."""
    rng = random.Random(seed)
    pick = rng.random
    decisions = games = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        state = GameState(num_players, rules, seed=seed + games)
        games += 1
        apply, legal = state.apply_action, state.legal_actions
        while not state.is_terminal() and state.turn < DEFAULT_MAX_TURNS:
            acts = legal()
            apply(acts[int(pick() * len(acts))])
            decisions += 1
    dt = time.perf_counter() - t0
    return decisions / dt, games / dt


def _wrapped_env(num_players: int, rules: Rules):
    from pettingzoo.utils import wrappers

    from .aec_env import raw_env

    e = raw_env(num_players=num_players, rules=rules)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def bench_env(make: Callable[[], object], seconds: float, seed: int = 0) -> tuple[float, float]:
    """Agent steps/s and games/s through ``agent_iter()/last()/step()``."""
    e = make()
    e.reset(seed=seed)  # type: ignore[attr-defined]
    rng = random.Random(seed)
    pick = rng.random
    steps = games = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        e.reset()  # type: ignore[attr-defined]
        games += 1
        for _agent in e.agent_iter():  # type: ignore[attr-defined]
            obs, _rew, term, trunc, _info = e.last()  # type: ignore[attr-defined]
            if term or trunc:
                e.step(None)  # type: ignore[attr-defined]
                continue
            legal = obs["action_mask"].nonzero()[0]
            e.step(int(legal[int(pick() * len(legal))]))  # type: ignore[attr-defined]
            steps += 1
    dt = time.perf_counter() - t0
    return steps / dt, games / dt


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line and exit 2, like every ``scat`` command."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None, prog: str = "python -m scat_env.bench") -> int:
    """Run the benchmark; ``prog`` is the command name its help and errors show (``scat
    bench`` passes its own)."""
    parser = _OneLineParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 6],
                        help="player counts to measure (default: 2 3 6)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="seconds per measurement (default: 3)")
    parser.add_argument("--mode", choices=["engine", "env", "wrapped", "all"], default="all")
    parser.add_argument("--rules", default="standard", help="rules preset or YAML path")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for n in args.players:
        if not 2 <= n <= 10:
            parser.error(f"--players: {n} is not between 2 and 10")
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    rules = Rules.preset(args.rules)

    from .aec_env import env

    modes = ["engine", "env", "wrapped"] if args.mode == "all" else [args.mode]
    print(f"scat-env benchmark: random legal play, rules={rules.name}, "
          f"{args.seconds:g}s per figure, one process")
    print(f"{'mode':<8} {'players':>7} {'steps/s':>12} {'games/s':>10}")
    for n in args.players:
        for mode in modes:
            if mode == "engine":
                sps, gps = bench_engine(n, args.seconds, rules, args.seed)
            elif mode == "env":
                sps, gps = bench_env(lambda n=n: env(num_players=n, rules=rules), args.seconds,
                                     args.seed)
            else:
                sps, gps = bench_env(lambda n=n: _wrapped_env(n, rules), args.seconds, args.seed)
            print(f"{mode:<8} {n:>7} {sps:>12,.0f} {gps:>10,.1f}", flush=True)
    print("engine = decisions/s of GameState alone; env = agent steps/s of scat_env.env() "
          "via agent_iter/last/step; wrapped = the same raw_env inside PettingZoo's "
          "standard wrapper chain (reference).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
