"""The PettingZoo AEC environment: PettingZoo's own checks plus the contract of aec_env.py's
docstring (seeding, stacked decks, illegal moves, masks, infos, rewards, the turn cap)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from conftest import stack
from pettingzoo.test import api_test, render_test, seed_test

import scat_env
from scat_env import PRESETS, card_str, parse_card
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK
from scat_env.showdown import RULES

CYCLES = 60


@pytest.fixture(autouse=True)
def _quiet_pettingzoo_warnings():
    # api_test warns about Dict observation spaces and an unknown reset option it passes on
    # purpose; those are expected for an env with action masks.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize("n", [2, 3, 6, 10])
def test_pettingzoo_api_seed_and_render(n):
    api_test(scat_env.env(num_players=n), num_cycles=CYCLES)
    seed_test(lambda: scat_env.env(num_players=n), num_cycles=CYCLES)
    render_test(lambda render_mode=None: scat_env.env(num_players=n, render_mode=render_mode))


@pytest.mark.parametrize("n", [2, 3, 6, 10])
@pytest.mark.parametrize("preset", [p for p in PRESETS if p != "standard"])
def test_pettingzoo_api_for_every_preset(preset, n):
    api_test(scat_env.env(num_players=n, rules=preset), num_cycles=CYCLES)
    seed_test(lambda: scat_env.env(num_players=n, rules=preset), num_cycles=CYCLES)
    render_test(lambda render_mode=None: scat_env.env(num_players=n, rules=preset,
                                                       render_mode=render_mode))


def test_api_with_hand_rewards_and_raw_env():
    api_test(scat_env.env(num_players=4, reward="hand"), num_cycles=CYCLES)
    api_test(scat_env.raw_env(num_players=3), num_cycles=CYCLES)


# -- seeding ---------------------------------------------------------------------------------


def record(env, seed: int, steps: int = 400, policy_seed: int = 0) -> list:
    """(agent, observation, mask, action, reward, done) for every step of a seeded run."""
    env.reset(seed=seed)
    rng = random.Random(policy_seed)
    out = []
    for agent in env.agent_iter(max_iter=steps):
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), action,
                    reward, term, trunc, info.get("lives")))
        env.step(action)
    return out


def test_seeded_resets_replay_identically():
    env = scat_env.env(num_players=4)
    first = record(env, seed=123)
    second = record(env, seed=123)
    other_instance = record(scat_env.env(num_players=4), seed=123)
    assert first == second == other_instance
    assert record(env, seed=124) != first


# -- stacked decks (reset options) -------------------------------------------------------------


def test_reset_deals_a_stacked_deck_exactly():
    deck = [card_str(c) for c in reversed(range(52))]  # AS, KS, QS, ... top first
    env = scat_env.env(num_players=3)
    env.reset(options={"deck": deck, "dealer": 1})
    order = [2, 0, 1]  # the dealer's left receives deck[0]
    for i, seat in enumerate(order):
        expected = sorted(parse_card(deck[i + 3 * r]) for r in range(3))
        assert list(env.unwrapped.view(seat).hand) == expected
    view = env.unwrapped.view("player_2")
    assert view.top_discard == parse_card(deck[9]) and view.dealer == 1
    assert env.agent_selection == "player_2" and view.stock_size == 42
    env.step(DRAW_STOCK)
    assert env.unwrapped.view("player_2").drawn_card == parse_card(deck[10])


@pytest.mark.parametrize(
    "deck,message",
    [
        ([card_str(c) for c in range(51)], "expected 52 cards, got 51"),
        ([card_str(c) for c in range(51)] + ["2C"], "duplicate card"),
        (["ZZ"] + [card_str(c) for c in range(1, 52)], "bad deck: not a card: 'ZZ'"),
        ("2C 3C", "expected 52 cards, got 2"),
    ],
)
def test_bad_decks_are_refused_with_a_clear_message(deck, message):
    env = scat_env.env(num_players=3)
    with pytest.raises(ValueError, match=message):
        env.reset(options={"deck": deck})


def test_bad_dealer_is_refused():
    with pytest.raises(ValueError, match="dealer must be a seat 0..2"):
        scat_env.env(num_players=3).reset(options={"dealer": 5})


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="num_players"):
        scat_env.env(num_players=11)
    with pytest.raises(ValueError, match="reward"):
        scat_env.env(reward="lives")
    with pytest.raises(ValueError, match="single_hand"):
        scat_env.env(single_hand=True)  # needs reward="hand"
    with pytest.raises(ValueError, match="max_turns"):
        scat_env.env(max_turns=0)
    with pytest.raises(ValueError, match="unknown rules preset"):
        scat_env.env(rules="nope")


# -- illegal actions ---------------------------------------------------------------------------


def test_raw_env_raises_on_an_illegal_action_naming_it_and_the_legal_ones():
    env = scat_env.raw_env(num_players=3)
    env.reset(seed=1)
    agent = env.agent_selection
    with pytest.raises(ValueError) as err:
        env.step(parse_card("2C") if parse_card("2C") not in env.unwrapped.view(agent).hand
                 else parse_card("3C"))
    text = str(err.value)
    assert agent in text and "illegal action" in text and "discard" in text
    assert "legal: 52 (draw from the stock), 53 (take the top discard), 54 (knock)" in text


@pytest.mark.parametrize("bad", [KNOCK, 99, -3, "knock", 1.5])
def test_env_ends_the_game_on_an_illegal_action(bad):
    env = scat_env.env(num_players=3)
    env.reset(seed=2)
    env.step(KNOCK)  # legal: the next player may not knock again
    offender = env.agent_selection
    with pytest.warns(UserWarning, match="Illegal move"):
        env.step(bad)
    assert all(env.terminations.values())
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        assert term or trunc
        totals[agent] += reward
        env.step(None)
    assert totals == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}


# -- masks and infos ---------------------------------------------------------------------------


def test_mask_is_the_legal_set_for_the_mover_and_zeros_for_everyone_else():
    env = scat_env.env(num_players=4)
    env.reset(seed=5)
    rng = random.Random(5)
    for _ in range(300):
        if not env.agents:
            break
        mover = env.agent_selection
        if env.terminations[mover] or env.truncations[mover]:
            env.step(None)
            continue
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            if agent == mover:
                legal = env.unwrapped.view(agent).legal_actions
                assert list(np.flatnonzero(mask)) == list(legal) and legal
            else:
                assert not mask.any()
        legal = np.flatnonzero(env.observe(mover)["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))


def test_infos_carry_lives_and_a_result_after_every_hand_ending_step():
    env = scat_env.env(num_players=3)
    env.reset(seed=11)
    assert all(env.infos[a]["lives"] == 4 for a in env.agents)
    state = env.unwrapped._state
    rng = random.Random(0)
    seen, hands_checked = len(state.results), 0
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
        if len(state.results) > seen:
            new = state.results[seen:]
            for a in env.agents:
                info = env.infos[a]
                assert info["hand_result"]["reason"] == new[0].reason
                assert info["hand_result"] == new[0].to_dict()  # seats named player_<i>
                assert info["hand_result"]["rule"] in RULES
                assert [r["hand_number"] for r in info["hand_results"]] == [
                    r.hand_number for r in new]
                assert info["lives"] == state.lives[env.unwrapped.agent_name_mapping[a]]
            seen, hands_checked = len(state.results), hands_checked + 1
        else:
            assert all("hand_result" not in env.infos[a] for a in env.agents)
    assert hands_checked >= 3


def test_dealt_31_during_reset_is_reported_and_paid_at_the_first_step():
    deck = stack(["KH 8H 5H", "AH JH QH", "AC 6S 4S"], "2D", dealer=2)
    env = scat_env.env(num_players=3, reward="hand")
    env.reset(options={"deck": deck, "dealer": 2})
    info = env.infos["player_0"]
    assert info["hand_result"]["reason"] == info["hand_result"]["rule"] == "dealt_thirty_one"
    assert info["hand_result"]["lives_lost"] == {"player_0": 1, "player_1": 0, "player_2": 1}
    assert info["lives"] == 3
    mover = env.agent_selection
    env.step(DRAW_STOCK)
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": -1.0}
    assert "hand_result" not in env.infos[mover]


# -- rewards ---------------------------------------------------------------------------------------


def play_out(env, seed: int) -> dict[str, float]:
    """Total reward each agent collects over one random episode, the PettingZoo way."""
    env.reset(seed=seed)
    rng = random.Random(seed)
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter(max_iter=20_000):
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
    assert not env.agents
    return totals


@pytest.mark.parametrize("n,seed", [(2, 0), (3, 1), (5, 2)])
def test_game_rewards_are_zero_sum_winner_plus_one(n, seed):
    env = scat_env.env(num_players=n)
    totals = play_out(env, seed)
    state = env.unwrapped._state
    assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)
    assert totals[f"player_{state.winner}"] == pytest.approx(1.0)
    for s in range(n):
        if s != state.winner:
            assert totals[f"player_{s}"] == pytest.approx(-1.0 / (n - 1))


def test_hand_rewards_are_minus_lives_lost():
    env = scat_env.env(num_players=3, reward="hand")
    totals = play_out(env, 4)
    results = env.unwrapped._state.results
    for s in range(3):
        lost = sum(r.lives_lost.get(s, 0) for r in results)
        assert totals[f"player_{s}"] == -lost
    assert sum(totals.values()) < 0


def test_single_hand_ends_the_episode_after_one_hand():
    env = scat_env.env(num_players=3, reward="hand", single_hand=True)
    totals = play_out(env, 9)
    results = env.unwrapped._state.results
    assert len(results) == 1
    assert totals == {f"player_{s}": -float(n) for s, n in results[0].lives_lost.items()}


def test_turn_cap_truncates_two_players_who_keep_swapping_discards():
    deck = stack(["2C 3D 4H", "5S 6C 7D"], "8H", dealer=1)
    env = scat_env.env(num_players=2, max_turns=20)
    env.reset(options={"deck": deck, "dealer": 1})
    steps = 0
    while not any(env.truncations.values()):
        env.step(DRAW_DISCARD)
        taken = env.unwrapped.view(env.agent_selection).taken_card
        env.step(next(a for a in env.unwrapped.view(env.agent_selection).legal_actions
                      if a != taken))
        steps += 1
    assert steps == 20 and env.unwrapped._state.turn == 20
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert not env.unwrapped._state.results  # the hand never ended
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        _, reward, _, trunc, info = env.last()
        assert trunc and info["truncated_by"] == "max_turns"
        totals[agent] += reward
        env.step(None)
    assert totals == {"player_0": 0.0, "player_1": 0.0}


def test_state_matches_the_state_space():
    env = scat_env.env(num_players=3)
    env.reset(seed=0)
    st = env.state()
    assert st.shape == env.unwrapped.state_space.shape and st.dtype == np.float32
    assert env.unwrapped.state_space.contains(st)
