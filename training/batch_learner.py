"""One learning seat per game against batched opponents: the library-free core of every
standard-library adapter over the batched engine.

:class:`BatchLearnerEnv` is ``num_envs`` games of :class:`scat_env.batch.BatchEnv` seen from
one seat each, the *learner* (a new random seat every game). The other seats are played
inside it by batched baselines (``greedy``, ``expert``, ``random``, ``threshold:K``, one kind
drawn per game, by weight when ``opponents`` is a mapping of spec to weight), so a step takes one action per game and returns at the learner's next
decision in every game. It speaks numpy only: SB3's ``VecEnv``
(:class:`training.batch_vec_env.BatchVecEnv`), TorchRL's ``EnvBase`` and RLlib's env runner
wrap it, each in that library's conventions, and all of them train on the same games, the
same observation and the same rewards.

- **Observation**: float32 ``[num_envs, obs_size]``: the one-hot of each card's code in the
  compact observation, the dense inputs of :func:`agents.compact.dense_inputs` sized for
  ``max_players`` seats, then the rules' observation pieces (calls, golf, points races;
  :func:`agents.compact.piece_inputs`). What ``sb3:`` plays from a view
  (:func:`agents.compact.view_inputs`) is this same vector.
- **Masks**: :meth:`BatchLearnerEnv.action_masks`, bool ``[num_envs, 67]``.
- **Rewards**: the learner's game reward as ``env()`` pays it (+1 for the win, -1/(n-1) when
  knocked out), summed over the opponents' moves, plus ``hand_reward`` times the zero-sum
  lives shaping of every hand scored (:func:`lives_shaping`, the batched trainer's). A reward
  that arrives after an episode ended and before the learner's first move of the next one
  (a dealt 31) is paid with that first move.
- **Episodes** end when the learner is knocked out (the rest of that game pays the learner
  nothing, so a new game replaces it at once) or the game ends; a game cut by the turn cap
  is ``truncated``. ``terminal_obs`` holds the learner's last view when it was knocked out and
  the next game's first view otherwise (the engine deals the next game at once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agents.batch_expert import BatchExpert
from agents.compact import pieces_width, table_pieces, vector_inputs, vector_size
from scat_env.actions import NUM_ACTIONS
from scat_env.batch import BatchEnv
from scat_env.batch.kernels import CUR
from scat_env.rules import DEFAULT_MAX_TURNS, MAX_PLAYERS

#: The opponents this env plays batched, by spec.
BATCH_OPPONENT_SPECS = ("greedy", "expert", "random", "threshold:K (K 17..31)",
                        "threshold:never")

_RANDOM = -2  # opponent code: random legal moves (threshold codes are K >= 0, or -1 never)
_EXPERT = -3  # expert's moves (agents.batch_expert)


def opponent_code(spec: str) -> int:
    """The batched opponent ``spec`` as a code; anything else is one ``ValueError``."""
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
    raise ValueError(f"batched opponents are {', '.join(BATCH_OPPONENT_SPECS)}; got {spec!r}")


def lives_shaping(out: dict[str, np.ndarray], coef: float) -> np.ndarray:
    """``coef * (mean lives lost by the others - lives I lost)`` for every seat of every
    game whose hand was scored by this step, [B, n] float32 (zero elsewhere): the batched
    form of :func:`scat_env.rewards.hand_shaping`, over the seats dealt into that hand."""
    lost = out["lives_lost"].astype(np.float32)
    seated = (out["lives"] > 0) | (lost > 0)  # in the hand(s) that ended
    k = np.maximum(seated.sum(axis=1, keepdims=True) - 1, 1)
    others = (lost.sum(axis=1, keepdims=True) - lost) / k
    return coef * (others - lost) * seated


def points_shaping(before: np.ndarray, after: np.ndarray, done: np.ndarray,
                   coef: float) -> np.ndarray:
    """``coef * (points I won - mean points the others won)`` this step, for every seat of
    every points race still going, [B, n] float32: a race's form of :func:`lives_shaping`.
    A race pays only at its end, and a hand of it costs nobody a life, so without this a
    learner hears nothing of the hands it wins until the race is decided (docs/TRAINING.md,
    "A points race, hand by hand"). ``before`` and ``after`` are :meth:`BatchEnv.race_points` around the
    step; a game that ended (``done``) has restarted and pays here nothing (its result
    pays it)."""
    won = (after - before).astype(np.float32) * ~done[:, None]
    n = won.shape[1]
    others = (won.sum(axis=1, keepdims=True) - won) / max(n - 1, 1)
    return coef * (won - others)


@dataclass
class Transition:
    """What one :meth:`BatchLearnerEnv.step` returns, each row one game.

    ``obs`` is the learner's next decision (in a new game where ``done``); ``terminal_obs``
    the learner's view at the end of the episode, read only where ``done``."""

    obs: np.ndarray           # [B, D] float32
    rewards: np.ndarray       # [B] float32
    done: np.ndarray          # [B] bool: the episode ended (terminated or truncated)
    truncated: np.ndarray     # [B] bool: ended by the turn cap
    terminal_obs: np.ndarray  # [B, D] float32

    FIELDS = ("obs", "rewards", "done", "truncated", "terminal_obs")


