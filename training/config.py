"""Training configs: one dataclass per trainer, one YAML file per run, validated on load.

A config names its trainer and holds that trainer's hyper-parameters at the top level::

    name: default
    trainer: batch           # a name of training.trainers: batch (training.batch_ppo,
                             # BatchPPOConfig) | sb3 (training.sb3_train, SB3Config)
                             # | rllib (training.rllib_train, RLlibConfig)
    seed: 1
    total_samples: 2000000
    ...                      # any field of that trainer's config class

Unknown keys are an error (a typo must not silently fall back to a default), and every value
is type-checked before a trainer is imported.

Units. A *sample* is one learner decision (one training example; SB3 calls them timesteps:
in :class:`~training.single_agent.ScatSingleAgentEnv` every env step is one learner decision).
An *update* is one rollout followed by the PPO epochs on it. Every count whose unit could be
read two ways says it in its name: ``total_samples``, ``rollout_samples``,
``minibatch_samples``, ``eval_every_updates`` (batch) against ``eval_every_samples`` (SB3),
``time_limit_s``. docs/TRAINING.md lists every field.

This module imports no trainer: it is what the CLI reads before it decides which trainer (and
so which heavy libraries) to load.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.neural.archive import MAX_PARAMETERS
from scat_env import DEFAULT_MAX_TURNS, Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.rewards import check_shaping
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS
from scat_env.yamlfile import one_line, read_yaml

#: The largest value of each count. Past these a run cannot fit in memory or finish (a
#: ``hidden: 100000000`` asked torch for petabytes, ``max_players: 1000000`` for an
#: observation of millions of numbers), or its policy file could not be read back
#: (:mod:`agents.neural.policy_file` refuses wider or deeper networks as corrupt), so the
#: config is refused before anything is allocated. Every shipped config is far inside them.
COUNT_LIMITS: dict[str, int] = {
    "hidden": 4096,  # agents.neural.policy_file.MAX_HIDDEN
    "layers": 16,  # agents.neural.policy_file.MAX_LAYERS
    "parallel_games": 1 << 16,
    "envs_per_table": 1 << 16,
    "rollout_steps": 1 << 14,
    "n_envs": 1024,
    "rollout_samples": 1 << 21,  # 2M samples of 608 float32: ~5 GB of observations
    "rollout_samples_per_env": 1 << 21,
    "minibatch_samples": 1 << 21,
    "epochs": 1000,
    "total_samples": 10**12,
    "torch_threads": 1024,
    "numba_threads": 1024,
    "snapshot_pool": 256,
    "snapshot_every_updates": 10**9,
    "checkpoint_every_updates": 10**9,
    "max_turns": 10**6,
    "eval_games": 10**7,
    "final_eval_games": 10**7,
    "final_eval_workers": 1024,
    "train_batch_samples": 1 << 21,
    "num_env_runners": 1024,
    "num_learners": 1024,
    "envs_per_env_runner": 1024,
}
#: Seeds are what numpy's and torch's generators accept alike.
SEED_RANGE = (0, 2**63 - 1)


def _positive_ints(cfg: Any, names: tuple[str, ...], where: str) -> None:
    for name in names:
        value = getattr(cfg, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{where}: {name} must be a positive int, got {value!r}")
        if value > COUNT_LIMITS.get(name, value):
            raise ValueError(f"{where}: {name} must be at most {COUNT_LIMITS[name]:,}, "
                             f"got {value:,}")
    if "hidden" in names and "layers" in names:
        _network_fits(cfg.hidden, cfg.layers, where)


def _network_fits(hidden: int, layers: int, where: str) -> None:
    """Refuse a width and depth whose weights between layers and into the action head
    alone (a lower bound: the input layer comes on top) pass what a policy file may hold
    (:data:`agents.neural.archive.MAX_PARAMETERS`): such a run would train for hours and
    then fail to save its first policy."""
    weights = (layers - 1) * hidden * hidden + hidden * NUM_ACTIONS
    if weights > MAX_PARAMETERS:
        raise ValueError(f"{where}: hidden {hidden:,} with {layers} layers has at least "
                         f"{weights:,} weights; a policy holds at most "
                         f"{MAX_PARAMETERS:,} parameters (a narrower or shallower network)")


def _counts(cfg: Any, names: tuple[str, ...], where: str) -> None:
    """Whole numbers that may be 0 (0 turns the thing off), within :data:`COUNT_LIMITS`."""
    for name in names:
        value = getattr(cfg, name)
        high = COUNT_LIMITS.get(name, 10**12)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= high:
            raise ValueError(f"{where}: {name} must be a whole number from 0 to {high:,}, "
                             f"got {value!r}")


def _is_weight(value: Any) -> bool:
    """A finite number >= 0 (nan and inf compare in ways that let them through ``< 0``)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:  # an int past a float's range would overflow the sum of weights later
        as_float = float(value)
    except OverflowError:
        return False
    return 0 <= as_float < float("inf")


