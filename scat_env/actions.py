"""The action space, shared by the engine, the env and every agent: one space for every
preset, so that one policy network can serve several.

Actions ``0..51`` discard that card; the four after them are the turn's other choices.
Putting discards first means a sorted legal-action list reads like the game: cards, then
draws. ``END_PLAY`` exists only once the stock is empty, where a player may decline the
discard and so end the play (002 "Draw pile exhausted").

The calls of the variations follow (002 "Variations", 003): ``HAMMER`` (the first player's
showdown instead of a draw), ``THROW_DOWN`` (a showdown called before looking at one's
cards), ``SUDDEN_DEATH`` (the dealer's call after one card each), ``DECLARE`` (show a new
31, where declaring is a choice) and ``PASS`` (decline whichever call is on offer: look at
the cards, deal on, keep quiet). The standard game never offers them, so its first
:data:`CORE_ACTIONS` actions are the whole game.

Golf (002, Mike Armstrong) has its own slot choices after them: ``PLACE_SLOT + i`` (61..63)
puts the card just drawn or taken face up in place of face-down slot ``i`` (the card that
was there goes face up onto the discard pile), ``TURN_UP + i`` (64..66) discards the card
drawn from the stock and turns slot ``i`` face up. Their ids name a slot, never a card, so
that an action mask tells nothing about the face-down cards.
"""

from __future__ import annotations

from .cards import NUM_CARDS, card_str, parse_card

DRAW_STOCK = 52
DRAW_DISCARD = 53
KNOCK = 54
END_PLAY = 55
HAMMER = 56
THROW_DOWN = 57
SUDDEN_DEATH = 58
DECLARE = 59
PASS = 60
PLACE_SLOT = 61  # 61, 62, 63: put the card in face-down slot 0, 1, 2 (golf)
TURN_UP = 64  # 64, 65, 66: discard the drawn card and turn slot 0, 1, 2 face up (golf)
GOLF_SLOTS = 3
NUM_ACTIONS = 67
#: The actions of the draw-and-discard game (discards, draws, knock, end play): all that the
#: standard game and most presets use. Policies that know only these (56 outputs) play every
#: preset that never offers a call.
CORE_ACTIONS = 56

_NAMES = {
    DRAW_STOCK: "draw from the stock",
    DRAW_DISCARD: "take the top discard",
    KNOCK: "knock",
    END_PLAY: "end play (decline the discard)",
    HAMMER: "call a hammer (showdown before anyone draws)",
    THROW_DOWN: "throw down (showdown without looking)",
    SUDDEN_DEATH: "call sudden death (compare the single cards)",
    DECLARE: "declare 31",
    PASS: "pass (decline the call)",
    **{PLACE_SLOT + i: f"put the card in face-down slot {i + 1}" for i in range(GOLF_SLOTS)},
    **{TURN_UP + i: f"discard it and turn slot {i + 1} face up" for i in range(GOLF_SLOTS)},
}
_SHORT = {DRAW_STOCK: "stock", DRAW_DISCARD: "take", KNOCK: "knock", END_PLAY: "end",
          HAMMER: "hammer", THROW_DOWN: "throw_down", SUDDEN_DEATH: "sudden_death",
          DECLARE: "declare", PASS: "pass",
          **{PLACE_SLOT + i: f"place{i + 1}" for i in range(GOLF_SLOTS)},
          **{TURN_UP + i: f"turn{i + 1}" for i in range(GOLF_SLOTS)}}


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
