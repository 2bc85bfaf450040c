"""Scat as a single-agent Gymnasium env: the learner plays one seat, opponents the rest.

For stable-baselines3 and any single-agent library. Each episode is one full game:

- the number of players is drawn from ``num_players`` (an int or a list), the learner's
  seat is drawn uniformly (so it plays every seat: first to act, dealer, ...), and each
  other seat gets an opponent drawn from ``opponents`` (agent specs of
  :mod:`agents.registry` with weights: ``greedy``, ``expert``, ``sb3:PATH`` for frozen
  snapshots of the learner...). :meth:`add_opponent` adds snapshots while training;
- :meth:`step` plays the learner's action, then every opponent decision until it is the
  learner's turn again or the learner's game is over;
- the observation is the learner's :class:`~scat_env.PlayerView` encoded by
  :class:`~agents.neural.encoding.PaddedEncoder` (padded to ``max_players`` seats, default 6,
  so one policy plays every table size; an absent seat looks like an eliminated one);
- :meth:`action_masks` gives the legal actions (sb3-contrib's MaskablePPO reads it).

Reward: :func:`scat_env.rewards.hand_rewards` of every scored hand, the function the native
trainer and the PettingZoo env use: the game result (+1 for the winner, ``-1/(n-1)`` for a
loser), delivered on the step where the learner's game ends (when it is eliminated, or when
the last opponent falls, even though an opponent made the final move), plus, with
``hand_reward > 0``, ``hand_reward`` times the hand shaping named by ``shaping``: ``lives``
(the others' mean lives lost minus the learner's; zero-sum and dense, it speeds up early
learning) or ``win_chance`` (the change in the learner's expected game result given
everyone's lives, which adds up to the game result). A game cut by ``max_turns`` turns in one
hand is *truncated* with no result.

Gymnasium: importing this module registers the env as :data:`ENV_ID` (``"scat_env/Scat-v0"``),
so any single-agent library can build it by name, keyword arguments going to the
constructor: ``import training.single_agent`` then ``gymnasium.make("scat_env/Scat-v0",
num_players=3, opponents=["expert"])``, or without the import
``gymnasium.make("training.single_agent:scat_env/Scat-v0")``. The registration lives here,
not in ``scat_env``, because the env plays opponents from :mod:`agents`, a layer above the
engine.

Illegal actions: masked learners never send one. An unmasked learner (or ``check_env``)
that does gets a random legal action played instead, ``info["illegal_action"] = True`` and
``illegal_penalty`` added to the reward, so the env never crashes mid-rollout.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agents.neural.encoding import DEFAULT_MAX_PLAYERS, PaddedEncoder
from agents.registry import make_agent
from scat_env import DEFAULT_MAX_TURNS, GameState, Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.rewards import check_shaping, hand_rewards
from scat_env.view import make_view


class ScatSingleAgentEnv(gym.Env):
    """One learner seat against a pool of opponents; see the module docstring."""

    metadata = {"render_modes": ["ansi"], "render_fps": 2}

    def __init__(
        self,
        num_players: int | Sequence[int] = 3,
        rules: Rules | str = "standard",
        opponents: dict[str, float] | Sequence[str] = ("greedy",),
        *,
        max_players: int = DEFAULT_MAX_PLAYERS,
        hand_reward: float = 0.0,
        shaping: str = "lives",
        illegal_penalty: float = 0.0,
        max_turns: int = DEFAULT_MAX_TURNS,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = Rules.preset(rules) if isinstance(rules, str) else rules
        counts = [num_players] if isinstance(num_players, int) else list(num_players)
        if not counts or any(not isinstance(n, int) or not 2 <= n <= max_players for n in counts):
            raise ValueError(f"num_players must be in 2..max_players={max_players}, got {num_players!r}")
        self.player_counts = counts
        if not isinstance(opponents, dict):
            opponents = dict.fromkeys(opponents, 1.0)
        if not opponents:
            raise ValueError("opponents: need at least one agent spec")
        self.opponents: dict[str, float] = {}
        for spec, weight in opponents.items():
            self.add_opponent(spec, weight)
        self.max_players = max_players
        self.hand_reward = float(hand_reward)
        check_shaping(shaping)
        self.shaping = shaping
        self.illegal_penalty = float(illegal_penalty)
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.encoder = PaddedEncoder(self.rules, max_players)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self.encoder.size,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self._rng = random.Random()
        self.state: GameState | None = None
        self.seat = 0
        self._agents: list[Any] = []
        self._seen = 0

    def add_opponent(self, spec: str, weight: float = 1.0) -> None:
        """Add an opponent spec to the pool (e.g. an ``sb3:PATH`` snapshot of the learner)."""
        if weight < 0:
            raise ValueError(f"opponent weight must be >= 0, got {weight} for {spec!r}")
        make_agent(spec, seed=0)  # fail now, with the registry's message, not mid-episode
        self.opponents[spec] = float(weight)

    # -- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._rng.seed(seed)
        rng = self._rng
        n = rng.choice(self.player_counts)
        self.state = GameState(n, self.rules, seed=rng.getrandbits(62))
        self.seat = rng.randrange(n)
        specs, weights = list(self.opponents), list(self.opponents.values())
        self._agents = [None if s == self.seat else
                        make_agent(rng.choices(specs, weights=weights)[0], seed=rng.getrandbits(62))
                        for s in range(n)]
        self._seen = len(self.state.results)
        reward, terminated, truncated = self._play_opponents()
        assert not (terminated or truncated), "a game cannot end before its first decision"
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state = self.state
        if state is None or state.is_terminal():
            raise RuntimeError("step() called before reset() or after the episode ended")
        info_extra: dict[str, Any] = {}
        reward = 0.0
        action = int(action)
        if not state.is_legal(action):
            action = self._rng.choice(state.legal_actions())
            info_extra["illegal_action"] = True
            reward += self.illegal_penalty
        state.apply_action(action)
        r, terminated, truncated = self._play_opponents()
        info = self._info()
        info.update(info_extra)
        return self._obs(), reward + r, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (all False once its game is over)."""
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        state = self.state
        if state is not None and not state.is_terminal() and state.current_player == self.seat:
            mask[state.legal_actions()] = True
        return mask

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self.state is not None:
            from scat_env.render import render_table

            return render_table(self.state, perspective=self.seat)
        return None

    # -- internals -------------------------------------------------------------------------
    def _play_opponents(self) -> tuple[float, bool, bool]:
        """Opponents move until the learner must decide; returns (reward, terminated, truncated)."""
        state, me = self.state, self.seat
        assert state is not None
        reward = 0.0
        while True:
            reward += self._settle()  # the game result too, with the hand that decides it
            if state.is_terminal() or not state.active[me]:
                return reward, True, False
            if state.turn >= self.max_turns:
                return reward, False, True
            seat = state.current_player
            if seat == me:
                return reward, False, False
            state.apply_action(self._agents[seat].act(make_view(state, seat)))

    def _settle(self) -> float:
        """The learner's reward from the hands scored since the last call."""
        state = self.state
        assert state is not None
        reward = 0.0
        while self._seen < len(state.results):
            rewards = hand_rewards(state.results[self._seen], state.num_players, reward="game",
                                   shaping=self.shaping, shaping_coef=self.hand_reward)
            reward += rewards.get(self.seat, 0.0)
            self._seen += 1
        return reward

    def _obs(self) -> np.ndarray:
        return self.encoder.encode(make_view(self.state, self.seat))  # type: ignore[arg-type]

    def _info(self) -> dict[str, Any]:
        state = self.state
        assert state is not None
        return {"seat": self.seat, "num_players": state.num_players, "lives": list(state.lives),
                "winner": state.winner}


#: The Gymnasium id of :class:`ScatSingleAgentEnv` (see the module docstring).
ENV_ID = "scat_env/Scat-v0"


def register_gymnasium() -> None:
    """Register :data:`ENV_ID` with Gymnasium; importing this module calls it. Registering
    again (a reload) is a no-op, not Gymnasium's "overriding environment" warning."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="training.single_agent:ScatSingleAgentEnv")


register_gymnasium()
