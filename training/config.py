"""Training configs: one dataclass per trainer, one YAML file per run, validated on load.

A config names its trainer and holds that trainer's hyper-parameters at the top level::

    name: default
    trainer: batch           # a name of training.trainers: batch (training.batch_ppo,
                             # BatchPPOConfig) | sb3 (training.adapters.sb3, SB3Config)
                             # | rllib (training.adapters.rllib, RLlibConfig)
                             # | torchrl (training.adapters.torchrl, TorchRLConfig)
    seed: 1
    total_samples: 2000000
    ...                      # any field of that trainer's config class

Every field is declared once, as data: its type (the annotation), its default, and a
:class:`Spec` (kind, range, unit, help) in its ``metadata``. A field every trainer shares
(PPO's ``lr``, ``gamma``, ``clip``, ``epochs``..., the seed, the budget, the evaluation) has
its one :class:`Spec` in :data:`SHARED`; each config class gives only its own default
(:func:`shared`). One function, :func:`validate`, checks every field of every config from
its :class:`Spec`; what relates two fields (``handoff_players`` below the smallest table) is
a short ``relations`` method per class. docs/TRAINING.md's field lists are
:func:`fields_table`'s output.

Unknown keys are an error (a typo must not silently fall back to a default), and every value
is type-checked before a trainer is imported.

Units. A *sample* is one learner decision (one training example; SB3 calls them timesteps:
in :class:`~training.single_agent.ScatSingleAgentEnv` every env step is one learner decision).
An *update* is one rollout followed by the PPO epochs on it. Every count whose unit could be
read two ways says it in its name: ``total_samples``, ``rollout_steps``,
``minibatch_samples``, ``eval_every_updates`` (batch) against ``eval_every_samples`` (SB3),
``time_limit_s``.

This module imports no trainer: it is what the CLI reads before it decides which trainer (and
so which heavy libraries) to load.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.neural.archive import MAX_PARAMETERS
from scat_env import DEFAULT_MAX_TURNS, Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.rewards import SHAPINGS
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS
from scat_env.yamlfile import one_line, read_yaml

#: Seeds are what numpy's and torch's generators accept alike.
SEED_RANGE = (0, 2**63 - 1)
#: Opponent names that are roles in a run, not agent specs: the learner, its frozen copy.
ROLES = ("self", "snapshot")
#: The opponents a batched run plays, batched like its games (training.batch_ppo).
BATCH_OPPONENTS = ("greedy", "random", "snapshot", "expert")


@dataclass(frozen=True)
class Spec:
    """How one config field is checked and documented.

    ``kind`` says what the value is: ``positive`` (a whole number >= 1, at most ``high``),
    ``count`` (>= 0; 0 turns the thing off), ``number`` (in the span ``low``..``high``,
    each end open or closed), ``seed``, ``share`` (0 to 1), ``players`` (a list of table
    sizes), ``table_size``, ``choice`` (one of ``choices``), ``flag``, ``text`` (a
    non-empty string), ``specs`` (agent specs), ``mix`` (agent specs or roles to weights;
    ``choices`` limits the names) or ``any`` (checked by its type only). ``optional``: None
    allowed. Past these bounds a run cannot fit in memory or finish (``hidden: 100000000``
    asked torch for petabytes), or PPO does not train (a discount above 1 diverges, a
    clip of 0 never moves the policy), so the config is refused before anything starts.
    """

    kind: str
    help: str
    unit: str = ""
    low: float = 0.0
    high: float = 10**12
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False

    def span(self) -> str:
        """The range as the error and the docs write it: ``(0, 1]``."""
        return (f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}"
                f"{')' if self.high_open else ']'}")

    def allowed(self) -> str:
        """What the field takes, in words, for docs/TRAINING.md."""
        text = {
            "positive": f"1 to {self.high:,.0f}", "count": f"0 to {self.high:,.0f}",
            "number": self.span(), "seed": "0 to 2**63-1", "share": "0 to 1",
            "players": f"list of {MIN_PLAYERS}..{MAX_PLAYERS}",
            "table_size": f"{MIN_PLAYERS} to {MAX_PLAYERS}", "flag": "true / false",
            "choice": " | ".join(self.choices), "text": "text", "specs": "agent specs",
            "mix": "{spec: weight}", "any": "",
        }[self.kind]
        return f"{text} or null" if self.optional else text


def declare(default: Any, spec: Spec) -> Any:
    """A dataclass field holding ``default`` (copied per config when mutable) and ``spec``."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"spec": spec})
    return field(default=default, metadata={"spec": spec})


def positive(high: float, help: str, unit: str = "") -> Spec:
    return Spec("positive", help, unit, high=high)


