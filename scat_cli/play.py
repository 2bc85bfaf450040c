"""``scat play``: a game of Scat against agents, in the terminal.

You sit at seat 0 ("You"); every other seat is an agent from :mod:`agents.registry`. The
engine (:class:`scat_env.GameState`) runs the game and each player, you included, sees only
its own :class:`scat_env.PlayerView`. Every decision is saved as it is made (a JSON replay,
see :mod:`scat_cli.savegame`), so quitting, Ctrl-C, a closed input or a crash never loses a
game: ``scat play --resume FILE`` re-simulates it and carries on, opponents included.

Examples::

    scat play                                  # 3 players, standard rules, best opponents
    scat play --players 4 --opponents greedy --rules ride_the_bus
    scat play --opponents expert,ppo:policies/ppo_3p.zip --seed 7 --fast
    scat play --resume ~/.scat/replays/scat-20250101-120000-3p-seed7.json
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from agents.base import Agent
from agents.registry import make_agent
from scat_env import GameState, Rules, make_view
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .humanio import HELP, HINT, MENU, QUIT, InputError, menu_options, parse_command, yes
from .savegame import (
    HUMAN,
    PlayerEntry,
    ReplayError,
    SavedGame,
    agent_seed,
    default_path,
    new_seed,
)
from .tui import (
    action_markup,
    card_markup,
    deal_text,
    default_names,
    help_view,
    make_console,
    menu_view,
    showdown_view,
    summary_view,
    table_view,
)

#: Where a shipped policy may name itself the default opponent (helper D's policies/).
POLICY_DIRS = (Path.cwd() / "policies", Path(__file__).resolve().parents[1] / "policies")
DEFAULT_FILES = ("default.txt", "default", "DEFAULT")
FALLBACK_OPPONENTS = ("expert", "greedy", "random")
HINT_AGENTS = ("expert", "greedy")
HUMAN_SEAT = 0


def _cli_error(message: str) -> Exception:
    """``scat_cli.main.CliError``, imported late: main imports this module."""
    from .main import CliError as MainCliError

    return MainCliError(message)


# -- opponents ----------------------------------------------------------------------------
def _try_agent(spec: str) -> bool:
    try:
        make_agent(spec, seed=0)
    except Exception:  # a broken or missing policy must never stop a person from playing
        return False
    return True


def shipped_policy_specs() -> list[str]:
    """Specs of the shipped default policy, from ``policies/default.txt`` (one spec line,
    ``#`` comments allowed) or a ``policies/default.zip``/``.pt`` file (``ppo:PATH``)."""
    specs: list[str] = []
    for folder in dict.fromkeys(POLICY_DIRS):
        for fname in DEFAULT_FILES:
            f = folder / fname
            if f.is_file():
                for line in f.read_text(encoding="utf-8").splitlines():
                    line = line.split("#", 1)[0].strip()
                    if line:
                        specs.append(line)
                        name, sep, arg = line.partition(":")
                        if sep and arg and not Path(arg).is_absolute():
                            # a path relative to the repository, wherever scat is run from
                            specs.append(f"{name}:{folder.parent / arg}")
                        break
        for ext in ("zip", "pt"):
            f = folder / f"default.{ext}"
            if f.is_file():
                specs.append(f"ppo:{f}")
    return specs


def default_opponent() -> str:
    """The strongest opponent this checkout can field: a shipped policy, else ``expert``,
    else ``greedy``, else ``random``."""
    for spec in [*shipped_policy_specs(), *FALLBACK_OPPONENTS]:
        if _try_agent(spec):
            return spec
    return "random"


def opponent_specs(players: int | None, opponents: str | None) -> tuple[int, list[str]]:
    """Resolve ``--players`` and ``--opponents`` into a player count and one spec per
    opponent. One spec is used for every opponent; a list sets the count if none is given."""
    specs = [s.strip() for s in opponents.split(",")] if opponents else []
    if any(not s for s in specs):
        raise _cli_error(f"--opponents has an empty entry: {opponents!r}")
    if players is None:
        players = len(specs) + 1 if len(specs) > 1 else 3
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise _cli_error(f"--players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {players}")
    if not specs:
        specs = [default_opponent()]
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise _cli_error(
            f"--opponents lists {len(specs)} agents for {players - 1} opponents "
            f"(--players {players}); give one spec for all or one per opponent"
        )
    return players, specs


def build_agents(game: SavedGame) -> list[Agent | None]:
    """One agent per seat (``None`` for the human), seeded as in :mod:`agents.match`."""
    agents: list[Agent | None] = []
    for p in game.players:
        if p.agent == HUMAN:
            agents.append(None)
            continue
        agent = make_agent(p.agent, seed=p.seed)
        agent.reset(p.seed)
        agents.append(agent)
    return agents


def new_game(players: int, specs: list[str], rules: Rules, seed: int, name: str) -> SavedGame:
    names = default_names(players, HUMAN_SEAT)
    names[HUMAN_SEAT] = name
    entries = [PlayerEntry(name, HUMAN, None)]
    entries += [PlayerEntry(names[s], specs[s - 1], agent_seed(seed, s)) for s in range(1, players)]
    first_dealer = GameState(players, rules, seed=seed).dealer
    return SavedGame(players, rules, seed, first_dealer, entries, human_seat=HUMAN_SEAT)


# -- the session --------------------------------------------------------------------------
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
    ) -> None:
        self.game = game
        self.save_path = save_path
        self.console = make_console(color, width)
        self.delay = 0.0 if fast else delay
        self.fast = fast
        self._input = input_fn
        self.names = game.names
        self.human = game.human_seat if game.human_seat is not None else HUMAN_SEAT
        self.labels = ["" if p.agent == HUMAN else p.agent for p in game.players]
        self.agents = build_agents(game)
        self.state = game.resimulate(agents=self.agents)
        self._hint_agent: Agent | None = None
        self._shown = len(game.results) if game.actions else 0
        self._hand_seen = self.state.hand_number if game.actions else 0

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
        self.game.save(self.save_path)

    def confirm_quit(self) -> None:
        """Ask once; raise :class:`Quit` on yes (or on Ctrl-C / end of input here)."""
        try:
            answer = self.ask("Quit now? The game is saved and can be resumed. (y/N) ")
        except (EOFError, KeyboardInterrupt):
            raise Quit from None
        if yes(answer):
            raise Quit
        self.print("[dim]Carrying on.[/]")

    # -- the game loop -----------------------------------------------------------------
    def run(self) -> int:
        g = self.game
        opponents = ", ".join(f"{self.names[s]} ({self.labels[s]})"
                              for s in range(g.num_players) if s != self.human)
        verb = "Resuming" if g.actions else "New game"
        self.print(
            f"[bold]{verb}[/]: {g.num_players} players, {g.rules.name} rules, seed {g.seed}. "
            f"Opponents: {opponents}.\n[dim]Saved as you play to {self.save_path}"
            " · ? for help[/]",
            soft_wrap=True,  # paths and commands stay whole, to copy and paste
        )
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
        self.print(f"Replay saved to {self.save_path}\nWatch it again with: scat replay "
                   f"{self.save_path}", soft_wrap=True)
        return 0

    def _play_until_over(self) -> None:
        state = self.state
        while not state.is_terminal():
            self._show_results()
            if state.hand_number != self._hand_seen:
                self._hand_seen = state.hand_number
                self.console.rule(deal_text(self.names, state.hand_number, state.dealer),
                                  style="dim")
            seat = state.current_player
            if seat == self.human:
                action = self._human_turn()
            else:
                self.pause()
                action = self.agents[seat].act(make_view(state, seat))  # type: ignore[union-attr]
            top_before = state.discard[-1] if state.discard else None
            state.apply_action(action)
            self.game.record(state, seat, action)
            self.save()
            self._announce(seat, action, top_before)

    def _announce(self, seat: int, action: int, top_before: int | None) -> None:
        state = self.state
        if seat == self.human:
            if action == DRAW_STOCK:
                self.print(f"You drew the {card_markup(state.drawn)} from the stock.")
            elif action == DRAW_DISCARD:
                self.print(f"You took the {card_markup(top_before)}.")  # type: ignore[arg-type]
            elif action == KNOCK:
                self.print("[bold yellow]You knocked![/] Everyone else gets one more turn.")
            elif action < 52:
                self.print(f"You discarded the {card_markup(action)}.")
        else:
            self.print(action_markup(seat, action, self.names, top_before))
        last = state.results[-1] if state.results else None
        if (action < 52 and last is not None and last.reason == "thirty_one"
                and seat in last.declarers and len(state.results) > self._shown):
            self.print(f"[bold green]{self.names[seat]} declared 31![/]")

    def _show_results(self) -> None:
        results = self.state.results
        while self._shown < len(results):
            result = results[self._shown]
            self._shown += 1
            self.print(showdown_view(result, self.game.rules, self.names))
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
        state = self.state
        view = make_view(state, self.human)
        if view.phase == "draw":
            self.print(table_view(view, self.names, self.labels))
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
                self.print(f"[bold red]✗[/] {_escape(str(exc))}")
                continue
            if command.kind == "action":
                return command.action  # type: ignore[return-value]
            if command.kind == QUIT:
                self.confirm_quit()
            elif command.kind == HELP:
                self.print(help_view(self.game.rules))
            elif command.kind == HINT:
                self.print(f"[cyan]Hint:[/] {_escape(self._hint(view))}")
            elif command.kind == MENU:
                if view.phase == "draw":
                    self.print(table_view(view, self.names, self.labels))
                self.print(menu_view(view, options))

    def _hint(self, view: object) -> str:
        if self._hint_agent is None:
            for spec in HINT_AGENTS:
                try:
                    self._hint_agent = make_agent(spec, seed=self.game.seed + 7919)
                    break
                except ValueError:
                    continue
            else:
                return "no hint agent is available in this installation."
        agent = self._hint_agent
        try:
            text = agent.explain(view)  # type: ignore[arg-type]
        except Exception as exc:  # a hint must never end a game
            return f"the {agent.spec} agent could not give a hint ({exc})."
        return f"{agent.spec} says: {text}"


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# -- command line -------------------------------------------------------------------------
def _agents_epilog() -> str:
    from agents.registry import available

    return "agents: " + "; ".join(f"{name} ({help})" for name, help in available().items())


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "play",
        help="play Scat against agents in the terminal",
        description=(
            "Play Scat against agents. You are seat 0 ('You'). Keys at your turn: a menu "
            "number, s (stock), d (take the discard), k (knock), e (end play), a card like "
            "7c to discard it, h (hint), ? (help), q (quit and save). Every game is saved "
            "as a JSON replay."
        ),
        epilog=_agents_epilog(),
    )
    p.add_argument("--players", type=int, default=None,
                   help="number of players, you included (default 3)")
    p.add_argument("--opponents", default=None, metavar="SPECS",
                   help="agent spec for every opponent, or a comma-separated list of one per "
                        "opponent (e.g. expert,ppo:PATH); default: the strongest shipped agent")
    p.add_argument("--rules", default=None,
                   help="rules preset or a rules YAML file (default standard)")
    p.add_argument("--seed", type=int, default=None,
                   help="game seed (shuffles and opponents); default random")
    p.add_argument("--name", default="You", help="your name at the table (default You)")
    p.add_argument("--delay", type=float, default=0.8, metavar="SECONDS",
                   help="pause before each opponent move (default 0.8)")
    p.add_argument("--fast", action="store_true",
                   help="no pauses: opponents play at once, no Enter between hands")
    p.add_argument("--no-color", action="store_true", help="plain text, no colours")
    p.add_argument("--save", default=None, metavar="PATH",
                   help="where to save the game (default ~/.scat/replays/, or "
                        "$SCAT_REPLAY_DIR)")
    p.add_argument("--resume", default=None, metavar="FILE",
                   help="continue a saved game (other game options are taken from the file)")
    p.add_argument("--width", type=int, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.delay < 0:
        raise _cli_error(f"--delay must be >= 0, got {args.delay}")
    if args.resume:
        game = SavedGame.load(args.resume)
        if game.status == "finished":
            raise _cli_error(
                f"the game in {args.resume} is over; watch it with: scat replay {args.resume}"
            )
        if game.human_seat is None:
            raise _cli_error(f"{args.resume} is a game between agents; nothing to resume")
        ignored = [o for o in ("players", "opponents", "rules", "seed")
                   if getattr(args, o) is not None]
        save_path = Path(args.save or args.resume).expanduser()
    else:
        rules = Rules.preset(args.rules or "standard")
        if rules.name == "custom" and args.rules and args.rules.endswith((".yaml", ".yml")):
            rules = rules.replace(name=Path(args.rules).stem)  # show the file's name
        players, specs = opponent_specs(args.players, args.opponents)
        seed = args.seed if args.seed is not None else new_seed()
        if args.name.strip() == "" or args.name == HUMAN:
            raise _cli_error(f"--name must be a name, got {args.name!r}")
        game = new_game(players, specs, rules, seed, args.name.strip())
        ignored = []
        save_path = Path(args.save).expanduser() if args.save else default_path(seed, players)
    try:
        session = PlaySession(game, save_path, color=not args.no_color, delay=args.delay,
                              fast=args.fast, width=args.width)
    except ReplayError as exc:
        raise _cli_error(f"cannot resume: {exc}") from None
    if ignored:
        session.print(f"[dim]Resuming: --{', --'.join(ignored)} come from the saved game.[/]")
    return session.run()


__all__ = ["PlaySession", "add_parser", "run", "default_opponent", "opponent_specs"]
