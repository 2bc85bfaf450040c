"""``expert``: the strongest fast rule-based Scat player of scat-env.

It plays from its :class:`~scat_env.PlayerView` only, with four ingredients:

1. **Card counting.** The unseen cards (not in my hand, not in the discard pile, not known
   to be held by an opponent) are the only cards the stock can hold; draws are evaluated
   over exactly those cards.
2. **Hands judged by value and potential.** A three-card hand is worth
   ``value + beta * (potential - value)``, where *potential* is the expected value after one
   more draw (:class:`~agents.knowledge.HandModel`). It keeps ``K♥ Q♥ 2♣`` (20, two hearts
   to build on) over ``K♥ Q♠ J♣``-style dead hands, and it compares the *exact* expected
   worth of a stock draw (every unseen card, each with its best discard) against the known
   top discard.
3. **Reading the next player.** Among near-equal discards it avoids the suit the next
   player is collecting (cards it took and still holds) and prefers suits it threw away.
4. **Knocking on a risk estimate.** Each opponent's value after its final turn is modelled
   from the number of cards it has drawn this hand, bounded below by the cards it is known
   to hold. In the lowest-loses game it knocks when ``knocker_loss * P(sole lowest)`` is
   below a budget that shrinks with few lives left; in the gin game (a knock promises the
   highest hand) it knocks when ``P(highest)`` is high enough. Values come from
   ``value_table(view.rules)``, so trips, Grand Cadillac and straight flushes count.

Two variations get strategies of their own:

- **Points races** (``french_canadian``): only the highest hand scores, so it aims for the
  highest hand and knocks when ``P(every opponent ends below me)`` reaches ``points_win``
  (a tie goes to a non-knocker, so a tie counts against the knocker); on its last turn it
  draws to maximise that chance. The flush rule is the engine's: a knock is offered only
  with three cards of one suit.
- **Golf**: every choice is judged by the expected value of the final hand, the face-down
  cards that stay down counted as random unseen cards (:func:`agents.knowledge.golf_choices`):
  take the top discard or draw, then keep the drawn card or turn a slot up. Slots fill left
  to right (nobody has seen a face-down card, so they are all alike).

Spec: ``expert`` or ``expert:name=value,...`` to override the tuning knobs of
:class:`ExpertParams` (for experiments). Deterministic: the seed is not used.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, PlayerView, Rules, card_str
from scat_env.actions import (
    CORE_ACTIONS,
    DECLARE,
    HAMMER,
    PASS,
    PLACE_SLOT,
    SUDDEN_DEATH,
    THROW_DOWN,
    TURN_UP,
)
from scat_env.cards import CARD_POINTS, CARD_SUIT

from .base import Agent
from .knowledge import (
    NUM_BINS,
    HandModel,
    discard_sort_key,
    draws_made,
    golf_choices,
    golf_face_down,
    hand_model,
    next_active,
    opponents,
    suit_points,
    unseen_cards,
    value3,
)
from .registry import register


@dataclass(frozen=True)
class ExpertParams:
    """Tuning knobs. Defaults were picked by 2-player head-to-heads against threshold:25, 27
    and 29 (800 games each, the strongest thresholds) and 4-player games against three
    greedy/threshold players (400 games); e.g. beta 0.5 -> 0.8, risk 0.5 -> 0.4 and feed
    0.3 -> 0.6 together took the 2-player mean win rate from 0.533 to 0.570::

        nice -n 10 python scripts/eval_baselines.py --hero expert:risk=0.4 \
            --opponents threshold:25 threshold:27 threshold:29 --sweep --games 800
    """

    beta: float = 0.8  # weight of a hand's potential over its current value
    risk: float = 0.4  # knock when knocker_loss * P(sole lowest) <= risk / opponents
    low_lives: float = 0.7  # risk budget multiplier with <= knocker_loss lives left
    min_value: float = 0.0  # never knock below this value (lowest-loses game)
    gin_win: float = 0.6  # gin: knock when P(highest or tied) >= this
    feed: float = 0.6  # discard penalty per point for feeding the next player's suit
    draw_bonus: float = 0.0  # prefer the stock by this much (taking shows my suit)
    quiet_cap: float = 27.0  # an opponent who did not knock is assumed below this value
    knock_floor: float = 24.0  # a knocker is assumed to hold at least this much
    points_win: float = 0.7  # points race: knock when P(every opponent ends below me) >= this


#: The values each knob may take in a spec (``expert:beta=0.5``): probabilities and weights
#: stay within their meaning, hand values within 0..41 (four cards of one suit at most).
PARAM_RANGES: dict[str, tuple[float, float]] = {
    "beta": (0.0, 1.0),
    "risk": (0.0, 10.0),
    "low_lives": (0.0, 10.0),
    "min_value": (0.0, 41.0),
    "gin_win": (0.0, 1.0),
    "feed": (0.0, 10.0),
    "draw_bonus": (-41.0, 41.0),
    "quiet_cap": (0.0, 41.0),
    "knock_floor": (0.0, 41.0),
    "points_win": (0.0, 1.0),
}

#: Size and slots of :meth:`ExpertAgent.advice` (see its docstring).
ADVICE_SIZE = CORE_ACTIONS + 52 + 6
_STOCK, _TAKE, _P_SOLE, _P_NONE_BELOW, _LOSE_STOCK, _LOSE_TAKE = range(CORE_ACTIONS + 52, ADVICE_SIZE)

#: ``value + beta * (potential - value)`` per (scoring variant, beta), as a list (fast
#: scalar lookups) and an array (vectorised stock-draw expectations).
_EVAL_TABLES: dict[tuple, tuple[list[float], np.ndarray]] = {}


def eval_tables(rules: Rules, model: HandModel, beta: float) -> tuple[list[float], np.ndarray]:
    """``value + beta * (potential - value)`` for every ordered triple, as a list (fast
    scalar lookups) and an array. Shared by every expert with the same scoring and beta, the
    batched one (:mod:`agents.batch_expert`) too: building the 140,608-entry table costs
    about a millisecond, more than a whole game's decisions."""
    key = (rules.scoring_key, beta)
    tables = _EVAL_TABLES.get(key)
    if tables is None:
        arr = model.value_np + beta * (model.potential_np - model.value_np)
        tables = (arr.tolist(), arr)
        _EVAL_TABLES[key] = tables
    return tables


