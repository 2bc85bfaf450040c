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

The checkpoint holds the runner's whole state (:meth:`Runner.state_dict`: the games with
their shuffle generators, who plays each seat and the agents' generators, the snapshots, the
pending samples, the counters) as tensors and plain values that
``torch.load(weights_only=True)`` reads, so ``--resume`` continues exactly and a checkpoint
never runs code. :meth:`Runner.load_state_dict` checks every field (type, shape, range) and
names the first bad one in a ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import math
import random
import warnings
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.base import Agent
from agents.neural.encoding import PaddedEncoder
from agents.neural.forward import NumpyPolicy
from agents.registry import make_agent
from scat_env import GameState, Rules
from scat_env import engine as _engine
from scat_env.actions import NUM_ACTIONS
from scat_env.engine import HandResult, Phase, PointsHandResult, short_repr
from scat_env.rewards import hand_rewards
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS
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
    """Collects learner samples from ``parallel_games`` lockstep games; its whole state goes
    into a checkpoint through :meth:`state_dict` and comes back through
    :meth:`load_state_dict`."""

    priv: list[np.ndarray] | None = None  # privileged critic inputs (None: no such critic)

    def __init__(self, cfg: PPOConfig, rules: Rules, seed: int) -> None:
        self.cfg = cfg
        self.rules = rules
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.encoder = PaddedEncoder(rules, cfg.max_players, advice=cfg.advice)
        self.snapshots: deque[NumpyPolicy] = deque(maxlen=cfg.snapshot_pool)
        # The weights each snapshot was built from: what a checkpoint stores of it.
        self.snapshot_weights: deque[dict[str, torch.Tensor]] = deque(maxlen=cfg.snapshot_pool)
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

    def add_snapshot(self, weights: Mapping[str, torch.Tensor]) -> None:
        """Freeze a copy of the learner's weights (``state_dict``) as a snapshot opponent;
        the oldest goes once ``snapshot_pool`` are held."""
        kept = {k: v.detach().clone() for k, v in weights.items()}
        self.snapshot_weights.append(kept)
        self.snapshots.append(NumpyPolicy(kept, self.cfg.layers, self.cfg.max_players))

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

    # -- the checkpoint form -----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything :meth:`collect` continues from, as tensors and plain values (dicts,
        lists, tuples, str, int, float, bool, None): what a checkpoint stores, read back
        with ``torch.load(weights_only=True)``. The rules, the config and the encoder are
        not in it: they come from the run's config on resume."""
        return {
            "format": ROLLOUT_FORMAT,
            "rng": random_state(self.rng),
            "np_rng": dict(self.np_rng.bit_generator.state),
            "opponent_names": list(self.opponent_names),
            "opponent_weights": [float(w) for w in self.opponent_weights],
            "count_weights": [float(w) for w in self.count_weights],
            "env_steps": self.env_steps,
            "games_done": self.games_done,
            "wins": [(n, float(won)) for n, won in self.wins],
            "snapshot_pool": self.snapshots.maxlen,
            "snapshots": [dict(w) for w in self.snapshot_weights],
            "buffer": self._buffer_plain(),
            "handoff": self.cfg.handoff,
            "slots": [self._slot_plain(slot) for slot in self.slots],
        }

    def _buffer_plain(self) -> dict[str, Any]:
        size, k = self.encoder.size, len(self.actions)
        rows = {"obs": (self.obs, size, torch.float32), "masks": (self.masks, NUM_ACTIONS, torch.bool)}
        if self.priv is not None:
            rows["priv"] = (self.priv, privileged_size(self.cfg.max_players), torch.float32)
        out: dict[str, Any] = {
            name: torch.from_numpy(np.stack(items)) if k else torch.zeros((0, width), dtype=dtype)
            for name, (items, width, dtype) in rows.items()}
        out.update({
            "actions": torch.tensor(self.actions, dtype=torch.int64),
            # Python floats are float64: stored as such, a resumed run sums the same numbers.
            "logps": torch.tensor(self.logps, dtype=torch.float64),
            "values": torch.tensor(self.values, dtype=torch.float64),
            "rewards": torch.tensor(self.rewards, dtype=torch.float64),
            "dones": torch.tensor(self.dones, dtype=torch.bool),
            "finished": [list(t) for t in self.finished],
            "new_samples": self.new_samples,
        })
        return out

    def _slot_plain(self, slot: Slot) -> dict[str, Any]:
        players: list[Any] = []
        for kind, player in zip(slot.kinds, slot.players, strict=True):
            if kind in (AGENT, HANDOFF):
                players.append({"spec": player.spec,
                                "rngs": [random_state(r) for r in agent_rngs(player)]})
            else:
                players.append(player)  # None (the learner) or a snapshot index
        return {"game": game_plain(slot.state), "kinds": list(slot.kinds), "players": players,
                "trajs": [None if t is None else list(t) for t in slot.trajs],
                "seen": slot.seen}

    def load_state_dict(self, plain: Any, weights_like: Mapping[str, torch.Tensor]) -> None:
        """Continue from :meth:`state_dict`'s output (a checkpoint's). Every field is
        checked before anything changes: a bad one is a ``ValueError`` naming it, and the
        runner is left as it was. ``weights_like``: the learner's ``state_dict``, whose
        names and shapes every snapshot must have."""
        r = _Reader("rollout state")
        plain = r.mapping(plain, "", ROLLOUT_KEYS)
        if plain["format"] != ROLLOUT_FORMAT:
            raise ValueError(f"rollout state: format {short_repr(plain['format'])}; this "
                             f"scat-env reads format {ROLLOUT_FORMAT}")
        rng = set_random_state(random.Random(), plain["rng"], r, "rng")
        np_rng = np_generator(plain["np_rng"], r, "np_rng")
        names = r.seq(plain["opponent_names"], "opponent_names", 1, 1000,
                      lambda v, w: r.text(v, w))
        weights = r.seq(plain["opponent_weights"], "opponent_weights", len(names), len(names),
                        lambda v, w: r.real(v, w, 0.0))
        counts = r.seq(plain["count_weights"], "count_weights", len(self.cfg.player_counts),
                       len(self.cfg.player_counts), lambda v, w: r.real(v, w, 0.0))
        env_steps = r.integer(plain["env_steps"], "env_steps", 0, 2**62)
        games_done = r.integer(plain["games_done"], "games_done", 0, 2**62)

        def win(value: Any, what: str) -> tuple[int, float]:
            players, won = r.seq(value, what, 2, 2, lambda v, w: v)
            return (r.integer(players, f"{what}[0]", MIN_PLAYERS, MAX_PLAYERS),
                    r.real(won, f"{what}[1]", 0.0, 1.0))

        wins = r.seq(plain["wins"], "wins", 0, 500, win)
        pool = r.integer(plain["snapshot_pool"], "snapshot_pool", 1, 10_000)
        snap_weights = r.seq(plain["snapshots"], "snapshots", 0, pool,
                             lambda v, w: r.weights(v, w, weights_like))
        handoff = plain["handoff"]
        if handoff is not None:
            r.text(handoff, "handoff")
        buffer = self._read_buffer(plain["buffer"], r)
        size = len(buffer["actions"])
        slots = r.seq(plain["slots"], "slots", 1, 65_536, lambda v, w: self._read_slot(
            v, w, r, names, handoff, len(snap_weights), size))
        # Everything checked: now the runner changes.
        self.rng, self.np_rng = rng, np_rng
        self.opponent_names, self.opponent_weights, self.count_weights = names, weights, counts
        self.env_steps, self.games_done = env_steps, games_done
        self.wins = deque(wins, maxlen=500)
        self.snapshot_weights = deque(maxlen=pool)
        self.snapshots = deque(maxlen=pool)
        for w in snap_weights:
            self.snapshot_weights.append(w)
            self.snapshots.append(NumpyPolicy(w, self.cfg.layers, self.cfg.max_players))
        for key, value in buffer.items():
            setattr(self, key, value)
        self.slots = slots

    def _read_buffer(self, plain: Any, r: _Reader) -> dict[str, Any]:
        """The pending samples, checked: tensors of the right dtype and shape, finite."""
        keys = BUFFER_KEYS + (("priv",) if self.cfg.privileged_critic else ())
        plain = r.mapping(plain, "buffer", keys)
        k = r.tensor(plain["actions"], "buffer.actions", torch.int64, (None,)).shape[0]
        actions = r.in_range(plain["actions"], "buffer.actions", 0, NUM_ACTIONS - 1).tolist()
        out: dict[str, Any] = {"actions": actions}
        out["obs"] = list(r.finite(r.tensor(plain["obs"], "buffer.obs", torch.float32,
                                            (k, self.encoder.size)), "buffer.obs").numpy())
        masks = r.tensor(plain["masks"], "buffer.masks", torch.bool, (k, NUM_ACTIONS))
        out["masks"] = list(masks.numpy())
        if k and not bool(masks.gather(1, plain["actions"][:, None]).all()):
            raise ValueError("rollout state: buffer.actions: an action outside its legal mask")
        out["priv"] = None
        if self.cfg.privileged_critic:
            out["priv"] = list(r.finite(r.tensor(
                plain["priv"], "buffer.priv", torch.float32,
                (k, privileged_size(self.cfg.max_players))), "buffer.priv").numpy())
        for name in ("logps", "values", "rewards"):
            out[name] = r.finite(r.tensor(plain[name], f"buffer.{name}", torch.float64, (k,)),
                                 f"buffer.{name}").tolist()
        out["dones"] = r.tensor(plain["dones"], "buffer.dones", torch.bool, (k,)).tolist()
        out["finished"] = r.seq(plain["finished"], "buffer.finished", 0, k,
                                lambda v, w: r.seq(v, w, 1, k,
                                                   lambda x, ww: r.integer(x, ww, 0, k - 1)))
        out["new_samples"] = r.integer(plain["new_samples"], "buffer.new_samples", 0, k)
        return out

    def _read_slot(self, plain: Any, what: str, r: _Reader, names: list[str],
                   handoff: str | None, snapshots: int, samples: int) -> Slot:
        """One running game and its players, checked (agents rebuilt from their specs)."""
        plain = r.mapping(plain, what, ("game", "kinds", "players", "trajs", "seen"))
        state = game_from_plain(plain["game"], self.rules, f"{what}.game")
        n = state.num_players
        kinds = r.seq(plain["kinds"], f"{what}.kinds", n, n,
                      lambda v, w: r.integer(v, w, SELF, HANDOFF))
        players = r.seq(plain["players"], f"{what}.players", n, n, lambda v, w: None)
        for s, (kind, player) in enumerate(zip(kinds, plain["players"], strict=True)):
            where = f"{what}.players[{s}]"
            if kind == SELF:
                if player is not None:
                    raise ValueError(f"rollout state: {where} must be None for a learner seat")
            elif kind == SNAPSHOT:
                players[s] = r.integer(player, where, 0, snapshots - 1)
            else:
                allowed = names if kind == AGENT else [handoff] if handoff else []
                players[s] = agent_from_plain(player, where, r, allowed)
        trajs = r.seq(plain["trajs"], f"{what}.trajs", n, n, lambda v, w: None if v is None else
                      r.seq(v, w, 0, samples, lambda x, ww: r.integer(x, ww, 0, samples - 1)))
        for s, traj in enumerate(trajs):
            if traj is not None and kinds[s] not in (SELF, HANDOFF):
                raise ValueError(f"rollout state: {what}.trajs[{s}]: a trajectory for a seat "
                                 "the learner does not play")
        slot = Slot(state, kinds, players)
        slot.trajs = trajs
        slot.seen = r.integer(plain["seen"], f"{what}.seen", 0, len(state.results))
        return slot