def count(high: float, help: str, unit: str = "") -> Spec:
    return Spec("count", help, unit, high=high)


def number(low: float, high: float, help: str, unit: str = "", low_open: bool = False,
           high_open: bool = False, optional: bool = False) -> Spec:
    return Spec("number", help, unit, low=low, high=high, low_open=low_open,
                high_open=high_open, optional=optional)


#: The fields the trainers share, each declared once (a trainer names only its default).
SHARED: dict[str, Spec] = {
    "name": Spec("any", "the run's name: its default folder is runs/<name>"),
    "seed": Spec("seed", "seed of every generator of the run"),
    "rules": Spec("any", "a rules preset or a rules YAML file"),
    "opponents": Spec("mix", "the other seats' opponents, by weight: agent specs, self "
                      "(the learner again) or snapshot (a frozen copy)"),
    "hand_reward": number(0, 10, "coefficient of the per-hand lives shaping "
                          "(scat_env.rewards)"),
    "total_samples": positive(10**12, "the budget: learner decisions", "samples"),
    "time_limit_s": number(0, 1e7, "seconds of training; null: no limit", "s",
                           low_open=True, optional=True),
    "minibatch_samples": positive(1 << 21, "samples per gradient step", "samples"),
    "epochs": positive(1000, "PPO's passes over each rollout"),
    "lr": number(0, 1, "Adam's learning rate", low_open=True, high_open=True),
    "gamma": number(0, 1, "discount per decision", low_open=True),
    "gae_lambda": number(0, 1, "GAE's lambda"),
    "clip": number(0, 1, "PPO's ratio clip", low_open=True),
    "ent_coef": number(0, 1, "entropy bonus"),
    "vf_coef": number(0, 10, "weight of the value loss"),
    "max_grad_norm": number(0, 1e3, "gradients clipped to this norm", low_open=True),
    "hidden": positive(4096, "units per hidden layer"),
    "layers": positive(16, "hidden layers"),
    "torch_threads": positive(1024, "torch's threads"),
    "max_turns": positive(10**6, "turns in one hand before the game is cut"),
    "eval_games": count(10**7, "games of each in-training check", "games"),
    "eval_opponents": Spec("specs", "the final evaluation's fields (agent specs)"),
    "eval_players": Spec("players", "the final evaluation's table sizes"),
    "final_eval_games": count(10**7, "duplicate-deal games per (opponent, table size) of "
                              "the final evaluation; 0: none", "games"),
    "progress": Spec("flag", "progress lines on stderr"),
}


def shared(name: str, default: Any) -> Any:
    """The shared field ``name`` (:data:`SHARED`) with this trainer's default."""
    return declare(default, SHARED[name])


@dataclass
class SB3Config:
    """Every setting of an SB3 run (:mod:`training.adapters.sb3`; YAML ``trainer: sb3``).

    Budget and schedules count samples (SB3's timesteps, all envs together).
    """

    name: str = shared("name", "sb3")
    seed: int = shared("seed", 1)
    rules: str = shared("rules", "standard")
    player_counts: list[int] = declare([2, 3, 4], Spec("players", "table sizes trained on"))
    max_players: int = declare(6, Spec("table_size", "observation padded to this many seats"))
    opponents: dict[str, float] = shared("opponents", {"greedy": 1.0, "random": 0.3})
    snapshot_every_samples: int = declare(0, count(10**12, "a frozen copy joins every env's "
                                                   "pool this often; 0: never", "samples"))
    snapshot_weight: float = declare(1.0, number(0, 1e3, "opponent weight of each snapshot"))
    hand_reward: float = shared("hand_reward", 0.1)
    shaping: str = declare("lives", Spec("choice", "the per-hand shaping (scat_env.rewards)",
                                         choices=tuple(SHAPINGS)))
    n_envs: int = declare(8, positive(1 << 16, "parallel envs, one game each (at most 1024 "
                                          "but for batch)"))
    vec_env: str = declare("subproc", Spec(
        "choice", "subproc (a process per env), dummy (all in this process) or batch (every "
        "game stepped at once by the batched engine: training.batch_vec_env)",
        choices=("dummy", "subproc", "batch")))
    imitate: str | None = declare(None, Spec(
        "text", "with vec_env: batch, a batched baseline (expert, greedy, ...) whose moves the "
        "policy copies before PPO starts (training.imitation); null: none", optional=True))
    imitate_samples: int = declare(0, count(10**10, "the teacher's decisions copied first",
                                            "samples"))
    total_samples: int = shared("total_samples", 200_000)
    time_limit_s: float | None = shared("time_limit_s", None)
    rollout_samples_per_env: int = declare(512, positive(1 << 21, "SB3's n_steps", "samples"))
    minibatch_samples: int = shared("minibatch_samples", 2048)
    epochs: int = shared("epochs", 4)
    lr: float = shared("lr", 3e-4)
    gamma: float = shared("gamma", 0.998)
    gae_lambda: float = shared("gae_lambda", 0.95)
    clip: float = shared("clip", 0.2)
    ent_coef: float = shared("ent_coef", 0.01)
    hidden: int = shared("hidden", 256)
    layers: int = shared("layers", 2)
    torch_threads: int = shared("torch_threads", 1)
    eval_every_samples: int = declare(50_000, count(10**12, "in-training evaluation this "
                                                    "often; 0: only at the end", "samples"))
    eval_games: int = shared("eval_games", 60)
    eval_opponents: list[str] = shared("eval_opponents", ["random", "greedy", "expert"])
    eval_players: list[int] = shared("eval_players", [2, 3, 4])
    final_eval_games: int = shared("final_eval_games", 300)
    checkpoint_every_samples: int = declare(50_000, count(10**12, "checkpoint this often",
                                                          "samples"))
    progress: bool = shared("progress", True)

    def __post_init__(self) -> None:
        validate(self, "sb3 config")

    def relations(self, where: str) -> None:
        _within_max_players(self, where)
        _batched_fields(self, where, self.vec_env == "batch", "vec_env: batch")
        if self.vec_env != "batch":
            if self.n_envs > 1024:
                raise ValueError(f"{where}: n_envs must be at most 1024 (one process or env "
                                 f"object each) but with vec_env: batch, got {self.n_envs}")
            return
        _batched_sb3(self, where)


