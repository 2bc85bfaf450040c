"""``expert``'s moves in every game of a :class:`scat_env.batch.BatchEnv` at once.

The batched trainer plays its learner against opponents stepped in the same compiled loop as
the games; ``greedy`` and ``random`` were the only ones cheap enough, and a policy trained
against them learned to beat them, not ``expert`` (docs/EXPERIMENTS.md). This is
:class:`agents.expert.ExpertAgent` written again over the batched engine's arrays with numba:
the same card counting, value-plus-potential tables, next-player reading and knock-risk
model, the same tie-breaks and the same floating-point sums (numpy's pairwise mean,
replayed), so it makes the same move in the same position. ``tests/test_batch_expert.py``
plays seeded games in which every decision is asked of both and checks that they agree.

It reads what the mover may know and nothing else: the compact observation (its hand, the
discard pile, the cards each opponent took from the pile and still holds, lives, who
knocked) and the hand's public record (:meth:`~scat_env.batch.BatchEnv.public_record`: how
many cards each seat drew and which suits it discarded, what every player's log shows).

Covered: the rules where ``expert`` plays the lowest-loses knock game of the batched engine
(:func:`covers`); a preset with a second knock (``moyer_second_knock``), a call, a
points race or golf is refused by name.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from scat_env import Rules
from scat_env.batch import BatchEnv
from scat_env.batch import covers as engine_covers
from scat_env.batch.kernels import (
    C_DRAWN,
    C_HAND,
    C_KNOWN,
    C_TAKEN,
    C_TOP,
    C_UNSEEN,
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    KNOCK,
)
from scat_env.cards import CARD_POINTS, CARD_SUIT

from .expert import ExpertParams, eval_tables
from .knowledge import MAX_DRAWS, NUM_BINS, hand_model

_COLS = MAX_DRAWS + 2  # value_dist's columns: draws 0..MAX_DRAWS + 1
_FLOORS = 42  # a seat's known cards are worth 0..41 in one suit
_POINTS = np.array(CARD_POINTS, np.int64)
_SUIT = np.array(CARD_SUIT, np.int64)
#: Discard tie-break order of each card (``knowledge.discard_sort_key``: points, then id).
_SORT_KEY = _POINTS * 64 + np.arange(52)


def uncovered(rules: Rules) -> str | None:
    """Why :class:`BatchExpert` cannot play ``rules``, or None."""
    if not engine_covers(rules):
        return "the batched engine does not play these rules"
    if rules.calls:
        return f"the batched expert does not play {', '.join(rules.calls)} yet"
    if rules.play == "golf":
        return "the batched expert does not play golf yet"
    if rules.second_knock:
        return "a second knock (moyer_second_knock)"
    if rules.scoring == "points":
        return "a points race"
    return None


def covers(rules: Rules | str) -> bool:
    """Whether :class:`BatchExpert` plays ``rules`` (a :class:`Rules` or preset name)."""
    return uncovered(Rules.preset(rules) if isinstance(rules, str) else rules) is None


class BatchExpert:
    """The ``expert`` agent for every game of a batched env (module docstring)."""

    def __init__(self, rules: Rules | str = "standard",
                 params: ExpertParams | None = None) -> None:
        rules = Rules.preset(rules) if isinstance(rules, str) else rules
        why = uncovered(rules)
        if why is not None:
            raise ValueError(f"the batched expert does not play rules {rules.name!r}: {why}")
        p = self.params = params or ExpertParams()
        if p.knock_floor != int(p.knock_floor):
            raise ValueError(f"the batched expert needs a whole knock_floor, got {p.knock_floor}")
        self.rules = rules
        deck = sorted(rules.deck_cards)
        if list(rules.deck_cards) != deck:
            raise ValueError("the batched expert counts cards in pack order: ascending ids")
        (self._T, self._EV, self._POT, self._in_deck, self._LT, self._LE, self._KLT,
         self._KLE) = _tables(rules, p)
        tie = {"safe": 0, "all": 1, "knocker_only": 2}[rules.knocker_tie]
        self._rule = np.array([rules.knock_mode == "gin", tie, rules.knocker_loss,
                               rules.knock_then_draw], np.int64)
        self._scratch: tuple[np.ndarray, ...] | None = None
        self._knobs = np.array([p.feed, p.risk, p.low_lives, p.min_value, p.gin_win,
                                p.draw_bonus], np.float64)

    def actions(self, env: BatchEnv, out: np.ndarray | None = None) -> np.ndarray:
        """The expert's move for the player to move in every game of ``env``."""
        if env.rules != self.rules:
            raise ValueError(f"this batched expert plays rules {self.rules.name!r}, the env "
                             f"{env.rules.name!r}")
        B, n = env.num_envs, env.num_players
        if out is None:
            out = np.empty(B, np.int64)
        if self._scratch is None or self._scratch[4].shape != (B, n):
            self._scratch = (np.empty((B, 4), np.int64), np.empty((B, 52), np.int64),
                             np.empty((B, 52)), np.empty((B, n, 4), np.int64),
                             np.empty((B, n), np.int64), np.empty((B, NUM_BINS)))
        o = env.current()
        expert_actions(n, o["observation"], o["action_mask"], o["current_player"],
                       env.public_record(), self._T, self._EV, self._POT, self._in_deck,
                       self._LT, self._LE, self._KLT, self._KLE, self._rule, self._knobs,
                       *self._scratch, out)
        return out