def _common(cfg: Any, where: str) -> None:
    """The fields both trainers share: seed, table sizes, opponents, evaluation."""
    low, high = SEED_RANGE
    if not isinstance(cfg.seed, int) or isinstance(cfg.seed, bool) or not low <= cfg.seed <= high:
        raise ValueError(f"{where}: seed must be a whole number from 0 to 2**63-1, "
                         f"got {cfg.seed!r}")
    if (not isinstance(cfg.max_players, int) or isinstance(cfg.max_players, bool)
            or not MIN_PLAYERS <= cfg.max_players <= MAX_PLAYERS):
        raise ValueError(f"{where}: max_players must be a whole number from {MIN_PLAYERS} to "
                         f"{MAX_PLAYERS}, got {cfg.max_players!r}")
    if not isinstance(cfg.opponents, dict) or not cfg.opponents or any(
            not isinstance(k, str) or not k.strip() for k in cfg.opponents):
        raise ValueError(f"{where}: opponents must map agent specs (or self, snapshot) to "
                         f"weights, got {cfg.opponents!r}")
    weights = list(cfg.opponents.values())
    if not all(map(_is_weight, weights)) or sum(weights) <= 0:
        raise ValueError(f"{where}: opponents needs finite weights >= 0, not all 0, "
                         f"got {cfg.opponents!r}")
    for name in ("eval_players", "player_counts"):
        counts = getattr(cfg, name)
        if not isinstance(counts, list) or any(
                not isinstance(n, int) or isinstance(n, bool)
                or not MIN_PLAYERS <= n <= cfg.max_players for n in counts):
            raise ValueError(f"{where}: {name} must be ints in {MIN_PLAYERS}..max_players="
                             f"{cfg.max_players}, got {counts!r}")
    if not isinstance(cfg.eval_opponents, list) or any(
            not isinstance(s, str) or not s.strip() for s in cfg.eval_opponents):
        raise ValueError(f"{where}: eval_opponents must be a list of agent specs, "
                         f"got {cfg.eval_opponents!r}")


#: The values each number may take: ``(low, high, low_open, high_open)``. Outside them PPO
#: does not train (a discount above 1 diverges, a clip of 0 never moves the policy, a
#: negative entropy bonus punishes exploring), so the run is refused before it starts.
#: ``None`` stays allowed where the field allows it (no time limit, no KL stop).
RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "lr": (0.0, 1.0, True, True),
    "gamma": (0.0, 1.0, True, False),
    "gae_lambda": (0.0, 1.0, False, False),
    "clip": (0.0, 1.0, True, False),
    "ent_coef": (0.0, 1.0, False, False),
    "vf_coef": (0.0, 10.0, False, False),
    "max_grad_norm": (0.0, 1e3, True, False),
    "target_kl": (0.0, 10.0, True, False),
    "hand_reward": (0.0, 10.0, False, False),
    "advice_gain": (0.0, 100.0, False, False),
    "snapshot_weight": (0.0, 1e3, False, False),
    "time_limit_s": (0.0, 1e7, True, False),
    "eval_every_s": (0.0, 1e7, True, False),
}


def _in_ranges(cfg: Any, where: str) -> None:
    """Refuse a number outside :data:`RANGES` (nan and inf included) in one line."""
    for name, (low, high, low_open, high_open) in RANGES.items():
        value = getattr(cfg, name, None)
        if value is None:
            continue
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
              and (low < value if low_open else low <= value)
              and (value < high if high_open else value <= high))
        if not ok:
            span = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise ValueError(f"{where}: {name} must be in {span}, got {value!r}")


