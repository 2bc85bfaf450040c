"""``ismcts:N``: determinised Monte-Carlo search, the strongest slow baseline.

Each decision is searched over ``N`` *determinisations* (sampled worlds) of what it cannot
see: the opponents' unknown cards and the stock order.

- **Worlds consistent with the view, weighted by what the opponents did.** Hidden cards are
  dealt from the unseen cards (:func:`agents.knowledge.unseen_cards`). An opponent's hand is
  not three random cards but what it *kept*: its stock draws are replayed as a greedy
  drawer would play them (uniform deals make opponents far too weak, and the search then
  knocks far too early). The world is then accepted with a likelihood of the opponents'
  public behaviour (rejection sampling): a world in which an opponent passed on a discard
  that would have improved its hand a lot, a knocker holds a weak hand, or a player who
  could have knocked on a strong hand did not, is unlikely.
- **Common random numbers.** Every candidate action is tried in the same world, so the
  comparison between actions is not drowned by the luck of the deal.
- **Expert-like rollouts.** The rest of the hand is played by a fast version of the expert
  (:class:`RolloutPolicy`): draws and discards by ``value + beta * (potential - value)``
  and knocks at the value where the expert's risk model says a knock is safe enough.
- **Effort on the actions that matter.** Every quarter of the budget, candidates whose
  paired mean is clearly behind the best (by :data:`PRUNE_SE` standard errors) are dropped,
  so the remaining worlds go to the close calls (successive elimination, the bandit view of
  UCB). Discards start from the expert's two best.
- **A utility that values the game.** A hand's outcome is scored as the change in my
  estimated chance of winning the game (:func:`scat_env.rewards.win_chance`, a model in
  which each hand costs one random active player a life), so a life matters more when few
  are left.

The search starts from the expert's choice and leaves it only on evidence (a paired
z-score above :data:`SWITCH_Z`). Its cost grows with N; ``scat bench agents --agent
ismcts:200 --opponents expert`` measures it on the machine at hand.

Spec: ``ismcts`` (N = :data:`DEFAULT_BUDGET`) or ``ismcts:N``, N >= 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scat_env import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, GameState, PlayerView, action_str
from scat_env.actions import DECLARE, PASS
from scat_env.cards import CARD_SUIT
from scat_env.engine import Phase
from scat_env.rewards import win_chance

from . import base
from .base import Agent
from .expert import ExpertAgent, ExpertParams, knock_risk
from .knowledge import MAX_DRAWS, hand_model, opponents, unseen_cards, value3
from .registry import register

DEFAULT_BUDGET = 100
MAX_ROLLOUT_STEPS = 400
#: Drop a candidate when its paired mean trails the best by this many standard errors.
PRUNE_SE = 2.5  # z of (proposal - candidate)
#: The search leaves the expert's choice only for an action better by this many standard
#: errors (paired over the same worlds). 1 rather than 2: against ``expert`` at two players
#: the bolder search won more games (``scat tournament --agents ismcts:200,expert``).
SWITCH_Z = 1.0
#: Most stock draws of an opponent replayed when dealing its unknown cards.
MAX_REPLAY = 8
#: Tries per sampled world in rejection sampling (the last try is kept regardless).
MAX_TRIES = 6


# -- rollout policy ---------------------------------------------------------------------
class RolloutPolicy:
    """A fast expert for playouts on a full :class:`GameState` (no views, no numpy)."""

    def __init__(self, rules, num_opponents: int, params: ExpertParams) -> None:  # noqa: ANN001
        model = hand_model(rules)
        self.table = model.value
        self.ev = [v + params.beta * (p - v) for v, p in zip(model.value, model.potential, strict=True)]
        self.knock_at = [_knock_threshold(model, rules, num_opponents, k, params)
                         for k in range(MAX_DRAWS + 1)]

    def play_out(self, state: GameState) -> None:
        """Play the current hand to its end (the state is single-hand)."""
        t, ev, knock_at = self.table, self.ev, self.knock_at
        draw, discard = Phase.DRAW, Phase.DISCARD
        # The calls of the variations, as the expert makes them in play: a 31 is declared,
        # a showdown of unseen cards is passed.
        calls = {Phase.DECLARE: DECLARE, Phase.BLIND: PASS, Phase.SUDDEN_DEATH: PASS}
        steps = 0
        while steps < MAX_ROLLOUT_STEPS:
            steps += 1
            phase = state.phase
            if phase is not draw and phase is not discard:
                call = calls.get(phase)
                if call is None:
                    break  # the hand (or the game) is over
                state.apply_action(call)
                continue
            hand = state.hands[state.current_player]
            final = state.knocker is not None
            if phase is discard:
                e = t if final else ev
                taken = state.taken
                best_v, best_d = -1.0, -1
                for d in hand:
                    if d == taken:
                        continue
                    a, b, c = (x for x in hand if x != d)
                    v = e[a * 2704 + b * 52 + c]
                    if v > best_v:
                        best_v, best_d = v, d
                state.apply_action(best_d)
                continue
            a, b, c = hand
            value = t[a * 2704 + b * 52 + c]
            if not final:
                draws = state.turn // max(1, sum(state.active))
                if value >= knock_at[min(draws, MAX_DRAWS)] and state.is_legal(KNOCK):
                    state.apply_action(KNOCK)
                    continue
            if state.discard:
                top = state.discard[-1]
                e = t if (final or not state.stock) else ev
                take = max(e[top * 2704 + b * 52 + c], e[a * 2704 + top * 52 + c],
                           e[a * 2704 + b * 52 + top])
                if take > e[a * 2704 + b * 52 + c] + (0.0 if e is t else 1.0):
                    state.apply_action(DRAW_DISCARD)
                    continue
            state.apply_action(DRAW_STOCK if state.stock else END_PLAY)


def _knock_threshold(model, rules, m: int, k: int, params: ExpertParams) -> float:  # noqa: ANN001
    """Lowest value the expert's risk model would knock with, ``k`` draws into the hand."""
    if m == 0:
        return 0.0
    lt, le = model.value_dist(k + 1, k - 1, params.quiet_cap, 0.0)
    for b in range(len(le)):
        if rules.knock_mode == "gin":
            if le[b] ** m >= params.gin_win:
                return b / 2
            continue
        p_sole = (1.0 - le[b]) ** m
        if knock_risk(rules, p_sole, (1.0 - lt[b]) ** m) <= params.risk / m:
            return b / 2
    return 99.0