#: The lookup tables per (scoring, pack, knobs): building them takes about a second, and a
#: trainer builds an expert per table size.
_TABLES: dict[tuple, tuple[np.ndarray, ...]] = {}


def _tables(rules: Rules, p: ExpertParams) -> tuple[np.ndarray, ...]:
    """Value, value-plus-potential and potential tables, the pack, and the opponent model's
    value distributions (``value_dist(col, col - delta, quiet_cap, floor)`` for every column,
    delta 0..2, the conditions the model asks for after value_dist's clipping, and floor;
    plain and with a knocker's floor)."""
    key = (rules.scoring_key, rules.deck, p)
    if key in _TABLES:
        return _TABLES[key]
    model = hand_model(rules)
    ev = eval_tables(rules, model, p.beta)[1]
    in_deck = np.zeros(52, np.bool_)
    in_deck[list(rules.deck_cards)] = True
    shape = (_COLS, 3, _FLOORS, NUM_BINS)
    lt_, le_, klt, kle = (np.zeros(shape) for _ in range(4))
    for col in range(_COLS):
        for delta in range(3):
            for f in range(_FLOORS):
                lt, le = model.value_dist(col, col - delta, p.quiet_cap, float(f))
                lt_[col, delta, f], le_[col, delta, f] = lt, le
                lt, le = model.value_dist(col, col - delta, p.quiet_cap,
                                          max(float(f), p.knock_floor))
                klt[col, delta, f], kle[col, delta, f] = lt, le
    # Shared by every expert of these rules, and never written. (Marked read-only, numba
    # would compile the kernel again for read-only arrays: half a minute.)
    tables = (model.value_np, ev, model.potential_np, in_deck, lt_, le_, klt, kle)
    _TABLES[key] = tables
    return tables


@njit(cache=True, inline="always")
def _mean(x, g, k):
    """``float(np.mean(x[g, :k]))`` to the last bit: numpy's pairwise sum (eight running sums
    over strided elements below its 128-element block, then the rest in order), replayed
    so that a close stock-or-discard call goes the same way as the Python expert's."""
    if k < 8:
        s = 0.0
        for i in range(k):
            s += x[g, i]
        return s / k
    r0, r1, r2, r3 = x[g, 0], x[g, 1], x[g, 2], x[g, 3]
    r4, r5, r6, r7 = x[g, 4], x[g, 5], x[g, 6], x[g, 7]
    i = 8
    while i < k - (k % 8):
        r0 += x[g, i]
        r1 += x[g, i + 1]
        r2 += x[g, i + 2]
        r3 += x[g, i + 3]
        r4 += x[g, i + 4]
        r5 += x[g, i + 5]
        r6 += x[g, i + 6]
        r7 += x[g, i + 7]
        i += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < k:
        s += x[g, i]
        i += 1
    return s / k


@njit(cache=True, inline="always")
def _dist_index(k_col, k_cond):
    """(column, delta) of ``value_dist(k_col, k_cond, ...)`` after its clipping."""
    col = min(k_col, _COLS - 1)
    cond = min(k_cond, _COLS - 1)
    return col, col - cond


@njit(cache=True, inline="always")
def _read(obs, g, n, in_deck, hand, unseen, suits, floor):
    """The mover's cards (``hand[g]``), the unseen cards of the pack (``unseen[g]``), each
    opponent's known cards' best one-suit points (``floor[g, r]``, relative seats); returns
    ``(cards in hand, top discard, card taken this turn, unseen count, knocker)``, the last
    three -1 for none."""
    k = 0
    top = -1
    taken = -1
    m = 0
    for r in range(n):
        for x in range(4):
            suits[g, r, x] = 0
    for c in range(52):
        code = obs[g, c]
        if code == C_HAND or code == C_DRAWN or code == C_TAKEN:
            hand[g, k] = c
            k += 1
            if code == C_TAKEN:
                taken = c
        elif code == C_TOP:
            top = c
        elif code >= C_KNOWN:
            suits[g, code - C_KNOWN + 1, _SUIT[c]] += _POINTS[c]
        elif code == C_UNSEEN and in_deck[c]:
            unseen[g, m] = c
            m += 1
    for r in range(n):
        best = 0
        for x in range(4):
            best = max(best, suits[g, r, x])
        floor[g, r] = best
    knocker = -1  # relative seat
    for r in range(n):
        if obs[g, 52 + n + r] & 2:
            knocker = r
    return k, top, taken, m, knocker