@dataclass
class SB3Config:
    """Every setting of an SB3 run (:mod:`training.sb3_train`; YAML ``trainer: sb3``).

    Budget and schedules count samples (SB3's timesteps, all envs together).
    """

    name: str = "sb3"
    seed: int = 1
    rules: str = "standard"  # preset name or a rules YAML file
    player_counts: list[int] = field(default_factory=lambda: [2, 3, 4])
    max_players: int = 6  # observation padded to this many seats
    opponents: dict[str, float] = field(default_factory=lambda: {"greedy": 1.0, "random": 0.3})
    snapshot_every_samples: int = 0  # a frozen copy joins every env's pool this often; 0: never
    snapshot_weight: float = 1.0  # opponent weight of each snapshot
    hand_reward: float = 0.1  # coefficient of the per-hand shaping (scat_env.rewards)
    shaping: str = "lives"  # lives | win_chance (scat_env.rewards)
    n_envs: int = 8  # parallel envs, one game each
    vec_env: str = "subproc"  # subproc (one process per env: faster with free cores) | dummy
    total_samples: int = 200_000  # learner decisions
    time_limit_s: float | None = None  # seconds of training (resumes add up); None: no limit
    rollout_samples_per_env: int = 512  # SB3's n_steps
    minibatch_samples: int = 2048  # SB3's batch_size
    epochs: int = 4  # SB3's n_epochs
    lr: float = 3e-4
    gamma: float = 0.998
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    hidden: int = 256  # units per hidden layer
    layers: int = 2
    torch_threads: int = 1
    eval_every_samples: int = 50_000  # 0: only at the end
    eval_games: int = 60  # per (opponent, player count), seats rotated
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "expert"])
    eval_players: list[int] = field(default_factory=lambda: [2, 3, 4])
    final_eval_games: int = 300  # per (opponent, player count), duplicate deals; 0: none
    checkpoint_every_samples: int = 50_000
    progress: bool = True  # progress bar on stderr

    def __post_init__(self) -> None:
        if self.vec_env not in ("dummy", "subproc"):
            raise ValueError(f"sb3 config: vec_env must be dummy or subproc, got {self.vec_env!r}")
        _common(self, "sb3 config")
        _positive_ints(self, ("n_envs", "rollout_samples_per_env", "minibatch_samples", "epochs",
                              "total_samples", "hidden", "layers", "torch_threads"),
                       "sb3 config")
        _counts(self, ("snapshot_every_samples", "eval_every_samples", "eval_games",
                       "final_eval_games", "checkpoint_every_samples"), "sb3 config")
        check_shaping(self.shaping, "sb3 config: ")
        _in_ranges(self, "sb3 config")


#: The opponents a batched run plays, batched like its games (training.batch_ppo).
BATCH_OPPONENTS = ("greedy", "random", "snapshot", "expert")


