"""``scat play``: a game of Scat against agents, in the terminal.

You sit at seat 0 ("You"); every other seat is an agent from :mod:`agents.registry`, by
default the best shipped policy that plays the table's size and rules
(:func:`default_opponent`; ``scat play --help`` lists them). The game itself is
:class:`scat_cli.game.PlaySession`, seated by :mod:`scat_session.seating`; this module reads
the command line. It imports only
the standard library at module level, so ``scat --help`` does not load the game.

Examples::

    scat play                                  # 3 players, standard rules, the shipped policies
    scat play --players 4 --opponents greedy --rules ride_the_bus
    scat play --opponents expert,compact:scat_batch_set --seed 7 --fast
    scat play --level strongest
    scat play --resume ~/.scat/replays/scat-20250101-120000-3p-3f9c01ab.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import CliError

if TYPE_CHECKING:
    from scat_env import Rules

#: Seeds are sealed as JSON integers: any size would do, this bound keeps them ordinary.
MAX_SEED = 2**63


def __getattr__(name: str) -> object:
    """``scat_cli.play.default_opponent``: who sits at a table by default, by the name it had
    before both front ends shared their seating (:func:`scat_session.seating.default_opponent`,
    the same function). Loaded on first use, so that importing this module stays cheap."""
    if name == "default_opponent":
        from scat_session.seating import default_opponent

        return default_opponent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_seed(seed: int | None, flag: str = "--seed") -> None:
    """One rule for every command's seed, 0 to 2**63 - 1: a game's seed is written in its
    save and its report and given back to replay it, so each command takes what the
    others take."""
    if seed is not None and not 0 <= seed < MAX_SEED:
        raise CliError(f"{flag} must be between 0 and 2**63 - 1, got {str(seed)[:30]}")


#: The terminal widths ``--width`` accepts (the table needs about 40 columns).
MIN_WIDTH, MAX_WIDTH = 40, 1000


def check_width(width: int | None) -> None:
    """``--width`` in a range a screen can have: a huge one would overflow the renderer."""
    if width is not None and not MIN_WIDTH <= width <= MAX_WIDTH:
        raise CliError(f"--width must be between {MIN_WIDTH} and {MAX_WIDTH}, "
                       f"got {str(width)[:30]}")


def opponent_specs(players: int | None, opponents: str | None,
                   rules: Rules | None = None) -> tuple[int, list[str]]:
    """Resolve ``--players`` and ``--opponents`` into a player count and one spec per
    opponent. One spec is used for every opponent; a list sets the count if none is given;
    no spec means the first shipped policy that can play these ``rules`` (standard if
    ``None``) at this table: :func:`scat_session.seating.default_opponent`."""
    from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS
    from scat_session.seating import default_opponent

    specs = [s.strip() for s in opponents.split(",")] if opponents else []
    if any(not s for s in specs):
        raise CliError(f"--opponents has an empty entry: {opponents!r}")
    if players is None:
        players = len(specs) + 1 if len(specs) > 1 else 3
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise CliError(f"--players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {players}")
    if not specs:
        specs = [default_opponent(players, rules)]
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise CliError(
            f"--opponents lists {len(specs)} agents for {players - 1} opponents "
            f"(--players {players}); give one spec for all or one per opponent"
        )
    return players, specs


def _epilog() -> str:
    from agents.registry import available
    from scat_env.rules import PRESETS
    from scat_session.lengths import measured_players, minutes_text
    from scat_session.levels import LEVEL_NAMES, level_line
    from scat_session.seating import default_opponents_by_preset

    usual = ", ".join(f"{name} {minutes_text(name).split(' ')[0]}" for name in PRESETS
                      if minutes_text(name))
    return (f"Default opponents by rules preset: {'; '.join(default_opponents_by_preset())}. "
            "The first line of a game names its opponents.\n\n"
            f"Levels (--level; measured in the standard game at 3 players): "
            f"{'; '.join(level_line(n) for n in LEVEL_NAMES)}.\n\n"
            f"A game's usual minutes by --rules preset ({measured_players()} players, 4 s a "
            f"move of yours; scat rules gives the ranges): {usual}.\n\n"
            "Agents: " + "; ".join(f"{name} ({help})" for name, help in available().items()))


class _Paragraphs(argparse.HelpFormatter):
    """argparse's formatter, keeping the blank lines between the epilog's paragraphs (the
    defaults, the lengths, the agents read as three things, not one block)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join(super(_Paragraphs, self)._fill_text(part, width, indent)
                           for part in text.split("\n\n"))


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "play",
        formatter_class=_Paragraphs,
        help="play Scat against agents in the terminal",
        description=(
            "Play Scat against agents. You are seat 0 ('You'). Keys at your turn: a menu "
            "number, s (stock), d (take the discard), k (knock), e (end play), a card like "
            "7c to discard it, h (hint), ? (help), Enter (the table again), q (quit and "
            "save). Every game is saved as a JSON replay."
        ),
        epilog_fn=_epilog,  # the agents and the defaults import them: only for --help
    )
    p.add_argument("--players", type=int, default=None,
                   help="number of players, you included (default 3)")
    p.add_argument("--opponents", default=None, metavar="SPECS",
                   help="agent spec for every opponent, or a comma-separated list of one per "
                        "opponent (e.g. expert,greedy); default: the best shipped policy for "
                        "the table's size and rules (listed below)")
    p.add_argument("--level", default=None, metavar="LEVEL",
                   help="who plays, by level: easy, medium, hard (the trained AI) or strongest "
                        "(the trained AI searching its close calls); each level's measured "
                        "figures are listed below. Default: easy for your first game (no saved "
                        "game in the replay folder yet), then hard")
    p.add_argument("--rules", default=None,
                   help="rules preset or a rules YAML file (default standard); a game's "
                        "usual length per preset is listed below")
    p.add_argument("--seed", type=int, default=None,
                   help="game seed (shuffles and opponents); default random. It is sealed in "
                        "the save like a random one and shown when the game is over")
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

    from scat_env.names import MAX_RULES_NAME, is_shown
    from scat_session.keystore import SealError
    from scat_session.savegame import (
        HUMAN,
        ReplayError,
        SavedGame,
        check_name,
        default_path,
        new_seed,
        portable_spec,
    )
    from scat_session.seating import new_game

    from .game import PlaySession
    from .rules import rules_from_arg

    if args.delay < 0:
        raise CliError(f"--delay must be >= 0, got {args.delay}")
    check_width(args.width)
    check_seed(args.seed)
    if args.resume:
        game = SavedGame.load(args.resume)
        if game.status == "finished":
            raise CliError(
                f"the game in {args.resume} is over; watch it with: scat replay {args.resume}"
            )
        if game.human_seat is None:
            raise CliError(f"{args.resume} is a game between agents; nothing to resume")
        try:
            game.check_resume(args.resume)  # no take-backs: not behind the game's last save
        except SealError as exc:
            raise CliError(str(exc)) from None
        ignored = [o for o in ("players", "opponents", "level", "rules", "seed")
                   if getattr(args, o) is not None]
        level_note = ""
        save_path = Path(args.save or args.resume).expanduser()
    else:
        rules = rules_from_arg(args.rules or "standard")
        rules_file = args.rules or ""
        stem = Path(rules_file).stem
        if (rules.name == "custom" and rules_file.endswith((".yaml", ".yml"))
                and is_shown(stem, MAX_RULES_NAME)):
            rules = rules.replace(name=stem)  # show the file's name (if a screen can show it)
        opponents, level_note = _level_opponents(args, rules)
        players, specs = opponent_specs(args.players, opponents, rules)
        seed = args.seed if args.seed is not None else new_seed()
        if args.name.strip() == "" or args.name == HUMAN:
            raise CliError(f"--name must be a name, got {args.name[:30]!r}")
        try:
            check_name(args.name.strip())
        except ValueError as exc:
            raise CliError(f"--name: {exc}") from None
        game = new_game(players, [portable_spec(s) for s in specs], rules, seed,
                        args.name.strip())
        ignored = []
        save_path = (Path(args.save).expanduser() if args.save
                     else default_path(game.game_id, players))
    try:
        session = PlaySession(game, save_path, color=not args.no_color, delay=args.delay,
                              fast=args.fast, width=args.width)
    except ReplayError as exc:
        raise CliError(f"cannot resume: {exc}") from None
    if ignored:
        session.print(f"[dim]Resuming: --{', --'.join(ignored)} come from the saved game.[/]")
    elif level_note:
        from rich.markup import escape

        session.print(f"[dim]{escape(level_note)}[/]")
    return session.run()


