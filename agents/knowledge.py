"""What a seat can work out from its :class:`~scat_env.PlayerView`: shared by the baselines.

Everything here reads the view only (never a ``GameState``), so an agent built on these
helpers cannot use hidden information:

- :func:`unseen_cards`: card counting. A card is *unseen* when it is not in my hand, not in
  the discard pile and not known to be in an opponent's hand (taken from the pile). The
  stock and the opponents' unknown cards are a uniformly random split of the unseen cards.
- :func:`best_discard`: the discard that keeps the best three cards (deterministic ties).
- :func:`draws_made`: how many cards each seat has drawn this hand (a proxy for how far it
  has improved its hand).
- :class:`HandModel`: per scoring variant, lookup tables for the value of a three-card hand,
  its *potential* (the expected value after one more draw from a random deck) and the
  distribution of an opponent's value after ``k`` draws, for knock decisions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from scat_env import PlayerView, Rules
from scat_env.cards import CARD_POINTS, CARD_SUIT
from scat_env.scoring import value_table

#: Most draws tracked by the opponent-value model; later draws use the last row.
MAX_DRAWS = 16
#: Hand values are multiples of 0.5 up to 44 (three aces when trips beat 31) -> 2*value
#: indexes a bin.
NUM_BINS = 2 * 45 + 1


def unseen_cards(view: PlayerView) -> list[int]:
    """Cards whose place I do not know: in the stock or an opponent's unknown cards."""
    seen = set(view.hand)
    seen.update(view.discard_pile)
    for cards in view.known_cards:
        seen.update(cards)
    return [c for c in view.rules.deck_cards if c not in seen]


def draws_made(view: PlayerView) -> list[int]:
    """Cards each seat drew (stock or pile) this hand, from the public log."""
    counts = [0] * view.num_players
    for seat, kind, _ in view.log:
        if kind == "draw_stock" or kind == "take":
            counts[seat] += 1
    return counts


def discard_sort_key(card: int) -> tuple[int, int]:
    """Tie-break among equally good discards: give away the lowest points, then lowest id."""
    return (CARD_POINTS[card], card)


def best_discard(hand: tuple[int, ...] | list[int], table: list[float], taken: int | None) -> tuple[float, int]:
    """``(value kept, card to discard)`` for a four-card hand; ``taken`` may not go back.

    Ties go to the discard with the fewest points (then the lowest id), so the choice is
    deterministic and gives the next player as little as possible.
    """
    best_v = -1.0
    best_c = -1
    for d in sorted(hand, key=discard_sort_key):
        if d == taken:
            continue
        a, b, c = (x for x in hand if x != d)
        v = table[a * 2704 + b * 52 + c]
        if v > best_v:
            best_v, best_c = v, d
    return best_v, best_c


def value3(hand: tuple[int, ...] | list[int], table: list[float]) -> float:
    a, b, c = hand
    return table[a * 2704 + b * 52 + c]


def suit_points(cards: tuple[int, ...] | list[int]) -> float:
    """Best single-suit total of some cards (a lower bound on the hand that holds them)."""
    sums = [0, 0, 0, 0]
    for c in cards:
        sums[CARD_SUIT[c]] += CARD_POINTS[c]
    return float(max(sums)) if cards else 0.0


@dataclass
class HandModel:
    """Lookup tables for one scoring variant (built once, then cached).

    ``value``: the engine's value table (list, fast scalar lookups) and ``value_np``.
    ``potential``: E[value after one more draw from the 49 other cards, keeping the best
    three] for every ordered triple; a hand with two suited high cards has more potential
    than a dead 21 in three suits, which is what separates good discards from equal ones.
    ``chains``: values of simulated solo greedy drawers (row = a player, column k = value
    after k draws, keeping the best three each time; fixed seed, so deterministic).
    :meth:`value_dist` turns them into an opponent's value distribution.
    """

    value: list[float]
    value_np: np.ndarray
    potential: list[float]
    potential_np: np.ndarray
    chains: np.ndarray
    _dists: dict[tuple, tuple[list[float], list[float]]] = field(default_factory=dict)

    def value_dist(self, col: int, cond_col: int, cap: float, floor: float) -> tuple[list[float], list[float]]:
        """``(P(V < b/2), P(V <= b/2))`` for every bin ``b`` of a drawer's value after ``col``
        draws, given that it was worth less than ``cap`` after ``cond_col`` draws (it did
        not knock then: players knock with good hands; ``cond_col < 0``: no condition) and
        is worth at least ``floor`` now (cards it is known to hold; a knocker's minimum).
        Falls back to fewer conditions when too few simulated drawers qualify.
        """
        col = min(col, MAX_DRAWS + 1)
        cond_col = min(cond_col, MAX_DRAWS + 1)
        key = (col, cond_col, cap, floor)
        rows = self._dists.get(key)
        if rows is None:
            vals = self.chains[:, col]
            ok = vals >= floor
            if cond_col >= 0:
                both = ok & (self.chains[:, cond_col] < cap)
                if both.sum() >= 50:
                    ok = both
            if ok.sum() >= 20:
                vals = vals[ok]
            else:  # a floor the simulation rarely reaches: the floor itself is the estimate
                vals = np.maximum(vals, floor)
            rows = _cdf_rows(vals)
            self._dists[key] = rows
        return rows


