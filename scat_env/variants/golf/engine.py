"""Golf's play (002, Mike Armstrong): three cards face down in a row, one turned or replaced
each turn, the hand over when every card is face up; and its bus, the last life that only
one player at a time may ride.

Golf is a different game on the same table: the core :class:`~scat_env.engine.GameState`
deals, draws and scores as usual, and these hooks replace what golf does otherwise: the
start of a hand (every slot face down, unseen by its owner too), the choices of its two
phases and what a slot move does. The bus (``one_on_the_bus``) adjusts the lives a hand
takes, after the showdown rule has named the losers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...actions import DRAW_DISCARD, DRAW_STOCK, GOLF_SLOTS, PLACE_SLOT, TURN_UP
from ...engine import EV_DISCARD, EV_PLACE, EV_TURN_UP, Phase, PhasePlay
from ...showdown import one_on_the_bus

if TYPE_CHECKING:
    from ...engine import GameState
    from ...rules import Rules

_GOLF_DRAW, _GOLF_PLACE, _GAME_OVER = Phase.GOLF_DRAW, Phase.GOLF_PLACE, Phase.GAME_OVER
_FULL = (1 << GOLF_SLOTS) - 1  # every slot face up


def hooks(rules: Rules) -> dict[str, Any]:
    """Golf's hooks (see :data:`scat_env.engine.HOOKS`) when ``rules`` play golf, and the
    bus's when they seat one player at a time on the last life."""
    out: dict[str, Any] = {}
    if rules.play == "golf":
        out.update(after_deal=start, drawn_phase=_GOLF_PLACE,
                   phases={_GOLF_DRAW: GOLF, _GOLF_PLACE: GOLF})
    if rules.one_on_the_bus:
        out["lives_lost"] = bus
    return out


def start(state: GameState, seats: tuple[int, ...]) -> bool:
    """After the deal: three cards in a row face down, and "they must not look at them";
    the first player draws."""
    state.current_player = seats[0]
    state.looked = [False] * state.num_players
    state._face_up = [0] * state.num_players
    state.phase = _GOLF_DRAW
    return True


def legal(state: GameState) -> list[int]:
    """Golf's choices. They depend on which slots are face down, never on the cards in
    them: the owner has not seen those, and the mask is part of its observation."""
    if state.phase is _GOLF_DRAW:
        return [DRAW_STOCK, DRAW_DISCARD] if state.stock else [DRAW_DISCARD]
    up = state._face_up[state.current_player]
    down = [i for i in range(GOLF_SLOTS) if not up >> i & 1]
    acts = [PLACE_SLOT + i for i in down]
    if state.taken is None:  # a card from the stock may be discarded instead
        acts += [TURN_UP + i for i in down]
    return acts


def apply_slot(state: GameState, seat: int, action: int) -> None:
    """The card in hand goes face up into a slot, the slot's card face up onto the pile; or
    the drawn card goes onto the pile and a slot turns face up. Either way one more slot is
    face up, so after three turns each every card is (002). Drawing is the core's own
    (the draw phase's actions), with :data:`~scat_env.engine.Phase.GOLF_PLACE` after it."""
    hand = state.hands[seat]
    card = hand.pop()  # the card drawn or taken, held after the three slots
    log, known = state.log, state.known
    if action < TURN_UP:
        slot = action - PLACE_SLOT
        old = hand[slot]
        hand[slot] = card
        state.discard.append(old)
        log.append((seat, EV_PLACE, card))
        log.append((seat, EV_DISCARD, old))
        known[seat] = known[seat] & ~(1 << old) | 1 << card
    else:
        slot = action - TURN_UP
        state.discard.append(card)
        log.append((seat, EV_DISCARD, card))
        log.append((seat, EV_TURN_UP, hand[slot]))
        known[seat] = known[seat] & ~(1 << card) | 1 << hand[slot]
    state._face_up[seat] |= 1 << slot
    state.taken = state.drawn = None
    nxt = state._next_active(seat)
    if state._face_up[nxt] == _FULL:  # everyone has had three turns
        state._end_hand("face_up")
        return
    state.current_player = nxt
    state.phase = _GOLF_DRAW
    state.turn += 1
    if state.turn >= state._turn_cap:
        state.phase = _GAME_OVER


#: Both of golf's phases: drawing (the core applies the draw) and placing.
GOLF = PhasePlay(legal, apply_slot)


def bus(state: GameState, seats: Sequence[int], applied: dict[int, int],
        rule: str) -> tuple[dict[int, int], str]:
    """The lives a hand takes once the bus is applied (:func:`scat_env.showdown.one_on_the_bus`):
    a second rider is out at once; several boarding a free bus together replay the hand."""
    boarded = one_on_the_bus(state._seats_from_left(), state.lives, applied)
    if boarded is None:
        return dict.fromkeys(seats, 0), "bus_tie_replay"
    return boarded, rule
