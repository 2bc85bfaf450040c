"""Rollout collection for the native trainer: many games in lockstep, one batched forward pass.

:class:`Runner` steps ``parallel_games`` games together. Each step every game makes exactly
one decision; the decisions of all seats played by the learner are encoded and sent through
the network in ONE batched forward pass (torch's per-call overhead is paid once per step, not
once per decision), and every learner decision is a training sample.

- Each (game, seat) played by the learner is its own trajectory (a list of sample indices
  into the buffer). Rewards reach a seat when its result is known, wherever in the game that
  happens: :func:`scat_env.rewards.hand_rewards` for every scored hand (the hand shaping,
  -1/(n-1) to a seat knocked out, +1 to the winner), even if another seat made the move.
- A game cut at ``max_turns`` turns in one hand is truncated: its trajectories end with no
  result and no bootstrap.
- A trajectory still running at the end of a rollout keeps its last sample back: the earlier
  samples bootstrap from its value, and it joins the next rollout (so no sample is ever
  bootstrapped from a made-up observation). :mod:`training.ppo` computes the advantages
  (:meth:`Runner.trajectories`), then :meth:`Runner.take_batch` hands them over.
- Opponents: one random seat of a new game is the learner; each other seat is drawn from
  ``opponents``: ``self`` (the learner again, also trained on), ``snapshot`` (a frozen past
  copy of the learner) or any agent spec of :mod:`agents.registry`. Player counts are drawn
  from ``player_counts``. This keeps self-play from collapsing onto one style and makes the
  policy play any table.

The runner is picklable: the checkpoint holds it (games, trajectories, RNG states), so
``--resume`` continues exactly.
"""

from __future__ import annotations

import random
import warnings
from collections import deque
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.neural.encoding import PaddedEncoder
from agents.neural.forward import NumpyPolicy
from agents.registry import make_agent
from scat_env import GameState, Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.rewards import hand_rewards
from scat_env.view import make_view

from .config import PPOConfig

#: Who plays a seat. HANDOFF: a learner seat now played by ``PPOConfig.handoff`` (the seat's
#: rewards still reach the learner's trajectory).
SELF, SNAPSHOT, AGENT, HANDOFF = 0, 1, 2, 3


