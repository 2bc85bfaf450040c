"""RLlib on the batched engine: a gymnasium ``VectorEnv`` of scat games for RLlib's env runners.

RLlib's ``SingleAgentEnvRunner`` builds its env with ``gymnasium.make_vec``; registered with a
``vector_entry_point`` and ``gym_env_vectorize_mode="vector_entry_point"``, that is
:class:`ScatBatchVectorEnv`: ``num_envs_per_env_runner`` games of
:class:`training.batch_learner.BatchLearnerEnv` stepped at once by the numba engine, the
learner in one seat of each, batched baselines in the others. Observations are
``{"observations": the learner vector, "action_mask": 0/1 float32}``, the keys
:class:`training.adapters.rllib.ScatMaskedMLP` masks with.

``scat train`` (``env: batched``) runs it under
:class:`training.adapters.rllib_runner.ScatBatchEnvRunner`, which steps the env's
``BatchLearnerEnv`` directly and builds RLlib's episodes from arrays; the gymnasium
interface below is what any other env runner, or a user's own code, steps.

Gymnasium's next-step autoreset, which RLlib expects of a vector env: the step that ends a
game's episode returns the learner's last view with ``terminated`` (or ``truncated``); the
next step ignores that game's action and returns the next game's first view (the engine has
already dealt it: the game waits, :meth:`BatchLearnerEnv.step`'s ``skip``), reward 0.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from scat_env.actions import NUM_ACTIONS
from scat_env.rules import DEFAULT_MAX_TURNS

from ..batch_learner import BatchLearnerEnv

#: The name RLlib knows :func:`make_vector_env` by (``ray.tune.registry.register_env``).
ENV_ID = "scat-batched"


class ScatBatchVectorEnv(VectorEnv):
    """The module docstring's vector env."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, num_players: int = 3, rules: str = "standard",
                 opponents: Any = ("greedy",), hand_reward: float = 0.0,
                 max_turns: int = DEFAULT_MAX_TURNS, seed: int = 0) -> None:
        self._args = (num_envs, num_players, rules, opponents, max_turns, None, hand_reward)
        self.core = self._core(seed)
        self.num_envs = num_envs
        D = self.core.obs_size
        self.single_observation_space = gym.spaces.Dict({
            "observations": gym.spaces.Box(0.0, np.inf, (D,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32)})
        self.single_action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._pending = np.zeros(num_envs, bool)  # ended last step: the next one resets it

    def _core(self, seed: int) -> BatchLearnerEnv:
        n_envs, n, rules, opponents, max_turns, max_players, hand_reward = self._args
        return BatchLearnerEnv(n_envs, n, rules, seed, opponents, max_turns, max_players,
                               hand_reward)

    def _obs(self, vectors: np.ndarray) -> dict[str, np.ndarray]:
        return {"observations": vectors,
                "action_mask": self.core.action_masks().astype(np.float32)}

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        """New games everywhere (from ``seed`` when one is given)."""
        if seed is not None:
            self.core = self._core(int(seed if isinstance(seed, int) else seed[0]))
        self._pending[:] = False
        return self._obs(self.core.reset()), {}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                          np.ndarray, dict]:
        acts = np.asarray(actions, np.int64).reshape(self.num_envs)
        skip = self._pending.copy()
        if skip.any():  # the action of a game that just reset is not read: make it legal
            acts = np.where(skip, self.core.action_masks().argmax(1), acts)
        t = self.core.step(acts, skip=skip if skip.any() else None)
        vectors = np.where(t.done[:, None], t.terminal_obs, t.obs)
        terminated = t.done & ~t.truncated
        self._pending = t.done.copy()
        return (self._obs(vectors), t.rewards, terminated, t.truncated.copy(), {})


def make_vector_env(config: dict[str, Any]) -> ScatBatchVectorEnv:
    """RLlib's env creator (registered as :data:`ENV_ID`): called with the env config and
    ``num_envs`` on every env runner. Which games a runner deals is set by RLlib's first
    ``reset(seed=...)``: the config's seed plus the runner's index, so runners differ and a
    run repeats."""
    return ScatBatchVectorEnv(int(config.get("num_envs", 1)), int(config["num_players"]),
                              str(config["rules"]), dict(config["opponents"]),
                              float(config.get("hand_reward", 0.0)),
                              int(config.get("max_turns", DEFAULT_MAX_TURNS)),
                              int(config.get("seed", 0)))
