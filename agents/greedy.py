"""``greedy`` and ``threshold:K``: one-step greedy players with a fixed knock threshold.

The simplest sensible Scat strategy, and the yardstick for everything smarter:

- draw: take the top discard when keeping it raises the hand value, else draw from the stock;
- discard: keep the best three cards (ties: give away the fewest points, then the lowest id);
- knock at the start of a turn when the hand value is at least ``K``;
- stock empty: take the discard if it improves the hand, else knock (value >= K, if the
  rules allow) or end the play;
- the calls of the variations: a hammer when the hand is worth at least ``K`` (a knock
  that nobody can answer with a draw); a 31 is always declared; no throw-down and no
  sudden death (gambles on cards nobody has seen).

``greedy`` is ``threshold:25`` (:data:`DEFAULT_KNOCK`): a 25 is better than about 70% of
hands after five or six draws, the usual length of a hand. ``threshold:never`` never knocks.
"""

from __future__ import annotations

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, PlayerView
from scat_env.actions import DECLARE, HAMMER, PASS
from scat_env.scoring import best_three, value_table

from .base import Agent
from .knowledge import best_discard, value3
from .registry import register

DEFAULT_KNOCK = 25
MIN_K, MAX_K = 17, 31


class ThresholdAgent(Agent):
    """Greedy draws and discards; knocks when its hand is worth at least ``knock_at``.

    Strategy: only the current hand value matters. The top discard is taken exactly when it
    improves the best three cards; otherwise the stock is the better gamble. ``knock_at``
    ``None`` never knocks. Deterministic: the seed is not used.
    """

    def __init__(self, knock_at: int | None = DEFAULT_KNOCK, seed: int | None = None) -> None:
        super().__init__(seed)
        self.knock_at = knock_at

    def act(self, view: PlayerView) -> int:
        table = value_table(view.rules)
        legal = view.legal_actions
        if view.phase == "discard":
            return best_discard(view.hand, table, view.taken_card)[1]
        if DECLARE in legal:
            return DECLARE
        if PASS in legal:  # a throw-down before looking, or the dealer's sudden death
            return PASS
        value = value3(view.hand, table)
        if self.knock_at is not None and value >= self.knock_at:
            if HAMMER in legal:
                return HAMMER
            if KNOCK in legal:
                return KNOCK
        top = view.top_discard
        if DRAW_DISCARD in legal and top is not None:
            if best_three((*view.hand, top), table, keep=top) > value:
                return DRAW_DISCARD
        if DRAW_STOCK in legal:
            return DRAW_STOCK
        return END_PLAY

    def explain(self, view: PlayerView) -> str:
        from scat_env import action_str

        table = value_table(view.rules)
        action = self.act(view)
        if view.phase == "discard":
            v, d = best_discard(view.hand, table, view.taken_card)
            return f"discard {action_str(d, True)[8:]}: keeps {v:g}"
        if action == DECLARE:
            return "declare 31: the hand ends and everyone else loses a life"
        if action == PASS:
            return "pass: no gamble on cards nobody has seen"
        value = value3(view.hand, table)
        if action == HAMMER:
            return f"call a hammer: {value:g} >= {self.knock_at}, and nobody gets to draw"
        if action == KNOCK:
            return f"knock: {value:g} >= {self.knock_at}"
        if action == DRAW_DISCARD:
            top = view.top_discard
            new = best_three((*view.hand, top), table, keep=top)
            return f"take the top discard: {value:g} -> {new:g}"
        if action == DRAW_STOCK:
            return f"draw from the stock: the discard does not improve {value:g}"
        return f"end the play with {value:g}"


def parse_threshold(arg: str | None) -> int | None:
    """``None`` (plain ``threshold``) -> the default; ``"never"`` -> no knocking; else an
    int 17..31. ``threshold:`` with nothing after the colon is refused: it reads as a value
    forgotten, not as a wish for the default."""
    if arg is None:
        return DEFAULT_KNOCK
    if not arg.strip():
        raise ValueError(f"threshold:{arg}: give the knock threshold, an integer "
                         f"{MIN_K}..{MAX_K} or 'never' (plain 'threshold' means {DEFAULT_KNOCK})")
    if arg.strip().lower() == "never":
        return None
    try:
        k = int(arg)
    except ValueError:
        raise ValueError(
            f"threshold:{arg}: the knock threshold must be an integer {MIN_K}..{MAX_K} or 'never'"
        ) from None
    if not MIN_K <= k <= MAX_K:
        raise ValueError(
            f"threshold:{arg}: the knock threshold must be between {MIN_K} and {MAX_K} "
            "(or 'never')"
        )
    return k


def _make_greedy(arg: str | None, seed: int | None) -> Agent:
    if arg is not None:
        raise ValueError("the 'greedy' agent takes no argument; use threshold:K to set K")
    return ThresholdAgent(DEFAULT_KNOCK, seed)


def _make_threshold(arg: str | None, seed: int | None) -> Agent:
    return ThresholdAgent(parse_threshold(arg), seed)


register("greedy", _make_greedy, f"greedy draws/discards, knocks at {DEFAULT_KNOCK}+")
register(
    "threshold",
    _make_threshold,
    f"greedy, knocks at value >= K (threshold:K, K in {MIN_K}..{MAX_K} or 'never')",
)
