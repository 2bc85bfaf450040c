"""The action space, shared by the engine, the env and every agent.

Actions ``0..51`` discard that card; the four after them are the turn's other choices.
Putting discards first means a sorted legal-action list reads like the game: cards, then
draws. ``END_PLAY`` exists only once the stock is empty, where a player may decline the
discard and so end the play (002 "Draw pile exhausted").
"""

from __future__ import annotations

from .cards import NUM_CARDS, card_str, parse_card

DRAW_STOCK = 52
DRAW_DISCARD = 53
KNOCK = 54
END_PLAY = 55
NUM_ACTIONS = 56

_NAMES = {
    DRAW_STOCK: "draw from the stock",
    DRAW_DISCARD: "take the top discard",
    KNOCK: "knock",
    END_PLAY: "end play (decline the discard)",
}
_SHORT = {DRAW_STOCK: "stock", DRAW_DISCARD: "take", KNOCK: "knock", END_PLAY: "end"}


def discard_action(card: int | str) -> int:
    """The action that discards ``card`` (an id or a string such as ``"7C"``)."""
    return parse_card(card)


def is_discard(action: int) -> bool:
    return 0 <= action < NUM_CARDS


def action_str(action: int, symbols: bool = False) -> str:
    """Readable name: ``"discard KH"``, ``"draw from the stock"``, ``"knock"`` ..."""
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        try:
            action = int(action)  # numpy integers
        except (TypeError, ValueError):
            raise ValueError(f"not an action: {action!r}") from None
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"not an action: {action!r} (actions are 0..{NUM_ACTIONS - 1})")
    if action < NUM_CARDS:
        return "discard " + card_str(action, symbols)
    return _NAMES[action]


def action_short(action: int) -> str:
    """Compact token for logs and playthrough files: ``"d:KH"``, ``"stock"``, ``"knock"``."""
    if 0 <= action < NUM_CARDS:
        return "d:" + card_str(action)
    return _SHORT[action]
