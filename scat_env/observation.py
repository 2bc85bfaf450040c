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
        # Offsets as attributes: the encoder runs once per env step, dict lookups add up.
        self._hand = self.offsets["hand"]
        self._drawn = self.offsets["drawn_card"]
        self._top = self.offsets["top_discard"]
        self._pile = self.offsets["discard_pile"]
        self._known = self.offsets["known_cards"]
        self._unseen = self.offsets["unseen"]
        self._tail = self.offsets["suit_sums"]

    def encode(self, view: PlayerView) -> np.ndarray:
        n = self.num_players
        me = view.seat
        obs = np.zeros(self.size, dtype=np.float32)
        hand = view.hand
        pile = view.discard_pile
        # Every card I have seen, as indices into the "unseen" block; cleared below.
        unseen = self._unseen
        seen = [unseen + c for c in hand]
        seen += [unseen + c for c in pile]
        base = self._hand
        ones = [base + c for c in hand]
        base = self._pile
        ones += [base + c for c in pile]
        if view.drawn_card is not None:
            ones.append(self._drawn + view.drawn_card)
        top = view.top_discard
        if top is not None:
            ones.append(self._top + top)
        base = self._known
        for s, cards in enumerate(view.known_cards):
            if cards:
                off = base + 52 * ((s - me) % n - 1)
                ones += [off + c for c in cards]
                seen += [unseen + c for c in cards]
        obs[unseen : unseen + 52] = 1.0
        obs[seen] = 0.0
        obs[ones] = 1.0

        # The scalar pieces (suit_sums .. turn) are contiguous: build them as one Python
        # list and store it with a single slice assignment instead of ~30 numpy item sets.
        scale = POINT_SCALE
        tail = [0.0, 0.0, 0.0, 0.0]
        for c in hand:
            tail[CARD_SUIT[c]] += CARD_POINTS[c] * scale
        t = self._table
        value = with_discard = 0.0
        if len(hand) == 3:
            a, b, c = hand
            value = t[a * 2704 + b * 52 + c] * scale
            if view.phase == "draw" and top is not None:
                with_discard = best_three(hand + (top,), t, top) * scale
        elif len(hand) == 4:
            value = best_three(hand, t, view.taken_card) * scale
        tail.append(value)
        tail.append(with_discard)
        order = [(me + r) % n for r in range(n)]  # absolute seat of each relative seat
        start_lives = self._start_lives
        lives, active = view.lives, view.active
        tail += [lives[s] / start_lives for s in order]
        tail += [1.0 if active[s] else 0.0 for s in order]
        knocker = view.knocker
        tail += [1.0 if s == knocker else 0.0 for s in order]
        dealer = view.dealer
        tail += [1.0 if s == dealer else 0.0 for s in order]
        phase = view.phase
        tail += [
            view.stock_size / 52.0,
            1.0 if phase == "draw" else 0.0,
            1.0 if phase == "discard" else 0.0,
            0.0 if knocker is None else 1.0,
            1.0 if view.stock_size == 0 else 0.0,
            min(view.turn, TURN_SCALE) / TURN_SCALE,
        ]
        obs[self._tail :] = tail
        return obs


def action_mask(view: PlayerView) -> np.ndarray:
    """int8 mask over the ``NUM_ACTIONS`` actions; all zeros when it is not my turn."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if view.legal_actions:
        mask[list(view.legal_actions)] = 1
    return mask
