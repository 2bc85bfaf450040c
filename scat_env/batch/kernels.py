"""The batched engine's compiled kernels: ``B`` games of Scat stepped at once with numba.

The rules are those of :class:`scat_env.engine.GameState`, written again over flat arrays
so that numba compiles them: every function here mirrors an engine method of the same name
(``_deal``, ``_after_deal``, ``_end_hand``, ``_may_knock`` ...), and the differential test
(``tests/test_batch_engine.py``) plays both side by side on the same deals and compares
them after every step. A change of rules goes into both or the test fails.

Layout (``g`` a game, ``s`` an absolute seat, ``N`` the table size):

- ``hands[g, s, 0:hlen[g, s]]``: cards in hand, in the engine's order (draws appended,
  discards removed keeping the others' order); ``known[g, s]``: a bit per card the seat
  took from the discard pile and still holds.
- ``pub[g, s]``: the hand's public record of seat ``s`` (what every player's log shows):
  :data:`PUB_DRAWS` the cards it drew (stock or pile), then from :data:`PUB_SUITS` its
  discards of each suit.
- ``stock[g, 0:slen[g]]`` and ``disc[g, 0:dlen[g]]``: piles with the top card LAST.
- ``per_seat[g, s, k]``: what the calls, the points race and golf keep per seat
  (:data:`S_LOOKED`, :data:`S_QUIET`, :data:`S_FACE_UP`, :data:`S_POINTS`).
- ``sc[g, k]``: the scalars of :data:`DEALER` .. :data:`RACE_WINNER` (``-1`` for "none"):
  the engine's dealer, player to move, phase, knocker...; the dealt 31s still to decide and
  those declared (a bit per seat, ``pending`` and ``declared``); whether the discard a
  private declare decision hides from the other seats was known to be in the mover's hand;
  the winner of a points race.
- ``rng[g]``: the game's SplitMix64 state; every random draw of a game comes from it,
  in the engine's order (the dealer of a new game, then one Fisher-Yates shuffle per deal).
- ``P``: the rule parameters (indices ``P_*``), ``T``: the value table
  (:func:`scat_env.scoring.value_table`, ``T[a*2704 + b*52 + c]``), ``deck``: the pack.

Outputs per step: the observation and mask of the player to move, rewards per seat, done
and truncated flags, the winner, and what the hands that ended cost (for reports).

The draw-and-discard games without calls (``P[P_PLAIN]``: 22 presets, the standard game
among them) are the hot path: their step, observation, mask, deal and scoring are their own
lean functions (:func:`_apply_plain`, :func:`_observe_plain`, :func:`_mask_plain`, the
plain branches of :func:`_deal` and :func:`_end_hand`), chosen by one flag test, so that the
other families cost them nothing (one kernel with every family's branches inline played
the standard game slower under ``scat bench --batch``). The other families
step through :func:`_apply` (the calls and golf's slots through :func:`_apply_call`),
:func:`_observe_full` and :func:`_mask_full`, each a call.

Compile time (a cold cache: a fresh clone's test suite, a user's first ``scat train``):
numba compiles a helper once per distinct argument types, and a constant argument has its
own literal type, so constants passed to a compiled helper go through ``np.int64``. A
``prange`` loop's index is typed signed in one pass and unsigned in the next, so every
parallel loop casts it (``g = np.uint64(i)``) and its helpers compile once, not twice;
unsigned, since an index that cannot be negative spares every array access numba's
wraparound test (a signed one stepped the standard game about 12% slower). And
numba's passes over a parallel loop are slow on a large body, so the loops that run once a
game or only for a baseline call their rows' work (:func:`_observe`,
:func:`_threshold_rows`) rather than inline it. Together these took a cold compile of
every kernel from 134 s to 85 s on one core, and the batched expert's from 70 s to 49 s
(``tests/test_kernel_signatures.py`` keeps every helper at one compilation).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..actions import (
    DECLARE,
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    GOLF_SLOTS,
    HAMMER,
    KNOCK,
    PASS,
    PLACE_SLOT,
    SUDDEN_DEATH,
    THROW_DOWN,
    TURN_UP,
)
from ..cards import CARD_POINTS, CARD_RANK, CARD_SUIT
from .cachelock import lock_caches

# -- scalar slots of sc[g] -------------------------------------------------------------------
(DEALER, CUR, PHASE, KNOCKER, KNOCK_TURN, LAST_SEAT, TAKEN, DRAWN, TURN, HAND_NO, PENDING,
 DECLARED, SCREEN_KNOWN, RACE_WINNER) = range(14)
NUM_SCALARS = 14
# -- per-seat slots of per_seat[g, s] (the calls, the points race, golf) ------------------------
#: whether the seat has looked at its cards (0 before a throw-down call or sudden death is
#: decided, and all golf long); the cards of a 31 kept quiet (a bit per card); golf's face-up
#: slots (bit i: slot i); points scored in a points race.
S_LOOKED, S_QUIET, S_FACE_UP, S_POINTS = range(4)
NUM_SEAT_SLOTS = 4
# -- the public record pub[g, s] ----------------------------------------------------------------
PUB_DRAWS, PUB_SUITS = 0, 1
PUB_SIZE = PUB_SUITS + 4
# -- phases ----------------------------------------------------------------------------------
#: The engine's phases; past ``OVER``, the calls' and golf's. The observation's phase code
#: is the phase less one past ``OVER`` (:func:`_phase_code`).
DRAW, DISCARD, OVER, PH_BLIND, PH_SUDDEN, PH_DECLARE, PH_GOLF_DRAW, PH_GOLF_PLACE = range(8)
PHASE_NAMES = ("draw", "discard", "game_over", "blind", "sudden_death", "declare",
               "golf_draw", "golf_place")
# -- rule parameters P[...] ------------------------------------------------------------------
(P_GIN, P_TIE, P_KNOCKER_LOSS, P_KNOCKER_LOSS_31, P_MIN_KNOCK, P_FLUSH, P_KNOCK_EXHAUSTED,
 P_ALL_OUT_LAST_LIFE, P_DECLARES, P_FIRST_TURN_KNOCK, P_KNOCK_THEN_DRAW, P_SECOND_KNOCK,
 P_START_LIVES, P_MAX_TURNS, P_REWARD_HAND, P_HAMMER, P_THROW, P_SUDDEN, P_CHOOSES,
 P_POINTS, P_POINTS_TO_WIN, P_GOLF, P_BUS, P_SHOWN, P_OBS_PHASE, P_POKER, P_PLAIN) = range(27)
NUM_PARAMS = 27
TIE_SAFE, TIE_ALL, TIE_KNOCKER_ONLY = 0, 1, 2
THROW_NONE, THROW_FIRST, THROW_ANY = 0, 1, 2
# -- actions (scat_env.actions; re-exported here for the batched agents) ------------------------
_GOLF_FULL = (1 << GOLF_SLOTS) - 1
# -- the compact observation's card codes ----------------------------------------------------
C_UNSEEN, C_HAND, C_DRAWN, C_TAKEN, C_TOP, C_PILE, C_KNOWN = 0, 1, 2, 3, 4, 5, 6
# -- why a hand ended (HandResult.reason) ----------------------------------------------------
(R_KNOCK, R_SECOND_KNOCK, R_THIRTY_ONE, R_DEALT, R_EXHAUSTED, R_HAMMER, R_THROW_DOWN, R_SUDDEN,
 R_FACE_UP) = range(9)
THIRTY_ONE = 31.0
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)
#: Points of each card id: the discard tie-break of the threshold agent.
_POINTS = np.array(CARD_POINTS, np.int64)


@njit(cache=True, inline="always")
def _next(rng: np.ndarray, g: int) -> np.uint64:
    """SplitMix64 (Steele, Lea and Flood 2014): one 64-bit draw from game ``g``'s state."""
    z = rng[g] + np.uint64(0x9E3779B97F4A7C15)
    rng[g] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _below(rng: np.ndarray, g: int, k: int) -> int:
    """A draw in ``0..k-1``: the high 32 bits scaled by ``k`` (Lemire's multiply-shift; a
    bias below 2^-26 for a pack of cards)."""
    return int(((_next(rng, g) >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _next_active(active: np.ndarray, g: int, s: int, n: int) -> int:
    s = (s + 1) % n
    while not active[g, s]:
        s = (s + 1) % n
    return s


@njit(cache=True, inline="always")
def _prev_active(active: np.ndarray, g: int, s: int, n: int) -> int:
    s = (s - 1) % n
    while not active[g, s]:
        s = (s - 1) % n
    return s


@njit(cache=True, inline="always")
def _value3(T: np.ndarray, hands: np.ndarray, g: int, s: int) -> float:
    return T[hands[g, s, 0] * 2704 + hands[g, s, 1] * 52 + hands[g, s, 2]]


@njit(cache=True, inline="always")
def _from_left(active: np.ndarray, g: int, dealer: int, n: int, bits: int) -> int:
    """The first seat of ``bits`` (a bit per seat) from the dealer's left round to the
    dealer: the order of the deal, of the first round and of the dealt 31s' choices."""
    s = dealer
    for _ in range(n):
        s = (s + 1) % n
        if (bits >> s) & 1:
            return s
    return -1


@njit(cache=True)
def _new_game(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
              per_seat, sc, rng, rew, lost, ended):
    """A new game in slot ``g``: full lives, no points, a random dealer, the first deal."""
    for s in range(n):
        lives[g, s] = P[P_START_LIVES]
        active[g, s] = 1
        for j in range(NUM_SEAT_SLOTS):
            per_seat[g, s, j] = 0
        per_seat[g, s, S_LOOKED] = 1
    sc[g, HAND_NO] = 0
    sc[g, RACE_WINNER] = -1
    sc[g, DEALER] = _below(rng, g, n)
    _deal(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
          per_seat, sc, rng, rew, lost, ended)


@njit(cache=True)
def _deal(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
          per_seat, sc, rng, rew, lost, ended):
    """``GameState._deal``: deal until a hand needs a decision (a dealt 31 is scored on the
    spot and the next hand dealt). The pack is shuffled in the game's own stock row and the
    undealt rest turned over in place: no buffer is allocated, which inside a ``prange``
    loop would cost a heap allocation per hand on every thread. A hand is dealt every few
    steps, so the plain games (``P_PLAIN``) deal on their own lean path; with sudden death
    the deal stops after one card each (:func:`_deal_one_each`)."""
    k = deck.shape[0]
    while True:
        for i in range(k):
            stock[g, i] = deck[i]
        for i in range(k - 1, 0, -1):  # Random.shuffle's Fisher-Yates, high index first
            j = _below(rng, g, i + 1)
            t = stock[g, i]
            stock[g, i] = stock[g, j]
            stock[g, j] = t
        sc[g, HAND_NO] += 1
        for s in range(n):
            hlen[g, s] = 0
            known[g, s] = 0
            for j in range(PUB_SIZE):
                pub[g, s, j] = 0
        sc[g, KNOCKER] = -1
        sc[g, KNOCK_TURN] = -1
        sc[g, LAST_SEAT] = -1
        sc[g, TAKEN] = -1
        sc[g, DRAWN] = -1
        sc[g, TURN] = 0
        if not P[P_PLAIN]:
            _new_hand_families(g, n, P, active, per_seat, sc, stock, slen, hands, hlen, dlen, k)
            if P[P_SUDDEN]:
                return
        pos = 0
        for _ in range(3):  # one card at a time, from the dealer's left
            s = sc[g, DEALER]
            for _ in range(n):
                s = (s + 1) % n
                if active[g, s]:
                    hands[g, s, hlen[g, s]] = stock[g, pos]
                    hlen[g, s] += 1
                    pos += 1
        disc[g, 0] = stock[g, pos]  # the upcard
        dlen[g] = 1
        lo, hi = pos + 1, k - 1  # the rest, top card (the one after the upcard) last
        while lo < hi:
            t = stock[g, lo]
            stock[g, lo] = stock[g, hi]
            stock[g, hi] = t
            lo += 1
            hi -= 1
        ns = k - 1 - pos
        for i in range(ns):
            stock[g, i] = stock[g, pos + 1 + i]
        slen[g] = ns
        if not P[P_PLAIN]:
            if _after_deal(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost,
                           ended):
                return
            continue
        # _after_deal of the plain games: the dealt 31s, then the first turn
        sc[g, CUR] = _next_active(active, g, sc[g, DEALER], n)
        sc[g, PHASE] = DRAW
        if P[P_DECLARES]:
            holders = 0
            for s in range(n):
                if active[g, s] and _value3(T, hands, g, s) >= THIRTY_ONE:
                    holders |= 1 << s
            if holders:
                _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost,
                          ended, np.int64(R_DEALT), np.int64(holders))
                if sc[g, PHASE] == DRAW:
                    continue  # the game goes on: deal again
                return
        return


@njit(cache=True)
def _new_hand_families(g, n, P, active, per_seat, sc, stock, slen, hands, hlen, dlen, k):
    """A new hand's state of the calls and golf: everyone has looked, no quiet 31, no
    dealt 31 pending. With sudden death, one card each from the shuffled pack, the rest
    turned over as the stock (its top the card after the last dealt), the dealer to call
    (002 Doug Moyer): :func:`_finish_deal` pops the other cards from it, so each seat gets
    the cards a full deal would give it."""
    for s in range(n):
        per_seat[g, s, S_LOOKED] = 1
        per_seat[g, s, S_QUIET] = 0
    sc[g, PENDING] = 0
    sc[g, DECLARED] = 0
    sc[g, SCREEN_KNOWN] = 0
    if not P[P_SUDDEN]:
        return
    pos = 0
    s = sc[g, DEALER]
    for _ in range(n):
        s = (s + 1) % n
        if active[g, s]:
            hands[g, s, 0] = stock[g, pos]
            hlen[g, s] = 1
            pos += 1
    lo, hi = pos, k - 1
    while lo < hi:
        t = stock[g, lo]
        stock[g, lo] = stock[g, hi]
        stock[g, hi] = t
        lo += 1
        hi -= 1
    for i in range(k - pos):
        stock[g, i] = stock[g, pos + i]
    slen[g] = k - pos
    dlen[g] = 0
    for s in range(n):
        per_seat[g, s, S_LOOKED] = 0
    sc[g, CUR] = sc[g, DEALER]
    sc[g, PHASE] = PH_SUDDEN


@njit(cache=True)
def _after_deal(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended):
    """``GameState._after_deal``: the dealt 31s, then the first call or turn. ``False``
    when a dealt 31 ended the hand and the game goes on (deal again)."""
    first = _next_active(active, g, sc[g, DEALER], n)
    sc[g, CUR] = first
    if P[P_GOLF]:  # three cards face down, unseen by their owner too
        for s in range(n):
            per_seat[g, s, S_LOOKED] = 0
            per_seat[g, s, S_FACE_UP] = 0
        sc[g, PHASE] = PH_GOLF_DRAW
        return True
    sc[g, PHASE] = DRAW
    if P[P_DECLARES] or P[P_CHOOSES]:
        holders = 0
        for s in range(n):
            if active[g, s] and _value3(T, hands, g, s) >= THIRTY_ONE:
                holders |= 1 << s
        if holders and P[P_CHOOSES]:  # each holder says in turn: declare or keep quiet
            sc[g, PENDING] = holders
            sc[g, CUR] = _from_left(active, g, sc[g, DEALER], n, holders)
            sc[g, PHASE] = PH_DECLARE
            return True
        if holders:
            _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                      np.int64(R_DEALT), np.int64(holders))
            return sc[g, PHASE] != DRAW
    if P[P_THROW]:
        _start_play(g, n, P, active, per_seat, sc, first)
    return True


@njit(cache=True)
def _start_play(g, n, P, active, per_seat, sc, first):
    """``GameState._start_play``: the first turn, or a throw-down call before looking."""
    sc[g, CUR] = first
    sc[g, PHASE] = DRAW
    if P[P_THROW]:
        sc[g, PHASE] = PH_BLIND
        if P[P_THROW] == THROW_ANY:
            for s in range(n):
                per_seat[g, s, S_LOOKED] = 1 - active[g, s]
        else:
            per_seat[g, first, S_LOOKED] = 0


@njit(cache=True)
def _finish_deal(g, n, P, T, hands, hlen, stock, slen, disc, dlen, active, per_seat, lives, sc,
                 rew, lost, ended):
    """``GameState._finish_deal``: sudden death declined; the other two cards each and the
    upcard from the stock, then :func:`_after_deal` (its answer)."""
    for s in range(n):
        per_seat[g, s, S_LOOKED] = 1
    for _ in range(2):
        s = sc[g, DEALER]
        for _ in range(n):
            s = (s + 1) % n
            if active[g, s]:
                slen[g] -= 1
                hands[g, s, hlen[g, s]] = stock[g, slen[g]]
                hlen[g, s] += 1
    slen[g] -= 1
    disc[g, 0] = stock[g, slen[g]]
    dlen[g] = 1
    return _after_deal(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended)


# -- a hand's losses, packed: LOSS_BITS bits a seat in one int64 (no array to allocate) --------
LOSS_BITS = 6
_LOSS_MASK = (1 << LOSS_BITS) - 1


@njit(cache=True, inline="always")
def _lget(loss: int, s: int) -> int:
    return (loss >> (LOSS_BITS * s)) & _LOSS_MASK


@njit(cache=True, inline="always")
def _lset(loss: int, s: int, v: int) -> int:
    shift = LOSS_BITS * s
    return (loss & ~(_LOSS_MASK << shift)) | (np.int64(v) << shift)


@njit(cache=True, inline="always")
def _shown(g, s, P, T, hands, hlen, per_seat):
    """``GameState._shown_value``: what a hand counts at the end of the hand: its value, a
    single card's points (sudden death), or at most 30 for a 31 kept quiet."""
    if P[P_SHOWN]:
        if hlen[g, s] == 1:
            return float(_POINTS[hands[g, s, 0]])
        a, b, c = hands[g, s, 0], hands[g, s, 1], hands[g, s, 2]
        v = T[a * 2704 + b * 52 + c]
        q = per_seat[g, s, S_QUIET]
        if q and q == (np.int64(1) << a | np.int64(1) << b | np.int64(1) << c):
            return min(v, 30.0)
        return v
    return _value3(T, hands, g, s)


@njit(cache=True)
def _showdown_losses(g, n, P, T, hands, hlen, per_seat, active, knocker):
    """``showdown.knock_losses``: the lowest hand pays, the knocker's penalty, gin. Returns
    the losses packed (:func:`_lget`)."""
    low = 1e9
    for s in range(n):
        if active[g, s]:
            v = _shown(g, s, P, T, hands, hlen, per_seat)
            if v < low:
                low = v
    loss = np.int64(0)
    if knocker >= 0 and P[P_GIN]:
        best = -1.0
        for s in range(n):
            if active[g, s] and s != knocker:
                v = _shown(g, s, P, T, hands, hlen, per_seat)
                if v > best:
                    best = v
        if _shown(g, knocker, P, T, hands, hlen, per_seat) >= best:
            for s in range(n):
                if active[g, s] and s != knocker:
                    loss = _lset(loss, s, 1)
        else:
            loss = _lset(loss, knocker, P[P_KNOCKER_LOSS])
        return loss
    nlow = 0
    for s in range(n):
        if active[g, s] and _shown(g, s, P, T, hands, hlen, per_seat) == low:
            nlow += 1
            loss = _lset(loss, s, 1)
    if knocker < 0 or _shown(g, knocker, P, T, hands, hlen, per_seat) != low:
        return loss
    tie = P[P_TIE]
    if nlow == 1 or tie == TIE_KNOCKER_ONLY:
        loss = np.int64(0)
    elif tie == TIE_SAFE:
        return _lset(loss, knocker, 0)
    return _lset(loss, knocker, P[P_KNOCKER_LOSS])


@njit(cache=True)
def _thirty_one_losses(g, n, P, active, knocker, dealt, declarers):
    """``showdown.thirty_one_losses``: everyone but the declarers pays one; after a knock
    the knocker pays the knocker's penalty for a 31 (not for a dealt 31). Packed."""
    loss = np.int64(0)
    for s in range(n):
        if active[g, s] and not (declarers >> s) & 1:
            loss = _lset(loss, s, 1)
    if not dealt and knocker >= 0 and not (declarers >> knocker) & 1:
        loss = _lset(loss, knocker, P[P_KNOCKER_LOSS_31])
    return loss


@njit(cache=True)
def _on_the_bus(g, n, active, lives, sc, loss):
    """``showdown.one_on_the_bus``: one player at a time on the last life; one who loses
    their last quarter while another rides is out at once. Several losing their last
    quarter together with the bus free: the hand is replayed. Packed losses in, packed
    losses out, or ``-1`` for the replay."""
    riding = False
    boarding = 0
    for s in range(n):
        if active[g, s]:
            if lives[g, s] == 1 and _lget(loss, s) == 0:
                riding = True
            elif lives[g, s] > 1 and lives[g, s] - _lget(loss, s) == 1:
                boarding += 1
    if not riding and boarding > 1:
        return np.int64(-1)
    s = sc[g, DEALER]
    for _ in range(n):
        s = (s + 1) % n
        if active[g, s] and lives[g, s] > 1 and lives[g, s] - _lget(loss, s) == 1:
            if riding:
                loss = _lset(loss, s, lives[g, s])
            else:
                riding = True
    return loss


@njit(cache=True)
def _scorers(g, n, P, T, hands, hlen, per_seat, active, knocker, reason, declarers):
    """``showdown.points_won``: the seats (a bit each) that score a point this hand."""
    won = declarers
    if declarers and reason == R_DEALT and P[P_POKER]:
        # several dealt 31s told apart by their ranks: only the best scores
        top = -1.0
        for s in range(n):
            if (declarers >> s) & 1:
                top = max(top, _shown(g, s, P, T, hands, hlen, per_seat))
        for s in range(n):
            if (declarers >> s) & 1 and _shown(g, s, P, T, hands, hlen, per_seat) != top:
                won &= ~(1 << s)
    if not declarers:
        top = -1.0
        for s in range(n):
            if active[g, s]:
                v = _shown(g, s, P, T, hands, hlen, per_seat)
                if v > top:
                    top = v
        count = 0
        for s in range(n):
            if active[g, s] and _shown(g, s, P, T, hands, hlen, per_seat) == top:
                won |= 1 << s
                count += 1
        if knocker >= 0 and (won >> knocker) & 1 and count > 1:
            won &= ~(1 << knocker)
    return won


@njit(cache=True)
def _points_hand(g, n, P, T, hands, hlen, per_seat, active, sc, rew, ended, reason,
                 declarers):
    """``GameState._end_special_hand`` for a points race (``showdown.points_won``): a point
    for each declarer of a 31 (of several dealt 31s under the poker tie-break, the best by
    rank), else for the highest hands (a knocker tied for highest scores nothing, the others
    tied with it do); first alone on top at ``points_to_win`` wins the race. Nobody loses
    a life."""
    won = _scorers(g, n, P, T, hands, hlen, per_seat, active, sc[g, KNOCKER], reason,
                   declarers)
    for s in range(n):
        if (won >> s) & 1:
            per_seat[g, s, S_POINTS] += 1
            if P[P_REWARD_HAND]:
                rew[g, s] += 1.0
    ended[g] += 1
    best = -1
    nbest = 0
    winner = -1
    for s in range(n):
        p = per_seat[g, s, S_POINTS]
        if p > best:
            best, nbest, winner = p, 1, s
        elif p == best:
            nbest += 1
    if best >= P[P_POINTS_TO_WIN] and nbest == 1:
        sc[g, RACE_WINNER] = winner
        if not P[P_REWARD_HAND]:
            for s in range(n):
                rew[g, s] += 1.0 if s == winner else -1.0 / (n - 1)
        sc[g, PHASE] = OVER
        return
    sc[g, DEALER] = _next_active(active, g, sc[g, DEALER], n)
    sc[g, PHASE] = DRAW


@njit(cache=True, inline="always")
def _applied_losses(g, n, P, active, lives, sc, loss):
    """The losses a hand's scoring asks, as applied: capped by the lives each has, golf's
    bus, and the all-out rule (``showdown.all_out``) when nobody would be left. Returns
    ``(packed losses, whether the hand is replayed)``."""
    for s in range(n):
        if active[g, s] and _lget(loss, s) > lives[g, s]:
            loss = _lset(loss, s, lives[g, s])
    if P[P_BUS]:
        loss = _on_the_bus(g, n, active, lives, sc, loss)
        if loss < 0:  # several for one seat on the bus: nobody loses, the hand is replayed
            return np.int64(0), True
    for s in range(n):
        if active[g, s] and lives[g, s] > _lget(loss, s):
            return loss, False
    for s in range(n):  # everyone left would be out at once
        if active[g, s]:
            loss = _lset(loss, s, lives[g, s] - 1 if P[P_ALL_OUT_LAST_LIFE] else 0)
    return loss, not P[P_ALL_OUT_LAST_LIFE]


@njit(cache=True, inline="always")
def _applied_losses_plain(g, n, P, active, lives, loss):
    """:func:`_applied_losses` without the bus, in one pass (the plain games)."""
    survivors = 0
    for s in range(n):
        if active[g, s]:
            if _lget(loss, s) > lives[g, s]:
                loss = _lset(loss, s, lives[g, s])
            if lives[g, s] > _lget(loss, s):
                survivors += 1
    if survivors:
        return loss, False
    for s in range(n):  # everyone left would be out at once
        if active[g, s]:
            loss = _lset(loss, s, lives[g, s] - 1 if P[P_ALL_OUT_LAST_LIFE] else 0)
    return loss, not P[P_ALL_OUT_LAST_LIFE]


@njit(cache=True)
def _showdown_losses_plain(g, n, P, T, hands, active, knocker):
    """:func:`_showdown_losses` for the plain games, where a hand is worth its table value
    (no single card, no quiet 31)."""
    low = 1e9
    for s in range(n):
        if active[g, s]:
            v = _value3(T, hands, g, s)
            if v < low:
                low = v
    loss = np.int64(0)
    if knocker >= 0 and P[P_GIN]:
        best = -1.0
        for s in range(n):
            if active[g, s] and s != knocker:
                v = _value3(T, hands, g, s)
                if v > best:
                    best = v
        if _value3(T, hands, g, knocker) >= best:
            for s in range(n):
                if active[g, s] and s != knocker:
                    loss = _lset(loss, s, 1)
        else:
            loss = _lset(loss, knocker, P[P_KNOCKER_LOSS])
        return loss
    nlow = 0
    for s in range(n):
        if active[g, s] and _value3(T, hands, g, s) == low:
            nlow += 1
            loss = _lset(loss, s, 1)
    if knocker < 0 or _value3(T, hands, g, knocker) != low:
        return loss
    tie = P[P_TIE]
    if nlow == 1 or tie == TIE_KNOCKER_ONLY:
        loss = np.int64(0)
    elif tie == TIE_SAFE:
        return _lset(loss, knocker, 0)
    return _lset(loss, knocker, P[P_KNOCKER_LOSS])


@njit(cache=True)
def _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended, reason,
              declarers):
    """``GameState._end_hand`` with the scoring of :mod:`scat_env.showdown`, up to the
    next deal: the caller deals when the phase is back to ``DRAW`` (kept apart so that no
    kernel calls itself through another, which numba compiles poorly). A hand ends every
    few steps, so the plain games (``P_PLAIN``) score on a path without the families'
    branches; the others' showdown values and losses go through :func:`_shown` and
    :func:`_applied_losses`."""
    if P[P_POINTS]:
        _points_hand(g, n, P, T, hands, hlen, per_seat, active, sc, rew, ended, reason,
                     declarers)
        return
    knocker = sc[g, KNOCKER]
    if declarers:
        loss = _thirty_one_losses(g, n, P, active, knocker, reason == R_DEALT, declarers)
    elif P[P_PLAIN]:
        loss = _showdown_losses_plain(g, n, P, T, hands, active, knocker)
    else:
        loss = _showdown_losses(g, n, P, T, hands, hlen, per_seat, active, knocker)
    if P[P_PLAIN]:
        loss, replayed = _applied_losses_plain(g, n, P, active, lives, loss)
    else:
        loss, replayed = _applied_losses(g, n, P, active, lives, sc, loss)
    ended[g] += 1
    out_now = 0
    for s in range(n):
        if active[g, s]:
            paid = _lget(loss, s)
            lives[g, s] -= paid
            lost[g, s] += paid
            if P[P_REWARD_HAND] and paid:
                rew[g, s] -= paid
            if lives[g, s] <= 0:
                active[g, s] = 0
                out_now += 1
                if not P[P_REWARD_HAND]:
                    rew[g, s] -= 1.0 / (n - 1)
    standing = 0
    last = -1
    for s in range(n):
        if active[g, s]:
            standing += 1
            last = s
    if standing <= 1:
        if out_now and standing == 1 and not P[P_REWARD_HAND]:
            rew[g, last] += 1.0
        sc[g, PHASE] = OVER
        return
    d = sc[g, DEALER]
    if not replayed or not active[g, d]:
        sc[g, DEALER] = _next_active(active, g, d, n)
    sc[g, PHASE] = DRAW