# -- sampling worlds --------------------------------------------------------------------
def determinise(view: PlayerView, rng, weighted: bool = True) -> GameState:  # noqa: ANN001
    """A full game state consistent with ``view``; with ``weighted``, hidden cards that
    contradict the opponents' public play are rejected with high probability. Golf's
    worlds are :func:`determinise_golf`'s."""
    if view.rules.play == "golf":
        return determinise_golf(view, rng)
    pool = unseen_cards(view)
    opps = opponents(view)
    table = hand_model(view.rules).value
    stock_draws = [0] * view.num_players
    for seat, kind, _ in view.log:
        if kind == "draw_stock":
            stock_draws[seat] += 1
    for attempt in range(MAX_TRIES):
        rng.shuffle(pool)
        hands: list[list[int]] = [[] for _ in range(view.num_players)]
        hands[view.seat] = list(view.hand)
        pos = 0
        passed: list[int] = []
        for s in opps:  # every unknown card first: the replays below must not starve them
            cards = list(view.known_cards[s])
            cards.extend(pool[pos:pos + 3 - len(cards)])
            pos += 3 - len(view.known_cards[s])
            hands[s] = cards
        for s in opps:
            cards = hands[s]
            fixed = len(view.known_cards[s])
            if weighted and fixed < 3:
                # Its unknown cards are what it kept from every card it drew: replay its
                # stock draws as a greedy drawer would (the cards it passed on go back).
                for _ in range(min(stock_draws[s], MAX_REPLAY)):
                    if pos >= len(pool):
                        break
                    u = pool[pos]
                    pos += 1
                    best, slot = value3(cards, table), -1
                    for i in range(fixed, 3):
                        trial = cards[:]
                        trial[i] = u
                        v = value3(trial, table)
                        if v > best:
                            best, slot = v, i
                    if slot >= 0:
                        passed.append(cards[slot])
                        cards[slot] = u
                    else:
                        passed.append(u)
        if not weighted or attempt == MAX_TRIES - 1:
            break
        if rng.random() < _likelihood(view, hands, opps, table):
            break
    stock = pool[pos:]
    if passed:
        stock.extend(passed)
        rng.shuffle(stock)
    return _world(view, hands, stock, view.known_cards,
                  phase="discard" if view.phase == "discard" else "draw", knocker=view.knocker)


def _world(view: PlayerView, hands: list[list[int]], stock: list[int],
           known: Sequence[Sequence[int]], **parts: Any) -> GameState:
    """The one-hand state of ``view``'s table with these hands, stock and known cards:
    every other part (the pile, the lives, the seats, the turn, the record) as the view
    shows it."""
    return GameState.from_parts(
        view.rules, hands=hands, stock=stock, discard=view.discard_pile, lives=view.lives,
        dealer=view.dealer, current_player=view.seat, turn=view.turn,
        hand_number=view.hand_number, known=known, log=view.log, taken=view.taken_card,
        drawn=view.drawn_card, single_hand=True, **parts)


