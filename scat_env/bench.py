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

``--presets all`` (or a comma-separated list) measures ``engine`` and ``env`` for every
preset, each as a percentage of the standard game's steps/s measured in turn with it; the
standard game against itself opens and closes the table, to show the noise of the run. ``--out FILE.md`` also writes that table as a page (the one in
``docs/results/preset-speed.md`` is made this way, never edited by hand). ``--repeat N``
makes each figure the fastest of N runs, which keeps out most of what other work on a shared
machine costs.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .engine import GameState
from .rules import DEFAULT_MAX_TURNS, PRESETS, Rules


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


@dataclass(frozen=True)
class PresetSpeed:
    """One row of ``--presets``: a preset's engine and env figures at one player count, and
    the standard game's, measured in turn with them (``std_*``)."""

    label: str  # the preset; "standard" and "standard (again)" open and close the table
    engine_steps: float  # engine decisions/s
    engine_games: float
    env_steps: float  # env agent steps/s
    env_games: float
    std_engine_steps: float  # the standard game's engine decisions/s, measured alongside
    std_env_steps: float

    @property
    def engine_share(self) -> float:
        return self.engine_steps / self.std_engine_steps

    @property
    def env_share(self) -> float:
        return self.env_steps / self.std_env_steps


def best_of(repeat: int, measure: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    """The run with the most steps/s of ``repeat`` runs of ``measure``: other work on the
    machine only ever slows a run down, so the fastest is the nearest to the code's own
    speed (``timeit``'s advice)."""
    return max((measure() for _ in range(repeat)), key=lambda figures: figures[0])


def _paired(repeat: int, preset: Callable[[], tuple[float, float]],
            standard: Callable[[], tuple[float, float]]
            ) -> tuple[tuple[float, float], tuple[float, float]]:
    """The fastest of ``repeat`` runs of a preset and of the standard game, run in turn
    (standard, preset, standard, preset...), so that both meet the same machine: a shared
    machine's speed drifts by tens of percent over a few minutes."""
    runs = [(standard(), preset()) for _ in range(repeat)]
    return (max((p for _, p in runs), key=lambda f: f[0]),
            max((s for s, _ in runs), key=lambda f: f[0]))


def bench_presets(names: Sequence[str], num_players: int, seconds: float, seed: int = 0,
                  report: Callable[[PresetSpeed], None] | None = None,
                  repeat: int = 1) -> list[PresetSpeed]:
    """A row for the standard game (against itself: the noise of a pair), each preset of
    ``names`` (the standard game is not measured twice) and the standard game again at the
    end. Each figure is the fastest of ``repeat`` runs of ``seconds``, the preset's and the
    standard game's run in turn. ``report`` is called with each row once it is measured."""
    from .aec_env import env

    standard = Rules()

    def engine_of(rules: Rules) -> Callable[[], tuple[float, float]]:
        return lambda: bench_engine(num_players, seconds, rules, seed)

    def env_of(rules: Rules) -> Callable[[], tuple[float, float]]:
        return lambda: bench_env(lambda: env(num_players=num_players, rules=rules), seconds,
                                 seed)

    order = ["standard", *[n for n in names if n != "standard"], "standard"]
    rows = []
    for i, name in enumerate(order):
        rules = Rules.preset(name)
        eng, std_eng = _paired(repeat, engine_of(rules), engine_of(standard))
        envs, std_env = _paired(repeat, env_of(rules), env_of(standard))
        label = "standard (again)" if i and i == len(order) - 1 else name
        rows.append(PresetSpeed(label, eng[0], eng[1], envs[0], envs[1], std_eng[0],
                                std_env[0]))
        if report is not None:
            report(rows[-1])
    return rows


def preset_table(rows: Sequence[PresetSpeed]) -> list[str]:
    """The rows as a markdown table, each preset against the standard game's run alongside."""
    lines = ["| preset | engine decisions/s | standard alongside | % of standard "
             "| engine games/s | env steps/s | standard alongside | % of standard "
             "| env games/s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r.label}` | {r.engine_steps:,.0f} | {r.std_engine_steps:,.0f} | "
                     f"{r.engine_share:.0%} | {r.engine_games:,.1f} | {r.env_steps:,.0f} | "
                     f"{r.std_env_steps:,.0f} | {r.env_share:.0%} | {r.env_games:,.1f} |")
    return lines


def slowest(rows: Sequence[PresetSpeed]) -> str:
    """One sentence naming the slowest preset of each mode, as a percentage of standard."""
    presets = [r for r in rows if r.label not in ("standard", "standard (again)")]
    if not presets:
        return "Only the standard game was measured."
    eng = min(presets, key=lambda r: r.engine_share)
    env_ = min(presets, key=lambda r: r.env_share)
    return (f"Slowest: engine `{eng.label}` at {eng.engine_share:.0%} of standard, "
            f"env `{env_.label}` at {env_.env_share:.0%}.")


def preset_page(rows: Sequence[PresetSpeed], command: str, num_players: int,
                seconds: float, repeat: int = 1) -> str:
    """The page ``--out`` writes: how it was made, on what, and the table."""
    return "\n".join([
        "# Speed of every preset",
        "",
        "Generated by the command below; do not edit by hand, run it again.",
        "",
        "```",
        command,
        "```",
        "",
        f"Random legal play at {num_players} players, one process, on a machine with "
        f"{os.cpu_count()} CPUs (Python {platform.python_version()}, {platform.machine()}). "
        f"Each preset's figure is the fastest of {repeat} run{'s' if repeat != 1 else ''} of "
        f"{seconds:g} s, and so is the standard game's beside it, run in turn with the "
        "preset's (standard, preset, standard...): the speed of a shared machine drifts by "
        "tens of percent within a few minutes, so each preset is compared with the standard "
        "game measured at the same time. The first and last rows measure the standard game "
        "against itself, at the start and at the end: how far they are from 100% is the "
        "noise of the run.",
        "",
        "- engine: decisions/s of `GameState` alone (what search agents and batched trainers "
        "pay per step);",
        "- env: agent steps/s of `scat_env.env()` through `agent_iter()/last()/step()` with "
        "observations and masks;",
        "- % of standard: the preset's steps/s over the standard game's alongside. Games/s "
        "differ for reasons of the rules, not of speed: a throw-down hand is a few decisions "
        "long, a `min_knock_21` hand often runs until the stock is empty, a points race "
        "lasts dozens of hands.",
        "",
        *preset_table(rows),
        "",
        slowest(rows),
        "",
    ])


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line and exit 2, like every ``scat`` command."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None, prog: str = "python -m scat_env.bench") -> int:
    """Run the benchmark; ``prog`` is the command name its help and errors show (``scat
    bench`` passes its own)."""
    parser = _OneLineParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=None,
                        help="player counts to measure (default: 2 3 6; with --presets: 3)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="seconds per measurement (default: 3)")
    parser.add_argument("--mode", choices=["engine", "env", "wrapped", "all"], default="all")
    parser.add_argument("--rules", default="standard", help="rules preset or YAML path")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--presets", metavar="all|NAME,NAME",
                        help="measure engine and env for the standard game and these presets "
                             "('all': every preset), each as a %% of the standard game")
    parser.add_argument("--repeat", type=int, default=1,
                        help="each figure is the fastest of this many runs (default: 1)")
    parser.add_argument("--out", type=Path, metavar="FILE.md",
                        help="with --presets: also write the table as a page")
    args = parser.parse_args(argv)
    if args.players is None:
        args.players = [3] if args.presets else [2, 3, 6]
    for n in args.players:
        if not 2 <= n <= 10:
            parser.error(f"--players: {n} is not between 2 and 10")
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.presets is not None:
        return _presets_main(parser, args, argv, prog)
    if args.out is not None:
        parser.error("--out writes the per-preset page: give --presets too")
    try:
        rules = Rules.preset(args.rules)
    except ValueError as exc:
        parser.error(f"--rules: {exc}")

    from .aec_env import env

    modes = ["engine", "env", "wrapped"] if args.mode == "all" else [args.mode]
    best = f", fastest of {args.repeat}" if args.repeat > 1 else ""
    print(f"scat-env benchmark: random legal play, rules={rules.name}, "
          f"{args.seconds:g}s per figure{best}, one process")
    print(f"{'mode':<8} {'players':>7} {'steps/s':>12} {'games/s':>10}")
    for n in args.players:
        for mode in modes:
            if mode == "engine":
                sps, gps = best_of(args.repeat, lambda n=n: bench_engine(
                    n, args.seconds, rules, args.seed))
            elif mode == "env":
                sps, gps = best_of(args.repeat, lambda n=n: bench_env(
                    lambda: env(num_players=n, rules=rules), args.seconds, args.seed))
            else:
                sps, gps = best_of(args.repeat, lambda n=n: bench_env(
                    lambda: _wrapped_env(n, rules), args.seconds, args.seed))
            print(f"{mode:<8} {n:>7} {sps:>12,.0f} {gps:>10,.1f}", flush=True)
    print("engine = decisions/s of GameState alone; env = agent steps/s of scat_env.env() "
          "via agent_iter/last/step; wrapped = the same raw_env inside PettingZoo's "
          "standard wrapper chain (reference).")
    return 0


