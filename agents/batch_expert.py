"""``expert``'s moves in every game of a :class:`scat_env.batch.BatchEnv` at once.

The batched trainer plays its learner against opponents stepped in the same compiled loop as
the games; ``greedy`` and ``random`` were the only ones cheap enough, and a policy trained
against them learned to beat them, not ``expert``. This is
:class:`agents.expert.ExpertAgent` written again over the batched engine's arrays with numba:
the same card counting, value-plus-potential tables, next-player reading and knock-risk
model, the same tie-breaks and the same floating-point sums (numpy's pairwise sums and
means, replayed), so it makes the same move in the same position. ``tests/test_batch_expert.py``
plays seeded games in which every decision is asked of both and checks that they agree.

It reads what the mover may know and nothing else: the compact observation (its hand, the
discard pile, the cards each opponent took from the pile and still holds, lives, who
knocked; with the pieces some rules append: the phase of a call, golf's face-up slots) and
the hand's public record (:meth:`~scat_env.batch.BatchEnv.public_record`: how many cards each
seat drew and which suits it discarded, what every player's log shows).

Covered: every rule set the batched engine plays (:func:`covers`), each with the Python
expert's strategy for it: the lowest-loses knock game and gin, the hammer, the second knock
and the blind calls (throw-down, sudden death), declaring 31, the points races, and golf's
exact expected values (each a sum over every way the face-down cards may lie: up to
``m * (m - 1) * (m - 2)`` terms for ``m`` unseen cards, summed in numpy's order).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from scat_env import Rules
from scat_env.batch import BatchEnv
from scat_env.batch import uncovered as engine_uncovered
from scat_env.batch.cachelock import lock_caches
from scat_env.batch.kernels import (
    C_DRAWN,
    C_HAND,
    C_KNOWN,
    C_TAKEN,
    C_TOP,
    C_UNSEEN,
    DECLARE,
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    HAMMER,
    KNOCK,
    PASS,
    PLACE_SLOT,
    SUDDEN_DEATH,
    THROW_DOWN,
    TURN_UP,
)
from scat_env.batch.reference import PHASE_CODES, piece_starts
from scat_env.cards import CARD_POINTS, CARD_SUIT

from .expert import ExpertParams, eval_tables
from .knowledge import MAX_DRAWS, NUM_BINS, hand_model

_COLS = MAX_DRAWS + 2  # value_dist's columns: draws 0..MAX_DRAWS + 1
_FLOORS = 42  # a seat's known cards are worth 0..41 in one suit
_POINTS = np.array(CARD_POINTS, np.int64)
_SUIT = np.array(CARD_SUIT, np.int64)
#: Discard tie-break order of each card (``knowledge.discard_sort_key``: points, then id).
_SORT_KEY = _POINTS * 64 + np.arange(52)
#: The observation's phase codes the expert answers with a call or golf's choices.
_BLIND, _SUDDEN, _DECLARE = PHASE_CODES["blind"], PHASE_CODES["sudden_death"], PHASE_CODES["declare"]
_GOLF_DRAW = PHASE_CODES["golf_draw"]
#: numpy's pairwise summation: at most this many terms are summed in one block
#: (``PW_BLOCKSIZE`` of numpy's loops), eight running sums each.
_PW_BLOCK = 128
#: The sequences golf's expectations sum (:func:`_fill`): ``T[p0, p1, u]`` over the unseen
#: cards ``u``; ``T[p0, u, v]`` over ordered pairs of distinct unseen cards; ``T[u, v, w]``
#: over ordered distinct triples; ``T[u_row, v, w]`` over every ``(v, w)``, 0 where two of
#: the three are the same card.
_SEQ_ONE, _SEQ_PAIRS, _SEQ_TRIPLES, _SEQ_ROW = 0, 1, 2, 3


def uncovered(rules: Rules) -> str | None:
    """Why :class:`BatchExpert` cannot play ``rules``, or None: what the batched engine does
    not play (the expert plays every rule set the engine does)."""
    why = engine_uncovered(rules)
    return None if why is None else f"the batched engine does not play these rules ({why})"


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
                               rules.knock_then_draw, rules.scoring == "points",
                               rules.play == "golf", _half_points(self._T)], np.int64)
        self._scratch: tuple[np.ndarray, ...] | None = None
        self._layout = np.full(2, -1, np.int64)
        self._knobs = np.array([p.feed, p.risk, p.low_lives, p.min_value, p.gin_win,
                                p.draw_bonus, p.points_win], np.float64)

    def actions(self, env: BatchEnv, out: np.ndarray | None = None,
                rows: np.ndarray | None = None) -> np.ndarray:
        """The expert's move for the player to move in every game of ``env``; with
        ``rows`` (game indices), in those games alone (``out``'s other entries are left as
        they were): a caller whose finished games wait skips their cost, which in golf's
        exact expectations is most of a step's."""
        if env.rules != self.rules:
            raise ValueError(f"this batched expert plays rules {self.rules.name!r}, the env "
                             f"{env.rules.name!r}")
        B, n = env.num_envs, env.num_players
        if out is None:
            out = np.empty(B, np.int64)
        if self._scratch is None or self._scratch[4].shape != (B, n):
            self._scratch = (np.empty((B, 4), np.int64), np.empty((B, 52), np.int64),
                             np.empty((B, 52)), np.empty((B, n, 4), np.int64),
                             np.empty((B, n), np.int64), np.empty((B, NUM_BINS)),
                             np.empty((B, _PW_BLOCK)), np.empty((B, 3), np.int64))
            self._layout = _layout(n, self.rules)
        o = env.current()
        # one type of every argument on both paths: one compiled kernel, not two
        obs, mask, cur, pub = (o["observation"], o["action_mask"],
                               np.ascontiguousarray(o["current_player"]), env.public_record())
        scratch, dest = self._scratch, out
        if rows is not None:
            rows = np.asarray(rows, np.int64)
            obs, mask, cur, pub = obs[rows], mask[rows], cur[rows], pub[rows]
            pub.flags.writeable = False
            scratch = tuple(a[:len(rows)] for a in scratch)
            dest = np.empty(len(rows), np.int64)
        expert_actions(n, self._layout, obs, mask, cur, pub, self._T, self._EV, self._POT,
                       self._in_deck, self._LT, self._LE, self._KLT, self._KLE, self._rule,
                       self._knobs, *scratch, dest)
        if rows is not None:
            out[rows] = dest
        return out


