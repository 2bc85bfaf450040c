"""``scat watch``: agents play one game while you watch, one line per action.

The table is drawn (``scat_env.render.render_table``) at the start of every hand and at the
end of the game; every decision gets a line (golf's slot moves name the cards they turn face
up); every scored hand says what happened, which rule applied, and the hands shown with
their values and what each lost or scored (after a declared 31 only the declarers' hands:
the others were never shown). ``--reveal`` shows every hand (and the card drawn from the
stock).
At a terminal each action is followed by a short pause so a person can follow;
``--fast`` (or output to a pipe or file) plays straight through.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .errors import CliError
from .play import MAX_SEED, check_seed

if TYPE_CHECKING:
    from scat_env import HandResult, Rules

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


def showdown_lines(result: HandResult, rules: Rules, names: Sequence[str]) -> list[str]:
    """What the table saw of a scored hand, in plain text under its one-line summary: the
    rule applied, then each seat dealt in with its hand and value (as the players count
    them, :func:`scat_session.humanio.value_text`), its lives lost or points scored, and where it
    stands; and where the poker tie-break decided, how.

    The hands are the public view of the result (:meth:`HandResult.seen_by` of no seat): all
    of them at a showdown, only the declarers' after a declared 31.
    """
    from scat_env.cards import card_str
    from scat_env.showdown import rule_text
    from scat_session.words import showdown_rows, tie_break_text

    shown = result.seen_by(None)
    race = bool(result.points_after)
    rows = showdown_rows(shown, rules)
    who = [names[r.seat] + (" (knocked)" if r.knocked else "") for r in rows]
    hands = [" ".join(card_str(c, symbols=True) for c in r.hand) if r.hand is not None
             else "(not shown)" for r in rows]
    changes = [f"+{r.change}" if race and r.change else f"-{r.change}" if r.change else "0"
               for r in rows]
    w_who, w_hand = max(map(len, who)), max(map(len, hands))
    w_value, w_change = max(len(r.value) for r in rows), max(map(len, changes))
    lines = [f"  rule: {rule_text(result.rule, rules)}"]
    for r, name, hand, change in zip(rows, who, hands, changes, strict=True):
        lines.append(f"  {name:<{w_who}}  {hand:<{w_hand}}  {r.value:>{w_value}}  "
                     f"{change:>{w_change}}  {r.standing}".rstrip())
    tie = tie_break_text(shown, rules, names)
    if tie:
        lines.append(f"  {tie}")
    return lines


def run(args: argparse.Namespace) -> int:
    from agents.match import play_game
    from agents.registry import make_agent
    from scat_env import GameState, action_str
    from scat_env.actions import DRAW_STOCK
    from scat_env.cards import card_str
    from scat_env.engine import Phase
    from scat_env.render import render_table
    from scat_session.words import golf_move_text, is_golf_move
    from training.tournament import parse_specs

    from .rules import rules_from_arg

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
    check_seed(args.seed)
    if args.max_turns < 1:
        raise CliError(f"--max-turns must be at least 1, got {args.max_turns}")
    rules = rules_from_arg(args.rules)
    # A watched game hides nothing from anyone (its seed is printed first), so its seed
    # need not be unsearchable like a played game's (savegame.new_seed); it must be one that
    # --seed takes back, to watch the game again.
    seed = args.seed if args.seed is not None else secrets.randbelow(MAX_SEED)
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
    # Golf: the mover's slots and the card it holds once it has drawn, so that its slot
    # move can name the cards it turns face up (on_step sees the state after each move).
    held: tuple[int, ...] = ()

    def on_step(state: GameState, seat: int, action: int) -> None:
        nonlocal scored, held
        if is_golf_move(action) and held:
            what = golf_move_text(action, held, past=False)
        else:
            what = action_str(action, symbols=True)
        if action == DRAW_STOCK and args.reveal:
            what += f" ({card_str(state.drawn, symbols=True)})"
        held = (tuple(state.hands[state.current_player])
                if state.phase is Phase.GOLF_PLACE else ())
        print(f"  {names[seat]}: {what}", file=out)
        new_results = state.results[scored:]
        scored = len(state.results)
        for result in new_results:
            print("* " + result.describe(names), file=out)
            for line in showdown_lines(result, rules, names):
                print(line, file=out)
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