def _print_row(row: PresetSpeed) -> None:
    print(f"{row.label:<28} {row.engine_steps:>10,.0f} {row.engine_share:>5.0%} "
          f"{row.env_steps:>9,.0f} {row.env_share:>5.0%}", flush=True)


def _presets_main(parser: argparse.ArgumentParser, args: argparse.Namespace,
                  argv: Sequence[str] | None, prog: str) -> int:
    """``--presets``: one table per player count, and the page with ``--out``."""
    if args.rules != "standard" or args.mode != "all":
        parser.error("--presets measures engine and env of each preset: leave out --rules "
                     "and --mode")
    if len(args.players) > 1 and args.out is not None:
        parser.error("--out writes one table: give one player count")
    names = [n.strip() for n in args.presets.split(",") if n.strip()]
    if names == ["all"]:
        names = list(PRESETS)
    if not names:
        parser.error("--presets: name at least one preset, or 'all'")
    for name in names:
        if name not in PRESETS:
            parser.error(f"--presets: unknown preset {name[:40]!r}; 'all' or names that "
                         "'scat rules' lists")
    if args.out is not None and not args.out.parent.is_dir():
        parser.error(f"--out: no folder {str(args.out.parent)!r}")
    for n in args.players:
        print(f"scat-env benchmark: every preset against standard, {n} players, "
              f"{args.seconds:g}s per run, fastest of {args.repeat}, one process", flush=True)
        print(f"{'preset':<28} {'engine/s':>10} {'%':>5} {'env/s':>9} {'%':>5}", flush=True)
        rows = bench_presets(names, n, args.seconds, args.seed, report=_print_row,
                             repeat=args.repeat)
        print(slowest(rows))
        if args.out is not None:
            words = [prog, *(argv if argv is not None else sys.argv[1:])]
            args.out.write_text(preset_page(rows, " ".join(words), n, args.seconds,
                                            args.repeat), encoding="utf-8")
            print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