@njit(cache=True, inline="always")
def _may_knock(g, n, P, T, hands, active, sc, slen):
    knocker = sc[g, KNOCKER]
    cur = sc[g, CUR]
    if knocker >= 0:
        if not (P[P_SECOND_KNOCK] and sc[g, TURN] == sc[g, KNOCK_TURN] + 1
                and cur == _next_active(active, g, knocker, n)):
            return False
    elif not P[P_FIRST_TURN_KNOCK]:
        count = 0
        for s in range(n):
            count += active[g, s]
        if sc[g, TURN] < count:
            return False
    if slen[g] == 0 and not P[P_KNOCK_EXHAUSTED]:
        return False
    if P[P_MIN_KNOCK] or P[P_FLUSH]:
        if _value3(T, hands, g, cur) < P[P_MIN_KNOCK]:
            return False
        if P[P_FLUSH]:
            a, b, c = hands[g, cur, 0] // 13, hands[g, cur, 1] // 13, hands[g, cur, 2] // 13
            if not (a == b and b == c):
                return False
    return True


@njit(cache=True, inline="always")
def _apply_plain(g, n, action, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen,
                 lives, active, per_seat, sc, rng, rew, lost, ended):
    """:func:`_apply` for the draw-and-discard games without calls (``P_PLAIN``), the hot
    path: the same rules, without the other families' branches. Inlined into
    :func:`step_all` (as :func:`_settle`): a call per step passing some twenty arrays
    counted a reference on each, in memory both threads write, and cost about half the step
    under ``scat bench --batch``. What runs once a hand (:func:`_deal`, :func:`_end_hand`)
    stays a call: inlining those too did not pay for the compile time it added on first
    use. The other families' step (:func:`_apply`) is a call: a single step kernel with
    their branches inlined played the standard game slower."""
    seat = sc[g, CUR]
    reason = -1
    declarers = 0
    if action < 52:
        h = hlen[g, seat]
        i = 0
        while hands[g, seat, i] != action:
            i += 1
        for j in range(i, h - 1):
            hands[g, seat, j] = hands[g, seat, j + 1]
        hlen[g, seat] = h - 1
        disc[g, dlen[g]] = action
        dlen[g] += 1
        pub[g, seat, PUB_SUITS + action // 13] += 1
        known[g, seat] &= ~(np.uint64(1) << np.uint64(action))
        sc[g, TAKEN] = -1
        sc[g, DRAWN] = -1
        if P[P_DECLARES] and _value3(T, hands, g, seat) >= THIRTY_ONE:
            reason, declarers = R_THIRTY_ONE, 1 << seat
        elif seat == sc[g, LAST_SEAT]:
            reason = R_KNOCK
        else:
            sc[g, CUR] = _next_active(active, g, seat, n)
            sc[g, PHASE] = DRAW
            sc[g, TURN] += 1
    elif action == DRAW_STOCK:
        slen[g] -= 1
        card = stock[g, slen[g]]
        hands[g, seat, hlen[g, seat]] = card
        hlen[g, seat] += 1
        pub[g, seat, PUB_DRAWS] += 1
        sc[g, DRAWN] = card
        sc[g, PHASE] = DISCARD
    elif action == DRAW_DISCARD:
        dlen[g] -= 1
        card = disc[g, dlen[g]]
        hands[g, seat, hlen[g, seat]] = card
        hlen[g, seat] += 1
        known[g, seat] |= np.uint64(1) << np.uint64(card)
        pub[g, seat, PUB_DRAWS] += 1
        sc[g, TAKEN] = card
        sc[g, DRAWN] = card
        sc[g, PHASE] = DISCARD
    elif action == KNOCK:
        if sc[g, KNOCKER] >= 0:  # a second knock ends the play at once (Moyer)
            reason = R_SECOND_KNOCK
        else:
            sc[g, KNOCKER] = seat
            sc[g, KNOCK_TURN] = sc[g, TURN]
            sc[g, LAST_SEAT] = _prev_active(active, g, seat, n)
            if not P[P_KNOCK_THEN_DRAW]:
                sc[g, CUR] = _next_active(active, g, seat, n)
                sc[g, PHASE] = DRAW
                sc[g, TURN] += 1
    else:  # END_PLAY
        reason = R_EXHAUSTED
    if reason >= 0:
        _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                  np.int64(reason), np.int64(declarers))
        if sc[g, PHASE] == DRAW:
            _deal(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives,
                  active, per_seat, sc, rng, rew, lost, ended)