def determinise_golf(view: PlayerView, rng) -> GameState:  # noqa: ANN001
    """A golf state consistent with ``view``: every unseen card dealt at random to the
    face-down slots (everyone's, mine too) and the stock. Uniform is exact here, not an
    approximation: nobody has seen a face-down card, its owner included, and every choice
    a player made was made without seeing them (002, decision (w)), so the public play
    tells nothing of where the unseen cards lie."""
    pool = unseen_cards(view)
    rng.shuffle(pool)
    hands: list[list[int]] = []
    face_up: list[int] = []
    pos = 0
    for seat, slots in enumerate(view.slots):
        cards, up = [], 0
        for i, card in enumerate(slots):
            if card is None:
                cards.append(pool[pos])
                pos += 1
            else:
                cards.append(card)
                up |= 1 << i
        if seat == view.seat and view.drawn_card is not None:
            cards.append(view.drawn_card)  # held after the three slots until placed
        hands.append(cards)
        face_up.append(up)
    # what each seat is known to hold: its face-up cards, and a card taken from the pile
    known = [list(cards) for cards in view.known_cards]
    known[view.seat] = [c for c in view.slots[view.seat] if c is not None]
    if view.taken_card is not None:
        known[view.seat].append(view.taken_card)
    return _world(view, hands, pool[pos:], known, phase=view.phase, face_up=face_up)


def _likelihood(view: PlayerView, hands: list[list[int]], opps: list[int], table: list[float]) -> float:
    """How well a world explains the opponents' public play (1 = fully, lower = unlikely).

    Uses each opponent's *current* hand in the world as a proxy for its hand at the time:
    - it drew from the stock although the top discard would now give it 5+ more points;
    - it knocked but holds less than 21 (a knocker rarely bluffs that low);
    - it did not knock in its last turn although it holds 27+ (the expert's quiet cap) (few players wait on that).
    """
    w = 1.0
    log = view.log
    top = None
    last_turn: dict[int, int] = {}
    for i, (seat, kind, card) in enumerate(log):
        if kind == "discard":
            top = card
        elif kind == "take":
            top = None
        elif kind == "draw_stock" and seat in opps and top is not None:
            h = hands[seat]
            if top not in h and CARD_SUIT[top] == _main_suit(h):
                a, b, c = h
                now = table[a * 2704 + b * 52 + c]
                best = max(table[top * 2704 + b * 52 + c], table[a * 2704 + top * 52 + c],
                           table[a * 2704 + b * 52 + top])
                if best >= now + 5:
                    w *= 0.5
        if kind in ("draw_stock", "take", "knock"):
            last_turn[seat] = i
    for s in opps:
        h = hands[s]
        v = value3(h, table)
        if view.knocker == s:
            if v < 21:
                w *= 0.3
        elif s in last_turn and v >= 27 and view.knocker is None:
            w *= 0.4
    return w


def _main_suit(hand: list[int]) -> int:
    counts = [0, 0, 0, 0]
    for c in hand:
        counts[CARD_SUIT[c]] += 1
    return counts.index(max(counts))