class BatchLearnerEnv:
    """The module docstring's env."""

    def __init__(self, num_envs: int, num_players: int, rules: str = "standard", seed: int = 0,
                 opponents: Sequence[str] | Mapping[str, float] = ("greedy",),
                 max_turns: int = DEFAULT_MAX_TURNS,
                 max_players: int | None = None, hand_reward: float = 0.0) -> None:
        m = num_players if max_players is None else max_players
        if not num_players <= m <= MAX_PLAYERS:
            raise ValueError(f"max_players must be from num_players ({num_players}) to "
                             f"{MAX_PLAYERS}, got {max_players}")
        if not opponents:
            raise ValueError("a batched learner env needs at least one opponent spec")
        self.codes = np.array([opponent_code(s) for s in opponents], np.int64)
        weights = np.array(list(opponents.values()) if isinstance(opponents, Mapping)
                           else [1.0] * len(self.codes), np.float64)
        if not (np.isfinite(weights).all() and (weights >= 0).all() and weights.sum() > 0):
            raise ValueError(f"opponent weights must be >= 0 with a positive sum, got "
                             f"{dict(opponents) if isinstance(opponents, Mapping) else weights}")
        #: The chance of each opponent kind in a new game (None: each alike).
        self.odds = weights / weights.sum() if isinstance(opponents, Mapping) else None
        self.env = BatchEnv(num_envs, num_players, rules, seed, max_turns=max_turns)
        self.expert = BatchExpert(self.env.rules) if _EXPERT in self.codes else None
        self.num_envs = num_envs
        self.n = num_players
        self.max_players = m
        self.hand_reward = float(hand_reward)
        self.rules = self.env.rules
        self.start_lives = self.rules.start_lives
        self.rng = np.random.default_rng(seed)
        self.learner = np.zeros(num_envs, np.int64)
        self.opponent = np.zeros(num_envs, np.int64)
        self.carry = np.zeros(num_envs, np.float32)
        self._games = np.arange(num_envs)
        #: The observation's width: the base vector, then the rules' pieces.
        self.obs_size = vector_size(m) + pieces_width(table_pieces(self.rules))
        self.num_actions = NUM_ACTIONS

    # -- what the learner sees -----------------------------------------------------------
    def encode(self, obs: np.ndarray) -> np.ndarray:
        """Compact observations [k, D_engine] as the learner's float32 vectors [k, obs_size]."""
        feats = self.env.hand_features(obs)
        return vector_inputs(obs, feats, self.n, self.start_lives, self.max_players, self.rules)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool [num_envs, 67] (a copy)."""
        return self.env._mask.copy()

    # -- the games ------------------------------------------------------------------------
    def _new_seats(self, games: np.ndarray) -> None:
        self.learner[games] = self.rng.integers(self.n, size=len(games))
        self.opponent[games] = self.rng.choice(self.codes, size=len(games), p=self.odds)

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

    def teacher_actions(self, spec: str) -> np.ndarray:
        """The batched baseline ``spec``'s move for the learner in every game (each game
        waits for its learner between steps): the teacher of an imitation warm start
        (:mod:`training.imitation`)."""
        code = opponent_code(spec)
        if code == _RANDOM:
            return self.env.random_actions()
        if code == _EXPERT:
            if self.expert is None:
                self.expert = BatchExpert(self.rules)
            return self.expert.actions(self.env)
        return self.env.threshold_actions(None if code < 0 else int(code))

    def _rewards(self, out: dict[str, np.ndarray]) -> np.ndarray:
        r = out["rewards"][self._games, self.learner]
        if self.hand_reward:
            r = r + lives_shaping(out, self.hand_reward)[self._games, self.learner]
        return r

    def _advance(self, rewards: np.ndarray, done: np.ndarray, trunc: np.ndarray,
                 terminal: np.ndarray) -> np.ndarray:
        """Opponents move until every game waits for its learner; an episode that ends on
        the way is closed (``done``) and the next one begins. Returns the rows of ``done``
        whose terminal view is the next game's first (filled by the caller)."""
        env = self.env
        lives = env._lives  # live arrays of the env, current after every step
        mover = env._sc[:, CUR]  # the player to move
        open_ = ~done
        fill_later = done.copy()
        while True:
            alive = lives[self._games, self.learner] > 0
            out_now = open_ & ~alive
            if out_now.any():  # knocked out: the episode ends; a new game replaces this one
                views = env.observe_all()
                rows = np.flatnonzero(out_now)
                terminal[rows] = self.encode(views[rows, self.learner[rows]])
                done |= out_now
                open_ &= ~out_now
                env.restart(out_now)
                self._new_seats(rows)
                self.carry[out_now] = 0.0
                continue
            waiting = (mover == self.learner) & alive
            if waiting.all():
                return fill_later
            out = env.step(self._opponent_actions(), skip=waiting)
            r = self._rewards(out)
            rewards += np.where(open_, r, 0.0)
            ended = out["done"]
            self.carry += np.where(open_ | ended, 0.0, r)
            for g in np.flatnonzero(ended):
                if open_[g]:
                    done[g] = True
                    open_[g] = False
                    trunc[g] = bool(out["truncated"][g])
                    fill_later[g] = True
                self.carry[g] = 0.0
                self._new_seats(np.array([g]))

    def reset(self) -> np.ndarray:
        """New games everywhere; the learner's first observation in each, [B, obs_size]."""
        self.env.reset()
        self._new_seats(self._games)
        self.carry[:] = 0.0
        rewards = np.zeros(self.num_envs, np.float32)
        B = self.num_envs
        self._advance(rewards, np.zeros(B, bool), np.zeros(B, bool),
                      np.zeros((B, self.obs_size), np.float32))
        self.carry += rewards
        return self.encode(self.env._obs)

    def step(self, actions: np.ndarray, skip: np.ndarray | None = None) -> Transition:
        """The learner's ``actions`` (one per game, legal), then the opponents' moves until
        the learner is to move again everywhere. ``skip`` ([B] bool, optional): games that
        wait this step (their action is not read; they return their current view, no reward
        and no end): how an adapter with gymnasium's next-step autoreset returns a new
        game's first view one step after the last one's end."""
        env = self.env
        out = env.step(np.asarray(actions, np.int64), skip=skip)
        if skip is None:
            rewards = self.carry + self._rewards(out)
            self.carry[:] = 0.0
        else:  # a waiting game keeps what it carries for its learner's next move
            rewards = np.where(skip, 0.0, self.carry + self._rewards(out)).astype(np.float32)
            self.carry[~skip] = 0.0
        done = out["done"].copy()
        trunc = out["truncated"] & done
        for g in np.flatnonzero(done):
            self._new_seats(np.array([g]))
        terminal = np.zeros((self.num_envs, self.obs_size), np.float32)
        fill_later = self._advance(rewards, done, trunc, terminal)
        obs = self.encode(env._obs)
        terminal[fill_later] = obs[fill_later]
        return Transition(obs, rewards.astype(np.float32), done, trunc, terminal)
