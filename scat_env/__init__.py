"""scat-env: the card game Scat (31, Blitz, Ride the Bus, Cadillac) for reinforcement learning.

The public API (a contract used by the other packages and by external checks):

- cards: :func:`parse_card`, :func:`parse_cards`, :func:`card_str`, :func:`hand_value`
- rules: :class:`Rules` (``Rules.preset(name)``, ``Rules.from_yaml(path)``), :data:`PRESETS`
- actions: :data:`DRAW_STOCK`, :data:`DRAW_DISCARD`, :data:`KNOCK`, :data:`END_PLAY`,
  :func:`discard_action`, :data:`NUM_ACTIONS`, :func:`action_str`
- environment: :func:`env`, :class:`raw_env`; engine: :class:`GameState`;
  what a player may know: :class:`PlayerView`
"""

from .actions import (
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    KNOCK,
    NUM_ACTIONS,
    action_str,
    discard_action,
    is_discard,
)
from .cards import card_str, cards_str, parse_card, parse_cards
from .engine import GameState, HandResult
from .env import env, raw_env
from .rules import PRESETS, Rules, lives_label
from .scoring import hand_value
from .view import PlayerView, active_view, make_view

__version__ = "0.1.0"

__all__ = [
    "DRAW_DISCARD",
    "DRAW_STOCK",
    "END_PLAY",
    "KNOCK",
    "NUM_ACTIONS",
    "PRESETS",
    "GameState",
    "HandResult",
    "PlayerView",
    "Rules",
    "action_str",
    "active_view",
    "card_str",
    "cards_str",
    "discard_action",
    "env",
    "hand_value",
    "is_discard",
    "lives_label",
    "make_view",
    "parse_card",
    "parse_cards",
    "raw_env",
]
