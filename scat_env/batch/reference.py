"""The batched engine's contract, in plain Python: its random draws and its observation.

- :class:`SplitMixRandom` is a ``random.Random`` whose draws are the batched engine's
  (SplitMix64, Lemire's multiply-shift). :class:`~scat_env.engine.GameState` takes any
  ``random.Random`` as ``rng`` and shuffles with ``rng.shuffle`` (Fisher-Yates over
  ``_randbelow``), so a ``GameState`` given ``SplitMixRandom(seed)`` deals exactly what
  the batched engine's game with that seed deals: the differential test's common ground.
- :func:`compact_observation` builds the compact observation from a
  :class:`~scat_env.view.PlayerView`, the information boundary of the project; the batched
  engine must produce the same bytes, so it can show a seat nothing its view does not hold.
"""

from __future__ import annotations

import random

import numpy as np

from ..view import PlayerView

_MASK64 = (1 << 64) - 1

#: Card codes of the compact observation (its first 52 entries, one per card id).
C_UNSEEN, C_HAND, C_DRAWN, C_TAKEN, C_TOP, C_PILE, C_KNOWN = 0, 1, 2, 3, 4, 5, 6
CARD_CODES = {
    C_UNSEEN: "not seen: in the stock or hidden in a hand",
    C_HAND: "in my hand",
    C_DRAWN: "in my hand, drawn from the stock this turn",
    C_TAKEN: "in my hand, taken from the discard pile this turn (may not be discarded)",
    C_TOP: "the top card of the discard pile",
    C_PILE: "in the discard pile under the top card",
    C_KNOWN: "6 + r - 1: taken from the discard pile by the opponent r seats to my left, "
             "and still held",
}


def splitmix64(state: int) -> tuple[int, int]:
    """One SplitMix64 step: ``(new state, output)``."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return state, z ^ (z >> 31)


def game_seed(seed: int, index: int) -> int:
    """The generator state of game ``index`` of a batch seeded ``seed``: distinct streams
    for every game (SplitMix64 of the pair), reproducible from the two numbers."""
    _, a = splitmix64((seed * 0x100000001B3) & _MASK64)
    _, b = splitmix64((a ^ (index * 0xD1B54A32D192ED03)) & _MASK64)
    return b


class SplitMixRandom(random.Random):
    """``random.Random`` drawing as the batched engine does (see the module docstring).
    Only ``_randbelow`` is replaced: ``shuffle`` and ``randrange`` go through it."""

    def __init__(self, state: int) -> None:
        super().__init__(0)
        self.state = state & _MASK64

    def _randbelow(self, n: int) -> int:  # type: ignore[override]
        self.state, z = splitmix64(self.state)
        return ((z >> 32) * n) >> 32

    def getrandbits(self, k: int) -> int:  # pragma: no cover - the engine never calls it
        raise NotImplementedError("SplitMixRandom draws only through _randbelow")


def observation_size(num_players: int) -> int:
    """52 card codes, lives and flags per relative seat, five counters."""
    return 52 + 2 * num_players + 5


def compact_observation(view: PlayerView) -> np.ndarray:
    """The compact observation of ``view`` (int8, :func:`observation_size` entries):

    - ``[0, 52)``: one code per card id (:data:`CARD_CODES`);
    - ``[52, 52+n)``: lives per relative seat (0 = me, 1 = my left...);
    - ``[52+n, 52+2n)``: per relative seat, bit 0 still in, bit 1 knocked, bit 2 dealer;
    - then the stock size, the phase (0 draw, 1 discard), turns this hand (capped at 127),
      the hand number (capped at 127), and flags (bit 0 someone knocked, bit 1 the stock
      is empty).
    """
    n, me = view.num_players, view.seat
    out = np.zeros(observation_size(n), np.int8)
    pile = view.discard_pile
    for c in pile[:-1]:
        out[c] = C_PILE
    if pile:
        out[pile[-1]] = C_TOP
    for r in range(1, n):
        for c in view.known_cards[(me + r) % n]:
            out[c] = C_KNOWN + r - 1
    for c in view.hand:
        out[c] = C_HAND
    discard_phase = view.phase == "discard"
    if discard_phase and view.drawn_card is not None:
        out[view.drawn_card] = C_TAKEN if view.taken_card == view.drawn_card else C_DRAWN
    for r in range(n):
        s = (me + r) % n
        out[52 + r] = view.lives[s]
        out[52 + n + r] = (int(view.active[s]) | (2 if view.knocker == s else 0)
                           | (4 if view.dealer == s else 0))
    base = 52 + 2 * n
    out[base] = view.stock_size
    out[base + 1] = 1 if discard_phase else 0
    out[base + 2] = min(view.turn, 127)
    out[base + 3] = min(view.hand_number, 127)
    out[base + 4] = (1 if view.knocker is not None else 0) | (2 if view.stock_size == 0 else 0)
    return out