@dataclass
class BatchPPOConfig:
    """Every setting of a batched run (:mod:`training.batch_ppo`; YAML ``trainer: batch``).

    A *sample* is one learner decision, as for the other trainers. Each update collects
    ``rollout_steps`` batched steps from ``envs_per_table`` games of every table size of
    ``player_counts``; in self-play games every decision is a learner sample, in the others
    only the learner seat's.
    """

    name: str = "batch"
    seed: int = 1
    rules: str = "standard"  # a preset the batched engine plays (scat_env.batch.covers)
    player_counts: list[int] = field(default_factory=lambda: [2, 3, 4])
    envs_per_table: int = 512  # games of each table size stepped at once
    rollout_steps: int = 64  # batched steps per update, per table size
    self_play: float = 0.5  # share of games where every seat is a learner seat
    opponents: dict[str, float] = field(default_factory=lambda: {
        "greedy": 0.5, "snapshot": 0.3, "random": 0.2})  # the other games' opponents
    # Learner seats in a game against opponents (the rest are the opponent kind drawn for
    # it), at most num_players - 1: more samples from those games at large tables, where
    # one seat in ten is all a game gives.
    learner_seats: int = 1
    snapshot_every_updates: int = 10
    expert_advice: bool = False  # expert's move as a learned bonus on that action's logit
    # A compact policy file (``scat train`` output, or a shipped name) whose weights the run
    # starts from: its hidden, layers and expert_advice must be this config's. Relative
    # paths are from the working folder. A long run goes in legs, each from the last one.
    init_from: str | None = None
    # Hand the learner's and snapshots' seats to a fixed compact policy or set (a file, a
    # set manifest or a shipped name: ``scat_batch_2p``) once at most ``handoff_players``
    # players are in, read as that smaller game (``compact:`` sets play so). Why: a set's
    # member for three players plays only while three are in; the heads-up that follows is
    # its two-player member's. With a hand-off the policy learns only positions it will play,
    # and what reaching the smaller game is worth under the player who really plays it: the
    # handed-off positions train the value head, not the policy.
    handoff: str | None = None
    handoff_players: int = 2
    hand_reward: float = 0.25  # lives shaping: coef * (others' mean lives lost - mine)
    hand_reward_decay_samples: int = 0  # linear decay of hand_reward to 0 (0: constant)
    hidden: int = 128
    layers: int = 2
    lr: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    epochs: int = 3
    minibatch_samples: int = 8192
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    total_samples: int = 10_000_000  # learner decisions
    time_limit_s: float | None = None  # seconds of training; None: no limit
    torch_threads: int = 2
    # Threads of the batched engine's numba kernels; None: numba's own count (every core).
    # On a machine busy with other work, two threads (numba's and torch's) waited at their
    # barriers for a core another process held: 674 learner decisions/s against 12,353 with
    # one thread each, the same 40-second run (docs/TRAINING.md, "Threads").
    numba_threads: int | None = None
    eval_every_updates: int = 20  # in-training check against eval_opponent (batched); 0: none
    # The same check every this many seconds as well (None: by updates only): its cadence in
    # time, whatever the machine's pace; the first check is of the untrained network.
    eval_every_s: float | None = None
    eval_games: int = 2000
    eval_opponent: str = "greedy"  # the in-training check's opponents: greedy or expert
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "expert"])
    eval_players: list[int] = field(default_factory=lambda: [2, 3, 4])
    final_eval_games: int = 1000  # per (opponent, player count), duplicate deals; 0: none
    final_eval_workers: int = 2
    progress: bool = True  # the in-training check's line on stderr (--no-progress: none)

    def _check_observation(self, where: str) -> None:
        """The batched trainer's network reads the base compact observation: a preset whose
        observation appends pieces (the calls, golf, the points races) would be trained
        blind to them, so it is refused, naming what the network could not see."""
        from scat_env.batch import beyond_base_observation
        from scat_env.rules import PRESETS, Rules

        if self.rules not in PRESETS:
            return  # refused by name elsewhere: the batched trainer takes presets only
        why = beyond_base_observation(Rules.preset(self.rules))
        if why is not None:
            raise ValueError(f"{where}: rules {self.rules!r}: the batched trainer's network "
                             f"reads the base compact observation, which has no word for "
                             f"{why}; train these rules with 'trainer: sb3'")

    def __post_init__(self) -> None:
        where = "batch config"
        low, high = SEED_RANGE
        if type(self.seed) is not int or not low <= self.seed <= high:
            raise ValueError(f"{where}: seed must be a whole number from 0 to 2**63-1, "
                             f"got {self.seed!r}")
        for name in ("player_counts", "eval_players"):
            counts = getattr(self, name)
            if not isinstance(counts, list) or not counts or any(
                    type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS for n in counts):
                raise ValueError(f"{where}: {name} must be a list of ints in {MIN_PLAYERS}.."
                                 f"{MAX_PLAYERS}, got {counts!r}")
        if (not isinstance(self.opponents, dict) or not self.opponents
                or any(k not in BATCH_OPPONENTS for k in self.opponents)):
            raise ValueError(f"{where}: opponents must map some of {BATCH_OPPONENTS} to "
                             f"weights, got {self.opponents!r}")
        if not all(map(_is_weight, self.opponents.values())) or sum(
                self.opponents.values()) <= 0:
            raise ValueError(f"{where}: opponents needs finite weights >= 0, not all 0, "
                             f"got {self.opponents!r}")
        if not isinstance(self.expert_advice, bool):
            raise ValueError(f"{where}: expert_advice must be true or false, "
                             f"got {self.expert_advice!r}")
        if self.init_from is not None and (not isinstance(self.init_from, str)
                                           or not self.init_from.strip()):
            raise ValueError(f"{where}: init_from must be a policy file's path, "
                             f"got {self.init_from!r}")
        if self.handoff is not None and (not isinstance(self.handoff, str)
                                         or not self.handoff.strip()):
            raise ValueError(f"{where}: handoff must be a compact policy file, set manifest "
                             f"or shipped name (scat_batch_2p), got {self.handoff!r}")
        if self.handoff is not None and (
                type(self.handoff_players) is not int
                or not 2 <= self.handoff_players < min(self.player_counts)):
            raise ValueError(f"{where}: handoff_players must be an int from 2 to one less "
                             f"than the smallest player count ({min(self.player_counts)}), "
                             f"got {self.handoff_players!r}")
        if self.eval_opponent not in ("greedy", "expert"):
            raise ValueError(f"{where}: eval_opponent must be greedy or expert, "
                             f"got {self.eval_opponent!r}")
        self._check_observation(where)
        if (self.opponents.get("expert") or self.expert_advice
                or self.eval_opponent == "expert"):
            from agents.batch_expert import uncovered
            from scat_env.rules import PRESETS, Rules

            why = uncovered(Rules.preset(self.rules)) if self.rules in PRESETS else None
            if why is not None:
                field_name = ("expert_advice" if self.expert_advice else "opponents"
                              if self.opponents.get("expert") else "eval_opponent")
                raise ValueError(f"{where}: {field_name}: the batched expert does not play "
                                 f"rules {self.rules!r}: {why}")
        if not isinstance(self.eval_opponents, list) or any(
                not isinstance(s, str) or not s.strip() for s in self.eval_opponents):
            raise ValueError(f"{where}: eval_opponents must be a list of agent specs, "
                             f"got {self.eval_opponents!r}")
        if (not isinstance(self.self_play, (int, float)) or isinstance(self.self_play, bool)
                or not 0.0 <= self.self_play <= 1.0):
            raise ValueError(f"{where}: self_play must be a share from 0 to 1, "
                             f"got {self.self_play!r}")
        _positive_ints(self, ("envs_per_table", "rollout_steps", "hidden", "layers", "epochs",
                              "learner_seats", "minibatch_samples", "total_samples",
                              "torch_threads",
                              "snapshot_every_updates", "final_eval_workers"), where)
        _counts(self, ("eval_every_updates", "eval_games", "final_eval_games",
                       "hand_reward_decay_samples"), where)
        if self.numba_threads is not None:
            _positive_ints(self, ("numba_threads",), where)
        _in_ranges(self, where)


