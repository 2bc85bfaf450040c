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

Spec: ``expert`` or ``expert:name=value,...`` to override the tuning knobs of
:class:`ExpertParams` (for experiments). Deterministic: the seed is not used.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, PlayerView, card_str
from scat_env.cards import CARD_POINTS, CARD_SUIT

from .base import Agent
from .knowledge import (
    MAX_DRAWS,
    HandModel,
    discard_sort_key,
    draws_made,
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
    """Tuning knobs (measured with scripts/eval_baselines.py; see the module docstring)."""

    beta: float = 0.5  # weight of a hand's potential over its current value
    risk: float = 0.5  # knock when knocker_loss * P(sole lowest) <= risk / opponents
    low_lives: float = 0.7  # risk budget multiplier with <= knocker_loss lives left
    min_value: float = 0.0  # never knock below this value (lowest-loses game)
    gin_win: float = 0.6  # gin: knock when P(highest or tied) >= this
    feed: float = 0.3  # discard penalty per point for feeding the next player's suit
    draw_bonus: float = 0.0  # prefer the stock by this much (taking shows my suit)


class ExpertAgent(Agent):
    """Card counting, value-plus-potential hands, next-player reading, risk-based knocks."""

    def __init__(self, params: ExpertParams | None = None, seed: int | None = None) -> None:
        super().__init__(seed)
        self.params = params or ExpertParams()
        self._evals: dict[tuple, tuple[list[float], np.ndarray]] = {}

    # -- evaluation tables -------------------------------------------------------------
    def _eval_tables(self, view: PlayerView, model: HandModel) -> tuple[list[float], np.ndarray]:
        key = view.rules.scoring_key
        tables = self._evals.get(key)
        if tables is None:
            beta = self.params.beta
            arr = model.value_np + beta * (model.potential_np - model.value_np)
            tables = (arr.tolist(), arr)
            self._evals[key] = tables
        return tables

    # -- the decision ------------------------------------------------------------------
    def act(self, view: PlayerView) -> int:
        return self._decide(view)[0]

    def explain(self, view: PlayerView) -> str:
        return self._decide(view)[1]

    def _decide(self, view: PlayerView) -> tuple[int, str]:
        model = hand_model(view.rules)
        if view.phase == "discard":
            return self._discard(view, model)
        return self._draw(view, model)

    def _draw(self, view: PlayerView, model: HandModel) -> tuple[int, str]:
        legal = view.legal_actions
        table = model.value
        hand = view.hand
        value = value3(hand, table)
        final_turn = view.knocker is not None
        if KNOCK in legal:
            knock, why = self._knock_decision(view, model, value)
            if knock:
                return KNOCK, why
        top = view.top_discard
        if final_turn or DRAW_STOCK not in legal:
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
        kept_value = value3(best_kept, table)
        why = f"discard the {card_str(best_card, True)}: keeps {kept_value:g}"
        if wanted[CARD_SUIT[best_card]] < 0:
            why += " (the next player threw that suit away)"
        return best_card, why

    # -- knocking ----------------------------------------------------------------------
    def opponent_cdfs(self, view: PlayerView, model: HandModel) -> list[tuple[list[float], list[float], float]]:
        """Per opponent: (P(V < x), P(V <= x)) tables after its final turn, and a floor."""
        counts = draws_made(view)
        out = []
        for s in opponents(view):
            k = min(counts[s] + 1, MAX_DRAWS)
            floor = suit_points(view.known_cards[s])
            out.append((model.cdf_lt[k], model.cdf_le[k], floor))
        return out

    def _knock_decision(self, view: PlayerView, model: HandModel, value: float) -> tuple[bool, str]:
        rules = view.rules
        p = self.params
        x = int(value * 2)
        cdfs = self.opponent_cdfs(view, model)
        m = len(cdfs)
        if rules.knock_mode == "gin":
            p_high = 1.0
            for lt, le, floor in cdfs:
                p_high *= le[x] if value >= floor else 0.0
            if p_high >= p.gin_win:
                return True, f"knock: {value:g} should be the highest (p={p_high:.2f})"
            return False, ""
        p_sole = 1.0  # every opponent ends above me
        p_none_below = 1.0  # nobody ends below me (a tie may involve me)
        for lt, le, floor in cdfs:
            p_sole *= 1.0 - (le[x] if value >= floor else 0.0)
            p_none_below *= 1.0 - (lt[x] if value > floor else 0.0)
        risk = rules.knocker_loss * p_sole
        if rules.knocker_tie != "safe":
            risk += rules.knocker_loss * (p_none_below - p_sole)
        budget = p.risk / m
        if view.lives[view.seat] <= rules.knocker_loss:
            budget *= p.low_lives
        if value >= p.min_value and risk <= budget:
            return True, (
                f"knock: {value:g} is the sole lowest only with p={p_sole:.2f} "
                f"after everyone's last turn")
        return False, ""


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
            changes[name] = float(val)
        except ValueError:
            raise ValueError(f"expert:{arg}: {name} must be a number, got {val!r}") from None
    return replace(params, **changes)


def _make(arg: str | None, seed: int | None) -> Agent:
    return ExpertAgent(parse_params(arg), seed)


register("expert", _make, "card counting, draw EV, next-player reading, risk-based knocks")
