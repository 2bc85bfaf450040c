"""Per-hand reward shaping for the trainers: what a scored hand is worth before the game ends.

A game of Scat lasts many hands and pays only at the end (+1 win, -1/(n-1) loss), so both
trainers also pay something when a hand is scored. Two kinds:

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
"""

from __future__ import annotations

from agents.ismcts import win_chance
from scat_env import HandResult

SHAPINGS = ("lives", "win_chance")


def check_shaping(kind: str, where: str = "") -> None:
    """Refuse an unknown shaping name with one message naming the choices (``where``
    prefixes it, e.g. ``"ppo config: "``), so configs, the env and the trainers agree."""
    if kind not in SHAPINGS:
        raise ValueError(f"{where}shaping must be one of {SHAPINGS}, got {kind!r}")


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


def expected_result(seat: int, lives: tuple[int, ...] | list[int], num_players: int) -> float:
    """``seat``'s expected game result (+1 win, -1/(n-1) loss) given every seat's lives
    (0 = out), under :func:`agents.ismcts.win_chance`: every hand one player still in,
    chosen uniformly, loses one life. That model knows what matters for a potential (fewer
    lives than the others is worse, more players left means a smaller share) and nothing
    about play, so it is the same for every policy; the potential need not be exact for the
    shaping to keep the best policy unchanged. (``ismcts`` scores its playouts with it.)"""
    p = win_chance(lives, [v > 0 for v in lives], seat)
    loss = 1.0 / (num_players - 1)
    return p * (1.0 + loss) - loss


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


def hand_rewards(result: HandResult, num_players: int, coef: float, kind: str) -> dict[int, float]:
    """The shaping reward of each seat for one scored hand, of the kind named by ``kind``
    (one of :data:`SHAPINGS`); both trainers call this so they pay the same."""
    if not coef:
        return {}
    if kind == "win_chance":
        return win_chance_shaping(result, num_players, coef)
    check_shaping(kind)
    return hand_shaping(result.lives_lost, coef)
