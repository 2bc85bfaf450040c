"""The points race's end of a hand (``scoring: points``, 002 French Canadian): the hand
scores points (:func:`scat_env.showdown.points_won`) instead of taking lives, and the game
ends once one player alone has the most points at or past ``points_to_win``.

Play is the standard game's; only the scoring of a hand differs, so the race has one hook,
called by the core's :meth:`~scat_env.engine.GameState._end_hand` once the hands are shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...engine import FrozenDict, PointsHandResult
from ...showdown import points_won

if TYPE_CHECKING:
    from ...engine import GameState
    from ...rules import Rules


def hooks(rules: Rules) -> dict[str, Any]:
    """The race's hook (see :data:`scat_env.engine.HOOKS`) when ``rules`` score points."""
    return {"score_hand": score_hand} if rules.scoring == "points" else {}


def score_hand(state: GameState, reason: str, declarers: tuple[int, ...], deal_next: bool,
               seats: Sequence[int], values: FrozenDict,
               held: dict[int, tuple[int, ...]]) -> None:
    """Score the hand in points and record it as a :class:`~scat_env.engine.PointsHandResult`.
    Nobody loses a life, so nobody is put out and no hand is replayed (the all-out and bus
    rules never apply); the race's winner ends the game."""
    won, rule = points_won(values, state.knocker, declarers, dealt=reason == "dealt_thirty_one",
                           tiebreak=state.rules.poker_tiebreak)
    scores = state._scores
    for s, p in won.items():
        scores[s] += p
    winner = race_winner(state)
    state.results.append(PointsHandResult(
        hand_number=state.hand_number,
        dealer=state.dealer,
        reason=reason,
        values=values,
        hands=FrozenDict(held),
        lives_lost=FrozenDict(dict.fromkeys(seats, 0)),
        knocker=state.knocker,
        declarers=declarers,
        eliminated=(),
        replayed=False,
        lives_after=tuple(state.lives),
        rule=rule,
        points_won=FrozenDict(won),
        points_after=tuple(scores),
        race_winner=winner,
    ))
    state._next_hand(False, deal_next, over=winner is not None)


def race_winner(state: GameState) -> int | None:
    """A points game is won by the one player with the most points once they reach
    ``points_to_win``; players tied on top at or past it play on (RULES.md (u))."""
    points = state._scores
    top = max(points)
    if top >= state.rules.points_to_win and points.count(top) == 1:
        return points.index(top)
    return None
