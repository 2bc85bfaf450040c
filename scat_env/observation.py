"""The observation encoder: a :class:`~scat_env.view.PlayerView` in, a float32 vector out.

As in OpenSpiel's observers, the layout is data: :data:`PIECES` declares each named piece
once (its size, its meaning, how a renaming of the cards moves it), and the encoder, the
documentation table (:func:`layout_table`) and a policy's padded input all derive from it,
so they cannot disagree. Seats are relative (0 = me, 1 = the player on my left, ...) so one
policy can play any seat. All values lie in ``[0, 1]``; points are divided by 41, the
largest suit total of four cards.

Only the view is read, so nothing hidden can reach the vector by construction; the
invariant tests check it anyway by changing hidden cards and comparing vectors.

Families. Every draw-and-discard game with lives reads exactly :data:`PIECES` (the layout
shipped policies were trained on; it never changes). The variations that add something a
player must know add pieces after it, never inside it (:func:`pieces_for`):

- a points game (``scoring: points``): :data:`POINTS_PIECES`, every seat's points;
- golf (``play: golf``): :data:`GOLF_PIECES`, which slots of each seat are still face
  down (cards nobody has seen, the owner included). Golf's face-up cards are the seat's
  ``hand`` (its own) and ``known_cards`` (the others'); its two phases fill the ``phase``
  one-hot as draw and discard.

Two things need no piece: the pack in play (the cards outside the Italian 40 are never
``unseen``, so the vector already tells the packs apart) and the call phases (each call
has actions of its own, so the action mask says which call is on offer, and the ``phase``
one-hot stays zero there); a piece for either would change the layout of presets that
shipped policies play.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .actions import NUM_ACTIONS
from .cards import CARD_POINTS, CARD_SUIT, NUM_CARDS, NUM_SUITS
from .rules import Rules
from .scoring import best_three, value_table
from .view import PlayerView

POINT_SCALE = 1.0 / 41.0
TURN_SCALE = 100

#: How many units of its block a piece has: one, one per seat (relative seats 0..n-1, 0 =
#: me) or one per opponent (relative seats 1..n-1).
PER = ("one", "seat", "opponent")
#: How a renaming of the cards (a permutation of suits and of equal-point ranks, see
#: ``agents.symmetry``) moves a piece: ``"card"`` blocks are indexed by card id (52
#: entries), ``"suit"`` blocks by suit (4 entries), ``"none"`` pieces stay as they are.
SYMMETRY = ("card", "suit", "none")
_BLOCK = {"card": NUM_CARDS, "suit": NUM_SUITS}


@dataclass(frozen=True)
class Piece:
    """One named piece of a vector: ``block`` entries, repeated per :data:`PER` ``per``."""

    name: str
    block: int
    per: str
    symmetry: str
    doc: str

    def __post_init__(self) -> None:
        if self.per not in PER:
            raise ValueError(f"Piece {self.name}: per must be one of {PER}, got {self.per!r}")
        if self.symmetry not in SYMMETRY:
            raise ValueError(f"Piece {self.name}: symmetry must be one of {SYMMETRY}, "
                             f"got {self.symmetry!r}")
        want = _BLOCK.get(self.symmetry)
        if want is not None and self.block != want:
            raise ValueError(f"Piece {self.name}: a {self.symmetry} block has {want} entries")

    def units(self, num_players: int) -> int:
        """How many blocks the piece has at a table of ``num_players``."""
        if self.per == "one":
            return 1
        return num_players if self.per == "seat" else num_players - 1

    def size(self, num_players: int) -> int:
        return self.block * self.units(num_players)


#: The observation, in order. Everything else (sizes, offsets, the documentation table,
#: the symmetry of a policy's input) is derived from this tuple.
PIECES: tuple[Piece, ...] = (
    Piece("hand", 52, "one", "card", "one-hot of the cards in my hand (3, or 4 after drawing)"),
    Piece("drawn_card", 52, "one", "card",
          "one-hot of the card I drew this turn (discard phase)"),
    Piece("top_discard", 52, "one", "card", "one-hot of the top card of the discard pile"),
    Piece("discard_pile", 52, "one", "card",
          "one-hot of every card in the discard pile (all were seen face up)"),
    Piece("known_cards", 52, "opponent", "card",
          "per opponent (relative seats 1..n-1), one-hot of the cards it took from the "
          "discard pile and still holds"),
    Piece("unseen", 52, "one", "card",
          "one-hot of the cards I have not seen: in the stock or hidden in a hand"),
    Piece("suit_sums", 4, "one", "suit",
          "points of my hand in clubs, diamonds, hearts, spades / 41"),
    Piece("hand_value", 1, "one", "none",
          "my hand value / 41 (best three of four mid-turn, keeping a taken card)"),
    Piece("value_with_discard", 1, "one", "none",
          "the value I would have by taking the top discard / 41 (draw phase; 0 otherwise)"),
    Piece("lives", 1, "seat", "none", "lives left / starting lives, per relative seat"),
    Piece("active", 1, "seat", "none", "1 if the relative seat is still in the game"),
    Piece("knocked", 1, "seat", "none", "1 if the relative seat knocked this hand"),
    Piece("dealer", 1, "seat", "none", "1 if the relative seat dealt this hand"),
    Piece("stock_size", 1, "one", "none", "cards left in the stock / 52"),
    Piece("phase", 2, "one", "none", "one-hot: draw phase, discard phase"),
    Piece("flags", 2, "one", "none", "someone has knocked; the stock is empty"),
    Piece("turn", 1, "one", "none", "turns played this hand / 100, capped at 1"),
)


#: Added after :data:`PIECES` in a points game.
POINTS_PIECES: tuple[Piece, ...] = (
    Piece("points", 1, "seat", "none", "points / points to win, per relative seat (points game)"),
)
#: Added after :data:`PIECES` in golf.
GOLF_PIECES: tuple[Piece, ...] = (
    Piece("face_down", 3, "seat", "none",
          "per relative seat, 1 for each of its three slots still face down: a card nobody "
          "has seen, its owner included (golf)"),
)


def pieces_for(rules: Rules) -> tuple[Piece, ...]:
    """The observation's pieces under ``rules``: :data:`PIECES`, then the family's own."""
    if rules.play == "golf":
        return PIECES + GOLF_PIECES
    if rules.scoring == "points":
        return PIECES + POINTS_PIECES
    return PIECES


def extra_pieces(rules: Rules) -> tuple[Piece, ...]:
    """The pieces ``rules`` add after :data:`PIECES` (empty for every lives game of draw and
    discard): what a policy trained on :data:`PIECES` has never read."""
    return pieces_for(rules)[len(PIECES):]


@cache
def layout(num_players: int, pieces: tuple[Piece, ...] = PIECES) -> dict[str, slice]:
    """Where each piece lies in the vector for ``num_players``: name -> slice, in order.
    (Cached and shared: treat it as read-only.)"""
    out, start = {}, 0
    for piece in pieces:
        size = piece.size(num_players)
        out[piece.name] = slice(start, start + size)
        start += size
    return out


def observation_size(num_players: int, rules: Rules | None = None) -> int:
    """Entries of the vector at ``num_players`` (under ``rules``: its family's pieces)."""
    pieces = PIECES if rules is None else pieces_for(rules)
    return sum(piece.size(num_players) for piece in pieces)


def layout_table(num_players: int, pieces: tuple[Piece, ...] = PIECES) -> str:
    """Markdown table of every index range of the vector for ``num_players``."""
    rows = ["| indices | piece | meaning |", "| --- | --- | --- |"]
    spans = layout(num_players, pieces)
    for piece in pieces:
        span = spans[piece.name]
        rows.append(f"| {span.start}..{span.stop - 1} | `{piece.name}` | {piece.doc} |")
    return "\n".join(rows)


def _scalar_start(num_players: int) -> int:
    """Start of the pieces after the last card block: the encoder builds them as one list."""
    spans = layout(num_players)
    return max(spans[p.name].stop for p in PIECES if p.symmetry == "card")


def _quiet_value(hand: tuple[int, ...], quiet: tuple[int, ...], table: list[float],
                 keep: int | None) -> float:
    """The value of ``hand`` (three cards, or the best three of four keeping ``keep``)
    when the three ``quiet`` cards, a 31 kept quiet, count at most 30 (002/000)."""
    if len(hand) == 3:
        a, b, c = hand
        value = table[a * 2704 + b * 52 + c]
        return min(value, 30.0) if set(hand) == set(quiet) else value
    best = -1.0
    for drop in hand:
        if drop == keep:
            continue
        a, b, c = (x for x in hand if x != drop)
        value = table[a * 2704 + b * 52 + c]
        if {a, b, c} == set(quiet):
            value = min(value, 30.0)
        best = max(best, value)
    return best


def observed_values(rules: Rules) -> list[float]:
    """The value table as the observation reads it: values above 41 (three of a kind when
    trips beat 31: 32 to 44) are read as 41, so that every entry stays in ``[0, 1]``; the
    cards themselves still tell the trips apart. Other games never exceed 33."""
    table = value_table(rules)
    if max(table) <= 41.0:
        return table
    return [v if v <= 41.0 else 41.0 for v in table]


class ObservationEncoder:
    """Encodes views of one game size and rule set; create once, call :meth:`encode` often.

    Every piece is written through its slice of :func:`layout`. For speed (the encoder runs
    once per env step) the card pieces are gathered as one index list set in a single
    numpy call, and the pieces after the card blocks are written into one Python list
    through their slices (shifted to the list's start) and stored with a single slice
    assignment, instead of a numpy call per piece.
    """

    def __init__(self, num_players: int, rules: Rules) -> None:
        self.num_players = n = num_players
        self.rules = rules
        self.pieces = pieces = pieces_for(rules)
        self.size = observation_size(n, rules)
        self.layout = spans = layout(n, pieces)
        self._table = observed_values(rules)
        self._start_lives = float(rules.start_lives)
        # Offsets as attributes: dict lookups add up at one encode per env step.
        self._hand = spans["hand"].start
        self._drawn = spans["drawn_card"].start
        self._top = spans["top_discard"].start
        self._pile = spans["discard_pile"].start
        self._known = spans["known_cards"].start
        self._unseen = spans["unseen"]
        # Cards not in the pack (the Italian 40) are never "unseen": nobody can hold them.
        self._outside_pack = [self._unseen.start + c for c in range(52)
                              if c not in set(rules.deck_cards)]
        self._scalars = at = _scalar_start(n)
        self._blank = [0.0] * (self.size - at)
        s = {name: slice(span.start - at, span.stop - at) for name, span in spans.items()
             if span.start >= at}
        self._suit_sums, self._hand_value = s["suit_sums"], s["hand_value"].start
        self._with_discard, self._lives = s["value_with_discard"].start, s["lives"]
        self._active, self._knocked, self._dealer = s["active"], s["knocked"], s["dealer"]
        self._stock_size, self._phase = s["stock_size"].start, s["phase"].start
        self._flags, self._turn = s["flags"].start, s["turn"].start
        self._golf = rules.play == "golf"
        self._points = s["points"].start if "points" in s else None
        self._to_win = float(rules.points_to_win)
        self._face_down = s["face_down"].start if "face_down" in s else None
        self._extra = self._points is not None or self._face_down is not None

    def encode(self, view: PlayerView) -> np.ndarray:
        n = self.num_players
        me = view.seat
        obs = np.zeros(self.size, dtype=np.float32)
        hand = view.hand
        pile = view.discard_pile
        # Every card I have seen, as indices into the "unseen" block; cleared below.
        unseen_span = self._unseen
        unseen = unseen_span.start
        seen = [unseen + c for c in hand]
        seen += [unseen + c for c in pile]
        if self._outside_pack:
            seen += self._outside_pack
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
        obs[unseen_span] = 1.0
        obs[seen] = 0.0
        obs[ones] = 1.0

        scale = POINT_SCALE
        out = self._blank[:]
        suits = [0.0, 0.0, 0.0, 0.0]
        for c in hand:
            suits[CARD_SUIT[c]] += CARD_POINTS[c] * scale
        out[self._suit_sums] = suits
        t = self._table
        phase = view.phase
        if len(hand) == 3:
            a, b, c = hand
            out[self._hand_value] = t[a * 2704 + b * 52 + c] * scale
            if phase == "draw" and top is not None:
                out[self._with_discard] = best_three(hand + (top,), t, top) * scale
        elif len(hand) == 4:
            out[self._hand_value] = best_three(hand, t, view.taken_card) * scale
        if view.quiet_cards:  # a 31 kept quiet counts 30 while its cards stay together
            out[self._hand_value] = _quiet_value(hand, view.quiet_cards, t,
                                                 view.taken_card) * scale
        order = [(me + r) % n for r in range(n)]  # absolute seat of each relative seat
        start_lives = self._start_lives
        lives, active = view.lives, view.active
        out[self._lives] = [lives[s] / start_lives for s in order]
        out[self._active] = [1.0 if active[s] else 0.0 for s in order]
        knocker = view.knocker
        out[self._knocked] = [1.0 if s == knocker else 0.0 for s in order]
        dealer = view.dealer
        out[self._dealer] = [1.0 if s == dealer else 0.0 for s in order]
        out[self._stock_size] = view.stock_size / 52.0
        if phase == "draw":
            out[self._phase] = 1.0
        elif phase == "discard":
            out[self._phase + 1] = 1.0
        elif self._golf:
            out[self._phase + (phase == "golf_place")] = 1.0
        if knocker is not None:
            out[self._flags] = 1.0
        if view.stock_size == 0:
            out[self._flags + 1] = 1.0
        out[self._turn] = min(view.turn, TURN_SCALE) / TURN_SCALE
        if self._extra:
            self._encode_extra(view, order, out)
        obs[self._scalars:] = out
        return obs


    def _encode_extra(self, view: PlayerView, order: list[int], out: list[float]) -> None:
        """The pieces a family adds after :data:`PIECES` (points; face-down slots)."""
        n = self.num_players
        if self._points is not None:
            at, win = self._points, self._to_win
            out[at:at + n] = [min(view.points[s] / win, 1.0) for s in order]
        if self._face_down is not None:
            at, slots = self._face_down, view.slots
            out[at:at + 3 * n] = [0.0 if not slots[s] or slots[s][i] is not None else 1.0
                                  for s in order for i in range(3)]


def action_mask(view: PlayerView) -> np.ndarray:
    """int8 mask over the ``NUM_ACTIONS`` actions; all zeros when it is not my turn."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if view.legal_actions:
        mask[list(view.legal_actions)] = 1
    return mask