@njit(cache=True)
def _apply(g, n, action, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives,
           active, per_seat, sc, rng, rew, lost, ended):
    """``GameState.apply_action`` for a legal ``action`` of the player to move, in every
    game (the calls of the variations and golf's slots through :func:`_apply_call`)."""
    seat = sc[g, CUR]
    reason = -1
    declarers = 0
    deal = False
    if action < 52:
        h = hlen[g, seat]
        i = 0
        while hands[g, seat, i] != action:
            i += 1
        for j in range(i, h - 1):
            hands[g, seat, j] = hands[g, seat, j + 1]
        hlen[g, seat] = h - 1
        disc[g, dlen[g]] = action
        dlen[g] += 1
        pub[g, seat, PUB_SUITS + action // 13] += 1
        bit = np.uint64(1) << np.uint64(action)
        was_known = (known[g, seat] & bit) != 0
        known[g, seat] &= ~bit
        sc[g, TAKEN] = -1
        sc[g, DRAWN] = -1
        if P[P_DECLARES] and _value3(T, hands, g, seat) >= THIRTY_ONE:
            reason, declarers = R_THIRTY_ONE, 1 << seat
        elif P[P_CHOOSES] and _new_31(g, seat, T, hands, per_seat):
            # declare it or keep quiet; the others see the discard phase meanwhile
            sc[g, PHASE] = PH_DECLARE
            sc[g, SCREEN_KNOWN] = was_known
        elif seat == sc[g, LAST_SEAT]:
            reason = R_KNOCK
        else:
            sc[g, CUR] = _next_active(active, g, seat, n)
            sc[g, PHASE] = DRAW
            sc[g, TURN] += 1
    elif action == DRAW_STOCK:
        slen[g] -= 1
        card = stock[g, slen[g]]
        hands[g, seat, hlen[g, seat]] = card
        hlen[g, seat] += 1
        pub[g, seat, PUB_DRAWS] += 1
        sc[g, DRAWN] = card
        sc[g, PHASE] = PH_GOLF_PLACE if P[P_GOLF] else DISCARD
    elif action == DRAW_DISCARD:
        dlen[g] -= 1
        card = disc[g, dlen[g]]
        hands[g, seat, hlen[g, seat]] = card
        hlen[g, seat] += 1
        known[g, seat] |= np.uint64(1) << np.uint64(card)
        pub[g, seat, PUB_DRAWS] += 1
        sc[g, TAKEN] = card
        sc[g, DRAWN] = card
        sc[g, PHASE] = PH_GOLF_PLACE if P[P_GOLF] else DISCARD
    elif action == KNOCK:
        if sc[g, KNOCKER] >= 0:  # a second knock ends the play at once (Moyer)
            reason = R_SECOND_KNOCK
        else:
            sc[g, KNOCKER] = seat
            sc[g, KNOCK_TURN] = sc[g, TURN]
            sc[g, LAST_SEAT] = _prev_active(active, g, seat, n)
            if not P[P_KNOCK_THEN_DRAW]:
                sc[g, CUR] = _next_active(active, g, seat, n)
                sc[g, PHASE] = DRAW
                sc[g, TURN] += 1
    elif action == END_PLAY:
        reason = R_EXHAUSTED
    else:
        deal = _apply_call(g, n, action, P, T, hands, hlen, known, pub, stock, slen, disc, dlen,
                           lives, active, per_seat, sc, rew, lost, ended)
    if reason >= 0:
        _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                  np.int64(reason), np.int64(declarers))
        deal = sc[g, PHASE] == DRAW
    if deal:
        _deal(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
              per_seat, sc, rng, rew, lost, ended)