class ExpertAgent(Agent):
    """Card counting, value-plus-potential hands, next-player reading, risk-based knocks."""

    def __init__(self, params: ExpertParams | None = None, seed: int | None = None) -> None:
        super().__init__(seed)
        self.params = params or ExpertParams()
        # Set only inside advice(): where the decision's numbers are written as it goes.
        self._notes: np.ndarray | None = None

    # -- evaluation tables -------------------------------------------------------------
    def _eval_tables(self, view: PlayerView, model: HandModel) -> tuple[list[float], np.ndarray]:
        return eval_tables(view.rules, model, self.params.beta)

    # -- the decision ------------------------------------------------------------------
    def act(self, view: PlayerView) -> int:
        return self._decide(view)[0]

    def explain(self, view: PlayerView) -> str:
        return self._decide(view)[1]

    def advice(self, view: PlayerView, out: np.ndarray) -> int:
        """Decide, and write the numbers behind the decision into ``out`` (length
        :data:`ADVICE_SIZE`, zeroed by the caller); returns the action.

        Why: a trained policy (the padded encoder's ``advice`` option) gets these as
        inputs, so it starts from the expert's card counting and risk estimates instead of
        re-deriving them from one-hots, and learns where to play differently. Everything
        here comes from the view, like every other decision of this agent.

        Layout: ``[0, 56)`` one-hot of the expert's action among the draw-and-discard
        actions (:data:`~scat_env.actions.CORE_ACTIONS`; a call of a variation has no
        entry, so that the layout is the same in every preset); ``[56, 108)`` per card of the
        hand, the expert's score for discarding it (/41, discard phase); then the expected
        worth of a stock draw and of taking the top discard (/41), P(every opponent ends
        above me) and P(nobody ends below me) if I knock now, and on my last turn
        P(I lose) after a stock draw and after taking the top discard.
        """
        self._notes = out
        try:
            action = self._decide(view)[0]
        finally:
            self._notes = None
        if action < CORE_ACTIONS:
            out[action] = 1.0
        return action

    def _decide(self, view: PlayerView) -> tuple[int, str]:
        if view.slots:
            return self._golf(view)
        model = hand_model(view.rules)
        if view.phase == "discard":
            return self._discard(view, model)
        if view.phase == "declare":
            # Declaring costs the holder nothing and everyone else a life (docs/RULES.md (d)).
            return DECLARE, "declare 31: I am safe and everyone else loses a life"
        if view.phase == "blind" or view.phase == "sudden_death":
            return self._blind_call(view)
        return self._draw(view, model)

    def _golf(self, view: PlayerView) -> tuple[int, str]:
        """Golf: the choice with the highest expected final value (module docstring)."""
        est = golf_choices(view)
        slot = golf_face_down(view)[0]
        if view.phase == "golf_draw":
            if "stock" not in est or est.get("take", -1.0) >= est["stock"]:
                return DRAW_DISCARD, (f"take the {card_str(view.top_discard, True)}: expected "  # type: ignore[arg-type]
                                      f"{est.get('take', 0):.1f} vs {est.get('stock', 0):.1f} "
                                      "from the stock")
            return DRAW_STOCK, (f"draw: expected {est['stock']:.1f} vs "
                                f"{est.get('take', 0):.1f} for the top discard")
        if "turn" in est and est["turn"] > est["place"]:
            return TURN_UP + slot, (f"discard it and turn slot {slot + 1} up: expected "
                                    f"{est['turn']:.1f} vs {est['place']:.1f} keeping it")
        return PLACE_SLOT + slot, (f"put it in slot {slot + 1}: expected {est['place']:.1f}"
                                   + (f" vs {est['turn']:.1f} turning a slot up"
                                      if "turn" in est else ""))

    def _blind_call(self, view: PlayerView) -> tuple[int, str]:
        """A throw-down (before looking) or the dealer's sudden death (one unseen card each):
        a showdown of cards nobody has seen, so everyone is equally likely to lose it and
        skill plays no part. Call it only to finish the game: heads-up, against an
        opponent on their last life, with lives to spare even after paying the caller's
        price (a coin toss that ends the game half the time and cannot end mine)."""
        call = THROW_DOWN if view.phase == "blind" else SUDDEN_DEATH
        cost = view.rules.knocker_loss if call == THROW_DOWN else 1
        mine = view.lives[view.seat]
        theirs = [view.lives[s] for s in opponents(view)]
        if len(theirs) == 1 and theirs[0] == 1 and mine > cost + 1:
            what = "throw down" if call == THROW_DOWN else "call sudden death"
            return call, (f"{what}: my last opponent is on their last life and I keep "
                          f"lives even if I lose {cost}")
        return PASS, "pass: a showdown of unseen cards is a coin toss, and I play better"

    def _draw(self, view: PlayerView, model: HandModel) -> tuple[int, str]:
        legal = view.legal_actions
        table = model.value
        hand = view.hand
        value = value3(hand, table)
        final_turn = view.knocker is not None
        if HAMMER in legal:
            hammer, why = self._hammer_decision(view, model, value)
            if hammer:
                return HAMMER, why
        if KNOCK in legal:
            if final_turn:  # a second knock (Moyer): the play would end right now
                knock, why = self._second_knock_decision(view, model, value)
            else:
                knock, why = self._knock_decision(view, model, value)
            if knock:
                return KNOCK, why
        top = view.top_discard
        if final_turn:
            return self._final_draw(view, model, value)
        if DRAW_STOCK not in legal:
            # The hand ends soon: only the value that will be shown counts.
            ev, ev_np = table, model.value_np
        else:
            ev, ev_np = self._eval_tables(view, model)
        take = -1.0
        keep_take: tuple[int, ...] = ()
        if DRAW_DISCARD in legal and top is not None:
            for d in hand:
                rest = [x for x in hand if x != d]
                e = ev[rest[0] * 2704 + rest[1] * 52 + top]
                if e > take:
                    take, keep_take = e, (rest[0], rest[1], top)
        if DRAW_STOCK not in legal:
            new_value = value3(keep_take, table) if keep_take else value
            if new_value > value:
                return DRAW_DISCARD, (
                    f"take the {card_str(top, True)}: {value:g} -> {new_value:g}")
            return END_PLAY, f"end the play: nothing to gain, showing {value:g}"
        unseen = np.asarray(unseen_cards(view))
        a, b, c = hand
        stay = ev[a * 2704 + b * 52 + c]
        best = np.maximum(
            np.maximum(ev_np[unseen * 2704 + b * 52 + c], ev_np[a * 2704 + unseen * 52 + c]),
            np.maximum(ev_np[a * 2704 + b * 52 + unseen], stay),
        )
        stock = float(best.mean()) + self.params.draw_bonus
        notes = self._notes
        if notes is not None:
            notes[_STOCK] = stock / 41.0
            notes[_TAKE] = max(take, 0.0) / 41.0
        if take > stock:
            new_value = value3(keep_take, table)
            return DRAW_DISCARD, (
                f"take the {card_str(top, True)}: {value:g} -> {new_value:g} "
                f"(worth {take:.1f} vs {stock:.1f} expected from the stock)")
        return DRAW_STOCK, (
            f"draw from the stock: expected {stock:.1f} over {len(unseen)} unseen cards "
            f"beats {max(take, 0):.1f} for the top discard")

    def _discard(self, view: PlayerView, model: HandModel) -> tuple[int, str]:
        table = model.value
        final_turn = view.knocker is not None
        ev = table if final_turn else self._eval_tables(view, model)[0]
        nxt = next_active(view, view.seat)
        # The next player may take my discard unless the play ends with it.
        feeds = not (final_turn and nxt == view.knocker)
        wanted = [0.0] * 4
        if feeds and self.params.feed:
            for card in view.known_cards[nxt]:
                wanted[CARD_SUIT[card]] += 1.0
            for seat, kind, card in view.log:
                if seat == nxt and kind == "discard":
                    wanted[CARD_SUIT[card]] -= 0.5
        best_score, best_card, best_kept = -1e9, -1, ()
        for d in sorted(view.hand, key=discard_sort_key):
            if d == view.taken_card:
                continue
            kept = tuple(x for x in view.hand if x != d)
            score = ev[kept[0] * 2704 + kept[1] * 52 + kept[2]]
            if wanted[CARD_SUIT[d]] > 0:
                score -= self.params.feed * CARD_POINTS[d] * min(wanted[CARD_SUIT[d]], 2.0)
            if score > best_score + 1e-9:
                best_score, best_card, best_kept = score, d, kept
            if self._notes is not None:
                self._notes[CORE_ACTIONS + d] = score / 41.0
        kept_value = value3(best_kept, table)
        why = f"discard the {card_str(best_card, True)}: keeps {kept_value:g}"
        if wanted[CARD_SUIT[best_card]] < 0:
            why += " (the next player threw that suit away)"
        return best_card, why

    # -- opponent model ------------------------------------------------------------------
    def opponent_dists(self, view: PlayerView, model: HandModel, if_i_knock: bool) -> list[tuple[int, list[float], list[float]]]:
        """Per active opponent ``(seat, P(V < x), P(V <= x))`` of its value when the hand is
        shown: after its last turn (one more draw, unless it has had it), given that it did
        not knock at its last decision, and at least what its known cards are worth.
        """
        p = self.params
        counts = draws_made(view)
        knocker = view.seat if if_i_knock else view.knocker
        played_final = set()
        if view.knocker is not None:
            seen_knock = False
            for seat, kind, _ in view.log:
                if kind == "knock":
                    seen_knock = True
                elif seen_knock and kind == "discard":
                    played_final.add(seat)
        out = []
        for s in opponents(view):
            k = counts[s]
            floor = suit_points(view.known_cards[s])
            if s == knocker:
                lt, le = model.value_dist(k, k - 1, p.quiet_cap, max(floor, p.knock_floor))
            elif s in played_final or (knocker is None and view.stock_size == 0):
                lt, le = model.value_dist(k, k - 2, p.quiet_cap, floor)
            else:
                lt, le = model.value_dist(k + 1, k - 1, p.quiet_cap, floor)
            out.append((s, lt, le))
        return out

    def _lose_table(self, view: PlayerView, model: HandModel) -> list[float]:
        """P(I lose a life at the showdown) for each value bin of my final hand, when
        someone else has knocked (or the play is about to end)."""
        rules = view.rules
        dists = self.opponent_dists(view, model, if_i_knock=False)
        knocker = view.knocker
        table = []
        if rules.scoring == "points":
            # "Losing" is not scoring: someone ends above me (a tie for highest scores for
            # every non-knocker in it, and I am not the knocker here).
            for b in range(NUM_BINS):
                p_score = 1.0
                for _s, _lt, le in dists:
                    p_score *= le[b]
                table.append(1.0 - p_score)
            return table
        for b in range(NUM_BINS):
            p = 1.0
            for s, lt, le in dists:
                above = 1.0 - lt[b]  # P(V >= mine)
                if s == knocker:
                    if rules.knock_mode == "gin":
                        p = above  # I lose unless I beat the knocker
                        break
                    if rules.knocker_tie == "knocker_only":
                        above = 1.0 - le[b]  # a tie with the knocker costs only the knocker
                p *= above
            table.append(p)
        return table

    def _final_draw(self, view: PlayerView, model: HandModel, value: float) -> tuple[int, str]:
        """My last turn: pick take or stock by the chance of not being the one who loses."""
        lose = self._lose_table(view, model)
        table = model.value
        legal = view.legal_actions
        hand = view.hand
        top = view.top_discard
        take_p, take_v = 2.0, value
        if DRAW_DISCARD in legal and top is not None:
            a, b, c = hand
            take_v = max(table[top * 2704 + b * 52 + c], table[a * 2704 + top * 52 + c],
                         table[a * 2704 + b * 52 + top])
            take_p = lose[int(take_v * 2)]
        if DRAW_STOCK in legal:
            unseen = np.asarray(unseen_cards(view))
            a, b, c = hand
            vn = model.value_np
            best = np.maximum(
                np.maximum(vn[unseen * 2704 + b * 52 + c], vn[a * 2704 + unseen * 52 + c]),
                np.maximum(vn[a * 2704 + b * 52 + unseen], value),
            )
            stock_p = float(np.asarray(lose)[(best * 2).astype(np.int64)].mean())
            if self._notes is not None:
                self._notes[_LOSE_STOCK] = stock_p
                self._notes[_LOSE_TAKE] = min(take_p, 1.0)
            if stock_p <= take_p:
                return DRAW_STOCK, (
                    f"last turn: a stock draw leaves me lowest with p={stock_p:.2f}, "
                    f"the top discard with p={min(take_p, 1):.2f}")
            return DRAW_DISCARD, (
                f"last turn: take the {card_str(top, True)} for {take_v:g} "
                f"(lowest with p={take_p:.2f} vs {stock_p:.2f} from the stock)")
        if take_v > value:
            return DRAW_DISCARD, f"take the {card_str(top, True)}: {value:g} -> {take_v:g}"
        return END_PLAY, f"end the play: nothing to gain, showing {value:g}"

    # -- knocking ----------------------------------------------------------------------
    def _second_knock_decision(self, view: PlayerView, model: HandModel,
                               value: float) -> tuple[bool, str]:
        """Knock right after the knocker (002, Doug Moyer): the hands are shown now, before
        anyone's last draw. Knock when being lowest now is less likely than being lowest
        after everyone's last turn, holding the hand my own draw is expected to give."""
        x = int(value * 2)
        p_now = 1.0  # every opponent shows at least my value: I am among the lowest
        for s in opponents(view):
            k = draws_made(view)[s]
            floor = suit_points(view.known_cards[s])
            if s == view.knocker:
                floor = max(floor, self.params.knock_floor)
            lt, _le = model.value_dist(k, k - 1, self.params.quiet_cap, floor)
            p_now *= 1.0 - lt[x]
        a, b, c = view.hand  # playing on, I draw too: judge the hand expected after it
        later = max(value, model.potential[a * 2704 + b * 52 + c])
        p_later = self._lose_table(view, model)[int(later * 2)]
        if p_now < p_later:
            return True, (f"knock too: {value:g} is lowest now with p={p_now:.2f}, "
                          f"after the last round with p={p_later:.2f}")
        return False, ""

    def _hammer_decision(self, view: PlayerView, model: HandModel,
                         value: float) -> tuple[bool, str]:
        """A hammer (002): a knock that nobody answers with a draw, so the opponents' hands
        are the dealt ones. Call it when the knocker's risk, judged on dealt hands, is
        within the same budget as a knock's."""
        rules, p = view.rules, self.params
        x = int(value * 2)
        p_sole = p_none_below = 1.0
        opps = opponents(view)
        for _s in opps:
            lt, le = model.value_dist(0, -1, p.quiet_cap, 0.0)
            p_sole *= 1.0 - le[x]
            p_none_below *= 1.0 - lt[x]
        if opps and knock_risk(rules, p_sole, p_none_below) <= p.risk / len(opps):
            return True, (f"call a hammer: {value:g} is the sole lowest of the dealt hands "
                          f"only with p={p_sole:.2f}")
        return False, ""

    def _knock_decision(self, view: PlayerView, model: HandModel, value: float) -> tuple[bool, str]:
        rules = view.rules
        p = self.params
        if rules.knock_then_draw:
            # The computer versions: the knocker still draws and discards, so the hand to
            # judge is the one expected after that draw.
            a, b, c = view.hand
            value = max(value, model.potential[a * 2704 + b * 52 + c])
        x = int(value * 2)
        dists = self.opponent_dists(view, model, if_i_knock=True)
        m = len(dists)
        if rules.scoring == "points":
            # Only the highest hand scores, and a tie goes to the non-knocker: knock when
            # every opponent is likely to end strictly below me.
            p_high = 1.0
            for _s, lt, _le in dists:
                p_high *= lt[x]
            if self._notes is not None:
                self._notes[_P_SOLE] = p_high
            if p_high >= p.points_win:
                return True, f"knock: {value:g} should be the highest (p={p_high:.2f})"
            return False, ""
        if rules.knock_mode == "gin":
            p_high = 1.0
            for _s, _lt, le in dists:
                p_high *= le[x]
            if self._notes is not None:
                self._notes[_P_SOLE] = p_high
            if p_high >= p.gin_win:
                return True, f"knock: {value:g} should be the highest (p={p_high:.2f})"
            return False, ""
        p_sole = 1.0  # every opponent ends above me
        p_none_below = 1.0  # nobody ends below me (a tie may involve me)
        for _s, lt, le in dists:
            p_sole *= 1.0 - le[x]
            p_none_below *= 1.0 - lt[x]
        if self._notes is not None:
            self._notes[_P_SOLE] = p_sole
            self._notes[_P_NONE_BELOW] = p_none_below
        risk = knock_risk(rules, p_sole, p_none_below)
        budget = p.risk / m
        if view.lives[view.seat] <= rules.knocker_loss:
            budget *= p.low_lives
        if value >= p.min_value and risk <= budget:
            return True, (
                f"knock: {value:g} is the sole lowest only with p={p_sole:.2f} "
                f"after everyone's last turn")
        return False, ""


