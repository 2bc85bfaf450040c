"""The review of a finished game in the terminal: ``scat replay --review FILE``, and the end
of a ``scat play`` game (``r`` at the last screen).

The numbers come from :func:`scat_session.review.review_game`; this module only lays them
out: the three costliest mistakes first, each on the table as it stood (that player's
view: the opponents' cards stay hidden, as they were), then every decision in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scat_session.review import DEFAULT_WORLDS, HONESTY, GameReview, review_game
from scat_session.seating import agent_label

from .tui import make_console, table_view

if TYPE_CHECKING:
    from rich.console import Console

    from scat_session.savegame import SavedGame


def check_worlds(worlds: int | None) -> int:
    """``--worlds`` in the search's range, or the review's default."""
    from agents.search import MAX_WORLDS

    if worlds is None:
        return DEFAULT_WORLDS
    if not 1 <= worlds <= MAX_WORLDS:
        raise ValueError(f"--worlds must be between 1 and {MAX_WORLDS}, got {str(worlds)[:30]}")
    return worlds


def show_review(game: SavedGame, *, seat: int | None = None, worlds: int | None = None,
                color: bool = True, width: int | None = None,
                console: Console | None = None) -> int:
    """Review ``game`` (finished) for ``seat`` (default the person) and print it."""
    worlds = check_worlds(worlds)
    if seat is not None and not 0 <= seat < game.num_players:
        raise ValueError(f"--seat must be 0..{game.num_players - 1}, got {seat}")
    console = console or make_console(color, width)
    who = seat if seat is not None else (game.human_seat if game.human_seat is not None else 0)
    console.print(f"[bold]Review[/] of {game.names[who]}'s decisions: a {game.num_players}-"
                  f"player game, {game.rules.name} rules, seed {game.seed}.")
    console.print(f"[dim]{HONESTY}[/]")
    with console.status("Playing out every move on sampled deals...") as status:
        def progress(done: int, total: int) -> None:
            status.update(f"Playing out every move on sampled deals: {done}/{total}")

        review = review_game(game, who, worlds, progress=progress)
    print_review(review, game, console)
    return 0


def print_review(review: GameReview, game: SavedGame, console: Console) -> None:
    """The review's summary, its costliest mistakes on their tables, every decision."""
    print_ = console.print
    if not review.decisions:
        print_("Nothing to review: " + (
            f"{review.name} made no decision with a choice in this game." if not review.skipped
            else "none of these decisions is one the search plays out (the draws and "
                 "discards of the draw-and-discard games without calls)."))
        return
    print_(review.summary() + ".")
    worst = review.costliest()
    labels = [agent_label(p.agent) for p in game.players]
    if not worst:
        print_("[green]No clear mistake (2 points of win chance or more, and sure of it). "
               "Well played.[/]")
    else:
        print_(f"\n[bold]The {len(worst)} costliest[/] (win chance given up, in points):")
    for k, d in enumerate(worst, 1):
        console.rule(f"{k}. {d.line()}", style="dim")
        print_(table_view(d.view, game.names, labels, width=console.width))
        moves = " · ".join(f"{_move(v.action)} {100 * v.mean:.0f}%"
                           for v in d.values)
        print_(f"Win chance of each move: {moves}")
    print_("\n[bold]Every decision[/]")
    for d in review.decisions:
        style = "red" if d.mistake else ("dim" if d.best.action == d.played else "")
        line = d.line()
        print_(f"[{style}]{line}[/]" if style else line, markup=True, highlight=False)
    if review.skipped:
        print_(f"[dim]{review.skipped} decisions were not reviewed (a single legal move, or "
               "a call the search does not play out).[/]")


def _move(action: int) -> str:
    from scat_env.actions import action_str

    return action_str(action, True)


__all__ = ["check_worlds", "print_review", "show_review"]