# -- the agent --------------------------------------------------------------------------
class ISMCTSAgent(Agent):
    """Determinised Monte-Carlo search with expert-like rollouts, started from the expert.

    Strategy: the expert proposes; ``budget`` sampled worlds (weighted by the opponents'
    play) test the proposal against the alternatives with common random numbers, weak
    alternatives are dropped as evidence comes in, and the proposal is replaced only by an
    action that is better in win chance. Deterministic for a given seed.
    """

    def __init__(self, budget: int = DEFAULT_BUDGET, seed: int | None = None) -> None:
        super().__init__(seed)
        self.budget = budget
        self.expert = ExpertAgent()
        self._policies: dict[tuple, RolloutPolicy] = {}

    def _policy(self, view: PlayerView) -> RolloutPolicy:
        m = len(opponents(view))
        key = (view.rules.scoring_key, view.rules.knock_mode, view.rules.knocker_tie,
               view.rules.knocker_loss, m)
        pol = self._policies.get(key)
        if pol is None:
            pol = _POLICIES.get(key)
            if pol is None:
                pol = RolloutPolicy(view.rules, m, self.expert.params)
                _POLICIES[key] = pol
            self._policies[key] = pol
        return pol

    def candidates(self, view: PlayerView, proposal: int | None = None) -> list[int]:
        """Actions worth searching: every draw-phase action; the two best discards by hand
        worth, plus the expert's proposal."""
        legal = list(view.legal_actions)
        if view.phase != "discard":
            return legal
        ev = self.expert._eval_tables(view, hand_model(view.rules))[0]
        table = hand_model(view.rules).value
        e = table if view.knocker is not None else ev
        scored = []
        for d in legal:
            kept = [x for x in view.hand if x != d]
            scored.append((-value3(kept, e), d))
        scored.sort()
        out = [d for _, d in scored[:2]]
        if proposal is not None and proposal not in out:
            out.append(proposal)
        return out

    def _search(self, view: PlayerView, proposal: int | None) -> tuple[dict[int, float], int, int | None]:
        """(mean outcome per surviving candidate, worlds, the action that beats the
        proposal with evidence or None). Outcomes are paired per world, so each candidate
        is compared with the proposal on the same deals."""
        cands = self.candidates(view, proposal)
        if proposal is None or proposal not in cands:
            proposal = cands[0]
        me = view.seat
        policy = self._policy(view)
        base = win_chance(view.lives, view.active, me)
        outcomes: dict[int, list[float]] = {a: [] for a in cands}
        ref: dict[int, list[float]] = {a: [] for a in cands}  # the proposal on a's worlds
        alive = list(cands)
        check = max(8, self.budget // 4)
        worlds = 0
        for i in range(self.budget):
            if len(alive) == 1:
                break
            world = determinise(view, self.rng)
            worlds += 1
            mine = 0.0
            for action in alive:
                state = world.clone()
                state.apply_action(action)
                policy.play_out(state)
                u = self._utility(state, me) - base
                outcomes[action].append(u)
                if action == proposal:
                    mine = u
            for a in alive:
                ref[a].append(mine)
            if (i + 1) % check == 0 and i + 1 < self.budget:
                alive = [a for a in alive
                         if a == proposal or _z(ref[a], outcomes[a]) < PRUNE_SE]
        means = {a: sum(outcomes[a]) / len(outcomes[a]) for a in alive if outcomes[a]}
        better = [a for a in alive if a != proposal and _z(outcomes[a], ref[a]) > SWITCH_Z]
        switch = max(better, key=lambda a: means[a] - sum(ref[a]) / len(ref[a])) if better else None
        return means, worlds, switch

    @staticmethod
    def _utility(state: GameState, me: int) -> float:
        return win_chance(state.lives, state.active, me)

    def act(self, view: PlayerView) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        if _expert_plays(view):
            return self.expert.act(view)
        proposal = self.expert.act(view)
        switch = self._search(view, proposal)[2]
        return proposal if switch is None else switch

    def explain(self, view: PlayerView) -> str:
        legal = view.legal_actions
        if len(legal) == 1:
            return f"{action_str(legal[0], True)}: the only legal action"
        if _expert_plays(view):
            return self.expert.explain(view)
        proposal = self.expert.act(view)
        means, worlds, switch = self._search(view, proposal)
        if switch is None:
            rest = ", ".join(f"{action_str(a, True)} {means[a] * 100:+.1f}"
                             for a in means if a != proposal)
            return (f"{action_str(proposal, True)}: the expert's choice, not beaten over "
                    f"{worlds} sampled deals (win chance {means.get(proposal, 0) * 100:+.1f}; "
                    f"{rest or 'the rest pruned'})")
        return (f"{action_str(switch, True)}: beats the expert's "
                f"{action_str(proposal, True)} by "
                f"{(means[switch] - means[proposal]) * 100:.1f} points of win chance over "
                f"{worlds} sampled deals")


def _expert_plays(view: PlayerView) -> bool:
    """Decisions the search leaves to the expert: a call before play or a 31 to declare,
    golf (its rollouts play draw and discard) and a points race (its playouts score lives,
    which a points race never takes, so every world would look the same)."""
    return (view.phase != "draw" and view.phase != "discard") or bool(view.points)


def _z(xs: list[float], ys: list[float]) -> float:
    """z-score of the paired mean difference ``xs - ys`` (0 when undecidable)."""
    n = len(xs)
    if n < 4:
        return 0.0
    d = [x - y for x, y in zip(xs, ys, strict=True)]
    mean = sum(d) / n
    var = sum((v - mean) ** 2 for v in d) / (n - 1)
    if var <= 0.0:
        return 0.0 if mean == 0 else math.copysign(1e9, mean)
    return mean / math.sqrt(var / n)


_POLICIES: dict[tuple, RolloutPolicy] = {}


#: The largest search budget a spec may ask for: the cost of a decision grows with the
#: budget (``scat bench agents --agent ismcts:200 --opponents expert --games 10``), and this
#: is already minutes per move; more is a typo, not a stronger player.
MAX_BUDGET = 100_000


def parse_budget(arg: str | None) -> int:
    return base.parse_budget("ismcts", arg, DEFAULT_BUDGET, MAX_BUDGET, "determinisations")


def _make(arg: str | None, seed: int | None) -> Agent:
    return ISMCTSAgent(parse_budget(arg), seed)


register("ismcts", _make,
         "determinised Monte-Carlo search from the expert's choice, expert-like rollouts, "
         f"opponent-weighted deals (ismcts:N, default {DEFAULT_BUDGET})")
