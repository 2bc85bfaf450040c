"""When a knock is allowed, under the knocking rules that limit or widen it.

The standard game allows a knock whenever nobody has knocked yet and the stock is not
empty. The variations: the player after the knocker may knock too, on that turn only
(``second_knock``, 002 Doug Moyer); no knock on a player's first turn (``first_turn_knock:
false``, the computer versions); a knock once the stock is empty
(``knock_when_stock_exhausted``); a knock only with a hand worth ``min_knock`` or more, or
with three cards of one suit (``knock_needs_flush``, 002 Jeffrey Jacobs).

What a knock does is the core's (a second knock ends the play at once; with
``knock_then_draw`` the knocker draws and discards in the same turn); how a showdown is
scored is :func:`scat_env.showdown.knock_losses`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...cards import CARD_SUIT

if TYPE_CHECKING:
    from ...engine import GameState
    from ...rules import Rules


def hooks(rules: Rules) -> dict[str, Any]:
    """The knock's hook (see :data:`scat_env.engine.HOOKS`) when ``rules`` change when a
    knock is allowed; none for the standard game's knock."""
    if (rules.second_knock or not rules.first_turn_knock or rules.knock_when_stock_exhausted
            or rules.min_knock or rules.knock_needs_flush):
        return {"may_knock": may_knock}
    return {}


def may_knock(state: GameState) -> bool:
    """Whether the player to move (in the draw phase) may knock under ``state.rules``."""
    rules = state.rules
    knocker = state.knocker
    if knocker is not None:
        # 002 Doug Moyer: the player after the knocker may knock too, on that turn only.
        if not (rules.second_knock and state.turn == state.knock_turn + 1  # type: ignore[operator]
                and state.current_player == state._next_active(knocker)):
            return False
    elif not rules.first_turn_knock and state.turn < sum(state.active):
        return False  # the computer versions: no knock on a player's first turn
    if not state.stock and not rules.knock_when_stock_exhausted:
        return False
    if rules.min_knock or rules.knock_needs_flush:
        a, b, c = state.hands[state.current_player]
        if state._table[a * 2704 + b * 52 + c] < rules.min_knock:
            return False
        if rules.knock_needs_flush and not (CARD_SUIT[a] == CARD_SUIT[b] == CARD_SUIT[c]):
            return False
    return True