@dataclass
class RLlibConfig:
    """Every setting of an RLlib run (:mod:`training.rllib_train`; YAML ``trainer: rllib``).

    A *sample* is one learner decision (one step of the RLlib env: one learning seat's
    move). Schedules count RLlib iterations (one ``algo.train()``: a batch of
    ``train_batch_samples`` samples and the PPO epochs on it). The run plays tables of
    ``num_players`` only: the policy reads the env's own observation of that table size.
    """

    name: str = "rllib"
    seed: int = 1
    rules: str = "standard"  # preset name or a rules YAML file
    num_players: int = 3
    # Every seat but one learning seat per game: "self" (the shared policy again, trained
    # on too), "snapshot" (its frozen copy) or an agent spec played inside the env.
    opponents: dict[str, float] = field(default_factory=lambda: {
        "self": 0.3, "snapshot": 0.2, "random": 0.2, "greedy": 0.3})
    snapshot_every_iterations: int = 5  # the frozen copy takes the live weights this often
    hand_reward: float = 0.25  # lives shaping added to the game result (scat_env.rewards)
    max_turns: int = DEFAULT_MAX_TURNS
    total_samples: int = 200_000
    time_limit_s: float | None = None  # seconds of training (resumes add up); None: no limit
    train_batch_samples: int = 4000  # RLlib's train_batch_size_per_learner
    minibatch_samples: int = 500  # RLlib's minibatch_size
    epochs: int = 4  # RLlib's num_epochs
    lr: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    hidden: int = 128
    layers: int = 2
    torch_threads: int = 1
    # -- scale: configuration only (docs/SCALING.md, "RLlib on a cluster") -----------------
    num_env_runners: int = 0  # 0: the driver samples itself; N: N remote sampling processes
    envs_per_env_runner: int = 1
    num_learners: int = 0  # 0: the driver learns itself; N: N remote learner processes
    num_gpus_per_learner: float = 0.0
    ray_address: str | None = None  # None: Ray on this machine; "auto" or "HOST:PORT": a cluster
    # -- evaluation, checkpoints, output ---------------------------------------------------
    eval_every_iterations: int = 0  # quick evaluation during training; 0: only at the end
    eval_games: int = 60  # per opponent, seats rotated
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "expert"])
    eval_players: list[int] | None = None  # None: [num_players], the only size it plays
    final_eval_games: int = 200  # per opponent, duplicate deals (training.tournament); 0: none
    checkpoint_every_iterations: int = 10
    progress: bool = True  # one line per iteration on stderr

    def __post_init__(self) -> None:
        where = "rllib config"
        low, high = SEED_RANGE
        if type(self.seed) is not int or not low <= self.seed <= high:
            raise ValueError(f"{where}: seed must be a whole number from 0 to 2**63-1, "
                             f"got {self.seed!r}")
        if type(self.num_players) is not int or not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise ValueError(f"{where}: num_players must be a whole number from {MIN_PLAYERS} "
                             f"to {MAX_PLAYERS}, got {self.num_players!r}")
        if not isinstance(self.opponents, dict) or not self.opponents or any(
                not isinstance(k, str) or not k.strip() for k in self.opponents):
            raise ValueError(f"{where}: opponents must map agent specs (or self, snapshot) to "
                             f"weights, got {self.opponents!r}")
        if not all(map(_is_weight, self.opponents.values())) or sum(self.opponents.values()) <= 0:
            raise ValueError(f"{where}: opponents needs finite weights >= 0, not all 0, "
                             f"got {self.opponents!r}")
        if not isinstance(self.eval_opponents, list) or any(
                not isinstance(s, str) or not s.strip() for s in self.eval_opponents):
            raise ValueError(f"{where}: eval_opponents must be a list of agent specs, "
                             f"got {self.eval_opponents!r}")
        _positive_ints(self, ("snapshot_every_iterations", "max_turns", "total_samples",
                              "train_batch_samples", "minibatch_samples", "epochs", "hidden",
                              "layers", "torch_threads", "envs_per_env_runner",
                              "checkpoint_every_iterations"), where)
        _counts(self, ("num_env_runners", "num_learners", "eval_every_iterations",
                       "eval_games", "final_eval_games"), where)
        if self.eval_players is None:
            self.eval_players = [self.num_players]
        if not isinstance(self.eval_players, list) or not self.eval_players or any(
                n != self.num_players or type(n) is not int for n in self.eval_players):
            raise ValueError(f"{where}: eval_players can only be [num_players] "
                             f"([{self.num_players}]): the policy reads the observation of "
                             f"that table size; got {self.eval_players!r}")
        if self.minibatch_samples > self.train_batch_samples:
            raise ValueError(f"{where}: minibatch_samples ({self.minibatch_samples}) must be at "
                             f"most train_batch_samples ({self.train_batch_samples})")
        gpus = self.num_gpus_per_learner
        if not _is_weight(gpus) or gpus > 64:
            raise ValueError(f"{where}: num_gpus_per_learner must be a number from 0 to 64, "
                             f"got {gpus!r}")
        if self.ray_address is not None and (
                not isinstance(self.ray_address, str) or not self.ray_address.isprintable()
                or (self.ray_address != "auto" and not _host_port(self.ray_address))):
            raise ValueError(f"{where}: ray_address must be null (this machine), 'auto' or "
                             f"HOST:PORT, got {self.ray_address!r}")
        _in_ranges(self, where)


