"""The rule-based baselines: legal play everywhere, determinism, no peeking, spec errors,
and the strength ordering random < greedy < expert."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from conftest import hidden_variant, random_midgame

from agents import make_agent
from agents.match import play_game
from scat_env import PRESETS, GameState, Rules, make_view

BASELINES = ["greedy", "threshold:17", "threshold:31", "threshold:never", "expert", "ismcts:2"]


class CheckedAgent:
    """Wraps an agent and fails loudly if it ever answers with an illegal action."""

    def __init__(self, agent):
        self.agent = agent

    def reset(self, seed=None):
        self.agent.reset(seed)

    def check_table(self, num_players, rules):
        self.agent.check_table(num_players, rules)

    def act(self, view):
        action = self.agent.act(view)
        assert action in view.legal_actions, (
            f"{self.agent.spec} chose {action} not in {view.legal_actions} ({view.phase})")
        return action


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_baseline_plays_only_legal_actions_in_every_preset(preset):
    rules = Rules.preset(preset)
    for n in range(2, 7):
        specs = [BASELINES[(n + s) % len(BASELINES)] for s in range(n)]
        agents = [CheckedAgent(make_agent(spec, seed=s)) for s, spec in enumerate(specs)]
        record = play_game(agents, rules, seed=100 * n + len(preset), max_turns=150)
        assert record.decisions > 0


def test_explain_is_one_line_for_every_baseline():
    state = GameState(3, Rules(), seed=7)
    rng = random.Random(0)
    for _ in range(40):
        if state.is_terminal():
            break
        view = make_view(state, state.current_player)
        for spec in BASELINES:
            text = make_agent(spec, seed=1).explain(view)
            assert text and "\n" not in text, (spec, text)
        state.apply_action(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("spec", ["expert", "ismcts:3", "threshold:23"])
def test_same_seed_gives_the_same_game(spec):
    def actions():
        agents = [make_agent(spec, seed=5), make_agent("random", seed=6), make_agent(spec, seed=7)]
        return play_game(agents, Rules(), seed=11, max_turns=120).actions

    assert actions() == actions()


@pytest.mark.parametrize("n", [2, 3, 5])
def test_baselines_never_use_hidden_information(n):
    rng = random.Random(n)
    changed = 0
    for game in range(6):
        state = random_midgame(n, 1000 + game, rng, 1, 60)
        if state is None:
            continue
        other = hidden_variant(state, rng)
        seat = state.current_player
        view, view2 = make_view(state, seat), make_view(other, seat)
        assert view == view2  # the variant really is invisible to the acting seat
        changed += any(a != b for a, b in zip(state.hands, other.hands, strict=True)) or (
            state.stock != other.stock)
        for spec in BASELINES:
            a = make_agent(spec, seed=3).act(view)
            b = make_agent(spec, seed=3).act(view2)
            assert a == b, f"{spec} acted differently on hidden information"
    assert changed >= 3  # the test did exercise different hidden cards


@pytest.mark.parametrize(
    "spec, message",
    [
        ("threshold:abc", "integer"),
        ("threshold:50", "between 17 and 31"),
        ("threshold:16", "between 17 and 31"),
        ("ismcts:-1", "between 1 and"),
        ("ismcts:0", "between 1 and"),
        ("ismcts:many", "positive integer"),
        ("greedy:3", "takes no argument"),
        ("expert:bogus=1", "name=value"),
        ("expert:beta=high", "must be a number"),
    ],
)
def test_bad_agent_specs_raise_a_clear_error(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_threshold_specs_parse():
    assert make_agent("threshold:never").knock_at is None
    assert make_agent("threshold:17").knock_at == 17
    assert make_agent("greedy").knock_at == make_agent("threshold").knock_at


def _win_rate(hero: str, villain: str, players: int, games: int, seed: int) -> float:
    wins = 0
    for g in range(games):
        seat = g % players
        agents = [make_agent(hero if s == seat else villain, seed=g * 10 + s)
                  for s in range(players)]
        wins += play_game(agents, Rules(), seed=seed + g).winner == seat
    return wins / games


def test_greedy_beats_random():
    assert _win_rate("greedy", "random", 2, 60, seed=1) > 0.85


def test_expert_beats_greedy_in_four_players():
    # One expert against three greedy players: the fair share is 0.25.
    assert _win_rate("expert", "greedy", 4, 600, seed=2) > 0.28


@pytest.mark.slow
@pytest.mark.parametrize("players, fair, margin", [(2, 0.5, 0.03), (3, 1 / 3, 0.015), (4, 0.25, 0.02)])
def test_expert_beats_greedy_over_2000_games(players, fair, margin):
    # One expert against greedy players (seat rotating). Margins sit about three standard
    # errors (~0.011) below the measured rates: 3 players 0.382 [0.361, 0.404] here
    # (scripts/eval_baselines.py --players 3 --games 2000: 0.382 [0.360, 0.403]).
    assert _win_rate("expert", "greedy", players, 2000, seed=3) > fair + margin


def test_win_chance_values_a_life_more_when_few_are_left():
    from agents.ismcts import win_chance

    everyone = [True, True]
    assert win_chance([4, 4], everyone, 0) == pytest.approx(0.5)
    assert win_chance([0, 3], [False, True], 0) == 0.0
    drop_high = win_chance([4, 2], everyone, 0) - win_chance([3, 2], everyone, 0)
    drop_low = win_chance([2, 2], everyone, 0) - win_chance([1, 2], everyone, 0)
    assert drop_low > drop_high > 0
    assert sum(win_chance([3, 2, 1], [True] * 3, s) for s in range(3)) == pytest.approx(1.0)


def test_rollout_policy_plays_a_hand_to_its_end_in_every_draw_and_discard_preset():
    """Golf is left to the expert by the search (its rollouts play draw and discard)."""
    from agents.ismcts import RolloutPolicy
    from scat_env.engine import Phase

    for name in sorted(PRESETS):
        rules = Rules.preset(name)
        if rules.play == "golf":
            continue
        for n in (2, 4):
            state = GameState(n, rules, seed=len(name) + n, single_hand=True)
            RolloutPolicy(rules, n - 1, make_agent("expert").params).play_out(state)
            assert state.phase in (Phase.HAND_OVER, Phase.GAME_OVER) and state.results, name


def test_weighted_deals_make_a_weak_knocker_unlikely():
    from agents.ismcts import _likelihood
    from agents.knowledge import hand_model
    from scat_env import KNOCK

    state = GameState(2, Rules(), seed=4, single_hand=True)
    state.apply_action(KNOCK)  # seat to move knocks; the other seat decides next
    view = make_view(state, state.current_player)
    knocker = view.knocker
    table = hand_model(view.rules).value
    hands = [[], []]
    hands[view.seat] = list(view.hand)
    hands[knocker] = [0, 14, 28]  # 2C 3D 4H: 4 points
    weak = _likelihood(view, hands, [knocker], table)
    hands[knocker] = [12, 11, 10]  # AC KC QC: 31 points
    strong = _likelihood(view, hands, [knocker], table)
    assert weak < strong == 1.0


@pytest.mark.parametrize("weighted", [False, True])
def test_determinised_worlds_look_the_same_from_my_seat(weighted):
    from agents.ismcts import determinise

    rng = random.Random(3)
    checked = 0
    for game in range(8):
        state = random_midgame(2 + game % 3, 50 + game, rng, 2, 40)
        if state is None:
            continue
        view = make_view(state, state.current_player)
        world = determinise(view, random.Random(game), weighted=weighted)
        # Everything this seat can see is the same (the previous hand's result is history
        # the world does not need).
        assert make_view(world, view.seat) == dataclasses.replace(view, last_result=None)
        assert sorted([*world.stock, *world.discard, *(c for h in world.hands for c in h)]) == (
            sorted(view.rules.deck_cards))
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("preset,why", [
    ("golf", "add face_down, which it has never read"),
    ("french_canadian", "add points, which it has never read"),
])
def test_a_trained_policy_refuses_a_preset_whose_observation_it_never_read(preset, why):
    """The shipped policies read the draw-and-discard observation of a lives game; the
    points race and golf add pieces after it, so the policy is refused when the table is
    checked, before any move, with a line that says what it lacks."""
    agent = make_agent("compact:scat_batch")
    agent.check_table(3, Rules())
    with pytest.raises(ValueError, match="does not play"):
        agent.check_table(3, Rules.preset(preset))


def test_the_shipped_policy_ranks_the_legal_moves_it_plays_from():
    """A hint shows a trained opponent's likeliest moves: ``compact:`` gives its masked
    logits and explains its top three, and its move is the likeliest of them."""
    from scat_env import GameState, make_view

    agent = make_agent("compact:scat_batch_set", seed=0)
    state = GameState(4, seed=9)
    view = make_view(state, state.current_player)
    logits = agent.logits(view)
    legal = list(view.legal_actions)
    assert set(np.flatnonzero(logits > -1e8)) == set(legal)
    assert agent.act(view) == int(np.argmax(logits))
    assert agent.explain(view).startswith("compact:scat_batch_set: ")
    assert agent.explain(view).count("%") == min(3, len(legal))