def _half_points(T: np.ndarray) -> bool:
    """Whether the value table holds half points only, the same in every order of the three
    cards: golf's expectations may then sum each set of cards once (:func:`_half_point_sum`)
    and still equal numpy's sums to the last bit."""
    t = T.reshape(52, 52, 52)
    return bool(np.array_equal(2 * T, np.round(2 * T)) and T.max() < 1024
                and np.array_equal(t, t.transpose(1, 0, 2))
                and np.array_equal(t, t.transpose(0, 2, 1)))


def _layout(n: int, rules: Rules) -> np.ndarray:
    """Where the pieces the expert reads start in an observation row: the phase code and the
    golf slots (-1 for a piece these rules do not append)."""
    where = piece_starts(n, rules)
    return np.array([where.get("phase", -1), where.get("slots", -1)], np.int64)


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
def _block_sum(x, g, k):
    """``np.sum(x[g, :k])`` to the last bit for ``k`` up to numpy's 128-element block: eight
    running sums over strided elements, then the rest in order (numpy's pairwise sum)."""
    if k < 8:
        s = 0.0
        for i in range(k):
            s += x[g, i]
        return s
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
    return s


@njit(cache=True, inline="always")
def _mean(x, g, k):
    """``float(np.mean(x[g, :k]))`` to the last bit (``k`` up to 128), so that a close
    stock-or-discard call goes the same way as the Python expert's."""
    return _block_sum(x, g, k) / k


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
def _knocks(obs, g, n, me, pub, value, floor, LT, LE, gin, points, tie, kloss, knobs):
    """``ExpertAgent._knock_decision``: the lives a knock is expected to cost, from each
    opponent's value after its last turn, against a budget; in the gin game the chance of
    the highest hand, in a points race that of every opponent ending below me."""
    x = int(value * 2)
    p_sole = p_none = p_high = p_below = 1.0
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
        p_below *= lt
    if points:  # a tie goes to the non-knocker: everyone must end strictly below
        return p_below >= knobs[6]
    if gin:
        return p_high >= knobs[4]
    cost = kloss * p_sole
    if tie != 0:
        cost += kloss * (p_none - p_sole)
    budget = knobs[1] / m
    if obs[g, 52] <= kloss:  # my lives
        budget *= knobs[2]
    return value >= knobs[3] and cost <= budget