def _batched_fields(cfg: Any, where: str, batched: bool, mode: str) -> None:
    """The fields every standard-library trainer on the batched engine shares: ``imitate``
    and ``imitate_samples`` together, only when ``batched`` (``mode`` names the setting that
    makes it so); then every opponent and the teacher a batched baseline, and rules of the
    draw-and-discard observation (what ``sb3:``, ``torchrl:`` and ``rllib:`` play from a
    view)."""
    if (cfg.imitate is None) != (cfg.imitate_samples == 0):
        raise ValueError(f"{where}: imitate and imitate_samples go together (a teacher and "
                         f"how many of its decisions), got {cfg.imitate!r} and "
                         f"{cfg.imitate_samples}")
    if not batched:
        if cfg.imitate is not None:
            raise ValueError(f"{where}: imitate needs {mode} (the teacher plays batched)")
        return
    from scat_env.batch import beyond_base_observation

    from .batch_learner import opponent_code

    for name, specs in (("opponents", list(cfg.opponents)), ("imitate", [cfg.imitate])):
        for spec in specs:
            try:
                None if spec is None else opponent_code(spec)
            except ValueError as exc:
                raise ValueError(f"{where}: {name}: with {mode}, {exc}") from None
    why = beyond_base_observation(make_rules(cfg.rules))
    if why is not None:
        raise ValueError(f"{where}: rules: {mode} trains the draw-and-discard observation, "
                         f"not {why}")


def _batched_sb3(cfg: SB3Config, where: str) -> None:
    """What ``vec_env: batch`` plays beyond :func:`_batched_fields`: no snapshots, the lives
    shaping, at least one game per table size."""
    if cfg.snapshot_every_samples:
        raise ValueError(f"{where}: snapshot_every_samples must be 0 with vec_env: batch "
                         "(its opponents are batched baselines, not SB3 models)")
    if cfg.shaping != "lives":
        raise ValueError(f"{where}: shaping must be 'lives' with vec_env: batch (the batched "
                         f"shaping), got {cfg.shaping!r}")
    if cfg.n_envs < len(cfg.player_counts):
        raise ValueError(f"{where}: n_envs must give each of player_counts a game, got "
                         f"{cfg.n_envs} for {cfg.player_counts}")


