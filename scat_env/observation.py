"""The observation encoder: a :class:`~scat_env.view.PlayerView` in, a float32 vector out.

As in OpenSpiel's observers, the layout is data: a list of named pieces, each with a size,
so the documentation table (:func:`layout_table`) and the code cannot disagree. Seats are
relative (0 = me, 1 = the player on my left, ...) so one policy can play any seat. All
values lie in ``[0, 1]``; points are divided by 41, the largest suit total of four cards.

Only the view is read, so nothing hidden can reach the vector by construction; the
invariant tests check it anyway by changing hidden cards and comparing vectors.
"""

from __future__ import annotations

import numpy as np

from .actions import NUM_ACTIONS
from .cards import CARD_POINTS, CARD_SUIT
from .rules import Rules
from .scoring import best_three, value_table
from .view import PlayerView

POINT_SCALE = 1.0 / 41.0
TURN_SCALE = 100

_PIECE_DOCS = {
    "hand": "one-hot of the cards in my hand (3, or 4 after drawing)",
    "drawn_card": "one-hot of the card I drew this turn (discard phase)",
    "top_discard": "one-hot of the top card of the discard pile",
    "discard_pile": "one-hot of every card in the discard pile (all were seen face up)",
    "known_cards": "per opponent (relative seats 1..n-1), one-hot of the cards it took "
    "from the discard pile and still holds",
    "unseen": "one-hot of the cards I have not seen: in the stock or hidden in a hand",
    "suit_sums": "points of my hand in clubs, diamonds, hearts, spades / 41",
    "hand_value": "my hand value / 41 (best three of four mid-turn, keeping a taken card)",
    "value_with_discard": "the value I would have by taking the top discard / 41 "
    "(draw phase; 0 otherwise)",
    "lives": "lives left / starting lives, per relative seat",
    "active": "1 if the relative seat is still in the game",
    "knocked": "1 if the relative seat knocked this hand",
    "dealer": "1 if the relative seat dealt this hand",
    "stock_size": "cards left in the stock / 52",
    "phase": "one-hot: draw phase, discard phase",
    "flags": "someone has knocked; the stock is empty",
    "turn": "turns played this hand / 100, capped at 1",
}


def pieces(num_players: int) -> list[tuple[str, int]]:
    """The named pieces of the observation, in order, with their sizes."""
    n = num_players
    return [
        ("hand", 52),
        ("drawn_card", 52),
        ("top_discard", 52),
        ("discard_pile", 52),
        ("known_cards", 52 * (n - 1)),
        ("unseen", 52),
        ("suit_sums", 4),
        ("hand_value", 1),
        ("value_with_discard", 1),
        ("lives", n),
        ("active", n),
        ("knocked", n),
        ("dealer", n),
        ("stock_size", 1),
        ("phase", 2),
        ("flags", 2),
        ("turn", 1),
    ]


def observation_size(num_players: int) -> int:
    return sum(size for _, size in pieces(num_players))


def layout_table(num_players: int) -> str:
    """Markdown table of every index range of the observation for ``num_players``."""
    rows = ["| indices | piece | meaning |", "| --- | --- | --- |"]
    start = 0
    for name, size in pieces(num_players):
        rows.append(f"| {start}..{start + size - 1} | `{name}` | {_PIECE_DOCS[name]} |")
        start += size
    return "\n".join(rows)


class ObservationEncoder:
    """Encodes views of one game size and rule set; create once, call :meth:`encode` often."""

    def __init__(self, num_players: int, rules: Rules) -> None:
        self.num_players = n = num_players
        self.rules = rules
        self.size = observation_size(n)
        self.offsets = {}
        start = 0
        for name, size in pieces(n):
            self.offsets[name] = start
            start += size
        self._table = value_table(rules)
        self._start_lives = float(rules.start_lives)

    def encode(self, view: PlayerView) -> np.ndarray:
        o = self.offsets
        n = self.num_players
        me = view.seat
        obs = np.zeros(self.size, dtype=np.float32)
        ones: list[int] = []
        hand = view.hand
        seen = set(hand)
        base = o["hand"]
        ones.extend(base + c for c in hand)
        if view.drawn_card is not None:
            ones.append(o["drawn_card"] + view.drawn_card)
        top = view.top_discard
        if top is not None:
            ones.append(o["top_discard"] + top)
        base = o["discard_pile"]
        ones.extend(base + c for c in view.discard_pile)
        seen.update(view.discard_pile)
        base = o["known_cards"]
        for s, cards in enumerate(view.known_cards):
            if cards:
                off = base + 52 * ((s - me) % n - 1)
                ones.extend(off + c for c in cards)
                seen.update(cards)
        base = o["unseen"]
        ones.extend(base + c for c in range(52) if c not in seen)
        obs[ones] = 1.0

        sums = [0, 0, 0, 0]
        for c in hand:
            sums[CARD_SUIT[c]] += CARD_POINTS[c]
        base = o["suit_sums"]
        obs[base : base + 4] = sums
        obs[base : base + 4] *= POINT_SCALE
        t = self._table
        if len(hand) == 3:
            a, b, c = hand
            obs[o["hand_value"]] = t[a * 2704 + b * 52 + c] * POINT_SCALE
            if view.phase == "draw" and top is not None:
                obs[o["value_with_discard"]] = best_three(hand + (top,), t, top) * POINT_SCALE
        elif len(hand) == 4:
            taken = view.taken_card if view.taken_card is not None else -1
            obs[o["hand_value"]] = best_three(hand, t, taken) * POINT_SCALE

        start_lives = self._start_lives
        lives_o, active_o, knock_o, dealer_o = o["lives"], o["active"], o["knocked"], o["dealer"]
        for s in range(n):
            r = (s - me) % n
            obs[lives_o + r] = view.lives[s] / start_lives
            if view.active[s]:
                obs[active_o + r] = 1.0
        if view.knocker is not None:
            obs[knock_o + (view.knocker - me) % n] = 1.0
        obs[dealer_o + (view.dealer - me) % n] = 1.0
        obs[o["stock_size"]] = view.stock_size / 52.0
        if view.phase == "draw":
            obs[o["phase"]] = 1.0
        elif view.phase == "discard":
            obs[o["phase"] + 1] = 1.0
        if view.knocker is not None:
            obs[o["flags"]] = 1.0
        if view.stock_size == 0:
            obs[o["flags"] + 1] = 1.0
        obs[o["turn"]] = min(view.turn, TURN_SCALE) / TURN_SCALE
        return obs


def action_mask(view: PlayerView) -> np.ndarray:
    """int8 mask over the ``NUM_ACTIONS`` actions; all zeros when it is not my turn."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if view.legal_actions:
        mask[list(view.legal_actions)] = 1
    return mask
