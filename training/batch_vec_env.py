"""An SB3 ``VecEnv`` over the batched engine: MaskablePPO on thousands of games at once.

``BatchVecEnv(num_envs, num_players)`` is a drop-in ``VecEnv`` for stable-baselines3 and
sb3-contrib: each of its ``num_envs`` sub-environments is one batched game with the learner
in one seat (a new random seat every game) and the other seats played inside the env by
batched baselines (``greedy``, ``expert``, ``random`` or ``threshold:K``, drawn per game). A step
plays the learner's move in every game, then the opponents' moves until the learner is to
move again in every game (games already there wait, :meth:`BatchEnv.step`'s ``skip``).

- **Observation**: a float32 vector: the one-hot of each card's code in the compact
  observation followed by the dense inputs of :func:`agents.compact.dense_inputs` (seat
  counters, table size, scoring features), sized for ``max_players`` seats
  (:func:`obs_size`), then, for rules whose compact observation appends pieces (the
  calls, golf, the points races), :func:`agents.compact.piece_inputs` of them. The default, the env's own table size, keeps the vector short: the
  first layer of SB3's ``MlpPolicy`` is the larger part of its training cost, and at 3
  players the vector is 497 wide instead of 889. ``max_players=10`` pads every table to
  the same vector, for one network trained on several table sizes in turn.
- **Masks**: ``env_method("action_masks")`` (what ``MaskablePPO`` calls) returns the legal
  actions of each game's learner.
- **Rewards**: the learner seat's reward as ``env()`` pays it (``reward="game"``: -1/(n-1)
  when knocked out, +1 for the win), summed over the opponents' moves; rewards that arrive
  after an episode ended and before the learner's first move of the next one (a dealt 31)
  are paid with that first move, as ``env()`` does.
- **Episodes** end when the learner is out (its game is then replaced by a new one: the
  rest of it pays the learner nothing) or the game ends; a game cut short by the turn cap
  ends the episode as well (``info["truncated"]``). ``info["terminal_observation"]`` is the learner's view at
  the end when it was knocked out, and the next game's first view otherwise (the batched
  engine restarts a finished game at once).

Nothing of the user's code changes but the env constructor::

    from sb3_contrib import MaskablePPO
    from training.batch_vec_env import BatchVecEnv

    env = BatchVecEnv(num_envs=256, num_players=3, opponents=("greedy",))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=4096)
    model.learn(200_000)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from agents.batch_expert import BatchExpert
from agents.compact import pieces_width, table_pieces, vector_inputs, vector_size
from scat_env.actions import NUM_ACTIONS
from scat_env.batch import BatchEnv
from scat_env.batch.kernels import CUR
from scat_env.rules import DEFAULT_MAX_TURNS, MAX_PLAYERS

OBS_SIZE = vector_size(MAX_PLAYERS)
"""The observation's width at ``max_players=10`` (every table size in one vector)."""


def obs_size(max_players: int) -> int:
    """The observation's width for tables of up to ``max_players`` seats
    (:func:`agents.compact.vector_size`)."""
    return vector_size(max_players)


_RANDOM = -2  # opponent code: random legal moves (threshold codes are K >= 0, or -1 never)
_EXPERT = -3  # expert's moves (agents.batch_expert)


def _opponent_code(spec: str) -> int:
    if spec == "random":
        return _RANDOM
    if spec == "greedy":
        return 25
    if spec == "expert":
        return _EXPERT
    if spec.startswith("threshold:"):
        arg = spec.partition(":")[2]
        if arg == "never":
            return -1
        if arg.isdigit() and 17 <= int(arg) <= 31:
            return int(arg)
    raise ValueError(f"BatchVecEnv opponents are played batched: greedy, expert, random or "
                     f"threshold:K (K 17..31 or never), got {spec!r}")