@dataclass
class TorchRLConfig:
    """Every setting of a TorchRL run (:mod:`training.adapters.torchrl`; YAML
    ``trainer: torchrl``): TorchRL's PPO pieces on :class:`training.adapters.torchrl.BatchEnvRL`,
    the batched engine as a TorchRL env of batch size ``num_envs``.

    A *sample* is one learner decision (one env step of one game). Each update collects
    ``rollout_steps`` steps of every game.
    """

    name: str = shared("name", "torchrl")
    seed: int = shared("seed", 1)
    rules: str = shared("rules", "standard")
    num_players: int = declare(3, Spec("table_size", "the one table size it plays"))
    num_envs: int = declare(1024, positive(1 << 16, "games stepped at once", "games"))
    opponents: dict[str, float] = declare(
        {"greedy": 0.6, "expert": 0.2, "random": 0.2},
        Spec("mix", "the other seats' batched opponents, by weight",
             choices=("greedy", "expert", "random")))
    hand_reward: float = shared("hand_reward", 0.25)
    imitate: str | None = declare("expert", Spec(
        "text", "a batched baseline whose moves the policy copies before PPO starts "
        "(training.imitation); null: none", optional=True))
    imitate_samples: int = declare(2_000_000, count(10**10, "the teacher's decisions copied "
                                                    "first", "samples"))
    total_samples: int = shared("total_samples", 5_000_000)
    time_limit_s: float | None = shared("time_limit_s", 840.0)
    rollout_steps: int = declare(32, positive(1 << 14, "steps of every game per update",
                                              "steps"))
    minibatch_samples: int = shared("minibatch_samples", 8192)
    epochs: int = shared("epochs", 3)
    lr: float = shared("lr", 2e-4)
    gamma: float = shared("gamma", 0.995)
    gae_lambda: float = shared("gae_lambda", 0.95)
    clip: float = shared("clip", 0.2)
    ent_coef: float = shared("ent_coef", 0.003)
    vf_coef: float = shared("vf_coef", 0.5)
    max_grad_norm: float = shared("max_grad_norm", 0.5)
    hidden: int = shared("hidden", 128)
    layers: int = shared("layers", 2)
    torch_threads: int = shared("torch_threads", 2)
    eval_every_samples: int = declare(1_000_000, count(10**12, "in-training evaluation this "
                                                       "often; 0: only at the end", "samples"))
    eval_games: int = shared("eval_games", 300)
    eval_opponents: list[str] = shared("eval_opponents", ["greedy", "expert"])
    eval_players: list[int] = shared("eval_players", [3])
    final_eval_games: int = shared("final_eval_games", 2000)
    progress: bool = shared("progress", True)

    def __post_init__(self) -> None:
        validate(self, "torchrl config")

    def relations(self, where: str) -> None:
        """The batched fields (:func:`_batched_fields`), the minibatch within the rollout."""
        _batched_fields(self, where, True, "the torchrl trainer")
        if any(n > self.num_players for n in self.eval_players):
            raise ValueError(f"{where}: eval_players must be at most num_players "
                             f"({self.num_players}): the policy reads a vector of that many "
                             f"seats; got {self.eval_players!r}")
        if self.minibatch_samples > self.num_envs * self.rollout_steps:
            raise ValueError(f"{where}: minibatch_samples ({self.minibatch_samples}) must be "
                             f"at most num_envs x rollout_steps "
                             f"({self.num_envs * self.rollout_steps})")



