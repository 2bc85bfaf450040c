"""An SB3 ``VecEnv`` over the batched engine: MaskablePPO on thousands of games at once.

``BatchVecEnv(num_envs, num_players)`` is a drop-in ``VecEnv`` for stable-baselines3 and
sb3-contrib over :class:`training.batch_learner.BatchLearnerEnv`: each of its ``num_envs``
sub-environments is one batched game with the learner in one seat (a new random seat every
game) and the other seats played inside the env by batched baselines (``greedy``, ``expert``,
``random`` or ``threshold:K``, drawn per game). The observation, the rewards (``hand_reward``
adds the lives shaping of every hand) and where an episode ends are that module's; here
they take SB3's shape:

- **Masks**: ``env_method("action_masks")`` (what ``MaskablePPO`` calls) returns the legal
  actions of each game's learner.
- **Infos**: ``info["terminal_observation"]`` where an episode ended (the learner's view at
  the end when it was knocked out, the next game's first view otherwise: the batched engine
  deals the next game at once), and ``info["truncated"]`` there.
- **Table sizes**: ``num_players`` is one size or several; with several, the games are split
  evenly among them (each size its own core), every vector padded to ``max_players`` seats
  (by default the largest size): one network for every size. ``max_players=10`` pads every
  table to the same vector; the default keeps the vector short (the first layer of SB3's
  ``MlpPolicy`` is the larger part of its training cost).

Nothing of the user's code changes but the env constructor::

    from sb3_contrib import MaskablePPO
    from training.batch_vec_env import BatchVecEnv

    env = BatchVecEnv(num_envs=256, num_players=3, opponents=("greedy",))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=4096)
    model.learn(200_000)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from agents.compact import vector_size
from scat_env.rules import DEFAULT_MAX_TURNS, MAX_PLAYERS

from .batch_learner import BatchLearnerEnv, Transition

OBS_SIZE = vector_size(MAX_PLAYERS)
"""The observation's width at ``max_players=10`` (every table size in one vector)."""


def obs_size(max_players: int) -> int:
    """The observation's width for tables of up to ``max_players`` seats
    (:func:`agents.compact.vector_size`)."""
    return vector_size(max_players)


class BatchVecEnv(VecEnv):
    """The module docstring's ``VecEnv``."""

    def __init__(self, num_envs: int, num_players: int | Sequence[int], rules: str = "standard",
                 seed: int = 0, opponents: Sequence[str] | Mapping[str, float] = ("greedy",),
                 max_turns: int = DEFAULT_MAX_TURNS, max_players: int | None = None,
                 hand_reward: float = 0.0) -> None:
        sizes = [num_players] if isinstance(num_players, int) else list(num_players)
        if not sizes or num_envs < len(sizes):
            raise ValueError(f"BatchVecEnv needs at least one game per table size, got "
                             f"{num_envs} games for table sizes {sizes}")
        m = max(sizes) if max_players is None else max_players
        # the games split across the table sizes, each a core of its own, one vector width
        counts = [len(c) for c in np.array_split(np.arange(num_envs), len(sizes))]
        self.cores = [BatchLearnerEnv(k, n, rules, seed + 7919 * i, opponents, max_turns, m,
                                      hand_reward)
                      for i, (k, n) in enumerate(zip(counts, sizes, strict=True))]
        self.core = self.cores[0]
        self.env = self.core.env  # the (first) BatchEnv, for callers that inspect the games
        self.n = sizes[0]
        self.max_players = m
        self.obs_size = self.core.obs_size
        self._cuts = np.cumsum(counts)[:-1]
        self._actions: np.ndarray | None = None
        space = gym.spaces.Box(0.0, 1.0, (self.obs_size,), np.float32)
        self.render_mode = None  # nothing to draw: SB3 asks before it warns
        super().__init__(num_envs, space, gym.spaces.Discrete(self.core.num_actions))

    def action_masks(self) -> np.ndarray:
        return np.concatenate([c.action_masks() for c in self.cores])

    def reset(self) -> np.ndarray:
        return np.concatenate([c.reset() for c in self.cores])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        assert self._actions is not None, "step_async first"
        parts = [c.step(a) for c, a in zip(self.cores, np.split(self._actions, self._cuts), strict=True)]
        self._actions = None
        t = parts[0] if len(parts) == 1 else Transition(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in Transition.FIELDS))
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for g in np.flatnonzero(t.done):
            infos[g]["truncated"] = bool(t.truncated[g])
            infos[g]["terminal_observation"] = t.terminal_obs[g]
        return t.obs, t.rewards, t.done, infos

    # -- the rest of the VecEnv interface ---------------------------------------------------
    def close(self) -> None:
        return None

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in idx]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def seed(self, seed: int | None = None) -> list[int | None]:
        return [seed] * self.num_envs

    def get_images(self) -> list[np.ndarray]:
        return []