# == The checkpoint form of the rollout state ===============================================
#: Version of :meth:`Runner.state_dict`'s layout.
ROLLOUT_FORMAT = 1
ROLLOUT_KEYS = ("format", "rng", "np_rng", "opponent_names", "opponent_weights",
                "count_weights", "env_steps", "games_done", "wins", "snapshot_pool",
                "snapshots", "buffer", "handoff", "slots")
BUFFER_KEYS = ("obs", "masks", "actions", "logps", "values", "rewards", "dones", "finished",
               "new_samples")


class _Reader:
    """Checks of plain values read from a checkpoint; each failure is one ``ValueError``
    naming the field (``rollout state: slots[3].game.stock: ...``) and quoting at most a
    few dozen characters of the bad value."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def fail(self, what: str, expected: str, value: Any) -> ValueError:
        return ValueError(f"{self.prefix}: {what}: expected {expected}, got {short_repr(value)}")

    def mapping(self, value: Any, what: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if type(value) is not dict:
            raise self.fail(what or "the state", "a dict", type(value).__name__)
        if set(value) != set(keys):
            missing, extra = sorted(set(keys) - set(value)), sorted(set(value) - set(keys), key=str)
            raise ValueError(f"{self.prefix}: {what or 'the state'}: missing "
                             f"{missing or 'nothing'}, unexpected {short_repr(extra)}")
        return value

    def integer(self, value: Any, what: str, lo: int, hi: int) -> int:
        if type(value) is not int or not lo <= value <= hi:
            raise self.fail(what, f"an integer in {lo}..{hi}", value)
        return value

    def optional(self, value: Any, what: str, lo: int, hi: int) -> int | None:
        return None if value is None else self.integer(value, what, lo, hi)

    def boolean(self, value: Any, what: str) -> bool:
        if type(value) is not bool:
            raise self.fail(what, "True or False", value)
        return value

    def real(self, value: Any, what: str, lo: float = -math.inf, hi: float = math.inf) -> float:
        if type(value) not in (int, float) or not math.isfinite(value) or not lo <= value <= hi:
            raise self.fail(what, f"a finite number in [{lo}, {hi}]", value)
        return float(value)

    def text(self, value: Any, what: str, choices: Any = None) -> str:
        if type(value) is not str or not 0 < len(value) <= 1000 or (
                choices is not None and value not in choices):
            raise self.fail(what, "one of " + ", ".join(choices) if choices else "a name", value)
        return value

    def seq(self, value: Any, what: str, lo: int, hi: int,
            item: Callable[[Any, str], Any]) -> list[Any]:
        """A list or tuple of ``lo..hi`` items, each checked by ``item(value, name)``."""
        if type(value) not in (list, tuple) or not lo <= len(value) <= hi:
            raise self.fail(what, f"a list of {lo}..{hi} items",
                            f"{type(value).__name__} of {len(value)}"
                            if type(value) in (list, tuple) else value)
        return [item(v, f"{what}[{i}]") for i, v in enumerate(value)]

    def tensor(self, value: Any, what: str, dtype: torch.dtype,
               shape: tuple[int | None, ...]) -> torch.Tensor:
        if (not isinstance(value, torch.Tensor) or value.dtype != dtype or value.dim() != len(shape)
                or any(w is not None and g != w for g, w in zip(value.shape, shape, strict=True))):
            got = (f"{value.dtype} {list(value.shape)}" if isinstance(value, torch.Tensor)
                   else type(value).__name__)
            raise ValueError(f"{self.prefix}: {what}: expected a {dtype} tensor of shape "
                             f"{list(shape)}, got {got}")
        return value.detach().clone().contiguous()

    def finite(self, value: torch.Tensor, what: str) -> torch.Tensor:
        if not bool(torch.isfinite(value).all()):
            raise ValueError(f"{self.prefix}: {what}: not every entry is finite")
        return value

    def in_range(self, value: torch.Tensor, what: str, lo: int, hi: int) -> torch.Tensor:
        if value.numel() and not (int(value.min()) >= lo and int(value.max()) <= hi):
            raise ValueError(f"{self.prefix}: {what}: entries must lie in {lo}..{hi}")
        return value

    def weights(self, value: Any, what: str, like: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """A network's ``state_dict``: exactly ``like``'s names, shapes and dtypes, finite."""
        if type(value) is not dict or set(value) != set(like):
            raise ValueError(f"{self.prefix}: {what}: expected the weights "
                             f"{sorted(like)[:3]}... of the learner's network")
        return {k: self.finite(self.tensor(value[k], f"{what}[{k!r}]", like[k].dtype,
                                           tuple(like[k].shape)), f"{what}[{k!r}]")
                for k in like}


# -- random generators ------------------------------------------------------------------------
def random_state(rng: random.Random) -> dict[str, Any]:
    """A ``random.Random``'s state: its 625 Mersenne-Twister words (the last is the position)
    as an int64 tensor, and the cached Gaussian (None or a float)."""
    version, words, gauss = rng.getstate()
    if version != 3:  # pragma: no cover - CPython has used version 3 since Python 2.4
        raise ValueError(f"cannot save a random.Random state of version {version}")
    return {"words": torch.tensor(words, dtype=torch.int64), "gauss": gauss}


def set_random_state(rng: random.Random, plain: Any, r: _Reader, what: str) -> random.Random:
    """Give ``rng`` the state :func:`random_state` wrote (checked first); returns it."""
    plain = r.mapping(plain, what, ("words", "gauss"))
    words = r.tensor(plain["words"], f"{what}.words", torch.int64, (625,))
    r.in_range(words[:624], f"{what}.words", 0, 2**32 - 1)
    r.in_range(words[624:], f"{what}.words[624]", 0, 624)
    gauss = None if plain["gauss"] is None else r.real(plain["gauss"], f"{what}.gauss")
    rng.setstate((3, tuple(words.tolist()), gauss))
    return rng


def np_generator(plain: Any, r: _Reader, what: str) -> np.random.Generator:
    """A numpy PCG64 generator from its ``bit_generator.state`` dict (checked)."""
    plain = r.mapping(plain, what, ("bit_generator", "state", "has_uint32", "uinteger"))
    r.text(plain["bit_generator"], f"{what}.bit_generator", ("PCG64",))
    inner = r.mapping(plain["state"], f"{what}.state", ("state", "inc"))
    for key in ("state", "inc"):
        r.integer(inner[key], f"{what}.state.{key}", 0, 2**128 - 1)
    r.integer(plain["has_uint32"], f"{what}.has_uint32", 0, 1)
    r.integer(plain["uinteger"], f"{what}.uinteger", 0, 2**32 - 1)
    gen = np.random.default_rng(0)
    gen.bit_generator.state = {"bit_generator": "PCG64", "state": dict(inner),
                               "has_uint32": plain["has_uint32"], "uinteger": plain["uinteger"]}
    return gen


# -- agents -----------------------------------------------------------------------------------
def agent_rngs(agent: Agent) -> list[random.Random]:
    """Every ``random.Random`` an agent holds, in a fixed order: its own and those of the
    agents inside it (a policy set's members, a search agent's expert), found through their
    attributes. That is all the state a baseline carries from one decision to the next; the
    rest (caches of tables and encoders) is rebuilt from its spec and changes no decision."""
    found: list[random.Random] = []

    def visit(obj: Any, depth: int) -> None:
        if isinstance(obj, random.Random):
            found.append(obj)
        elif isinstance(obj, (np.random.Generator, np.random.RandomState)):
            raise ValueError(f"agent {agent.spec!r} holds a numpy generator; its state "
                             "cannot be checkpointed")
        elif depth > 4:
            return
        elif isinstance(obj, Agent):
            for name in sorted(vars(obj)):
                visit(vars(obj)[name], depth + 1)
        elif isinstance(obj, dict):
            for value in obj.values():
                visit(value, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for value in obj:
                visit(value, depth + 1)

    visit(agent, 0)
    return found


def agent_from_plain(plain: Any, what: str, r: _Reader, allowed: list[str]) -> Agent:
    """Rebuild an opponent from its spec (one of ``allowed``: the run's opponent table or
    its hand-off agent) and give its generators their saved states."""
    plain = r.mapping(plain, what, ("spec", "rngs"))
    spec = r.text(plain["spec"], f"{what}.spec", allowed)
    try:
        agent = make_agent(spec, seed=0)
    except ValueError as exc:
        raise ValueError(f"rollout state: {what}: {exc}") from None
    rngs = agent_rngs(agent)
    states = r.seq(plain["rngs"], f"{what}.rngs", len(rngs), len(rngs), lambda v, w: v)
    for i, (rng, state) in enumerate(zip(rngs, states, strict=True)):
        set_random_state(rng, state, r, f"{what}.rngs[{i}]")
    return agent


# -- games ------------------------------------------------------------------------------------
#: GameState fields rebuilt by its constructor, not stored: the rules (the run's own) and
#: the private fields, which the engine derives from them (value table, rule switches).
DERIVED_FIELDS = ("rules",) + tuple(f.name for f in dataclasses.fields(GameState)
                                    if f.name.startswith("_"))
#: Public log event kinds of the engine (``EV_*``).
LOG_KINDS = tuple(v for k, v in vars(_engine).items() if k.startswith("EV_"))
#: Fields of a stored game, in :class:`~scat_env.engine.GameState`'s declaration order.
GAME_FIELDS = tuple(f.name for f in dataclasses.fields(GameState) if f.name not in DERIVED_FIELDS)
#: The private fields of a points race and of golf, stored under their property's name only
#: in a game of that family: a lives game's stored form stays exactly as it was.
FAMILY_FIELDS = {"points": "_scores", "face_up": "_face_up"}


def family_fields(rules: Rules) -> tuple[str, ...]:
    """The stored names of :data:`FAMILY_FIELDS` a game under ``rules`` carries."""
    return ((("points",) if rules.scoring == "points" else ())
            + (("face_up",) if rules.play == "golf" else ()))


def _plain(value: Any) -> Any:
    """Tuples, lists and dicts (a FrozenDict too) down to plain builtins; enums as values."""
    if isinstance(value, Phase):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def game_plain(state: GameState) -> dict[str, Any]:
    """A game as plain values: every field of :class:`GameState`'s table except those
    rebuilt from the rules; its shuffle generator as :func:`random_state`; each
    :class:`HandResult` as a dict of its fields."""
    out: dict[str, Any] = {}
    for name in GAME_FIELDS:
        value = getattr(state, name)
        if name == "rng":
            out[name] = random_state(value)
        elif name == "results":
            out[name] = [{f.name: _plain(getattr(res, f.name)) for f in dataclasses.fields(res)}
                         for res in value]
        else:
            out[name] = _plain(value)
    for name in family_fields(state.rules):
        out[name] = list(getattr(state, FAMILY_FIELDS[name]))
    return out


def game_from_plain(plain: Any, rules: Rules, what: str) -> GameState:
    """The game :func:`game_plain` wrote, every field checked against ``rules`` (seats,
    cards of the pack each exactly once, lives, phases); one ``ValueError`` names the
    first bad field."""
    r = _Reader("rollout state")
    extra = family_fields(rules)
    plain = r.mapping(plain, what, GAME_FIELDS + extra)
    n = r.integer(plain["num_players"], f"{what}.num_players", MIN_PLAYERS, MAX_PLAYERS)
    state = GameState(n, rules, seed=0,
                      single_hand=r.boolean(plain["single_hand"], f"{what}.single_hand"))
    deck = frozenset(rules.deck_cards)
    lives = rules.start_lives

    def seat(v: Any, w: str) -> int:
        return r.integer(v, w, 0, n - 1)

    def card(v: Any, w: str) -> int:
        if type(v) is not int or v not in deck:
            raise r.fail(w, f"a card of the {rules.deck} pack", v)
        return v

    readers: dict[str, Callable[[Any, str], Any]] = {
        "num_players": lambda v, w: n,
        "single_hand": lambda v, w: v,
        "rng": lambda v, w: set_random_state(random.Random(), v, r, w),
        "lives": lambda v, w: r.seq(v, w, n, n, lambda x, ww: r.integer(x, ww, 0, lives)),
        "active": lambda v, w: r.seq(v, w, n, n, r.boolean),
        "results": lambda v, w: r.seq(v, w, 0, 100_000,
                                      lambda x, ww: result_from_plain(x, ww, r, n, lives, card,
                                                                      points=rules.scoring == "points")),
        "hand_number": lambda v, w: r.integer(v, w, 0, 10**9),
        "dealer": seat,
        "hands": lambda v, w: r.seq(v, w, n, n, lambda x, ww: r.seq(x, ww, 0, 4, card)),
        "known": lambda v, w: r.seq(v, w, n, n, lambda x, ww: r.integer(x, ww, 0, 2**52 - 1)),
        "looked": lambda v, w: r.seq(v, w, n, n, r.boolean),
        "quiet": lambda v, w: r.seq(v, w, n, n, lambda x, ww: r.integer(x, ww, 0, 2**52 - 1)),
        "pending": lambda v, w: tuple(r.seq(v, w, 0, n, seat)),
        "declared": lambda v, w: tuple(r.seq(v, w, 0, n, seat)),
        "stock": lambda v, w: r.seq(v, w, 0, len(deck), card),
        "discard": lambda v, w: r.seq(v, w, 0, len(deck), card),
        "log": lambda v, w: r.seq(v, w, 0, 100_000, lambda x, ww: log_entry(x, ww, r, seat, card)),
        "turn": lambda v, w: r.integer(v, w, 0, 10**9),
        "current_player": seat,
        "phase": lambda v, w: Phase(r.text(v, w, [p.value for p in Phase])),
        "knocker": lambda v, w: None if v is None else seat(v, w),
        "knock_turn": lambda v, w: r.optional(v, w, 0, 10**9),
        "last_seat": lambda v, w: None if v is None else seat(v, w),
        "taken": lambda v, w: None if v is None else card(v, w),
        "drawn": lambda v, w: None if v is None else card(v, w),
        # a points race: points per seat (a hand scores at most a point a seat); golf: per
        # seat, a bit per face-up slot
        "points": lambda v, w: r.seq(v, w, n, n,
                                     lambda x, ww: r.integer(x, ww, 0, rules.points_to_win + n)),
        "face_up": lambda v, w: r.seq(v, w, n, n, lambda x, ww: r.integer(x, ww, 0, 7)),
    }
    missing = set(GAME_FIELDS) - set(readers)  # (readers of fields an engine lacks: unused)
    if missing:  # a field added to GameState that this reader does not know
        raise ValueError(f"rollout state: this scat-env cannot read the game field(s) {sorted(missing)}")
    for name in GAME_FIELDS:
        setattr(state, name, readers[name](plain[name], f"{what}.{name}"))
    for name in extra:
        setattr(state, FAMILY_FIELDS[name], readers[name](plain[name], f"{what}.{name}"))
    check_game(state, rules, what)
    return state


def check_game(state: GameState, rules: Rules, what: str) -> None:
    """The invariants a game waiting for a decision keeps: every card of the pack exactly
    once in the hands, the stock and the discard pile; the player to move is in; and while
    drawing or discarding three cards per seat still in (four for the player discarding),
    none for a seat that is out."""
    if state.is_terminal():
        return
    cards = [c for h in state.hands for c in h] + state.stock + state.discard
    if sorted(cards) != sorted(rules.deck_cards):
        raise ValueError(f"rollout state: {what}: hands, stock and discard pile do not hold "
                         "every card of the pack exactly once")
    if state.active != [v > 0 for v in state.lives]:
        raise ValueError(f"rollout state: {what}.active does not match its lives")
    for s, hand in enumerate(state.hands if state.phase in (Phase.DRAW, Phase.DISCARD) else ()):
        want = 0 if not state.active[s] else (
            4 if state.phase is Phase.DISCARD and s == state.current_player else 3)
        if len(hand) != want:
            raise ValueError(f"rollout state: {what}.hands[{s}] holds {len(hand)} cards, "
                             f"expected {want}")
    if not state.active[state.current_player]:
        raise ValueError(f"rollout state: {what}.current_player is a seat that is out")


def log_entry(value: Any, what: str, r: _Reader, seat: Callable[[Any, str], int],
              card: Callable[[Any, str], int]) -> tuple[int, str, int | None]:
    """One public event ``(seat, kind, card or None)``."""
    s, kind, c = r.seq(value, what, 3, 3, lambda v, w: v)
    return (seat(s, f"{what}[0]"), r.text(kind, f"{what}[1]", LOG_KINDS),
            None if c is None else card(c, f"{what}[2]"))


def result_from_plain(plain: Any, what: str, r: _Reader, n: int, lives: int,
                      card: Callable[[Any, str], int], points: bool = False) -> HandResult:
    """A scored hand, each field checked (seats of the table, cards of the pack, lives); a
    :class:`PointsHandResult` with ``points`` (a race to points)."""
    from scat_env.showdown import RULES

    kind = PointsHandResult if points else HandResult
    names = tuple(f.name for f in dataclasses.fields(kind))
    plain = r.mapping(plain, what, names)

    def seat(v: Any, w: str) -> int:
        return r.integer(v, w, 0, n - 1)

    def table(v: Any, w: str, item: Callable[[Any, str], Any]) -> dict[int, Any]:
        if type(v) is not dict or len(v) > n:
            raise r.fail(w, f"a dict of at most {n} seats", v)
        return {seat(k, f"{w} key"): item(x, f"{w}[{k}]") for k, x in v.items()}

    readers: dict[str, Callable[[Any, str], Any]] = {
        "hand_number": lambda v, w: r.integer(v, w, 0, 10**9),
        "dealer": seat,
        "reason": lambda v, w: r.text(v, w),
        "values": lambda v, w: table(v, w, r.real),
        "hands": lambda v, w: table(v, w, lambda x, ww: tuple(r.seq(x, ww, 0, 4, card))),
        "lives_lost": lambda v, w: table(v, w, lambda x, ww: r.integer(x, ww, 0, lives)),
        "knocker": lambda v, w: None if v is None else seat(v, w),
        "declarers": lambda v, w: tuple(r.seq(v, w, 0, n, seat)),
        "eliminated": lambda v, w: tuple(r.seq(v, w, 0, n, seat)),
        "replayed": lambda v, w: r.boolean(v, w),
        "lives_after": lambda v, w: tuple(r.seq(v, w, n, n, lambda x, ww: r.integer(x, ww, 0, lives))),
        "rule": lambda v, w: r.text(v, w, RULES),
        "points_won": lambda v, w: table(v, w, lambda x, ww: r.integer(x, ww, 0, 10**6)),
        "points_after": lambda v, w: tuple(r.seq(v, w, n, n,
                                                 lambda x, ww: r.integer(x, ww, 0, 10**6))),
        "race_winner": lambda v, w: None if v is None else seat(v, w),
    }
    missing = set(names) - set(readers)
    if missing:
        raise ValueError(f"rollout state: this scat-env cannot read the hand-result field(s) "
                         f"{sorted(missing)}")
    return kind(**{name: readers[name](plain[name], f"{what}.{name}") for name in names})
