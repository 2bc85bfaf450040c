"""Native PPO for Scat: one shared policy plays every seat of many games at once.

Read it top to bottom (CleanRL style): the config, the game runner that collects
trajectories, GAE, the PPO update, the training loop with logging, evaluation and
checkpoints.

How the data is collected, and why:

- ``num_games`` GameStates are stepped in lockstep. Each step every game makes exactly one
  decision; the decisions of all seats played by the learner are encoded and sent through
  the network in ONE batched forward pass (the per-call overhead of torch is paid once per
  step, not once per decision). Every learner decision is a training sample.
- Each (game, seat) played by the learner is its own trajectory; GAE runs per trajectory
  with the seat's own next decision as "next state". Rewards reach a seat when its result
  is known, wherever in the game that happens: hand shaping (``hand_reward`` times the
  others' mean lives lost minus mine, or with ``shaping: win_chance`` times the change in
  my expected game result given the lives; :mod:`training.shaping`) when a hand is scored,
  and the game outcome (+1 win, -1/(n-1) loss) when the seat is eliminated or the game
  ends, even if another seat made the final move.
- A trajectory still running at the end of a rollout keeps its last sample back: the
  earlier samples bootstrap from its value, and it joins the next rollout (so no sample
  is ever bootstrapped from a made-up observation).
- Opponents: one random seat of a new game is the learner; each other seat is drawn from
  ``opponents``: ``self`` (the learner again, also trained on), ``snapshot`` (a frozen
  past copy of the learner) or any agent spec of :mod:`agents.registry` (``greedy``,
  ``expert``, ``threshold:25``). Player counts are drawn from ``player_counts``. This
  keeps self-play from collapsing onto one style and makes the policy play any table.

Two options, both off by default:

- ``advice``: the policy's input ends with the expert's move and the card-counting numbers
  behind it (:class:`~training.policy_net.PaddedEncoder`), so the network starts from the
  expert's judgement and learns where to play otherwise.
- ``privileged_critic``: the values for GAE come from a separate :class:`Critic` that also
  sees every hidden hand and the stock. Training only: the policy never sees those cards and
  the critic is never written to policy files.

Everything the loop needs to continue (network, optimizer, RNG states, counters, the
running games and pending trajectories) is in the checkpoint, so ``--resume`` continues
exactly where the last checkpoint was written.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
import random
import sys
import time
import warnings
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from scat_env import GameState, Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.view import make_view

from .policy_net import (
    CHECKPOINT_KIND,
    NumpyPolicy,
    PaddedEncoder,
    PolicyNet,
    atomic_save,
    export_policy,
    layer_init,
    load_file,
    policy_observation_size,
    policy_payload,
    warm_start,
)
from .shaping import check_shaping, hand_rewards


# == 1. Config ===============================================================================
@dataclass
class PPOConfig:
    """Every hyper-parameter of a native run (the YAML ``ppo:`` section maps onto this)."""

    name: str = "default"
    seed: int = 1
    rules: str = "standard"  # preset name or a YAML rules file
    player_counts: list[int] = field(default_factory=lambda: [2, 3, 4])
    player_weights: list[float] | None = None  # None: uniform over player_counts
    max_players: int = 6  # observation padded to this many seats (see policy_net)
    advice: bool = False  # append the expert's move and numbers to the input (policy_net)
    advice_gain: float = 3.0  # initial logit bonus of the expert's move (learned from there)
    init_from: str | None = None  # policy file to start from; may grow into a larger net (policy_net.warm_start)
    # A critic that also sees every hand and the stock's cards (training only; see Critic)
    privileged_critic: bool = False
    # updates at the start that train only the value function (a new critic for a policy
    # started with init_from: its first, untrained values would be noisy advantages). With
    # privileged_critic the policy is untouched meanwhile; without it, the trunk it shares
    # with the value head learns from the value loss.
    critic_warmup: int = 0
    # budget: whichever comes first
    total_steps: int = 5_000_000  # learner decisions (training samples)
    time_limit_s: float | None = None
    # data collection
    num_games: int = 128
    rollout_steps: int = 8192  # new learner samples per update
    max_turns: int = 300  # turns in one hand before the game is cut (as agents.match)
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.4, "snapshot": 0.2, "greedy": 0.2, "expert": 0.2})
    snapshot_every: int = 10  # updates between snapshots added to the pool
    snapshot_pool: int = 8
    # reward
    hand_reward: float = 0.1  # coefficient of the per-hand shaping below
    # "lives": zero-sum lives (training.shaping.hand_shaping); "win_chance": potential-based
    # on the expected game result given the lives (win_chance_shaping): it telescopes to
    # the game result, so with gamma near 1 it does not change the best policy
    shaping: str = "lives"
    hand_reward_decay_steps: int | None = None  # linear decay to 0 over this many samples
    # Share of training games that start from uneven lives, each seat's drawn uniformly from
    # 1..start_lives: the positions where bigger games end and a specialist takes over
    # (scat_env.active_view), which a game from full lives reaches only in its last hands.
    random_lives: float = 0.0
    # Hand the learner's seats to a fixed agent (any agent spec, e.g. the policy set's
    # two-player member) once at most ``handoff_players`` players are in. Why: a policy-set
    # member for N players plays only while N are in; at play time the smaller game that
    # follows is the specialist's. With a hand-off, every sample is a position the member
    # really plays, and the value of reaching the smaller game is learnt under the player
    # that will really play it. The seat's game result still reaches its last sample.
    handoff: str | None = None
    handoff_players: int = 2
    # network and optimisation
    hidden: int = 256
    layers: int = 2
    lr: float = 3e-4
    anneal_lr: bool = False
    gamma: float = 0.998
    gae_lambda: float = 0.95
    epochs: int = 4
    minibatch: int = 2048
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = 0.05
    torch_threads: int = 1  # measured: 2 threads on a shared 2-core box is far slower
    # evaluation, logging, checkpoints
    eval_every: int = 25  # updates (0: only at the end)
    eval_games: int = 60  # per (opponent, player count), seats rotated
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "expert"])
    eval_players: list[int] = field(default_factory=lambda: [2, 3, 4])
    final_eval_games: int = 400  # per (opponent, player count), duplicate deals (tournament)
    final_eval_workers: int = 1  # processes for the final evaluation (training itself uses one)
    checkpoint_every: int = 10  # updates
    progress: bool = True

    def __post_init__(self) -> None:
        def bad(msg: str) -> ValueError:
            return ValueError(f"ppo config: {msg}")

        if not self.player_counts or any(
                not isinstance(n, int) or not 2 <= n <= self.max_players for n in self.player_counts):
            raise bad(f"player_counts must be ints in 2..max_players={self.max_players}, "
                      f"got {self.player_counts!r}")
        if self.player_weights is not None and len(self.player_weights) != len(self.player_counts):
            raise bad("player_weights must have one weight per player count")
        if not self.opponents or any(w < 0 for w in self.opponents.values()) or sum(
                self.opponents.values()) <= 0:
            raise bad(f"opponents needs positive weights, got {self.opponents!r}")
        for name in ("num_games", "rollout_steps", "minibatch", "epochs", "hidden", "layers",
                     "total_steps", "torch_threads", "checkpoint_every", "snapshot_pool"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise bad(f"{name} must be a positive int, got {getattr(self, name)!r}")
        if not isinstance(self.critic_warmup, int) or self.critic_warmup < 0:
            raise bad(f"critic_warmup must be an int >= 0, got {self.critic_warmup!r}")
        check_shaping(self.shaping, "ppo config: ")
        if not 0 <= self.random_lives <= 1:
            raise bad(f"random_lives must be a share in [0, 1], got {self.random_lives!r}")
        if not 0 < self.lr < 1:
            raise bad(f"lr must be in (0, 1), got {self.lr}")
        if self.handoff is not None:
            if not isinstance(self.handoff, str) or not self.handoff:
                raise bad(f"handoff must be an agent spec (e.g. ppo:FILE), got {self.handoff!r}")
            if (not isinstance(self.handoff_players, int) or isinstance(self.handoff_players, bool)
                    or not 1 < self.handoff_players < min(self.player_counts)):
                raise bad("handoff_players must be an int from 2 to one less than the smallest "
                          f"player count ({min(self.player_counts)}), got {self.handoff_players!r}")


def make_rules(spec: str) -> Rules:
    if spec.endswith((".yaml", ".yml")):
        return Rules.from_yaml(spec)
    return Rules.preset(spec)


# == 2. The game runner =====================================================================
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


class Critic(nn.Module):
    """Value network for ``privileged_critic``: it reads the policy's observation plus
    :func:`encode_privileged` (every hidden hand, the stock).

    Why: a seat's outcome in Scat hangs on cards it cannot see (will my knock leave me
    lowest?). A critic that sees them predicts returns with far less noise, so the
    advantages that drive the policy are less noisy too. The policy never sees them: it is
    a separate network, used only for GAE during training and never exported to policy
    files (the asymmetric actor-critic of Pinto et al. 2017, as used for Mahjong/DouDizhu).
    """

    def __init__(self, obs_size: int, priv_size: int, hidden: int, layers: int) -> None:
        super().__init__()
        mods: list[nn.Module] = []
        size = obs_size + priv_size
        for _ in range(layers):
            mods += [layer_init(nn.Linear(size, hidden)), nn.ReLU()]
            size = hidden
        self.trunk = nn.Sequential(*mods)
        self.v = layer_init(nn.Linear(hidden, 1), std=1.0)

    def forward(self, obs: torch.Tensor, priv: torch.Tensor) -> torch.Tensor:
        return self.v(self.trunk(torch.cat([obs, priv], dim=1))).squeeze(-1)


def check_handoff(cfg: PPOConfig) -> None:
    """Refuse a hand-off agent that cannot be built now (a new run or a resume), not when the
    first game gets that far."""
    if cfg.handoff is None:
        return
    from agents.registry import make_agent

    try:
        make_agent(cfg.handoff, seed=0)
    except ValueError as exc:
        raise ValueError(f"ppo config: handoff {cfg.handoff!r}: {exc}") from None


# == 2b. The runner =====================================================================
#: HANDOFF: a learner seat now played by ``PPOConfig.handoff`` (still the learner's result).
SELF, SNAPSHOT, AGENT, HANDOFF = 0, 1, 2, 3


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
    """Collects learner samples from ``num_games`` lockstep games. Picklable (checkpoints)."""

    priv: list[np.ndarray] | None = None  # privileged critic inputs (None: no such critic)

    def __init__(self, cfg: PPOConfig, rules: Rules, seed: int) -> None:
        self.cfg = cfg
        self.rules = rules
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.encoder = PaddedEncoder(rules, cfg.max_players, advice=cfg.advice)
        self.snapshots: deque[NumpyPolicy] = deque(maxlen=cfg.snapshot_pool)
        self.opponent_names, self.opponent_weights, self.agent_specs = self._opponent_table()
        check_handoff(cfg)
        weights = cfg.player_weights or [1.0] * len(cfg.player_counts)
        self.count_weights = weights
        self.env_steps = 0
        self.games_done = 0
        self.wins = deque(maxlen=500)  # (num_players, learner seats won fraction)
        self.reset_buffer()
        self.slots = [self._new_slot() for _ in range(cfg.num_games)]

    def _opponent_table(self) -> tuple[list[str], list[float], set[str]]:
        from agents.registry import make_agent

        names, weights, specs = [], [], set()
        for name, w in self.cfg.opponents.items():
            if w <= 0:
                continue
            if name not in ("self", "snapshot"):
                try:
                    make_agent(name, seed=0)
                except ValueError as exc:
                    warnings.warn(f"opponent {name!r} skipped: {exc}", stacklevel=2)
                    continue
                specs.add(name)
            names.append(name)
            weights.append(w)
        if not names:
            raise ValueError("ppo config: no usable opponent in 'opponents'")
        return names, weights, specs

    # -- buffer ------------------------------------------------------------------------
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

    # -- games -------------------------------------------------------------------------
    def _new_slot(self) -> Slot:
        from agents.registry import make_agent

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
        from agents.registry import make_agent

        for s, kind in enumerate(slot.kinds):
            if kind == SELF:
                slot.kinds[s] = HANDOFF
                # ppo: files are read once per process (agents.policy), so this is cheap.
                slot.players[s] = make_agent(self.cfg.handoff, seed=self.rng.getrandbits(62))

    def _settle(self, slot: Slot, hand_reward: float) -> bool:
        """Deliver the rewards of newly scored hands / the game end. True if the game ended."""
        state = slot.state
        results = state.results
        n = slot.n
        while slot.seen < len(results):
            res = results[slot.seen]
            slot.seen += 1
            shaped = hand_rewards(res, n, hand_reward, self.cfg.shaping)
            for s, traj in enumerate(slot.trajs):
                if not traj:
                    continue
                self.rewards[traj[-1]] += shaped.get(s, 0.0)
                if s in res.eliminated:  # the seat's game is over: its final result
                    self.rewards[traj[-1]] += -1.0 / (n - 1)
                    self.dones[traj[-1]] = True
                    self.finished.append(traj)
                    slot.trajs[s] = None
        over = state.is_terminal()
        truncated = not over and state.turn >= self.cfg.max_turns
        if over or truncated:
            won = 0.0
            learners = 0
            for s, traj in enumerate(slot.trajs):
                if slot.kinds[s] in (SELF, HANDOFF):
                    learners += 1
                    if over and state.active[s]:
                        won = 1.0
                if not traj:
                    continue
                if over and state.active[s]:
                    self.rewards[traj[-1]] += 1.0
                self.dones[traj[-1]] = True  # truncated: no result, no bootstrap
                self.finished.append(traj)
            if learners < n:  # only games against others say something about strength
                self.wins.append((n, won))
            self.games_done += 1
            return True
        return False

    def collect(self, net: PolicyNet, hand_reward: float, critic: Critic | None = None) -> None:
        """Step all games until ``rollout_steps`` new learner samples are in the buffer.
        With a ``critic`` (privileged) the sample values come from it, not from ``net``."""
        cfg = self.cfg
        encode = self.encoder.encode
        size = self.encoder.size
        priv_size = privileged_size(cfg.max_players)
        handoff = cfg.handoff is not None
        while self.new_samples < cfg.rollout_steps:
            rows: list[tuple[int, int]] = []  # (slot index, seat) of learner decisions
            snap_rows: dict[int, list[tuple[int, int]]] = {}
            chosen: dict[int, int] = {}
            for i, slot in enumerate(self.slots):
                state = slot.state
                seat = state.current_player
                kind = slot.kinds[seat]
                if kind == SELF and handoff and sum(state.active) <= cfg.handoff_players:
                    self._hand_off(slot)
                    kind = HANDOFF
                if kind == AGENT or kind == HANDOFF:
                    chosen[i] = slot.players[seat].act(make_view(state, seat))
                elif kind == SELF:
                    rows.append((i, seat))
                else:
                    snap_rows.setdefault(slot.players[seat], []).append((i, seat))
            for group, is_self in [(rows, True)] + [(g, False) for g in snap_rows.values()]:
                if not group:
                    continue
                obs = np.zeros((len(group), size), dtype=np.float32)
                mask = np.zeros((len(group), NUM_ACTIONS), dtype=bool)
                for j, (i, seat) in enumerate(group):
                    state = self.slots[i].state
                    encode(make_view(state, seat), obs[j])
                    mask[j, state.legal_actions()] = True
                if is_self:
                    priv = None
                    if critic is not None:
                        priv = np.zeros((len(group), priv_size), dtype=np.float32)
                        for j, (i, seat) in enumerate(group):
                            encode_privileged(self.slots[i].state, seat, cfg.max_players, priv[j])
                    with torch.no_grad():
                        logits, value = net(torch.from_numpy(obs), torch.from_numpy(mask))
                        if critic is not None:
                            value = critic(torch.from_numpy(obs), torch.from_numpy(priv))
                        dist = torch.distributions.Categorical(logits=logits)
                        act = dist.sample()
                        logp = dist.log_prob(act)
                    act_l, logp_l, val_l = act.tolist(), logp.tolist(), value.tolist()
                    for j, (i, seat) in enumerate(group):
                        k = self._add(obs[j], mask[j], act_l[j], logp_l[j], val_l[j],
                                      None if priv is None else priv[j])
                        self.slots[i].trajs[seat].append(k)  # type: ignore[union-attr]
                        chosen[i] = act_l[j]
                    self.new_samples += len(group)
                else:
                    snap = self.snapshots[self.slots[group[0][0]].players[group[0][1]]]
                    logits = snapshot_logits(snap, obs, mask).astype(np.float64)
                    logits -= logits.max(axis=1, keepdims=True)
                    p = np.exp(logits)
                    p /= p.sum(axis=1, keepdims=True)
                    u = self.np_rng.random(len(group))[:, None]
                    acts = (p.cumsum(axis=1) < u).sum(axis=1)
                    for j, (i, _seat) in enumerate(group):
                        a = int(min(acts[j], NUM_ACTIONS - 1))
                        if not mask[j, a]:  # float round-off at the top of the cdf
                            a = int(np.flatnonzero(mask[j])[-1])
                        chosen[i] = a
            for i, action in chosen.items():
                slot = self.slots[i]
                slot.state.apply_action(action)
                self.env_steps += 1
                if self._settle(slot, hand_reward):
                    self.slots[i] = self._new_slot()

    def take_batch(self) -> dict[str, np.ndarray]:
        """GAE over every trajectory; returns the trainable samples and keeps the last
        sample of each open trajectory back for the next rollout."""
        cfg = self.cfg
        adv = np.zeros(len(self.actions), dtype=np.float32)
        ret = np.zeros(len(self.actions), dtype=np.float32)
        use = np.zeros(len(self.actions), dtype=bool)
        open_trajs = [(slot, s, t) for slot in self.slots for s, t in enumerate(slot.trajs) if t]
        for traj, bootstrap in [(t, None) for t in self.finished] + [(t, t[-1]) for _, _, t in open_trajs]:
            body = traj if bootstrap is None else traj[:-1]
            next_value = 0.0 if bootstrap is None else self.values[bootstrap]
            gae = 0.0
            for k in reversed(body):
                nonterminal = 0.0 if self.dones[k] else 1.0
                delta = self.rewards[k] + cfg.gamma * next_value * nonterminal - self.values[k]
                gae = delta + cfg.gamma * cfg.gae_lambda * nonterminal * gae
                adv[k] = gae
                ret[k] = gae + self.values[k]
                next_value = self.values[k]
                use[k] = True
        idx = np.flatnonzero(use)
        batch = {
            "obs": np.stack([self.obs[k] for k in idx]) if len(idx) else np.zeros((0, self.encoder.size), np.float32),
            "mask": np.stack([self.masks[k] for k in idx]) if len(idx) else np.zeros((0, NUM_ACTIONS), bool),
            "actions": np.asarray([self.actions[k] for k in idx], dtype=np.int64),
            "logps": np.asarray([self.logps[k] for k in idx], dtype=np.float32),
            "values": np.asarray([self.values[k] for k in idx], dtype=np.float32),
            "adv": adv[idx],
            "ret": ret[idx],
        }
        if self.priv is not None:
            batch["priv"] = (np.stack([self.priv[k] for k in idx]) if len(idx) else
                             np.zeros((0, privileged_size(cfg.max_players)), np.float32))
        carried = [(slot, s, t[-1]) for slot, s, t in open_trajs]
        old = (self.obs, self.masks, self.actions, self.logps, self.values, self.rewards, self.dones)
        old_priv = self.priv
        self.reset_buffer()
        for slot, s, k in carried:
            nk = self._add(old[0][k], old[1][k], old[2][k], old[3][k], old[4][k],
                           None if old_priv is None else old_priv[k])
            self.rewards[nk] = old[5][k]
            slot.trajs[s] = [nk]
        return batch


# == 3. The PPO update ======================================================================
def ppo_update(net: PolicyNet, opt: torch.optim.Optimizer, batch: dict[str, np.ndarray],
               cfg: PPOConfig, gen: torch.Generator, critic: Critic | None = None,
               value_only: bool = False) -> dict[str, float]:
    """Clipped PPO epochs over the batch; with a privileged ``critic`` the value loss trains
    it (on the hidden cards too) instead of the policy network's own value head. With
    ``value_only`` (critic warm-up) only the value loss is minimised."""
    obs = torch.from_numpy(batch["obs"])
    priv = torch.from_numpy(batch["priv"]) if critic is not None else None
    params = [p for group in opt.param_groups for p in group["params"]]  # net (+ critic)
    mask = torch.from_numpy(batch["mask"])
    actions = torch.from_numpy(batch["actions"])
    old_logp = torch.from_numpy(batch["logps"])
    adv_all = torch.from_numpy(batch["adv"])
    # Normalised over the whole batch, not per minibatch: a tail minibatch of one sample
    # would otherwise divide by a NaN standard deviation.
    adv_all = (adv_all - adv_all.mean()) / (adv_all.std() + 1e-8) if len(adv_all) > 1 else adv_all
    ret = torch.from_numpy(batch["ret"])
    size = len(actions)
    stats = {"pg_loss": 0.0, "v_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clipfrac": 0.0}
    count = 0
    for _epoch in range(cfg.epochs):
        perm = torch.randperm(size, generator=gen)
        kl_epoch = []
        for start in range(0, size, cfg.minibatch):
            mb = perm[start:start + cfg.minibatch]
            logits, value = net(obs[mb], mask[mb])
            if critic is not None:
                value = critic(obs[mb], priv[mb])  # type: ignore[index]
            logp_all = torch.log_softmax(logits, dim=-1)
            logp = logp_all.gather(1, actions[mb, None]).squeeze(1)
            probs = logp_all.exp()
            entropy = -(probs * logp_all.masked_fill(~mask[mb], 0.0)).sum(-1).mean()
            ratio = (logp - old_logp[mb]).exp()
            adv = adv_all[mb]
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
            v_loss = 0.5 * ((value - ret[mb]) ** 2).mean()
            if value_only:
                loss = cfg.vf_coef * v_loss
            else:
                loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            opt.step()
            with torch.no_grad():
                log_ratio = logp - old_logp[mb]
                kl = ((ratio - 1) - log_ratio).mean().item()
                stats["clipfrac"] += ((ratio - 1).abs() > cfg.clip).float().mean().item()
            kl_epoch.append(kl)
            stats["pg_loss"] += pg_loss.item()
            stats["v_loss"] += v_loss.item()
            stats["entropy"] += entropy.item()
            stats["approx_kl"] += kl
            count += 1
        if cfg.target_kl is not None and np.mean(kl_epoch) > cfg.target_kl:
            break
    return {k: v / max(count, 1) for k, v in stats.items()}


# == 4. Checkpoints =========================================================================
def save_checkpoint(path: Path, net: PolicyNet, opt: torch.optim.Optimizer, runner: Runner,
                    cfg: PPOConfig, rules: Rules, state: dict[str, Any], gen: torch.Generator,
                    critic: Critic | None = None) -> None:
    data = policy_payload(net, cfg.max_players, rules, dataclasses.asdict(cfg), state.get("last_eval"))
    data.update({
        "kind": CHECKPOINT_KIND,
        "optimizer": opt.state_dict(),
        "counters": {k: state[k] for k in ("update", "samples", "env_steps", "elapsed_s")},
        "history": state["history"],
        "torch_rng": torch.get_rng_state(),
        "gen_rng": gen.get_state(),
        "runner": pickle.dumps(runner, protocol=pickle.HIGHEST_PROTOCOL),
    })
    if critic is not None:
        data["critic"] = {k: v.detach().clone() for k, v in critic.state_dict().items()}
    atomic_save(data, path)


def load_checkpoint(path: Path, cfg: PPOConfig) -> dict[str, Any]:
    data = load_file(path, kinds=(CHECKPOINT_KIND,))
    saved = data["config"]
    # Options added later default to off in checkpoints written before them.
    defaults = {"advice": False, "privileged_critic": False}
    for key in ("max_players", "hidden", "layers", "advice", "privileged_critic"):
        if saved.get(key, defaults.get(key)) != getattr(cfg, key):
            raise ValueError(f"{str(path)!r} does not match the config: {key} is "
                             f"{saved.get(key)!r} in the checkpoint, {getattr(cfg, key)!r} in the config")
    try:
        data["runner_obj"] = pickle.loads(data["runner"])
    except Exception as exc:
        raise ValueError(f"{str(path)!r}: the saved rollout state cannot be read ({exc})") from None
    return data


def final_evaluation(out: Path, cfg: PPOConfig, log: Any = print) -> dict[str, Any]:
    """Evaluate the exported ``out/policy.pt`` with the duplicate-deal tournament harness:
    every deal in all seat rotations, CIs clustered by deal, so the final figures compare
    with ``python -m training.evaluate`` (the in-training evaluation is a quicker, noisier
    check)."""
    from .evaluate import final_tournament_evaluation

    return final_tournament_evaluation(
        f"ppo:{out / 'policy.pt'}", list(cfg.eval_opponents), list(cfg.eval_players),
        cfg.final_eval_games, out / "final_eval", workers=cfg.final_eval_workers,
        rules=cfg.rules, log=log)


# == 5. The training loop ===================================================================
def train(cfg: PPOConfig, out_dir: str | Path, resume: bool = False,
          log: Any = print) -> dict[str, Any]:
    """Train (or continue) a run in ``out_dir``; returns the final summary."""
    from .evaluate import evaluate_policy, write_learning_curve

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_path = out / "checkpoint.pt"
    torch.set_num_threads(cfg.torch_threads)
    rules = make_rules(cfg.rules)
    torch.manual_seed(cfg.seed)  # before the network exists: its init must be seeded too
    net = PolicyNet(policy_observation_size(cfg.max_players, cfg.advice), cfg.hidden,
                    cfg.layers, cfg.max_players, advice=cfg.advice, advice_gain=cfg.advice_gain)
    if cfg.init_from and not resume:
        warm_start(net, load_file(cfg.init_from), cfg.init_from, seed=cfg.seed)
    critic = None
    if cfg.privileged_critic:
        critic = Critic(net.obs_size, privileged_size(cfg.max_players), cfg.hidden, cfg.layers)
    params = list(net.parameters()) + (list(critic.parameters()) if critic is not None else [])
    opt = torch.optim.Adam(params, lr=cfg.lr, eps=1e-5)
    gen = torch.Generator().manual_seed(cfg.seed)
    state: dict[str, Any] = {"update": 0, "samples": 0, "env_steps": 0, "elapsed_s": 0.0,
                             "history": [], "last_eval": None}
    if resume:
        if not ckpt_path.exists():
            raise ValueError(f"--resume: no checkpoint at {str(ckpt_path)!r}")
        data = load_checkpoint(ckpt_path, cfg)
        net.load_state_dict(data["state_dict"])
        if critic is not None:
            critic.load_state_dict(data["critic"])
        opt.load_state_dict(data["optimizer"])
        for group in opt.param_groups:  # the config's lr wins (a resume may change it)
            group["lr"] = cfg.lr
        torch.set_rng_state(data["torch_rng"])
        gen.set_state(data["gen_rng"])
        runner = data["runner_obj"]
        runner.cfg = cfg  # budget fields (total_steps, time limit) may be raised on resume
        check_handoff(cfg)
        state.update(data["counters"])
        state["history"] = data["history"]
        state["last_eval"] = data["metrics"] or None
        log(f"resumed {ckpt_path} at update {state['update']}, {state['samples']:,} samples")
    else:
        runner = Runner(cfg, rules, cfg.seed)
        (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(out / "tb"))
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.total_steps, initial=min(state["samples"], cfg.total_steps),
                   unit="samples", unit_scale=True, dynamic_ncols=True, file=sys.stderr)
    t_start = time.perf_counter()
    elapsed0 = state["elapsed_s"]

    def elapsed() -> float:
        return elapsed0 + time.perf_counter() - t_start

    def run_eval(games: int, seed: int) -> dict[str, Any]:
        pol = NumpyPolicy(net.state_dict(), cfg.layers, cfg.max_players)
        return evaluate_policy(pol, cfg.max_players, rules, cfg.eval_opponents, cfg.eval_players,
                               games, seed=seed)

    steps_at_start = state["samples"]
    while state["samples"] < cfg.total_steps and (
            cfg.time_limit_s is None or elapsed() < cfg.time_limit_s):
        t0 = time.perf_counter()
        frac = state["samples"] / cfg.total_steps
        if cfg.anneal_lr:
            opt.param_groups[0]["lr"] = cfg.lr * max(1.0 - frac, 0.05)
        hand_reward = cfg.hand_reward
        if cfg.hand_reward_decay_steps:
            hand_reward *= max(0.0, 1.0 - state["samples"] / cfg.hand_reward_decay_steps)
        env0 = runner.env_steps
        runner.collect(net, hand_reward, critic)
        batch = runner.take_batch()
        t1 = time.perf_counter()
        stats = ppo_update(net, opt, batch, cfg, gen, critic,
                           value_only=state["update"] < cfg.critic_warmup)
        t2 = time.perf_counter()
        state["update"] += 1
        new = len(batch["actions"])
        state["samples"] += new
        state["env_steps"] = runner.env_steps
        u = state["update"]
        if u % cfg.snapshot_every == 0:
            runner.snapshots.append(NumpyPolicy(net.state_dict(), cfg.layers, cfg.max_players))
        sps = new / (t2 - t0)
        env_sps = (runner.env_steps - env0) / (t2 - t0)
        step = state["samples"]
        for k, v in stats.items():
            writer.add_scalar(f"loss/{k}", v, step)
        writer.add_scalar("perf/samples_per_s", sps, step)
        writer.add_scalar("perf/env_steps_per_s", env_sps, step)
        writer.add_scalar("perf/collect_s", t1 - t0, step)
        writer.add_scalar("perf/update_s", t2 - t1, step)
        writer.add_scalar("train/hand_reward", hand_reward, step)
        writer.add_scalar("train/games", runner.games_done, step)
        if runner.wins:
            for n in cfg.player_counts:
                w = [x for m, x in runner.wins if m == n]
                if w:
                    writer.add_scalar(f"train/win_share_x{n}", float(np.mean(w)) * n, step)
        if bar is not None:
            bar.update(min(new, cfg.total_steps - bar.n))
            bar.set_postfix(sps=f"{sps:,.0f}", env=f"{env_sps:,.0f}", ent=f"{stats['entropy']:.2f}",
                            kl=f"{stats['approx_kl']:.3f}")
        state["elapsed_s"] = elapsed()
        if cfg.eval_every and u % cfg.eval_every == 0:
            ev = run_eval(cfg.eval_games, seed=10_000 + u)
            ev["samples"], ev["env_steps"], ev["elapsed_s"] = step, runner.env_steps, elapsed()
            state["history"].append(ev)
            state["last_eval"] = ev
            for key, val in ev["win_rate"].items():
                writer.add_scalar(f"eval/{key}", val, step)
            log(f"[eval] update {u} samples {step:,} t={elapsed():.0f}s " + ", ".join(
                f"{k} {v:.2f}" for k, v in ev["win_rate"].items()))
            state["elapsed_s"] = elapsed()
        if u % cfg.checkpoint_every == 0:
            save_checkpoint(ckpt_path, net, opt, runner, cfg, rules, state, gen, critic)
            export_policy(out / "policy.pt", policy_payload(net, cfg.max_players, rules,
                                                            dataclasses.asdict(cfg), state["last_eval"]))
    if bar is not None:
        bar.close()
    wall = time.perf_counter() - t_start
    trained = state["samples"] - steps_at_start
    save_checkpoint(ckpt_path, net, opt, runner, cfg, rules, state, gen, critic)
    summary: dict[str, Any] = {
        "samples": state["samples"], "env_steps": runner.env_steps, "updates": state["update"],
        "elapsed_s": state["elapsed_s"],
        "samples_per_s_this_session": trained / wall if wall > 0 else math.nan,
    }
    export_policy(out / "policy.pt", policy_payload(net, cfg.max_players, rules,
                                                    dataclasses.asdict(cfg), state["last_eval"]))
    if cfg.final_eval_games:
        final = final_evaluation(out, cfg, log)
        final.update(samples=state["samples"], env_steps=runner.env_steps, elapsed_s=state["elapsed_s"])
        summary["final_eval"] = final
        state["last_eval"] = final
        export_policy(out / "policy.pt", policy_payload(net, cfg.max_players, rules,
                                                        dataclasses.asdict(cfg), final))
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    if state["history"]:
        write_learning_curve(state["history"], out / "learning_curve.png")
    writer.close()
    return summary