@dataclass
class BatchPPOConfig:
    """Every setting of a batched run (:mod:`training.batch_ppo`; YAML ``trainer: batch``).

    A *sample* is one learner decision, as for the other trainers. Each update collects
    ``rollout_steps`` batched steps from ``envs_per_table`` games of every table size of
    ``player_counts``; in self-play games every decision is a learner sample, in the others
    only the learner seat's.

    ``learner_seats``: learner seats in a game against opponents (the rest are the opponent
    kind drawn for it), at most num_players - 1: more samples from those games at large
    tables, where one seat in ten is all a game gives. ``handoff``: hand the learner's and
    snapshots' seats to a fixed compact policy or set once at most ``handoff_players``
    players are in, read as that smaller game (``compact:`` sets play so). Why: a set's
    member for three players plays only while three are in; with a hand-off the policy
    learns only positions it will play, and what reaching the smaller game is worth under
    the player who really plays it. ``numba_threads``: on a machine busy with other work,
    two threads (numba's and torch's) waited at their barriers for a core another process
    held, many times slower than one thread each (docs/TRAINING.md, "Threads on a busy machine").
    """

    name: str = shared("name", "batch")
    seed: int = shared("seed", 1)
    rules: str = declare("standard", Spec("any", "a preset the batched engine plays (with "
                                          "rules_mix: the in-training check's)"))
    rules_mix: list[str] = declare([], Spec("any", "presets trained on together, a table of "
                                            "each at each player count; the network reads "
                                            "the rules and every observation piece"))
    player_counts: list[int] = declare([2, 3, 4], Spec("players", "table sizes trained on"))
    envs_per_table: int = declare(512, positive(1 << 16, "games of each table size stepped "
                                                "at once", "games"))
    rollout_steps: int = declare(64, positive(1 << 14, "batched steps per update, per table "
                                              "size", "steps"))
    self_play: float = declare(0.5, Spec("share", "share of games where every seat is a "
                                         "learner seat"))
    opponents: dict[str, float] = declare(
        {"greedy": 0.5, "snapshot": 0.3, "random": 0.2},
        Spec("mix", "the other games' opponents, by weight", choices=BATCH_OPPONENTS))
    learner_seats: int = declare(1, positive(MAX_PLAYERS - 1, "learner seats in a game "
                                             "against opponents"))
    snapshot_every_updates: int = declare(10, positive(10**9, "the snapshot takes the "
                                                       "live weights this often", "updates"))
    expert_advice: bool = declare(False, Spec("flag", "expert's move as a learned bonus on "
                                              "that action's logit"))
    init_from: str | None = declare(None, Spec("text", "a policy file's path (compact, or a "
                                               "shipped name) whose weights the run starts "
                                               "from", optional=True))
    frozen_from: str | None = declare(None, Spec("text", "a compact policy file (or shipped "
                                                 "name) the snapshot seats play, never "
                                                 "refreshed: the fixed opponent of scat "
                                                 "exploit; null: the snapshot copies the "
                                                 "learner", optional=True))
    handoff: str | None = declare(None, Spec("text", "a compact policy file, set manifest or "
                                             "shipped name (scat_batch_2p) that plays once "
                                             "few players are in", optional=True))
    handoff_players: int = declare(2, Spec("any", "players in at which the handoff plays"))
    hand_reward: float = shared("hand_reward", 0.25)
    hand_reward_decay_samples: int = declare(0, count(10**12, "linear decay of hand_reward "
                                                      "to 0; 0: constant", "samples"))
    max_turns: int = shared("max_turns", DEFAULT_MAX_TURNS)
    truncation_penalty: float = declare(0.0, number(0, 10, "what every seat of a game cut "
                                                    "by the turn cap pays: above 0, a stalled "
                                                    "game is worse than one played out"))
    points_reward: float = declare(0.0, number(0, 1, "a points race's per-hand shaping: "
                                               "each point won against the others' mean "
                                               "pays this much"))
    hidden: int = shared("hidden", 128)
    layers: int = shared("layers", 2)
    lr: float = shared("lr", 3e-4)
    gamma: float = shared("gamma", 0.995)
    gae_lambda: float = shared("gae_lambda", 0.95)
    epochs: int = shared("epochs", 3)
    minibatch_samples: int = shared("minibatch_samples", 8192)
    clip: float = shared("clip", 0.2)
    ent_coef: float = shared("ent_coef", 0.01)
    vf_coef: float = shared("vf_coef", 0.5)
    max_grad_norm: float = shared("max_grad_norm", 0.5)
    total_samples: int = shared("total_samples", 10_000_000)
    time_limit_s: float | None = shared("time_limit_s", None)
    torch_threads: int = shared("torch_threads", 2)
    numba_threads: int | None = declare(None, Spec("positive", "threads of the batched "
                                                   "engine's kernels; null: every core",
                                                   high=1024, optional=True))
    eval_every_updates: int = declare(20, count(10**12, "in-training check against "
                                                "eval_opponent; 0: none", "updates"))
    eval_every_s: float | None = declare(None, number(0, 1e7, "the same check this often as "
                                                      "well; null: by updates only", "s",
                                                      low_open=True, optional=True))
    eval_games: int = shared("eval_games", 2000)
    eval_opponent: str = declare("greedy", Spec("choice", "the in-training check's opponents",
                                                choices=("greedy", "expert")))
    eval_opponents: list[str] = shared("eval_opponents", ["random", "greedy", "expert"])
    eval_players: list[int] = shared("eval_players", [2, 3, 4])
    final_eval_games: int = shared("final_eval_games", 1000)
    final_eval_workers: int = declare(2, positive(1024, "processes of the final evaluation"))
    progress: bool = shared("progress", True)
    rollout_shards: int = declare(1, positive(1 << 16, "each table's games cut into this many "
                                              "shards, each with its own seed; the samples "
                                              "depend on it, not on ray_workers"))
    ray_workers: int = declare(0, count(1024, "Ray actors that step the shards "
                                        "(training.batch_ray); 0: rollouts in this process"))
    ray_address: str | None = declare(None, Spec("any", "with ray_workers: null (a Ray "
                                                 "instance of the run's own), 'auto' or "
                                                 "HOST:PORT", optional=True))

    def __post_init__(self) -> None:
        validate(self, "batch config")

    def relations(self, where: str) -> None:
        """What relates fields: the handoff's table size, a frozen snapshot's seats, the mix
        of rules, and whether the batched expert can play the rules."""
        if self.handoff is not None and (
                type(self.handoff_players) is not int
                or not 2 <= self.handoff_players < min(self.player_counts)):
            raise ValueError(f"{where}: handoff_players must be an int from 2 to one less "
                             f"than the smallest player count ({min(self.player_counts)}), "
                             f"got {self.handoff_players!r}")
        if self.frozen_from is not None and not self.opponents.get("snapshot"):
            raise ValueError(f"{where}: frozen_from is the snapshot seats' policy, but "
                             f"opponents has no snapshot: {self.opponents!r}")
        self._check_mix(where)
        if self.opponents.get("expert") or self.expert_advice or self.eval_opponent == "expert":
            for rules in [self.rules, *self.rules_mix]:
                self._check_expert(where, rules)
        self._check_shards(where)

    def _check_mix(self, where: str) -> None:
        """``rules_mix``: preset names, each once. (A handoff plays every preset of the
        mix, pieces and all: its set's members read the smaller game's pieces,
        :func:`scat_env.batch.active.active_observations`; :class:`Handoff` refuses one
        that does not read a table's pieces.)"""
        from scat_env.rules import preset_names

        preset_names(self.rules_mix, f"{where}: rules_mix")

    def _check_expert(self, where: str, rules: str) -> None:
        """The batched expert plays the draw-and-discard presets only."""
        from agents.batch_expert import uncovered
        from scat_env.rules import PRESETS

        why = uncovered(Rules.preset(rules)) if rules in PRESETS else None
        if why is not None:
            field_name = ("expert_advice" if self.expert_advice else "opponents"
                          if self.opponents.get("expert") else "eval_opponent")
            raise ValueError(f"{where}: {field_name}: the batched expert does not play "
                             f"rules {rules!r}: {why}")

    def _check_shards(self, where: str) -> None:
        """Shards of equal size, workers that each host one at least, an address only for
        workers (training.batch_ray)."""
        if self.envs_per_table % self.rollout_shards:
            raise ValueError(f"{where}: envs_per_table ({self.envs_per_table}) must be a "
                             f"multiple of rollout_shards ({self.rollout_shards})")
        if self.ray_workers > self.rollout_shards:
            raise ValueError(f"{where}: ray_workers ({self.ray_workers}) must be at most "
                             f"rollout_shards ({self.rollout_shards}): a worker hosts whole "
                             "shards")
        if self.ray_address is not None and (
                not isinstance(self.ray_address, str) or not self.ray_address.isprintable()
                or (self.ray_address != "auto" and not _host_port(self.ray_address))):
            raise ValueError(f"{where}: ray_address must be null (this machine), 'auto' or "
                             f"HOST:PORT, got {self.ray_address!r}")
        if self.ray_address is not None and not self.ray_workers:
            raise ValueError(f"{where}: ray_address needs ray_workers (at least 1): without "
                             "workers the rollouts run in this process")


