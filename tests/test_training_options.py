"""Training options of the native trainer: expert-advice inputs, the privileged critic (issue:
"option for a privileged critic that sees all hands during training only (the policy never
does)") and games started from uneven lives."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import torch
from conftest import hidden_variant, random_midgame

from agents.expert import ADVICE_SIZE, ExpertAgent
from agents.match import play_game
from agents.neural.encoding import PaddedEncoder, policy_observation_size
from agents.neural.forward import NumpyPolicy
from agents.registry import make_agent
from scat_env import GameState, Rules
from scat_env.actions import CORE_ACTIONS, NUM_ACTIONS
from scat_env.view import make_view
from training.config import PPOConfig
from training.policy_net import PolicyNet, load_file
from training.ppo import train
from training.rollout import HANDOFF, Runner, encode_privileged, privileged_size

TINY = dict(parallel_games=8, rollout_samples=256, minibatch_samples=256, epochs=2, hidden=32,
            eval_every_updates=0, final_eval_games=0, checkpoint_every_updates=1, progress=False,
            torch_threads=1, snapshot_every_updates=1)


def _midgame_states(n: int, count: int, seed: int) -> list[GameState]:
    """States at random decision points of random games (both phases, knocks included)."""
    rng = random.Random(seed)
    states = (random_midgame(n, seed * 1000 + g, rng, 0, 40) for g in range(count))
    return [s for s in states if s is not None]


# -- expert advice -------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 4])
def test_expert_advice_names_the_expert_move(n):
    expert, advisor = ExpertAgent(), ExpertAgent()
    for state in _midgame_states(n, 40, seed=n):
        view = make_view(state, state.current_player)
        out = np.zeros(ADVICE_SIZE, dtype=np.float32)
        action = advisor.advice(view, out)
        assert action == expert.act(view)
        assert out[:CORE_ACTIONS].sum() == 1.0 and out[action] == 1.0
        scored = set(np.flatnonzero(out[CORE_ACTIONS:CORE_ACTIONS + 52]))
        assert scored <= set(view.hand)  # discard scores only for my own cards
        assert np.all(np.abs(out) <= 1.5)
        assert advisor.act(view) == action  # advice() leaves the agent as it was


def test_advice_encoder_extends_the_plain_observation():
    plain, advised = PaddedEncoder(Rules(), 6), PaddedEncoder(Rules(), 6, advice=True)
    assert advised.size == plain.size + ADVICE_SIZE == policy_observation_size(6, advice=True)
    for state in _midgame_states(3, 10, seed=7):
        view = make_view(state, state.current_player)
        a, b = plain.encode(view), advised.encode(view)
        np.testing.assert_array_equal(b[: plain.size], a)
        assert b[plain.size:plain.size + CORE_ACTIONS].sum() == 1.0


def test_advice_inputs_never_depend_on_hidden_cards():
    enc = PaddedEncoder(Rules(), 6, advice=True)
    rng = random.Random(1)
    changed = 0
    for state in _midgame_states(3, 30, seed=11):
        other = hidden_variant(state, rng)
        changed += state.hands != other.hands or state.stock != other.stock
        seat = state.current_player
        np.testing.assert_array_equal(enc.encode(make_view(state, seat)),
                                      enc.encode(make_view(other, seat)))
    assert changed >= 10


def test_advised_network_matches_its_numpy_twin():
    torch.manual_seed(0)
    size = policy_observation_size(6, advice=True)
    net = PolicyNet(size, 32, 2, 6, advice=True)
    twin = NumpyPolicy(net.state_dict(), 2, 6)
    assert twin.advice and twin.advice_gain == pytest.approx(3.0)
    enc = PaddedEncoder(Rules(), 6, advice=True)
    states = _midgame_states(2, 12, seed=3)
    obs = np.stack([enc.encode(make_view(s, s.current_player)) for s in states])
    mask = np.zeros((len(states), NUM_ACTIONS), dtype=bool)
    for j, s in enumerate(states):
        mask[j, s.legal_actions()] = True
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
    np.testing.assert_allclose(twin.logits(obs, mask), logits.numpy(), rtol=1e-4, atol=1e-4)


# -- privileged critic ---------------------------------------------------------------------
def test_privileged_inputs_are_the_other_hands_by_relative_seat_and_the_stock():
    state = GameState(3, Rules(), seed=2)
    seat = state.current_player
    out = np.zeros(privileged_size(6), dtype=np.float32)
    encode_privileged(state, seat, 6, out)
    for r in (1, 2):
        block = out[(r - 1) * 52:r * 52]
        assert set(np.flatnonzero(block)) == set(state.hands[(seat + r) % 3])
    assert not out[2 * 52:5 * 52].any()  # seats a 3-player table does not have
    assert set(np.flatnonzero(out[5 * 52:])) == set(state.stock)
    assert not set(np.flatnonzero(out)) & {c + 52 * k for c in state.hands[seat] for k in range(6)}


def _options_cfg(**kw) -> PPOConfig:
    return PPOConfig(player_counts=[2, 3], opponents={"self": 0.6, "expert": 0.4}, seed=5,
                     advice=True, privileged_critic=True, **{**TINY, **kw})


def test_privileged_critic_stays_out_of_the_policy_file(tmp_path):
    train(_options_cfg(total_samples=600), tmp_path, log=lambda m: None)
    ckpt = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert ckpt["critic"]  # trained and saved for --resume...
    policy = load_file(tmp_path / "policy.npz")
    assert "critic" not in policy  # ...but never shipped with the policy
    assert policy["arch"]["advice"] == 1
    assert policy["arch"]["obs_size"] == policy_observation_size(6, advice=True)
    for n in (2, 4):
        agents = [make_agent(f"ppo:{tmp_path / 'policy.npz'}", seed=0)] + [
            make_agent("greedy", seed=s) for s in range(1, n)]
        record = play_game(agents, seed=n)  # the engine raises on an illegal action
        assert record.winner is not None or record.truncated


def test_privileged_critic_resume_continues_exactly(tmp_path):
    train(_options_cfg(total_samples=700), tmp_path / "resumed", log=lambda m: None)
    train(_options_cfg(total_samples=1400), tmp_path / "resumed", resume=True, log=lambda m: None)
    train(_options_cfg(total_samples=1400), tmp_path / "straight", log=lambda m: None)
    a = torch.load(tmp_path / "resumed" / "checkpoint.pt", weights_only=True)
    b = torch.load(tmp_path / "straight" / "checkpoint.pt", weights_only=True)
    assert a["counters"]["samples"] == b["counters"]["samples"]
    for part in ("state_dict", "critic"):
        for key in a[part]:
            torch.testing.assert_close(a[part][key], b[part][key], rtol=0, atol=0)


@pytest.mark.parametrize("field", ["privileged_critic", "advice"])
def test_resume_with_the_option_toggled_is_one_clear_error(tmp_path, field):
    cfg = _options_cfg(total_samples=300)
    train(cfg, tmp_path, log=lambda m: None)
    with pytest.raises(ValueError, match=field):
        train(dataclasses.replace(cfg, total_samples=600, **{field: False}), tmp_path, resume=True)


# -- warm start and critic warm-up -----------------------------------------------------------
def _plain_policy(tmp_path):
    cfg = PPOConfig(player_counts=[2], opponents={"self": 1.0}, seed=3, total_samples=300, **TINY)
    train(cfg, tmp_path / "plain", log=lambda m: None)
    return tmp_path / "plain" / "policy.npz"


def test_warm_start_adds_advice_as_a_bonus_on_the_expert_move(tmp_path):
    from training.policy_net import build_net, warm_start

    path = _plain_policy(tmp_path)
    data = load_file(path)
    old = build_net(data)
    new = PolicyNet(policy_observation_size(6, advice=True), 32, 2, 6, advice=True, advice_gain=1.5)
    warm_start(new, data, str(path))
    plain_enc, enc = PaddedEncoder(Rules(), 6), PaddedEncoder(Rules(), 6, advice=True)
    expert = ExpertAgent()
    for state in _midgame_states(3, 10, seed=5):
        view = make_view(state, state.current_player)
        mask = torch.zeros(1, NUM_ACTIONS, dtype=torch.bool)
        mask[0, list(view.legal_actions)] = True
        with torch.no_grad():
            a, _ = old(torch.from_numpy(plain_enc.encode(view))[None], mask)
            b, _ = new(torch.from_numpy(enc.encode(view))[None], mask)
        a[0, expert.act(view)] += 1.5
        torch.testing.assert_close(b, a)


def test_warm_start_refuses_a_smaller_network(tmp_path):
    from training.policy_net import warm_start

    path = _plain_policy(tmp_path)
    net = PolicyNet(policy_observation_size(6), 16, 2, 6)
    with pytest.raises(ValueError, match="init_from .*hidden is 32 in the file, 16 .*not shrink"):
        warm_start(net, load_file(path), str(path))
    net = PolicyNet(policy_observation_size(6), 32, 2, 5)
    with pytest.raises(ValueError, match="init_from .*max_players is 6 in the file, 5"):
        warm_start(net, load_file(path), str(path))


@pytest.mark.parametrize("hidden,layers", [(48, 2), (32, 4), (64, 3)])
def test_warm_start_grows_a_network_into_the_same_function(tmp_path, hidden, layers):
    """Net2Net: a wider or deeper network starts with the file's logits and value."""
    from training.policy_net import build_net, warm_start

    path = _plain_policy(tmp_path)
    data = load_file(path)
    old = build_net(data)
    new = PolicyNet(policy_observation_size(6), hidden, layers, 6)
    warm_start(new, data, str(path), seed=1)
    enc = PaddedEncoder(Rules(), 6)
    for state in _midgame_states(4, 10, seed=6):
        view = make_view(state, state.current_player)
        mask = torch.zeros(1, NUM_ACTIONS, dtype=torch.bool)
        mask[0, list(view.legal_actions)] = True
        obs = torch.from_numpy(enc.encode(view))[None]
        with torch.no_grad():
            a, va = old(obs, mask)
            b, vb = new(obs, mask)
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(vb, va, rtol=1e-4, atol=1e-4)
    if hidden > 32:  # the copies of a unit share its outgoing weights unequally
        w = new.pi.weight.detach()
        cols = {tuple(w[:, j].tolist()) for j in range(hidden)}
        assert len(cols) == hidden


