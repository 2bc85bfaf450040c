"""PPO on the batched engine: self-play rollouts from thousands of games at once.

The trainer of the shipped policies (``compact:scat_batch_set``), read top to bottom: the
network (:class:`CompactNet`), the tables, the rollout (:func:`collect`), GAE
(:func:`advantages`), the PPO loss and its statistics (:func:`ppo_loss`,
:data:`UPDATE_STATS`), the update and the loop. It collects its rollouts from
:class:`scat_env.batch.BatchEnv`, where a step is one decision in every game of the batch,
compiled. Every seat of a self-play game is a learner
seat (each of its decisions a training sample); other games seat one learner against
opponents played batched too: the threshold agent (``greedy``), ``expert``
(:mod:`agents.batch_expert`: the same moves, compiled), random, or a frozen snapshot of the
policy.

The network (:class:`CompactNet`) reads the compact observation: each card's code goes
through a learned embedding (one bag of lookups summed: like a dense layer over a one-hot of
every card and code, without building the one-hot). An unseen card adds nothing: its rows are
zero and get no gradient, so the bag holds only the cards a player has seen (six on average,
at most about twenty, of 52), and the player's numpy sum over all 52 rows is the same number.
Forward and backward of the embedding cost a fraction of all 52 lookups
(``python scripts/bench_compact_net.py`` measures both). The seat counters and the scoring features
(:func:`scat_env.batch.kernels.hand_features`) through a small dense layer, then an MLP
trunk and two heads. Three learned gains
carry the scoring features straight to the actions they are about (the value kept by a
discard, the gain of taking the top discard, the hand's value for a knock).

The calls, golf and the points races append pieces to the observation
(:func:`scat_env.batch.reference.observation_pieces`); a network trained on such rules reads
them (:func:`agents.compact.piece_inputs`: the phase as a one-hot, the quiet flag, points
over ``points_to_win``, golf's face-up slots by rank) through one more dense layer without a
bias, added into the same first layer. A network of the draw-and-discard games without calls
has no such layer, so its weights and decisions are those of a network from before the
pieces.

With ``expert_advice`` the network also reads ``expert``'s move in the position (computed
batched, :mod:`agents.batch_expert`) as a learned bonus on that move's logit, one per
action, starting at :data:`ADVICE_GAIN`: the untrained policy plays the expert's moves and
PPO learns where to leave them, rather than re-deriving card counting and knock risk from
the cards. The value head does not read it, so a seat waiting for its turn (which has no
move to advise) is valued the same way. The player (``compact:``) asks
:class:`agents.expert.ExpertAgent` for the same move from its view.

With ``handoff`` (a policy-set member's training) the learner's and snapshots' seats are
played by another compact policy once few players are in, as the set would play them; those
positions train the value head only.

Returns are per seat: a sample's reward is everything its seat received after that decision
until its next one (or the game's end, or the step that puts the seat out), so a seat that is
knocked out on another seat's move still learns it; GAE runs along each seat's own chain of
decisions, bootstrapped at the rollout's end from the value of the seat's current
observation. A chain ends where its seat is put out: an eliminated seat is paid nothing more
(``scat_env.rewards``), and a bootstrap from its view, which no decision trains, let the
value head's targets grow with its own guesses (docs/EXPERIMENTS.md, entry 60).
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch
from torch import nn

from agents import compact
from agents.batch_expert import BatchExpert
from agents.compact import (
    DENSE_SIZE,
    NUM_CODES,
    POINT_SCALE,
    CompactPolicy,
    CompactSet,
    pieces_width,
    table_pieces,
)
from scat_env import Rules
from scat_env.actions import DRAW_DISCARD, KNOCK, NUM_ACTIONS
from scat_env.batch import BatchEnv
from scat_env.batch.active import players_in
from scat_env.batch.kernels import C_UNSEEN

from .batch_learner import lives_shaping, points_shaping
from .config import BatchPPOConfig


def dense_inputs(obs: torch.Tensor, feats: torch.Tensor, num_players: int,
                 start_lives: int, rules: Rules | None = None,
                 pieces: tuple[str, ...] = ()) -> torch.Tensor:
    """The non-card inputs (:func:`agents.compact.dense_inputs`, the one definition the
    trainer and the playing agent share: the pieces' columns after the base ones) as a
    tensor."""
    return torch.from_numpy(compact.dense_inputs(obs.numpy(), feats.numpy(), num_players,
                                                 start_lives, rules, pieces))


class CompactNet(nn.Module):
    """Actor-critic over compact observations (module docstring)."""

    def __init__(self, hidden: int = 128, layers: int = 2, knock_at: float = 25.0,
                 advice: bool = False, pieces: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.hidden, self.layers, self.advice = hidden, layers, advice
        self.pieces = tuple(pieces)
        self.cards = nn.EmbeddingBag(52 * NUM_CODES, hidden, mode="sum")
        nn.init.normal_(self.cards.weight, std=0.05)
        with torch.no_grad():  # an unseen card adds nothing (module docstring)
            self.cards.weight.view(52, NUM_CODES, hidden)[:, C_UNSEEN] = 0.0
        self.dense = nn.Linear(DENSE_SIZE, hidden)
        if self.pieces:  # the observation's pieces (module docstring)
            self.piece_layer = nn.Linear(pieces_width(self.pieces), hidden, bias=False)
        trunk: list[nn.Module] = [nn.ReLU()]
        for _ in range(layers - 1):
            trunk += [nn.Linear(hidden, hidden), nn.ReLU()]
        self.trunk = nn.Sequential(*trunk)
        self.pi = nn.Linear(hidden, NUM_ACTIONS)
        self.v = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.pi.weight, 0.01)
        nn.init.zeros_(self.pi.bias)
        # Gains that make the untrained network a sampled greedy player: a discard that
        # keeps 5 more points is 2.4 logits likelier, a knock on 10 points never happens.
        # At 4 (the dense trainer's start) a sampled policy knocked on any hand 7% of its
        # turns, never won a game against greedy, and learned little more than not to knock.
        self.card_gain = nn.Parameter(torch.tensor(20.0))
        self.draw_gain = nn.Parameter(torch.tensor(20.0))
        self.knock_gain = nn.Parameter(torch.tensor(20.0))
        self.knock_at = nn.Parameter(torch.tensor(float(knock_at)))
        if advice:  # expert's move, a bonus per action it can be (module docstring)
            self.advice_gain = nn.Parameter(torch.full((NUM_ACTIONS,), ADVICE_GAIN))
        self.register_buffer("_offsets", torch.arange(52) * NUM_CODES, persistent=False)

    def forward(self, cards: torch.Tensor, feats: torch.Tensor, dense: torch.Tensor,
                mask: torch.Tensor, advice: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits [B, A], value [B]) from the card codes (the first 52 entries of
        the compact observations, [B, 52] int8), the scoring features and the dense
        inputs (:func:`dense_inputs`); with ``advice`` ([B] int64, the expert's move or -1),
        a network built with ``advice=True`` adds its learned bonus to that move's logit."""
        seen = cards != C_UNSEEN
        codes = (cards.to(torch.int64) + self._offsets)[seen]  # row by row: one bag a row
        counts = seen.sum(1)
        h = (self.cards(codes, torch.cumsum(counts, 0) - counts)
             + self.dense(dense[:, :DENSE_SIZE]))
        if self.pieces:
            h = h + self.piece_layer(dense[:, DENSE_SIZE:])
        h = self.trunk(h)
        logits = self.pi(h)
        skip = torch.zeros_like(logits)
        value = feats[:, 52] * POINT_SCALE
        skip[:, :52] = self.card_gain * feats[:, :52] * POINT_SCALE
        skip[:, DRAW_DISCARD] = self.draw_gain * (feats[:, 53] - feats[:, 52]) * POINT_SCALE
        skip[:, KNOCK] = self.knock_gain * (value - self.knock_at * POINT_SCALE)
        logits = logits + skip
        if self.advice and advice is not None:
            move = advice.clamp(min=0)[:, None]
            bonus = self.advice_gain[move] * (advice >= 0)[:, None]
            logits = logits.scatter_add(1, move, bonus)
        logits = torch.where(mask, logits, torch.full_like(logits, -1e9))
        return logits, self.v(h).squeeze(-1)


#: The expert-advice bonus of an untrained network (``advice=True``): its policy starts as
#: the expert's moves, nearly always, and learns where to leave them.
ADVICE_GAIN = 6.0

#: Seat roles in a game: a learner seat, or an opponent of one of these kinds.
LEARNER, GREEDY, RANDOM, SNAPSHOT, EXPERT = 0, 1, 2, 3, 4
_KINDS = {"greedy": GREEDY, "random": RANDOM, "snapshot": SNAPSHOT, "expert": EXPERT}


class Table:
    """One table size: its batched env, seat roles and per-seat reward bookkeeping."""

    def __init__(self, cfg: BatchPPOConfig, n: int, seed: int, rules: str | None = None,
                 pieces: tuple[str, ...] | None = None, games: int | None = None) -> None:
        rules = cfg.rules if rules is None else rules
        self.n = n
        B = cfg.envs_per_table if games is None else games  # a shard's share (Shard)
        self.env = BatchEnv(B, n, rules, seed, max_turns=cfg.max_turns)
        # the pieces the network reads (a network of many rules reads them all)
        self.pieces = table_pieces(self.env.rules) if pieces is None else pieces
        self.start_lives = self.env.rules.start_lives
        self.out = self.env.reset()
        self.rng = np.random.default_rng(seed)
        self.roles = np.zeros((B, n), np.int64)
        self.kinds = np.array([_KINDS[k] for k in cfg.opponents], np.int64)
        w = np.array(list(cfg.opponents.values()), np.float64)
        self.kind_p = w / w.sum()
        self.self_play = cfg.self_play
        self.learner_seats = min(cfg.learner_seats, n - 1)
        # expert's moves, batched (agents.batch_expert): built only when it plays
        self.expert = (BatchExpert(rules) if "expert" in cfg.opponents or cfg.expert_advice
                       else None)
        self._assign(np.arange(B))
        self.feats = np.zeros((B, 54), np.float32)

    def _assign(self, games: np.ndarray | int) -> None:
        """Seat roles of new games: all learners (self-play), or ``learner_seats`` learners
        (random seats) against one kind of opponent."""
        games = np.atleast_1d(games)
        k = len(games)
        kind = self.rng.choice(self.kinds, p=self.kind_p, size=k)
        kind[self.rng.random(k) < self.self_play] = LEARNER
        self.roles[games] = kind[:, None]
        if self.learner_seats == 1:
            self.roles[games, self.rng.integers(self.n, size=k)] = LEARNER
        else:  # the first seats of a random order of each game's seats
            seats = np.argsort(self.rng.random((k, self.n)), axis=1)[:, :self.learner_seats]
            self.roles[games[:, None], seats] = LEARNER


class Handoff:
    """The fixed player of ``BatchPPOConfig.handoff``: a compact policy or set that plays
    every position of a learner or snapshot seat with at most ``players`` players in, its
    most likely move, as ``compact:`` plays that set. A single file becomes the set's
    member for each of those counts, so it reads the smaller game
    (:func:`scat_env.batch.active.active_observations`)."""

    def __init__(self, spec: str, players: int, rules: str | list[str]) -> None:
        every = [rules] if isinstance(rules, str) else list(rules)
        try:
            policy = compact.load_compact_player(
                compact.policy_path(spec.removeprefix("compact:")))
            if isinstance(policy, CompactPolicy):
                policy = CompactSet({k: [policy] for k in range(2, players + 1)}, None,
                                    f"handoff {spec!r}")
            for name in every:
                compact.CompactAgent(policy).check_table(players, Rules.preset(name))
        except (OSError, ValueError) as exc:
            raise ValueError(f"batch config: handoff {spec!r}: {exc}") from None
        self.policy: CompactSet = policy
        self.spec, self.players = spec, players
        # the expert of each table's rules, for a handoff that reads its advice
        self.experts = ({name: BatchExpert(name) for name in every} if policy.advice
                        else {})

    def moves(self, env: BatchEnv, out: dict[str, np.ndarray], rows: np.ndarray,
              advice: np.ndarray | None = None) -> np.ndarray:
        """The handoff's move in each of the games ``rows`` of ``env`` (its last step's
        ``out``; every one with at most ``players`` players in); ``advice``: the
        expert's move in every game, when already computed."""
        obs = out["observation"][rows]
        if self.experts and advice is None:
            advice = self.experts[env.rules.name].actions(env)
        return self.policy.play_logits(
            obs, env.hand_features(obs), env.num_players, env.rules.start_lives,
            out["action_mask"][rows], None if advice is None else advice[rows],
            env.rules).argmax(-1)


def handoff_for(cfg: BatchPPOConfig) -> Handoff | None:
    """The run's :class:`Handoff` over every table's rules, or None: one place for the
    trainer and its rollout workers (:mod:`training.batch_ray`)."""
    if cfg.handoff is None:
        return None
    return Handoff(cfg.handoff, cfg.handoff_players, cfg.rules_mix or cfg.rules)


def _sample(logits: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One action per row drawn from softmax(logits), by the Gumbel-max trick: the same
    distribution as ``torch.multinomial``, without its per-row cost on a batch."""
    u = torch.rand(logits.shape, generator=gen).clamp_(1e-12, 1.0)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)


def _act(net: CompactNet, snapshot: CompactNet, table: Table, obs_t: torch.Tensor,
         feats_t: torch.Tensor, dense_t: torch.Tensor, mask_t: torch.Tensor,
         gen: torch.Generator, advice: np.ndarray | None = None,
         handoff: Handoff | None = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(actions, log-probs, values, learner flags, handed-off flags) for every game's
    player to move; ``advice``: the expert's move in every game, when the network reads
    it; ``handoff``: who plays the learner and snapshot seats once few players are in."""
    env, out = table.env, table.out
    B = env.num_envs
    movers = out["current_player"]
    role = table.roles[np.arange(B), movers]
    adv_t = None if advice is None else torch.from_numpy(advice)
    with torch.no_grad():
        logits, value = net(obs_t, feats_t, dense_t, mask_t, adv_t)
        acts = _sample(logits, gen)
        logp = torch.log_softmax(logits, dim=-1).gather(1, acts[:, None]).squeeze(-1)
    actions = acts.numpy().copy()
    snap = role == SNAPSHOT
    if snap.any():
        idx = torch.from_numpy(np.flatnonzero(snap))
        with torch.no_grad():
            sl, _ = snapshot(obs_t[idx], feats_t[idx], dense_t[idx], mask_t[idx],
                             None if adv_t is None else adv_t[idx])
        actions[snap] = _sample(sl, gen).numpy()
    greedy = role == GREEDY
    if greedy.any():
        actions[greedy] = env.threshold_actions(25)[greedy]
    expert = role == EXPERT
    if expert.any():
        moves = advice if advice is not None else table.expert.actions(env)
        actions[expert] = moves[expert]
    rnd = role == RANDOM
    if rnd.any():
        actions[rnd] = env.random_actions()[rnd]
    handed = np.zeros(B, np.bool_)
    if handoff is not None:
        few = players_in(out["observation"], table.n) <= handoff.players
        handed = few & ((role == LEARNER) | (role == SNAPSHOT))
        if handed.any():
            rows = np.flatnonzero(handed)
            actions[rows] = handoff.moves(env, out, rows, advice)
    return actions, logp.numpy(), value.numpy(), role == LEARNER, handed


def _tensors(table: Table, obs: np.ndarray) -> tuple[torch.Tensor, ...]:
    """(card codes, scoring features, dense inputs) of compact observations [B, D]."""
    feats = table.env.hand_features(obs)
    obs_t = torch.from_numpy(obs)
    feats_t = torch.from_numpy(feats)
    dense_t = dense_inputs(obs_t, feats_t, table.n, table.start_lives, table.env.rules,
                           table.pieces)
    return obs_t[:, :52], feats_t, dense_t


class Rollout:
    """One table's samples of one rollout, [T, B] each, and the per-seat chains."""

    def __init__(self, T: int, B: int, n: int, D: int) -> None:
        self.obs = np.zeros((T, B, D), np.int8)
        self.mask = np.zeros((T, B, NUM_ACTIONS), np.bool_)
        self.act = np.zeros((T, B), np.int64)
        self.logp = np.zeros((T, B), np.float32)
        self.val = np.zeros((T, B), np.float32)
        self.rew = np.zeros((T, B), np.float32)
        self.done = np.zeros((T, B), np.bool_)
        self.learn = np.zeros((T, B), np.bool_)
        self.seat = np.zeros((T, B), np.int64)
        self.advice = np.full((T, B), -1, np.int64)  # the expert's move, when read
        # False where a learner seat was played by the handoff: a value sample only
        self.policy = np.ones((T, B), np.bool_)


def collect(net: CompactNet, snapshot: CompactNet, table: Table, T: int,
            gen: torch.Generator, stats: dict[str, float], hand_reward: float = 0.0,
            advice: bool = False, handoff: Handoff | None = None,
            truncation_penalty: float = 0.0, points_reward: float = 0.0
            ) -> tuple[Rollout, np.ndarray]:
    """``T`` batched steps of ``table``: the rollout and each seat's bootstrap value.
    ``hand_reward`` adds the lives shaping of :func:`scat_env.rewards.hand_shaping` to
    each hand's rewards. ``truncation_penalty`` is taken from every seat still in a game the turn
    cap cut: a points race pays nobody for a stalled game, so a seat that expects to lose
    would otherwise learn never to knock. ``points_reward`` pays a race's points as they are
    won (:func:`training.batch_learner.points_shaping`). A learner seat's decisions that
    ``handoff`` plays stay in its chain (their values carry the seat's result back to its
    own decisions) but are not policy samples (``Rollout.policy``)."""
    env = table.env
    B, n = env.num_envs, table.n
    ro = Rollout(T, B, n, env.observation_size)
    last = np.full((B, n), -1, np.int64)  # step of each seat's latest sample, or -1
    games = np.arange(B)
    points = np.zeros((B, n), np.int64) if points_reward else None
    for t in range(T):
        out = table.out
        obs = out["observation"]
        obs_t, feats_t, dense_t = _tensors(table, obs)
        mask_t = torch.from_numpy(out["action_mask"])
        moves = table.expert.actions(table.env, ro.advice[t]) if advice else None
        actions, logp, value, learn, handed = _act(net, snapshot, table, obs_t, feats_t,
                                                   dense_t, mask_t, gen, moves, handoff)
        movers = out["current_player"].copy()
        ro.obs[t] = obs
        ro.mask[t] = out["action_mask"]
        ro.act[t], ro.logp[t], ro.val[t], ro.learn[t], ro.seat[t] = (actions, logp, value,
                                                                     learn, movers)
        ro.policy[t] = ~handed
        last[games, movers] = t
        if points is not None:
            points[:] = env.race_points()
        table.out = out = env.step(actions)
        rew = out["rewards"]
        if hand_reward:
            rew = rew + lives_shaping(out, hand_reward)
        if truncation_penalty:
            rew = rew - np.float32(truncation_penalty) * out["truncated"][:, None]
        if points is not None:
            rew = rew + points_shaping(points, env.race_points(), out["done"], points_reward)
        has = last >= 0
        gi, si = np.nonzero(has)
        np.add.at(ro.rew, (last[gi, si], gi), rew[gi, si])
        done = out["done"]
        # A seat put out of a game that goes on is paid nothing more: its chain ends here,
        # or the rollout's end would bootstrap it from a view no decision ever trains.
        gone = has & (env.active_seats() == 0) & ~done[:, None]
        if gone.any():
            gg, gs = np.nonzero(gone)
            ro.done[last[gg, gs], gg] = True
            last[gg, gs] = -1
        if done.any():
            ended = np.flatnonzero(done)
            dg, ds = np.nonzero(last[ended] >= 0)
            ro.done[last[ended][dg, ds], ended[dg]] = True
            last[ended] = -1
            mixed = table.roles[ended].min(axis=1) != table.roles[ended].max(axis=1)
            winners = out["winner"][ended]
            won = (winners >= 0) & (table.roles[ended, np.maximum(winners, 0)] == LEARNER)
            stats["games"] += len(ended)
            stats["mixed_games"] += int(mixed.sum())
            stats["learner_wins"] += int((won & mixed).sum())
            table._assign(ended)
    # Bootstrap: each seat's value from its own current observation.
    every = env.observe_all().reshape(B * n, -1)
    ones = torch.ones(B * n, NUM_ACTIONS, dtype=torch.bool)
    with torch.no_grad():
        _, boot = net(*_tensors(table, every), ones)
    return ro, boot.numpy().reshape(B, n)


def advantages(ro: Rollout, boot: np.ndarray, gamma: float, lam: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """GAE along each seat's chain of decisions (module docstring)."""
    T, B = ro.act.shape
    next_val = boot.astype(np.float32).copy()
    next_adv = np.zeros_like(next_val)
    adv = np.zeros((T, B), np.float32)
    games = np.arange(B)
    for t in range(T - 1, -1, -1):
        s = ro.seat[t]
        nd = 1.0 - ro.done[t].astype(np.float32)
        nv = next_val[games, s]
        na = next_adv[games, s]
        delta = ro.rew[t] + gamma * nv * nd - ro.val[t]
        a = delta + gamma * lam * nd * na
        adv[t] = a
        next_val[games, s] = ro.val[t]
        next_adv[games, s] = a
    return adv, adv + ro.val


class Shard:
    """A fixed share of every table's games (``envs_per_table / rollout_shards`` of each),
    with seeds and a sampling generator of its own: what a rollout worker hosts
    (:mod:`training.batch_ray`). Its samples depend on the config, the shard's index and
    the weights only, so a run's samples are the same for any number of workers. A run of
    one shard in this process keeps the trainer's seeds and generator (the samples of a
    run from before shards)."""

    def __init__(self, cfg: BatchPPOConfig, index: int, pieces: tuple[str, ...],
                 gen: torch.Generator | None = None, restart: int = 0) -> None:
        base = cfg.seed
        if gen is None or restart:  # own seeds: a worker's shard, or a shard started again
            base = int(np.random.SeedSequence([cfg.seed, index, restart]).generate_state(1)[0])
            gen = torch.Generator().manual_seed(base)
        self.gen = gen
        games = cfg.envs_per_table // cfg.rollout_shards
        self.tables = [Table(cfg, n, base * 1000 + n + 100_000 * i, rules, pieces, games)
                       for i, rules in enumerate(cfg.rules_mix or [cfg.rules])
                       for n in cfg.player_counts]
        self.stats = {"games": 0.0, "learner_wins": 0.0, "mixed_games": 0.0}

    def collect(self, net: CompactNet, snapshot: CompactNet, cfg: BatchPPOConfig,
                hand_reward: float, handoff: Handoff | None
                ) -> list[tuple[torch.Tensor, ...]]:
        """One rollout of every table of the shard, as the update's tensors (:func:`_batch`)."""
        batches = []
        for table in self.tables:
            ro, boot = collect(net, snapshot, table, cfg.rollout_steps, self.gen, self.stats,
                               hand_reward, cfg.expert_advice, handoff, cfg.truncation_penalty,
                               cfg.points_reward)
            batches.append(_batch(table, ro, *advantages(ro, boot, cfg.gamma, cfg.gae_lambda)))
        return batches


class LocalRollouts:
    """Every shard stepped in this process, one after the other (``ray_workers: 0``)."""

    workers, restarts = 0, 0

    def __init__(self, cfg: BatchPPOConfig, pieces: tuple[str, ...], gen: torch.Generator,
                 handoff: Handoff | None) -> None:
        self.cfg, self.handoff = cfg, handoff
        shared_gen = gen if cfg.rollout_shards == 1 else None
        self.shards = [Shard(cfg, i, pieces, shared_gen) for i in range(cfg.rollout_shards)]

    def collect(self, net: CompactNet, snapshot: CompactNet, hand_reward: float
                ) -> list[tuple[torch.Tensor, ...]]:
        """Every shard's batches, in shard order."""
        return [b for shard in self.shards
                for b in shard.collect(net, snapshot, self.cfg, hand_reward, self.handoff)]

    def close(self) -> None:
        """Nothing to stop: the shards live in this process."""


def rollouts_for(cfg: BatchPPOConfig, pieces: tuple[str, ...], gen: torch.Generator,
                 handoff: Handoff | None) -> Any:
    """Where the run's rollouts are stepped: in this process, or on ``ray_workers`` Ray
    actors (:class:`training.batch_ray.RayRollouts`); both ``collect`` the same shards."""
    if cfg.ray_workers:
        from .batch_ray import RayRollouts

        return RayRollouts(cfg, pieces)
    return LocalRollouts(cfg, pieces, gen, handoff)


def evaluate_batched(net: CompactNet, cfg: BatchPPOConfig, n: int, games: int,
                     seed: int, handoff: Handoff | None = None) -> tuple[float, int]:
    """(win share / fair share, games) of one learner seat playing its most likely move
    against ``n - 1`` seats of ``cfg.eval_opponent`` (greedy or expert, batched), over
    ``games`` whole games; ``handoff`` plays the learner's positions with few players in,
    as in training."""
    B = min(games, 1024)
    env = BatchEnv(B, n, cfg.rules, seed)
    out = env.reset()
    rng = np.random.default_rng(seed)
    learner = rng.integers(n, size=B)
    start_lives = env.rules.start_lives
    expert = (BatchExpert(cfg.rules)
              if net.advice or cfg.eval_opponent == "expert"
              or (handoff is not None and handoff.policy.advice) else None)
    wins = finished = 0
    while finished < games:
        obs = out["observation"]
        feats = env.hand_features(obs)
        obs_t, feats_t = torch.from_numpy(obs), torch.from_numpy(feats)
        dense_t = dense_inputs(obs_t, feats_t, n, start_lives, env.rules, net.pieces)
        moves = None if expert is None else expert.actions(env)
        with torch.no_grad():
            logits, _ = net(obs_t[:, :52], feats_t, dense_t,
                            torch.from_numpy(out["action_mask"]),
                            None if moves is None or not net.advice else torch.from_numpy(moves))
        mine = logits.argmax(-1).numpy()
        if handoff is not None:
            rows = np.flatnonzero((players_in(obs, n) <= handoff.players)
                                  & (out["current_player"] == learner))
            if len(rows):
                mine[rows] = handoff.moves(env, out, rows, moves)
        theirs = moves if cfg.eval_opponent == "expert" else env.threshold_actions(25)
        acts = np.where(out["current_player"] == learner, mine, theirs)
        out = env.step(acts)
        for g in np.flatnonzero(out["done"]):
            if finished < games:
                finished += 1
                wins += int(out["winner"][g] == learner[g])
            learner[g] = rng.integers(n)
    return wins / finished * n, finished


POLICY_FILE = "policy.npz"


def export(net: CompactNet, path: str | Path, cfg: BatchPPOConfig,
           metrics: dict[str, Any]) -> None:
    """Write ``net`` as a compact policy file (:mod:`agents.compact`): numpy only to play."""
    arrays = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    compact.save_compact(path, arrays, {"hidden": net.hidden, "layers": net.layers,
                                "expert_advice": net.advice, "pieces": list(net.pieces),
                                "num_codes": NUM_CODES, "num_actions": NUM_ACTIONS,
                                "rules": cfg.rules, "rules_mix": list(cfg.rules_mix),
                                "player_counts": list(cfg.player_counts),
                                "config": dataclasses.asdict(cfg), "metrics": metrics})


def train(cfg: BatchPPOConfig, out: str | Path, resume: bool = False,
          log: Any = print) -> dict[str, Any]:
    """``scat train`` with ``trainer: batch``: train, write ``out/policy.npz``, ``out/tb``
    (TensorBoard: every update's :data:`UPDATE_STATS`), the final duplicate-deal evaluation
    (``compact:`` spec), ``out/learning_curve.png`` (the in-training checks and the final
    evaluation, 95% intervals) and ``out/summary.json``."""
    if resume:
        raise ValueError("the batch trainer does not resume a run: a run takes minutes, "
                         "start it again with --overwrite")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    net, summary = train_network(cfg, log, tb_dir=out / "tb")
    export(net, out / POLICY_FILE, cfg,
           {k: v for k, v in summary.items() if k not in ("history", "losses")})
    if cfg.handoff is not None:
        write_set(out, cfg)
    if cfg.final_eval_games:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from .evaluate import final_tournament_evaluation

        # In a fresh interpreter (a non-daemon worker, so it may start the tournament's):
        # torch's OpenMP threads (two, for training) make a fork of this process abort
        # ("fork() called from a process already using GNU OpenMP").
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            summary["final_eval"] = pool.submit(
                final_tournament_evaluation, f"compact:{out / POLICY_FILE}",
                list(cfg.eval_opponents), list(cfg.eval_players), cfg.final_eval_games,
                out / "final_eval", workers=cfg.final_eval_workers, rules=cfg.rules).result()
    if summary["history"] or "final_eval" in summary:
        from .evaluate import write_learning_curve

        if "final_eval" in summary:  # the final evaluation's point sits at the run's end
            summary["final_eval"]["samples"] = summary["samples"]
        write_learning_curve(summary["history"], out / "learning_curve.png",
                             final=summary.get("final_eval"))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return summary


SET_FILE = "set.yaml"


def write_set(out: Path, cfg: BatchPPOConfig) -> None:
    """``out/set.yaml``: the run's policy with its handoff, as ``compact:`` plays a set
    (the run was trained to play only with it). Not for a handoff that is itself a set:
    a set does not nest, so its members would be listed by hand."""
    spec = cfg.handoff.removeprefix("compact:")
    if compact.is_set_manifest(spec):
        (out / SET_FILE).unlink(missing_ok=True)
        return
    path = Path(compact.policy_path(spec)).resolve()
    lines = [f"# {cfg.name}: {POLICY_FILE} while more than {cfg.handoff_players} players "
             f"are in, then its handoff ({spec})", "format: scat-policy-set", "policies:"]
    lines += [f"  {k}: {path}" for k in range(2, cfg.handoff_players + 1)]
    lines.append(f"  default: {POLICY_FILE}")
    (out / SET_FILE).write_text("\n".join(lines) + "\n")


def network_pieces(cfg: BatchPPOConfig) -> tuple[str, ...]:
    """The observation pieces a run's network reads: its rules' own, or, for a run of many
    rules (``rules_mix``), every piece (the rules' options among them), so that one network
    plays a table of any rules."""
    if cfg.rules_mix:
        return tuple(compact.PIECE_WIDTHS)
    return table_pieces(Rules.preset(cfg.rules))


def warm_start(net: CompactNet, path: str, field: str = "init_from") -> None:
    """Load ``net``'s weights, critic included, from the compact policy file ``path`` (or a
    shipped one by name: ``scat_batch``); a file of another shape is refused in one line
    naming what differs. A file that reads fewer observation pieces than ``net`` starts it
    with zero weights on the others: the network plays as the file does until it learns
    what they say (a policy of the standard game, continued on many rules). ``field``: the
    config field the errors name."""
    arrays, meta = compact.load_compact(compact.policy_path(path))
    ours = {"hidden": net.hidden, "layers": net.layers, "expert_advice": net.advice,
            "num_actions": NUM_ACTIONS}
    absent = {"expert_advice": False, "pieces": []}  # files written before the field
    for key, want in ours.items():
        have = meta.get(key, absent.get(key))
        if have != want:
            raise ValueError(f"{field} {path!r}: {key} is {have!r} in the file, {want!r} "
                             "in the config")
    have_pieces = list(meta.get("pieces", []))
    if any(p not in net.pieces for p in have_pieces):
        raise ValueError(f"{field} {path!r}: pieces is {have_pieces!r} in the file, "
                         f"{list(net.pieces)!r} in the config")
    if have_pieces != list(net.pieces):
        arrays = dict(arrays)
        layer = np.zeros((net.hidden, compact.pieces_width(net.pieces)), np.float32)
        at, old = 0, 0
        for piece in net.pieces:
            width = compact.PIECE_WIDTHS[piece]
            if piece in have_pieces:
                layer[:, at:at + width] = arrays["piece_layer.weight"][:, old:old + width]
                old += width
            at += width
        arrays["piece_layer.weight"] = layer
    rows = arrays["cards.weight"].reshape(52, NUM_CODES, -1)[:, C_UNSEEN]
    if rows.any():  # the network sums only seen cards: it would not play as the file does
        raise ValueError(f"{field} {path!r}: its unseen cards' rows are not zero (a file "
                         "from before the trainer left them out), so it cannot be continued")
    state = net.state_dict()
    net.load_state_dict({k: torch.from_numpy(arrays[k]).to(v.dtype) for k, v in state.items()})


#: What every update logs, as CleanRL's PPO does (means over the update's minibatches, the
#: policy's own rows): the loss and its parts, the approximate KL between the policy that
#: collected the rollout and the updated one, the share of rows whose ratio was clipped,
#: the explained variance of the value head on the rollout, and the learning rate.
UPDATE_STATS = ("loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
                "explained_variance", "learning_rate")


def ppo_loss(net: CompactNet, cfg: BatchPPOConfig, cards: torch.Tensor, feats: torch.Tensor,
             dense: torch.Tensor, mask: torch.Tensor, advice: torch.Tensor | None,
             act: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor, ret: torch.Tensor,
             policy: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
    """Clipped PPO loss of a minibatch and its statistics (:data:`UPDATE_STATS`).
    ``policy`` (1.0 or 0.0 a row): whether the row is the policy's own decision; a
    handed-off row (0.0) trains the value head only. The statistics are read off detached
    values: the loss and its gradient are what they are without them."""
    logits, value = net(cards, feats, dense, mask, advice)
    logp_all = torch.log_softmax(logits, -1)
    logratio = logp_all.gather(1, act[:, None]).squeeze(-1) - logp_old
    ratio = torch.exp(logratio)
    pg = -torch.min(ratio * adv, torch.clamp(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv)
    ent = -(logp_all.exp() * torch.where(mask, logp_all, torch.zeros_like(logp_all))).sum(-1)
    own = policy.sum().clamp(min=1.0)
    policy_loss = (pg * policy).sum() / own
    value_loss = ((value - ret) ** 2).mean()
    ent_sum = (ent * policy).sum()
    loss = policy_loss + cfg.vf_coef * value_loss - cfg.ent_coef * ent_sum / own
    with torch.no_grad():
        stats = {"loss": loss, "policy_loss": policy_loss, "value_loss": value_loss,
                 "entropy": ent_sum / own,
                 # http://joschu.net/blog/kl-approx.html, as CleanRL estimates it
                 "approx_kl": (((ratio - 1) - logratio) * policy).sum() / own,
                 "clip_fraction": (((ratio - 1).abs() > cfg.clip).float() * policy).sum() / own}
        return loss, {k: float(v.detach()) for k, v in stats.items()}


def explained_variance(predicted: torch.Tensor, target: torch.Tensor) -> float:
    """1 - Var(target - predicted) / Var(target): 1 is a perfect value head, 0 one no better
    than the mean, below 0 worse (NaN when the targets do not vary)."""
    var = float(target.var())
    return float("nan") if var == 0 else 1.0 - float((target - predicted).var()) / var


def train_network(cfg: BatchPPOConfig, log: Any = print, tb_dir: str | Path | None = None
                  ) -> tuple[CompactNet, dict[str, Any]]:
    """Train from scratch, or from ``cfg.init_from``; the network and a summary (samples,
    samples/s, evaluations, every update's :data:`UPDATE_STATS` under ``losses``, also
    written to TensorBoard in ``tb_dir`` when given). ``cfg.numba_threads`` holds for the
    run only: the caller's numba thread count is back when it returns."""
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    before = numba.get_num_threads()
    if cfg.numba_threads is not None:  # at most the pool numba started with
        numba.set_num_threads(min(cfg.numba_threads, numba.config.NUMBA_NUM_THREADS))
    writer = None
    if tb_dir is not None:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(tb_dir))
    try:
        return _train(cfg, log, writer)
    finally:
        numba.set_num_threads(before)
        if writer is not None:
            writer.close()


def out_of_time(elapsed_s: float, last_update_s: float, time_limit_s: float | None) -> bool:
    """Whether the run stops now: the next update, at the pace of the last one, would end
    past the time limit. Checking only that the limit has not passed yet let a run start an
    update a second before it and end a whole update late."""
    return time_limit_s is not None and elapsed_s + last_update_s > time_limit_s


def _eval_due(cfg: BatchPPOConfig, update: int, since_eval_s: float) -> bool:
    """Whether the in-training check runs after ``update``: every ``eval_every_updates``
    updates, and every ``eval_every_s`` seconds."""
    return bool((cfg.eval_every_updates and update % cfg.eval_every_updates == 0)
                or (cfg.eval_every_s and since_eval_s >= cfg.eval_every_s))


def check_now(net: CompactNet, cfg: BatchPPOConfig, handoff: Handoff | None,
              update: int, samples: int, elapsed_s: float) -> dict[str, Any]:
    """The in-training check (:func:`evaluate_batched` at every table size) as a point of
    the learning curve: win rates with Wilson 95% intervals under
    :func:`training.evaluate.write_learning_curve`'s keys (``expert_x3``), and the same
    figures as multiples of the fair share under ``vs_<opponent>``."""
    from .evaluate import wilson

    point: dict[str, Any] = {"update": update, "samples": samples, "elapsed_s": elapsed_s,
                             "win_rate": {}, "ci95": {}, "games": {}}
    shares = {}
    for n in cfg.player_counts:
        share, games = evaluate_batched(net, cfg, n, cfg.eval_games, update, handoff)
        wins = round(share * games / n)
        key = f"{cfg.eval_opponent}_x{n}"
        point["win_rate"][key] = wins / games
        point["ci95"][key] = list(wilson(wins, games))
        point["games"][key] = games
        shares[n] = share
    point[f"vs_{cfg.eval_opponent}"] = shares
    return point


def check_line(point: dict[str, Any], opponent: str) -> str:
    """A check in one line: each table size's multiple of the fair share and its interval."""
    parts = []
    for key, rate in point["win_rate"].items():
        n = int(key.rpartition("_x")[2])
        lo, hi = point["ci95"][key]
        parts.append(f"{n}p {rate * n:.2f}x [{lo * n:.2f}, {hi * n:.2f}]")
    return (f"[eval] update {point['update']}, {point['samples']:,} samples, "
            f"{point['elapsed_s']:,.0f} s: vs {opponent} " + ", ".join(parts) + " fair share")


def _batch(table: Table, ro: Rollout, adv: np.ndarray, ret: np.ndarray
           ) -> tuple[torch.Tensor, ...]:
    """A table's learner rows of one rollout as the update's tensors."""
    keep = ro.learn.reshape(-1)
    return (*_tensors(table, ro.obs.reshape(-1, ro.obs.shape[-1])[keep]),
            torch.from_numpy(ro.mask.reshape(-1, NUM_ACTIONS)[keep]),
            torch.from_numpy(ro.act.reshape(-1)[keep]),
            torch.from_numpy(ro.logp.reshape(-1)[keep]),
            torch.from_numpy(adv.reshape(-1)[keep]),
            torch.from_numpy(ret.reshape(-1)[keep]),
            torch.from_numpy(ro.advice.reshape(-1)[keep]),
            torch.from_numpy(ro.policy.reshape(-1)[keep]))


def _update(net: CompactNet, opt: torch.optim.Optimizer, cfg: BatchPPOConfig,
            batches: list[tuple[torch.Tensor, ...]], gen: torch.Generator
            ) -> tuple[int, int, dict[str, float]]:
    """PPO's epochs on one rollout of every table; (the policy's own samples, all rows, the
    update's statistics: :data:`UPDATE_STATS`)."""
    cols = list(zip(*batches, strict=True))
    (cards_t, feats_t, dense_t, mask_t, act_t, logp_t, adv_t, ret_t,
     advice_t, pol_t) = (torch.cat(c) for c in cols)
    advice_t = advice_t if cfg.expert_advice else None
    N = act_t.shape[0]
    played = int(pol_t.sum())  # the policy's own decisions (the rest: value samples)
    pol_f = pol_t.float()
    # the value head's predictions at collection time: GAE's returns less its advantages
    stats = {"explained_variance": explained_variance(ret_t - adv_t, ret_t),
             "learning_rate": float(opt.param_groups[0]["lr"])}
    own = adv_t[pol_t] if played > 1 else adv_t
    adv_t = (adv_t - own.mean()) / (own.std() + 1e-8)
    sums: dict[str, float] = {}
    steps = 0
    for _ in range(cfg.epochs):
        perm = torch.randperm(N, generator=gen)
        for lo in range(0, N, cfg.minibatch_samples):
            idx = perm[lo:lo + cfg.minibatch_samples]
            loss, parts = ppo_loss(net, cfg, cards_t[idx], feats_t[idx], dense_t[idx],
                                   mask_t[idx], None if advice_t is None else advice_t[idx],
                                   act_t[idx], logp_t[idx], adv_t[idx], ret_t[idx], pol_f[idx])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            for key, value in parts.items():
                sums[key] = sums.get(key, 0.0) + value
            steps += 1
    stats.update({key: total / max(steps, 1) for key, total in sums.items()})
    return played, N, {key: stats[key] for key in UPDATE_STATS}


#: TensorBoard's group of each statistic (CleanRL's names: ``losses/approx_kl``...).
STATS_GROUP = {"learning_rate": "charts"}


def _train(cfg: BatchPPOConfig, log: Any, writer: Any = None
           ) -> tuple[CompactNet, dict[str, Any]]:
    """:func:`train_network`'s loop: rollouts, updates, checks and progress, until the
    sample budget is spent or the next update would end past the time limit. ``writer``:
    a TensorBoard ``SummaryWriter`` that gets every update's statistics, by samples."""
    gen = torch.Generator().manual_seed(cfg.seed)
    pieces = network_pieces(cfg)
    net = CompactNet(cfg.hidden, cfg.layers, advice=cfg.expert_advice, pieces=pieces)
    if cfg.init_from:
        warm_start(net, cfg.init_from)
    snapshot = CompactNet(cfg.hidden, cfg.layers, advice=cfg.expert_advice, pieces=pieces)
    if cfg.frozen_from:  # a fixed opponent (scat exploit), whatever the learner becomes
        warm_start(snapshot, cfg.frozen_from, "frozen_from")
    else:
        snapshot.load_state_dict(net.state_dict())
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=1e-5)
    handoff = handoff_for(cfg)
    rollouts = rollouts_for(cfg, pieces, gen, handoff)
    try:
        return _loop(cfg, log, writer, net, snapshot, opt, gen, handoff, rollouts)
    finally:
        rollouts.close()


def _loop(cfg: BatchPPOConfig, log: Any, writer: Any, net: CompactNet, snapshot: CompactNet,
          opt: torch.optim.Optimizer, gen: torch.Generator, handoff: Handoff | None,
          rollouts: Any) -> tuple[CompactNet, dict[str, Any]]:
    """:func:`_train`'s loop, once the network and the rollouts' shards are built."""
    from .progress import budget_progress

    samples = value_only = update = 0
    start = time.perf_counter()
    progress = budget_progress(cfg.total_samples, cfg.time_limit_s, log, enabled=cfg.progress)
    say = progress.above(log)

    def elapsed() -> float:
        return time.perf_counter() - start

    history: list[dict[str, Any]] = []
    losses: list[dict[str, Any]] = []
    if cfg.eval_every_s:  # the curve starts where the run does
        history.append(check_now(net, cfg, handoff, 0, 0, elapsed()))
        if cfg.progress:
            say(check_line(history[-1], cfg.eval_opponent))
    last_eval = elapsed()
    last_update_s = 0.0
    rollout_s = 0.0  # the part of the time spent collecting (the rest: updates, checks)
    while samples < cfg.total_samples and not out_of_time(elapsed(), last_update_s,
                                                          cfg.time_limit_s):
        t0 = elapsed()
        coef = cfg.hand_reward
        if cfg.hand_reward_decay_samples:
            coef *= max(0.0, 1.0 - samples / cfg.hand_reward_decay_samples)
        batches = rollouts.collect(net, snapshot, coef)
        rollout_s += elapsed() - t0
        played, rows, update_stats = _update(net, opt, cfg, batches, gen)
        samples += played
        value_only += rows - played
        update += 1
        losses.append({"update": update, "samples": samples, **update_stats})
        if writer is not None:
            for key, value in update_stats.items():
                writer.add_scalar(f"{STATS_GROUP.get(key, 'losses')}/{key}", value, samples)
        if update % cfg.snapshot_every_updates == 0 and not cfg.frozen_from:
            snapshot.load_state_dict(net.state_dict())
        last_update_s = elapsed() - t0
        progress.update(samples, elapsed(), speed=f"{samples / elapsed():,.0f}/s")
        if _eval_due(cfg, update, elapsed() - last_eval):
            history.append(check_now(net, cfg, handoff, update, samples, elapsed()))
            last_eval = elapsed()
            if cfg.progress:  # --no-progress keeps a run quiet until its report
                say(check_line(history[-1], cfg.eval_opponent))
    progress.close()
    wall = elapsed()
    return net, {"samples": samples, "value_only_samples": value_only, "updates": update,
                 "elapsed_s": wall, "samples_per_s_since_start": samples / max(wall, 1e-9),
                 "last_update": losses[-1] if losses else {}, "losses": losses,
                 "history": history, "rollout_s": rollout_s,
                 "rollout_workers": rollouts.workers,
                 "worker_restarts": rollouts.restarts}
