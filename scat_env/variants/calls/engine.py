"""The calls' play: the hammer, the throw-down and sudden death (002 "Variations", 003).

Each call is a decision of its own, taken where the standard game has none: the hammer in
place of the first draw, the throw-down before a player has looked at the cards (the first
player's, or each player's in turn), sudden death by the dealer once every player holds a
single card. A call answered with a showdown ends the hand like a knock, with the caller as
knocker ("treated like knocks in respect to lives"); declined, play goes on as in the
standard game.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from ...actions import HAMMER, PASS, SUDDEN_DEATH, THROW_DOWN
from ...cards import CARD_POINTS
from ...engine import EV_HAMMER, EV_PASS, EV_SUDDEN_DEATH, EV_THROW_DOWN, Phase, PhasePlay

if TYPE_CHECKING:
    from ...engine import GameState
    from ...rules import Rules

_DRAW, _BLIND, _SUDDEN = Phase.DRAW, Phase.BLIND, Phase.SUDDEN_DEATH


def hooks(rules: Rules) -> dict[str, Any]:
    """The hooks (see :data:`scat_env.engine.HOOKS`) of the calls ``rules`` allow."""
    out: dict[str, Any] = {}
    phases = {}
    if rules.hammer:
        out["draw_call"] = HAMMER_CALL
    if rules.throw_down != "none":
        out["play_start"] = throw_down_start
        phases[_BLIND] = THROW_DOWN_CALL
    if rules.sudden_death:
        out.update(deal=deal_one_each, shown_value=single_card_value)
        phases[_SUDDEN] = SUDDEN_DEATH_CALL
    if phases:
        out["phases"] = phases
    return out


# -- the hammer ------------------------------------------------------------------------------
def hammer_choices(state: GameState) -> list[int]:
    """002: the first player, instead of drawing, may call a showdown."""
    return [HAMMER] if state.turn == 0 and state.knocker is None else []


def showdown_call(state: GameState, seat: int, action: int) -> None:
    """A hammer or a throw-down: everyone shows, scored like a knock with the caller as
    knocker (002: a lowest caller loses two; 003)."""
    state.log.append((seat, EV_HAMMER if action == HAMMER else EV_THROW_DOWN, None))
    state.knocker = seat
    state.looked = [True] * state.num_players  # everyone shows
    state._end_hand("hammer" if action == HAMMER else "throw_down")


HAMMER_CALL = PhasePlay(hammer_choices, showdown_call)


# -- the throw-down --------------------------------------------------------------------------
def throw_down_start(state: GameState, first: int) -> None:
    """The first turn starts with the call, before looking: the first player's alone, or
    with ``throw_down: any`` everyone's in turn (nobody in the hand has looked)."""
    state.phase = _BLIND
    if state.rules.throw_down == "any":
        state.looked = list(map(operator.not_, state.active))
    else:
        state.looked[first] = False


def throw_down_choices(state: GameState) -> list[int]:
    return [THROW_DOWN, PASS]


def throw_down_answer(state: GameState, seat: int, action: int) -> None:
    """Called: the showdown. Declined: the player looks, and the next player still to
    call does (``any``), or the first player draws."""
    if action != PASS:
        showdown_call(state, seat, action)
        return
    state.log.append((seat, EV_PASS, None))
    state.looked[seat] = True
    if state.rules.throw_down == "any" and seat != state.dealer:
        state.current_player = state._next_active(seat)  # the next player's call
    else:
        state.current_player = state._next_active(state.dealer)
        state.phase = _DRAW


THROW_DOWN_CALL = PhasePlay(throw_down_choices, throw_down_answer)


# -- sudden death ----------------------------------------------------------------------------
def deal_one_each(state: GameState, deck: list[int], seats: tuple[int, ...]) -> None:
    """002 Doug Moyer: one card each, then the dealer may call sudden death. Nobody has
    looked: the cards are compared only if it is called. The rest of the deck is laid out
    as the stock, the deal goes on from it (:func:`finish_deal`)."""
    hands = state.hands
    for i, s in enumerate(seats):
        hands[s].append(deck[i])
    state.stock = deck[:len(seats) - 1:-1] if len(seats) else deck[::-1]
    state.discard = []
    state.looked = [False] * state.num_players
    state.current_player = state.dealer
    state.phase = _SUDDEN


def sudden_death_choices(state: GameState) -> list[int]:
    return [SUDDEN_DEATH, PASS]


def sudden_death_answer(state: GameState, seat: int, action: int) -> None:
    """Called: the single cards are compared. Declined: the deal goes on."""
    if action == SUDDEN_DEATH:
        state.log.append((seat, EV_SUDDEN_DEATH, None))
        state.looked = [True] * state.num_players
        state._end_hand("sudden_death")
        return
    state.log.append((seat, EV_PASS, None))
    if not finish_deal(state):
        state._deal()


def finish_deal(state: GameState) -> bool:
    """Sudden death declined: the other two cards each and the upcard from the stock, then
    the core's after-deal (dealt 31s, the first turn); ``False`` when a dealt 31 ended the
    hand and the next must be dealt."""
    stock, hands = state.stock, state.hands
    state.looked = [True] * state.num_players
    seats = state._seats_from_left()
    for _ in range(2):
        for s in seats:
            hands[s].append(stock.pop())
    state.discard = [stock.pop()]  # the upcard
    return state._after_deal(seats)


def single_card_value(state: GameState, seat: int) -> float:
    """A hand's worth at the end of the hand: a single card's points after sudden death."""
    hand = state.hands[seat]
    if len(hand) == 1:
        return float(CARD_POINTS[hand[0]])
    a, b, c = hand
    return state._table[a * 2704 + b * 52 + c]


SUDDEN_DEATH_CALL = PhasePlay(sudden_death_choices, sudden_death_answer)