_MODELS: dict[tuple, HandModel] = {}


def hand_model(rules: Rules) -> HandModel:
    key = (rules.scoring_key, rules.deck)
    model = _MODELS.get(key)
    if model is None:
        model = _build_model(rules)
        _MODELS[key] = model
    return model


def _build_model(rules: Rules) -> HandModel:
    """The tables for ``rules``: potentials and drawers' values over the cards of its pack
    (the Italian pack has 40), so that the estimates are those of the game being played."""
    table = value_table(rules)
    vnp = np.asarray(table, dtype=np.float64)
    in_pack = np.zeros(52, dtype=bool)
    in_pack[list(rules.deck_cards)] = True
    # Potential of every unordered triple a<b<c, then copied to all six orders.
    idx = np.array([(a, b, c) for a in range(52) for b in range(a + 1, 52) for c in range(b + 1, 52)])
    a, b, c = idx[:, 0:1], idx[:, 1:2], idx[:, 2:3]
    u = np.arange(52)[None, :]
    keep = vnp[a * 2704 + b * 52 + c]
    best = np.maximum.reduce([
        np.broadcast_to(keep, (len(idx), 52)),
        vnp[u * 2704 + b * 52 + c],
        vnp[a * 2704 + u * 52 + c],
        vnp[a * 2704 + b * 52 + u],
    ])
    valid = (u != a) & (u != b) & (u != c) & in_pack[u]
    pot = (best * valid).sum(axis=1) / (len(rules.deck_cards) - 3)
    potential = np.zeros(52**3, dtype=np.float64)
    a, b, c = idx[:, 0], idx[:, 1], idx[:, 2]
    for x, y, z in ((a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a)):
        potential[x * 2704 + y * 52 + z] = pot
    return HandModel(table, vnp, potential.tolist(), potential,
                     _draw_chains(table, rules.deck_cards))


def _draw_chains(table: list[float], pack: tuple[int, ...], chains: int = 6000) -> np.ndarray:
    """Values of solo greedy drawers: row = one chain, column k = value after k draws."""
    rng = random.Random(12345)
    out = np.zeros((chains, MAX_DRAWS + 2), dtype=np.float64)
    deck = list(pack)
    for i in range(chains):
        rng.shuffle(deck)
        hand = deck[:3]
        v = value3(hand, table)
        row = out[i]
        row[0] = v
        for k in range(1, MAX_DRAWS + 2):
            u = deck[2 + k]
            x, y, z = hand
            for new in ((u, y, z), (x, u, z), (x, y, u)):
                nv = table[new[0] * 2704 + new[1] * 52 + new[2]]
                if nv > v:
                    v, hand = nv, list(new)
            row[k] = v
    return out


def _cdf_rows(values: np.ndarray) -> tuple[list[float], list[float]]:
    """(P(V < b/2), P(V <= b/2)) for every bin b, from a sample of values."""
    hist = np.bincount((values * 2).astype(np.int64), minlength=NUM_BINS)[:NUM_BINS]
    le = np.cumsum(hist) / max(len(values), 1)
    lt = np.concatenate([[0.0], le[:-1]])
    return lt.tolist(), le.tolist()


def next_active(view: PlayerView, seat: int) -> int:
    n = view.num_players
    s = (seat + 1) % n
    while not view.active[s]:
        s = (s + 1) % n
    return s


def opponents(view: PlayerView) -> list[int]:
    """Active seats other than mine, clockwise from my left."""
    n = view.num_players
    return [(view.seat + i) % n for i in range(1, n) if view.active[(view.seat + i) % n]]