@dataclass
class RLlibConfig:
    """Every setting of an RLlib run (:mod:`training.adapters.rllib`; YAML ``trainer: rllib``).

    A *sample* is one learner decision (one step of the RLlib env: one learning seat's
    move). Schedules count RLlib iterations (one ``algo.train()``: a batch of
    ``train_batch_samples`` samples and the PPO epochs on it). The run plays tables of
    ``num_players`` only: the policy reads the env's own observation of that table size.
    The scale fields (``num_env_runners``...) are configuration only (docs/SCALING.md,
    "RLlib on a cluster").
    """

    name: str = shared("name", "rllib")
    seed: int = shared("seed", 1)
    rules: str = shared("rules", "standard")
    num_players: int = declare(3, Spec("table_size", "the one table size it plays"))
    opponents: dict[str, float] = shared("opponents", {
        "self": 0.3, "snapshot": 0.2, "random": 0.2, "greedy": 0.3})
    snapshot_every_iterations: int = declare(5, positive(10**9, "the frozen copy takes the "
                                                         "live weights this often",
                                                         "iterations"))
    hand_reward: float = shared("hand_reward", 0.25)
    max_turns: int = shared("max_turns", DEFAULT_MAX_TURNS)
    total_samples: int = shared("total_samples", 200_000)
    time_limit_s: float | None = shared("time_limit_s", None)
    train_batch_samples: int = declare(4000, positive(1 << 21, "RLlib's "
                                                      "train_batch_size_per_learner",
                                                      "samples"))
    minibatch_samples: int = shared("minibatch_samples", 500)
    epochs: int = shared("epochs", 4)
    lr: float = shared("lr", 3e-4)
    gamma: float = shared("gamma", 0.995)
    gae_lambda: float = shared("gae_lambda", 0.95)
    clip: float = shared("clip", 0.2)
    ent_coef: float = shared("ent_coef", 0.01)
    vf_coef: float = shared("vf_coef", 0.5)
    hidden: int = shared("hidden", 128)
    layers: int = shared("layers", 2)
    torch_threads: int = shared("torch_threads", 1)
    num_env_runners: int = declare(0, count(1024, "remote sampling processes; 0: the driver "
                                            "samples"))
    envs_per_env_runner: int = declare(1, positive(1 << 16, "envs per sampling process (at "
                                                   "most 1024 but for env: batched)"))
    env: str = declare("aec", Spec(
        "choice", "aec: the multi-agent env over scat_env.env() (self-play, snapshots, any "
        "agent spec); batched: one learner seat per game of the batched engine against "
        "batched baselines (training.adapters.rllib_batch)", choices=("aec", "batched")))
    batched_runner: str = declare("arrays", Spec(
        "choice", "with env: batched, how samples reach RLlib's PPO. arrays: "
        "training.adapters.rllib_runner (the games stepped as arrays, episodes and GAE built "
        "from them); rllib: RLlib's own SingleAgentEnvRunner and PPO learner pipeline over "
        "the same vector env, slower (docs/LIBRARIES.md)", choices=("arrays", "rllib")))
    imitate: str | None = declare(None, Spec(
        "text", "with env: batched, a batched baseline whose moves the policy copies before "
        "PPO starts (training.imitation); null: none", optional=True))
    imitate_samples: int = declare(0, count(10**10, "the teacher's decisions copied first",
                                            "samples"))
    num_learners: int = declare(0, count(1024, "remote learner processes; 0: the driver "
                                         "learns"))
    num_gpus_per_learner: float = declare(0.0, number(0, 64, "GPUs per learner"))
    ray_address: str | None = declare(None, Spec("any", "null (this machine), 'auto' or "
                                                 "HOST:PORT", optional=True))
    eval_every_iterations: int = declare(0, count(10**12, "quick evaluation this often; "
                                                  "0: only at the end", "iterations"))
    eval_games: int = shared("eval_games", 60)
    eval_opponents: list[str] = shared("eval_opponents", ["random", "greedy", "expert"])
    eval_players: list[int] | None = declare(None, Spec("any", "null: [num_players], the "
                                                        "only size it plays", optional=True))
    final_eval_games: int = shared("final_eval_games", 200)
    checkpoint_every_iterations: int = declare(10, positive(10**9, "checkpoint this often",
                                                            "iterations"))
    progress: bool = shared("progress", True)

    def __post_init__(self) -> None:
        validate(self, "rllib config")

    def _batched(self, where: str) -> None:
        """:func:`_batched_fields` for ``env: batched``; the aec env keeps its 1,024 envs
        per runner."""
        _batched_fields(self, where, self.env == "batched", "env: batched")
        if self.env != "batched" and self.batched_runner != "arrays":
            raise ValueError(f"{where}: batched_runner is for env: batched; the aec env has "
                             f"RLlib's multi-agent env runner")
        if self.env != "batched" and self.envs_per_env_runner > 1024:
            raise ValueError(f"{where}: envs_per_env_runner must be at most 1024 but with "
                             f"env: batched, got {self.envs_per_env_runner}")

    def relations(self, where: str) -> None:
        """The evaluation's table size, the minibatch within the batch, the address, and
        what the batched env plays."""
        self._batched(where)
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
        if self.ray_address is not None and (
                not isinstance(self.ray_address, str) or not self.ray_address.isprintable()
                or (self.ray_address != "auto" and not _host_port(self.ray_address))):
            raise ValueError(f"{where}: ray_address must be null (this machine), 'auto' or "
                             f"HOST:PORT, got {self.ray_address!r}")