@njit(cache=True, inline="always")
def _hammers(obs, g, n, value, LT, LE, tie, kloss, risk):
    """``ExpertAgent._hammer_decision``: a knock nobody answers with a draw, so its risk is
    judged on dealt hands (no draws, no condition, no known cards), within a knock's
    budget."""
    x = int(value * 2)
    lt = LT[0, 1, 0, x]  # value_dist(0, -1, quiet_cap, 0.0)
    le = LE[0, 1, 0, x]
    p_sole = p_none = 1.0
    m = 0
    for r in range(1, n):
        if obs[g, 52 + n + r] & 1:
            m += 1
            p_sole *= 1.0 - le
            p_none *= 1.0 - lt
    cost = kloss * p_sole
    if tie != 0:
        cost += kloss * (p_none - p_sole)
    return m > 0 and cost <= risk / m


@njit(cache=True, inline="always")
def _blind_call(obs, g, n, code, kloss):
    """``ExpertAgent._blind_call``: a showdown of unseen cards is a coin toss, called only
    to finish the game: heads-up against an opponent on its last life, with lives to spare
    even after paying the caller's price."""
    cost = kloss if code == _BLIND else 1
    m = 0
    theirs = 0
    for r in range(1, n):
        if obs[g, 52 + n + r] & 1:
            m += 1
            theirs = obs[g, 52 + r]
    if m == 1 and theirs == 1 and obs[g, 52] > cost + 1:
        return THROW_DOWN if code == _BLIND else SUDDEN_DEATH
    return PASS


@njit(cache=True, inline="always")
def _lose_table(obs, g, n, me, pub, floor, knocker, lose, LT, LE, KLT, KLE, gin, points, tie):
    """``ExpertAgent._lose_table``: P(I lose a life at the showdown) per value bin of my
    final hand, once someone has knocked (``knocker``, a relative seat: 0 is my own knock
    when the knocker still draws); in a points race P(someone ends above me)."""
    for bn in range(NUM_BINS):
        lose[g, bn] = 1.0
    mine = knocker == 0  # knock-then-draw: my own draw after my knock, before anyone's
    for r in range(1, n):
        if not obs[g, 52 + n + r] & 1 or (gin and not points and not mine and r != knocker):
            continue  # gin: I lose unless I beat the knocker, whatever the others
        kd = pub[g, (me + r) % n, 0]
        if r == knocker:
            col, delta = _dist_index(kd, kd - 1)
        elif r > knocker and not mine:  # played its final turn after the knock
            col, delta = _dist_index(kd, kd - 2)
        else:
            col, delta = _dist_index(kd + 1, kd - 1)
        f = floor[g, r]
        for bn in range(NUM_BINS):
            if points:  # P(it ends at or below me), a tie scoring for me
                lose[g, bn] *= KLE[col, delta, f, bn] if r == knocker else LE[col, delta, f, bn]
                continue
            if r != knocker:
                above = 1.0 - LT[col, delta, f, bn]
            elif tie == 2 and not gin:  # a tie costs only the knocker
                above = 1.0 - KLE[col, delta, f, bn]
            else:
                above = 1.0 - KLT[col, delta, f, bn]
            lose[g, bn] *= above
    if points:
        for bn in range(NUM_BINS):
            lose[g, bn] = 1.0 - lose[g, bn]


@njit(cache=True, inline="always")
def _second_knocks(obs, g, n, me, pub, T, POT, hand, floor, knocker, lose, LT, LE, KLT, KLE,
                   gin, points, tie):
    """``ExpertAgent._second_knock_decision``: knock right after the knocker when being
    lowest now is less likely than after everyone's last turn, holding the hand my own draw
    is expected to give."""
    idx = hand[g, 0] * 2704 + hand[g, 1] * 52 + hand[g, 2]
    value = T[idx]
    x = int(value * 2)
    p_now = 1.0  # every opponent shows at least my value now
    for r in range(1, n):
        if not obs[g, 52 + n + r] & 1:
            continue
        kd = pub[g, (me + r) % n, 0]
        col, delta = _dist_index(kd, kd - 1)
        f = floor[g, r]
        lt = KLT[col, delta, f, x] if r == knocker else LT[col, delta, f, x]
        p_now *= 1.0 - lt
    later = max(value, POT[idx])
    _lose_table(obs, g, n, me, pub, floor, knocker, lose, LT, LE, KLT, KLE, gin, points, tie)
    return p_now < lose[g, int(later * 2)]