def test_critic_warmup_leaves_the_policy_untouched(tmp_path):
    path = _plain_policy(tmp_path)
    cfg = PPOConfig(player_counts=[2], opponents={"self": 1.0}, seed=3, total_samples=600,
                    privileged_critic=True, critic_warmup_updates=10**6, init_from=str(path), **TINY)
    train(cfg, tmp_path / "warm", log=lambda m: None)
    before, after = load_file(path), load_file(tmp_path / "warm" / "policy.npz")
    assert after["config"]["init_from"] == str(path)
    for key, value in before["state_dict"].items():
        torch.testing.assert_close(after["state_dict"][key], value, rtol=0, atol=0)


def test_resume_takes_the_learning_rate_of_the_config(tmp_path):
    cfg = PPOConfig(player_counts=[2], opponents={"self": 1.0}, seed=3, total_samples=300, **TINY)
    train(cfg, tmp_path, log=lambda m: None)
    train(dataclasses.replace(cfg, total_samples=600, lr=1e-3), tmp_path, resume=True,
          log=lambda m: None)
    ckpt = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert [g["lr"] for g in ckpt["optimizer"]["param_groups"]] == [1e-3]


def _start_lives(cfg: PPOConfig, games: int) -> list[list[int]]:
    runner = Runner(cfg, Rules(), seed=5)
    return [runner._new_slot().state.lives for _ in range(games)]