# -- the one validator ----------------------------------------------------------------------
def validate(cfg: Any, where: str) -> None:
    """Check every field of ``cfg`` against its :class:`Spec`, then the network's size and
    the class's ``relations``; the first problem is one ``ValueError`` naming the field and
    what it allows."""
    for f in dataclasses.fields(cfg):
        spec = f.metadata.get("spec")
        value = getattr(cfg, f.name)
        if spec is None or (value is None and spec.optional):
            continue
        problem = _problem(spec, value)
        if problem is not None:
            raise ValueError(f"{where}: {f.name} {problem}, got {value!r}")
    if hasattr(cfg, "hidden") and hasattr(cfg, "layers"):
        _network_fits(cfg.hidden, cfg.layers, where)
    cfg.relations(where)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_weight(value: Any) -> bool:
    """A finite number >= 0 (nan and inf compare in ways that let them through ``< 0``)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:  # an int past a float's range would overflow the sum of weights later
        as_float = float(value)
    except OverflowError:
        return False
    return 0 <= as_float < math.inf


def _in_span(spec: Spec, value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and (spec.low < value if spec.low_open else spec.low <= value)
            and (value < spec.high if spec.high_open else value <= spec.high))


def _problem(spec: Spec, value: Any) -> str | None:
    """What is wrong with ``value`` for ``spec`` (None: nothing), as the error's words."""
    check = _CHECKS[spec.kind]
    return check(spec, value)