@njit(cache=True, inline="always")
def _final_draw(T, hand, unseen, m_unseen, vals, lose, g, top, can_stock, can_take):
    """``ExpertAgent._final_draw``: the draw least likely to leave me the one who loses
    (``lose[g]``: :func:`_lose_table`)."""
    a, b, c = hand[g, 0], hand[g, 1], hand[g, 2]
    value = T[a * 2704 + b * 52 + c]
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


# -- golf: exact expectations over the face-down cards (agents.knowledge.golf_choices) -------
@njit(cache=True)
def _fill(kind, count, p0, p1, row, T, u, m, buf, it, g):
    """The next ``count`` terms of sequence ``kind`` (``_SEQ_*``, over the unseen cards
    ``u[g, :m]``) into ``buf[g]``, from the position ``it[g]`` holds, which moves past them:
    the elements numpy's masked arrays hold, in their order."""
    a, b, c = it[g, 0], it[g, 1], it[g, 2]
    if kind == _SEQ_ONE:
        for i in range(count):
            buf[g, i] = T[p0 * 2704 + p1 * 52 + u[g, a]]
            a += 1
    elif kind == _SEQ_PAIRS:
        for i in range(count):
            buf[g, i] = T[p0 * 2704 + u[g, a] * 52 + u[g, b]]
            b += 1
            if b == a:
                b += 1
            if b >= m:
                a += 1
                b = 0
    elif kind == _SEQ_TRIPLES:
        for i in range(count):
            buf[g, i] = T[u[g, a] * 2704 + u[g, b] * 52 + u[g, c]]
            c += 1
            while c == a or c == b:
                c += 1
            if c >= m:
                b += 1
                if b == a:
                    b += 1
                if b >= m:
                    a += 1
                    b = 0
                c = 0
                while c == a or c == b:
                    c += 1
    else:
        for i in range(count):
            same = b == row or c == row or b == c
            buf[g, i] = 0.0 if same else T[u[g, row] * 2704 + u[g, b] * 52 + u[g, c]]
            c += 1
            if c == m:
                c = 0
                b += 1
    it[g, 0], it[g, 1], it[g, 2] = a, b, c


@njit(cache=True)
def _pairwise(kind, count, p0, p1, row, T, u, m, buf, it, g):
    """``np.sum`` of the next ``count`` terms of sequence ``kind`` to the last bit: numpy's
    pairwise summation (halves split at a multiple of eight down to 128-term blocks), the
    terms made block by block instead of stored (a triple sum has up to 132,600)."""
    if count <= _PW_BLOCK:
        _fill(kind, count, p0, p1, row, T, u, m, buf, it, g)
        return _block_sum(buf, g, count)
    half = count // 2
    half -= half % 8
    left = _pairwise(kind, half, p0, p1, row, T, u, m, buf, it, g)
    right = _pairwise(kind, count - half, p0, p1, row, T, u, m, buf, it, g)
    return left + right


@njit(cache=True)
def _half_point_sum(kind, p0, row, T, u, m, g):
    """What :func:`_pairwise` returns for sequence ``kind`` (pairs, triples or a row), when
    the table holds half points and is the same in any order of the three cards (golf's):
    every value and partial sum is then exact, so any order gives numpy's sum, and each set
    of distinct cards is summed once and counted for its orders (a sixth of the triples)."""
    s = 0.0
    if kind == _SEQ_PAIRS:
        for a in range(m):
            ua = p0 * 2704 + u[g, a] * 52
            for b in range(a + 1, m):
                s += T[ua + u[g, b]]
        return 2.0 * s
    if kind == _SEQ_TRIPLES:
        for a in range(m):
            ua = u[g, a] * 2704
            for b in range(a + 1, m):
                ub = ua + u[g, b] * 52
                for c in range(b + 1, m):
                    s += T[ub + u[g, c]]
        return 6.0 * s
    ur = u[g, row] * 2704  # a row: the other two cards in either order
    for b in range(m):
        if b == row:
            continue
        ub = ur + u[g, b] * 52
        for c in range(b + 1, m):
            if c != row:
                s += T[ub + u[g, c]]
    return 2.0 * s


