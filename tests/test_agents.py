"""The rule-based baselines: legal play everywhere, determinism, no peeking, spec errors,
and the strength ordering random < greedy < expert."""

from __future__ import annotations

import random

import pytest

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


def _hidden_variant(state: GameState, rng: random.Random) -> GameState:
    """Same public picture, different hidden cards: swap an opponent's unknown card with a
    stock card, then reshuffle the stock."""
    other = state.clone()
    seat = other.current_player
    opps = [s for s in range(other.num_players) if s != seat and other.active[s]]
    rng.shuffle(opps)
    for o in opps:
        unknown = [c for c in other.hands[o] if not other.known[o] >> c & 1]
        if unknown and other.stock:
            c = rng.choice(unknown)
            i = rng.randrange(len(other.stock))
            hand = other.hands[o]
            hand[hand.index(c)], other.stock[i] = other.stock[i], c
            break
    rng.shuffle(other.stock)
    return other


@pytest.mark.parametrize("n", [2, 3, 5])
def test_baselines_never_use_hidden_information(n):
    rng = random.Random(n)
    changed = 0
    for game in range(6):
        state = GameState(n, Rules(), seed=1000 + game)
        for _ in range(rng.randrange(1, 60)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        other = _hidden_variant(state, rng)
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
        ("ismcts:-1", "at least 1"),
        ("ismcts:0", "at least 1"),
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
@pytest.mark.parametrize("players, fair", [(2, 0.5), (3, 1 / 3), (4, 0.25)])
def test_expert_beats_greedy_by_a_clear_margin(players, fair):
    assert _win_rate("expert", "greedy", players, 2000, seed=3) > fair + 0.03