def snapshot_logits(snap: NumpyPolicy, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A frozen snapshot's masked logits for a batch, computed with torch so the matmuls
    obey ``torch.set_num_threads`` (numpy's BLAS may spin extra threads, which on a shared
    2-core box made this ~30x slower, measured)."""
    with torch.no_grad():
        h = torch.from_numpy(obs)
        for w, b in snap.weights:
            h = torch.relu(h @ torch.from_numpy(w) + torch.from_numpy(b))
        out = h @ torch.from_numpy(snap.pi_w) + torch.from_numpy(snap.pi_b)
        out += torch.from_numpy(snap.skip(obs))
        return out.masked_fill(~torch.from_numpy(mask), -1e9).numpy()


def privileged_size(max_players: int) -> int:
    """Size of :func:`encode_privileged`: a hand per other relative seat, plus the stock."""
    return 52 * max_players


def encode_privileged(state: GameState, seat: int, max_players: int, out: np.ndarray) -> None:
    """The hidden part of the state, for the privileged critic only: the hand of each
    other seat by relative seat (1 = on my left, as in the observation), then the set of
    cards in the stock. ``out`` must be zero."""
    n = state.num_players
    hands = state.hands
    for r in range(1, n):
        base = (r - 1) * 52
        for c in hands[(seat + r) % n]:
            out[base + c] = 1.0
    base = (max_players - 1) * 52
    for c in state.stock:
        out[base + c] = 1.0


def check_handoff(cfg: PPOConfig) -> None:
    """Refuse a hand-off agent that cannot be built now (a new run or a resume), not when the
    first game gets that far."""
    if cfg.handoff is None:
        return
    try:
        make_agent(cfg.handoff, seed=0)
    except ValueError as exc:
        raise ValueError(f"ppo config: handoff {cfg.handoff!r}: {exc}") from None


class Slot:
    """One running game and who plays each seat."""

    __slots__ = ("state", "n", "kinds", "players", "trajs", "seen")

    def __init__(self, state: GameState, kinds: list[int], players: list[Any]) -> None:
        self.state = state
        self.n = state.num_players
        self.kinds = kinds  # SELF / SNAPSHOT / AGENT / HANDOFF per seat
        self.players = players  # snapshot index or Agent per seat (None for SELF)
        self.trajs: list[list[int] | None] = [[] if k == SELF else None for k in kinds]
        self.seen = len(state.results)


class Runner:
    """Collects learner samples from ``parallel_games`` lockstep games. Picklable."""

    priv: list[np.ndarray] | None = None  # privileged critic inputs (None: no such critic)

    def __init__(self, cfg: PPOConfig, rules: Rules, seed: int) -> None:
        self.cfg = cfg
        self.rules = rules
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.encoder = PaddedEncoder(rules, cfg.max_players, advice=cfg.advice)
        self.snapshots: deque[NumpyPolicy] = deque(maxlen=cfg.snapshot_pool)
        self.opponent_names, self.opponent_weights = self._opponent_table()
        check_handoff(cfg)
        self.count_weights = cfg.player_weights or [1.0] * len(cfg.player_counts)
        self.env_steps = 0
        self.games_done = 0
        self.wins: deque[tuple[int, float]] = deque(maxlen=500)  # (players, learner won)
        self.reset_buffer()
        self.slots = [self._new_slot() for _ in range(cfg.parallel_games)]

    def _opponent_table(self) -> tuple[list[str], list[float]]:
        """The usable opponent names and weights (an agent spec that cannot be built is
        skipped with a warning, so one missing policy file does not stop a long run)."""
        names, weights = [], []
        for name, w in self.cfg.opponents.items():
            if w <= 0:
                continue
            if name not in ("self", "snapshot"):
                try:
                    make_agent(name, seed=0)
                except ValueError as exc:
                    warnings.warn(f"opponent {name!r} skipped: {exc}", stacklevel=2)
                    continue
            names.append(name)
            weights.append(w)
        if not names:
            raise ValueError("ppo config: no usable opponent in 'opponents'")
        return names, weights

    # -- the sample buffer -----------------------------------------------------------------
    def reset_buffer(self) -> None:
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.actions: list[int] = []
        self.logps: list[float] = []
        self.values: list[float] = []
        self.rewards: list[float] = []
        self.dones: list[bool] = []
        self.finished: list[list[int]] = []  # closed trajectories of this rollout
        self.new_samples = 0
        self.priv = [] if self.cfg.privileged_critic else None

    def _add(self, obs: np.ndarray, mask: np.ndarray, action: int, logp: float, value: float,
             priv: np.ndarray | None = None) -> int:
        if self.priv is not None:
            self.priv.append(priv)
        self.obs.append(obs)
        self.masks.append(mask)
        self.actions.append(action)
        self.logps.append(logp)
        self.values.append(value)
        self.rewards.append(0.0)
        self.dones.append(False)
        return len(self.actions) - 1

    # -- games -----------------------------------------------------------------------------
    def _new_slot(self) -> Slot:
        cfg, rng = self.cfg, self.rng
        n = rng.choices(cfg.player_counts, weights=self.count_weights)[0]
        state = GameState(n, self.rules, seed=rng.getrandbits(62))
        # Drawn only when the option is on, so runs without it keep their random stream.
        if cfg.random_lives and rng.random() < cfg.random_lives:
            state.lives = [rng.randint(1, self.rules.start_lives) for _ in range(n)]
        learner = rng.randrange(n)
        kinds, players = [], []
        for s in range(n):
            name = "self" if s == learner else rng.choices(
                self.opponent_names, weights=self.opponent_weights)[0]
            if name == "snapshot" and not self.snapshots:
                name = "self"
            if name == "self":
                kinds.append(SELF)
                players.append(None)
            elif name == "snapshot":
                kinds.append(SNAPSHOT)
                players.append(rng.randrange(len(self.snapshots)))
            else:
                kinds.append(AGENT)
                players.append(make_agent(name, seed=rng.getrandbits(62)))
        return Slot(state, kinds, players)

    def _hand_off(self, slot: Slot) -> None:
        """Give every learner seat of ``slot`` to the hand-off agent. Their trajectories stay
        open, so the seats' later hand rewards and game result reach their last samples."""
        for s, kind in enumerate(slot.kinds):
            if kind == SELF:
                slot.kinds[s] = HANDOFF
                # ppo: files are read once per process (agents.policy), so this is cheap.
                slot.players[s] = make_agent(self.cfg.handoff, seed=self.rng.getrandbits(62))

    def _close(self, slot: Slot, seat: int) -> None:
        """End ``seat``'s trajectory: its last sample is terminal (no bootstrap)."""
        traj = slot.trajs[seat]
        self.dones[traj[-1]] = True  # type: ignore[index]
        self.finished.append(traj)  # type: ignore[arg-type]
        slot.trajs[seat] = None

    def _settle(self, slot: Slot, hand_reward: float) -> bool:
        """Deliver the rewards of newly scored hands; True when the game is over or cut."""
        state = slot.state
        while slot.seen < len(state.results):
            res = state.results[slot.seen]
            slot.seen += 1
            rewards = hand_rewards(res, slot.n, reward="game", shaping=self.cfg.shaping,
                                   shaping_coef=hand_reward)
            for s, traj in enumerate(slot.trajs):
                if traj:
                    self.rewards[traj[-1]] += rewards.get(s, 0.0)
                    if s in res.eliminated:  # the seat's game is over: that was its result
                        self._close(slot, s)
        over = state.is_terminal()
        if not over and state.turn < self.cfg.max_turns:
            return False
        # Over: the winner's +1 came with the last hand. Cut: no result, no bootstrap.
        for s, traj in enumerate(slot.trajs):
            if traj:
                self._close(slot, s)
        learners = [s for s, kind in enumerate(slot.kinds) if kind in (SELF, HANDOFF)]
        if len(learners) < slot.n:  # only games against others say something about strength
            won = over and any(state.active[s] for s in learners)
            self.wins.append((slot.n, 1.0 if won else 0.0))
        self.games_done += 1
        return True

    # -- one lockstep step -----------------------------------------------------------------
    def _who_decides(self) -> tuple[list[tuple[int, int]], dict[int, list[tuple[int, int]]],
                                    dict[int, int]]:
        """Sort this step's decisions: (slot, seat) rows for the learner, rows per snapshot,
        and the actions of the seats played by agents (chosen here)."""
        rows: list[tuple[int, int]] = []
        snap_rows: dict[int, list[tuple[int, int]]] = {}
        chosen: dict[int, int] = {}
        handoff_at = self.cfg.handoff_players if self.cfg.handoff is not None else 0
        for i, slot in enumerate(self.slots):
            state = slot.state
            seat = state.current_player
            kind = slot.kinds[seat]
            if kind == SELF and sum(state.active) <= handoff_at:
                self._hand_off(slot)
                kind = HANDOFF
            if kind == AGENT or kind == HANDOFF:
                chosen[i] = slot.players[seat].act(make_view(state, seat))
            elif kind == SELF:
                rows.append((i, seat))
            else:
                snap_rows.setdefault(slot.players[seat], []).append((i, seat))
        return rows, snap_rows, chosen

    def _encode(self, group: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """Observations and legal-action masks of the (slot, seat) rows of ``group``."""
        obs = np.zeros((len(group), self.encoder.size), dtype=np.float32)
        mask = np.zeros((len(group), NUM_ACTIONS), dtype=bool)
        for j, (i, seat) in enumerate(group):
            state = self.slots[i].state
            self.encoder.encode(make_view(state, seat), obs[j])
            mask[j, state.legal_actions()] = True
        return obs, mask

    def _learner_moves(self, net: nn.Module, critic: nn.Module | None,
                       rows: list[tuple[int, int]], chosen: dict[int, int]) -> None:
        """Sample the learner's actions for ``rows`` in one forward pass; store the samples."""
        obs, mask = self._encode(rows)
        priv = None
        if critic is not None:
            priv = np.zeros((len(rows), privileged_size(self.cfg.max_players)), dtype=np.float32)
            for j, (i, seat) in enumerate(rows):
                encode_privileged(self.slots[i].state, seat, self.cfg.max_players, priv[j])
        with torch.no_grad():
            logits, value = net(torch.from_numpy(obs), torch.from_numpy(mask))
            if critic is not None:
                value = critic(torch.from_numpy(obs), torch.from_numpy(priv))
            dist = torch.distributions.Categorical(logits=logits)
            act = dist.sample()
            logp = dist.log_prob(act)
        act_l, logp_l, val_l = act.tolist(), logp.tolist(), value.tolist()
        for j, (i, seat) in enumerate(rows):
            k = self._add(obs[j], mask[j], act_l[j], logp_l[j], val_l[j],
                          None if priv is None else priv[j])
            self.slots[i].trajs[seat].append(k)  # type: ignore[union-attr]
            chosen[i] = act_l[j]
        self.new_samples += len(rows)

    def _snapshot_moves(self, snap: NumpyPolicy, rows: list[tuple[int, int]],
                        chosen: dict[int, int]) -> None:
        """Sample a frozen snapshot's actions for ``rows`` (not training samples)."""
        obs, mask = self._encode(rows)
        logits = snapshot_logits(snap, obs, mask).astype(np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        u = self.np_rng.random(len(rows))[:, None]
        acts = (p.cumsum(axis=1) < u).sum(axis=1)
        for j, (i, _seat) in enumerate(rows):
            a = int(min(acts[j], NUM_ACTIONS - 1))
            if not mask[j, a]:  # float round-off at the top of the cdf
                a = int(np.flatnonzero(mask[j])[-1])
            chosen[i] = a

    def collect(self, net: nn.Module, hand_reward: float, critic: nn.Module | None = None) -> None:
        """Step all games until ``rollout_samples`` new learner samples are in the buffer.
        With a ``critic`` (privileged) the sample values come from it, not from ``net``."""
        while self.new_samples < self.cfg.rollout_samples:
            rows, snap_rows, chosen = self._who_decides()
            if rows:
                self._learner_moves(net, critic, rows, chosen)
            for snap, group in snap_rows.items():
                self._snapshot_moves(self.snapshots[snap], group, chosen)
            for i, action in chosen.items():
                slot = self.slots[i]
                slot.state.apply_action(action)
                self.env_steps += 1
                if self._settle(slot, hand_reward):
                    self.slots[i] = self._new_slot()

    # -- handing the rollout to the update -------------------------------------------------
    def _open(self) -> list[tuple[Slot, int, list[int]]]:
        return [(slot, s, t) for slot in self.slots for s, t in enumerate(slot.trajs) if t]

    def trajectories(self) -> list[tuple[list[int], int | None]]:
        """Every trajectory in the buffer as (sample indices, index of the sample to bootstrap
        from or None): the finished ones first, then the open ones, whose last sample is the
        bootstrap and stays for the next rollout."""
        return ([(t, None) for t in self.finished]
                + [(t, t[-1]) for _, _, t in self._open()])

    def take_batch(self, adv: np.ndarray, ret: np.ndarray, use: np.ndarray) -> dict[str, np.ndarray]:
        """The samples marked in ``use`` with their advantages and returns as arrays; empties
        the buffer except the last sample of each open trajectory (kept, with its reward so
        far, as the first sample of the next rollout)."""
        idx = np.flatnonzero(use)
        none = len(idx) == 0
        batch = {
            "obs": np.zeros((0, self.encoder.size), np.float32) if none else np.stack([self.obs[k] for k in idx]),
            "mask": np.zeros((0, NUM_ACTIONS), bool) if none else np.stack([self.masks[k] for k in idx]),
            "actions": np.asarray([self.actions[k] for k in idx], dtype=np.int64),
            "logps": np.asarray([self.logps[k] for k in idx], dtype=np.float32),
            "values": np.asarray([self.values[k] for k in idx], dtype=np.float32),
            "adv": adv[idx],
            "ret": ret[idx],
        }
        if self.priv is not None:
            batch["priv"] = (np.zeros((0, privileged_size(self.cfg.max_players)), np.float32)
                             if none else np.stack([self.priv[k] for k in idx]))
        carried = [(slot, s, t[-1]) for slot, s, t in self._open()]
        old = (self.obs, self.masks, self.actions, self.logps, self.values, self.rewards)
        old_priv = self.priv
        self.reset_buffer()
        for slot, s, k in carried:
            nk = self._add(old[0][k], old[1][k], old[2][k], old[3][k], old[4][k],
                           None if old_priv is None else old_priv[k])
            self.rewards[nk] = old[5][k]
            slot.trajs[s] = [nk]
        return batch