@njit(cache=True, inline="always")
def _new_31(g, seat, T, hands, per_seat):
    """Whether ``seat``'s three cards are a 31 it has not already kept quiet."""
    a, b, c = hands[g, seat, 0], hands[g, seat, 1], hands[g, seat, 2]
    if T[a * 2704 + b * 52 + c] < THIRTY_ONE:
        return False
    return per_seat[g, seat, S_QUIET] != (np.int64(1) << a | np.int64(1) << b
                                          | np.int64(1) << c)


@njit(cache=True)
def _apply_call(g, n, action, P, T, hands, hlen, known, pub, stock, slen, disc, dlen, lives,
                active, per_seat, sc, rew, lost, ended):
    """``GameState._apply_call``: the calls of the variations and golf's slots. Returns
    whether a hand ended and the game goes on (the caller deals the next)."""
    seat = sc[g, CUR]
    phase = sc[g, PHASE]
    if action >= PLACE_SLOT:
        return _apply_slot(g, n, action, P, T, hands, hlen, known, pub, disc, dlen, lives,
                           active, per_seat, sc, rew, lost, ended)
    if action == HAMMER or action == THROW_DOWN or action == SUDDEN_DEATH:
        # a showdown; hammer and throw-down score like a knock by the caller
        for s in range(n):
            per_seat[g, s, S_LOOKED] = 1
        reason = R_SUDDEN
        if action != SUDDEN_DEATH:
            sc[g, KNOCKER] = seat
            reason = R_HAMMER if action == HAMMER else R_THROW_DOWN
        _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                  np.int64(reason), np.int64(0))
        return sc[g, PHASE] == DRAW
    if action == DECLARE:
        if sc[g, PENDING]:  # a dealt 31: the other holders still decide
            sc[g, DECLARED] |= 1 << seat
            return _next_dealt_31(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew,
                                  lost, ended)
        _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                  np.int64(R_THIRTY_ONE), np.int64(1 << seat))
        return sc[g, PHASE] == DRAW
    # PASS
    if phase == PH_SUDDEN:
        return not _finish_deal(g, n, P, T, hands, hlen, stock, slen, disc, dlen, active,
                                per_seat, lives, sc, rew, lost, ended)
    if phase == PH_BLIND:
        per_seat[g, seat, S_LOOKED] = 1
        if P[P_THROW] == THROW_ANY and seat != sc[g, DEALER]:
            sc[g, CUR] = _next_active(active, g, seat, n)  # the next player's call
        else:
            sc[g, CUR] = _next_active(active, g, sc[g, DEALER], n)
            sc[g, PHASE] = DRAW
        return False
    # kept quiet: those cards count 30 from now on
    a, b, c = hands[g, seat, 0], hands[g, seat, 1], hands[g, seat, 2]
    per_seat[g, seat, S_QUIET] = np.int64(1) << a | np.int64(1) << b | np.int64(1) << c
    if sc[g, PENDING]:
        return _next_dealt_31(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost,
                              ended)
    if seat == sc[g, LAST_SEAT]:
        _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                  np.int64(R_KNOCK), np.int64(0))
        return sc[g, PHASE] == DRAW
    sc[g, CUR] = _next_active(active, g, seat, n)
    sc[g, PHASE] = DRAW
    sc[g, TURN] += 1
    return False


