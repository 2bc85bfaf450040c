"""scat-env: the card game Scat (31, Blitz, Ride the Bus, Cadillac) for reinforcement learning.

The public API (a contract used by the other packages and by external checks):

- cards: :func:`parse_card`, :func:`parse_cards`, :func:`card_str`, :func:`hand_value`
- rules: :class:`Rules` (``Rules.preset(name)``, ``Rules.from_yaml(path)``), :data:`PRESETS`,
  :data:`DEFAULT_MAX_TURNS`
- actions: :data:`DRAW_STOCK`, :data:`DRAW_DISCARD`, :data:`KNOCK`, :data:`END_PLAY`,
  :func:`discard_action`, :data:`NUM_ACTIONS`, :func:`action_str`
- engine: :class:`GameState`, :class:`HandResult`, :class:`Phase`; what a player may know:
  :class:`PlayerView`
- environment: :func:`env`, :class:`raw_env`

Layers: ``import scat_env`` loads the engine only (pure Python). The PettingZoo env needs
gymnasium, pettingzoo and numpy, so :func:`env` and :class:`raw_env` are imported on first
use (PEP 562 module ``__getattr__``): a rule-based agent, the terminal game and a search
can use the engine without those libraries installed, and start faster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from .engine import GameState, HandResult, Phase, PointsHandResult
from .rules import DEFAULT_MAX_TURNS, PRESETS, Rules, lives_label
from .scoring import hand_value
from .view import PlayerView, active_view, make_view

if TYPE_CHECKING:
    from .aec_env import env, raw_env

__version__ = "0.1.0"

#: Names loaded on first use, and the module that defines them (it imports numpy and the
#: RL libraries). The module is not called ``env``: importing a submodule binds its name in
#: the package, which would hide the function ``scat_env.env``.
_LAZY = {"env": "scat_env.aec_env", "raw_env": "scat_env.aec_env"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scat_env' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DEFAULT_MAX_TURNS",
    "DRAW_DISCARD",
    "DRAW_STOCK",
    "END_PLAY",
    "KNOCK",
    "NUM_ACTIONS",
    "PRESETS",
    "GameState",
    "HandResult",
    "Phase",
    "PlayerView",
    "PointsHandResult",
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
