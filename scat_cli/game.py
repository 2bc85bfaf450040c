"""One game of ``scat play``: a person at one seat, agents at the others.

The engine (:class:`scat_env.GameState`) runs the game and each player, the person
included, sees only its own :class:`scat_env.PlayerView`. Every decision is saved as it is
made (a JSON replay, see :mod:`scat_session.savegame`; while an opponent decides in private,
the save waits for its decision), so quitting, Ctrl-C, a closed input or a
crash never loses a game: ``scat play --resume FILE`` re-simulates it and carries on,
opponents included. The command line around it is :mod:`scat_cli.play`.

While the game is on, nothing shown or written names a card the person has not seen: the
seed is neither printed nor written in clear (the save seals it, see
:mod:`scat_session.savegame`), a declared 31 shows only the declarers' hands, and an agent that
breaks (an illegal move, an exception) is never quoted, since its error would list its legal
moves, i.e. its cards. Its seat is taken over (:func:`scat_session.turns.agent_move`, as in
the browser) and the takeover is saved, so a resume or a replay plays the game exactly as it
went.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rich.markup import escape

from agents.base import Agent
from agents.registry import make_agent
from scat_env import PlayerView, make_view
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS, action_str
from scat_env.engine import Phase
from scat_session import gamelock, keystore
from scat_session.humanio import (
    HELP,
    HINT,
    MENU,
    QUIT,
    InputError,
    knock_effect,
    menu_options,
    parse_command,
    yes,
)
from scat_session.lengths import preset_length_text
from scat_session.savegame import SavedGame, SaveError, check_writable, replay_dir
from scat_session.seating import (
    HUMAN_SEAT,
    RETIRED_WHAT,
    agent_label,
    build_agents,
    hand_over_retired,
)
from scat_session.turns import NoReplacement, Takeover, agent_move
from scat_session.words import deal_text, golf_move_text, is_golf_move, takeover_text

from .errors import CliError
from .tui import (
    action_markup,
    card_markup,
    help_view,
    make_console,
    menu_view,
    opponents_markup,
    seats_by_spec,
    showdown_view,
    summary_view,
    table_view,
)


class Quit(Exception):
    """The person chose to stop (q, Ctrl-C confirmed, or end of input): save and leave."""


class PlaySession:
    """One game between a person at ``game.human_seat`` and agents at the other seats."""

    def __init__(
        self,
        game: SavedGame,
        save_path: Path,
        *,
        color: bool = True,
        delay: float = 0.8,
        fast: bool = False,
        input_fn: Callable[[str], str] | None = None,
        width: int | None = None,
        height: int | None = None,
    ) -> None:
        self.game = game
        self.save_path = save_path
        self.console = make_console(color, width, height)
        self.delay = 0.0 if fast else delay
        self.fast = fast
        self._input = input_fn
        self.names = game.names
        self.human = game.human_seat if game.human_seat is not None else HUMAN_SEAT
        self.labels = [agent_label(p.agent) for p in game.players]
        #: Seats whose agent kind was retired since the save, handed on (said at the start).
        self._retired = [(seat, self.labels[seat]) for seat in hand_over_retired(game)]
        self.agents = build_agents(game)
        self.state = game.resimulate(agents=self.agents)
        self.labels = [agent_label(game.agent_now(seat)) for seat in range(game.num_players)]
        self._hint_agent: Agent | None = None
        self._shown = len(game.results) if game.actions else 0
        self._hand_seen = self.state.hand_number if game.actions else 0
        # A resumed game shows the table before anyone moves, whoever's turn it is.
        self._redraw = bool(game.actions)

    # -- io ---------------------------------------------------------------------------
    def print(self, *things: object, soft_wrap: bool = False) -> None:
        self.console.print(*things, soft_wrap=soft_wrap)

    def ask(self, prompt: str) -> str:
        if self._input is not None:
            return self._input(prompt)
        return self.console.input(prompt)

    def pause(self) -> None:
        if self.delay > 0:
            time.sleep(self.delay)

    def save(self) -> None:
        """Save now; a save that fails ends the game in one line, the last good save kept
        (saves are written whole: a failed one leaves the previous file as it was)."""
        try:
            self.game.save(self.save_path)
        except SaveError as exc:
            kept = (f"; the last good save is kept: scat play --resume {self.save_path}"
                    if self.save_path.is_file() else "")
            raise CliError(f"{exc}{kept}") from None

    def check_can_save(self) -> None:
        """Before the first move: the save location takes a file and the key exists (a game
        that cannot be saved is refused now, not after the person has played it)."""
        try:
            check_writable(self.save_path)
            if self.game.sealed:
                keystore.load_key(create=True)
        except (SaveError, keystore.SealError) as exc:
            raise CliError(str(exc)) from None
        self.save()

    def confirm_quit(self) -> None:
        """Ask once; raise :class:`Quit` on yes (or on Ctrl-C / end of input here)."""
        try:
            answer = self.ask("Quit now? The game is saved and can be resumed. (y/N) ")
        except (EOFError, KeyboardInterrupt):
            raise Quit from None
        if yes(answer):
            raise Quit
        self.print("[dim]Carrying on.[/]")

    def show_table(self, view: PlayerView) -> None:
        """The table as the person sees it, sized to the terminal."""
        self.print(table_view(view, self.names, self.labels, width=self.console.width,
                              height=self.console.height))
        self._redraw = False

    # -- the game loop -----------------------------------------------------------------
    def run(self) -> int:
        """Play the game to its end or until the person quits, holding it all the while:
        no other process (a ``scat serve``, another terminal) may play it meanwhile."""
        with self.hold():
            return self._run()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the game for this process (:mod:`scat_session.gamelock`), after sweeping up
        what a killed ``scat play`` left, and check the save again once held: another
        process may have moved the game on between loading the save and taking the lock,
        and the ledger then says so (no fork of the game)."""
        self._sweep()
        try:
            held = gamelock.hold_game(self.game.game_id, gamelock.terminal_holder())
        except gamelock.Busy as exc:
            raise CliError(f"game {self.game.game_id} is being played in {exc.holder}; a "
                           "game is played in one place at a time: quit it there first") from None
        except gamelock.LockError as exc:
            raise CliError(str(exc)) from None
        with held:
            if self.game.actions and self.game.human_seat is not None:
                try:
                    self.game.check_resume(str(self.save_path))
                except keystore.SealError as exc:
                    raise CliError(str(exc)) from None
            yield

    def _sweep(self) -> None:
        """Remove the temporary files and lock files a killed ``scat play`` or ``scat
        serve`` left: beside this save (of its name only), in the replay folder and beside
        the key and the ledger."""
        keystore.sweep_temp_files(self.save_path.parent, [self.save_path.name])
        if replay_dir() != self.save_path.parent:
            keystore.sweep_temp_files(replay_dir())
        keystore.sweep_temp_files(keystore.scat_home(),
                                  [keystore.KEY_FILE, keystore.LEDGER_FILE])
        gamelock.sweep_stale()

    def _run(self) -> int:
        g = self.game
        self.check_can_save()
        verb = "Resuming" if g.actions else "New game"
        # No seed here: it deals every hand. It is shown when the game is over.
        self.print(f"[bold]{verb}[/]: {g.num_players} players, {g.rules.name} rules, "
                   f"game {g.game_id}.")
        length = preset_length_text(g.rules)
        if length:
            self.print(f"[dim]{escape(length)}[/]")
        opponents = [(p.name, p.agent) for s, p in enumerate(g.players) if s != self.human]
        line = opponents_markup(opponents, g.num_players, g.rules)
        # The model card's figures are prose and wrap at words; the opponents alone stay one
        # logical line, so a long policy path copies whole.
        self.print(f"Opponents: {line}.", soft_wrap=line == seats_by_spec(opponents))
        for seat, label in self._retired:
            line = takeover_text(self.names[seat], label, g.agent_now(seat), RETIRED_WHAT)
            self.print(f"[yellow]{escape(line)}[/]")
        self.print(f"[dim]Saved as you play to {self.save_path} · ? for help[/]",
                   soft_wrap=True)  # paths stay whole, to copy and paste
        try:
            while True:
                try:
                    self._play_until_over()
                    break
                except KeyboardInterrupt:
                    self.print()
                    self.confirm_quit()
                    # A Ctrl-C may land between a move and its record: rebuild from the record.
                    self.agents = build_agents(g)
                    self.state = g.resimulate(agents=self.agents)
        except Quit:
            self.save()
            self.print(
                f"\nGame saved to {self.save_path}\n"
                f"Resume it with: scat play --resume {self.save_path}",
                soft_wrap=True,
            )
            return 0
        self._show_results()
        knocks = [s for s, a in g.actions if a == KNOCK]
        self.print(summary_view(self.state.results, self.names, self.state.winner, g.rules,
                                self.human, knocks))
        self.save()
        self.print(f"Seed {g.seed}: the game is reproducible from the replay.\n"
                   f"Replay saved to {self.save_path}\nWatch it again with: scat replay "
                   f"{self.save_path}", soft_wrap=True)
        self._offer_review()
        return 0

    def _offer_review(self) -> None:
        """``r`` at the end of a game: its review now (``scat replay --review``), each of the
        person's decisions against the strongest agent's, costliest first. Anything else,
        or no more input, leaves."""
        from scat_session.review import reviewable

        g = self.game
        if (g.human_seat is None or g.status != "finished"
                or not reviewable(g.num_players, g.rules)):
            return
        self.print(f"Review your decisions with: scat replay --review {self.save_path}",
                   soft_wrap=True)
        self.print("[dim]r: review your decisions now (a few seconds) · Enter: leave[/]")
        try:
            answer = self.ask("> ")
        except (EOFError, KeyboardInterrupt):
            return
        if answer.strip().lower() != "r":
            return
        from .review import show_review

        try:
            show_review(self.game, seat=self.human, console=self.console)
        except KeyboardInterrupt:
            self.print("[dim]Review stopped.[/]")

    def _play_until_over(self) -> None:
        state = self.state
        while not state.is_terminal():
            self._show_results()
            if state.hand_number != self._hand_seen:
                self._hand_seen = state.hand_number
                self.console.rule(deal_text(self.names, state.hand_number, state.dealer),
                                  style="dim")
            seat = state.current_player
            # Whether to declare a new 31 (declare_31: choice) is a decision nobody else
            # sees: an agent facing it gets no pause, no redraw and, if it keeps quiet, no
            # line, so neither the screen nor its timing tells the person it holds 31.
            private = state.phase is Phase.DECLARE
            if seat == self.human:
                action = self._human_turn()
            else:
                if self._redraw and not private:
                    self.show_table(make_view(state, self.human))
                if not private:
                    self.pause()
                action = self._agent_move(seat)
            top_before = state.discard[-1] if state.discard else None
            second = state.knocker is not None  # a knock now is a second knock
            # Golf: the mover's slots and the card it holds, named once the move turns
            # them face up.
            hand_before = tuple(state.hands[seat]) if is_golf_move(action) else None
            state.apply_action(action)
            self.game.record(state, seat, action)
            if not self._private_next():
                self.save()
            if private and seat != self.human and action == PASS:
                continue
            self._announce(seat, action, top_before, second, hand_before)

    def _private_next(self) -> bool:
        """Whether an opponent now decides, in private, whether to declare a new 31. The
        save waits until it has: a save written now and another right after would tell the
        person (by the file's time) that a decision they cannot see was made. Nothing is
        lost by waiting: a resume asks the agent again, and it decides the same."""
        state = self.state
        return (state.phase is Phase.DECLARE and state.current_player != self.human
                and not state.is_terminal())

    def _agent_move(self, seat: int) -> int:
        """The move of the agent at ``seat`` (:func:`scat_session.turns.agent_move`): an
        agent that breaks is replaced, and the person is told in one line which seat was
        taken over and by whom, nothing more."""
        try:
            return agent_move(self.game, self.state, self.agents, seat, self._taken_over)
        except NoReplacement as exc:
            raise CliError(str(exc)) from None

    def _taken_over(self, takeover: Takeover) -> None:
        seat = takeover.seat
        line = takeover_text(self.names[seat], self.labels[seat], takeover.spec, takeover.what)
        self.print(f"[yellow]{escape(line)}[/]")
        self.labels[seat] = agent_label(takeover.spec)

    def _announce(self, seat: int, action: int, top_before: int | None,
                  second: bool = False, hand_before: tuple[int, ...] | None = None) -> None:
        state = self.state
        if seat == self.human:
            if hand_before is not None:  # golf: both cards named are face up now
                self.print(f"You {golf_move_text(action, hand_before, card_markup)}.")
            elif action == DRAW_STOCK:
                self.print(f"You drew the {card_markup(state.drawn)} from the stock.")
            elif action == DRAW_DISCARD:
                self.print(f"You took the {card_markup(top_before)}.")  # type: ignore[arg-type]
            elif action == KNOCK:
                effect = knock_effect(self.game.rules, second)
                self.print(f"[bold yellow]You knocked![/] {effect[0].upper()}{effect[1:]}.")
            elif action < 52:
                self.print(f"You discarded the {card_markup(action)}.")
            else:  # a call some rules offer
                self.print(f"You chose: {escape(action_str(action))}.")
        else:
            self.print(action_markup(seat, action, self.names, top_before, hand_before))
        last = state.results[-1] if state.results else None
        if (action < 52 and last is not None and last.reason == "thirty_one"
                and seat in last.declarers and len(state.results) > self._shown):
            self.print(f"[bold green]{self.names[seat]} declared 31![/]")

    def _show_results(self) -> None:
        results = self.state.results
        while self._shown < len(results):
            result = results[self._shown]
            self._shown += 1
            # As the person saw it: after a declared 31 the other hands stay hidden.
            self.print(showdown_view(result.seen_by(self.human), self.game.rules, self.names))
            if not self.state.is_terminal() or self._shown < len(results):
                self._wait_for_enter()

    def _wait_for_enter(self) -> None:
        if self.fast:
            return
        try:
            self.ask("[dim]Press Enter for the next hand[/] ")
        except EOFError:
            raise Quit from None

    def _human_turn(self) -> int:
        view = make_view(self.state, self.human)
        if view.phase != "discard" or self._redraw:  # a draw or a call: the table first
            self.show_table(view)
        options = menu_options(view)
        self.print(menu_view(view, options))
        while True:
            try:
                line = self.ask("> ")
            except EOFError:
                self.print("\n[dim]End of input.[/]")
                raise Quit from None
            except KeyboardInterrupt:
                self.print()
                self.confirm_quit()
                continue
            try:
                command = parse_command(line, view, self.names)
            except InputError as exc:
                self.print(f"[bold red]✗[/] {escape(str(exc))}")
                continue
            if command.kind == "action":
                return command.action  # type: ignore[return-value]
            if command.kind == QUIT:
                self.confirm_quit()
            elif command.kind == HELP:
                self.print(help_view(self.game.rules, self.console.width,
                                     self.console.height))
            elif command.kind == HINT:
                self.print(f"[cyan]Hint:[/] {escape(self._hint(view))}")
            elif command.kind == MENU:  # Enter on an empty line: the table and menu again
                self.show_table(view)
                self.print(menu_view(view, options))

    def _hint(self, view: PlayerView) -> str:
        from scat_session.hints import hint

        if self._hint_agent is None:
            self._hint_agent = make_agent("expert", seed=self.game.seed + 7919)
        try:
            return hint(self._hint_agent, view)  # type: ignore[arg-type]
        except Exception as exc:  # a hint must never end a game
            return f"the expert could not give a hint ({exc})."