@njit(cache=True)
def _golf_expected(p0, p1, p2, up, T, u, m, buf, it, g, halves):
    """``knowledge.golf_expected``: the mean golf value of my ``up`` face-up cards
    ``p0, p1, p2`` and ``3 - up`` face-down cards, each a random unseen card."""
    k = 3 - up
    if k == 0:
        return T[p0 * 2704 + p1 * 52 + p2]
    if m < k:
        return 0.0
    it[g, 0], it[g, 1], it[g, 2] = 0, 1, 2
    if k == 1:
        kind, count = _SEQ_ONE, m
    elif k == 2:
        kind, count = _SEQ_PAIRS, m * (m - 1)
    else:
        kind, count = _SEQ_TRIPLES, m * (m - 1) * (m - 2)
    if halves and kind != _SEQ_ONE:
        return _half_point_sum(kind, p0, np.int64(0), T, u, m, g) / count
    return _pairwise(kind, count, p0, p1, np.int64(0), T, u, m, buf, it, g) / count


@njit(cache=True)
def _golf_stock(p0, p1, up, turn, T, u, m, vals, buf, it, g, halves):
    """``knowledge._golf_stock``: the mean over the unseen cards drawn of the better of
    keeping it (the other face-down cards random) and turning a slot up (``turn``)."""
    k = 3 - up
    for a in range(m):
        if k == 1:
            keep = T[p0 * 2704 + p1 * 52 + u[g, a]]
        elif k == 2:  # a row of the masked block: 0 where the same card comes twice
            for b in range(m):
                buf[g, b] = 0.0 if b == a else T[p0 * 2704 + u[g, a] * 52 + u[g, b]]
            keep = _block_sum(buf, g, m) / max(m - 1, 1)
        elif halves:
            keep = (_half_point_sum(np.int64(_SEQ_ROW), np.int64(0), a, T, u, m, g)
                    / max((m - 1) * (m - 2), 1))
        else:
            it[g, 1], it[g, 2] = 0, 0
            keep = (_pairwise(np.int64(_SEQ_ROW), m * m, np.int64(0), np.int64(0), a, T, u, m,
                              buf, it, g)
                    / max((m - 1) * (m - 2), 1))
        vals[g, a] = max(keep, turn)
    return _mean(vals, g, m)


@njit(cache=True)
def _golf(obs, g, mask, slots_at, stock_size, code, T, hand, k, top, u, m, vals, buf, it,
          halves):
    """``ExpertAgent._golf``: the choice with the highest expected final value; the first
    face-down slot is the one used (nobody has seen a face-down card, so all are alike)."""
    # typed int64 from the start: a literal -1 or 0 reaching a helper is a type of its own,
    # one compilation more each (scat_env.batch.kernels' docstring)
    p0 = p1 = p2 = np.int64(-1)
    up = np.int64(0)
    slot = -1
    for i in range(3):
        card = obs[g, slots_at + i] - 1  # my own slots: relative seat 0
        if card >= 0:
            if up == 0:
                p0 = card
            elif up == 1:
                p1 = card
            else:
                p2 = card
            up += 1
        elif slot < 0:
            slot = i
    if code == _GOLF_DRAW:
        take = -1.0
        if top >= 0:
            if up == 0:
                p0 = top
            elif up == 1:
                p1 = top
            else:
                p2 = top
            take = _golf_expected(p0, p1, p2, up + 1, T, u, m, buf, it, g, halves)
        if stock_size == 0 or m == 0:
            return DRAW_DISCARD
        turn = _golf_expected(p0, p1, p2, up, T, u, m, buf, it, g, halves)
        stock = _golf_stock(p0, p1, up, turn, T, u, m, vals, buf, it, g, halves)
        return DRAW_DISCARD if take >= stock else DRAW_STOCK
    drawn = -1  # the card I place: the one in my hand not lying face up
    for i in range(k):
        c = hand[g, i]
        if c != p0 and c != p1 and c != p2:
            drawn = c
    turn = _golf_expected(p0, p1, p2, up, T, u, m, buf, it, g, halves)
    if up == 0:
        p0 = drawn
    elif up == 1:
        p1 = drawn
    else:
        p2 = drawn
    place = _golf_expected(p0, p1, p2, up + 1, T, u, m, buf, it, g, halves)
    if mask[g, TURN_UP + slot] and turn > place:
        return TURN_UP + slot
    return PLACE_SLOT + slot