def knock_risk(rules: Rules, p_sole: float, p_none_below: float) -> float:
    """Expected lives a knocker pays: ``knocker_loss`` when it ends sole lowest
    (``p_sole``), and also in a tie for lowest where the rules make a tied knocker pay
    (``p_none_below - p_sole``). Shared by the knock, the hammer and the search's rollouts."""
    risk = rules.knocker_loss * p_sole
    if rules.knocker_tie != "safe":
        risk += rules.knocker_loss * (p_none_below - p_sole)
    return risk


def parse_params(arg: str | None) -> ExpertParams:
    """``"beta=0.4,risk=0.6"`` -> :class:`ExpertParams` (unknown names are errors)."""
    params = ExpertParams()
    if not arg:
        return params
    names = {f.name for f in fields(ExpertParams)}
    changes = {}
    for item in arg.split(","):
        name, sep, val = item.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise ValueError(
                f"expert:{arg}: expected name=value pairs with names in {sorted(names)}")
        try:
            number = float(val)
        except ValueError:
            raise ValueError(f"expert:{arg}: {name} must be a number, got {val!r}") from None
        low, high = PARAM_RANGES[name]
        if not low <= number <= high:  # also refuses nan
            raise ValueError(f"expert:{arg}: {name} must be between {low:g} and {high:g}, "
                             f"got {val.strip()!r}")
        changes[name] = number
    return replace(params, **changes)


def _make(arg: str | None, seed: int | None) -> Agent:
    return ExpertAgent(parse_params(arg), seed)


register("expert", _make, "card counting, draw EV, next-player reading, risk-based knocks")
