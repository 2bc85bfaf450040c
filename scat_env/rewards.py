"""What a scored hand pays: the one place that turns a :class:`~scat_env.engine.HandResult`
into rewards, used by the env, both trainers and the single-agent (SB3) wrapper alike.

A game of Scat lasts many hands and, played for the game, pays only at its end (+1 to the
winner, -1/(n-1) to everyone else). :func:`hand_rewards` pays that result hand by hand, at
the hand that decides it (``reward="game"``), or minus the lives each hand cost
(``reward="hand"``), and can add a per-hand *shaping* term so that a learner feels a hand's
consequences before the game ends. Two shapings:

- ``lives`` (:func:`hand_shaping`): ``coef * (mean lives lost by the others - lives I
  lost)``. Simple and dense, but not aligned with winning: every life counts the same,
  whether it is my last one or the first of four, and a life another player loses counts
  the same whether that brings the game closer to my win or not.
- ``win_chance`` (:func:`win_chance_shaping`): potential-based shaping (Ng, Harada & Russell,
  1999) with the potential ``Phi`` = my expected game result given everyone's lives, under a
  simple model of the game (:func:`expected_result`). Each hand pays ``coef * (Phi(after) -
  Phi(before))``. Over a whole game these telescope to ``coef * (result - Phi(start))``: the
  return is the game result scaled by ``1 + coef`` minus a constant, so (with gamma near 1)
  the shaping cannot change which policy is best, only how soon a hand's consequences are
  felt. What a life is worth depends on everyone's lives: losing one while level with the
  others costs more than losing one when already far behind, and another player's loss is
  worth more to me the closer it brings them to going out.

Pure Python (no numpy): the engine's layer, importable without any RL library.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from .engine import HandResult

#: ``"game"``: play for the game (zero-sum, paid when a seat is out and when the game is
#: won); ``"hand"``: minus the lives each hand costs.
REWARD_MODES = ("game", "hand")
#: The per-hand shaping terms :func:`hand_rewards` can add (see the module docstring).
SHAPINGS = ("lives", "win_chance")


def check_shaping(kind: str, where: str = "") -> None:
    """Refuse an unknown shaping name with one message naming the choices (``where``
    prefixes it, e.g. ``"ppo config: "``), so configs, the env and the trainers agree."""
    if kind not in SHAPINGS:
        raise ValueError(f"{where}shaping must be one of {SHAPINGS}, got {kind!r}")


# -- the value of a position in the game ------------------------------------------------
@cache
def _win_chance(mine: int, others: tuple[int, ...]) -> float:
    if mine <= 0:
        return 0.0
    if not others:
        return 1.0
    m = len(others) + 1
    total = _win_chance(mine - 1, others)
    for i, lv in enumerate(others):
        rest = others[:i] + ((lv - 1,) if lv > 1 else ()) + others[i + 1:]
        total += _win_chance(mine, tuple(sorted(rest)))
    return total / m


def win_chance(lives: Sequence[int], active: Sequence[bool], seat: int) -> float:
    """``seat``'s chance of winning the game when each hand costs one random active player
    a life. A crude model that knows nothing of play, but monotone: it makes a life worth
    more when few are left. The search agent ``ismcts`` scores its playouts with it and
    :func:`expected_result` builds the shaping potential on it."""
    others = tuple(sorted(lv for s, lv in enumerate(lives) if s != seat and active[s] and lv > 0))
    return _win_chance(lives[seat] if active[seat] else 0, others)


def lives_win_chance(lives: Sequence[int], seat: int) -> float:
    """:func:`win_chance` where the lives say who is in (a seat with none is out): how the
    potential below, the search's playouts and its labeller score the lives a hand leaves."""
    return win_chance(lives, [v > 0 for v in lives], seat)


def expected_result(seat: int, lives: Sequence[int], num_players: int) -> float:
    """``seat``'s expected game result (+1 win, -1/(n-1) loss) given every seat's lives
    (0 = out), under :func:`win_chance`. That model knows what matters for a potential
    (fewer lives than the others is worse, more players left means a smaller share) and
    nothing about play, so it is the same for every policy; the potential need not be exact
    for the shaping to keep the best policy unchanged."""
    p = lives_win_chance(lives, seat)
    loss = 1.0 / (num_players - 1)
    return p * (1.0 + loss) - loss