class BatchVecEnv(VecEnv):
    """The module docstring's ``VecEnv``."""

    def __init__(self, num_envs: int, num_players: int, rules: str = "standard", seed: int = 0,
                 opponents: Sequence[str] = ("greedy",), max_turns: int = DEFAULT_MAX_TURNS,
                 max_players: int | None = None) -> None:
        m = num_players if max_players is None else max_players
        if not num_players <= m <= MAX_PLAYERS:
            raise ValueError(f"max_players must be from num_players ({num_players}) to "
                             f"{MAX_PLAYERS}, got {max_players}")
        self.env = BatchEnv(num_envs, num_players, rules, seed, max_turns=max_turns)
        if not opponents:
            raise ValueError("BatchVecEnv needs at least one opponent spec")
        self.codes = np.array([_opponent_code(s) for s in opponents], np.int64)
        self.expert = BatchExpert(self.env.rules) if _EXPERT in self.codes else None
        self.n = num_players
        self.start_lives = self.env.rules.start_lives
        self.rng = np.random.default_rng(seed)
        self.learner = np.zeros(num_envs, np.int64)
        self.opponent = np.zeros(num_envs, np.int64)
        self.carry = np.zeros(num_envs, np.float32)
        self._actions: np.ndarray | None = None
        self._games = np.arange(num_envs)
        self.max_players = m
        # the rules' observation pieces (calls, golf, points), after the base vector
        self.obs_size = obs_size(m) + pieces_width(table_pieces(self.env.rules))
        space = gym.spaces.Box(0.0, 1.0, (self.obs_size,), np.float32)
        self.render_mode = None  # nothing to draw: SB3 asks before it warns
        super().__init__(num_envs, space, gym.spaces.Discrete(NUM_ACTIONS))

    # -- what the learner sees -----------------------------------------------------------
    def _encode(self, obs: np.ndarray) -> np.ndarray:
        feats = self.env.hand_features(obs)
        return vector_inputs(obs, feats, self.n, self.start_lives, self.max_players,
                             self.env.rules)

    def action_masks(self) -> np.ndarray:
        return self.env._mask.copy()

    # -- the games ------------------------------------------------------------------------
    def _new_seats(self, games: np.ndarray) -> None:
        self.learner[games] = self.rng.integers(self.n, size=len(games))
        self.opponent[games] = self.rng.choice(self.codes, size=len(games))

    def _opponent_actions(self) -> np.ndarray:
        acts = self.env.random_actions()
        for code in np.unique(self.opponent):
            if code == _RANDOM:
                continue
            if code == _EXPERT:
                chosen = self.expert.actions(self.env)  # type: ignore[union-attr]
            else:
                chosen = self.env.threshold_actions(None if code < 0 else int(code))
            sel = self.opponent == code
            acts[sel] = chosen[sel]
        return acts

    def _advance(self, rewards: np.ndarray, dones: np.ndarray, infos: list[dict]) -> None:
        """Opponents move until every game waits for its learner; an episode that ends on
        the way is closed (``dones``) and the next one begins."""
        env = self.env
        lives = env._lives  # live arrays of the env, current after every step
        mover = env._sc[:, CUR]  # the player to move
        open_ = ~dones
        while True:
            alive = lives[self._games, self.learner] > 0
            out_now = open_ & ~alive
            if out_now.any():  # knocked out: the episode ends; a new game replaces this one
                views = env.observe_all()
                for g in np.flatnonzero(out_now):
                    dones[g] = True
                    infos[g]["terminal_observation"] = self._encode(
                        views[g:g + 1, self.learner[g]])[0]
                open_ &= ~out_now
                env.restart(out_now)
                self._new_seats(np.flatnonzero(out_now))
                self.carry[out_now] = 0.0
                continue
            waiting = (mover == self.learner) & alive
            if waiting.all():
                return
            out = env.step(self._opponent_actions(), skip=waiting)
            r = out["rewards"][self._games, self.learner]
            rewards += np.where(open_, r, 0.0)
            self.carry += np.where(open_, 0.0, r) * ~out["done"]
            for g in np.flatnonzero(out["done"]):
                if open_[g]:
                    dones[g] = True
                    open_[g] = False
                    infos[g]["truncated"] = bool(out["truncated"][g])
                    infos[g]["terminal_observation"] = None  # filled below
                self.carry[g] = 0.0
                self._new_seats(np.array([g]))

    def reset(self) -> np.ndarray:
        self.env.reset()
        self._new_seats(self._games)
        self.carry[:] = 0.0
        rewards = np.zeros(self.num_envs, np.float32)
        self._advance(rewards, np.zeros(self.num_envs, bool), [{} for _ in self._games])
        self.carry += rewards
        return self._encode(self.env._obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        assert self._actions is not None, "step_async first"
        env = self.env
        out = env.step(self._actions)
        self._actions = None
        rewards = self.carry + out["rewards"][self._games, self.learner]
        self.carry[:] = 0.0
        dones = out["done"].copy()
        infos: list[dict[str, Any]] = [{} for _ in self._games]
        for g in np.flatnonzero(dones):
            infos[g]["truncated"] = bool(out["truncated"][g])
            infos[g]["terminal_observation"] = None
            self._new_seats(np.array([g]))
        self._advance(rewards, dones, infos)
        obs = self._encode(env._obs)
        for g, info in enumerate(infos):
            if "terminal_observation" in info and info["terminal_observation"] is None:
                info["terminal_observation"] = obs[g]
        return obs, rewards.astype(np.float32), dones, infos

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