@njit(cache=True, inline="always")
def _discard(obs, g, n, me, pub, T, EV, hand, taken, knocker, feed):
    """``ExpertAgent._discard``: keep the best value-plus-potential (the value alone on a
    last turn), less a penalty for feeding the next player's suit."""
    final_turn = knocker >= 0
    nxt = 1
    while not obs[g, 52 + n + nxt] & 1:
        nxt += 1
    w0 = w1 = w2 = w3 = 0.0  # how much the next player wants each suit
    if not (final_turn and nxt == knocker) and feed != 0.0:
        for c in range(52):
            if obs[g, c] == C_KNOWN + nxt - 1:
                x = _SUIT[c]
                w0 += x == 0
                w1 += x == 1
                w2 += x == 2
                w3 += x == 3
        s = (me + nxt) % n
        w0 -= 0.5 * pub[g, s, 1]
        w1 -= 0.5 * pub[g, s, 2]
        w2 -= 0.5 * pub[g, s, 3]
        w3 -= 0.5 * pub[g, s, 4]
    best_score = -1e9
    best_card = -1
    last_key = -1
    for _ in range(4):  # in discard_sort_key order: the smallest key not yet tried
        d = -1
        for i in range(4):
            c = hand[g, i]
            if _SORT_KEY[c] > last_key and (d < 0 or _SORT_KEY[c] < _SORT_KEY[d]):
                d = c
        last_key = _SORT_KEY[d]
        if d == taken:
            continue
        idx = 0
        for i in range(4):
            c = hand[g, i]
            if c != d:
                idx = idx * 52 + c
        score = T[idx] if final_turn else EV[idx]
        x = _SUIT[d]
        w = w0 if x == 0 else w1 if x == 1 else w2 if x == 2 else w3
        if w > 0:
            score -= feed * _POINTS[d] * min(w, 2.0)
        if score > best_score + 1e-9:
            best_score, best_card = score, d
    return best_card


@njit(cache=True, inline="always")
def _knocks(obs, g, n, me, pub, value, floor, LT, LE, gin, tie, kloss, risk, low_lives,
            min_value, gin_win):
    """``ExpertAgent._knock_decision``: the lives a knock is expected to cost, from each
    opponent's value after its last turn, against a budget."""
    x = int(value * 2)
    p_sole = p_none = p_high = 1.0
    m = 0
    for r in range(1, n):
        if not obs[g, 52 + n + r] & 1:
            continue
        m += 1
        kd = pub[g, (me + r) % n, 0]  # its last turn still to come
        col, delta = _dist_index(kd + 1, kd - 1)
        lt = LT[col, delta, floor[g, r], x]
        le = LE[col, delta, floor[g, r], x]
        p_sole *= 1.0 - le
        p_none *= 1.0 - lt
        p_high *= le
    if gin:
        return p_high >= gin_win
    cost = kloss * p_sole
    if tie != 0:
        cost += kloss * (p_none - p_sole)
    budget = risk / m
    if obs[g, 52] <= kloss:  # my lives
        budget *= low_lives
    return value >= min_value and cost <= budget


