"""The review of a finished game: each of a person's decisions against what the strongest
agent would have done, and what each was worth.

For every decision of ``seat`` that the search plays out (a draw or a discard of the
draw-and-discard games, or golf's take-or-draw and place-or-turn-up, with a choice to
make), :class:`agents.search.SearchAgent`
plays every legal move out on the same sampled deals and estimates its win chance. The
deals are sampled from **that player's view at the time** (:class:`~scat_env.PlayerView`:
its cards, the pile, the public record), never from the opponents' real cards, even though
the game is over: a decision is judged on what could be known when it was made. The review
says so on screen (:data:`HONESTY`).

A decision's *cost* is the best move's win chance less the played move's; the review lists
the costliest first. Both front ends show it: ``scat replay --review FILE`` and the end of a
``scat play`` game in the terminal, the review panel of a finished game in the browser.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scat_env import make_view
from scat_env.actions import action_str

if TYPE_CHECKING:
    from agents.search import MoveValue
    from scat_env import PlayerView, Rules

    from .savegame import SavedGame

#: What the review used, in the words shown beside it.
HONESTY = ("Each move is judged from what you could see when you made it: the deals behind "
           "each estimate are sampled from your view, never from the other hands.")
#: Sampled deals a decision is played out on.
DEFAULT_WORLDS = 96
#: A move is called a mistake when it gives up at least this much win chance, and the
#: sampled deals are sure of it: the best move beats it by :data:`MISTAKE_Z` paired standard
#: errors (the best of several noisy means is biased up; a lone threshold would call noise a
#: mistake).
MISTAKE = 0.02
MISTAKE_Z = 2.0


@dataclass(frozen=True)
class DecisionReview:
    """One decision: where it was (``index`` into the save's decisions, the hand and
    turn), the view it was made from, the move played and every legal move's value."""

    index: int
    hand_number: int
    turn: int
    view: PlayerView
    played: int
    values: tuple[MoveValue, ...]
    #: How sure the deals are that the best move beats the played one (paired z-score).
    cost_z: float = 0.0

    @property
    def best(self) -> MoveValue:
        return self.values[0]

    @property
    def played_value(self) -> MoveValue:
        return next(v for v in self.values if v.action == self.played)

    @property
    def cost(self) -> float:
        """Win chance given up: the best move's less the played one's (0 for the best)."""
        return max(0.0, self.best.mean - self.played_value.mean)

    @property
    def mistake(self) -> bool:
        return (self.best.action != self.played and self.cost >= MISTAKE
                and self.cost_z >= MISTAKE_Z)

    def line(self, symbols: bool = True) -> str:
        """The decision in one line, e.g. "Hand 2, turn 5: you took the 7♣ (win chance 38%);
        drawing from the stock: 45% (+7 points)"."""
        played, best = self.played_value, self.best
        where = f"Hand {self.hand_number}, turn {self.turn + 1}"
        mine = f"{_move(self.played, symbols)} ({_pct(played.mean)})"
        if best.action == self.played:
            return f"{where}: {mine}: the best move"
        if not self.mistake:
            return (f"{where}: {mine}: as good as {_move(best.action, symbols)} "
                    f"({_pct(best.mean)}) as far as the sampled deals tell")
        return (f"{where}: {mine}; best was {_move(best.action, symbols)} "
                f"({_pct(best.mean)}, +{100 * self.cost:.0f} points)")

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "hand": self.hand_number, "turn": self.turn,
                "played": self.played, "best": self.best.action, "cost": self.cost,
                "cost_z": self.cost_z, "mistake": self.mistake, "text": self.line(),
                "values": [{"action": v.action, "move": _move(v.action, True),
                            "win_chance": v.mean, "se": v.se, "prior": v.prior}
                           for v in self.values]}


@dataclass(frozen=True)
class GameReview:
    """Every reviewed decision of one seat, in the order played."""

    seat: int
    name: str
    decisions: tuple[DecisionReview, ...]
    worlds: int
    skipped: int  #: decisions with one legal move, or of a kind the search does not play

    def costliest(self, k: int = 3) -> list[DecisionReview]:
        """The ``k`` costliest mistakes, costliest first."""
        mistakes = [d for d in self.decisions if d.mistake]
        return sorted(mistakes, key=lambda d: -d.cost)[:k]

    @property
    def total_cost(self) -> float:
        return sum(d.cost for d in self.decisions)

    def summary(self) -> str:
        n = len(self.decisions)
        best = sum(d.best.action == d.played for d in self.decisions)
        mistakes = sum(d.mistake for d in self.decisions)
        return (f"{self.name}: {n} decisions reviewed, {best} the best move, {mistakes} "
                f"mistake{'s' if mistakes != 1 else ''} (each over {self.worlds} sampled "
                "deals)")

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "name": self.name, "worlds": self.worlds,
                "honesty": HONESTY, "summary": self.summary(), "skipped": self.skipped,
                "costliest": [d.index for d in self.costliest()],
                "decisions": [d.to_json() for d in self.decisions]}


def review_game(save: SavedGame, seat: int | None = None, worlds: int = DEFAULT_WORLDS,
                seed: int = 0,
                progress: Callable[[int, int], None] | None = None) -> GameReview:
    """Review ``seat``'s decisions (default: the person's) in the finished game ``save``.
    ``progress(done, total)`` is called after each decision (a review takes seconds)."""
    from agents.search import SearchAgent, move_values, paired_gain, searchable

    if save.status != "finished":
        raise ValueError("only a finished game is reviewed: its decisions are all known")
    if seat is None:
        seat = save.human_seat if save.human_seat is not None else 0
    if not 0 <= seat < save.num_players:
        raise ValueError(f"seat must be 0..{save.num_players - 1}, got {seat}")
    state = save.new_state()
    todo: list[tuple[int, PlayerView, int]] = []
    skipped = 0
    for i, (s, action) in enumerate(save.actions):
        if s == seat:
            view = make_view(state, seat)
            if searchable(view):
                todo.append((i, view, action))
            else:
                skipped += 1
        state.apply_action(action)
    agent = SearchAgent(worlds, seed=seed)
    if todo:
        agent.check_table(save.num_players, save.rules)
    out = []
    for k, (i, view, action) in enumerate(todo):
        moves = list(view.legal_actions)
        outcomes = agent.play_out(view, moves, worlds)
        values = tuple(move_values(moves, outcomes, agent.priors(view)))
        _, z = paired_gain(outcomes[:, moves.index(values[0].action)],
                           outcomes[:, moves.index(action)])
        out.append(DecisionReview(i, view.hand_number, view.turn, view, action, values, z))
        if progress is not None:
            progress(k + 1, len(todo))
    return GameReview(seat, save.names[seat], tuple(out), worlds, skipped)


def reviewable(num_players: int, rules: Rules) -> bool:
    """Whether a game of these rules has decisions the review plays out: the search's
    draws and discards and golf's choices, at a table its policy plays (not the calls, the
    races)."""
    from agents.registry import make_agent
    from agents.search import searched_rules

    if not searched_rules(rules):
        return False
    try:
        make_agent("search:1").check_table(num_players, rules)
    except ValueError:
        return False
    return True


def _move(action: int, symbols: bool) -> str:
    return action_str(action, symbols)


def _pct(p: float) -> str:
    return f"{round(100 * p)}%"


__all__ = ["DEFAULT_WORLDS", "HONESTY", "MISTAKE", "MISTAKE_Z", "DecisionReview", "GameReview",
           "review_game", "reviewable"]
