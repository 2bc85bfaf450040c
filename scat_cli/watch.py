"""``scat watch``: agents play one game while you watch, one line per action.

The table is drawn (``scat_env.render.render_table``) at the start of every hand and at the
end of the game; every decision gets a line; every scored hand says what happened and which
rule applied. ``--reveal`` shows every hand (and the card drawn from the stock).
At a terminal each action is followed by a short pause so a person can follow;
``--fast`` (or output to a pipe or file) plays straight through.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

from .errors import CliError

#: Seconds between actions when watching at a terminal.
TERMINAL_DELAY = 0.4


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from scat_env import DEFAULT_MAX_TURNS

    p = subparsers.add_parser(
        "watch",
        help="watch agents play a game of Scat, action by action",
        description=(__doc__ or "").split("\n\n", 1)[-1].replace("``", ""),
    )
    p.add_argument("--agents", required=True, metavar="SPECS",
                   help="one agent spec per seat, comma-separated, e.g. expert,greedy,random")
    p.add_argument("--rules", default="standard", help="rules preset name or YAML file")
    p.add_argument("--seed", type=int, default=None,
                   help="deal seed (default: a random one, printed so the game can be replayed)")
    p.add_argument("--reveal", action="store_true", help="show every player's cards")
    p.add_argument("--delay", type=float, default=None,
                   help=f"seconds to pause after each action (default {TERMINAL_DELAY} at a "
                        "terminal, 0 into a pipe or file)")
    p.add_argument("--fast", action="store_true", help="no pauses (--delay 0)")
    p.add_argument("--tables", action="store_true",
                   help="draw the table after every action, not only at each new hand")
    p.add_argument("--single-hand", action="store_true", help="play one hand only")
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS,
                   help=f"turns per hand before the game is cut off (default {DEFAULT_MAX_TURNS})")
    p.set_defaults(func=run)


def seat_names(specs: list[str]) -> list[str]:
    """Readable, unique seat names: the spec, numbered when a spec sits more than once."""
    names = []
    for s, spec in enumerate(specs):
        names.append(f"{spec}#{specs[:s + 1].count(spec)}" if specs.count(spec) > 1 else spec)
    return names


def run(args: argparse.Namespace) -> int:
    from agents.match import play_game
    from agents.registry import make_agent
    from scat_env import GameState, Rules, action_str
    from scat_env.actions import DRAW_STOCK
    from scat_env.cards import card_str
    from scat_env.render import render_table
    from training.tournament import parse_specs

    specs = parse_specs(args.agents)
    if not 2 <= len(specs) <= 10:
        raise CliError(f"{len(specs)} agents: Scat is played by 2 to 10 players, one spec per seat")
    if args.delay is not None and args.delay < 0:
        raise CliError(f"--delay must be non-negative, got {args.delay}")
    if args.fast:
        delay = 0.0
    elif args.delay is not None:
        delay = args.delay
    else:
        delay = TERMINAL_DELAY if sys.stdout.isatty() else 0.0
    if args.max_turns < 1:
        raise CliError(f"--max-turns must be at least 1, got {args.max_turns}")
    rules = Rules.preset(args.rules)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    agents = [make_agent(spec, seed=s) for s, spec in enumerate(specs)]
    for agent in agents:  # a policy that cannot play this table says so before the deal
        agent.check_table(len(specs), rules)
    names = seat_names(specs)
    out = sys.stdout

    def show(state: GameState) -> None:
        print(render_table(state, reveal=args.reveal, names=names), file=out)

    print(f"scat watch --agents {','.join(specs)} --rules {args.rules} --seed {seed}", file=out)
    # The same seed gives play_game the same first deal: draw it before play starts.
    show(GameState(len(specs), rules, seed=seed, single_hand=args.single_hand))
    scored = 0

    def on_step(state: GameState, seat: int, action: int) -> None:
        nonlocal scored
        what = action_str(action, symbols=True)
        if action == DRAW_STOCK and args.reveal:
            what += f" ({card_str(state.drawn, symbols=True)})"
        print(f"  {names[seat]}: {what}", file=out)
        new_results = state.results[scored:]
        scored = len(state.results)
        for result in new_results:
            print("* " + result.describe(names), file=out)
        if new_results or args.tables:
            print(file=out)
            show(state)
        out.flush()
        if delay:
            time.sleep(delay)

    try:
        record = play_game(agents, rules, seed=seed, single_hand=args.single_hand,
                           max_turns=args.max_turns, on_step=on_step)
    except BrokenPipeError:  # piped into head/less and closed: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if record.truncated:
        print(f"game cut off after {args.max_turns} turns in one hand: no winner", file=out)
    elif record.winner is not None:
        print(f"winner: {names[record.winner]} (seat {record.winner}) after "
              f"{len(record.results)} hands, {record.decisions} decisions", file=out)
    else:
        print(f"hand over after {record.decisions} decisions", file=out)
    return 0