@njit(cache=True)
def _next_dealt_31(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended):
    """``GameState._next_dealt_31``: the next holder's choice, the hand ended by the
    declared ones, or the first turn. Returns whether to deal the next hand."""
    sc[g, PENDING] &= ~(1 << sc[g, CUR])
    if sc[g, PENDING]:
        sc[g, CUR] = _from_left(active, g, sc[g, DEALER], n, sc[g, PENDING])
        return False
    if sc[g, DECLARED]:
        _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                  np.int64(R_DEALT), np.int64(sc[g, DECLARED]))
        return sc[g, PHASE] == DRAW
    _start_play(g, n, P, active, per_seat, sc, _next_active(active, g, sc[g, DEALER], n))
    return False


@njit(cache=True)
def _apply_slot(g, n, action, P, T, hands, hlen, known, pub, disc, dlen, lives, active,
                per_seat, sc, rew, lost, ended):
    """``GameState._apply_slot``: golf's card in hand goes face up into a slot and the
    slot's card onto the pile, or the drawn card onto the pile and a slot turns face up.
    Returns whether a hand ended and the game goes on."""
    seat = sc[g, CUR]
    h = hlen[g, seat] - 1
    card = hands[g, seat, h]  # the card drawn or taken, held after the three slots
    hlen[g, seat] = h
    if action < TURN_UP:
        slot = action - PLACE_SLOT
        gone = hands[g, seat, slot]
        hands[g, seat, slot] = card
        shown = card
    else:
        slot = action - TURN_UP
        gone = card
        shown = hands[g, seat, slot]
    disc[g, dlen[g]] = gone
    dlen[g] += 1
    pub[g, seat, PUB_SUITS + gone // 13] += 1
    known[g, seat] = ((known[g, seat] & ~(np.uint64(1) << np.uint64(gone)))
                      | (np.uint64(1) << np.uint64(shown)))
    per_seat[g, seat, S_FACE_UP] |= 1 << slot
    sc[g, TAKEN] = -1
    sc[g, DRAWN] = -1
    nxt = _next_active(active, g, seat, n)
    if per_seat[g, nxt, S_FACE_UP] == _GOLF_FULL:  # everyone has had three turns
        _end_hand(g, n, P, T, hands, hlen, active, per_seat, lives, sc, rew, lost, ended,
                  np.int64(R_FACE_UP), np.int64(0))
        return sc[g, PHASE] == DRAW
    sc[g, CUR] = nxt
    sc[g, PHASE] = PH_GOLF_DRAW
    sc[g, TURN] += 1
    return False


@njit(cache=True, inline="always")
def _phase_code(phase):
    """The observation's phase code: 0 draw, 1 discard, 2 blind, 3 sudden death, 4 declare,
    5 golf draw, 6 golf place (:data:`scat_env.batch.reference.PHASE_CODES`)."""
    return phase - 1 if phase > OVER else phase


@njit(cache=True, inline="always")
def _observe_mine(g, me, P, hands, hlen, per_seat, phase, cur, out, k):
    """My own cards into observation row ``out[k]``: the hand once I have looked at it, in
    golf my face-up cards and the card I place. Returns how many."""
    mine = 0
    if P[P_GOLF]:
        up = per_seat[g, me, S_FACE_UP]
        for i in range(min(hlen[g, me], GOLF_SLOTS)):
            if (up >> i) & 1:
                out[k, hands[g, me, i]] = C_HAND
                mine += 1
        if phase == PH_GOLF_PLACE and me == cur:
            out[k, hands[g, me, hlen[g, me] - 1]] = C_HAND
            mine += 1
    elif per_seat[g, me, S_LOOKED]:
        for i in range(hlen[g, me]):
            out[k, hands[g, me, i]] = C_HAND
        mine = hlen[g, me]
    return mine


@njit(cache=True, inline="always")
def _observe_pieces(g, me, n, P, hands, hlen, per_seat, shown, mine, out, k, base):
    """The pieces appended for rules with calls, points races and golf, from ``base``
    (:func:`scat_env.batch.reference.observation_pieces`)."""
    if P[P_OBS_PHASE]:
        out[k, base] = _phase_code(shown)
        out[k, base + 1] = mine
        base += 2
    if P[P_CHOOSES]:  # a 31 I kept quiet, still in my hand (it counts 30)
        quiet = per_seat[g, me, S_QUIET]
        held = np.int64(0)
        if per_seat[g, me, S_LOOKED]:
            for i in range(hlen[g, me]):
                held |= np.int64(1) << np.int64(hands[g, me, i])
        out[k, base] = 1 if quiet and (quiet & held) == quiet else 0
        base += 1
    if P[P_POINTS]:
        for r in range(n):
            out[k, base + r] = min(per_seat[g, (me + r) % n, S_POINTS], 127)
        base += n
    if P[P_GOLF]:
        for r in range(n):
            s = (me + r) % n
            up = per_seat[g, s, S_FACE_UP]
            for i in range(GOLF_SLOTS):
                face_up = hlen[g, s] > i and ((up >> i) & 1) == 1
                out[k, base + GOLF_SLOTS * r + i] = hands[g, s, i] + 1 if face_up else 0


@njit(cache=True, inline="always")
def _observe_plain(g, me, n, hands, hlen, known, slen, disc, dlen, lives, active, sc, out, k):
    """:func:`_observe_seat` for the draw-and-discard games without calls (``P_PLAIN``):
    every seat has looked, nothing is screened, no piece is appended. Their observation is
    most of the batched engine's work, and this path keeps it as lean as it was before the
    other families came (``scat bench --batch``)."""
    for c in range(52):
        out[k, c] = C_UNSEEN
    d = dlen[g]
    for i in range(d - 1):
        out[k, disc[g, i]] = C_PILE
    if d:
        out[k, disc[g, d - 1]] = C_TOP
    for r in range(1, n):
        s = (me + r) % n
        bits = known[g, s]
        if bits:
            for i in range(hlen[g, s]):
                c = hands[g, s, i]
                if (bits >> np.uint64(c)) & np.uint64(1):
                    out[k, c] = C_KNOWN + r - 1
    for i in range(hlen[g, me]):
        out[k, hands[g, me, i]] = C_HAND
    phase = sc[g, PHASE]
    drawn = sc[g, DRAWN]
    if phase == DISCARD and drawn >= 0 and me == sc[g, CUR]:
        out[k, drawn] = C_TAKEN if sc[g, TAKEN] == drawn else C_DRAWN
    base = 52
    for r in range(n):
        s = (me + r) % n
        out[k, base + r] = lives[g, s]
        out[k, base + n + r] = (active[g, s] | (2 if sc[g, KNOCKER] == s else 0)
                                | (4 if sc[g, DEALER] == s else 0))
    base += 2 * n
    out[k, base] = slen[g]
    out[k, base + 1] = 1 if phase == DISCARD else 0
    out[k, base + 2] = min(sc[g, TURN], 127)
    out[k, base + 3] = min(sc[g, HAND_NO], 127)
    out[k, base + 4] = (1 if sc[g, KNOCKER] >= 0 else 0) | (2 if slen[g] == 0 else 0)


@njit(cache=True, inline="always")
def _observe_seat(g, me, n, P, hands, hlen, known, per_seat, slen, disc, dlen, lives, active, sc,
                  out, k):
    """Seat ``me``'s compact observation of game ``g`` into ``out[k]``: the plain games'
    path inlined (:func:`_observe_plain`), the others' a call (:func:`_observe_full`), so
    that the step of the standard game compiles as small as it did before them."""
    if P[P_PLAIN]:
        _observe_plain(g, me, n, hands, hlen, known, slen, disc, dlen, lives, active, sc, out, k)
    else:
        _observe_full(g, me, n, P, hands, hlen, known, per_seat, slen, disc, dlen, lives, active,
                      sc, out, k)


@njit(cache=True)
def _observe_full(g, me, n, P, hands, hlen, known, per_seat, slen, disc, dlen, lives, active, sc,
                  out, k):
    """Seat ``me``'s compact observation of game ``g`` into ``out[k]``: only what that seat
    may know (its hand once looked at, the card it drew this turn, the discard pile, the
    cards each opponent took from it and still holds, the public counters; golf's face-up
    cards, the points of a race); the layout of
    :func:`scat_env.batch.reference.compact_observation`. While another seat decides in
    private whether to declare a new 31, ``me`` sees the position it would see had the 31
    not been made (:func:`scat_env.view.screen`). The row is ``out[k]``, passed as the
    array and its index: a row view made per game inside a ``prange`` loop would count a
    reference on the array shared by every thread."""
    for c in range(52):
        out[k, c] = C_UNSEEN
    phase = sc[g, PHASE]
    cur = sc[g, CUR]
    shown = phase
    d = dlen[g]
    hidden = -1  # the discard screened from me, known to be in the mover's hand
    if phase == PH_DECLARE and me != cur:
        if sc[g, PENDING]:
            shown = DRAW
        else:
            shown = DISCARD
            d -= 1
            if sc[g, SCREEN_KNOWN]:
                hidden = disc[g, d]
    for i in range(d - 1):
        out[k, disc[g, i]] = C_PILE
    if d:
        out[k, disc[g, d - 1]] = C_TOP
    for r in range(1, n):
        s = (me + r) % n
        bits = known[g, s]
        if bits:
            for i in range(hlen[g, s]):
                c = hands[g, s, i]
                if (bits >> np.uint64(c)) & np.uint64(1):
                    out[k, c] = C_KNOWN + r - 1
        if s == cur and hidden >= 0:
            out[k, hidden] = C_KNOWN + r - 1
    mine = _observe_mine(g, me, P, hands, hlen, per_seat, phase, cur, out, k)
    drawn = sc[g, DRAWN]
    if phase == DISCARD and drawn >= 0 and me == cur:
        out[k, drawn] = C_TAKEN if sc[g, TAKEN] == drawn else C_DRAWN
    base = 52
    for r in range(n):
        s = (me + r) % n
        out[k, base + r] = lives[g, s]
        out[k, base + n + r] = (active[g, s] | (2 if sc[g, KNOCKER] == s else 0)
                                | (4 if sc[g, DEALER] == s else 0))
    base += 2 * n
    out[k, base] = slen[g]
    out[k, base + 1] = 1 if shown == DISCARD else 0
    out[k, base + 2] = min(sc[g, TURN], 127)
    out[k, base + 3] = min(sc[g, HAND_NO], 127)
    out[k, base + 4] = (1 if sc[g, KNOCKER] >= 0 else 0) | (2 if slen[g] == 0 else 0)
    if P[P_OBS_PHASE] or P[P_POINTS] or P[P_GOLF]:
        _observe_pieces(g, me, n, P, hands, hlen, per_seat, shown, mine, out, k, base + 5)


@njit(cache=True)
def _observe(g, n, P, T, hands, hlen, known, per_seat, slen, disc, dlen, lives, active, sc, obs,
             mask):
    """The compact observation and the action mask of game ``g``'s player to move.

    A call, not inlined: it serves the game starts and :func:`observe_games`, not the step,
    and inlined into three kernels (two of them parallel loops) it was compiled three times,
    about 25 s of a cold cache's compile."""
    me = sc[g, CUR]
    if P[P_PLAIN]:
        _observe_plain(g, me, n, hands, hlen, known, slen, disc, dlen, lives, active, sc, obs, g)
        _mask_plain(g, n, P, T, hands, hlen, active, sc, slen, dlen, mask)
    else:
        _observe_full(g, me, n, P, hands, hlen, known, per_seat, slen, disc, dlen, lives, active,
                      sc, obs, g)
        _mask_full(g, n, P, T, hands, hlen, active, per_seat, sc, slen, dlen, mask)


@njit(cache=True, inline="always")
def _mask_plain(g, n, P, T, hands, hlen, active, sc, slen, dlen, mask):
    """The action mask of the plain games' player to move (:func:`_mask_full`'s first two
    phases, inlined into the step)."""
    me = sc[g, CUR]
    phase = sc[g, PHASE]
    for a in range(mask.shape[1]):
        mask[g, a] = 0
    if phase == DISCARD:
        taken = sc[g, TAKEN]
        for i in range(hlen[g, me]):
            c = hands[g, me, i]
            if c != taken:
                mask[g, c] = 1
    elif phase == DRAW:
        if slen[g]:
            mask[g, DRAW_STOCK] = 1
        if dlen[g]:
            mask[g, DRAW_DISCARD] = 1
        if _may_knock(g, n, P, T, hands, active, sc, slen):
            mask[g, KNOCK] = 1
        if slen[g] == 0:
            mask[g, END_PLAY] = 1


@njit(cache=True)
def _mask_full(g, n, P, T, hands, hlen, active, per_seat, sc, slen, dlen, mask):
    """The action mask of game ``g``'s player to move, every phase of every family: the
    plain games' discard and draw (:func:`_mask_plain`), the hammer, golf's phases and the
    calls."""
    _mask_plain(g, n, P, T, hands, hlen, active, sc, slen, dlen, mask)
    me = sc[g, CUR]
    phase = sc[g, PHASE]
    if phase == DISCARD:
        return
    if phase == DRAW:
        if P[P_HAMMER] and sc[g, TURN] == 0 and sc[g, KNOCKER] < 0:
            mask[g, HAMMER] = 1
    elif phase == PH_GOLF_DRAW:
        if slen[g]:
            mask[g, DRAW_STOCK] = 1
        mask[g, DRAW_DISCARD] = 1
    elif phase == PH_GOLF_PLACE:
        up = per_seat[g, me, S_FACE_UP]
        for i in range(GOLF_SLOTS):
            if not (up >> i) & 1:
                mask[g, PLACE_SLOT + i] = 1
                if sc[g, TAKEN] < 0:  # a card from the stock may be discarded instead
                    mask[g, TURN_UP + i] = 1
    elif phase != OVER:  # a call: make it or pass
        mask[g, PASS] = 1
        if phase == PH_BLIND:
            mask[g, THROW_DOWN] = 1
        elif phase == PH_SUDDEN:
            mask[g, SUDDEN_DEATH] = 1
        else:
            mask[g, DECLARE] = 1


@njit(cache=True, inline="always")
def _settle(g, n, P, active, sc, rew, done, trunc, winner):
    """After a step: the game over, or cut short by the turn cap (everyone still in shares
    the eliminated seats' payments so that game rewards stay zero-sum, as the env does)."""
    if sc[g, PHASE] == OVER:
        done[g] = True
        if P[P_POINTS]:
            winner[g] = sc[g, RACE_WINNER]
            return True
        for s in range(n):
            if active[g, s]:
                winner[g] = s
        return True
    if sc[g, TURN] >= P[P_MAX_TURNS]:
        done[g] = True
        trunc[g] = True
        live = 0
        for s in range(n):
            live += active[g, s]
        if not P[P_REWARD_HAND]:
            share = (n - live) / ((n - 1) * live)
            for s in range(n):
                if active[g, s]:
                    rew[g, s] += share
        return True
    return False


@njit(cache=True)
def _start(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
           per_seat, sc, rng, prew, plost, pended):
    """A new game in slot ``g`` that waits for a decision. Hands decided by its deal (a
    dealt 31) are paid with its first step, as ``env()`` pays them (``prew``, ``plost``,
    ``pended`` hold them until then); a game decided by the deal alone (possible only with
    one life each) is dealt again, since no player could act in it."""
    while True:
        for s in range(n):
            prew[g, s] = 0.0
            plost[g, s] = 0
        pended[g] = 0
        _new_game(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
                  per_seat, sc, rng, prew, plost, pended)
        if sc[g, PHASE] != OVER:
            return


@njit(cache=True, parallel=True)
def reset_all(n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
              per_seat, sc, rng, prew, plost, pended, obs, mask):
    """Start a new game in every slot."""
    for i in prange(hands.shape[0]):
        g = np.uint64(i)  # one index type for every helper (module docstring)
        _start(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives, active,
               per_seat, sc, rng, prew, plost, pended)
        _observe(g, n, P, T, hands, hlen, known, per_seat, slen, disc, dlen, lives, active, sc,
                 obs, mask)


@njit(cache=True, parallel=True)
def restart_some(n, which, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives,
                 active, per_seat, sc, rng, prew, plost, pended, obs, mask):
    """A new game in every slot where ``which`` is set (the rest untouched)."""
    for i in prange(hands.shape[0]):
        g = np.uint64(i)  # one index type for every helper (module docstring)
        if which[g]:
            _start(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives,
                   active, per_seat, sc, rng, prew, plost, pended)
            _observe(g, n, P, T, hands, hlen, known, per_seat, slen, disc, dlen, lives, active,
                     sc, obs, mask)


@njit(cache=True)
def observe_games(rows, n, P, T, hands, hlen, known, per_seat, slen, disc, dlen, lives, active,
                  sc, obs, mask):
    """The observation and mask of the games in ``rows`` again, after their state was
    written from outside (:meth:`scat_env.batch.BatchEnv.set_games`)."""
    for i in range(rows.shape[0]):
        _observe(np.uint64(rows[i]), n, P, T, hands, hlen, known, per_seat, slen, disc, dlen,
                 lives, active, sc, obs, mask)


@njit(cache=True)
def first_illegal(actions, mask, skip):
    """The first game whose action its mask does not allow, or -1 (games in ``skip`` wait
    this step: their action is not read)."""
    A = mask.shape[1]
    for g in range(actions.shape[0]):
        if skip[g]:
            continue
        a = actions[g]
        if a < 0 or a >= A or not mask[g, a]:
            return g
    return -1


@njit(cache=True, inline="always")
def _begin_step(g, n, skip, prew, plost, pended, rew, lost, ended, done, trunc, winner):
    """The start of game ``g``'s step in both step kernels: a skipped game reports nothing
    (``False``: leave it as it is); the others start from what their last new game's deal
    owes (a dealt 31 paid with the first step) and no end yet."""
    if skip[g]:
        for s in range(n):
            rew[g, s] = 0.0
            lost[g, s] = 0
        ended[g] = 0
        done[g] = False
        trunc[g] = False
        winner[g] = -1
        return False
    for s in range(n):
        rew[g, s] = prew[g, s]
        lost[g, s] = plost[g, s]
        prew[g, s] = 0.0
        plost[g, s] = 0
    ended[g] = pended[g]
    pended[g] = 0
    done[g] = False
    trunc[g] = False
    winner[g] = -1
    return True


@njit(cache=True, parallel=True)
def step_all_plain(n, actions, skip, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen,
             lives, active, per_seat, sc, rng, prew, plost, pended, rew, lost, ended, done, trunc,
             winner, obs, mask):
    """:func:`step_all` for the draw-and-discard games without calls (``P_PLAIN``): a
    kernel of its own, so that the loop over the games holds the plain step alone. With the
    other families' step in the same loop, even behind a test of ``P_PLAIN`` that is never
    true, the standard game at 10 players ran 7% slower (one thread, alternating runs)."""
    for i in prange(hands.shape[0]):
        g = np.uint64(i)  # one index type for every helper (module docstring)
        if not _begin_step(g, n, skip, prew, plost, pended, rew, lost, ended, done, trunc,
                           winner):
            continue
        _apply_plain(g, n, actions[g], P, T, deck, hands, hlen, known, pub, stock, slen,
                     disc, dlen, lives, active, per_seat, sc, rng, rew, lost, ended)
        if _settle(g, n, P, active, sc, rew, done, trunc, winner):
            _start(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives,
                   active, per_seat, sc, rng, prew, plost, pended)
        _observe_plain(g, sc[g, CUR], n, hands, hlen, known, slen, disc, dlen, lives, active,
                       sc, obs, g)
        _mask_plain(g, n, P, T, hands, hlen, active, sc, slen, dlen, mask)



@njit(cache=True, parallel=True)
def step_all(n, actions, skip, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen,
             lives, active, per_seat, sc, rng, prew, plost, pended, rew, lost, ended, done, trunc,
             winner, obs, mask):
    """One decision in every game not in ``skip`` (the actions checked legal by
    :func:`first_illegal`); a game that ends restarts at once, its ``done`` flag set and its
    new game observed. A skipped game stays as it is and reports nothing this step. The
    games of every family but the plain ones (``P_PLAIN``: :func:`step_all_plain`)."""
    for i in prange(hands.shape[0]):
        g = np.uint64(i)  # one index type for every helper (module docstring)
        if not _begin_step(g, n, skip, prew, plost, pended, rew, lost, ended, done, trunc,
                           winner):
            continue
        _apply(g, n, actions[g], P, T, deck, hands, hlen, known, pub, stock, slen, disc,
               dlen, lives, active, per_seat, sc, rng, rew, lost, ended)
        if _settle(g, n, P, active, sc, rew, done, trunc, winner):
            _start(g, n, P, T, deck, hands, hlen, known, pub, stock, slen, disc, dlen, lives,
                   active, per_seat, sc, rng, prew, plost, pended)
        _observe_full(g, sc[g, CUR], n, P, hands, hlen, known, per_seat, slen, disc, dlen,
                      lives, active, sc, obs, g)
        _mask_full(g, n, P, T, hands, hlen, active, per_seat, sc, slen, dlen, mask)


@njit(cache=True, parallel=True)
def random_actions(mask, rng):
    """A uniformly random legal action per game (for benchmarks and random opponents),
    drawn from ``rng`` (one SplitMix64 state per game)."""
    B, A = mask.shape
    out = np.empty(B, np.int64)
    for i in prange(B):
        g = np.uint64(i)  # one index type for every helper (module docstring)
        count = 0
        for a in range(A):
            count += mask[g, a]
        k = _below(rng, g, count)
        for a in range(A):
            if mask[g, a]:
                if k == 0:
                    out[g] = a
                    break
                k -= 1
    return out


@njit(cache=True, parallel=True)
def observe_all_seats(n, P, hands, hlen, known, per_seat, slen, disc, dlen, lives, active, sc,
                      out):
    """``out[g * n + s]``: seat ``s``'s compact observation of game ``g`` (seat ``s``'s
    view, whoever is to move), ``out`` being [B * n, D]: what a trainer bootstraps a seat's
    value from at the end of a rollout, when that seat is waiting for its turn."""
    for i in prange(hands.shape[0]):
        g = np.uint64(i)  # one index type for every helper (module docstring)
        for s in range(n):
            _observe_seat(g, s, n, P, hands, hlen, known, per_seat, slen, disc, dlen, lives,
                          active, sc, out, np.uint64(g * n + s))


@njit(cache=True, inline="always")
def _best_without(T, cards, k, skip):
    """Value of the three of ``cards[0:4]`` other than ``cards[skip]``."""
    a = b = c = 0
    m = 0
    for i in range(k):
        if i != skip:
            if m == 0:
                a = cards[i]
            elif m == 1:
                b = cards[i]
            else:
                c = cards[i]
            m += 1
    return T[a * 2704 + b * 52 + c]


@njit(cache=True, inline="always")
def _read_hand(obs, g, cards):
    """From compact observation ``g``: the mover's cards into ``cards`` (up to four), and
    ``(how many, the top discard or -1, the card taken this turn or -1)``."""
    k = 0
    top = -1
    taken = -1
    for c in range(52):
        code = obs[g, c]
        if code == C_HAND or code == C_DRAWN or code == C_TAKEN:
            if k < 4:
                cards[k] = c
                k += 1
            if code == C_TAKEN:
                taken = c
        elif code == C_TOP:
            top = c
    return k, top, taken


@njit(cache=True, inline="always")
def _best_with(T, cards, top):
    """The best three of a three-card hand (``cards[:3]``) and the top discard, keeping the
    discard (``cards[3]`` is overwritten with it): the hand a take would give."""
    cards[3] = top
    best = -1.0
    for i in range(3):
        w = _best_without(T, cards, 4, i)
        if w > best:
            best = w
    return best


@njit(cache=True, inline="always")
def _features_row(obs, T, out, g):
    """Row ``g`` of :func:`hand_features`."""
    for j in range(out.shape[1]):
        out[g, j] = 0.0
    cards = np.empty(4, np.int64)
    k, top, taken = _read_hand(obs, g, cards)
    if k == 4:
        best = -1.0
        for i in range(4):
            v = _best_without(T, cards, 4, i)
            if cards[i] != taken:
                out[g, cards[i]] = v
                if v > best:
                    best = v
        out[g, 52] = best  # a taken card stays: the best three that keep it
    elif k == 3:
        v = T[cards[0] * 2704 + cards[1] * 52 + cards[2]]
        out[g, 52] = v
        if top >= 0:
            out[g, 53] = _best_with(T, cards, top)


@njit(cache=True, parallel=True)
def hand_features(obs, T, out):
    """Scoring features of compact observations, a function of the observation alone:
    ``out[g, c]`` (``c`` < 52) the value kept by discarding card ``c`` (discard phase, for
    each card that may go); ``out[g, 52]`` the hand's value (best three of four mid-turn);
    ``out[g, 53]`` the value with the top discard taken (draw phase). Zeros elsewhere."""
    for i in prange(obs.shape[0]):
        g = np.uint64(i)  # one index type for every helper (module docstring)
        _features_row(obs, T, out, g)


@njit(cache=True)
def hand_features_serial(obs, T, out):
    """:func:`hand_features` on one thread, for an agent's single view: a parallel kernel
    wakes its thread pool at every call, which costs thousands of times the work itself
    when the cores are busy with other work."""
    for g in range(obs.shape[0]):
        _features_row(obs, T, out, g)


#: Golf: a card is worth keeping when it adds at least this many points to the face-up
#: cards (:data:`agents.greedy.GOLF_GAIN`, whose batched twin this is; a test holds them
#: equal, since the engine's package may not import the agents').
GOLF_GAIN = 8
_SUIT = np.array(CARD_SUIT, np.int64)
_RANK = np.array(CARD_RANK, np.int64)


@njit(cache=True, inline="always")
def _v3(T, a, b, c):
    """The value of the three cards ``a``, ``b``, ``c`` (``T`` is symmetric)."""
    return T[a * 2704 + b * 52 + c]


@njit(cache=True, inline="always")
def _threshold_discard(T, c0, c1, c2, c3, taken):
    """The discard that keeps the best three of four cards, never ``taken``; ties go to the
    card of fewest points, then the lowest id (``agents.knowledge.best_discard``)."""
    best_v = -1.0
    best_c = -1
    best_key = 1 << 30
    for i in range(4):
        d = c0 if i == 0 else c1 if i == 1 else c2 if i == 2 else c3
        if d == taken:
            continue
        if i == 0:
            v = _v3(T, c1, c2, c3)
        elif i == 1:
            v = _v3(T, c0, c2, c3)
        elif i == 2:
            v = _v3(T, c0, c1, c3)
        else:
            v = _v3(T, c0, c1, c2)
        key = _POINTS[d] * 64 + d
        if v > best_v or (v == best_v and key < best_key):
            best_v, best_c, best_key = v, d, key
    return best_c


@njit(cache=True, inline="always")
def _threshold_draw(knock_at, T, mask, g, k, c0, c1, c2, top):
    """The threshold player's move at the start of its turn: a hammer (else a knock) when
    its hand is worth ``knock_at``+, else the top discard when keeping it raises the hand,
    else the stock, else the end of the play."""
    value = _v3(T, c0, c1, c2) if k == 3 else 0.0  # three cards once looked at
    if knock_at >= 0 and k == 3 and value >= knock_at:
        if mask[g, HAMMER]:
            return HAMMER
        if mask[g, KNOCK]:
            return KNOCK
    if mask[g, DRAW_DISCARD] and top >= 0 and k == 3:
        take = max(_v3(T, top, c1, c2), _v3(T, c0, top, c2), _v3(T, c0, c1, top))
        if take > value:
            return DRAW_DISCARD
    return DRAW_STOCK if mask[g, DRAW_STOCK] else END_PLAY


@njit(cache=True, inline="always")
def _golf_value(c0, c1, c2, k):
    """Golf's value of the first ``k`` (at most three) of ``c0, c1, c2``: the best total of
    one suit or of one rank (``scoring.value_of`` under golf)."""
    best = 0
    for i in range(k):
        ci = c0 if i == 0 else c1 if i == 1 else c2
        suit = 0
        rank = 0
        for j in range(k):
            cj = c0 if j == 0 else c1 if j == 1 else c2
            if _SUIT[cj] == _SUIT[ci]:
                suit += _POINTS[cj]
            if _RANK[cj] == _RANK[ci]:
                rank += _POINTS[cj]
        best = max(best, suit, rank)
    return best


@njit(cache=True, inline="always")
def _golf_gain(u0, u1, k, card):
    """Golf: the points ``card`` adds to my ``k`` face-up cards ``u0, u1`` (by suit or by
    rank; at most two are face up while a slot is face down)."""
    if k == 0:
        return _golf_value(card, -1, -1, 1)
    if k == 1:
        return _golf_value(u0, card, -1, 2) - _golf_value(u0, -1, -1, 1)
    return _golf_value(u0, u1, card, 3) - _golf_value(u0, u1, -1, 2)


@njit(cache=True, inline="always")
def _threshold_golf(obs, mask, g, phase_at, slots_at):
    """The threshold player's golf move: keep the top discard or the drawn card when it adds
    :data:`GOLF_GAIN`+ points to my face-up cards, else draw, or discard the drawn card and
    turn a slot up; slots fill left to right. My face-up cards are my slots of the
    ``slots`` piece; the card to place is the card of my hand that is in none of them."""
    u0 = u1 = -1
    k = 0
    slot = -1
    for i in range(GOLF_SLOTS):
        c = np.int64(obs[g, slots_at + i]) - 1
        if c < 0:
            if slot < 0:
                slot = i
        else:
            if k == 0:
                u0 = c
            elif k == 1:
                u1 = c
            k += 1
    if obs[g, phase_at] == _phase_code(PH_GOLF_DRAW):
        top = -1
        for c in range(52):
            if obs[g, c] == C_TOP:
                top = c
        if not mask[g, DRAW_STOCK] or (top >= 0 and _golf_gain(u0, u1, k, top) >= GOLF_GAIN):
            return DRAW_DISCARD
        return DRAW_STOCK
    drawn = -1
    for c in range(52):
        if obs[g, c] == C_HAND:
            face_up = False
            for i in range(GOLF_SLOTS):
                face_up = face_up or obs[g, slots_at + i] == c + 1
            if not face_up:
                drawn = c
    if mask[g, TURN_UP + slot] and _golf_gain(u0, u1, k, drawn) < GOLF_GAIN:
        return TURN_UP + slot
    return PLACE_SLOT + slot


@njit(cache=True, inline="always")
def _threshold_move(knock_at, T, obs, mask, g, phase_at, slots_at):
    """Row ``g`` of :func:`threshold_actions`."""
    if slots_at >= 0:
        return _threshold_golf(obs, mask, g, phase_at, slots_at)
    if mask[g, DECLARE]:  # a 31 is always declared
        return DECLARE
    if mask[g, PASS]:  # no throw-down before looking, no sudden death
        return PASS
    k = 0
    c0 = c1 = c2 = c3 = -1
    top = -1
    taken = -1
    for c in range(52):
        code = obs[g, c]
        if code == C_HAND or code == C_DRAWN or code == C_TAKEN:
            if k == 0:
                c0 = c
            elif k == 1:
                c1 = c
            elif k == 2:
                c2 = c
            else:
                c3 = c
            k += 1
            if code == C_TAKEN:
                taken = c
        elif code == C_TOP:
            top = c
    if k == 4:
        return _threshold_discard(T, c0, c1, c2, c3, taken)
    return _threshold_draw(knock_at, T, mask, g, k, c0, c1, c2, top)


@njit(cache=True, parallel=True)
def threshold_actions(knock_at, T, obs, mask, phase_at, slots_at, out):
    """The ``threshold:K`` (``greedy`` at 25) agent's move from each compact observation,
    the moves of :class:`agents.greedy.ThresholdAgent` under every preset: take the top
    discard when it improves the hand, else draw; a hammer, else a knock, at ``knock_at``+
    (``knock_at`` < 0 never knocks); discard to keep the best three (ties: fewest points,
    then lowest id); always declare a 31, pass every other call; golf's
    :data:`GOLF_GAIN` rule. ``phase_at`` and ``slots_at`` are where the observation's
    ``phase`` and ``slots`` pieces begin, ``-1`` where the rules have none
    (:func:`scat_env.batch.reference.observation_pieces`). Nothing is allocated per game:
    the cards are read into scalars."""
    rows = np.uint64(_THRESHOLD_ROWS)
    size = np.uint64(obs.shape[0])
    for i in prange((size + rows - np.uint64(1)) // rows):
        lo = np.uint64(i) * rows
        _threshold_rows(knock_at, T, obs, mask, phase_at, slots_at, out, lo,
                        min(lo + rows, size))


#: Games a call of :func:`_threshold_rows` plays: numba's passes over a parallel loop take
#: several times longer on a large body than on a call (about 35 s of a cold compile, inlined),
#: and a call per game cost a sixth of the speed; a call per block costs neither.
_THRESHOLD_ROWS = 64


@njit(cache=True)
def _threshold_rows(knock_at, T, obs, mask, phase_at, slots_at, out, lo, hi):
    """:func:`threshold_actions` for games ``lo`` to ``hi - 1``."""
    g = lo
    while g < hi:
        out[g] = _threshold_move(knock_at, T, obs, mask, g, phase_at, slots_at)
        g += np.uint64(1)


# Every kernel above loads and saves its disk cache under a lock (a cold cache shared by
# several processes at once otherwise ends in a crash: scat_env.batch.cachelock).
lock_caches(globals())
