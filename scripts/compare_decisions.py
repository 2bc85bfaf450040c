"""Check that two implementations of an agent make exactly the same decisions.

Used to prove that a speed-up changed nothing: keep the old module in a temporary folder
(never in the repository), then play seeded games in which every decision of the agent is
asked of both implementations in lockstep; the first difference is printed with the view
and the script exits 1. Example (old expert copied to /tmp/oldexp/oldagents/expert.py)::

    nice -n 10 python scripts/compare_decisions.py --old-path /tmp/oldexp \\
        --old oldagents.expert:ExpertAgent --new expert --games 200

Game ``g`` has ``2 + g % 3`` players, rules preset ``PRESETS[g % len(PRESETS)]`` and seed
``g``; the compared agent sits in every seat of even games and in one seat (the others
greedy and random) of odd games, so it meets both its own and simpler play.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from scat_env import DEFAULT_MAX_TURNS, PRESETS, GameState, Rules, action_str  # noqa: E402
from scat_env.view import make_view  # noqa: E402


def load_class(path: str):  # noqa: ANN201 - any Agent subclass
    """``"package.module:Class"`` -> the class."""
    module, sep, name = path.partition(":")
    if not sep:
        raise ValueError(f"--old must look like package.module:Class, got {path!r}")
    return getattr(importlib.import_module(module), name)


def compare(old_cls, new_spec: str, games: int,  # noqa: ANN001 - any Agent subclass
            max_turns: int = DEFAULT_MAX_TURNS) -> tuple[int, str]:
    """(decisions compared, "" or a description of the first difference)."""
    presets = sorted(PRESETS)
    compared = 0
    for g in range(games):
        n = 2 + g % 3
        rules = Rules.preset(presets[g % len(presets)])
        state = GameState(n, rules, seed=g)
        if g % 2 == 0:
            checked = set(range(n))
            others = {}
        else:
            checked = {g % n}
            others = {s: make_agent("greedy" if s % 2 else "random", seed=g * 10 + s)
                      for s in range(n) if s not in checked}
        new = {s: make_agent(new_spec, seed=g * 10 + s) for s in checked}
        old = {s: old_cls(seed=g * 10 + s) for s in checked}
        while not state.is_terminal() and state.turn < max_turns:
            seat = state.current_player
            view = make_view(state, seat)
            if seat in checked:
                a_new, a_old = new[seat].act(view), old[seat].act(view)
                compared += 1
                if a_new != a_old:
                    return compared, (
                        f"game {g} ({n} players, {presets[g % len(presets)]}), seat {seat}: "
                        f"new {action_str(a_new)} != old {action_str(a_old)}\n{view}")
                action = a_new
            else:
                action = others[seat].act(view)
            state.apply_action(action)
    return compared, ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", required=True, help="package.module:Class of the old agent")
    p.add_argument("--old-path", help="folder to put on sys.path for --old")
    p.add_argument("--new", default="expert", help="spec of the new agent")
    p.add_argument("--games", type=int, default=200)
    args = p.parse_args(argv)
    if args.old_path:
        sys.path.insert(0, args.old_path)
    compared, diff = compare(load_class(args.old), args.new, args.games)
    if diff:
        print(f"DIFFERENT after {compared} decisions: {diff}")
        return 1
    print(f"identical: {compared} decisions in {args.games} games")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