def first_game() -> bool:
    """Whether this person has no saved game yet (the replay folder holds none): their
    first game gets the level a beginner beats sometimes."""
    from scat_session.savegame import replay_dir

    try:
        return not any(replay_dir().glob("*.json"))
    except OSError:
        return False


def _level_opponents(args: argparse.Namespace, rules: Rules) -> tuple[str | None, str]:
    """``--opponents`` as given, or the spec of ``--level`` (easy for a first game when
    neither is given), and a line that says which level sits there and how strong it is."""
    from scat_session.levels import FIRST_GAME_LEVEL, level, level_line, level_spec

    if args.level is not None and args.opponents is not None:
        raise CliError("--level and --opponents both say who plays: give one of them")
    name = args.level
    first = name is None and args.opponents is None and first_game()
    if first:
        name = FIRST_GAME_LEVEL
    if name is None:
        return args.opponents, ""
    try:
        level(name)
    except ValueError as exc:
        raise CliError(f"--level: {exc}") from None
    players = args.players if args.players is not None else 3
    from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise CliError(f"--players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got "
                       f"{players}")
    spec = level_spec(name, players, rules)
    note = f"Level {level_line(name, spec=spec, rules=rules)}."
    if first:
        note += " Your first game; later games get hard unless you pick --level."
    return spec, note


__all__ = ["MAX_SEED", "add_parser", "check_seed", "opponent_specs", "run"]