def _host_port(address: str) -> bool:
    """``HOST:PORT`` or ``ray://HOST:PORT``: what a Ray cluster's address looks like."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    return bool(sep and host.strip() and port.isdigit() and 0 < int(port) < 65536)


def make_rules(spec: str) -> Rules:
    """The rules a config's ``rules`` field names: a preset, or a ``.yaml`` rules file."""
    if spec.endswith((".yaml", ".yml")):
        return Rules.from_yaml(spec)
    return Rules.preset(spec)


def load_config(path: str | Path, overrides: dict[str, Any] | None = None
                ) -> tuple[str, Any]:
    """Read ``path`` -> ``(trainer, config dataclass)``; raises ValueError naming the file
    (in one bounded line, whatever value the file holds)."""
    path = Path(path)
    raw = read_yaml(path, "training config")
    try:
        return _config_from(path, raw, overrides)
    except ValueError as exc:
        raise ValueError(one_line(str(exc))) from None


def _config_from(path: Path, raw: Any, overrides: dict[str, Any] | None
                 ) -> tuple[str, Any]:
    from .trainers import trainer as find_trainer

    if not isinstance(raw, dict):
        raise ValueError(f"{str(path)!r}: expected a mapping of config fields")
    raw = {**raw, **(overrides or {})}
    trainer = raw.pop("trainer", "batch")
    try:
        cls = find_trainer(trainer).config_cls
    except ValueError as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None
    raw.setdefault("name", path.stem)
    known = {f.name for f in dataclasses.fields(cls)}
    # YAML keys may be numbers or null (``1: 2``): named as text, never sorted mixed.
    unknown = sorted(repr(k) if not isinstance(k, str) else k for k in set(raw) - known)
    if unknown:
        raise ValueError(f"{str(path)!r}: unknown field(s) for trainer {trainer!r}: "
                         f"{', '.join(unknown)} (known: {', '.join(sorted(known))})")
    hints = typing.get_type_hints(cls)
    for name, value in raw.items():
        problem = _type_problem(value, hints[name])
        if problem:
            raise ValueError(f"{str(path)!r}: field {name!r} {problem} (got {value!r})")
    _check_name(path, raw["name"])
    try:
        cfg = cls(**raw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None
    _check_names(path, cfg)
    return trainer, cfg


#: Opponent names that are roles in a run, not agent specs: the learner, its frozen copy.
ROLES = ("self", "snapshot")


def _check_names(path: Path, cfg: Any) -> None:
    """The rules and every agent spec the config names, built once now: a typo is refused
    before the run folder exists, not as a warning that quietly changes the opponents' mix,
    nor after a whole run when the final evaluation meets it."""
    from agents.registry import make_agent

    try:
        make_rules(cfg.rules)
    except (ValueError, OSError) as exc:
        raise ValueError(f"{str(path)!r}: field 'rules': {exc}") from None
    for name in ("opponents", "eval_opponents"):
        for spec in getattr(cfg, name, None) or ():
            if spec in ROLES:
                continue
            try:
                make_agent(spec, seed=0)
            except ValueError as exc:
                raise ValueError(f"{str(path)!r}: field {name!r}: {exc}") from None


def _check_name(path: Path, name: Any) -> None:
    """A run's name is its default folder, ``runs/<name>``: a plain folder name, so a
    config cannot send a run (and its ``--overwrite``) outside ``runs/``."""
    if (not isinstance(name, str) or not name.strip() or not name.isprintable()
            or "/" in name or "\\" in name or name in (".", "..") or len(name) > 100):
        raise ValueError(f"{str(path)!r}: field 'name' must be a plain folder name (printable, "
                         f"no '/', at most 100 characters), got {name!r}")


def _type_problem(value: Any, hint: Any) -> str | None:
    """Why ``value`` does not fit the annotation ``hint`` (None when it fits).

    Checked here, before the trainer starts, so ``lr: fast`` is refused with the field's
    name instead of failing deep inside torch or SB3 minutes later.
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        problems = [_type_problem(value, h) for h in options if h is not type(None)]
        return None if any(p is None for p in problems) else problems[0]
    if hint is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else "must be an integer"
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else "must be a number"
    if hint is str:
        return None if isinstance(value, str) else "must be a string"
    if origin is list:
        return _items_problem(value, list, typing.get_args(hint), "an item")
    if origin is dict:
        return _items_problem(value, dict, typing.get_args(hint)[1:], "a value")
    return None


def _items_problem(value: Any, kind: type, item_hint: tuple[Any, ...], what: str) -> str | None:
    """The first problem of a list's items or a mapping's values (``item_hint`` empty: none)."""
    if not isinstance(value, kind):
        return "must be a list" if kind is list else "must be a mapping"
    for item in (value.values() if kind is dict else value) if item_hint else ():
        problem = _type_problem(item, item_hint[0])
        if problem:
            return f"has {what} that {problem}"
    return None
