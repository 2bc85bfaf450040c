"""What a scored hand pays (scat_env.rewards): the game and hand rewards, the win-chance
potential and its property that the shaped rewards of a game add up to the game's result,
and that the env and both trainers pay through the same function."""

from __future__ import annotations

import itertools
import random

import pytest

from agents.match import play_game
from agents.registry import make_agent
from scat_env import GameState, Rules
from scat_env.rewards import (
    REWARD_MODES,
    expected_result,
    hand_rewards,
    hand_shaping,
    win_chance,
    win_chance_shaping,
)


@pytest.mark.parametrize("n", [2, 3, 4, 6, 10])
def test_equal_lives_give_everyone_the_fair_share(n):
    for lives in (1, 4):
        assert win_chance([lives] * n, [True] * n, 0) == pytest.approx(1 / n)
        assert expected_result(0, (lives,) * n, n) == pytest.approx(0.0)


def test_the_players_win_chances_add_up_to_one():
    rng = random.Random(0)
    for _ in range(200):
        lives = [rng.randint(0, 4) for _ in range(rng.randint(2, 7))]
        if sum(v > 0 for v in lives) < 1:
            continue
        active = [v > 0 for v in lives]
        total = sum(win_chance(lives, active, s) for s in range(len(lives)))
        assert total == pytest.approx(1.0)


def test_a_lost_life_never_raises_my_chance_and_an_opponents_never_lowers_it():
    for mine, a, b in itertools.product(range(1, 5), range(1, 5), range(1, 5)):
        now = expected_result(0, (mine, a, b), 3)
        assert expected_result(0, (mine - 1, a, b), 3) <= now
        assert expected_result(0, (mine, a - 1, b), 3) >= now


@pytest.mark.parametrize("n", [2, 3, 5])
def test_win_chance_shaping_adds_up_to_the_game_result(n):
    """Potential-based shaping telescopes: a game's shaped rewards sum to coef times (result
    minus the starting potential, 0 at equal lives), whatever happened on the way
    (knocks paying 2, 31s, dealt 31s, replays)."""
    coef = 0.7
    rules = Rules()
    for seed in range(6):
        agents = [make_agent(spec, seed=s) for s, spec in
                  enumerate(["greedy", "random", "expert", "greedy", "random"][:n])]
        record = play_game(agents, rules, seed=seed)
        assert not record.truncated
        total = [0.0] * n
        for result in record.results:
            for s, r in win_chance_shaping(result, n, coef).items():
                total[s] += r
        for s in range(n):
            result = 1.0 if s == record.winner else -1.0 / (n - 1)
            assert total[s] == pytest.approx(coef * result)


def _random_games(n, seeds, rules=None):
    """Finished games of random legal play (GameState alone)."""
    for seed in seeds:
        state = GameState(n, rules, seed=seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
        yield state


@pytest.mark.parametrize("n", [2, 3, 6])
def test_game_rewards_pay_each_loser_once_and_the_winner_at_the_end(n):
    """reward="game": every eliminated seat gets -1/(n-1) at the hand that put it out, the
    winner +1 at the last hand; a game sums to zero and matches GameState.returns()."""
    for state in _random_games(n, range(8)):
        total = [0.0] * n
        for i, res in enumerate(state.results):
            paid = hand_rewards(res, n)
            assert set(paid) <= set(res.eliminated) | {state.winner}
            if i < len(state.results) - 1:
                assert state.winner not in paid
            for s, r in paid.items():
                total[s] += r
        assert total == pytest.approx(state.returns())
        assert sum(total) == pytest.approx(0.0)


def test_hand_rewards_are_minus_the_lives_lost_plus_the_shaping():
    for state in _random_games(3, range(4), Rules.preset("cadillac")):
        for res in state.results:
            plain = hand_rewards(res, 3, reward="hand")
            assert plain == {s: -float(v) for s, v in res.lives_lost.items() if v}
            shaped = hand_rewards(res, 3, reward="hand", shaping="lives", shaping_coef=0.5)
            extra = hand_shaping(res.lives_lost, 0.5)
            for s in res.lives_lost:
                assert shaped.get(s, 0.0) == pytest.approx(plain.get(s, 0.0) + extra[s])


def test_hand_rewards_refuse_unknown_modes():
    res = next(iter(_random_games(2, [0]))).results[0]
    assert REWARD_MODES == ("game", "hand")
    with pytest.raises(ValueError, match="reward must be one of"):
        hand_rewards(res, 2, reward="lives")
    with pytest.raises(ValueError, match="shaping must be one of"):
        hand_rewards(res, 2, shaping="potential", shaping_coef=0.1)






def test_the_single_agent_env_pays_the_same_win_chance_shaping():
    """The SB3 path's env: an episode's rewards add up to (1 + coef) times the result."""
    from training.single_agent import ScatSingleAgentEnv

    coef = 0.5
    env = ScatSingleAgentEnv(3, opponents={"greedy": 1.0}, hand_reward=coef, shaping="win_chance")
    rng = random.Random(0)
    for episode in range(4):
        env.reset(seed=episode)
        total, done = 0.0, False
        while not done:
            legal = [a for a, ok in enumerate(env.action_masks()) if ok]
            _, reward, terminated, truncated, _ = env.step(rng.choice(legal))
            total += reward
            done = terminated or truncated
        assert not truncated
        assert min(abs(total - (1 + coef)), abs(total + (1 + coef) / 2)) < 1e-9
    with pytest.raises(ValueError, match="shaping must be one of"):
        ScatSingleAgentEnv(3, shaping="potential")


def test_an_unknown_shaping_is_one_clear_error():
    from training.config import SB3Config

    with pytest.raises(ValueError, match="shaping must be one of lives, win_chance, got 'x'"):
        SB3Config(shaping="x")