@njit(cache=True, inline="always")
def _final_draw(obs, g, n, me, pub, T, hand, unseen, m_unseen, vals, lose, floor, top,
                knocker, can_stock, can_take, LT, KLT, KLE, gin, tie):
    """``ExpertAgent._final_draw``: the draw least likely to leave me the one who loses."""
    a, b, c = hand[g, 0], hand[g, 1], hand[g, 2]
    value = T[a * 2704 + b * 52 + c]
    for bn in range(NUM_BINS):
        lose[g, bn] = 1.0
    for r in range(1, n):
        if not obs[g, 52 + n + r] & 1 or (gin and r != knocker):
            continue  # gin: I lose unless I beat the knocker, whatever the others
        kd = pub[g, (me + r) % n, 0]
        if r == knocker:
            col, delta = _dist_index(kd, kd - 1)
        elif r > knocker:  # played its final turn after the knock
            col, delta = _dist_index(kd, kd - 2)
        else:
            col, delta = _dist_index(kd + 1, kd - 1)
        f = floor[g, r]
        for bn in range(NUM_BINS):
            if r != knocker:
                above = 1.0 - LT[col, delta, f, bn]
            elif tie == 2 and not gin:  # a tie costs only the knocker
                above = 1.0 - KLE[col, delta, f, bn]
            else:
                above = 1.0 - KLT[col, delta, f, bn]
            lose[g, bn] *= above
    take_p = 2.0
    take_v = value
    if can_take:
        take_v = max(max(T[top * 2704 + b * 52 + c], T[a * 2704 + top * 52 + c]),
                     T[a * 2704 + b * 52 + top])
        take_p = lose[g, int(take_v * 2)]
    if can_stock:
        for i in range(m_unseen):
            u = unseen[g, i]
            best = max(max(T[u * 2704 + b * 52 + c], T[a * 2704 + u * 52 + c]),
                       max(T[a * 2704 + b * 52 + u], value))
            vals[g, i] = lose[g, int(best * 2)]
        return DRAW_STOCK if _mean(vals, g, m_unseen) <= take_p else DRAW_DISCARD
    return DRAW_DISCARD if take_v > value else END_PLAY


@njit(cache=True, inline="always")
def _draw(T, EV, hand, unseen, m_unseen, vals, g, top, can_stock, can_take, draw_bonus):
    """``ExpertAgent._draw`` before the last round: take the top discard when it is worth
    more than a stock draw's expectation over the unseen cards."""
    a, b, c = hand[g, 0], hand[g, 1], hand[g, 2]
    value = T[a * 2704 + b * 52 + c]
    take = -1.0
    keep = -1
    if can_take:
        for i in range(3):
            r0 = b if i == 0 else a
            r1 = b if i == 2 else c
            idx = r0 * 2704 + r1 * 52 + top
            e = EV[idx] if can_stock else T[idx]
            if e > take:
                take, keep = e, idx
    if not can_stock:  # the hand ends soon: only the value shown counts
        return DRAW_DISCARD if keep >= 0 and T[keep] > value else END_PLAY
    stay = EV[a * 2704 + b * 52 + c]
    for i in range(m_unseen):
        u = unseen[g, i]
        vals[g, i] = max(max(EV[u * 2704 + b * 52 + c], EV[a * 2704 + u * 52 + c]),
                         max(EV[a * 2704 + b * 52 + u], stay))
    return DRAW_DISCARD if take > _mean(vals, g, m_unseen) + draw_bonus else DRAW_STOCK


@njit(cache=True, parallel=True)
def expert_actions(n, obs, mask, cur, pub, T, EV, POT, in_deck, LT, LE, KLT, KLE, rule,
                   knobs, hand, unseen, vals, suits, floor, lose, out):
    """``out[g]``: ``ExpertAgent``'s action for the player to move in game ``g``.

    ``pub[g, s]``: seat ``s``'s draws this hand, then its discards of each suit.
    ``rule``: gin, knocker tie mode, knocker's loss, knock-then-draw. ``knobs``: feed, risk,
    low_lives, min_value, gin_win, draw_bonus. ``hand`` .. ``lose``: scratch rows per game
    (allocated once by :class:`BatchExpert`, not per game inside the loop)."""
    gin, tie, kloss, then_draw = rule[0], rule[1], rule[2], rule[3]
    for g in prange(obs.shape[0]):
        me = cur[g]
        k, top, taken, m_unseen, knocker = _read(obs, g, n, in_deck, hand, unseen, suits,
                                                 floor)
        if k == 4:
            out[g] = _discard(obs, g, n, me, pub, T, EV, hand, taken, knocker, knobs[0])
            continue
        can_stock = mask[g, DRAW_STOCK]
        can_take = mask[g, DRAW_DISCARD] and top >= 0
        if mask[g, KNOCK] and knocker < 0:
            a, b, c = hand[g, 0], hand[g, 1], hand[g, 2]
            value = T[a * 2704 + b * 52 + c]
            if then_draw:  # the knocker still draws: judge the hand expected after it
                value = max(value, POT[a * 2704 + b * 52 + c])
            if _knocks(obs, g, n, me, pub, value, floor, LT, LE, gin, tie, kloss, knobs[1],
                       knobs[2], knobs[3], knobs[4]):
                out[g] = KNOCK
                continue
        if knocker >= 0:
            out[g] = _final_draw(obs, g, n, me, pub, T, hand, unseen, m_unseen, vals, lose,
                                 floor, top, knocker, can_stock, can_take, LT, KLT, KLE, gin,
                                 tie)
        else:
            out[g] = _draw(T, EV, hand, unseen, m_unseen, vals, g, top, can_stock, can_take,
                           knobs[5])
