"""``BatchVecEnv``: stable-baselines3's VecEnv over the batched engine.

The learner's seat moves only when every game waits for it, opponents move inside, masks
are the learner's legal actions, rewards are the learner seat's, episodes end when the
learner is out or the game ends, and MaskablePPO trains on it unchanged.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from scat_env.batch.kernels import CUR
from training.batch_vec_env import OBS_SIZE, BatchVecEnv, obs_size


def _first_legal(masks: np.ndarray) -> np.ndarray:
    return np.array([np.flatnonzero(m)[0] for m in masks])


def test_every_game_waits_for_its_learner_with_the_learners_mask():
    env = BatchVecEnv(64, 4, opponents=("greedy", "random"), seed=3)
    obs = env.reset()
    assert obs.shape == (64, env.obs_size) and obs.dtype == np.float32
    episodes = 0
    total = 0.0
    for _ in range(300):
        assert (env.env._sc[:, CUR] == env.core.learner).all()
        assert (env.env._lives[np.arange(64), env.core.learner] > 0).all()
        masks = np.stack(env.env_method("action_masks"))
        assert (masks == env.env._mask).all() and masks.any(axis=1).all()
        env.step_async(_first_legal(masks))
        obs, rewards, dones, infos = env.step_wait()
        episodes += int(dones.sum())
        total += float(rewards.sum())
        for g in np.flatnonzero(dones):
            assert infos[g]["terminal_observation"].shape == (env.obs_size,)
        # game rewards: -1/3 when the learner is out, +1 for a win, nothing else
        assert set(np.round(rewards.astype(float), 4).tolist()) <= {0.0, -0.3333, 1.0}
    assert episodes > 10


def test_an_illegal_learner_move_is_refused_naming_the_game():
    env = BatchVecEnv(8, 3, seed=1)
    env.reset()
    acts = _first_legal(env.action_masks())
    acts[5] = int(np.flatnonzero(~env.action_masks()[5])[0])
    env.step_async(acts)
    with pytest.raises(ValueError, match="^game 5: action"):
        env.step_wait()


def test_unknown_opponents_are_refused():
    with pytest.raises(ValueError, match="greedy, expert, random, threshold:K"):
        BatchVecEnv(4, 3, opponents=("ismcts",))


def test_expert_opponents_play_the_batched_experts_moves():
    """Between two learner moves every game's opponents play ``BatchExpert``'s moves (the
    expert's, tested move for move in tests/test_batch_expert.py)."""
    from agents.batch_expert import BatchExpert

    env = BatchVecEnv(32, 4, opponents=("expert",), seed=2)
    env.reset()
    expert = BatchExpert("standard")
    played = 0
    real_step = env.env.step

    def checked_step(actions, skip=None):
        nonlocal played
        want = expert.actions(env.env)
        moving = ~skip if skip is not None else np.ones(len(actions), bool)
        others = moving & (env.env._sc[:, CUR] != env.core.learner)
        assert (actions[others] == want[others]).all()
        played += int(others.sum())
        return real_step(actions, skip)

    env.env.step = checked_step
    for _ in range(50):
        env.step_async(_first_legal(env.action_masks()))
        env.step_wait()
    assert played > 500


def test_maskable_ppo_trains_on_it_unchanged():
    from sb3_contrib import MaskablePPO

    env = BatchVecEnv(32, 3, opponents=("greedy",), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's note that the env has no render_mode
        model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=256, n_epochs=1, seed=0,
                            policy_kwargs={"net_arch": [32]}, device="cpu")
        model.learn(1024)
    assert model.num_timesteps >= 1024
    obs = env.reset()
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[np.arange(32), action].all()


@pytest.mark.parametrize("players", [2, 3, 6, 10])
def test_the_short_observation_is_the_padded_one_without_its_empty_seats(players):
    """The default vector (the table's own seats) drops only columns that the 10-seat
    vector holds at zero for this table size, and keeps the rest in order."""
    from agents.compact import _dense_columns
    from scat_env.batch.reference import C_KNOWN
    from training.batch_vec_env import obs_size

    short = BatchVecEnv(16, players, seed=4)
    padded = BatchVecEnv(16, players, seed=4, max_players=10)
    assert short.observation_space.shape == (obs_size(players),)
    assert padded.observation_space.shape == (OBS_SIZE,)
    short.env.reset()
    for _ in range(40):
        obs = short.env.observe_all()[:, 0]
        a, b = short.core.encode(obs), padded.core.encode(obs)
        codes = np.arange(52)[:, None] * (C_KNOWN + 9) + np.arange(C_KNOWN + players - 1)
        keep = np.concatenate([codes.reshape(-1), 52 * (C_KNOWN + 9) + _dense_columns(players)])
        np.testing.assert_array_equal(a, b[:, keep])
        dropped = np.ones(OBS_SIZE, bool)
        dropped[keep] = False
        assert not b[:, dropped].any()
        short.env.step(short.env.random_actions())


def test_max_players_below_the_table_is_refused():
    with pytest.raises(ValueError, match="max_players must be from num_players"):
        BatchVecEnv(4, 5, max_players=4)


@pytest.fixture(scope="module")
def vec_model(tmp_path_factory):
    """A small MaskablePPO trained a little on BatchVecEnv at 3 players, saved as a zip."""
    from sb3_contrib import MaskablePPO

    env = BatchVecEnv(32, 3, opponents=("greedy",), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=256, n_epochs=1, seed=0,
                            policy_kwargs={"net_arch": [32]}, device="cpu")
        model.learn(256)
    path = tmp_path_factory.mktemp("vec") / "model.zip"
    model.save(str(path))
    return model, env, str(path)


def test_an_sb3_model_trained_on_it_plays_as_an_agent_from_the_view(vec_model):
    """``sb3:PATH`` reads the zip's input width, plays from each view with the encoding the
    env trained it on, and picks what the model picks on the env's own vector."""
    from agents import make_agent
    from agents.adapters.sb3 import SB3CompactAgent
    from agents.match import play_game
    from scat_env.batch.reference import compact_observation

    model, env, path = vec_model
    agent = make_agent(f"sb3:{path}", seed=0)
    assert isinstance(agent, SB3CompactAgent) and agent.max_players == 3
    checked = 0

    class Checked(SB3CompactAgent):
        def act(self, view):
            nonlocal checked
            mine = super().act(view)
            x = env.core.encode(compact_observation(view)[None])  # BatchVecEnv's own encoding
            mask = np.zeros((1, 67), bool)
            mask[0, list(view.legal_actions)] = True
            theirs, _ = model.predict(x, action_masks=mask, deterministic=True)
            assert mine == int(theirs[0]) and mine in view.legal_actions
            checked += 1
            return mine

    seat = Checked(agent.policy, 3, name=agent.name)
    for g in range(3):
        record = play_game([seat, make_agent("greedy"), make_agent("expert")], seed=g)
        assert record.winner is not None or record.truncated
    assert checked > 30
    assert make_agent(f"sb3:{path}:sample", seed=1).sample


def test_an_sb3_vector_model_refuses_tables_it_cannot_read(vec_model):
    from agents import make_agent
    from scat_env import Rules

    _, _, path = vec_model
    agent = make_agent(f"sb3:{path}")
    with pytest.raises(ValueError, match="at most 3 players, not 4"):
        agent.check_table(4, Rules.preset("standard"))
    with pytest.raises(ValueError, match="does not play the hammer call"):
        agent.check_table(3, Rules.preset("hammer"))
    with pytest.raises(ValueError, match="takes only the option 'sample'"):
        make_agent(f"sb3:{path}:full")


def test_no_vector_width_is_also_an_env_observation_width():
    from agents.compact import vector_size
    from agents.neural.encoding import FAMILY_PIECES, pieces_named, policy_observation_size

    env_widths = {policy_observation_size(n, extra=pieces_named(extra))
                  for extra in FAMILY_PIECES for n in range(2, 11)}
    assert not env_widths & {vector_size(m) for m in range(2, 11)}


def test_the_sb3_trainer_refuses_to_resume_from_a_vector_model(vec_model):
    from training.adapters.sb3 import read_checkpoint
    from training.config import load_config

    _, _, path = vec_model
    config = Path(__file__).resolve().parents[1] / "configs" / "train" / "sb3.yaml"
    _, cfg = load_config(config, {"max_players": 3, "hidden": 32, "layers": 1,
                                  "player_counts": [3], "eval_players": [3]})
    with pytest.raises(ValueError, match="trained on BatchVecEnv's vector"):
        read_checkpoint(path, cfg)


@pytest.mark.parametrize("rules, pieces", [("golf", ("phase", "slots")),
                                           ("french_canadian", ("points",))])
def test_rules_whose_observation_has_pieces_get_them_after_the_base_vector(rules, pieces):
    from agents.compact import PIECE_WIDTHS, piece_inputs, vector_inputs

    env = BatchVecEnv(8, 3, rules=rules, opponents=("expert", "random"), seed=2)
    obs = env.reset()
    assert env.obs_size == OBS_SIZE_3 + sum(PIECE_WIDTHS[p] for p in pieces)
    assert obs.shape == (8, env.obs_size) and env.observation_space.shape == (env.obs_size,)
    raw = env.env._obs
    feats = env.env.hand_features(raw)
    assert np.array_equal(obs[:, :OBS_SIZE_3], vector_inputs(raw, feats, 3, env.core.start_lives, 3))
    assert np.array_equal(obs[:, OBS_SIZE_3:], piece_inputs(raw, 3, env.env.rules, pieces))
    for _ in range(30):
        env.step_async(_first_legal(np.stack(env.env_method("action_masks"))))
        obs, _, _, _ = env.step_wait()
        assert obs.shape == (8, env.obs_size) and np.isfinite(obs).all()


def test_greedy_opponents_play_every_preset():
    """The batched threshold player makes a legal move under calls and golf too."""
    for rules in ("golf", "throw_down", "undeclared_31"):
        env = BatchVecEnv(8, 3, rules=rules, opponents=("greedy", "threshold:20"), seed=1)
        env.reset()
        for _ in range(30):
            env.step_async(_first_legal(np.stack(env.env_method("action_masks"))))
            env.step_wait()


OBS_SIZE_3 = obs_size(3)  # the 3-seat base vector


def test_hand_reward_adds_the_batched_trainers_zero_sum_lives_shaping():
    """With ``hand_reward`` the learner is paid, beside the game reward, ``coef * (mean
    lives lost by the others - lives it lost)`` for each hand scored (the batched trainer's
    shaping, scat_env.rewards.hand_shaping): the same games, the difference is exactly that."""
    from scat_env.rewards import hand_shaping

    plain = BatchVecEnv(32, 3, seed=3, opponents=("greedy", "random"))
    shaped = BatchVecEnv(32, 3, seed=3, opponents=("greedy", "random"), hand_reward=0.5)
    plain.reset()
    shaped.reset()
    rng = np.random.default_rng(1)
    extra = 0.0
    for _ in range(200):
        mask = plain.action_masks()
        assert np.array_equal(mask, shaped.action_masks())
        act = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        plain.step_async(act)
        shaped.step_async(act)
        r0 = plain.step_wait()[1]
        r1 = shaped.step_wait()[1]
        extra += float(np.abs(r1 - r0).sum())
    assert extra > 1.0  # hands were scored and paid
    # one hand by hand: 3 seated, seat 0 lost 2, seat 1 lost 1
    out = {"lives_lost": np.array([[2, 1, 0]]), "lives": np.array([[1, 2, 3]])}
    from training.batch_learner import lives_shaping
    want = hand_shaping({0: 2, 1: 1, 2: 0}, 0.5)
    assert np.allclose(lives_shaping(out, 0.5)[0], [want[0], want[1], want[2]])


def test_several_table_sizes_share_one_vector_and_each_game_keeps_its_size():
    """``num_players=[2, 3, 4]``: the games split evenly among the sizes, every vector
    padded to the largest, and each block of games plays its own size to the end."""
    env = BatchVecEnv(12, [2, 3, 4], seed=2, opponents={"greedy": 1.0, "random": 1.0})
    obs = env.reset()
    assert obs.shape == (12, obs_size(4)) and env.observation_space.shape == (obs_size(4),)
    assert [c.n for c in env.cores] == [2, 3, 4] and [c.num_envs for c in env.cores] == [4] * 3
    ended = 0
    for _ in range(300):
        env.step_async(_first_legal(env.action_masks()))
        obs, _, dones, infos = env.step_wait()
        ended += int(dones.sum())
        for g in np.flatnonzero(dones):
            assert infos[g]["terminal_observation"].shape == (obs_size(4),)
    assert ended > 0
    for core in env.cores:
        assert core.env.num_players == core.n


def test_opponent_weights_set_how_often_each_kind_sits():
    """A mapping of spec to weight draws each game's opponents by weight; weight 0 never."""
    env = BatchVecEnv(2000, 3, seed=1, opponents={"greedy": 3.0, "random": 1.0, "expert": 0.0})
    env.reset()
    kinds = env.core.opponent
    assert not (kinds == -3).any()  # expert, weight 0
    assert 0.7 < (kinds == 25).mean() < 0.8  # greedy, 3 of 4
    with pytest.raises(ValueError, match="opponent weights"):
        BatchVecEnv(8, 3, opponents={"greedy": -1.0})
