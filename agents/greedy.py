"""``greedy`` and ``threshold:K``: one-step greedy players with a fixed knock threshold.

The simplest sensible Scat strategy, and the yardstick for everything smarter:

- draw: take the top discard when keeping it raises the hand value, else draw from the stock;
- discard: keep the best three cards (ties: give away the fewest points, then the lowest id);
- knock at the start of a turn when the hand value is at least ``K``;
- stock empty: take the discard if it improves the hand, else knock (value >= K, if the
  rules allow) or end the play;
- the calls of the variations: a hammer when the hand is worth at least ``K`` (a knock
  that nobody can answer with a draw); a 31 is always declared; no throw-down and no
  sudden death (gambles on cards nobody has seen);
- golf: take the top discard, or keep a drawn card, when it adds at least
  :data:`GOLF_GAIN` points to my face-up cards (more than a random card is worth on
  average); otherwise draw, or discard the drawn card and turn a slot up. Slots fill left
  to right (face-down cards are all alike: nobody has seen them).

``greedy`` is ``threshold:25`` (:data:`DEFAULT_KNOCK`): a 25 is better than about 70% of
hands after five or six draws, the usual length of a hand. ``threshold:never`` never knocks.
"""

from __future__ import annotations

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, PlayerView, Rules
from scat_env.actions import DECLARE, HAMMER, PASS, PLACE_SLOT, TURN_UP
from scat_env.scoring import best_three, value_of, value_table

from .base import Agent
from .knowledge import best_discard, golf_face_down, golf_face_up, value3
from .registry import register

DEFAULT_KNOCK = 25
MIN_K, MAX_K = 17, 31
#: Golf: a card is worth keeping when it adds this many points to my face-up cards (an
#: average card adds about 7 to a hand it does not match).
GOLF_GAIN = 8


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
        if view.slots:
            return self._golf(view)
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

    def _golf(self, view: PlayerView) -> int:
        legal = view.legal_actions
        up = golf_face_up(view)
        slot = golf_face_down(view)[0]
        if view.phase == "golf_draw":
            top = view.top_discard
            if DRAW_STOCK not in legal or top is not None and _gain(up, top) >= GOLF_GAIN:
                return DRAW_DISCARD
            return DRAW_STOCK
        if TURN_UP + slot in legal and _gain(up, view.drawn_card) < GOLF_GAIN:  # type: ignore[arg-type]
            return TURN_UP + slot
        return PLACE_SLOT + slot

    def explain(self, view: PlayerView) -> str:
        from scat_env import action_str

        table = value_table(view.rules)
        action = self.act(view)
        if view.slots:
            return f"{action_str(action)}: keep a card that adds {GOLF_GAIN}+ to my face-up cards"
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


def _gain(up: list[int], card: int) -> float:
    """Golf: the points ``card`` adds to my face-up cards (by suit or by rank)."""
    golf = _GOLF_RULES
    return value_of([*up, card], golf) - (value_of(up, golf) if up else 0.0)


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


_GOLF_RULES = Rules.preset("golf")


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
