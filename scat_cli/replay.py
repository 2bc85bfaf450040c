"""``scat replay FILE``: watch a saved game again, turn by turn.

The file (see :mod:`scat_session.savegame`) holds the setup and the decisions; the game is
re-simulated on the engine and every recorded hand result is checked before anything is
shown, so what you watch is exactly what was played. A file that was edited, truncated or
written by an engine that shuffles differently is refused with one clear line (exit 2).

By default you see the table as the human player saw it; ``--reveal`` turns every hand
face up (and shows what each player drew from the stock). A game still in progress shows
only what its player saw: an opponent keeping a new 31 quiet gets no line, no pause and no
count. Enter advances one turn, ``a``
plays the rest automatically, ``q`` stops; ``--auto`` plays it all with ``--delay`` between
turns.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import RenderableType

from scat_env import GameState, HandResult, Phase, make_view
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK
from scat_session.savegame import ReplayError, SavedGame
from scat_session.seating import agent_label
from scat_session.words import deal_text, is_golf_move

from .tui import (
    action_markup,
    card_markup,
    make_console,
    seats_by_spec,
    showdown_view,
    summary_view,
    table_view,
)


class Viewer:
    """Steps through a verified :class:`SavedGame`, one turn at a time."""

    def __init__(self, game: SavedGame, *, reveal: bool = False, seat: int | None = None,
                 color: bool = True, auto: bool = False, delay: float = 0.6,
                 width: int | None = None) -> None:
        self.game = game
        self.reveal = reveal
        if seat is None:
            seat = game.human_seat if game.human_seat is not None else 0
        self.seat = seat
        self.console = make_console(color, width)
        self.auto = auto
        self.delay = delay
        self.names = game.names
        self.labels = [agent_label(p.agent) for p in game.players]

    def _step_pause(self) -> bool:
        """Wait between turns; ``False`` means the person asked to stop."""
        if self.auto:
            if self.delay > 0:
                time.sleep(self.delay)
            return True
        try:
            answer = self.console.input("[dim]Enter: next turn · a: play to the end · "
                                        "q: stop[/] ").strip().lower()
        except EOFError:  # input closed: show the rest without waiting
            self.auto, self.delay = True, 0.0
            return True
        if answer == "q":
            return False
        if answer == "a":
            self.auto = True
        return True

    def _table(self, state: object) -> None:
        view = make_view(state, self.seat)  # type: ignore[arg-type]
        revealed = ({s: list(h) for s, h in enumerate(state.hands)}  # type: ignore[attr-defined]
                    if self.reveal else None)
        self.console.print(table_view(view, self.names, self.labels, revealed=revealed,
                                      width=self.console.width))

    def _showdown(self, result: HandResult) -> RenderableType:
        """A hand's end as the watched seat saw it (after a declared 31 the other hands
        stay hidden), or every hand with ``--reveal``."""
        shown = result if self.reveal else result.seen_by(self.seat)
        return showdown_view(shown, self.game.rules, self.names)

    def run(self) -> int:
        game = self.game
        print_ = self.console.print
        players = seats_by_spec([(p.name, p.agent) for p in game.players])
        # The seed of a game in progress would deal its cards: it is shown once it is over.
        seed = f"seed {game.seed}" if game.status == "finished" else f"game {game.game_id}"
        print_(
            f"[bold]Replay[/] of a {game.num_players}-player game, {game.rules.name} rules, "
            f"{seed}, {game.created or 'date unknown'} "
            f"({'finished' if game.status == 'finished' else 'unfinished'}).\n"
            f"Players: {players}."
        )
        state = game.new_state()
        shown = 0
        hand_seen = 0
        turn_lines: list[str] = []
        stopped = False
        # While the game is on, its player's own decisions and the public ones only.
        private = game.private_flags() if game.sealed else [False] * len(game.actions)
        for (seat, action), hidden in zip(game.actions, private, strict=True):
            if state.hand_number != hand_seen:
                while shown < len(state.results):  # dealt 31s scored before any play
                    print_(self._showdown(state.results[shown]))
                    shown += 1
                hand_seen = state.hand_number
                self.console.rule(deal_text(self.names, state.hand_number, state.dealer),
                                  style="dim")
                self._table(state)
            elif (state.phase in (Phase.DRAW, Phase.GOLF_DRAW)
                  and (seat == self.seat or self.reveal) and not turn_lines):
                self._table(state)
            top_before = state.discard[-1] if state.discard else None
            # Golf: the cards a slot move turns face up, named in its line.
            hand_before = tuple(state.hands[seat]) if is_golf_move(action) else None
            state.apply_action(action)
            if not hidden:
                line = action_markup(seat, action, self.names, top_before, hand_before)
                if action == DRAW_STOCK and (self.reveal or seat == self.seat):
                    line = line.replace("drew from the stock",
                                        f"drew the {card_markup(state.drawn)} from the stock")
                turn_lines.append(line)
            if action not in (DRAW_STOCK, DRAW_DISCARD):  # a turn ends with anything else
                if turn_lines:
                    print_("\n".join(turn_lines))
                turn_lines = []
                if len(state.results) > shown:
                    last = state.results[-1]
                    if last.reason == "thirty_one" and seat in last.declarers:
                        print_(f"[bold green]{self.names[seat]} declared 31![/]")
                    while shown < len(state.results):
                        print_(self._showdown(state.results[shown]))
                        shown += 1
                if (not state.is_terminal() and not self._private_next(state)
                        and not self._step_pause()):
                    stopped = True
                    break
        if stopped:
            print_("[dim]Replay stopped.[/]")
            return 0
        if state.is_terminal():
            knocks = [s for s, a in game.actions if a == KNOCK]
            print_(summary_view(state.results, self.names, state.winner, game.rules,
                                game.human_seat, knocks))
        else:
            print_("[dim]The saved game stops here (it was not finished; resume it with "
                   "scat play --resume FILE).[/]")
        print_(f"[dim]{verified_text(private.count(False), len(state.results))}[/]")
        return 0

    def _private_next(self, state: GameState) -> bool:
        """Whether an opponent of the player of a game in progress now decides in private
        (whether to declare a new 31): the pause waits until it has, as ``scat play`` did."""
        return (self.game.sealed and state.phase is Phase.DECLARE
                and state.current_player != self.seat)


def verified_text(decisions: int, hands: int) -> str:
    """The replay's closing line, in words a person reads ("1 hand", never "1 hands")."""
    def count(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    return (f"Verified: {count(decisions, 'decision')} and {count(hands, 'hand')} "
            "re-simulated exactly as recorded.")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "replay",
        help="watch a saved game again, turn by turn",
        description=(
            "Re-simulate a saved game (JSON from scat play) and show it turn by turn. The file "
            "is checked against the engine first: a changed or corrupt file is refused."
        ),
    )
    p.add_argument("file", help="a replay JSON written by scat play")
    p.add_argument("--auto", action="store_true", help="play through without waiting for Enter")
    p.add_argument("--delay", type=float, default=0.6, metavar="SECONDS",
                   help="pause between turns with --auto (default 0.6)")
    p.add_argument("--fast", action="store_true", help="--auto with no pauses")
    p.add_argument("--reveal", action="store_true",
                   help="show every hand face up, and what each player drew")
    p.add_argument("--seat", type=int, default=None,
                   help="whose eyes to watch through (default the human player)")
    p.add_argument("--review", action="store_true",
                   help="instead of the turns, review a finished game: each of the player's "
                        "decisions against the strongest agent's, the costliest first, "
                        "judged from what the player could see then")
    p.add_argument("--worlds", type=int, default=None, metavar="W",
                   help="with --review: sampled deals each decision is played out on "
                        "(default 96; more is steadier and slower)")
    p.add_argument("--no-color", action="store_true", help="plain text, no colours")
    p.add_argument("--width", type=int, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .play import check_width

    check_width(args.width)
    if args.delay < 0:
        raise ValueError(f"--delay must be >= 0, got {args.delay}")
    game = SavedGame.load(Path(args.file))
    try:
        game.resimulate()
    except ReplayError as exc:
        raise ReplayError(f"{args.file}: {exc}") from None
    if args.seat is not None and not 0 <= args.seat < game.num_players:
        raise ValueError(f"--seat must be 0..{game.num_players - 1}, got {args.seat}")
    # A game still in progress belongs to the person playing it: showing them cards they have
    # not seen (every hand, or another seat's) would let them look and then resume. The
    # status was checked against the moves by resimulate(), so editing it does not help.
    hidden = args.reveal or (args.seat is not None and args.seat != game.human_seat)
    if hidden and game.human_seat is not None and game.status != "finished":
        what = "--reveal" if args.reveal else "--seat of another player"
        raise ValueError(f"{what} shows cards the player has not seen: only for a finished "
                         f"game, and this one is in progress (scat play --resume {args.file})")
    if args.worlds is not None and not args.review:
        raise ValueError("--worlds is for --review")
    if args.review and (args.reveal or args.auto or args.fast):
        what = "--reveal" if args.reveal else ("--auto" if args.auto else "--fast")
        raise ValueError(f"{what} is for watching the turns; --review shows the review only")
    if args.review:
        from .review import show_review

        if game.status != "finished":
            raise ValueError(f"--review is for a finished game, and this one is in progress "
                             f"(scat play --resume {args.file})")
        return show_review(game, seat=args.seat, worlds=args.worlds, color=not args.no_color,
                           width=args.width)
    viewer = Viewer(game, reveal=args.reveal, seat=args.seat, color=not args.no_color,
                    auto=args.auto or args.fast, delay=0.0 if args.fast else args.delay,
                    width=args.width)
    return viewer.run()
