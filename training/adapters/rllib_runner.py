"""RLlib's PPO on the batched engine without per-step episode bookkeeping (``env: batched``).

RLlib's ``SingleAgentEnvRunner`` adds every step of every game to a ``SingleAgentEpisode`` in
Python and runs its connector pipelines over those episodes each step; its PPO learner then
walks the episodes again (one extra time step each, a value pass, GAE per episode). On the
batched engine that bookkeeping, not the engine, is where the time goes: per 32,768 learner
decisions, 2.5 s of sampling of which the engine is 0.3 s, and 0.75 s of learner connector.

These two pieces keep everything else of RLlib's PPO (the Algorithm, the Learner with its
loss, optimizer and minibatches, weight sync, metrics, remote env runners) and replace the
bookkeeping with arrays:

- :class:`ScatBatchEnvRunner` steps every game of its :class:`ScatBatchVectorEnv` at once
  through the env's :class:`training.batch_learner.BatchLearnerEnv` (same-step reset: no step
  is spent on a game that has ended), asks the RLModule once per step for every game's
  action logits (``forward_exploration``) and value (``compute_values``), and computes GAE
  over the ``[games, steps]`` arrays: a finished game bootstraps from 0, a game cut at the
  turn cap from the value of its last view, a game still going from the value of its next
  view. It returns one ``SingleAgentEpisode`` per game segment, built in one go from array
  slices, with the advantages and value targets as extra model outputs. The values are
  those the learner would compute: PPO syncs the learner's weights to every env runner
  after each update, before the next sample. Actions are drawn from the categorical of the
  module's (masked) logits, RLlib's distribution for a ``Discrete`` space.
- :class:`ScatBatchColumns`, the learner connector: it concatenates the episodes' columns
  into the train batch and standardises the advantages over it, as RLlib's
  ``GeneralAdvantageEstimation`` does (which also counts the extra step it adds to each
  episode and its loss then masks out).

tests/test_rllib_runner.py checks the train batch against RLlib's own PPO pipeline run on the
same episodes. Measured with ``scripts/bench_rllib.py``: docs/LIBRARIES.md.

``training.adapters.rllib.algorithm_config`` sets both for ``env: batched``
(``env_runner_cls``, ``learner_connector`` with ``add_default_connectors_to_learner_pipeline``
off). The runner samples by time steps (``batch_mode="truncate_episodes"``, PPO's), which is
all PPO asks of it.
"""

from __future__ import annotations

import math
import time
import uuid
from typing import Any

import numpy as np
import torch
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.evaluation.postprocessing import Postprocessing

#: The extra model outputs each step carries to the learner.
COLUMNS = (Columns.ACTION_LOGP, Columns.ACTION_DIST_INPUTS, Postprocessing.ADVANTAGES,
           Postprocessing.VALUE_TARGETS)