def test_random_lives_starts_games_from_uneven_lives_within_the_rules():
    """``random_lives: 1`` draws every seat's lives from 1..start_lives (4 in standard: three
    pennies and the county), so the trainer sees the short-handed ends of bigger games."""
    cfg = PPOConfig(player_counts=[2, 3], opponents={"greedy": 1.0}, random_lives=1.0, **TINY)
    lives = _start_lives(cfg, 300)
    seen = {v for row in lives for v in row}
    assert seen == {1, 2, 3, 4}
    assert sum(len(set(row)) > 1 for row in lives) > 150


def test_random_lives_off_keeps_full_lives_and_a_share_mixes_both():
    base = PPOConfig(player_counts=[2, 3], opponents={"greedy": 1.0}, **TINY)
    assert all(row == [4] * len(row) for row in _start_lives(base, 50))
    half = dataclasses.replace(base, random_lives=0.5)
    mixed = _start_lives(half, 400)
    full = sum(all(v == 4 for v in row) for row in mixed)
    assert 150 < full < 300  # about half, plus the draws that happen to be all fours


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_random_lives_outside_zero_to_one_is_one_clear_error(value):
    with pytest.raises(ValueError, match="random_lives must be a share"):
        PPOConfig(random_lives=value)


def test_random_lives_trains_end_to_end(tmp_path):
    cfg = PPOConfig(player_counts=[2], opponents={"greedy": 1.0}, random_lives=0.5,
                    total_samples=512, **TINY)
    train(cfg, tmp_path / "run")
    assert (tmp_path / "run" / "policy.npz").is_file()


