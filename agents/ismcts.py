"""``ismcts:N``: determinised flat Monte-Carlo search, the strongest slow baseline.

For each decision it samples ``N`` *determinisations* of what it cannot see: the
opponents' unknown cards and the stock order, drawn uniformly from the unseen cards
(:func:`agents.knowledge.unseen_cards`: cards in my hand, in the discard pile or known to
be held by an opponent are never dealt again). Each determinisation becomes a full
:class:`~scat_env.GameState`; every legal action is tried on it (the same sample for every
action: common random numbers, so differences come from the action, not the luck), and the
rest of the *hand* is played out by a fast greedy rollout policy. The action with the best
mean outcome wins, scored as ``mean lives the opponents lose - lives I lose`` (minus one
more if the hand would knock me out).

This is flat Monte-Carlo over determinisations (Perfect-Information Monte-Carlo), the
robust core of ISMCTS in games where the next decision matters most. It samples hidden
cards uniformly (no inference from opponents' discards), a known limitation.

Spec: ``ismcts`` (N = :data:`DEFAULT_BUDGET`) or ``ismcts:N``, N >= 1.
"""

from __future__ import annotations

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, GameState, PlayerView, action_str
from scat_env.engine import PHASE_DISCARD

from .base import Agent
from .knowledge import opponents, unseen_cards
from .registry import register

DEFAULT_BUDGET = 100
#: Knock threshold of the rollout policy: greedy's, a touch higher when a knock must win.
ROLLOUT_KNOCK = 25
ROLLOUT_KNOCK_GIN = 28
MAX_ROLLOUT_STEPS = 400


def determinise(view: PlayerView, rng) -> GameState:  # noqa: ANN001 - random.Random
    """A full game state consistent with ``view``: hidden cards dealt at random."""
    n = view.num_players
    pool = unseen_cards(view)
    rng.shuffle(pool)
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[view.seat] = list(view.hand)
    pos = 0
    for s in opponents(view):
        cards = list(view.known_cards[s])
        need = 3 - len(cards)
        cards.extend(pool[pos:pos + need])
        pos += need
        hands[s] = cards
    return GameState.from_parts(
        view.rules,
        hands=hands,
        stock=pool[pos:],
        discard=view.discard_pile,
        lives=view.lives,
        dealer=view.dealer,
        current_player=view.seat,
        phase="discard" if view.phase == "discard" else "draw",
        knocker=view.knocker,
        turn=view.turn,
        hand_number=view.hand_number,
        known=view.known_cards,
        log=view.log,
        taken=view.taken_card,
        drawn=view.drawn_card,
        single_hand=True,
    )


def copy_state(state: GameState) -> GameState:
    """An independent copy of a mid-hand state (the engine's cheap clone)."""
    return state.clone()


def rollout(state: GameState, knock_at: float) -> None:
    """Play the hand out with greedy draws/discards and a fixed knock threshold."""
    t = state._table
    steps = 0
    while state.phase <= PHASE_DISCARD and steps < MAX_ROLLOUT_STEPS:
        steps += 1
        hand = state.hands[state.current_player]
        if state.phase == PHASE_DISCARD:
            taken = state.taken
            best_v, best_d = -1.0, -1
            for d in hand:
                if d == taken:
                    continue
                a, b, c = (x for x in hand if x != d)
                v = t[a * 2704 + b * 52 + c]
                if v > best_v:
                    best_v, best_d = v, d
            state.apply_action(best_d)
            continue
        a, b, c = hand
        value = t[a * 2704 + b * 52 + c]
        if value >= knock_at and state.knocker < 0 and state.is_legal(KNOCK):
            state.apply_action(KNOCK)
            continue
        if state.discard:
            top = state.discard[-1]
            if max(t[top * 2704 + b * 52 + c], t[a * 2704 + top * 52 + c],
                   t[a * 2704 + b * 52 + top]) > value:
                state.apply_action(DRAW_DISCARD)
                continue
        state.apply_action(DRAW_STOCK if state.stock else END_PLAY)


class ISMCTSAgent(Agent):
    """Determinised Monte-Carlo search over the current decision with greedy rollouts.

    Strategy: sample ``budget`` worlds consistent with what I know, try every legal action
    in each, play the hand out greedily and keep the action with the best average change
    in lives (mine against the opponents'). Deterministic for a given seed.
    """

    def __init__(self, budget: int = DEFAULT_BUDGET, seed: int | None = None) -> None:
        super().__init__(seed)
        self.budget = budget

    def scores(self, view: PlayerView) -> dict[int, float]:
        """Mean outcome of each legal action over ``budget`` determinisations."""
        legal = list(view.legal_actions)
        totals = dict.fromkeys(legal, 0.0)
        me = view.seat
        knock_at = ROLLOUT_KNOCK_GIN if view.rules.knock_mode == "gin" else ROLLOUT_KNOCK
        for _ in range(self.budget):
            world = determinise(view, self.rng)
            for action in legal:
                state = copy_state(world)
                state.apply_action(action)
                rollout(state, knock_at)
                totals[action] += self._utility(state, me)
        return {a: v / self.budget for a, v in totals.items()}

    @staticmethod
    def _utility(state: GameState, me: int) -> float:
        if not state.results:
            return 0.0
        result = state.results[-1]
        lost = result.lives_lost
        others = [lost[s] for s in lost if s != me]
        u = (sum(others) / len(others) if others else 0.0) - lost.get(me, 0)
        if me in result.eliminated:
            u -= 1.0
        return u

    def act(self, view: PlayerView) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        scores = self.scores(view)
        # Ties: prefer the quiet, common actions (draw, then discards in card order).
        order = {DRAW_STOCK: 0, DRAW_DISCARD: 1, END_PLAY: 2, KNOCK: 3}
        return max(legal, key=lambda a: (scores[a], -order.get(a, 4 + a)))

    def explain(self, view: PlayerView) -> str:
        legal = view.legal_actions
        if len(legal) == 1:
            return f"{action_str(legal[0], True)}: the only legal action"
        scores = self.scores(view)
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])
        best = ranked[0]
        others = ", ".join(f"{action_str(a, True)} {s:+.2f}" for a, s in ranked[1:3])
        return (f"{action_str(best[0], True)}: {best[1]:+.2f} lives per hand over "
                f"{self.budget} sampled deals (next: {others})")


def parse_budget(arg: str | None) -> int:
    if arg is None or arg == "":
        return DEFAULT_BUDGET
    try:
        n = int(arg)
    except ValueError:
        raise ValueError(
            f"ismcts:{arg}: the budget must be a positive integer (determinisations per "
            "decision)") from None
    if n < 1:
        raise ValueError(f"ismcts:{arg}: the budget must be at least 1, got {n}")
    return n


def _make(arg: str | None, seed: int | None) -> Agent:
    return ISMCTSAgent(parse_budget(arg), seed)


register("ismcts", _make,
         f"determinised Monte-Carlo search, greedy rollouts (ismcts:N, default {DEFAULT_BUDGET})")
