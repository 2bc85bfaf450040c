"""``BatchVecEnv``: stable-baselines3's VecEnv over the batched engine.

The learner's seat moves only when every game waits for it, opponents move inside, masks
are the learner's legal actions, rewards are the learner seat's, episodes end when the
learner is out or the game ends, and MaskablePPO trains on it unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from scat_env.batch.kernels import CUR
from training.batch_vec_env import OBS_SIZE, BatchVecEnv


def _first_legal(masks: np.ndarray) -> np.ndarray:
    return np.array([np.flatnonzero(m)[0] for m in masks])


def test_every_game_waits_for_its_learner_with_the_learners_mask():
    env = BatchVecEnv(64, 4, opponents=("greedy", "random"), seed=3)
    obs = env.reset()
    assert obs.shape == (64, env.obs_size) and obs.dtype == np.float32
    episodes = 0
    total = 0.0
    for _ in range(300):
        assert (env.env._sc[:, CUR] == env.learner).all()
        assert (env.env._lives[np.arange(64), env.learner] > 0).all()
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
    with pytest.raises(ValueError, match="greedy, random or threshold:K"):
        BatchVecEnv(4, 3, opponents=("expert",))


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
    from training.batch_vec_env import obs_size

    short = BatchVecEnv(16, players, seed=4)
    padded = BatchVecEnv(16, players, seed=4, max_players=10)
    assert short.observation_space.shape == (obs_size(players),)
    assert padded.observation_space.shape == (OBS_SIZE,)
    short.env.reset()
    for _ in range(40):
        obs = short.env.observe_all()[:, 0]
        a, b = short._encode(obs), padded._encode(obs)
        codes = np.arange(52)[:, None] * padded._codes + np.arange(short._codes)[None, :]
        keep = np.concatenate([codes.reshape(-1), 52 * padded._codes + short._dense])
        np.testing.assert_array_equal(a, b[:, keep])
        dropped = np.ones(OBS_SIZE, bool)
        dropped[keep] = False
        assert not b[:, dropped].any()
        short.env.step(short.env.random_actions())


def test_max_players_below_the_table_is_refused():
    with pytest.raises(ValueError, match="max_players must be from num_players"):
        BatchVecEnv(4, 5, max_players=4)