def _positive(spec: Spec, value: Any) -> str | None:
    if not _whole(value) or value < 1:
        return "must be a positive int"
    return None if value <= spec.high else f"must be at most {spec.high:,.0f}"


def _count(spec: Spec, value: Any) -> str | None:
    ok = _whole(value) and 0 <= value <= spec.high
    return None if ok else f"must be a whole number from 0 to {spec.high:,.0f}"


def _seed(spec: Spec, value: Any) -> str | None:
    ok = _whole(value) and SEED_RANGE[0] <= value <= SEED_RANGE[1]
    return None if ok else "must be a whole number from 0 to 2**63-1"


def _players(spec: Spec, value: Any) -> str | None:
    ok = isinstance(value, list) and value and all(
        _whole(n) and MIN_PLAYERS <= n <= MAX_PLAYERS for n in value)
    return None if ok else f"must be a non-empty list of ints in {MIN_PLAYERS}..{MAX_PLAYERS}"


def _mix(spec: Spec, value: Any) -> str | None:
    if not isinstance(value, dict) or not value or any(
            not isinstance(k, str) or not k.strip() for k in value):
        return "must map agent specs (or self, snapshot) to weights"
    if spec.choices and any(k not in spec.choices for k in value):
        return f"must map some of {spec.choices} to weights"
    weights = list(value.values())
    if not all(map(_is_weight, weights)) or sum(weights) <= 0:
        return "needs finite weights >= 0, not all 0"
    return None


_CHECKS: dict[str, Any] = {
    "positive": _positive,
    "count": _count,
    "seed": _seed,
    "players": _players,
    "mix": _mix,
    "number": lambda s, v: None if _in_span(s, v) else f"must be in {s.span()}",
    "share": lambda s, v: None if _in_span(Spec("number", "", high=1), v)
    else "must be a share from 0 to 1",
    "table_size": lambda s, v: None if _whole(v) and MIN_PLAYERS <= v <= MAX_PLAYERS
    else f"must be a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}",
    "choice": lambda s, v: None if v in s.choices else f"must be one of {', '.join(s.choices)}",
    "flag": lambda s, v: None if isinstance(v, bool) else "must be true or false",
    "text": lambda s, v: None if isinstance(v, str) and v.strip() else f"must be {s.help}",
    "specs": lambda s, v: None if isinstance(v, list) and all(
        isinstance(x, str) and x.strip() for x in v) else "must be a list of agent specs",
    "any": lambda s, v: None,
}


def _within_max_players(cfg: Any, where: str) -> None:
    """Table sizes of a padded observation: at most ``max_players`` seats."""
    for name in ("eval_players", "player_counts"):
        counts = getattr(cfg, name)
        if any(n > cfg.max_players for n in counts):
            raise ValueError(f"{where}: {name} must be ints in {MIN_PLAYERS}..max_players="
                             f"{cfg.max_players}, got {counts!r}")


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


def fields_table(cls: type) -> str:
    """A config class's fields as a markdown table (name, type, default, allowed, unit,
    help): docs/TRAINING.md's lists, printed by ``python -m training.config``."""
    rows = ["| field | type | default | allowed | unit | what |",
            "| --- | --- | --- | --- | --- | --- |"]
    for f in dataclasses.fields(cls):
        spec = f.metadata.get("spec") or Spec("any", "")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        kind = str(f.type).replace(" | None", " or null")
        rows.append(f"| `{f.name}` | {kind} | `{default!r}` | "
                    f"{spec.allowed().replace('|', 'or')} | {spec.unit} | {spec.help} |")
    return "\n".join(rows)


def main() -> None:
    """``python -m training.config``: every trainer's fields as markdown tables."""
    from .trainers import _TRAINERS

    for name, found in _TRAINERS.items():
        print(f"### `trainer: {name}` ({found.config_cls.__name__})\n")
        print(fields_table(found.config_cls) + "\n")


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


if __name__ == "__main__":
    main()
