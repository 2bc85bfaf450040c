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

from ..rules import Rules
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


#: The phase codes of the observation's ``phase`` piece (the view's phase; a seat screened
#: from another's private declare decision sees the phase the view shows it).
PHASE_CODES = {"draw": 0, "discard": 1, "blind": 2, "sudden_death": 3, "declare": 4,
               "golf_draw": 5, "golf_place": 6}


def observation_pieces(num_players: int, rules: Rules | None = None) -> dict[str, int]:
    """The pieces appended after the base observation under ``rules``, with their sizes, in
    order: ``phase`` (2) for rules with calls or golf, ``quiet`` (1) where declaring 31 is
    a choice, ``points`` (n) for a points race, ``slots`` (3n) for golf. None for the draw-and-discard games without calls: their
    observation is the base one, unchanged."""
    pieces: dict[str, int] = {}
    if rules is None:
        return pieces
    golf = rules.play == "golf"
    if rules.calls or golf:
        pieces["phase"] = 2
    if rules.declare_31 == "choice":
        pieces["quiet"] = 1
    if rules.scoring == "points":
        pieces["points"] = num_players
    if golf:
        pieces["slots"] = 3 * num_players
    return pieces


def piece_starts(num_players: int, rules: Rules | None = None) -> dict[str, int]:
    """Where each piece of :func:`observation_pieces` begins in an observation row: after
    the base observation, in their order. The one layout every reader of the pieces uses
    (the greedy and expert kernels, the compact policy's inputs)."""
    starts, at = {}, 52 + 2 * num_players + 5
    for name, size in observation_pieces(num_players, rules).items():
        starts[name] = at
        at += size
    return starts


def observation_size(num_players: int, rules: Rules | None = None) -> int:
    """52 card codes, lives and flags per relative seat, five counters; then the pieces of
    :func:`observation_pieces` that ``rules`` need (none without ``rules``)."""
    return 52 + 2 * num_players + 5 + sum(observation_pieces(num_players, rules).values())


def compact_observation(view: PlayerView) -> np.ndarray:
    """The compact observation of ``view`` (int8, :func:`observation_size` entries for the
    view's rules):

    - ``[0, 52)``: one code per card id (:data:`CARD_CODES`);
    - ``[52, 52+n)``: lives per relative seat (0 = me, 1 = my left...);
    - ``[52+n, 52+2n)``: per relative seat, bit 0 still in, bit 1 knocked, bit 2 dealer;
    - then the stock size, the phase (0 draw, 1 discard), turns this hand (capped at 127),
      the hand number (capped at 127), and flags (bit 0 someone knocked, bit 1 the stock
      is empty).

    That is the whole observation of every draw-and-discard game without calls. The other
    games append pieces (:func:`observation_pieces`), in this order:

    - ``phase`` (rules with calls, and golf): the phase as a code (:data:`PHASE_CODES`: 0
      draw, 1 discard, 2 blind, 3 sudden death, 4 declare, 5 golf draw, 6 golf place),
      then how many of my own cards I see (0 before I have looked at them: a throw-down
      call or sudden death; in golf my face-up cards, and the card I place);
    - ``quiet`` (declaring 31 by choice): 1 while I hold the three cards of a 31 I kept
      quiet (:attr:`~scat_env.view.PlayerView.quiet_cards`), which count 30;
    - ``points`` (a points race): points per relative seat (capped at 127);
    - ``slots`` (golf): per relative seat, its three slots in order, each the card lying
      face up there plus one, or 0 for a face-down card (unseen by everyone, its owner
      included) or a seat out of the game.
    """
    n, me = view.num_players, view.seat
    out = np.zeros(observation_size(n, view.rules), np.int8)
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
    base += 5
    pieces = observation_pieces(n, view.rules)
    if "phase" in pieces:
        out[base] = PHASE_CODES[view.phase]
        out[base + 1] = len(view.hand)
        base += 2
    if "quiet" in pieces:
        quiet = view.quiet_cards
        out[base] = 1 if quiet and set(quiet) <= set(view.hand) else 0
        base += 1
    if "points" in pieces:
        for r in range(n):
            out[base + r] = min(view.points[(me + r) % n], 127)
        base += n
    if "slots" in pieces:
        for r in range(n):
            for i, card in enumerate(view.slots[(me + r) % n]):
                out[base + 3 * r + i] = 0 if card is None else card + 1
    return out