@njit(cache=True, parallel=True)
def expert_actions(n, layout, obs, mask, cur, pub, T, EV, POT, in_deck, LT, LE, KLT, KLE, rule,
                   knobs, hand, unseen, vals, suits, floor, lose, buf, it, out):
    """``out[g]``: ``ExpertAgent``'s action for the player to move in game ``g``.

    ``layout``: where the phase piece and golf's slots start in an observation row (-1:
    not appended). ``pub[g, s]``: seat ``s``'s draws this hand, then its discards of each
    suit. ``rule``: gin, knocker tie mode, knocker's loss, knock-then-draw, points race,
    golf, a table of half points (:func:`_half_points`). ``knobs``: feed, risk, low_lives, min_value, gin_win, draw_bonus, points_win.
    ``hand`` .. ``it``: scratch rows per game (allocated once by :class:`BatchExpert`, not
    per game inside the loop)."""
    gin, tie, kloss, then_draw, points, golf = rule[0], rule[1], rule[2], rule[3], rule[4], rule[5]
    phase_at, slots_at = layout[0], layout[1]
    for i in prange(obs.shape[0]):
        g = np.uint64(i)  # one index type for every helper: compiled once, not twice
        me = cur[g]
        k, top, taken, m_unseen, knocker = _read(obs, g, n, in_deck, hand, unseen, suits,
                                                 floor)
        if phase_at >= 0:
            code = obs[g, phase_at]
            if golf:
                # np.int64: numba's first pass over a parallel loop's body types these as
                # the literals they start as, and would compile _golf for those too
                out[g] = _golf(obs, g, mask, slots_at, obs[g, 52 + 2 * n], code, T, hand,
                               np.int64(k), np.int64(top), unseen, np.int64(m_unseen), vals,
                               buf, it, rule[6])
                continue
            if code == _DECLARE:  # costs the holder nothing and everyone else a life
                out[g] = DECLARE
                continue
            if code == _BLIND or code == _SUDDEN:
                out[g] = _blind_call(obs, g, n, code, kloss)
                continue
        if k == 4:
            out[g] = _discard(obs, g, n, me, pub, T, EV, hand, taken, knocker, knobs[0])
            continue
        can_stock = mask[g, DRAW_STOCK]
        can_take = mask[g, DRAW_DISCARD] and top >= 0
        a, b, c = hand[g, 0], hand[g, 1], hand[g, 2]
        value = T[a * 2704 + b * 52 + c]
        if mask[g, HAMMER] and _hammers(obs, g, n, value, LT, LE, tie, kloss, knobs[1]):
            out[g] = HAMMER
            continue
        if mask[g, KNOCK] and knocker >= 0:  # a second knock: the play would end now
            if _second_knocks(obs, g, n, me, pub, T, POT, hand, floor, knocker, lose, LT, LE,
                              KLT, KLE, gin, points, tie):
                out[g] = KNOCK
                continue
        elif mask[g, KNOCK]:
            if then_draw:  # the knocker still draws: judge the hand expected after it
                value = max(value, POT[a * 2704 + b * 52 + c])
            if _knocks(obs, g, n, me, pub, value, floor, LT, LE, gin, points, tie, kloss,
                       knobs):
                out[g] = KNOCK
                continue
        if knocker >= 0:
            _lose_table(obs, g, n, me, pub, floor, knocker, lose, LT, LE, KLT, KLE, gin, points,
                        tie)
            out[g] = _final_draw(T, hand, unseen, m_unseen, vals, lose, g, top, can_stock,
                                 can_take)
        else:
            out[g] = _draw(T, EV, hand, unseen, m_unseen, vals, g, top, can_stock, can_take,
                           knobs[5])


# Every kernel above loads and saves its disk cache under a lock (scat_env.batch.cachelock).
lock_caches(globals())
