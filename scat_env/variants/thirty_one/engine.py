"""Declaring 31 by choice (``declare_31: choice``, 002/000): a player holding a new 31
declares it, ending the hand, or keeps quiet; a 31 kept quiet counts as 30 for the rest of
the hand and cannot be claimed later.

The standard game declares a 31 at once (the core's own rule); here the holder decides.
Dealt 31s are offered to their holders one after the other, from the dealer's left, and
the hand ends once they have all answered if any declared. Keeping quiet is private:
it never reaches the public log, which would tell every seat that the mover holds 31.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...actions import DECLARE, PASS
from ...cards import CARD_POINTS
from ...engine import EV_DECLARE, Phase, PhasePlay

if TYPE_CHECKING:
    from ...engine import GameState
    from ...rules import Rules

_DECLARE = Phase.DECLARE


def hooks(rules: Rules) -> dict[str, Any]:
    """The hooks (see :data:`scat_env.engine.HOOKS`) of a 31 declared by choice.

    Its hand values replace sudden death's (:mod:`scat_env.variants.calls.engine`) in a
    game that has both: :func:`shown_value` counts a single card too."""
    if rules.declare_31 != "choice":
        return {}
    return {"after_deal": offer_dealt_31s, "new_31": offer_new_31, "shown_value": shown_value,
            "phases": {_DECLARE: DECLARE_CHOICE}}


def offer_dealt_31s(state: GameState, seats: tuple[int, ...]) -> bool:
    """After the deal: each holder of a dealt 31 says in turn whether to declare it;
    without one, play starts."""
    holders = state._dealt_31s(seats)
    if holders:
        state.pending = holders
        state.current_player = holders[0]
        state.phase = _DECLARE
        return True
    state._start_play(seats[0])
    return True


def offer_new_31(state: GameState, seat: int) -> bool:
    """A discard left ``seat`` holding 31: it declares or keeps quiet, unless this is the
    31 it already kept quiet (``False``: the turn ends as usual). Until the decision is
    made the other seats see the turn still in its discard phase (scat_env.view), as in
    a turn that made no 31."""
    a, b, c = state.hands[seat]
    if state.quiet[seat] == (1 << a | 1 << b | 1 << c):
        return False
    state.phase = _DECLARE
    return True


def declare_choices(state: GameState) -> list[int]:
    return [DECLARE, PASS]


def answer(state: GameState, seat: int, action: int) -> None:
    """Declared: the hand ends (a dealt 31 waits for the other holders). Kept quiet: those
    cards count 30 from now on, and the play goes on where it was."""
    if action == DECLARE:
        state.log.append((seat, EV_DECLARE, None))
        if state.pending:  # a dealt 31: the others still decide, then the hand ends
            state.declared += (seat,)
            next_dealt_31(state)
        else:
            state._end_hand("thirty_one", declarers=(seat,))
        return
    a, b, c = state.hands[seat]
    state.quiet[seat] = 1 << a | 1 << b | 1 << c
    if state.pending:
        next_dealt_31(state)
    elif seat == state.last_seat:
        state._end_hand("knock")
    else:
        state._next_turn(seat)


DECLARE_CHOICE = PhasePlay(declare_choices, answer)


def next_dealt_31(state: GameState) -> None:
    """After a dealt-31 holder's choice: the next holder's, or the hand ends (somebody
    declared) or goes on (nobody did)."""
    state.pending = state.pending[1:]
    if state.pending:
        state.current_player = state.pending[0]
        return
    if state.declared:
        state._end_hand("dealt_thirty_one", declarers=state.declared)
        return
    state._start_play(state._next_active(state.dealer))


def shown_value(state: GameState, seat: int) -> float:
    """What ``seat``'s hand counts at the end of the hand: its value, at most 30 for a 31
    kept quiet (002/000), or a single card's points (sudden death, in a game with both)."""
    hand = state.hands[seat]
    if len(hand) == 1:
        return float(CARD_POINTS[hand[0]])
    a, b, c = hand
    value = state._table[a * 2704 + b * 52 + c]
    quiet = state.quiet[seat]
    if quiet and quiet == 1 << a | 1 << b | 1 << c:
        return min(value, 30.0)
    return value