# -- shaping terms ----------------------------------------------------------------------
def hand_shaping(lives_lost: dict[int, int], coef: float) -> dict[int, float]:
    """Zero-sum hand reward: ``coef * (mean lives lost by the others - lives I lost)``.

    Why relative: with ``-coef * lost`` alone a knock can only cost (a losing knocker pays
    2) and never earns, which teaches "never knock"; here making the others pay is worth
    as much as not paying yourself, like the game itself.
    """
    seats = list(lives_lost)
    if len(seats) < 2:
        return {}
    total = sum(lives_lost.values())
    k = len(seats) - 1
    return {s: coef * ((total - lost) / k - lost) for s, lost in lives_lost.items()}


def win_chance_shaping(result: HandResult, num_players: int, coef: float) -> dict[int, float]:
    """``coef * (Phi(after) - Phi(before))`` for every seat dealt into ``result``'s hand,
    ``Phi`` = :func:`expected_result`. A seat knocked out by this hand ends at its loss
    value, the last one in at its win value: exactly the result the game then pays."""
    after = result.lives_after
    before = list(after)
    for s, lost in result.lives_lost.items():
        before[s] += lost
    return {
        s: coef * (expected_result(s, after, num_players) - expected_result(s, before, num_players))
        for s in result.lives_lost
    }


# -- the rewards of one scored hand ------------------------------------------------------
def hand_rewards(
    result: HandResult,
    num_players: int,
    *,
    reward: str = "game",
    shaping: str = "lives",
    shaping_coef: float = 0.0,
) -> dict[int, float]:
    """Every seat's reward for one scored hand (seats absent from the dict get nothing).

    ``reward="game"``: ``-1/(n-1)`` to each seat this hand eliminates and ``+1`` to the
    winner when this hand ends the game (exactly one seat of ``result.lives_after`` above
    zero), so a whole game sums to zero; in a points game nobody is eliminated and the hand
    that wins the race pays ``+1`` to its winner (``result.race_winner``) and ``-1/(n-1)``
    to every other seat. ``reward="hand"``: minus the lives lost (a points game: plus the
    points won). When
    ``shaping_coef`` is non-zero the shaping term named by ``shaping`` (one of
    :data:`SHAPINGS`) is added; in a points game, where nobody loses a life, either shaping
    pays points as :func:`hand_shaping` pays lives, with the sign turned: ``coef * (points I
    won - mean points won by the others)``. A game cut short by the turn cap pays no hand for it: the
    caller settles truncation, which no hand decides.
    """
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
    out: dict[int, float] = {}
    if result.points_after:
        if reward == "game":
            if result.race_winner is not None:
                loss = -1.0 / (num_players - 1)
                out = {s: loss for s in range(num_players)}
                out[result.race_winner] = 1.0
        else:
            out = {s: float(p) for s, p in result.points_won.items() if p}
    elif reward == "game":
        if result.eliminated:
            loss = -1.0 / (num_players - 1)
            for s in result.eliminated:
                out[s] = loss
            standing = [s for s, lives in enumerate(result.lives_after) if lives > 0]
            if len(standing) == 1:
                out[standing[0]] = out.get(standing[0], 0.0) + 1.0
    else:
        for s, lost in result.lives_lost.items():
            if lost:
                out[s] = -float(lost)
    if shaping_coef:
        check_shaping(shaping)
        if result.points_after:
            won = result.points_won
            extra = hand_shaping({s: -won.get(s, 0) for s in result.lives_lost}, shaping_coef)
        elif shaping == "win_chance":
            extra = win_chance_shaping(result, num_players, shaping_coef)
        else:
            extra = hand_shaping(result.lives_lost, shaping_coef)
        for s, r in extra.items():
            out[s] = out.get(s, 0.0) + r
    return out