# -- hand-off to a fixed agent once few players are in ---------------------------------------
def _handoff_cfg(**kw) -> PPOConfig:
    base = dict(player_counts=[3], opponents={"expert": 1.0}, handoff="expert", random_lives=1.0,
                hand_reward=0.0, **TINY)
    return PPOConfig(**{**base, **kw})


def _tiny_net() -> PolicyNet:
    return PolicyNet(policy_observation_size(6), 32, 2, 6)


def test_handoff_trains_only_on_positions_with_more_players_in():
    """A policy-set member for three players never plays heads-up (the two-player member
    does), so with ``handoff`` every learner sample is a three-in position and the heads-up
    ends of its games go to the hand-off agent."""
    runner = Runner(_handoff_cfg(rollout_samples=2000), Rules(), seed=7)
    seen: list[int] = []
    encode = runner.encoder.encode

    def recording(view, out):  # only learner rows are encoded: every other seat is an agent
        seen.append(sum(view.active))
        return encode(view, out)

    runner.encoder.encode = recording
    runner.collect(_tiny_net(), hand_reward=0.0)
    assert len(seen) >= 2000 and set(seen) == {3}
    assert runner.games_done > 0  # each finished game went through its heads-up end
    for slot in runner.slots:
        for s, kind in enumerate(slot.kinds):
            if kind == HANDOFF:
                assert sum(slot.state.active) <= 2 and slot.trajs[s]


def test_handoff_seat_still_gets_its_game_result():
    """The learner's seat keeps its trajectory after the hand-off: a win (+1) or an
    elimination (-1/(n-1)) reaches its last sample, and the win counts as the learner's."""
    runner = Runner(_handoff_cfg(rollout_samples=3000), Rules(), seed=8)
    runner.collect(_tiny_net(), hand_reward=0.0)
    finals = [runner.rewards[t[-1]] for t in runner.finished]
    assert all(runner.dones[t[-1]] for t in runner.finished)
    wins = sum(won for _, won in runner.wins)
    assert wins > 0 and finals.count(1.0) == wins
    assert finals.count(-0.5) + finals.count(1.0) == len(finals)


@pytest.mark.parametrize("players", [1, 3, True])
def test_handoff_players_must_leave_a_smaller_game(players):
    with pytest.raises(ValueError, match="handoff_players"):
        _handoff_cfg(handoff_players=players)


def test_handoff_with_an_unknown_agent_is_one_clear_error():
    with pytest.raises(ValueError, match="handoff 'nobody'"):
        Runner(_handoff_cfg(handoff="nobody"), Rules(), seed=0)


def test_handoff_trains_and_resumes(tmp_path):
    cfg = _handoff_cfg(total_samples=300, handoff="greedy")
    train(cfg, tmp_path, log=lambda m: None)
    train(dataclasses.replace(cfg, total_samples=600), tmp_path, resume=True, log=lambda m: None)
    ckpt = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert ckpt["counters"]["samples"] >= 600
    with pytest.raises(ValueError, match="handoff 'nobody'"):
        train(dataclasses.replace(cfg, total_samples=900, handoff="nobody"), tmp_path, resume=True,
              log=lambda m: None)