# -- golf (002, Mike Armstrong) ----------------------------------------------------------
def golf_face_up(view: PlayerView) -> list[int]:
    """My face-up golf cards, in slot order (the card drawn or taken this turn excluded)."""
    return [c for c in view.slots[view.seat] if c is not None]


def golf_face_down(view: PlayerView) -> list[int]:
    """Indices of my face-down golf slots."""
    return [i for i, c in enumerate(view.slots[view.seat]) if c is None]


_GOLF_ARRAYS: dict[tuple, np.ndarray] = {}


def _golf_array(rules: Rules) -> np.ndarray:
    key = rules.scoring_key
    arr = _GOLF_ARRAYS.get(key)
    if arr is None:
        arr = np.asarray(value_table(rules), dtype=np.float64).reshape(52, 52, 52)
        _GOLF_ARRAYS[key] = arr
    return arr


def _distinct(m: int, k: int) -> np.ndarray:
    """Mask of index tuples of ``k`` distinct positions in ``range(m)`` (k = 2 or 3)."""
    i = np.arange(m)
    if k == 2:
        return i[:, None] != i[None, :]
    a, b, c = i[:, None, None], i[None, :, None], i[None, None, :]
    return (a != b) & (a != c) & (b != c)


def golf_expected(up: list[int], unseen: np.ndarray, t: np.ndarray) -> float:
    """Exact expected golf value of the face-up cards ``up`` plus ``3 - len(up)`` face-down
    cards, each a random card of ``unseen`` (nobody has seen a face-down card, so every
    unseen card is equally likely to lie there)."""
    k = 3 - len(up)
    m = len(unseen)
    if k == 0:
        return float(t[up[0], up[1], up[2]])
    if m < k:
        return 0.0
    if k == 1:
        return float(t[up[0], up[1], unseen].mean())
    if k == 2:
        block = t[up[0]][np.ix_(unseen, unseen)]
        return float(block[_distinct(m, 2)].mean())
    block = t[np.ix_(unseen, unseen, unseen)]
    return float(block[_distinct(m, 3)].mean())


def _golf_stock(up: list[int], unseen: np.ndarray, t: np.ndarray, turn: float) -> float:
    """Expected final value of drawing from the stock: each unseen card equally likely,
    then the better of keeping it (the rest of the face-down cards random among the other
    unseen cards) and turning a slot up (worth ``turn``)."""
    k = 3 - len(up)  # face-down slots now; keeping the card leaves k - 1
    m = len(unseen)
    if k == 1:
        keep = t[up[0], up[1], unseen]
    elif k == 2:
        block = t[up[0]][np.ix_(unseen, unseen)]  # [drawn, other]
        mask = _distinct(m, 2)
        keep = (block * mask).sum(axis=1) / max(m - 1, 1)
    else:
        block = t[np.ix_(unseen, unseen, unseen)]  # [drawn, other, other]
        mask = _distinct(m, 3)
        keep = (block * mask).sum(axis=(1, 2)) / max((m - 1) * (m - 2), 1)
    return float(np.maximum(keep, turn).mean())


def golf_choices(view: PlayerView) -> dict[str, float]:
    """The expected final value of each golf choice open to me, the face-down cards that
    stay down counted as random unseen cards: ``"take"`` (the top discard into a slot),
    ``"stock"`` (draw, then the better of keeping it and turning a slot up), ``"place"``
    (the card in hand into a slot) and ``"turn"`` (discard it and turn a slot up), each
    present only where it is open. Exact expectations (numpy), so the same view always
    gives the same numbers."""
    t = _golf_array(view.rules)
    up = golf_face_up(view)
    unseen = np.asarray(unseen_cards(view), dtype=np.int64)
    out: dict[str, float] = {}
    if view.phase == "golf_draw":
        turn = golf_expected(up, unseen, t)
        if view.top_discard is not None:
            out["take"] = golf_expected(up + [view.top_discard], unseen, t)
        if view.stock_size and len(unseen):
            out["stock"] = _golf_stock(up, unseen, t, turn)
    elif view.phase == "golf_place" and view.drawn_card is not None:
        out["place"] = golf_expected(up + [view.drawn_card], unseen, t)
        if view.taken_card is None:
            out["turn"] = golf_expected(up, unseen, t)
    return out