class ScatBatchEnvRunner(SingleAgentEnvRunner):
    """The module docstring's env runner. Its env must be :class:`ScatBatchVectorEnv`."""

    def __init__(self, *, config: Any, **kwargs: Any) -> None:
        super().__init__(config=config, **kwargs)
        self._obs: np.ndarray | None = None  # every game's current learner view
        self._game_ids: list[str] = []       # the episode id of each game's current game
        self._game_t = np.zeros(0, np.int64)  # its decisions already returned in chunks
        self._game_len = np.zeros(0, np.int64)  # its decisions so far
        self._game_return = np.zeros(0, np.float64)
        self._game_start = np.zeros(0, np.float64)

    def _core(self) -> Any:
        return self.env.unwrapped.core

    def _begin(self) -> None:
        """New games everywhere: on the first sample (seeded by RLlib's env seed) and when a
        reset is forced."""
        first, _ = self.env.reset(seed=self._seed if self._needs_initial_reset else None)
        self._needs_initial_reset = False
        n = self._core().num_envs
        self._obs = np.asarray(first["observations"], np.float32)
        self._game_ids = [uuid.uuid4().hex for _ in range(n)]
        self._game_t = np.zeros(n, np.int64)
        self._game_len = np.zeros(n, np.int64)
        self._game_return = np.zeros(n, np.float64)
        self._game_start = np.full(n, time.time())

    def _policy(self, obs: np.ndarray, mask: np.ndarray, explore: bool, random: bool
                ) -> tuple[np.ndarray, ...]:
        """Actions, their log-probabilities, the action logits and the values of ``obs``."""
        batch = self._batch(obs, mask)
        with torch.no_grad():
            if random:  # uniform over the legal moves
                logits = torch.where(batch[Columns.OBS]["action_mask"] > 0, 0.0, -1e9)
            elif explore:
                logits = self.module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
            else:
                logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            logp_all = torch.log_softmax(logits, -1)
            if explore or random:  # a draw from the categorical of the logits (Gumbel-max)
                noise = -torch.log(-torch.log(torch.rand_like(logp_all).clamp_(1e-20, 1.0)))
                actions = (logp_all + noise).argmax(-1)
            else:
                actions = logp_all.argmax(-1)
            logp = logp_all.gather(-1, actions[:, None])[:, 0]
            values = self.module.compute_values(batch)
        return (actions.cpu().numpy(), logp.cpu().numpy(), logits.cpu().numpy(),
                values.cpu().numpy())

    def _batch(self, obs: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
        """The module's input: the views and their masks, on the runner's device."""
        return {Columns.OBS: {"observations": torch.from_numpy(obs).to(self._device),
                              "action_mask": torch.from_numpy(mask).to(self._device)}}

    def _values(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.module.compute_values(self._batch(obs, mask)).cpu().numpy()

    def _sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None,
                explore: bool, random_actions: bool = False, force_reset: bool = False
                ) -> list[SingleAgentEpisode]:
        if num_timesteps is None:
            raise ValueError("ScatBatchEnvRunner samples by time steps (batch_mode "
                             "'truncate_episodes', PPO's), not by episodes")
        if force_reset or self._needs_initial_reset or self._obs is None:
            self._begin()
        core = self._core()
        n, width, n_actions = core.num_envs, core.obs_size, self.env.single_action_space.n
        steps = max(1, math.ceil(num_timesteps / n))
        obs = np.empty((n, steps + 1, width), np.float32)
        mask = np.empty((n, steps + 1, n_actions), np.float32)
        logits = np.empty((n, steps, n_actions), np.float32)
        actions = np.empty((n, steps), np.int64)
        logp = np.empty((n, steps), np.float32)
        values = np.empty((n, steps + 1), np.float32)
        rewards = np.empty((n, steps), np.float32)
        done = np.empty((n, steps), bool)
        cut = np.zeros((n, steps), bool)
        end_value = np.zeros((n, steps), np.float32)  # bootstrap of a game cut at the cap
        last_views: list[np.ndarray] = []  # each ended game's last view, by step
        ended = np.zeros((n, steps), np.int64)  # their rows in last_views, concatenated
        n_views = 0
        finished: list[tuple[int, float, float]] = []  # (length, return, seconds) of games
        # fresh arrays each sample: the episodes returned hold slices of them
        current = self._obs
        for t in range(steps):
            obs[:, t] = current
            mask[:, t] = core.action_masks()
            a, lp, lg, v = self._policy(obs[:, t], mask[:, t], explore, random_actions)
            actions[:, t], logp[:, t], logits[:, t], values[:, t] = a, lp, lg, v
            step = core.step(a)
            rewards[:, t], done[:, t], cut[:, t] = step.rewards, step.done, step.truncated
            self._game_return += step.rewards
            self._game_len += 1
            if step.done.any():
                games = np.flatnonzero(step.done)
                ended[games, t] = np.arange(n_views, n_views + len(games))
                n_views += len(games)
                last_views.append(step.terminal_obs[games])
                if step.truncated.any():
                    views = step.terminal_obs[step.truncated]
                    end_value[step.truncated, t] = self._values(
                        views, np.zeros((len(views), n_actions), np.float32))
                now = time.time()
                finished.extend(zip(self._game_len[games].tolist(),
                                    self._game_return[games].tolist(),
                                    (now - self._game_start[games]).tolist(), strict=True))
                self._game_len[games] = 0
                self._game_return[games] = 0.0
                self._game_start[games] = now
            current = step.obs
        obs[:, steps] = current
        mask[:, steps] = core.action_masks()
        values[:, steps] = self._values(current, mask[:, steps])
        self._obs = current
        advantages, targets = self._gae(values, rewards, done, cut, end_value)
        views = (np.concatenate(last_views)[ended[done]] if last_views
                 else np.zeros((0, width), np.float32))  # in np.nonzero(done)'s order
        episodes = self._episodes(obs, mask, actions, rewards, done, cut, views,
                                  (logp, logits, advantages, targets))
        self._log_metrics(n * steps, finished)
        return episodes

    def _gae(self, values: np.ndarray, rewards: np.ndarray, done: np.ndarray,
             cut: np.ndarray, end_value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """GAE(lambda) over ``[games, steps]``; the returns are the value targets."""
        gamma, lam = float(self.config.gamma), float(self.config.lambda_)
        nxt = np.where(done, np.where(cut, end_value, 0.0), values[:, 1:])
        delta = rewards + gamma * nxt - values[:, :-1]
        carry = (~done).astype(np.float32) * (gamma * lam)
        advantages = np.empty_like(rewards)
        last = np.zeros(rewards.shape[0], np.float32)
        for t in range(rewards.shape[1] - 1, -1, -1):
            last = delta[:, t] + carry[:, t] * last
            advantages[:, t] = last
        return advantages, advantages + values[:, :-1]

    def _episodes(self, obs: np.ndarray, mask: np.ndarray, actions: np.ndarray,
                  rewards: np.ndarray, done: np.ndarray, cut: np.ndarray,
                  last_views: np.ndarray, extra: tuple[np.ndarray, ...]
                  ) -> list[SingleAgentEpisode]:
        """One ``SingleAgentEpisode`` per game segment of this sample, from array slices:
        each game that ended (its last view from ``last_views``, in ``np.nonzero(done)``'s
        order), then each game still going (its next view is the chunk's last)."""
        steps = actions.shape[1]
        games, ends = np.nonzero(done)
        first = np.ones(len(games), bool)
        first[1:] = games[1:] != games[:-1]
        starts = np.where(first, 0, np.concatenate([[0], ends[:-1] + 1]))
        out: list[SingleAgentEpisode] = []
        no_moves = np.zeros((1, mask.shape[2]), np.float32)
        for k, (g, start, end) in enumerate(zip(games.tolist(), starts.tolist(),
                                                ends.tolist(), strict=True)):
            stop = end + 1
            view = {"observations": np.concatenate([obs[g, start:stop], last_views[k:k + 1]]),
                    "action_mask": np.concatenate([mask[g, start:stop], no_moves])}
            trunc = bool(cut[g, end])
            out.append(self._episode(g, start, stop, view, actions, rewards, extra,
                                     terminated=not trunc, truncated=trunc))
            self._game_ids[g] = uuid.uuid4().hex
            self._game_t[g] = 0
        tails = np.zeros(actions.shape[0], np.int64)
        tails[games] = ends + 1  # nonzero's order: the last end of a game is written last
        for g, start in enumerate(tails.tolist()):
            if start < steps:
                view = {"observations": obs[g, start:], "action_mask": mask[g, start:]}
                out.append(self._episode(g, start, steps, view, actions, rewards, extra,
                                         terminated=False, truncated=False))
                self._game_t[g] += steps - start
        return out

    def _episode(self, g: int, start: int, stop: int, view: dict[str, np.ndarray],
                 actions: np.ndarray, rewards: np.ndarray, extra: tuple[np.ndarray, ...],
                 terminated: bool, truncated: bool) -> SingleAgentEpisode:
        return SingleAgentEpisode(
            id_=self._game_ids[g], observations=InfiniteLookbackBuffer(view),
            actions=InfiniteLookbackBuffer(actions[g, start:stop]),
            rewards=InfiniteLookbackBuffer(rewards[g, start:stop]),
            infos=[{}] * (stop - start + 1),
            extra_model_outputs={k: InfiniteLookbackBuffer(col[g, start:stop])
                                 for k, col in zip(COLUMNS, extra, strict=True)},
            terminated=terminated, truncated=truncated, t_started=int(self._game_t[g]),
            len_lookback_buffer=0)

    def _log_metrics(self, num_steps: int, finished: list[tuple[int, float, float]]) -> None:
        """RLlib's sample counters, and its episode metrics over the last finished games."""
        self._increase_sampled_metrics(num_steps, len(finished))
        window = max(1, math.ceil(self.config.metrics_num_episodes_for_smoothing
                                  / (self.config.num_env_runners or 1)))
        for length, ret, seconds in finished[-window:]:
            self._log_episode_metrics(length, ret, seconds)


class ScatBatchColumns(ConnectorV2):
    """The module docstring's learner connector: the train batch of RLlib's default module
    from :class:`ScatBatchEnvRunner`'s episodes, advantages standardised."""

    def __call__(self, *, rl_module: Any, batch: dict[str, Any], episodes: list[Any],
                 explore: bool | None = None, shared_data: dict | None = None,
                 metrics: Any = None, **kwargs: Any) -> Any:
        parts = [e.observations.data for e in episodes]
        columns: dict[str, Any] = {
            Columns.OBS: {key: np.concatenate([p[key][:-1] for p in parts])
                          for key in ("observations", "action_mask")},
            Columns.ACTIONS: np.concatenate([e.actions.data for e in episodes]),
        }
        for key in COLUMNS:
            columns[key] = np.concatenate([e.extra_model_outputs[key].data for e in episodes])
        adv = columns[Postprocessing.ADVANTAGES]
        columns[Postprocessing.ADVANTAGES] = (adv - adv.mean()) / max(1e-4, float(adv.std()))
        device = next(rl_module[DEFAULT_MODULE_ID].parameters()).device
        return {DEFAULT_MODULE_ID: _tensors(columns, device)}


def _tensors(tree: Any, device: torch.device) -> Any:
    if isinstance(tree, dict):
        return {k: _tensors(v, device) for k, v in tree.items()}
    return torch.from_numpy(np.ascontiguousarray(tree)).to(device)
